#!/usr/bin/env bash
# On a one-node machine, and with TCMALLOC_NUMA=0 anywhere, the patched
# library must behave exactly like vanilla:
#   1. the same GetStats text and properties after the same calls;
#   2. no extra syscall per malloc or free (strace counts, vanilla vs patched).
# Each check is also run where it must fail (fake 2 nodes; an extra syscall
# per pair), so a check that cannot fail is caught.
set -euo pipefail

script=$1 patched=$2 vanilla=$3
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

if [ "$(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)" -gt 1 ]; then
  echo "skipped: this machine has more than one NUMA node"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi

# Address-space randomisation changes how many pagemap leaves get touched,
# and with it the metadata bytes, even vanilla vs vanilla: turn it off.
stats() { setarch "$(uname -m)" -R env "${@:2}" LD_PRELOAD="$1" "$script" stats; }

# 1. GetStats text.
want=$(stats "$vanilla")
for mode in "" "TCMALLOC_NUMA=0" "TCMALLOC_NUMA=auto"; do
  got=$(stats "$patched" $mode)
  if [ "$got" = "$want" ]; then ok "stats identical to vanilla (${mode:-default})"
  else bad "stats differ from vanilla (${mode:-default})"; diff <(echo "$want") <(echo "$got") | head -20 || true; fi
done
got=$(stats "$patched" TCMALLOC_NUMA_FAKE_NODES=2)
if [ "$got" != "$want" ] && grep -q '^NUMA node  1:' <<<"$got"; then
  ok "control: fake 2 nodes changes the stats (per-node block)"
else bad "control: fake 2 nodes did not show a per-node block"; fi

# 2. Syscalls per malloc/free pair: the count difference between two run
# lengths is what the pairs cost; startup costs cancel.
count() { # lib pairs [args...] -> total syscalls
  local lib=$1 pairs=$2 out
  shift 2
  out=$(mktemp)
  env ${ENV_EXTRA[@]+"${ENV_EXTRA[@]}"} LD_PRELOAD="$lib" strace -f -c -o "$out" "$script" churn "$pairs" "$@" >/dev/null
  awk '$NF == "total" { print $(NF-2) }' "$out"
  rm -f "$out"
}
per_pairs() { # lib [args] -> syscalls for 20000 extra pairs
  echo $(($(count "$1" 30000 "${@:2}") - $(count "$1" 10000 "${@:2}")))
}
# A whole run varies by a syscall or two (a stray brk or madvise); one syscall per
# pair would add 20000. Anything under one per hundred pairs counts as none.
tolerance=200
ENV_EXTRA=()
v=$(per_pairs "$vanilla")
for mode in "" "TCMALLOC_NUMA=0"; do
  ENV_EXTRA=(${mode:+$mode})
  p=$(per_pairs "$patched")
  if [ $((p - v)) -lt "$tolerance" ]; then ok "syscalls for 20000 pairs: patched $p, vanilla $v (${mode:-default})"
  else bad "patched makes extra syscalls per pair: $p vs vanilla $v (${mode:-default})"; fi
done
ENV_EXTRA=()
p=$(per_pairs "$patched" --extra-syscall)
if [ $((p - v)) -ge "$tolerance" ]; then ok "control: one extra syscall per pair is detected ($p vs $v)"
else bad "control: an extra syscall per pair went unnoticed ($p vs $v)"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
