#!/bin/bash
# The NUMA layer is compiled into malloc, so its objects may depend only on a
# small allow list of libc symbols (no malloc/new, no stdio, no libnuma, no
# C++ runtime), must define no constructors (.init_array/.ctors), and must
# export nothing (every global definition hidden).
# Usage: check_symbols.sh LIB.a...   (run by bazel test //tests/numa:symbols_test)
set -euo pipefail

(($# > 0)) || { echo "usage: check_symbols.sh LIB.a..." >&2; exit 1; }
for lib in "$@"; do
  [[ -f $lib ]] || { echo "check_symbols: no such archive: $lib" >&2; exit 1; }
done

allowed='^(syscall|sched_getcpu|getpagesize|__errno_location|memset|memcpy|memmove|__rseq_offset|__rseq_size|__stack_chk_fail|__popcountdi2|_GLOBAL_OFFSET_TABLE_|_ZN8tcmalloc4numa.*)$'
fail=0

undefined=$(nm -u "$@" | awk 'NF == 2 { print $2 }' | sort -u)
bad=$(grep -Ev "$allowed" <<<"$undefined" || true)
if [[ -n $bad ]]; then
  echo "FAIL: undefined symbols outside the allow list:" >&2
  echo "$bad" >&2
  fail=1
fi

if objdump -h "$@" | grep -Eq '\.(init_array|ctors)'; then
  echo "FAIL: static constructors (.init_array/.ctors) present" >&2
  objdump -h "$@" | grep -E '\.(init_array|ctors)' >&2
  fail=1
fi

exported=$(readelf -sW "$@" |
  awk '($5 == "GLOBAL" || $5 == "WEAK") && $6 != "HIDDEN" && $7 != "UND" { print $8 }')
if [[ -n $exported ]]; then
  echo "FAIL: symbols not hidden:" >&2
  echo "$exported" >&2
  fail=1
fi

count=$(wc -l <<<"$undefined")
if [[ $fail -eq 0 ]]; then
  echo "check_symbols: OK ($# archives, $count undefined symbols, all allowed; no ctors; nothing exported)"
fi
exit $fail
