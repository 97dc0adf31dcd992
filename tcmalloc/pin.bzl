"""The pinned upstream release. The single source of truth for version, URL and checksum.

Read by Bazel (tcmalloc/repo.bzl) and by the shell tools (tools/lib.sh greps the
`NAME = "value"` lines), so keep one assignment per line.
"""

GPERFTOOLS_VERSION = "2.16"
GPERFTOOLS_URL = "https://github.com/gperftools/gperftools/archive/refs/tags/gperftools-2.16.tar.gz"
GPERFTOOLS_SHA256 = "737be182b4e42f5c7f595da2a7aa59ce0489a73d336d0d16847f2aa52d5221b4"
GPERFTOOLS_STRIP_PREFIX = "gperftools-gperftools-2.16"

# Offline source of the same bytes: the orig tarball of this Debian source package.
GPERFTOOLS_DEBIAN_SOURCE = "google-perftools"
GPERFTOOLS_DEBIAN_VERSION = "2.16-1"
GPERFTOOLS_DEBIAN_SUITE = "trixie"
