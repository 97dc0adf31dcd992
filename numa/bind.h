// Applying a Binding (numa/mempolicy.h) to an address range: mbind(2), then
// set_mempolicy_home_node(2) when asked. Counted, never fatal.
#ifndef NUMA_TCMALLOC_NUMA_BIND_H_
#define NUMA_TCMALLOC_NUMA_BIND_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/mempolicy.h"

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
  int home_node_refused;  // errno of a refused set_mempolicy_home_node
};

// Applies `b` to [start, start+len). !b.apply is a no-op returning true. An
// empty nodemask fails with EINVAL without a syscall. mbind flags are 0: the
// range is fresh (or PROT_NONE-reserved), so nothing needs moving. A refused
// home node is not a failure: the range already keeps to its nodes; `caps`
// then forgets home-node support so later ranges skip the call. Counts in *c;
// returns false if mbind was refused.
bool ApplyBinding(void* start, size_t len, const Binding& b, KernelCaps* caps,
                  BindCounters* c);

// True if the kernel has set_mempolicy_home_node (Linux 5.17): a zero-length
// call, which checks its arguments and changes nothing. `node` must be online.
// If not, *err (if given) holds the errno (ENOSYS: too old; EPERM: refused).
bool ProbeHomeNode(int node, int* err = nullptr);

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
