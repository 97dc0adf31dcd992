# shellcheck shell=bash disable=SC2154  # the option variables are tools/compare's
# Command mode of tools/compare (--cmd): sourced by tools/compare after its
# option parsing, whose variables it reads. See docs/compare.md.

# run_one PREFIX LIB [NAME=VALUE...] -- CMD [ARG...]: one timed run, on the host
# or, copied by `declare -f`, in a lab guest. Writes PREFIX.out and PREFIX.err
# (the command's), PREFIX.time (GNU time's figures; then wall_us from bash's
# clock, which has microseconds where time's %e has centiseconds; then rc, the
# status time returned: the command's, or 128+N for signal N). Returns rc.
run_one() {
  local prefix=$1 lib=$2 t0 t1 rc=0 envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  [ -z "$lib" ] || envs+=("LD_PRELOAD=$lib")
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$prefix.time" -f 'wall=%e user=%U sys=%S rss_kib=%M' \
    env -u LD_PRELOAD "${envs[@]}" "$@" >"$prefix.out" 2>"$prefix.err" </dev/null || rc=$?
  t1=$EPOCHREALTIME
  printf 'wall_us=%s\nrc=%s\n' $((10#${t1//[.,]/} - 10#${t0//[.,]/})) "$rc" >>"$prefix.time"
  return "$rc"
}

is_assignment() { [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; }

# lab_clock_settings BASE: in the lab, the allocator's delays counted in
# milliseconds, stretched LAB_CLOCK_STRETCH times. The emulator runs a program
# 70 (amd_study) to 1,000 (memory-streaming code) times slower than this
# machine, so a delay at its default acts after that much less work than
# natively: counted in a 1-node guest, mimalloc gave back and faulted in 3-5
# times the pages it does here (amd_study, mstress), and that varied with the
# machine's load. The values are each allocator's defaults (mimalloc 2.0,
# jemalloc 5.3, numa: docs/configuration.md) times the stretch.
LAB_CLOCK_STRETCH=100
lab_clock_settings() {
  local s=$LAB_CLOCK_STRETCH
  case $1 in
    numa) echo "TCMALLOC_NUMA_STRANDED_IDLE_MS=$((100 * s))" ;;
    mimalloc) echo "MIMALLOC_DECOMMIT_DELAY=$((25 * s)) MIMALLOC_SEGMENT_DECOMMIT_DELAY=$((500 * s)) MIMALLOC_DECOMMIT_EXTEND_DELAY=$s" ;;
    jemalloc) echo "MALLOC_CONF=dirty_decay_ms:$((10000 * s))" ;;
  esac
}

# parse_allocators: the --allocators specs (BASE[:NAME=VALUE]...) into the
# ALLOC_* arrays. ALLOC_ENV holds each one's settings, tab-separated, in
# increasing precedence: the tool's (in the lab, lab_clock_settings), --env,
# --numa-env (numa only), the spec's.
parse_allocators() {
  local specs spec base settings kv label env known
  IFS=, read -r -a specs <<<"${allocators_arg:-vanilla,numa}"
  [ "${#specs[@]}" -gt 0 ] || die "empty allocator list"
  ALLOC_LABEL=() ALLOC_BASE=() ALLOC_LIB=() ALLOC_ENV=()
  for spec in "${specs[@]}"; do
    base=${spec%%:*}
    known=0
    for label in "${ALL_ALLOCATORS[@]}"; do [ "$base" = "$label" ] && known=1; done
    [ "$known" = 1 ] || die "unknown allocator '$spec' (known: ${ALL_ALLOCATORS[*]}, each optionally followed by :NAME=VALUE settings)"
    for label in "${ALLOC_LABEL[@]}"; do [ "$label" != "$spec" ] || die "allocator '$spec' is listed twice"; done
    env=()
    [ -z "$lab_nodes" ] || read -r -a env <<<"$(lab_clock_settings "$base")"
    [ "$base" != numa ] || env+=(TCMALLOC_NUMA_STATS=1)
    env+=("${cmd_envs[@]}")
    [ "$base" != numa ] || env+=("${numa_envs[@]}")
    if [ "$spec" != "$base" ]; then
      IFS=: read -r -a settings <<<"${spec#*:}"
      for kv in "${settings[@]}"; do
        is_assignment "$kv" || die "allocator '$spec': '$kv' is not NAME=VALUE"
        env+=("$kv")
      done
    fi
    ALLOC_LABEL+=("$spec") ALLOC_BASE+=("$base") ALLOC_LIB+=("$(library "$base")")
    ALLOC_ENV+=("$(IFS=$'\t'; echo "${env[*]}")")
  done
}

# check_inputs: every refusal happens here, before anything is built or run.
check_inputs() {
  local kv a
  [ -n "${cmd_string//[[:space:]]/}" ] || die "--cmd is empty: give the command to compare, e.g. --cmd './bench --size 10'"
  # Split like a shell line (quotes honoured), but nothing is expanded or run.
  mapfile -d '' -t CMD < <(python3 -c 'import shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(sys.argv[1])))' "$cmd_string" 2>/dev/null || true)
  [ "${#CMD[@]}" -gt 0 ] || die "--cmd: cannot split '$cmd_string' into words (unbalanced quotes?)"
  command -v -- "${CMD[0]}" >/dev/null 2>&1 || die "--cmd: command '${CMD[0]}' not found"
  for kv in "${cmd_envs[@]}" "${numa_envs[@]}"; do
    is_assignment "$kv" || die "--env/--numa-env wants NAME=VALUE, got '$kv'"
  done
  if [ -n "$max_ratio" ]; then
    [[ $max_ratio =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && [[ $max_ratio =~ [1-9] ]] ||
      die "--max-ratio wants a positive number such as 1.02, got '$max_ratio'"
  fi
  if [ -n "$max_value" ]; then
    [[ $max_value =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] ||
      die "--max-value wants a number such as 5, got '$max_value'"
  fi
  [ -z "$gate_metric" ] || [ -n "$max_ratio$max_value" ] ||
    die "--metric chooses the figure of --max-ratio or --max-value; give one of them too"
  [ -z "$json_file" ] || [ -d "$(dirname -- "$json_file")" ] || die "--json: directory $(dirname -- "$json_file") does not exist"
  parse_allocators
  if [ -n "$max_ratio" ]; then
    # Ratios are taken against the plain vanilla column, without settings.
    [[ " ${ALLOC_LABEL[*]} " == *" vanilla "* ]] || die "--max-ratio compares against vanilla: add vanilla to --allocators"
  fi
  if [ -n "$max_ratio$max_value" ]; then
    [[ " ${ALLOC_BASE[*]} " == *" numa "* ]] || die "the gate (--max-ratio, --max-value) checks the numa allocators: add numa to --allocators"
  fi
  [ "${#ships[@]}" = 0 ] || [ -n "$lab_nodes" ] || die "--ship is for --lab N (files for the guest)"
  [ "$accesses" = 0 ] || [ -n "$lab_nodes" ] || die "--accesses counts memory accesses in the NUMA lab: add --lab N"
  case $pin in
    '' | round-robin | none) ;;
    *) die "--pin wants round-robin or none, got '$pin'" ;;
  esac
  case $stacks in
    '' | node | creator) ;;
    *) die "--stacks wants node or creator, got '$stacks'" ;;
  esac
  [ -z "$pin" ] || [ -n "$lab_nodes" ] || die "--pin places threads on the nodes of the NUMA lab: add --lab N"
  [ -z "$stacks" ] || [ "$pin" = round-robin ] || die "--stacks says where a placed thread's stack goes: add --pin round-robin"
  [ -z "$llc_spec" ] || [ "$accesses" = 1 ] || die "--llc sets the cache model of --accesses: add --accesses"
  if [ -n "$hot" ]; then
    valid_hot "$hot"
    [ "$accesses" = 1 ] || die "--hot names the code behind the remote misses that --accesses counts: add --lab N --accesses"
    # The shim's list of loaded objects and their bases turns addresses into names.
    [ -n "$pin" ] || die "--hot names code through the placement shim's list of loaded objects: add --pin round-robin (or none)"
    command -v addr2line >/dev/null 2>&1 || die "--hot needs addr2line (Debian package binutils; run tools/bootstrap)"
  fi
  case $gate_metric in
    accesses.* | model.*) [ "$accesses" = 1 ] || die "--metric $gate_metric is counted by --accesses: add --lab N --accesses" ;;
  esac
  if [ -n "$model_arg" ]; then
    [ "$accesses" = 1 ] || die "--model turns the lab's counts into time: add --lab N --accesses"
    local why
    why=$(python3 "$REPO_ROOT/tools/compare.d/model.py" check "$model_arg" 2>&1) || die "${why#compare: error: }"
  fi
  [[ $gate_metric != model.* ]] || [ -n "$model_arg" ] || die "--metric $gate_metric is modelled time: add --model PROFILE"
  if [ -n "$cpus_per_node" ]; then
    [ -n "$lab_nodes" ] || die "--cpus-per-node sets the NUMA lab's vCPUs per node: add --nodes N"
    [[ $cpus_per_node =~ ^[1-8]$ ]] || die "--cpus-per-node wants 1-8, got '$cpus_per_node'"
  fi
  if [ -n "$lab_nodes" ]; then
    [[ $lab_nodes =~ ^[0-9]+$ ]] && [ "$lab_nodes" -ge 1 ] && [ "$lab_nodes" -le 16 ] ||
      die "--lab wants 1-16 nodes, got '$lab_nodes'"
    # Only counts are worth gating on in the lab.
    [ -z "$max_ratio$max_value" ] || [[ $gate_metric == accesses.* || $gate_metric == model.* ]] ||
      die "--max-ratio/--max-value with --lab: timings in the lab's emulated machine say nothing about speed; gate on --metric accesses.remote_share or accesses.llc_remote_share (with --accesses)"
    # The lab's packages (tools/packages.txt, "NUMA lab"): the same checks as tools/numa-vm.
    for a in qemu-system-x86_64 cpio xz cc; do
      command -v "$a" >/dev/null 2>&1 || die "--lab needs '$a' (the lab's Debian packages: run tools/bootstrap)"
    done
    [ -x /bin/busybox ] || die "--lab needs the static busybox (Debian package busybox-static; run tools/bootstrap)"
    for a in "${ships[@]}"; do [ -e "$a" ] || die "--ship: '$a' does not exist"; done
  fi
  if [ "$accesses" = 1 ]; then
    . "$REPO_ROOT/tools/lab-plugin/llc.sh"
    llc_plugin_args "$llc_spec" >/dev/null
    # Built (once per source) and checked against this QEMU now, so that a
    # failure is one line before anything runs.
    local err reason
    err=$(mktemp)
    "$REPO_ROOT/tools/lab-plugin/build" -q >/dev/null 2>"$err" ||
      { reason=$(sed -n 's/^build: error: //p' "$err" | head -n1); rm -f "$err"; die "${reason:-the lab plugin failed to build}"; }
    rm -f "$err"
  fi
}

# check_libraries: every allocator's library is there (after the build).
check_libraries() {
  local i lib
  for i in "${!ALLOC_LABEL[@]}"; do
    lib=${ALLOC_LIB[$i]}
    [ -z "$lib" ] || [ -f "$lib" ] && continue
    case ${ALLOC_BASE[$i]} in
      numa | vanilla) die "allocator '${ALLOC_LABEL[$i]}' needs $lib (build it: run without --no-build)" ;;
      *) die "allocator '${ALLOC_LABEL[$i]}' needs $lib (Debian package: $(package_of "${ALLOC_BASE[$i]}"))" ;;
    esac
  done
}

# plan_runs: runs.tsv (order, rep, file prefix, allocator index, its label). Interleaved: each
# repetition runs every allocator, and the order rotates between repetitions
# so that a slow drift of the machine spreads over all of them.
plan_runs() {
  local rep i a n=${#ALLOC_LABEL[@]} k=0
  : >"$out/runs.tsv"
  for ((rep = 1; rep <= reps; rep++)); do
    for ((i = 0; i < n; i++)); do
      k=$((k + 1))
      a=$(((i + rep - 1) % n))
      printf '%d\t%d\truns/r%03d\t%d\t%s\n' "$k" "$rep" "$k" "$a" "${ALLOC_LABEL[$a]}" >>"$out/runs.tsv"
    done
  done
  total_runs=$k
}

# run_args INDEX PREFIX EXTRA_ENV...: run_one's arguments for one run.
run_args() {
  local i=$1 prefix=$2 env
  shift 2
  local preload=${ALLOC_LIB[$i]}
  # The lab's placement recorder goes after the allocator (glibc: alone).
  [ -z "${PRELOAD_EXTRA:-}" ] || preload=${preload:+$preload:}$PRELOAD_EXTRA
  IFS=$'\t' read -r -a env <<<"${ALLOC_ENV[$i]}"
  # --pin: the placement shim's settings, and where this allocator's code is.
  if [ -n "$pin" ]; then
    env=(PLACE_THREADS="$pin" PLACE_THREADS_STACKS="${stacks:-node}" "${env[@]}")
    [ -z "${ALLOC_CODE[$i]}" ] || env=(PLACE_ALLOC_CODE="${ALLOC_CODE[$i]}" "${env[@]}")
  fi
  # With --accesses the command runs inside a counting window of the lab's
  # plugin: lab-window (static, so no allocator is preloaded into it) opens
  # it, runs the command and closes it.
  RUN_ARGS=("$prefix" "$preload" "${env[@]}" "$@" -- ${LAB_WINDOW:+"$LAB_WINDOW"} ${PIN_EXEC[@]+"${PIN_EXEC[@]}"} "${CMD[@]}")
}

progress_line() { printf '%s: [%d/%d] rep %d/%d %s\n' compare "$1" "$total_runs" "$2" "$reps" "$3"; }

run_on_host() {
  local k rep i prefix rc started=$SECONDS
  while IFS=$'\t' read -r k rep prefix i _; do
    progress_line "$k" "$rep" "${ALLOC_LABEL[$i]} ($((SECONDS - started)) s elapsed)" >&2
    run_args "$i" "$out/$prefix"
    rc=0
    run_one "${RUN_ARGS[@]}" || rc=$?
    [ "$rc" = 0 ] || note "run $k: exit status $rc under ${ALLOC_LABEL[$i]} (stderr: $out/$prefix.err)"
  done <"$out/runs.tsv"
}

# allocator_code_ranges: ALLOC_CODE, per allocator, what --pin's shim reports
# as the allocator's code (PLACE_ALLOC_CODE): its library's file name, or for
# glibc the offsets of malloc.c inside libc.so.6 (tools/compare.d/glibc-malloc-range;
# empty, with a note, when libc's debug symbols are not installed).
allocator_code_ranges() {
  local i range=''
  ALLOC_CODE=()
  for i in "${!ALLOC_LABEL[@]}"; do
    if [ -n "${ALLOC_LIB[$i]}" ]; then
      ALLOC_CODE+=("$(basename "${ALLOC_LIB[$i]}")")
      continue
    fi
    if [ -z "$range" ]; then
      range=$("$REPO_ROOT/tools/compare.d/glibc-malloc-range" 2>"$out/glibc-range.err") ||
        { note "glibc's allocator code is not split out: $(head -n1 "$out/glibc-range.err")"; range=-; }
    fi
    ALLOC_CODE+=("$([ "$range" = - ] || echo "libc.so.6@$range")")
  done
}

# run_in_lab: every run in one guest of tools/numa-vm. The guest script holds
# run_one itself; the run files come back as a base64 tar on the guest's
# stdout, between marker lines. numa_maps_at_exit.so, preloaded after the
# allocator, records each process's anonymous pages per node as it exits.
run_in_lab() {
  local guest=/tmp/compare-runs script=$out/guest.sh k rep i prefix a cmd_path vm_out rc=0
  local helper=$snap/numa_maps_at_exit.so
  cc -O2 -shared -fPIC -o "$helper" "$REPO_ROOT/tools/compare.d/numa_maps_at_exit.c" ||
    die "cannot build tools/compare.d/numa_maps_at_exit.c"
  PRELOAD_EXTRA=$helper
  if [ -n "$pin" ]; then
    # The placement shim (tools/compare.d/place_threads.c) and the allocators' code ranges.
    cc -O2 -shared -fPIC -o "$snap/place_threads.so" "$REPO_ROOT/tools/compare.d/place_threads.c" -ldl ||
      die "cannot build tools/compare.d/place_threads.c"
    PRELOAD_EXTRA=$helper:$snap/place_threads.so
    # Exec'd on node 0 (the lab's CPU 0), so that the dynamic loader's work
    # before the shim's constructor runs there too (busybox's static taskset:
    # no allocator is loaded into it).
    [ "$pin" = none ] || PIN_EXEC=(taskset -c 0)
    allocator_code_ranges
  fi
  local vm_args=(--timeout 1800)
  if [ "$accesses" = 1 ]; then
    LAB_WINDOW=lab-window
    # Counting is about 10x slower than the lab without it (docs/compare.md).
    vm_args=(--timeout 7200 --accesses "$out/accesses.txt" ${llc_spec:+--llc "$llc_spec"})
    [ -z "$hot" ] || vm_args+=(--plugin-arg "hot=$hot")
  fi
  {
    echo 'set -u'
    declare -f run_one
    printf 'mkdir -p %q/runs\n' "$guest"
    if [ "$pin" = round-robin ]; then
      # One run before the measured ones, outside any counting window: the
      # first runs in a freshly booted guest find its memory unfragmented
      # (huge pages for every first touch) and read several points apart
      # from all later ones (docs/benchmarks.md, "The harness, measured").
      local first
      first=$(head -n1 "$out/runs.tsv" | cut -f4)
      LAB_WINDOW='' run_args "$first" "$guest/warmup"
      echo 'echo "compare: warm-up run (not counted)" >&2'
      printf '%q ' run_one "${RUN_ARGS[@]}"
      echo '|| true'
    fi
    while IFS=$'\t' read -r k rep prefix i _; do
      run_args "$i" "$guest/$prefix" "COMPARE_NUMA_MAPS=$guest/$prefix.maps" \
        ${hot:+"PLACE_THREADS_LOG=$guest/$prefix.objects"}
      # Shown as it happens (numa-vm --live-stderr), with the guest's clock.
      printf 'echo %q"$SECONDS s in the guest)" >&2\n' "$(progress_line "$k" "$rep" "${ALLOC_LABEL[$i]} (")"
      printf '%q ' run_one "${RUN_ARGS[@]}"
      echo '|| true'
    done <"$out/runs.tsv"
    printf 'echo @@compare-runs-begin; (cd %q && tar -cf - runs | base64); echo @@compare-runs-end\n' "$guest"
  } >"$script"
  # Our libraries are in the snapshot; peers' (jemalloc, ...) are shipped from the system.
  local ship_args=(--ship "$snap" --ship "$script" --ship /usr/bin/time)
  for a in "${ALLOC_LIB[@]}"; do [ -z "$a" ] || [[ $a == "$snap"/* ]] || ship_args+=(--ship "$a"); done
  for a in "${ships[@]}"; do ship_args+=(--ship "$a"); done
  # The program itself (./bench too: the guest keeps host paths and the current directory).
  cmd_path=$(command -v -- "${CMD[0]}")
  [[ $cmd_path == /* ]] || cmd_path=$PWD/$cmd_path
  [ ! -f "$cmd_path" ] || ship_args+=(--ship "$cmd_path")
  note "$total_runs runs in a $lab_nodes-node guest of the NUMA lab (tools/numa-vm$([ "$accesses" = 0 ] || echo ", counting memory accesses"))"
  for a in "${ALLOC_BASE[@]}"; do
    [ -z "$(lab_clock_settings "$a")" ] ||
      { note "the allocators' delays in milliseconds are ${LAB_CLOCK_STRETCH}x their defaults in the guest, which runs that much slower (docs/compare.md)"; break; }
  done
  vm_out=$out/guest.out
  "$REPO_ROOT/tools/numa-vm" -q --live-stderr --nodes "$lab_nodes" ${cpus_per_node:+--cpus-per-node "$cpus_per_node"} \
    --mem-per-node 512M "${vm_args[@]}" \
    "${ship_args[@]}" -- /usr/bin/bash "$script" >"$vm_out" || rc=$?
  [ "$rc" = 0 ] || die "the lab guest failed (tools/numa-vm status $rc; output: $vm_out)"
  sed -n '/^@@compare-runs-begin$/,/^@@compare-runs-end$/{/^@@/d;p}' "$vm_out" | base64 -d | tar -xf - -C "$out" ||
    die "no run files came back from the guest (output: $vm_out)"
  [ "$accesses" = 0 ] || split_windows
  [ -z "$hot" ] || name_hot_code
}

# split_windows: the plugin's window lines, one per run in the order they ran,
# into runs/rNNN.accesses beside each run's other files.
split_windows() {
  local windows
  windows=$(grep -c '^window ' "$out/accesses.txt" || true)
  [ "$windows" = "$total_runs" ] ||
    die "the access plugin counted $windows windows for $total_runs runs ($out/accesses.txt)"
  # A window's own lines follow its window line: the split by code and
  # memory (--pin), the hot instructions (hot=N).
  awk -v dir="$out" 'NR == FNR { prefix[NR] = $3; next }
    $1 == "window" { if (f) close(f); f = dir "/" prefix[++w] ".accesses"; num = $2; print > f; next }
    f && $2 == num && $1 ~ /^(ranges|split|hot|verify|vcpu|faults)$/ { print > f }' \
    "$out/runs.tsv" "$out/accesses.txt"
}

# name_hot_code: --hot's instruction addresses named, per run (runs/rNNN.hot)
# and summed by function over each allocator's repetitions (hot.md).
name_hot_code() {
  python3 "$REPO_ROOT/tools/compare.d/hot.py" --dir "$out" --labels "$(IFS=,; echo "${ALLOC_LABEL[*]}")" \
    --alloc-code "$(IFS=,; echo "${ALLOC_CODE[*]}")" ||
    die "naming the hot instructions failed (run files: $out/runs)"
  note "hot instructions: $out/hot.md (per run: $out/runs/rNNN.hot)"
}

cmd_main() {
  check_inputs
  [ "$build" = 0 ] || bootstrap_and_build //:libtcmalloc_minimal.so //vanilla:libtcmalloc_minimal.so
  local started stamp rc=0 i
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$REPO_ROOT/out/compare"
  # Two runs can start in the same second (CI jobs, the tests): the suffix keeps them apart.
  out=$(mktemp -d "$REPO_ROOT/out/compare/$stamp-cmd-XXXX")
  mkdir -p "$out/runs"
  snap=$out/snapshot
  snapshot_libraries "$snap"
  parse_allocators # again: the library paths now name the snapshot
  check_libraries
  for i in "${!ALLOC_LABEL[@]}"; do
    printf '%s\t%s\t%s\t%s\n' "${ALLOC_LABEL[$i]}" "${ALLOC_BASE[$i]}" "${ALLOC_LIB[$i]}" "${ALLOC_ENV[$i]}"
  done >"$out/allocators.tsv"
  plan_runs
  note "$total_runs runs: ${CMD[*]} x ${ALLOC_LABEL[*]}, $reps reps; run files in $out/"
  if [ -n "$lab_nodes" ]; then run_in_lab; else run_on_host; fi
  python3 "$REPO_ROOT/tools/compare.d/report.py" --dir "$out" --cmd "$cmd_string" \
    --command-line "$command_line" --started "$started" --reps "$reps" \
    ${json_file:+--json "$json_file"} ${max_ratio:+--max-ratio "$max_ratio"} \
    ${gate_metric:+--metric "$gate_metric"} ${lab_nodes:+--lab "$lab_nodes"} \
    ${max_value:+--max-value "$max_value"} ${model_arg:+--model "$model_arg"} || rc=$?
  note "report: $out/table.md, JSON: ${json_file:-$out/result.json}"
  return "$rc"
}
