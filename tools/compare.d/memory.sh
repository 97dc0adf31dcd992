# shellcheck shell=bash disable=SC2154  # the option variables are tools/compare's
# The memory table of tools/compare (--memory, --memory-only): heap size
# (generic.heap_size) and peak RSS, vanilla vs numa, for the memory probes
# (benchmarks/memory) and the selected benchmarks, under three NUMA
# configurations. Sourced by tools/compare after the snapshot is taken; reads
# its variables (quick, reps, benchmarks, snap, out, command_line, ...).
#
# Both libraries run in every configuration, vanilla too (it ignores the
# TCMALLOC_NUMA* settings): each ratio compares two runs of the same
# environment, interleaved within a repetition like the timing tables.

# shellcheck source=thp.sh
. "$REPO_ROOT/tools/compare.d/thp.sh"

MEMORY_CONFIGS=(
  "NUMA off|TCMALLOC_NUMA=0"
  "2 fake nodes|TCMALLOC_NUMA_FAKE_NODES=2"
  "8 fake nodes|TCMALLOC_NUMA_FAKE_NODES=8"
)
MEMORY_ALLOCATORS=(vanilla numa)
# A ratio above this is marked: the limit tools/test stranded enforces.
MEMORY_LIMIT=1.05

# memory_workloads: "name|settings|command" lines, in table order. The
# stranded probe takes 1 GiB a phase (256 MiB with --quick); it needs CPUs 0
# and 1, which fake topologies put on different nodes.
memory_workloads() {
  local blocks=256 b
  [ "$quick" = 0 ] || blocks=64
  if cpu_allowed 0 && cpu_allowed 1; then
    echo "stranded||$snap/bin/stranded --blocks=$blocks"
    echo "stranded, TCMALLOC_RELEASE_RATE=0|TCMALLOC_RELEASE_RATE=0|$snap/bin/stranded --blocks=$blocks"
  else
    note "memory: no stranded rows: they need CPUs 0 and 1, and this process may use $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
  fi
  echo "threads||$snap/bin/threads"
  for b in "${benchmarks[@]}"; do
    [ "$b" = fastpath ] || echo "$b||$(command_for "$b")"
  done
}

# memory_run WORKLOAD CONFIG ALLOCATOR REP SETTINGS COMMAND: one run,
# appended to memory_raw.tsv as workload, config, allocator, rep,
# heap_bytes ("-" when not answered), peak_rss_kib.
memory_run() {
  local workload=$1 config=$2 alloc=$3 rep=$4 settings=$5 command=$6 tmp=$out/memory-run lib
  local cmd envs=() heap
  lib=$(library "$alloc")
  read -r -a cmd <<<"$command"
  IFS='|' read -r -a envs <<<"${config#*|}${settings:+|$settings}"
  rm -f "$tmp.heap"
  /usr/bin/time -f %M -o "$tmp.rss" env -u LD_PRELOAD "${envs[@]}" \
    LD_PRELOAD="$lib:$MEMORY_HELPER" COMPARE_HEAP_SIZE="$tmp.heap" "${cmd[@]}" >"$tmp.out" 2>"$tmp.err" ||
    { tail -n 3 "$tmp.err" >&2; die "memory: $workload under $alloc (${config%%|*}) failed (output in $tmp.out, $tmp.err)"; }
  # The probes report the largest heap size they sampled; for the others,
  # the helper's value at exit.
  heap=$(sed -n 's/^heap_mib=.* heap_bytes=\([0-9][0-9]*\) .*/\1/p' "$tmp.out" | head -n 1)
  [ -n "$heap" ] || heap=$(sed -n 's/^heap_bytes=//p' "$tmp.heap" 2>/dev/null)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$workload" "${config%%|*}" "$alloc" "$rep" "${heap:--}" \
    "$(tail -n 1 "$tmp.rss")" >>"$out/memory_raw.tsv"
}

# memory_table: the Markdown table from memory_raw.tsv, on stdout. The
# medians (heap and peak RSS in MiB, per row and allocator) come from
# report.py, the one median of tools/.
memory_table() {
  python3 "$REPO_ROOT/tools/compare.d/report.py" medians --keys 1,2,3 --values 5/1048576,6/1024 \
    <"$out/memory_raw.tsv" | awk -F'\t' -v limit="$MEMORY_LIMIT" '
    function mib(x) { return x == "" ? "-" : sprintf("%.1f", x) }
    function ratio(p, v) {
      if (p == "" || v == "" || v + 0 == 0) return "-"
      return sprintf("%.2fx", p / v) ((p / v > limit + 0) ? " *" : "")
    }
    {
      row = $1 SUBSEP $2
      if (!(row in seen)) { seen[row] = 1; order[++rows] = row }
      heap[row, $3] = $4
      rss[row, $3] = $5
    }
    END {
      cell[0, 0] = "workload"; cell[0, 1] = "configuration"
      cell[0, 2] = "heap MiB, vanilla"; cell[0, 3] = "heap MiB, numa"; cell[0, 4] = "heap numa/vanilla"
      cell[0, 5] = "peak RSS MiB, vanilla"; cell[0, 6] = "peak RSS MiB, numa"; cell[0, 7] = "peak RSS numa/vanilla"
      for (r = 1; r <= rows; r++) {
        split(order[r], k, SUBSEP)
        hv = heap[order[r], "vanilla"]; hn = heap[order[r], "numa"]
        rv = rss[order[r], "vanilla"]; rn = rss[order[r], "numa"]
        cell[r, 0] = k[1]; cell[r, 1] = k[2]
        cell[r, 2] = mib(hv); cell[r, 3] = mib(hn); cell[r, 4] = ratio(hn, hv)
        cell[r, 5] = mib(rv); cell[r, 6] = mib(rn); cell[r, 7] = ratio(rn, rv)
      }
      for (j = 0; j <= 7; j++) { w[j] = 3; for (r = 0; r <= rows; r++) if (length(cell[r, j]) > w[j]) w[j] = length(cell[r, j]) }
      for (r = 0; r <= rows; r++) {
        line = "|"
        for (j = 0; j <= 7; j++) line = line sprintf(" %-*s |", w[j], cell[r, j])
        print line
        if (r == 0) {
          line = "|"
          for (j = 0; j <= 7; j++) { d = ""; for (x = 0; x < w[j]; x++) d = d "-"; line = line " " d " |" }
          print line
        }
      }
    }'
}

# memory_section: memory.md, the "Memory footprint" section of benchmarks.md.
memory_section() {
  local table=$1 commit marked=no paths=(patches numa tcmalloc vanilla)
  # The allocator's commit: the last one that changed what the libraries are
  # built from. It outlives merges, unlike the commit of the measuring tree.
  commit=$(git -C "$REPO_ROOT" log -1 --format=%h -- "${paths[@]}" 2>/dev/null || true)
  git -C "$REPO_ROOT" diff --quiet HEAD -- "${paths[@]}" 2>/dev/null || commit="${commit:-?} + uncommitted changes"
  local stranded_marked=no
  ! grep -qE ' \* +\|' <<<"$table" || marked=yes
  ! grep -E '^\| stranded.*fake nodes' <<<"$table" | grep -qE ' \* +\|' || stranded_marked=yes
  cat <<EOF
## Memory footprint

Heap size and peak resident set, vanilla vs numa, from \`$command_line\`
on $(date -u +%Y-%m-%d) (this machine's transparent huge pages: \`$(thp_host_setting)\`), allocator at commit \`${commit:-unknown}\` (the last commit that
changed \`patches/\`, \`numa/\`, \`tcmalloc/\` or \`vanilla/\`); medians of $reps
interleaved repetition$([ "$reps" = 1 ] || echo s). These are the allocator's figures as of that commit: they change
with it, and the same command gives today's.

- **heap**: \`generic.heap_size\`, the bytes the allocator took from the
  system, released ones included. The probes print the largest value they
  sampled (stranded: with each phase's blocks allocated, and after they are
  freed). For the other benchmarks \`tools/compare.d/heap_size_at_exit.c\`,
  preloaded after the allocator, asks it as the process exits: vanilla's
  never shrinks, so that is its peak; numa's can (other nodes' released
  address space goes back to their regions), so for numa it can be below
  the peak.
- **peak RSS**: the process's peak resident set (GNU time \`%M\`, ru_maxrss).
- **stranded** (\`benchmarks/memory/stranded\`): one thread allocates, writes
  and frees $( [ "$quick" = 0 ] && echo "1 GiB (256 blocks of 4 MiB)" || echo "256 MiB (64 blocks of 4 MiB; --quick)")
  pinned to CPU 0, then CPU 1, then CPU 0 again: with fake nodes, node 0,
  node 1, node 0. With one page heap, phase 2 reuses phase 1's memory; a heap
  per node that keeps its free memory ends with two phases' worth. With the
  default release rate freed pages go back to the kernel gradually; with
  \`TCMALLOC_RELEASE_RATE=0\` never (unless the allocator decides otherwise).
- **threads** (\`benchmarks/memory/threads\`): 512 threads, pinned round robin
  to the CPUs, each allocate and free 4 blocks of every size class up to
  32 KiB, then stay alive while the main thread measures: the footprint of
  512 warm thread caches.
- the other rows: the benchmarks of the timing tables, with their commands.
- **configuration**: \`TCMALLOC_NUMA=0\`, \`TCMALLOC_NUMA_FAKE_NODES=2\` or
  \`=8\`, set for both libraries (vanilla ignores them). CPU c is fake node
  c % N: on a 2-CPU machine both fake topologies use nodes 0 and 1 only.

The stranded rows hardly move between runs. The others do, by several MiB:
their heap depends on how their threads overlap, and micro's iteration
counts are timed; small differences there are noise.

\`*\`: numa is above $MEMORY_LIMIT x vanilla, the limit \`tools/test stranded\` enforces
for the stranded rows with fake nodes.$([ "$marked" = yes ] && printf '%s' " Marked rows: at this commit numa needs more than that.")$([ "$stranded_marked" = yes ] && printf '%s' " Stranded rows among them: by the same measure \`tools/test stranded\` fails at this commit.")

Reproduce: \`tools/compare --memory-only\` (this table alone; \`--quick\`
for 256 MiB phases and 2 repetitions), \`tools/compare --memory\` (with the
timing tables), \`tools/test stranded\` (the check, vanilla vs numa, 2 and 8
fake nodes) and \`tools/test stranded-lab\` (the same in a 2-node guest).

$table
EOF
}

# memory_main: builds the helper, runs, prints the table; leaves
# $out/memory.md for the report.
memory_main() {
  local workloads=() w c a rep i n total k=0 started=$SECONDS name settings command
  MEMORY_HELPER=$snap/heap_size_at_exit.so
  cc -O2 -shared -fPIC -o "$MEMORY_HELPER" "$REPO_ROOT/tools/compare.d/heap_size_at_exit.c" ||
    die "cannot build tools/compare.d/heap_size_at_exit.c"
  for a in "${MEMORY_ALLOCATORS[@]}"; do
    [ -f "$(library "$a")" ] || die "memory: the $a library is missing: $(library "$a") (run without --no-build)"
  done
  mapfile -t workloads < <(memory_workloads)
  n=${#MEMORY_ALLOCATORS[@]}
  total=$((reps * ${#workloads[@]} * ${#MEMORY_CONFIGS[@]} * n))
  : >"$out/memory_raw.tsv"
  note "memory: $total runs: ${#workloads[@]} workloads x ${#MEMORY_CONFIGS[@]} configurations x vanilla, numa, $reps reps; raw data: $out/memory_raw.tsv"
  for ((rep = 1; rep <= reps; rep++)); do
    for w in "${workloads[@]}"; do
      IFS='|' read -r name settings command <<<"$w"
      for c in "${MEMORY_CONFIGS[@]}"; do
        for ((i = 0; i < n; i++)); do
          a=${MEMORY_ALLOCATORS[$(((i + rep - 1) % n))]}
          k=$((k + 1))
          printf '%s: [%d/%d] memory rep %d/%d %-34s %-13s %-8s (%d s elapsed)\n' "$(basename "$0")" \
            "$k" "$total" "$rep" "$reps" "$name" "${c%%|*}" "$a" $((SECONDS - started)) >&2
          memory_run "$name" "$c" "$a" "$rep" "$settings" "$command"
        done
      done
    done
  done
  local table
  table=$(memory_table)
  echo
  echo "### memory (this machine's transparent huge pages: $(thp_host_setting))"
  echo
  echo "$table"
  echo
  echo "Cells: median of the runs, MiB; * = numa above $MEMORY_LIMIT x vanilla. Raw data: $out/memory_raw.tsv"
  memory_section "$table" >"$out/memory.md"
  note "memory: done in $((SECONDS - started)) s"
}

# thp_main: the THP lab table (--thp): one 2-node guest per THP setting
# (tools/compare.d/thp.sh), $reps repetitions, the 1 GiB heap with
# THP=always (at most 3 repetitions); appended to memory.md. The
# library copies of the snapshot are what the guests run.
thp_main() {
  local s started=$SECONDS tsv=$out/thp_raw.tsv hr tables=()
  : >"$tsv"
  note "thp: ${#THP_SETTINGS[@]} guests (THP ${THP_SETTINGS[*]}), each ${#THP_THREADS[@]} thread counts x vanilla, numa x $reps reps; raw data: $tsv"
  for s in "${THP_SETTINGS[@]}"; do
    hr=0
    [ "$s" != always ] || hr=$((reps < 3 ? reps : 3))
    note "thp: THP=$s guest ($((SECONDS - started)) s elapsed)"
    thp_run_guest "$s" "$out/thp-$s" "$snap/bin/thp_threads" "$VANILLA_LIB" "$NUMA_LIB" \
      "$reps" "$hr" 0 || die "thp: the THP=$s guest failed (its output: $out/thp-$s.log)"
    awk -F'\t' '$6 != 0 { bad = 1 } END { exit bad }' "$out/thp-$s.tsv" ||
      die "thp: a run failed in the THP=$s guest (its output: $out/thp-$s.log)"
    cat "$out/thp-$s.tsv" >>"$tsv"
    tables+=("$(thp_table "$out/thp-$s.tsv" "$s")")
  done
  {
    echo
    echo "### THP lab: resident memory, vanilla vs numa (2-node guests)"
    for s in "${tables[@]}"; do
      echo
      echo "$s"
    done
    thp_legend
    echo
    echo "Reproduce: \`tools/compare --memory-only --thp\`; the bound is checked by \`tools/test thp-lab\`."
  } | tee "$out/thp.md"
  [ ! -f "$out/memory.md" ] || cat "$out/thp.md" >>"$out/memory.md"
  note "thp: done in $((SECONDS - started)) s"
}
