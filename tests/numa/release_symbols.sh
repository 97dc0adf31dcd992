#!/bin/bash
# The release libraries carry no test-only code of the layer: no symbol whose
# name says it is for tests (ForTest, Testing, for_test) beyond vanilla's own
# (upstream's TestingPortal). The linker drops functions nothing calls, so a
# symbol left is one malloc's paths reach.
# Usage: release_symbols.sh PATCHED.so VANILLA.so [PATCHED.so VANILLA.so]...
set -euo pipefail

(($# > 0 && $# % 2 == 0)) || {
  echo "usage: release_symbols.sh PATCHED.so VANILLA.so..." >&2
  exit 1
}
pattern='fortest|for_test|testing'
fail=0
while (($# > 0)); do
  patched=$1 vanilla=$2
  shift 2
  names() { nm -C "$1" | awk '{ $1 = ""; $2 = ""; print }' | grep -Ei "$pattern" | sort -u; }
  added=$(comm -23 <(names "$patched") <(names "$vanilla") || true)
  if [[ -n $added ]]; then
    echo "FAIL: $patched holds test-only symbols vanilla has not:" >&2
    echo "$added" >&2
    fail=1
  else
    echo "release_symbols: OK: $(basename "$patched"): no test-only symbol beyond vanilla's"
  fi
done
exit $fail
