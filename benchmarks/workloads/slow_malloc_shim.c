/* Self-test aid for tools/callgrind-gate: an LD_PRELOAD shim that wraps
 * tcmalloc's malloc and operator new(size_t) with a fixed amount of extra
 * work, i.e. a deliberately slower allocator. Preloaded in front of
 * libtcmalloc_minimal.so, the gate must report it as a regression in each of
 * its measures (malloc+free, new+sized delete, cacheless free); if it does
 * not, the gate is broken. tcmalloc's operator new does not go through
 * malloc, hence the second wrapper.
 *
 * GATE_SHIM_EXTRA (default 4) is the number of extra loop turns per call,
 * about 3 instructions each. It is read once, with getenv, which does not
 * allocate. */
#include <stddef.h>
#include <stdlib.h>

/* Exported by libtcmalloc(_minimal).so. */
void* tc_malloc(size_t size);
void* tc_new(size_t size);

static long extra_turns = 4;

__attribute__((constructor)) static void ReadExtra(void) {
  const char* text = getenv("GATE_SHIM_EXTRA");
  if (text != NULL) extra_turns = strtol(text, NULL, 10);
}

void* malloc(size_t size) {
  for (volatile long i = 0; i < extra_turns; ++i) {
  }
  return tc_malloc(size);
}

/* operator new(size_t), by its mangled name (x86-64 Itanium ABI), so that the
 * shim stays C. tc_new throws std::bad_alloc itself; nothing to add here. */
void* _Znwm(size_t size) {
  for (volatile long i = 0; i < extra_turns; ++i) {
  }
  return tc_new(size);
}
