// Which CPU the calling thread is on, as cheaply as glibc and the kernel allow
// (measured costs: docs/tuning.md): glibc's registered rseq area (glibc >=
// 2.35), a plain load; else sched_getcpu(), the vDSO's getcpu (no kernel
// entry on x86-64 and arm64); else -1, and callers use a default node.
#ifndef NUMA_TCMALLOC_NUMA_CURRENT_CPU_H_
#define NUMA_TCMALLOC_NUMA_CURRENT_CPU_H_

#include <sched.h>

#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#endif
#endif

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// The cpu_id glibc's rseq registration maintains, or -1 when glibc did not
// register rseq (glibc.pthread.rseq=0, another library owns rseq, a thread
// not yet registered) or this build lacks <sys/rseq.h>.
inline int CpuFromRseq() {
#if defined(RSEQ_SIG) && (defined(__x86_64__) || defined(__aarch64__))
  if (__rseq_size == 0) return -1;
  const struct rseq* area = reinterpret_cast<const struct rseq*>(
      static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset);
  // The kernel writes cpu_id on every return to this thread; the negative
  // values (as int) mean "uninitialized" / "registration failed".
  int cpu = static_cast<int>(__atomic_load_n(&area->cpu_id, __ATOMIC_RELAXED));
  return cpu >= 0 ? cpu : -1;
#else
  return -1;
#endif
}

// The calling thread's CPU, or -1 if it cannot be told.
inline int CurrentCpu() {
  int cpu = CpuFromRseq();
  return cpu >= 0 ? cpu : sched_getcpu();
}

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_CURRENT_CPU_H_
