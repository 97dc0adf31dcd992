// The start of placement (numa/placed.h): which nodes placed memory may use,
// decided at the first placement call, and the flag free() and sized delete
// read to know that placed memory may exist.
#ifndef NUMA_TCMALLOC_NUMA_PLACED_START_H_
#define NUMA_TCMALLOC_NUMA_PLACED_START_H_

#include <stdint.h>

#include "numa/nodes.h"
#include "numa/owner.h"
#include "numa/region.h"

namespace tcmalloc {
namespace numa {

namespace internal {
// Set once StartPlacement succeeded; never cleared but by tests.
NUMA_TCMALLOC_HIDDEN extern bool g_placement_started;
}  // namespace internal

// Starts placement: finds the kernel nodes the process may place memory on
// (the layer's usable nodes, or with the layer off the cpuset's memory
// nodes under a membind task policy), probes weighted interleave and gives
// the placed regions their binder. The first call decides. False if no node
// was found, or if there are two or more and the kernel refuses mbind:
// PlacementError() says which.
NUMA_TCMALLOC_HIDDEN bool StartPlacement();
// Why StartPlacement failed: ENOMEM (no node), EPERM (mbind refused); 0
// before it was tried or when it succeeded.
NUMA_TCMALLOC_HIDDEN int PlacementError();
// True once StartPlacement succeeded: placed memory may exist.
inline bool PlacementStarted() {
  return __atomic_load_n(&internal::g_placement_started, __ATOMIC_ACQUIRE);
}
// The kernel node ids placement may use, bit k for node k (0 before
// StartPlacement was tried; the nodes it found even if it failed for EPERM).
NUMA_TCMALLOC_HIDDEN uint64_t PlacementNodes();
// TCMALLOC_NUMA_INTERLEAVE_ABOVE in bytes; 0 when off.
NUMA_TCMALLOC_HIDDEN uint64_t InterleaveAbove();
// True when region `id` (numa/region.h) may grow: a node region while the
// layer is active, a placed region once placement started.
NUMA_TCMALLOC_HIDDEN bool HasRegion(int id);
// The region of placed memory owned as `o` (IsPlaced(o)).
inline int PlacedRegionOf(Owner o) {
  return o.kind == MemoryKind::kInterleaved ? kInterleavedRegion
                                            : NamedRegion(o.node);
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_PLACED_START_H_
