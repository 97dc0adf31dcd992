# shellcheck shell=bash disable=SC2034  # THP_* are read by the files that source this
# The THP lab runs of issue 26, shared by `tools/compare --memory --thp`
# (the table) and tests/numa_heap/thp_lab_run (the table and its checks):
# benchmarks/memory/thp_threads under vanilla and numa
# (libtcmalloc_minimal.so, LD_PRELOAD) in one 2-node guest per THP setting
# (tools/numa-vm --kernel-arg transparent_hugepage=always|madvise|never),
# 8, 64 and 256 threads with warm caches, interleaved repetitions; with
# THP=always also the 1 GiB heap (AnonHugePages). Source it after
# tools/lib.sh.
#
# The resident figure is the present pages of every mapping at the probe's
# barrier, counted from /proc/self/pagemap, and AnonHugePages the 2 MiB
# stretches one huge page backs (pagemap and /proc/kpageflags; the guest runs
# as root). smaps_rollup's Rss and AnonHugePages, used where the probe cannot
# read those, miss huge pages that NUMA balancing is sampling on the lab's
# 6.1 kernel (benchmarks/memory/page_tables.h): 190 MiB of numa's 1 GiB heap
# in one run, none of vanilla's 4 KiB pages. ru_maxrss (peak RSS, GNU time's %M) is
# shown but not used: Linux 6.1, the lab's kernel, folds each thread's
# count of 4 KiB faults into the process's only every 64 faults, while a
# huge-page fault is counted at once, so with many threads it undercounts
# vanilla (4 KiB pages) far more than numa (huge pages): 8.4 against 45.3
# MiB of Rss for vanilla at 256 threads, THP=never (docs/lab.md).
#
# The guests boot with norandmaps (no address-space randomization), so every
# run's brk heap starts at the same place. With it, where the brk start falls
# in its 2 MiB stretch is drawn per run, and that decides how many of the
# heap's stretches the kernel can back with huge pages when they are first
# touched: at 8 threads vanilla read 9.2-12.5 MiB (2, 4 or 6 MiB of huge
# pages) over 30 runs, more than the bound's 2 MiB of slack, so two vanilla
# series could fail the bound against each other. With it off they agree
# within 0.2 MiB (docs/lab.md has both distributions).

THP_SETTINGS=(always madvise never)
THP_THREADS=(8 64 256)
THP_NODES=2
# The issue's bound: numa's resident memory within 1.10 x vanilla's, or
# vanilla's + one huge page per node beyond the first, whichever is larger.
THP_BOUND_PCT=110
THP_BOUND_NODE_KIB=2048
# The large heap (THP=always only: under madvise and never vanilla has no
# huge pages, and the comparison would hold for any numa).
THP_HEAP_MIB=1024
THP_HEAP_THREADS=8
# The control's extra memory (KiB): above the bound at 8 threads, where
# vanilla's resident set is about 10 MiB.
THP_TOUCH_KIB=8192

# thp_host_setting: this machine's THP setting (the bracketed word of
# /sys/kernel/mm/transparent_hugepage/enabled), or "unknown".
thp_host_setting() {
  sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null | grep . ||
    echo unknown
}

# thp_bound_kib VANILLA_KIB: the largest resident KiB numa may have.
thp_bound_kib() {
  local v=$1 a b
  a=$((v * THP_BOUND_PCT / 100))
  b=$((v + THP_BOUND_NODE_KIB * (THP_NODES - 1)))
  echo $((a > b ? a : b))
}

# thp_guest_script PROBE VANILLA NUMA REPS HEAP_REPS CONTROLS: the busybox sh
# script one guest runs. Each run prints
#   R VARIANT THREADS LIB REP STATUS <the probe's "thp_threads:" line>
# (VARIANT: main, heap; with CONTROLS=1 also touch: vanilla with
# THP_TOUCH_KIB more, twin: a second vanilla series, nothp: numa's large heap
# with THP off for the process); a progress line per run on stderr.
thp_guest_script() {
  local probe=$1 vanilla=$2 numa=$3 reps=$4 heap_reps=$5 controls=$6
  cat <<EOF
echo "thp-setting: \$(cat /sys/kernel/mm/transparent_hugepage/enabled)"
echo "randomize-va-space: \$(cat /proc/sys/kernel/randomize_va_space)"
setting=\$(sed 's/.*\\[\\(.*\\)\\].*/\\1/' /sys/kernel/mm/transparent_hugepage/enabled)
n=0
one() {
  variant=\$1 threads=\$2 lib=\$3 rep=\$4; shift 4
  case \$lib in vanilla) so=$vanilla ;; *) so=$numa ;; esac
  n=\$((n + 1))
  echo "thp-lab: THP \$setting: run \$n: \$variant, \$threads threads, \$lib, rep \$rep" >&2
  out=\$(LD_PRELOAD=\$so $probe --threads \$threads "\$@" 2>&1); status=\$?
  line=\$(echo "\$out" | grep '^thp_threads: ' | head -n 1)
  echo "R \$variant \$threads \$lib \$rep \$status \${line:-none}"
  [ \$status = 0 ] || echo "\$out" | tail -n 3 | sed 's/^/E /'
}
for rep in \$(seq $reps); do
  # The allocator order alternates between repetitions.
  if [ \$((rep % 2)) = 1 ]; then libs="vanilla numa"; else libs="numa vanilla"; fi
  for t in ${THP_THREADS[*]}; do
    for lib in \$libs; do one main \$t \$lib \$rep; done
  done
EOF
  if [ "$controls" = 1 ]; then
    cat <<EOF
  one touch ${THP_THREADS[0]} vanilla \$rep --touch-kib $THP_TOUCH_KIB
  one twin ${THP_THREADS[0]} vanilla \$rep
EOF
  fi
  cat <<EOF
done
for rep in \$(seq $heap_reps); do
  if [ \$((rep % 2)) = 1 ]; then libs="vanilla numa"; else libs="numa vanilla"; fi
  for lib in \$libs; do one heap $THP_HEAP_THREADS \$lib \$rep --heap-mib $THP_HEAP_MIB; done
EOF
  # nothp once: with THP off for the process numa's heap read 2 MiB of huge
  # pages in each of three runs, where numa's and vanilla's with THP vary
  # from run to run (278-862 and 46-306 MiB).
  [ "$controls" = 0 ] || echo "  [ \$rep != 1 ] || one nothp $THP_HEAP_THREADS numa \$rep --heap-mib $THP_HEAP_MIB --thp-disable"
  echo "done"
}

# thp_run_guest SETTING OUT PROBE VANILLA NUMA REPS HEAP_REPS CONTROLS: one
# guest; writes OUT.log (its output) and OUT.tsv, one row per run:
# setting, variant, threads, lib, rep, status, rss_kib, peak_rss_kib,
# anon_huge_kib, heap_bytes, numa_active, numa_nodes, thp (the probe's).
# Returns the guest's status.
thp_run_guest() {
  local setting=$1 out=$2 probe=$3 vanilla=$4 numa=$5 reps=$6 heap_reps=$7 controls=$8
  local mem=512M rc=0
  [ "$heap_reps" = 0 ] || mem=1280M # the 1 GiB heap, about half on each node
  "$REPO_ROOT/tools/numa-vm" -q --live-stderr --nodes "$THP_NODES" --mem-per-node "$mem" \
    --timeout 1200 --kernel-arg "transparent_hugepage=$setting" --kernel-arg norandmaps \
    --ship "$probe" --ship "$vanilla" --ship "$numa" -- \
    sh -c "$(thp_guest_script "$probe" "$vanilla" "$numa" "$reps" "$heap_reps" "$controls")" \
    >"$out.log" || rc=$?
  awk -v s="$setting" '$1 == "R" {
    split("", kv)
    for (i = 8; i <= NF; ++i) { split($i, p, "="); kv[p[1]] = p[2] }
    printf "%s\t%s\t%s\t%s\t%s\t%s", s, $2, $3, $4, $5, $6
    # Resident and huge pages as the page tables count them, where the
    # probe could (smaps misses huge pages under NUMA balancing:
    # benchmarks/memory/page_tables.h); smaps_rollup otherwise.
    if (kv["resident_kib"] + 0 >= 0 && kv["resident_kib"] != "") kv["smaps_rss_kib"] = kv["resident_kib"]
    if (kv["huge_kib"] + 0 >= 0 && kv["huge_kib"] != "") kv["anon_huge_kib"] = kv["huge_kib"]
    n = split("smaps_rss_kib peak_rss_kib anon_huge_kib heap_bytes numa_active numa_nodes thp", k, " ")
    for (i = 1; i <= n; ++i) printf "\t%s", (k[i] in kv) ? kv[k[i]] : "-"
    printf "\n"
  }' "$out.log" >"$out.tsv"
  return "$rc"
}

# thp_medians TSV: per setting, variant, threads and lib: the medians of
# Rss, ru_maxrss, AnonHugePages (KiB) and heap bytes, over the runs that
# finished, and the number of runs.
thp_medians() {
  awk -F'\t' '$6 == 0' "$1" |
    python3 "$REPO_ROOT/tools/compare.d/report.py" medians --keys 1,2,3,4 --values 7,8,9,10 \
      --format %.0f --count
}

# thp_table TSV SETTING: the Markdown table of one THP setting (its
# threads rows, medians), on stdout, with the guest's setting in the header.
thp_table() {
  local tsv=$1 setting=$2 guest
  guest=$(awk -F'\t' -v s="$setting" '$1 == s && $13 != "-" { print $13; exit }' "$tsv")
  local reps
  reps=$(awk -F'\t' -v s="$setting" '$1 == s && $2 == "main" && $4 == "vanilla" && $3 == '"${THP_THREADS[0]}"' && $6 == 0' "$tsv" | wc -l)
  echo "#### THP \`$setting\` (the guest's transparent_hugepage/enabled: ${guest:-unknown}), $THP_NODES nodes, medians of $reps"
  echo
  thp_medians "$tsv" | awk -F'\t' -v s="$setting" -v pct="$THP_BOUND_PCT" \
    -v node_kib="$THP_BOUND_NODE_KIB" -v nodes="$THP_NODES" '
    function mib(x) { return x == "" ? "-" : sprintf("%.1f", x / 1024) }
    $1 == s { key = $2 SUBSEP $3 SUBSEP $4; rss[key] = $5; peak[key] = $6; huge[key] = $7
              if (!(($2 SUBSEP $3) in seen)) { seen[$2 SUBSEP $3] = 1; order[++rows] = $2 SUBSEP $3 } }
    END {
      print "| threads | resident MiB, vanilla | resident MiB, numa | numa/vanilla | bound MiB | ru_maxrss MiB, vanilla / numa | AnonHugePages MiB, vanilla / numa |"
      print "|---|---|---|---|---|---|---|"
      for (r = 1; r <= rows; r++) {
        split(order[r], k, SUBSEP)
        if (k[1] != "main" && k[1] != "heap") continue
        v = rss[order[r] SUBSEP "vanilla"]; n = rss[order[r] SUBSEP "numa"]
        label = k[1] == "heap" ? k[2] " + 1 GiB heap" : k[2]
        bound = ""; ratio = "-"; mark = ""
        if (v != "" && n != "") {
          a = int(v * pct / 100); b = v + node_kib * (nodes - 1); bound = a > b ? a : b
          ratio = sprintf("%.2fx", n / v)
          if (k[1] == "main" && n > bound) mark = " *"
        }
        printf "| %s | %s | %s | %s%s | %s | %s / %s | %s / %s |\n", label, mib(v), mib(n), ratio, mark,
          k[1] == "main" ? mib(bound) : "-",
          mib(peak[order[r] SUBSEP "vanilla"]), mib(peak[order[r] SUBSEP "numa"]),
          mib(huge[order[r] SUBSEP "vanilla"]), mib(huge[order[r] SUBSEP "numa"])
      }
    }'
}

# thp_legend: what the tables say, after them.
thp_legend() {
  cat <<EOF

Resident: present pages (/proc/self/pagemap) while the threads wait at the
barrier, shown as MiB; AnonHugePages: the 2 MiB stretches one huge page backs
(pagemap and /proc/kpageflags). Not smaps_rollup: on the lab's 6.1 kernel it
misses huge pages NUMA balancing is sampling. \`*\`: numa above the bound,
max(1.$((THP_BOUND_PCT - 100)) x vanilla, vanilla + $((THP_BOUND_NODE_KIB / 1024)) MiB per node beyond the first).
ru_maxrss is the kernel's peak RSS, for comparison with older figures: on
the lab's 6.1 kernel it misses up to 63 4 KiB faults per thread, so it reads
far below Rss with many threads, and below numa's more than vanilla's
(numa's huge-page faults are counted at once). The 1 GiB heap row
($THP_HEAP_THREADS threads holding $THP_HEAP_MIB MiB, half in 16 B - 8 KiB objects, half in
1 MiB blocks) runs with THP=always only.
EOF
}
