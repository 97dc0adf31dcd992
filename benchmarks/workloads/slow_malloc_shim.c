/* Self-test aid for tools/callgrind-gate: an LD_PRELOAD shim that wraps
 * tcmalloc's malloc with a fixed amount of extra work, i.e. a deliberately
 * slower allocator. Preloaded in front of libtcmalloc_minimal.so, the gate
 * must report it as a regression; if it does not, the gate is broken.
 *
 * GATE_SHIM_EXTRA (default 4) is the number of extra loop turns per malloc,
 * about 3 instructions each. It is read once, with getenv, which does not
 * allocate. */
#include <stddef.h>
#include <stdlib.h>

void* tc_malloc(size_t size); /* exported by libtcmalloc(_minimal).so */

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
