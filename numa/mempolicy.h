// Memory policies: which nodes the process may use (its cpuset, narrowed by
// a task policy) and which policy a range of heap memory gets. Why:
// docs/design.md, "Binding". The decisions are pure functions so that the
// unit tests walk every combination without a multi-node machine;
// ApplyBinding carries them out.
#ifndef NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
#define NUMA_TCMALLOC_NUMA_MEMPOLICY_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/config.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// get_mempolicy(MPOL_F_MEMS_ALLOWED): the cpuset's memory nodes. False if the
// kernel refused; then *err (if given) holds its errno.
bool QueryAllowedMems(uint64_t* allowed, int* err = nullptr);

// get_mempolicy(flags 0): the calling thread's mode (flags stripped,
// NormalizeTaskMode applied) and nodes. False, *err set, if refused.
bool QueryTaskPolicy(int* mode, uint64_t* nodes, int* err = nullptr);

// True when `err` refuses the call itself, not its arguments: EPERM (a
// container's default seccomp profile), EACCES, or ENOSYS (a filter, or a
// kernel without NUMA). The layer then does without the call.
bool IsRefusal(int err);
// Its name for messages: "EPERM", "EACCES", "ENOSYS", else "refused".
const char* RefusalName(int err);

// Kernels before 5.14 report MPOL_LOCAL as MPOL_PREFERRED with no node
// (`no_nodes`: the whole mask was empty); that is MPOL_LOCAL, not a placement.
int NormalizeTaskMode(int mode, bool no_nodes);

// The allowed nodes under a task policy: MPOL_BIND narrows them; default and
// local change nothing. Any other mode is a placement request per-node heaps
// would defeat: in auto mode *stay_off is set; TCMALLOC_NUMA=1 overrides it.
uint64_t ApplyTaskPolicy(Mode mode, int policy, uint64_t policy_nodes,
                         uint64_t allowed, bool* stay_off);

// The thread policy Init found (QueryTaskPolicy).
struct TaskPolicy {
  int mode;
  uint64_t nodes;
};

// What the running kernel offers beyond mbind(2), probed at Init.
struct KernelCaps {
  // set_mempolicy_home_node(2), Linux 5.17: an MPOL_BIND range allocates from
  // its home node first, not from the faulting CPU's node.
  bool home_node;
  // MPOL_WEIGHTED_INTERLEAVE, Linux 6.9: interleave by the sysfs weights.
  bool weighted_interleave;
};

// MPOL_WEIGHTED_INTERLEAVE, absent from older headers.
inline constexpr int kMpolWeightedInterleave = 6;

// What to do to one range.
struct Binding {
  bool apply;      // false: no mbind; the range follows the task policy
  int mode;        // MPOL_PREFERRED or MPOL_BIND
  uint64_t nodes;  // the mbind nodemask; 0 means "bad node": refuse, EINVAL
  int home_node;   // >= 0: then set_mempolicy_home_node(range, home_node)
};

// The binding of a fresh range for `node`'s heap. kLocal: none. Else
// MPOL_PREFERRED (kPreferred) or MPOL_BIND (kBind) over {node}, but under a
// task MPOL_BIND over S (numactl --membind), where MPOL_PREFERRED would fall
// back outside S, every binding is an MPOL_BIND inside S: kPreferred is S
// with home node `node` (S alone without home-node support), and a node
// outside S gets S. The table: docs/deployment.md, "Under numactl: task
// memory policies". `node` outside 0..kMaxNodes-1 yields nodes == 0.
Binding DecideBinding(TaskPolicy task, BindPolicy policy, int node,
                      KernelCaps caps);

// The binding of memory the program places itself (numa/placed.h), within
// `usable` (the kernel nodes placement may use):
//  - on kernel node `kernel_id` (>= 0): MPOL_BIND over {kernel_id} whatever
//    the task policy; nodes == 0 (refuse) if it is not usable.
//  - interleaved (kernel_id < 0): MPOL_WEIGHTED_INTERLEAVE over `usable` where
//    the kernel has it, else MPOL_INTERLEAVE.
Binding DecidePlacedBinding(int kernel_id, uint64_t usable, KernelCaps caps);

// The binding of a fresh mapping of the allocator's own metadata, meant to
// stay with its first writer: MPOL_BIND over `usable` (or the membind set),
// which still allocates on the faulting CPU's node first and which the
// balancing scanner skips (no MPOL_F_NUMA_BALANCING). Under interleave or
// preferred task policies (TCMALLOC_NUMA=1): none, the task policy places it.
Binding DecideMetadataBinding(TaskPolicy task, uint64_t usable);

// True if the kernel knows MPOL_WEIGHTED_INTERLEAVE (a zero-length mbind,
// which changes nothing); else *err (if given) holds the errno: EINVAL
// before Linux 6.9, or a refusal of mbind itself.
bool ProbeWeightedInterleave(int* err = nullptr);

// 0 if the kernel lets the process mbind (a zero-length mbind), else errno.
int ProbeMbind();

// Updated with relaxed atomics: they are statistics, read racily, and must
// cost no more than an uncontended add on the (rare) bind path.
struct BindCounters {
  uint64_t calls;     // bind requests that went to the kernel (or would have)
  uint64_t failures;  // of those, refused (by the kernel, or a bad node id)
  uint64_t skipped;   // requests a fake topology turned into no-ops
  int last_errno;     // errno of the latest failure, 0 if none
  int home_node_refused;  // errno of a refused set_mempolicy_home_node
};

// Applies `b` to [start, start+len): mbind(2) with flags 0 (the range is
// fresh: nothing to move), then set_mempolicy_home_node(2) when asked. An
// empty nodemask fails with EINVAL without a syscall. A refused home node is
// not a failure (the range keeps to its nodes): `caps` forgets home-node
// support. Counts in *c; false if mbind was refused.
bool ApplyBinding(void* start, size_t len, const Binding& b, KernelCaps* caps,
                  BindCounters* c);

// True if the kernel has set_mempolicy_home_node (a zero-length call, which
// changes nothing). `node` must be online. If not, *err (if given) holds the
// errno (ENOSYS: too old; EPERM: refused).
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

#endif  // NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
