#!/usr/bin/env bash
# Drop-in test: dropin_probe is linked against Debian's stock libtcmalloc.so.4. Run it
#   (a) as is                                  -> Debian's library must answer;
#   (b) with LD_LIBRARY_PATH at a directory holding our libtcmalloc.so.4;
#   (c) with LD_PRELOAD of our libtcmalloc.so  -> in (b) and (c) OUR library must answer.
# "Answers" is judged twice, independently: tc_version()'s string, and the libtcmalloc
# file the loader actually mapped (/proc/self/maps, printed by the probe; ldd for (b)).
#
# Usage: dropin_test.sh PROBE OUR_LIBTCMALLOC.so "gperftools <pinned version>"
set -euo pipefail

die() { echo "dropin_test: error: $*" >&2; exit 1; }
[ $# = 3 ] || die "usage: dropin_test.sh PROBE OUR_LIBTCMALLOC.so 'gperftools <version>'"
probe=$1
ours=$(readlink -f "$2")
our_version=$3
[ -x "$probe" ] || die "$probe is not an executable"
[ -f "$ours" ] || die "$2 does not exist"

# Debian's library, as the loader resolves the probe's NEEDED entry with no overrides.
debian=$(ldd "$probe" | awk '$1 == "libtcmalloc.so.4" { print $3 }')
[ -n "$debian" ] && [ -f "$debian" ] || die "the probe does not resolve libtcmalloc.so.4 (libgoogle-perftools-dev installed?)"
debian=$(readlink -f "$debian")
[ "$debian" != "$ours" ] || die "Debian's libtcmalloc.so.4 is ours: nothing to tell apart"

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dropin.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib"
ln -s "$ours" "$work/lib/libtcmalloc.so.4"

passed=0
failed=0
check() { # check DESCRIPTION CONDITION...: one PASS/FAIL line.
  local what=$1
  shift
  if "$@"; then echo "PASS $what"; passed=$((passed + 1)); else echo "FAIL $what"; failed=$((failed + 1)); fi
}

# run_case LABEL WANT(ours|debian) ENV...: run the probe and check who answered.
run_case() {
  local label=$1 want=$2 out rc=0 version want_file other_file mapped
  shift 2
  out=$(env "$@" "$probe" 2>&1) || rc=$?
  echo "--- ($label) ${*:-no overrides}"
  sed 's/^/    /' <<<"$out"
  check "($label) probe exits 0 and accounts for the memory it holds" [ "$rc" = 0 ]
  version=$(sed -n 's/^version: //p' <<<"$out")
  mapped=$(sed -n 's/^mapped: //p' <<<"$out" | while read -r f; do readlink -f "$f" || echo "$f"; done | sort -u)
  if [ "$want" = ours ]; then
    want_file=$ours other_file=$debian
    check "($label) tc_version() is '$our_version'" [ "$version" = "$our_version" ]
  else
    want_file=$debian other_file=$ours
    check "($label) tc_version() '$version' is not ours ('$our_version')" \
      [ -n "$version" ] && [ "$version" != "$our_version" ]
  fi
  check "($label) the mapped libtcmalloc is $want_file" [ "$mapped" = "$want_file" ]
  check "($label) $other_file is not mapped" bash -c '! grep -qxF "$1" <<<"$2"' _ "$other_file" "$mapped"
}

run_case a debian
run_case b ours LD_LIBRARY_PATH="$work/lib"
# The loader's own resolution for (b), as further evidence.
resolved=$(LD_LIBRARY_PATH="$work/lib" ldd "$probe" | awk '$1 == "libtcmalloc.so.4" { print $3 }')
echo "    ldd with LD_LIBRARY_PATH: libtcmalloc.so.4 => $resolved"
check "(b) ldd resolves libtcmalloc.so.4 to our directory" [ "$resolved" = "$work/lib/libtcmalloc.so.4" ]
run_case c ours LD_PRELOAD="$ours"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
