# shellcheck shell=bash
# The cache-model settings of the lab's access plugin, checked where the
# tools take them (tools/numa-vm --llc, tools/compare --llc), so that a bad
# one is refused in one line before a guest boots. The rules are llc_check's
# in llc.c, which QEMU applies again when it loads the plugin. Source it after
# tools/lib.sh.

# llc_plugin_args SPEC: "size=2M,ways=16,line=64,repl=lru" (any of them, in
# any order) -> the plugin's arguments, one per line (llc_size=2M ...); dies
# with one line when SPEC breaks a rule.
llc_plugin_args() {
  local kv parts size=$((2 << 20)) ways=16 line=64 repl=lru v
  [ -n "$1" ] || return 0
  IFS=, read -r -a parts <<<"$1"
  for kv in "${parts[@]}"; do
    v=${kv#*=}
    case $kv in
      size=*)
        [[ $v =~ ^([1-9][0-9]{0,9})([KMG]?)$ ]] || die "--llc: size wants a number with K, M or G, e.g. 2M, got '$v'"
        case ${BASH_REMATCH[2]} in
          K) size=$((BASH_REMATCH[1] << 10)) ;; M) size=$((BASH_REMATCH[1] << 20)) ;;
          G) size=$((BASH_REMATCH[1] << 30)) ;; *) size=${BASH_REMATCH[1]} ;;
        esac ;;
      ways=*) [[ $v =~ ^[1-9][0-9]{0,3}$ ]] && [ "$v" -le 1024 ] || die "--llc: ways wants 1-1024, got '$v'"; ways=$v ;;
      line=*) [[ $v =~ ^[1-9][0-9]{0,3}$ ]] || die "--llc: line wants a power of two from 8 to 4096, got '$v'"; line=$v ;;
      repl=lru | repl=plru) repl=$v ;;
      repl=*) die "--llc: repl must be lru or plru, got '$v'" ;;
      *) die "--llc wants size=, ways=, line= or repl=, separated by commas; got '$kv'" ;;
    esac
  done
  [ "$line" -ge 8 ] && [ "$line" -le 4096 ] && [ $((line & (line - 1))) = 0 ] ||
    die "--llc: line wants a power of two from 8 to 4096, got '$line'"
  [ "$repl" = lru ] || { [ $((ways & (ways - 1))) = 0 ] && [ "$ways" -le 64 ]; } ||
    die "--llc: repl=plru (tree-PLRU) needs a power-of-two number of ways, at most 64; got $ways"
  [ "$size" -le $((1 << 32)) ] || die "--llc: size must be at most 4G"
  [ $((size % (ways * line))) = 0 ] && [ "$size" -ge $((ways * line)) ] ||
    die "--llc: size ($size bytes) must be a whole number of sets of ways x line ($ways x $line bytes)"
  printf 'llc_%s\n' "${parts[@]}"
}
