# shellcheck shell=bash disable=SC2154  # tmp, here and numa_vm are tests/lab/run's
# The lab's access counts (tools/numa-vm --accesses, tools/lab-plugin), sourced
# by tests/lab/run after its other checks, with its check/expect_fail and $tmp:
#  - validation: a buffer bound with mbind to the vCPU's own node reads <= 0.1%
#    remote, bound to the other node >= 99.9%, in both directions, for the
#    accesses and for the LLC misses; the window holds exactly the probe's
#    accesses to its buffer, and an empty window counts next to nothing;
#  - the shortcuts of the plugin (cached translations, the same-line cache
#    hit) give the model's own answers on every access (verify=on), and hot=N
#    names the instructions that went remote;
#  - controls that must fail the validation: a wrong page-to-node rule (the
#    guest-physical layout of QEMU 8.2, not 7.2's) and swapped vCPU nodes;
#  - bad input: one line, exit 1, for a QEMU without plugin support, a plugin
#    that does not build, a cache QEMU would refuse, settings without
#    --accesses.
# Three guest boots, about 30 s.

cc -O2 -static -I"$REPO_ROOT/tools/lab-plugin" -o "$tmp/bound_access" "$here/bound_access.c" ||
  die "cannot compile tests/lab/bound_access.c"
bound=$tmp/bound_access
# 8 MiB (four times the modelled LLC) written once and read twice in the window.
bound_words=$((8 << 20 >> 3))
bound_accesses=$((bound_words * 3))

# window_field FILE N KEY: KEY=... of window N in the plugin's output.
window_field() { awk -v n="$2" -v k="$3" '$1 == "window" && $2 == n {
  for (f = 3; f <= NF; f++) if (index($f, k "=") == 1) print substr($f, length(k) + 2) }' "$1"; }
# remote_pct FILE N KEY: % of the 2x2 matrix KEY (accesses or misses) off the diagonal.
remote_pct() {
  window_field "$1" "$2" "$3" | awk -F: 'NF == 4 && $1 + $2 + $3 + $4 > 0 {
    printf "%.4f\n", 100 * ($2 + $3) / ($1 + $2 + $3 + $4) }'
}
pct_le() { local p; p=$(remote_pct "$1" "$2" "$3"); [ -n "$p" ] && awk -v p="$p" -v m="$4" 'BEGIN { exit !(p <= m) }'; }
pct_ge() { local p; p=$(remote_pct "$1" "$2" "$3"); [ -n "$p" ] && awk -v p="$p" -v m="$4" 'BEGIN { exit !(p >= m) }'; }
total() { window_field "$1" "$2" accesses | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }'; }

# The four directions, then an empty window and a busybox command's window.
bound_script="$bound 0 0; $bound 0 1; $bound 1 1; $bound 1 0; lab-window; lab-window true"
t0=$SECONDS
"$numa_vm" -q --nodes 2 --accesses "$tmp/acc.txt" --plugin-arg verify=on --plugin-arg hot=2 --ship "$bound" \
  -- sh -c "$bound_script" >"$tmp/acc.out" 2>&1 || true
echo "-- accesses, 2-node guest: $((SECONDS - t0)) s"
sed 's/^/    /' "$tmp/acc.txt"
validation() {
  local f=$1
  pct_le "$f" 1 accesses 0.1 && pct_ge "$f" 2 accesses 99.9 &&
    pct_le "$f" 3 accesses 0.1 && pct_ge "$f" 4 accesses 99.9
}
validation_llc() {
  local f=$1
  pct_le "$f" 1 misses 0.1 && pct_ge "$f" 2 misses 99.9 && pct_le "$f" 3 misses 0.1 && pct_ge "$f" 4 misses 99.9
}
check "accesses: node 0 -> own node <= 0.1% remote, -> node 1 >= 99.9%" \
  eval 'pct_le "$tmp/acc.txt" 1 accesses 0.1 && pct_ge "$tmp/acc.txt" 2 accesses 99.9'
check "accesses: node 1 -> own node <= 0.1% remote, -> node 0 >= 99.9%" \
  eval 'pct_le "$tmp/acc.txt" 3 accesses 0.1 && pct_ge "$tmp/acc.txt" 4 accesses 99.9'
check "accesses: the same for the LLC misses, both directions" validation_llc "$tmp/acc.txt"
exact() { for w in 1 2 3 4; do [ "$(total "$tmp/acc.txt" "$w")" = "$bound_accesses" ] || return 1; done; }
check "accesses: each probe's window holds exactly its $bound_accesses buffer accesses" exact
check "accesses: an empty window (boot, the shell and the idle guest outside it) counts <= 100" \
  eval '[ "$(total "$tmp/acc.txt" 5)" -le 100 ]'
echo "    empty window: $(total "$tmp/acc.txt" 5) accesses; 'lab-window true' (busybox): $(total "$tmp/acc.txt" 6)"
verified() {
  [ "$(grep -c '^verify [0-9]* mismatches=0$' "$tmp/acc.txt")" = 6 ]
}
check "accesses: cached translations and the same-line shortcut agree with the model on every access" verified
# hot=2 names the instructions that went remote: in the remote windows the
# probe's write loop and read loop (all of the buffer's accesses between
# them), in the local ones none.
hot_ok() {
  local f=$tmp/acc.txt w
  for w in 1 3; do ! grep -q "^hot $w " "$f" || return 1; done
  for w in 2 4; do
    [ "$(awk -v w="$w" '$1 == "hot" && $2 == w { split($NF, kv, "="); s += kv[2] } END { print s + 0 }' "$f")" = "$bound_accesses" ] ||
      return 1
  done
}
check "accesses: hot=2 names the probe's two loops for every remote access, and nothing when local" hot_ok

# Controls: the validation must fail when the attribution is wrong.
t0=$SECONDS
"$numa_vm" -q --nodes 2 --accesses "$tmp/wrong-layout.txt" --plugin-arg layout=guest --ship "$bound" \
  -- sh -c "$bound 0 0; $bound 0 1; $bound 1 1; $bound 1 0" >/dev/null 2>&1 || true
check "accesses: control: a wrong page-to-node rule (guest-physical layout) fails the validation" \
  expect_fail validation "$tmp/wrong-layout.txt"
"$numa_vm" -q --nodes 2 --accesses "$tmp/swapped.txt" --plugin-arg vcpu_nodes=1:0 --ship "$bound" \
  -- sh -c "$bound 0 0; $bound 0 1; $bound 1 1; $bound 1 0" >/dev/null 2>&1 || true
check "accesses: control: swapped vCPU nodes fail the validation" expect_fail validation "$tmp/swapped.txt"
check "accesses: control: ... and the controls did count the windows" \
  eval '[ "$(total "$tmp/swapped.txt" 2)" = "$bound_accesses" ]'
echo "-- accesses controls: $((SECONDS - t0)) s"

# Bad input: one line on stderr, exit 1, no output file.
refused() {
  local want=$1 status=0
  shift
  rm -f "$tmp/bad.txt"
  "$@" >/dev/null 2>"$tmp/bad.err" || status=$?
  [ "$status" = 1 ] && [ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q "^numa-vm: error: .*$want" "$tmp/bad.err" &&
    [ ! -e "$tmp/bad.txt" ]
}
check "accesses: bad input: --llc without --accesses" \
  refused "configure --accesses" "$numa_vm" -q --llc size=1M -- true
check "accesses: bad input: a tree-PLRU cache with 12 ways" \
  refused "needs a power-of-two number of ways" "$numa_vm" -q --accesses "$tmp/bad.txt" --llc ways=12,repl=plru -- true
check "accesses: bad input: a plugin argument QEMU refuses (one line, the plugin's reason)" \
  refused "QEMU could not load the access plugin: numa_accesses: layout must be" \
  "$numa_vm" -q --accesses "$tmp/bad.txt" --plugin-arg layout=bogus -- true
check "accesses: bad input: a plugin that fails to build" \
  refused "the lab plugin failed to build" env CC=false "$numa_vm" -q --accesses "$tmp/bad.txt" -- true
# A QEMU without plugin support: a PATH where qemu-system-x86_64 is a script.
mkdir -p "$tmp/noplugin"
ln -s /usr/bin/* "$tmp/noplugin/" 2>/dev/null || true
rm -f "$tmp/noplugin/qemu-system-x86_64"
printf '#!/bin/sh\necho "QEMU emulator version 7.2.0"\n' >"$tmp/noplugin/qemu-system-x86_64"
chmod +x "$tmp/noplugin/qemu-system-x86_64"
check "accesses: bad input: a QEMU without plugin support" \
  refused "has no TCG plugin support" env PATH="$tmp/noplugin" "$numa_vm" -q --accesses "$tmp/bad.txt" -- true
