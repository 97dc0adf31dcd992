// A stand-in "allocator" for the attribution probe (attr_probe.c): a library
// whose code makes a known number of accesses, so that the lab plugin's
// split by code (tools/compare --pin, PLACE_ALLOC_CODE=libattr_alloc.so) has
// a known answer. attr_touch reads `n` 64-byte-apart words of `p`, one load
// each, and returns their sum.
#include <stddef.h>

long attr_touch(const volatile long* p, size_t n) {
  long sum = 0;
  for (size_t i = 0; i < n; ++i) sum += p[i * 8];
  return sum;
}
