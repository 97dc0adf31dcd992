"""Repository rule that carries upstream gperftools: pinned tarball + our patch series.

One rule makes both trees from the same tarball and the same BUILD overlay:
  * patched = True:  apply patches/series in order (zero fuzz), then place our own new
                     files (tcmalloc/new_files.txt) where the patches expect them;
  * patched = False: vanilla upstream, untouched.
"""

load(
    ":pin.bzl",
    "GPERFTOOLS_SHA256",
    "GPERFTOOLS_STRIP_PREFIX",
    "GPERFTOOLS_URL",
    "GPERFTOOLS_VERSION",
)

def _entries(text):
    """Non-empty lines of a series/manifest file, with '#' comments removed."""
    out = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            out.append(line)
    return out

def _source_label(path):
    """'numa/topology.cc' -> Label('//numa:topology.cc') in this repository."""
    package, _, name = path.rpartition("/")
    return Label("//%s:%s" % (package, name))

def _apply_patch(rctx, patch):
    # GNU patch rather than Bazel's built-in patcher, so that Bazel, tools/export-tree
    # and tools/check-series all apply the series the same way: zero fuzz, no offsets.
    result = rctx.execute(["patch", "--batch", "--forward", "--fuzz=0", "-p1", "-i", str(rctx.path(patch))])
    output = result.stdout + result.stderr

    # Only "Hunk #N succeeded at M (offset K lines)." or "... with fuzz K." lines count,
    # not a file name that happens to contain either word.
    inexact = [
        line
        for line in output.splitlines()
        if line.startswith("Hunk #") and ("(offset " in line or " with fuzz " in line)
    ]
    if result.return_code != 0 or inexact:
        fail("patch %s does not apply cleanly to gperftools %s:\n%s" % (patch.name, GPERFTOOLS_VERSION, output))

def _version_substitutions():
    major, minor = GPERFTOOLS_VERSION.split(".")[:2]
    patch_level = GPERFTOOLS_VERSION[len(major) + 1 + len(minor):]
    return {
        "@TC_VERSION_MAJOR@": major,
        "@TC_VERSION_MINOR@": minor,
        "@TC_VERSION_PATCH@": patch_level,
        "@ac_cv_have_struct_mallinfo@": "1",
        "@ac_cv_have_struct_mallinfo2@": "1",
    }

def _gperftools_repository_impl(rctx):
    rctx.download_and_extract(
        url = GPERFTOOLS_URL,
        sha256 = GPERFTOOLS_SHA256,
        stripPrefix = GPERFTOOLS_STRIP_PREFIX,
    )
    if rctx.attr.patched:
        for name in _entries(rctx.read(rctx.attr.series)):
            _apply_patch(rctx, Label("//patches:" + name))
        for entry in _entries(rctx.read(rctx.attr.new_files)):
            src, dst = [field for field in entry.replace("\t", " ").split(" ") if field]
            rctx.symlink(_source_label(src), dst)

    # What ./configure would generate on Linux: config.h and, before 2.17, the public
    # version header (2.17 and later ship tcmalloc.h as it is).
    if rctx.path("src/gperftools/tcmalloc.h.in").exists:
        rctx.template(
            "src/gperftools/tcmalloc.h",
            "src/gperftools/tcmalloc.h.in",
            substitutions = _version_substitutions(),
        )
    rctx.symlink(rctx.attr.config_h, "bazel/config.h")

    # Our overlay, not upstream's own Bazel files (2.17 and later ship BUILD.bazel and
    # MODULE.bazel for Bzlmod, which Bazel 4.2 cannot read; docs/rebasing.md says why).
    for name in ["BUILD.bazel", "BUILD", "MODULE.bazel", "WORKSPACE.bazel"]:
        if rctx.path(name).exists:
            rctx.delete(name)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)

gperftools_repository = repository_rule(
    implementation = _gperftools_repository_impl,
    attrs = {
        "patched": attr.bool(mandatory = True),
        "series": attr.label(default = "//patches:series", allow_single_file = True),
        "new_files": attr.label(default = "//tcmalloc:new_files.txt", allow_single_file = True),
        "config_h": attr.label(default = "//tcmalloc:config.h", allow_single_file = True),
        "build_file": attr.label(default = "//tcmalloc:gperftools.BUILD", allow_single_file = True),
    },
)

def numa_tcmalloc_dependencies():
    """Declares @gperftools (patched) and @gperftools_vanilla. Call it from WORKSPACE."""
    gperftools_repository(name = "gperftools", patched = True)
    gperftools_repository(name = "gperftools_vanilla", patched = False)
