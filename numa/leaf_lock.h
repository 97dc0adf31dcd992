// A spin lock held for a few instructions (no allocation, at most one
// syscall), with no other lock taken inside it, so that a thread waiting for
// it is never waiting long. For the layer's leaf data: the remote-free logs'
// pools and shared logs, and the sparse metadata memory they carve from.
//
// Inside the gperftools tree this file lives at src/numa/leaf_lock.h.
#ifndef NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_
#define NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_

#include <atomic>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

class LeafLock {
 public:
  void Lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void Unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_LEAF_LOCK_H_
