# shellcheck shell=bash
# Shared by tests/compare/run and lab_run: the libraries (built when missing),
# a scratch directory and the tiny test program in it, as $tiny.
for lib in libtcmalloc_minimal.so vanilla/libtcmalloc_minimal.so; do
  [ -f "$REPO_ROOT/bazel-bin/$lib" ] && continue
  note "building the numa and vanilla libraries"
  bazel_cmd build --jobs=2 //:libtcmalloc_minimal.so //vanilla:libtcmalloc_minimal.so >/dev/null 2>&1 ||
    die "bazel build failed (run it by hand to see why)"
  break
done
require cc python3 git
tmp=$(mktemp -d)
# Each tools/compare run leaves a directory with copies of both libraries
# under out/compare/; the tests remove theirs (named in "run files in DIR/").
remove_runs() {
  local dir
  sed -n "s|^compare: .* run files in \($REPO_ROOT/out/compare/[^/ ]*\)/\$|\1|p" "$tmp"/*.err 2>/dev/null |
    while IFS= read -r dir; do rm -rf -- "$dir"; done
  rm -rf "$tmp"
}
trap remove_runs EXIT
tiny=$tmp/tiny
cc -O2 -o "$tiny" "$(dirname "${BASH_SOURCE[0]}")/tiny.c" -ldl || die "cannot compile tests/compare/tiny.c"
