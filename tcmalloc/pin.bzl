"""The pinned upstream release. The single source of truth for version, URL and checksum.

Read by Bazel (tcmalloc/repo.bzl) and by the shell tools (tools/lib.sh greps the
`NAME = "value"` lines), so keep one assignment per line.
"""

GPERFTOOLS_VERSION = "2.18.1"
GPERFTOOLS_URL = "https://github.com/gperftools/gperftools/archive/refs/tags/gperftools-2.18.1.tar.gz"
GPERFTOOLS_SHA256 = "172d27e6f6c1fa69df4be30bc61ea35ed225b74cd3a15500e2d75e981478fb2b"
GPERFTOOLS_STRIP_PREFIX = "gperftools-gperftools-2.18.1"

# Offline source of the same bytes: the orig tarball of this Debian source package.
GPERFTOOLS_DEBIAN_SOURCE = "google-perftools"
GPERFTOOLS_DEBIAN_VERSION = "unknown"
GPERFTOOLS_DEBIAN_SUITE = "unknown"
