// Raw system calls for the NUMA layer, which runs inside malloc.
//
// Why not the libc wrappers: open/read/close are cancellation points and are
// commonly interposed (sanitizers, LD_PRELOAD tools) by code that may malloc;
// glibc has no wrappers at all for mbind/get_mempolicy outside libnuma.
// Why errno is restored: malloc must not clobber the caller's errno when it
// succeeds, and a refused mbind is not a malloc failure.
#ifndef NUMA_TCMALLOC_NUMA_SYSCALL_H_
#define NUMA_TCMALLOC_NUMA_SYSCALL_H_

#include <errno.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// syscall(nr, a..f) that returns the result, or -errno on failure, and leaves
// errno as it was.
inline long RawSyscall(long nr, long a = 0, long b = 0, long c = 0, long d = 0,
                       long e = 0, long f = 0) {
  const int saved = errno;
  long r = syscall(nr, a, b, c, d, e, f);
  if (r == -1) r = -errno;
  errno = saved;
  return r;
}

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_SYSCALL_H_
