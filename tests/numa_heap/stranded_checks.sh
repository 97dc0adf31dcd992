# shellcheck shell=bash
# The stranded-memory checks on one vanilla/patched pair of
# benchmarks/memory/stranded runs, shared by tests/numa_heap/stranded_run
# (fake nodes, on the host) and stranded_lab_run (a 2-node guest). Source it
# after tests/checks.sh.
#
# A run's text is the probe's stdout and stderr followed by "status: N".

# Patched may use at most this percentage of vanilla's heap and peak RSS:
# vanilla's one page heap reuses the memory each phase frees, so patched
# must too, give or take per-node metadata.
STRANDED_LIMIT_PCT=105

# stranded_field RUN KEY: KEY's value in the probe's result line (the one
# that starts with heap_mib=), or nothing.
stranded_field() {
  grep -m1 '^heap_mib=' <<<"$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# stranded_finished RUN PHASES: exit status 0, every phase line and the result.
stranded_finished() {
  grep -qx 'status: 0' <<<"$1" && [ "$(grep -c '^phase=' <<<"$1")" = "$2" ] &&
    [[ "$(stranded_field "$1" heap_bytes)" =~ ^[0-9]+$ ]]
}

# stranded_within VANILLA PATCHED KEY: patched's KEY <= STRANDED_LIMIT_PCT% of vanilla's.
stranded_within() {
  local v p
  v=$(stranded_field "$1" "$3") p=$(stranded_field "$2" "$3")
  [[ $v =~ ^[0-9]+$ ]] && [[ $p =~ ^[0-9]+$ ]] && [ $((p * 100)) -le $((v * STRANDED_LIMIT_PCT)) ]
}

# stranded_ratio VANILLA PATCHED KEY: "2.00x", or "?" when a figure is missing.
stranded_ratio() {
  local v p
  v=$(stranded_field "$1" "$3") p=$(stranded_field "$2" "$3")
  if [[ $v =~ ^[1-9][0-9]*$ ]] && [[ $p =~ ^[0-9]+$ ]]; then
    awk -v p="$p" -v v="$v" 'BEGIN { printf "%.2fx", p / v }'
  else
    echo "?"
  fi
}

# stranded_show TAG RUN: the run's figures, its phase lines and any error, indented.
stranded_show() {
  printf '    %-8s heap %s MiB, peak RSS %s MiB, NUMA layer active=%s nodes=%s, %s\n' "$1" \
    "$(stranded_field "$2" heap_mib)" "$(stranded_field "$2" peak_rss_mib)" \
    "$(stranded_field "$2" numa_active)" "$(stranded_field "$2" numa_nodes)" \
    "$(grep -m1 '^status: ' <<<"$2")"
  { grep -E '^phase=|error|tcmalloc:|Killed|Segmentation' <<<"$2" || true; } | head -n 8 | sed 's/^/             /'
}

both_finished() { stranded_finished "$1" "$3" && stranded_finished "$2" "$3"; }
holds_bytes() {
  local heap
  heap=$(stranded_field "$1" heap_bytes)
  [[ $heap =~ ^[0-9]+$ ]] && [ "$heap" -ge "$2" ]
}
layer_on() { [ "$(stranded_field "$1" numa_active)" = 1 ] && [ "$(stranded_field "$1" numa_nodes)" = "$2" ]; }

# stranded_pair LABEL NODES PHASES PHASE_BYTES VANILLA PATCHED: prints the
# figures, then five checks.
stranded_pair() {
  local label=$1 nodes=$2 phases=$3 phase_bytes=$4 v=$5 p=$6
  echo "-- $label"
  stranded_show vanilla "$v"
  stranded_show patched "$p"
  echo "    patched/vanilla: heap $(stranded_ratio "$v" "$p" heap_bytes), peak RSS $(stranded_ratio "$v" "$p" peak_rss_kib)"
  check "$label: both runs finish their $phases phases" both_finished "$v" "$p" "$phases"
  check "$label: control: vanilla's heap holds one phase ($((phase_bytes >> 20)) MiB)" \
    holds_bytes "$v" "$phase_bytes"
  check "$label: patched runs with the NUMA layer on, $nodes nodes" layer_on "$p" "$nodes"
  check "$label: patched heap size <= 1.05 x vanilla's" stranded_within "$v" "$p" heap_bytes
  check "$label: patched peak RSS <= 1.05 x vanilla's" stranded_within "$v" "$p" peak_rss_kib
}
