// The layer's state, decided once by Init (numa/init.cc) from the kernel or
// from a stand-in for it that the unit tests build, and read by the numa.h
// functions (numa/numa.cc) and by placement (numa/placed_start.cc). Internal
// to those files and to the tests.
#ifndef NUMA_TCMALLOC_NUMA_STATE_H_
#define NUMA_TCMALLOC_NUMA_STATE_H_

#include <stdint.h>

#include "numa/mempolicy.h"
#include "numa/numa.h"
#include "numa/topology.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Zero-initialized (no constructor runs): before Init, and whenever Init
// decides against NUMA, `active` is false and every call answers "node 0".
struct State {
  bool active;
  bool fake;
  bool stats;
  BindPolicy policy;
  RemoteFree remote_free;
  Migration migration;
  uint64_t max_stranded_bytes;
  uint64_t stranded_after_ns;
  uint64_t interleave_above;
  int num_nodes;
  int cpu_nodes;               // with small-object lists (NumCpuNodes)
  uint64_t first_touch_nodes;  // FirstTouchNode
  uint64_t unbound_proxies;    // proxies mbind refused (NodeHoldsItsMemory)
  Refusals refused;
  bool witness;  // ReuseByWitness
  // kernel.numa_balancing moves pages (read at Init, for real topologies).
  bool kernel_balances;
  Cooperation balancing;
  bool metadata_stays_put;         // MetadataStaysPut
  BindCounters metadata_counters;  // MetadataBinds
  // MemsSource, CpusSource; arrays, not Lines: State needs no constructor.
  char mems_source[256];
  char cpus_source[256];
  BindCounters counters;
  // Decided at Init; BindRange hands them to DecideBinding. `caps` may lose
  // home_node later if the kernel refuses it (ApplyBinding).
  TaskPolicy task;
  KernelCaps caps;
  // The nodes Init found; with the layer off, the ones placement found
  // (StartPlacement), so that there is one discovery and one table.
  Topology topo;
  // Nodes: a dense numbering of the usable kernel nodes, CPU nodes first.
  uint8_t kernel_id[kMaxNodes];  // node -> kernel node id
  uint8_t node_of[kMaxNodes];    // kernel node id -> node (usable ones only)
  uint8_t cpu_node[kMaxCpus];    // CPU -> the node that serves it
  uint8_t default_node;
  uint8_t fallback_len[kMaxNodes];
  uint8_t fallback[kMaxNodes][kMaxNodes];  // by node, in nodes
};
extern State g_state;

// Placement's answer (StartPlacement), written once under its lock before
// internal::g_placement_started says so.
struct Placement {
  uint64_t nodes;  // kernel ids
  KernelCaps caps;
  bool tried;
  int error;  // PlacementError
};
extern Placement g_placement;

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

// Recomputes internal::g_small_objects' derived flags (strays, sized free by
// owner) after one of their inputs changed; placement starting is one.
void UpdateSmallObjects();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_STATE_H_
