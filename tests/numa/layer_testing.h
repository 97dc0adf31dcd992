// The unit tests' way into the NUMA layer: Init from a fake sysfs tree and a
// chosen allowed-mems mask instead of the machine's, and resets. Built into
// the tests alone (//tests/numa:layer_testing), never into the allocator.
#ifndef NUMA_TCMALLOC_TESTS_NUMA_LAYER_TESTING_H_
#define NUMA_TCMALLOC_TESTS_NUMA_LAYER_TESTING_H_

#include <stdint.h>

#include "numa/nodes.h"

namespace tcmalloc {
namespace numa {

// Init, but reading topology under `sysfs_root` and taking `allowed` in
// place of get_mempolicy(MPOL_F_MEMS_ALLOWED) and `task_policy` (an MPOL_*
// mode; 0 is MPOL_DEFAULT) with `task_policy_nodes` in place of the thread's
// memory policy, and `home_node` in place of probing the kernel for
// set_mempolicy_home_node. Counters are reset.
void InitForTest(const char* sysfs_root, uint64_t allowed,
                 const char* (*getenv_fn)(const char*), int task_policy = 0,
                 uint64_t task_policy_nodes = 0, bool home_node = true);

// What a test's kernel answers and refuses, for InitWithKernelForTest.
struct FakeKernel {
  const char* sysfs_root;
  // Holds proc/self/{status,cgroup,mountinfo} and the cgroup2 mount point
  // mountinfo names (for "/sys/fs/cgroup": <proc_root>/sys/fs/cgroup).
  const char* proc_root;
  uint64_t allowed;         // get_mempolicy(MPOL_F_MEMS_ALLOWED)'s answer
  int get_mempolicy_errno;  // nonzero: refused (allowed unused)
  int mbind_errno;          // the mbind probe's answer
  int move_pages_errno;     // the move_pages probe's answer
  int task_policy;          // as in InitForTest
  uint64_t task_policy_nodes;
  bool home_node;
};

// Init against `k`: the refusal paths (files instead of get_mempolicy,
// cgroup cpusets, refused mbind and move_pages) without a seccomp filter.
void InitWithKernelForTest(const FakeKernel& k,
                           const char* (*getenv_fn)(const char*));

// Back to the state before any Init: inactive, counters zero.
void ResetForTest();

// BindRange calls a fake topology turned into no-ops (never mbind there).
uint64_t BindSkipped();
// errno of the latest refused bind (EINVAL, EPERM, ...), 0 if none.
int MbindLastErrno();

// Forgets that placement started (ResetForTest does too); the placed
// regions keep what they reserved.
void ResetPlacementForTest();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_TESTS_NUMA_LAYER_TESTING_H_
