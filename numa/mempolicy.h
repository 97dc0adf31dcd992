// Memory policies: which nodes the process may, and wants to, allocate from
// (the cpuset's mems_allowed, narrowed by the thread's own memory policy as
// set by `numactl --membind/--interleave/--preferred` or set_mempolicy(2)),
// and the one decision of which policy a range of heap memory gets.
//
// Why the task policy matters: the layer's mbind on each new range replaces
// the task policy for that range, so without this a process run under
// `numactl --membind=0,2` would get memory from nodes 1 or 3.
//
// Why the decision is a pure function (DecideBinding): the answer depends on
// four things (the task policy, TCMALLOC_NUMA_POLICY, the heap's node, what
// the kernel supports), and every combination must keep a membind set. One
// function lets the unit tests walk the whole matrix without a multi-node
// machine; bind.cc only applies its answer. Kernel behaviour and versions:
// docs/tuning.md, "Under a task memory policy".
#ifndef NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
#define NUMA_TCMALLOC_NUMA_MEMPOLICY_H_

#include <stdint.h>

#include "numa/config.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// The process's allowed memory nodes (cpuset) via
// get_mempolicy(MPOL_F_MEMS_ALLOWED). False if the kernel refused; then
// *err (if given) holds its errno.
bool QueryAllowedMems(uint64_t* allowed, int* err = nullptr);

// The calling thread's memory policy via get_mempolicy(flags 0): the mode
// (MPOL_DEFAULT, MPOL_BIND, ...; mode flags stripped, NormalizeTaskMode
// applied) and its nodes. False if the kernel refused; then *err (if given)
// holds its errno.
bool QueryTaskPolicy(int* mode, uint64_t* nodes, int* err = nullptr);

// True when `err` is a refusal of the call itself, not of its arguments:
// EPERM (a seccomp filter, as every container's default profile for the
// memory-policy calls), EACCES, or ENOSYS (a filter's other answer, or a
// kernel without NUMA). The layer then does without the call.
bool IsRefusal(int err);
// Its name for messages: "EPERM", "EACCES", "ENOSYS", else "refused".
const char* RefusalName(int err);

// The mode as the layer must read it. Kernels before 5.14 store "local
// allocation" (numactl --localalloc, set_mempolicy(MPOL_LOCAL)) as
// MPOL_PREFERRED with no node, and get_mempolicy reports it so; that is
// MPOL_LOCAL, not an explicit placement. `no_nodes`: the whole mask was empty.
int NormalizeTaskMode(int mode, bool no_nodes);

// Applies a task policy to the allowed nodes. MPOL_BIND narrows them to its
// nodes. MPOL_DEFAULT and MPOL_LOCAL change nothing. Any other mode
// (interleave, preferred, ...) is an explicit placement request that
// per-node heaps would defeat: in auto mode *stay_off is set; with
// TCMALLOC_NUMA=1 the request is overridden. Returns the allowed nodes.
uint64_t ApplyTaskPolicy(Mode mode, int policy, uint64_t policy_nodes,
                         uint64_t allowed, bool* stay_off);

// The thread policy Init found (get_mempolicy), normalised by
// NormalizeTaskMode: an MPOL_* mode without mode flags, and its nodes.
struct TaskPolicy {
  int mode;
  uint64_t nodes;
};

// What the running kernel offers beyond mbind(2). Probed once, at Init.
struct KernelCaps {
  // set_mempolicy_home_node(2), Linux 5.17: an MPOL_BIND range allocates from
  // its home node first, then the nearest nodes of its set. Without it the
  // kernel starts from the node of the CPU that faults the page in.
  bool home_node;
  // MPOL_WEIGHTED_INTERLEAVE, Linux 6.9: interleave by the weights in
  // /sys/kernel/mm/mempolicy/weighted_interleave/ (1 each unless set).
  bool weighted_interleave;
};

// Linux 6.9's mode number, absent from older headers.
inline constexpr int kMpolWeightedInterleave = 6;

// What to do to one range.
struct Binding {
  bool apply;      // false: no mbind; the range follows the task policy
  int mode;        // MPOL_PREFERRED or MPOL_BIND
  uint64_t nodes;  // the mbind nodemask; 0 means "bad node": refuse, EINVAL
  int home_node;   // >= 0: then set_mempolicy_home_node(range, home_node)
};

// The binding of a fresh range for `node`'s heap:
//  - kLocal: none, whatever the task policy (first touch inside it).
//  - task policy MPOL_BIND over S (numactl --membind): pages stay in S.
//      kPreferred: MPOL_BIND over S with home node `node` (node first, then
//        the nearest nodes of S); without home-node support, MPOL_BIND over S
//        alone (the faulting CPU's node first, then its nearest in S).
//      kBind: MPOL_BIND over {node}.
//    A node outside S (never asked by the heaps) gets S, without home node.
//  - any other task policy: MPOL_PREFERRED or MPOL_BIND over {node}; the
//    layer overrides interleave/preferred (it runs under them only with
//    TCMALLOC_NUMA=1), and the cpuset still bounds every fallback.
// `node` outside 0..kMaxNodes-1 yields nodes == 0.
Binding DecideBinding(TaskPolicy task, BindPolicy policy, int node,
                      KernelCaps caps);

// The binding of memory the program places itself (numa/placed.h), within
// `usable`, the kernel nodes placement may use (the cpuset and a membind set
// already applied):
//  - on kernel node `kernel_id` (>= 0): MPOL_BIND over {kernel_id}, strict,
//    whatever the task policy; nodes == 0 (refuse) if it is not usable.
//  - interleaved (kernel_id < 0): MPOL_WEIGHTED_INTERLEAVE over `usable` where
//    the kernel has it (its weights decide; equal unless set), else
//    MPOL_INTERLEAVE.
Binding DecidePlacedBinding(int kernel_id, uint64_t usable, KernelCaps caps);

// The binding of a fresh mapping of the allocator's own metadata (its
// SparseAlloc memory: log blocks, node pages, central lists, the class
// cache, page map leaves), placed by its first writer and meant to stay
// there: MPOL_BIND over `usable` (the kernel nodes the heaps may use, a
// membind set already applied), which allocates on the faulting CPU's node
// first as the default policy does, and which the kernel's NUMA balancing
// leaves alone (its scanner skips a range whose policy lacks
// MPOL_F_NUMA_BALANCING). Under a task policy other than default, local
// or bind (interleave, preferred: the layer runs under them only with
// TCMALLOC_NUMA=1) the metadata follows the task policy: no binding.
Binding DecideMetadataBinding(TaskPolicy task, uint64_t usable);

// True if the kernel knows MPOL_WEIGHTED_INTERLEAVE: a zero-length mbind,
// which checks the mode and changes nothing. If not, *err (if given) holds
// the errno: EINVAL (a kernel before 6.9), or a refusal of mbind itself.
bool ProbeWeightedInterleave(int* err = nullptr);

// 0 if the kernel lets the process mbind, else its errno: a zero-length
// mbind(MPOL_DEFAULT), which changes nothing.
int ProbeMbind();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_MEMPOLICY_H_
