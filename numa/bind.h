// Binding fresh address ranges to a node with mbind(2), counted, never fatal.
#ifndef NUMA_TCMALLOC_NUMA_BIND_H_
#define NUMA_TCMALLOC_NUMA_BIND_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/numa.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Updated with relaxed atomics: they are statistics, read racily, and must
// cost no more than an uncontended add on the (rare) bind path.
struct BindCounters {
  uint64_t calls;     // bind requests that went to the kernel (or would have)
  uint64_t failures;  // of those, refused (by the kernel, or a bad node id)
  uint64_t skipped;   // requests a fake topology turned into no-ops
  int last_errno;     // errno of the latest failure, 0 if none
};

// mbind(start, len, MPOL_PREFERRED or MPOL_BIND, {node}). kLocal is a no-op
// returning true. Nodes outside 0..kMaxNodes-1 fail with EINVAL without a
// syscall. Counts in *c; returns false if refused. Flags are 0: the range is
// fresh, so there is nothing to move (no MPOL_MF_MOVE).
bool MbindRange(void* start, size_t len, int node, BindPolicy policy,
                BindCounters* c);

inline uint64_t LoadCounter(const uint64_t* v) {
  return __atomic_load_n(v, __ATOMIC_RELAXED);
}
inline void BumpCounter(uint64_t* v) {
  __atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_BIND_H_
