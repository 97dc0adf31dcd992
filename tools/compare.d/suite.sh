# shellcheck shell=bash disable=SC2154  # the option variables are tools/compare's
# Suite mode of tools/compare (--suite mimalloc-bench): sourced by tools/compare
# after its option parsing. Builds the multi-threaded benchmarks of the pinned
# mimalloc-bench snapshot as its bench/CMakeLists.txt does, then runs each one
# through the command mode (tools/compare --cmd, cmd.sh) under every allocator:
# natively, and in the NUMA lab with --accesses and --pin on each node count.
# tools/compare.d/suite_report.py turns the per-benchmark JSON records into
# the tables and the suite's JSON. docs/benchmarks.md, "mimalloc-bench in the
# lab", has the method and the figures.

MBENCH_TARBALL_DEFAULT=$REPO_ROOT/../shared/peers/mimalloc-bench-ce5784f.tar.gz
# The multi-threaded benchmarks, in the order of the tables.
MBENCH_ALL=(larson larson-sized xmalloc-test cache-scratch cache-thrash mstress rptest glibc-thread alloc-test)

# mbench_args NAME THREADS native|lab: the benchmark's arguments. native: the
# command lines of the suite's bench.sh (run_test), with its $procs as
# THREADS. lab: scaled so that one run under counting takes seconds, not
# hours, and still makes enough LLC misses for pinned runs to agree within a
# point; docs/benchmarks.md has the reasons, benchmark by benchmark. Empty:
# not run there.
mbench_args() {
  local t=$2
  case $1:$3 in
    larson:native | larson-sized:native) echo "5 8 1000 5000 100 4141 $t" ;;
    larson:lab | larson-sized:lab) echo "2 8 1000 5000 100 4141 $t" ;;
    xmalloc-test:native) echo "-w $t -t 5 -s 64" ;;
    xmalloc-test:lab) echo "-w $t -t 2 -s 64" ;;
    cache-scratch:native | cache-thrash:native) echo "$t 1000 1 2000000 $t" ;;
    cache-scratch:lab | cache-thrash:lab) echo "$t 1000 1 2000 $t" ;;
    mstress:native) echo "$t 50 25" ;;
    mstress:lab) echo "$t 50 10" ;;
    rptest:native) echo "$t 0 1 2 500 1000 100 8 16000" ;;
    rptest:lab) echo "$t 0 1 2 10 1000 100 8 16000" ;;
    glibc-thread:native | glibc-thread:lab) echo "$t" ;;
    alloc-test:native) echo "$t" ;;
    alloc-test:lab) echo "" ;;
  esac
}

# mbench_build: checks the snapshot against its SHA256SUMS, then builds the
# benchmarks (once per snapshot, under the cache) with the suite's own
# CMakeLists.txt, less the two shbench targets whose sources its
# build-bench-env.sh downloads. Sets MBENCH_BIN.
mbench_build() {
  local tarball=${MIMALLOC_BENCH_TARBALL:-$MBENCH_TARBALL_DEFAULT} sums want got dir tmp log
  [ -f "$tarball" ] || die "the mimalloc-bench snapshot is missing: $tarball (set MIMALLOC_BENCH_TARBALL)"
  sums=$(dirname "$tarball")/SHA256SUMS
  [ -f "$sums" ] || die "no SHA256SUMS beside $tarball"
  want=$(awk -v f="$(basename "$tarball")" '$2 == f || $2 == "*" f { print $1 }' "$sums")
  [ -n "$want" ] || die "$sums has no checksum for $(basename "$tarball")"
  got=$(sha256sum "$tarball" | cut -c1-64)
  [ "$got" = "$want" ] || die "$tarball: sha256 $got does not match $sums ($want)"
  dir=$CACHE_DIR/mimalloc-bench/${want:0:16}
  MBENCH_BIN=$dir/build
  if [ -f "$dir/built" ]; then
    return 0
  fi
  require cmake make
  note "building mimalloc-bench's multi-threaded benchmarks (sh6bench, sh8bench skipped: their sources are downloaded by the suite's build-bench-env.sh)"
  mkdir -p "$CACHE_DIR/mimalloc-bench"
  tmp=$(mktemp -d "$CACHE_DIR/mimalloc-bench/.build.XXXXXX")
  log=$tmp/build.log
  tar -xzf "$tarball" -C "$tmp" || die "cannot unpack $tarball"
  local src
  src=$(echo "$tmp"/*/bench)
  [ -f "$src/CMakeLists.txt" ] || die "$tarball has no bench/CMakeLists.txt"
  sed -i '/sh[68]bench/d' "$src/CMakeLists.txt"
  {
    cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$tmp/build" -j 2 --target "${MBENCH_ALL[@]}"
  } >"$log" 2>&1 || die "the mimalloc-bench build failed (log: $log)"
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$tmp/build" "$dir/build"
  mv "$log" "$dir/build.log"
  rm -rf "$tmp"
  touch "$dir/built"
}

suite_main() {
  [ "$suite" = mimalloc-bench ] || die "unknown suite '$suite' (known: mimalloc-bench)"
  local benches=("${MBENCH_ALL[@]}") nodes=(2 4) n b where args t step total rc worst=0
  if [ -n "$benchmarks_arg" ]; then
    pick "$benchmarks_arg" benchmark "${MBENCH_ALL[@]}"
    benches=("${PICKED[@]}")
  fi
  if [ -n "$nodes_arg" ]; then
    IFS=, read -r -a nodes <<<"$nodes_arg"
    for n in "${nodes[@]}"; do
      [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 16 ] || die "--nodes wants node counts of 2-16, got '$n'"
    done
  fi
  [ -z "$lab_reps" ] || [[ $lab_reps =~ ^[1-9][0-9]*$ ]] || die "--lab-reps wants a positive integer, got '$lab_reps'"
  case ${pin:-round-robin} in round-robin | none) ;; *) die "--pin wants round-robin or none, got '$pin'" ;; esac
  [ "$native$in_lab" != 00 ] || die "--no-native and --no-lab leave nothing to run"
  [ -z "$hot" ] || [ "$in_lab" = 1 ] || die "--hot names the code behind the lab's remote misses: drop --no-lab"
  [ -z "$hot" ] || valid_hot "$hot"
  if [ -n "$model_arg" ]; then
    [ "$in_lab" = 1 ] || die "--model turns the lab's counts into time: drop --no-lab"
    local why
    why=$(python3 "$REPO_ROOT/tools/compare.d/model.py" check "$model_arg" 2>&1) || die "${why#compare: error: }"
  fi
  [[ ${gate_metric:-} != model.* ]] || [ -n "$model_arg" ] || die "--metric $gate_metric is modelled time: add --model PROFILE"
  [ -z "$max_ratio" ] || [[ ${gate_metric:-} == accesses.* || ${gate_metric:-} == model.* ]] ||
    die "--max-ratio with --suite gates the lab's counted figures: add --metric accesses.llc_remote_share (or another accesses.* figure)"
  [ -z "$json_file" ] || [ -d "$(dirname -- "$json_file")" ] || die "--json: directory $(dirname -- "$json_file") does not exist"
  local allocs=${allocators_arg:-numa,vanilla,glibc,jemalloc,mimalloc}
  [ "$build" = 0 ] || bootstrap_and_build //:libtcmalloc_minimal.so //vanilla:libtcmalloc_minimal.so
  mbench_build
  local threads
  threads=$(nproc)
  local started stamp
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$REPO_ROOT/out/compare"
  out=$(mktemp -d "$REPO_ROOT/out/compare/$stamp-suite-XXXX")
  # The steps: each benchmark natively, then in the lab on each node count.
  local steps=()
  for b in "${benches[@]}"; do
    [ "$native" = 0 ] || [ -z "$(mbench_args "$b" "$threads" native)" ] || steps+=("$b native")
    for n in "${nodes[@]}"; do
      [ "$in_lab" = 0 ] || [ -z "$(mbench_args "$b" "$n" lab)" ] || steps+=("$b lab$n")
    done
  done
  total=${#steps[@]}
  note "suite mimalloc-bench: $total steps (${benches[*]}; $([ "$native" = 0 ] || echo "native, ")lab on ${nodes[*]} nodes, threads $([ "${pin:-round-robin}" = none ] && echo unpinned || echo "round-robin")); run files in $out/"
  : >"$out/steps.tsv"
  step=0
  for s in "${steps[@]}"; do
    read -r b where <<<"$s"
    step=$((step + 1))
    local cmd_args=(--no-build --allocators "$allocs" --json "$out/$b.$where.json")
    if [ "$where" = native ]; then
      t=$threads
      cmd_args+=(--reps "$reps")
    else
      t=${where#lab}
      cmd_args+=(--lab "$t" --accesses --pin "${pin:-round-robin}" --reps "${lab_reps:-$reps}" --ship "$MBENCH_BIN/$b")
      [ -z "$stacks" ] || cmd_args+=(--stacks "$stacks")
      [ -z "$llc_spec" ] || cmd_args+=(--llc "$llc_spec")
      [ -z "$hot" ] || cmd_args+=(--hot "$hot")
      [ -z "$model_arg" ] || cmd_args+=(--model "$model_arg")
      # A modelled-time gate is the suite report's: it scales the benchmarks
      # that run for a fixed time to one amount of work.
      [ -z "$max_ratio" ] || [[ $gate_metric == model.* ]] || cmd_args+=(--max-ratio "$max_ratio" --metric "$gate_metric")
    fi
    args=$(mbench_args "$b" "$t" "${where%%[0-9]*}")
    note "suite [$step/$total] $b ${where/lab/lab, } $([ "$where" = native ] || echo "nodes")" "($b $args)"
    printf '%s\t%s\t%s\t%s\n' "$b" "$where" "$t" "$args" >>"$out/steps.tsv"
    rc=0
    # From the run directory: rptest writes its results file into the current one.
    (cd "$out" && "$REPO_ROOT/tools/compare" --cmd "$MBENCH_BIN/$b $args" "${cmd_args[@]}") >"$out/$b.$where.txt" || rc=$?
    echo "$rc" >"$out/$b.$where.rc"
    [ "$rc" = 0 ] || note "suite: $b ($where) ended with status $rc (table: $out/$b.$where.txt)"
    [ "$rc" -le "$worst" ] || worst=$rc
  done
  rc=0
  python3 "$REPO_ROOT/tools/compare.d/suite_report.py" --dir "$out" --started "$started" \
    --command-line "$command_line" --bin "$MBENCH_BIN" --threads "$threads" \
    ${json_file:+--json "$json_file"} ${max_ratio:+--max-ratio "$max_ratio" --metric "$gate_metric"} || rc=$?
  note "suite report: $out/tables.md, JSON: ${json_file:-$out/result.json}"
  [ "$rc" -le "$worst" ] || worst=$rc
  return "$worst"
}
