# Shared helpers for the shell tools. Source it; do not run it.
#   . "$(dirname "$0")/lib.sh"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_DIR=${NUMA_TCMALLOC_CACHE:-$REPO_ROOT/.cache}
DISTDIR=$CACHE_DIR/distdir

# One-line error and a non-zero exit: every tool fails the same way.
die() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

note() {
  echo "$(basename "$0"): $*" >&2
}

# The tools' command-line convention (every executable in tools/; tests/tools/help_run
# checks it): -h/--help prints usage on stdout, exits 0 and does nothing else; an
# unknown option is one line on stderr and exit 2, the status for "called wrongly"
# (bad values of known options stay one-line errors with exit 1, via die).

# show_usage: the script's header comment, from its second line to the line before
# its "set -" line, on stdout. Headers hold a "Usage:" line.
show_usage() {
  sed -n '2,/^set -/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' -e 's/^#$//'
}

# bad_usage MESSAGE: one line on stderr and exit 2.
bad_usage() {
  echo "$(basename "$0"): error: $* (see --help)" >&2
  exit 2
}

# unknown_option ARG: the one line for an argument no option matched.
unknown_option() {
  case $1 in
    -*) bad_usage "unknown option '$1'" ;;
    *) bad_usage "unexpected argument '$1'" ;;
  esac
}

# pin VAR [PIN_FILE]: the value of VAR in tcmalloc/pin.bzl (the single source of the
# pin), or in PIN_FILE (another checkout's).
pin() {
  local file=${2:-$REPO_ROOT/tcmalloc/pin.bzl} value
  value=$(sed -n "s/^$1 = \"\(.*\)\"\$/\1/p" "$file")
  [ -n "$value" ] || die "$file has no $1"
  printf '%s\n' "$value"
}

# sha256_of FILE: the file's sha256, in hex.
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# need_arg OPTION ARGS...: for option parsers ("$@" at the option): fails with one
# line unless OPTION has a value after it.
need_arg() { [ "$#" -ge 2 ] || die "$1 needs a value (see --help)"; }

# The tarball's file name inside the distdir: Bazel looks it up by the URL's basename.
upstream_tarball() {
  printf '%s/%s\n' "$DISTDIR" "$(basename "$(pin GPERFTOOLS_URL)")"
}

# entries FILE: the non-comment, non-blank lines of a series or manifest file.
entries() {
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' "$1"
}

# What GNU patch prints for a hunk it applied at other lines or with fuzz. Only these
# lines count: a file named like "offset.c" in a "patching file" line must not.
# An extended regex for grep -E and awk alike (hence [(] rather than an escape).
INEXACT_HUNK_RE='^Hunk #[0-9]+ succeeded at [0-9]+ ([(]offset|with fuzz)'

# debian_archives: "URI CODENAME" for each Debian suite this machine's apt uses
# (bookworm, bookworm-updates, bookworm-security...), read from its own configuration
# at run time: the archive's host is never written into a file of ours.
debian_archives() {
  # shellcheck disable=SC2016 # $(...) is apt's format syntax, not the shell's
  apt-get indextargets --format '$(REPO_URI) $(ORIGIN) $(CODENAME)' 2>/dev/null |
    awk '$2 == "Debian" { print $1, $3 }' | sort -u
}

# debian_mirrors: the URIs of the main suites among them (not -security or -updates).
debian_mirrors() {
  debian_archives | awk '$2 !~ /-/ { print $1 }' | sort -u
}

# bootstrap_group_of CMD: the tools/bootstrap group (tools/packages.txt) that installs CMD.
bootstrap_group_of() {
  case $1 in
    qemu-system-x86_64 | cpio | xz | zstd | busybox) echo lab ;;
    valgrind) echo bench ;;
    cmake | make | ctest | autoreconf | libtoolize | automake | go | ccache) echo upstream ;;
    mmdebstrap | lintian | dpkg-buildpackage | dh | pkg-config | ip) echo deb ;;
    numactl | strace | readelf) echo test ;;
    *) echo build ;;
  esac
}

# require CMD...: fail with one line if a tool is missing.
require() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || die "'$cmd' is not installed (run tools/bootstrap $(bootstrap_group_of "$cmd"))"
  done
}

# The Bazel command line every tool uses: offline stand-ins when tools/bootstrap set them up.
bazel_cmd() {
  local cmd=$1
  shift
  if [ -f "$REPO_ROOT/.bazelrc.offline" ]; then
    (cd "$REPO_ROOT" && bazel "$cmd" --config=offline "$@")
  else
    (cd "$REPO_ROOT" && bazel "$cmd" "$@")
  fi
}

# cpu_allowed CPU: whether this process may run on CPU (its Cpus_allowed_list).
# Fake topologies (TCMALLOC_NUMA_FAKE_NODES) put CPU c on node c % N, so the
# tools that pin to CPUs 0 and 1 ask this first.
cpu_allowed() {
  local list part parts
  list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  IFS=, read -r -a parts <<<"$list"
  for part in "${parts[@]}"; do
    [[ $part =~ ^([0-9]+)(-([0-9]+))?$ ]] || continue
    [ "$1" -ge "${BASH_REMATCH[1]}" ] && [ "$1" -le "${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}" ] && return 0
  done
  return 1
}
