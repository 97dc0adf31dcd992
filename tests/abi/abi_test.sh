#!/usr/bin/env bash
# ABI check of the drop-in libraries: for each (vanilla, patched, SONAME) triple given as
# arguments, the patched library's exported dynamic symbols (nm -D --defined-only) are a
# superset of the vanilla library's, and both carry the expected SONAME. Prints the
# symbols the patched library adds.
#
# The global symbols it adds must be the placement API or the two functions the series'
# hooks call across objects (ADDED_ALLOWED): the layer's own names stay hidden.
#
# Usage: abi_test.sh VANILLA.so PATCHED.so SONAME [VANILLA.so PATCHED.so SONAME]...
#        abi_test.sh --compare OLD.syms NEW.syms   (compare two symbol lists only)
# Before checking the libraries, it runs the same comparison on doctored symbol lists
# (one symbol removed; a wrong SONAME) and fails unless those are caught: the check is
# shown to be able to fail every time it passes.
set -euo pipefail

die() { echo "abi_test: error: $*" >&2; exit 1; }

# symbols LIB: the names of its defined dynamic symbols, sorted, without versions.
symbols() {
  nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u
}

soname() {
  readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'
}

# compare_symbols OLD NEW LABEL: lists (files, one symbol a line) -> prints additions and
# removals; returns 1 if NEW lacks any symbol of OLD.
compare_symbols() {
  local old=$1 new=$2 label=$3 removed added
  removed=$(comm -23 "$old" "$new")
  added=$(comm -13 "$old" "$new")
  echo "$label: $(wc -l <"$old") vanilla symbols, $(wc -l <"$new") patched," \
    "$(grep -c . <<<"$added" || true) added, $(grep -c . <<<"$removed" || true) removed"
  [ -z "$added" ] || sed 's/^/  + /' <<<"$added"
  if [ -n "$removed" ]; then
    sed 's/^/  - REMOVED /' <<<"$removed"
    return 1
  fi
}

# globals LIB: its defined dynamic symbols of global binding, sorted, without versions.
globals() {
  nm -D --defined-only "$1" | awk 'NF >= 3 && $2 ~ /^[A-Z]$/ { sub(/@.*/, "", $3); print $3 }' |
    sort -u
}

# What the patched libraries may export beyond vanilla: ThreadCache::DeallocateSlow (a
# member the series adds to upstream's class) and numa::FreeSizedElsewhere (called from
# upstream's inline sized delete).
ADDED_ALLOWED='^(tc_numa_malloc_onnode|tc_numa_malloc_interleaved|tc_numa_node_of|tc_numa_num_nodes|tc_numa_node_ids|_ZN8tcmalloc11ThreadCache14DeallocateSlowEPvj|_ZN8tcmalloc4numa18FreeSizedElsewhereEPv)$'

# check_additions VANILLA_GLOBALS PATCHED_GLOBALS LABEL: returns 1 if PATCHED adds a
# global symbol outside ADDED_ALLOWED.
check_additions() {
  local extra
  extra=$(comm -13 "$1" "$2" | grep -Ev "$ADDED_ALLOWED" || true)
  if [ -n "$extra" ]; then
    echo "$3: exports symbols of the layer it should hide:"
    sed 's/^/  ! /' <<<"$extra"
    return 1
  fi
  echo "$3: adds no global symbol beyond the placement API and the series' two hooks"
}

# check_soname FILE WANT LABEL: returns 1 unless FILE's SONAME is WANT.
check_soname() {
  local got
  got=$(soname "$1")
  if [ "$got" != "$2" ]; then
    echo "$3: SONAME '$got', want '$2'"
    return 1
  fi
  echo "$3: SONAME $got"
}

# The calls gperftools/numa.h declares, which both drop-in libraries export.
PLACEMENT_API="tc_numa_malloc_onnode tc_numa_malloc_interleaved tc_numa_node_of
  tc_numa_num_nodes tc_numa_node_ids"

# check_exports SYMS LABEL: returns 1 unless the symbol list SYMS has every call of
# PLACEMENT_API.
check_exports() {
  local missing="" s
  for s in $PLACEMENT_API; do grep -qx "$s" "$1" || missing="$missing $s"; done
  if [ -n "$missing" ]; then
    echo "$2: placement API missing:$missing"
    return 1
  fi
  echo "$2: exports the placement API ($(wc -w <<<"$PLACEMENT_API") calls)"
}

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/abi.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = --compare ]; then
  [ $# = 3 ] || die "--compare wants OLD.syms NEW.syms"
  sort -u "$2" >"$work/old"
  sort -u "$3" >"$work/new"
  compare_symbols "$work/old" "$work/new" compare
  exit
fi
[ $# -gt 0 ] && [ $(($# % 3)) = 0 ] || die "want VANILLA.so PATCHED.so SONAME triples (see the header)"
command -v nm >/dev/null && command -v readelf >/dev/null || die "nm/readelf missing (binutils)"

failures=0
first_vanilla=$1
first_soname=$3
while [ $# -gt 0 ]; do
  vanilla=$1 patched=$2 want=$3
  shift 3
  name=$(basename "$patched")
  for f in "$vanilla" "$patched"; do [ -f "$f" ] || die "$f does not exist"; done
  symbols "$vanilla" >"$work/vanilla.syms"
  symbols "$patched" >"$work/patched.syms"
  [ -s "$work/vanilla.syms" ] || die "$vanilla exports no symbols: nm failed?"
  compare_symbols "$work/vanilla.syms" "$work/patched.syms" "$name" || failures=$((failures + 1))
  check_soname "$vanilla" "$want" "vanilla $name" || failures=$((failures + 1))
  check_soname "$patched" "$want" "patched $name" || failures=$((failures + 1))
  check_exports "$work/patched.syms" "patched $name" || failures=$((failures + 1))
  globals "$vanilla" >"$work/vanilla.globals"
  globals "$patched" >"$work/patched.globals"
  check_additions "$work/vanilla.globals" "$work/patched.globals" "patched $name" ||
    failures=$((failures + 1))
done

# The same checks must catch a broken library: a symbol that disappeared (the last of the
# first vanilla list, e.g. a renamed function) and a SONAME that changed.
symbols "$first_vanilla" >"$work/real.syms"
sed '$d' "$work/real.syms" >"$work/doctored.syms"
if compare_symbols "$work/real.syms" "$work/doctored.syms" "self-check (one symbol removed)" >"$work/self.log"; then
  cat "$work/self.log"
  echo "self-check FAILED: a removed symbol was not detected"
  failures=$((failures + 1))
elif ! grep -q "REMOVED $(tail -n1 "$work/real.syms")\$" "$work/self.log"; then
  echo "self-check FAILED: the removed symbol was not named"
  failures=$((failures + 1))
else
  echo "self-check: removing $(tail -n1 "$work/real.syms") is detected"
fi
if check_exports "$work/real.syms" "self-check (vanilla)" >/dev/null; then
  echo "self-check FAILED: vanilla, without the placement API, passed its check"
  failures=$((failures + 1))
else
  echo "self-check: a library without the placement API is detected"
fi
{ cat "$work/patched.globals"; echo _ZN8tcmalloc4numa12NotHiddenYetEv; } | sort -u >"$work/leaky.globals"
if check_additions "$work/patched.globals" "$work/leaky.globals" "self-check (leak)" >/dev/null; then
  echo "self-check FAILED: an exported layer symbol was not detected"
  failures=$((failures + 1))
else
  echo "self-check: an exported layer symbol is detected"
fi
if check_soname "$first_vanilla" "${first_soname%.4}.5" "self-check (wrong SONAME)" >/dev/null; then
  echo "self-check FAILED: a wrong SONAME was not detected"
  failures=$((failures + 1))
else
  echo "self-check: a SONAME other than $first_soname is detected"
fi

if [ "$failures" -gt 0 ]; then
  echo "ABI check: $failures failure(s)"
  exit 1
fi
echo "ABI check: patched exports are a superset of vanilla with nothing of the layer beyond its API, SONAMEs unchanged"
