// How Init decides the layer's state (numa/state.h): from the kernel, or from
// a stand-in for it that the unit tests build.
#ifndef NUMA_TCMALLOC_NUMA_INIT_H_
#define NUMA_TCMALLOC_NUMA_INIT_H_

#include <stdint.h>

#include "numa/config.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// What Init learns from the kernel (get_mempolicy, probes), or a test's
// stand-in.
struct KernelView {
  bool from_kernel;       // true: ask the kernel; false: use the fields
  uint64_t allowed;       // cpuset mems_allowed
  int policy;             // the thread's memory policy mode
  uint64_t policy_nodes;  // and its nodes
  bool home_node;         // set_mempolicy_home_node is available
  // Where /proc/self/{status,cgroup,mountinfo} and the cgroup2 mount are:
  // "" for the real ones, a fake tree in tests.
  const char* proc_root;
  // Tests: the errno get_mempolicy, mbind and move_pages are refused with.
  int get_mempolicy_errno;
  int mbind_errno;
  int move_pages_errno;
};

// The kernel itself.
inline constexpr KernelView kRealKernel = {true, 0, 0, 0, false, "", 0, 0, 0};

// Init's body: forgets any earlier state, then reads the knobs through
// `getenv_fn` and the topology under `sysfs_root` as `view` says.
void InitFrom(GetenvFn getenv_fn, const char* sysfs_root, KernelView view);

// The state before any Init: inactive, counters zero.
void ResetState();

// The kernel node ids placement may use with the layer off (StartPlacement),
// found as Init finds the layer's: the cpuset's memory nodes, narrowed by a
// membind task policy, that have memory (the topology goes to the table the
// layer would have used). 1 (node 0 alone) when the kernel has no NUMA
// support to ask, or refuses and no file says: a one-node machine places
// everything on node 0.
uint64_t DiscoverPlacementNodes();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_INIT_H_
