// The layer's state, decided once by Init (numa/init.h) and read by the
// numa.h functions (numa/numa.cc) and by placement (numa/placed_start.cc).
// Internal to those files and to the tests' Init stand-ins.
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
  int cpu_nodes;  // with small-object lists (NumCpuNodes)
  // Nodes whose fresh memory `local` leaves to first touch: CPU nodes that
  // serve only their own CPUs (all CPU nodes when mbind is refused).
  uint64_t first_touch_nodes;
  // Proxies left to first touch because mbind is refused (NodeHoldsItsMemory).
  uint64_t unbound_proxies;
  Refusals refused;
  bool witness;  // ReuseByWitness
  // kernel.numa_balancing moves pages (read at Init, for real topologies).
  bool kernel_balances;
  Cooperation balancing;
  // The allocator's metadata mappings are bound where they are first written
  // (MetadataStaysPut), and those binds.
  bool metadata_stays_put;
  BindCounters metadata_counters;
  // MemsSource, CpusSource ("" for none). Plain arrays, not Lines: State
  // must need no constructor.
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

// Recomputes internal::g_small_objects' derived flags (strays, sized free by
// owner) after one of their inputs changed.
void UpdateSmallObjects();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_STATE_H_
