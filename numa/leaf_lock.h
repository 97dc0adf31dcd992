// The layer's one lock (docs/design.md, "Lock order"): a spin lock with no
// other lock taken inside it, held for a few instructions (no allocation, at
// most one syscall). Held longer once per process, by the start of
// placement, which reads files: so a waiter that has spun a while yields its
// CPU, as it does when the holder was preempted.
#ifndef NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_
#define NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_

#include <sys/syscall.h>

#include <atomic>

#include "numa/syscall.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

class LeafLock {
 public:
  void Lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins >= kSpinsBeforeYield) {
          RawSyscall(SYS_sched_yield);
          spins = 0;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  // Takes the lock if it is free; never waits.
  bool TryLock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void Unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 1000;
  std::atomic<bool> locked_{false};
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_
