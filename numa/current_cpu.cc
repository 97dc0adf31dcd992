// getcpu(2) as a raw system call: only the getcpu benchmark uses it (the hot
// path reads rseq or the vDSO, numa/current_cpu.h).
#include "numa/current_cpu.h"

#include <sys/syscall.h>

#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {

int CpuFromSyscall() {
  unsigned cpu = 0;
  long r = RawSyscall(SYS_getcpu, reinterpret_cast<long>(&cpu), 0, 0);
  return r == 0 ? static_cast<int>(cpu) : -1;
}

}  // namespace numa
}  // namespace tcmalloc
