// Preloaded by `tools/compare --memory` after the allocator under test: as the
// process exits, it asks the allocator for generic.heap_size (bytes taken from
// the system, released ones included) and writes "heap_bytes=N" to the file
// named by COMPARE_HEAP_SIZE. The benchmarks link plain libc malloc and do not
// ask themselves; an allocator that does not answer leaves the file empty.
// Vanilla's heap size never shrinks, so this is its peak; the patched one's
// can (other nodes' released address space goes back to their regions), so
// for it this can be below the peak.
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*GetNumericProperty)(const char *name, size_t *value);

__attribute__((destructor)) static void report(void) {
  const char *path = getenv("COMPARE_HEAP_SIZE");
  if (!path || !*path) return;
  // Looked up at exit, not linked: the allocator is whichever was preloaded.
  GetNumericProperty get = (GetNumericProperty)dlsym(
      RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
  size_t value = 0;
  char line[64];
  int len = 0;
  if (get && get("generic.heap_size", &value))
    len = snprintf(line, sizeof(line), "heap_bytes=%zu\n", value);
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  if (len > 0) {
    ssize_t ignored = write(out, line, (size_t)len);
    (void)ignored;
  }
  close(out);
}
