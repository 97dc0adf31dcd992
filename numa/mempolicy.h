// Which memory nodes the process may, and wants to, allocate from: the
// cpuset's mems_allowed, narrowed by the thread's own memory policy (as set by
// `numactl --membind/--interleave/--preferred` or set_mempolicy(2)).
//
// Why the task policy matters: the layer's mbind on each new range overrides
// the task policy for that range, so without this check a process run under
// `numactl --membind=0` on a 2-node machine would get node-1 memory.
#ifndef NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
#define NUMA_TCMALLOC_NUMA_MEMPOLICY_H_

#include <stdint.h>

#include "numa/config.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// The process's allowed memory nodes (cpuset) via
// get_mempolicy(MPOL_F_MEMS_ALLOWED). False if the kernel refused.
bool QueryAllowedMems(uint64_t* allowed);

// The calling thread's memory policy via get_mempolicy(flags 0): the mode
// (MPOL_DEFAULT, MPOL_BIND, ...; mode flags stripped) and its nodes. False if
// the kernel refused.
bool QueryTaskPolicy(int* mode, uint64_t* nodes);

// Applies a task policy to the allowed nodes. MPOL_BIND narrows them to its
// nodes. MPOL_DEFAULT and MPOL_LOCAL change nothing. Any other mode
// (interleave, preferred, ...) is an explicit placement request that
// per-node heaps would defeat: in auto mode *stay_off is set; with
// TCMALLOC_NUMA=1 the request is overridden. Returns the allowed nodes.
uint64_t ApplyTaskPolicy(Mode mode, int policy, uint64_t policy_nodes,
                         uint64_t allowed, bool* stay_off);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
