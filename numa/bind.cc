#include "numa/bind.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>

#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {

bool MbindRange(void* start, size_t len, int node, BindPolicy policy,
                BindCounters* c) {
  if (policy == BindPolicy::kLocal) return true;
  BumpCounter(&c->calls);
  long r = -EINVAL;
  if (node >= 0 && node < kMaxNodes) {
    unsigned long mask[kMaxNodes / (8 * sizeof(unsigned long))] = {};
    mask[node / (8 * sizeof(unsigned long))] = 1UL
                                               << (node % (8 * sizeof(long)));
    const long mode = policy == BindPolicy::kBind ? MPOL_BIND : MPOL_PREFERRED;
    // maxnode is one more than the bits in the mask: the kernel's get_nodes()
    // reads maxnode - 1 bits.
    r = RawSyscall(SYS_mbind, reinterpret_cast<long>(start),
                   static_cast<long>(len), mode, reinterpret_cast<long>(mask),
                   kMaxNodes + 1, 0);
  }
  if (r == 0) return true;
  BumpCounter(&c->failures);
  __atomic_store_n(&c->last_errno, static_cast<int>(-r), __ATOMIC_RELAXED);
  return false;
}

}  // namespace numa
}  // namespace tcmalloc
