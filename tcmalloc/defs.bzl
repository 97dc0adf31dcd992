"""Macros shared by the patched (//) and vanilla (//vanilla) packages."""

# The stock autotools build names the libraries libtcmalloc.so.4 and
# libtcmalloc_minimal.so.4 (TCMALLOC_SO_VERSION 9:18:5 in configure.ac).
_SONAME_MAJOR = "4"

def tcmalloc_libraries(repo):
    """Declares tcmalloc, tcmalloc_minimal and their shared libraries for one tree.

    Args:
      repo: "@gperftools" (patched) or "@gperftools_vanilla".
    """
    for lib in ["tcmalloc", "tcmalloc_minimal"]:
        # Static, alwayslink: for Bazel users who link the allocator into a binary.
        native.alias(
            name = lib,
            actual = "%s//:%s" % (repo, lib),
            visibility = ["//visibility:public"],
        )

        # Drop-in shared library with the stock SONAME.
        native.cc_binary(
            name = "lib%s.so" % lib,
            linkshared = True,
            linkopts = [
                "-Wl,-soname,lib%s.so.%s" % (lib, _SONAME_MAJOR),
                "-pthread",
            ],
            deps = ["%s//:%s" % (repo, lib)],
            visibility = ["//visibility:public"],
        )
