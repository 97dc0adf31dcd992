// RawSyscall (numa/syscall.h): syscall(2) that keeps the caller's errno.
#include "numa/syscall.h"

#include <errno.h>
#include <unistd.h>

namespace tcmalloc {
namespace numa {

long RawSyscall(long nr, long a, long b, long c, long d, long e, long f) {
  const int saved = errno;
  long r = syscall(nr, a, b, c, d, e, f);
  if (r == -1) r = -errno;
  errno = saved;
  return r;
}

}  // namespace numa
}  // namespace tcmalloc
