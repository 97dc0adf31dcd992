// The start of placement: which kernel nodes memory the program places
// itself (numa/placed.h) may use, decided once, at the first placement call.
#include "numa/placed_start.h"

#include <errno.h>

#include "numa/leaf_lock.h"
#include "numa/mempolicy.h"
#include "numa/numa.h"
#include "numa/parse.h"
#include "numa/region.h"
#include "numa/state.h"

namespace tcmalloc {
namespace numa {

Placement g_placement;
bool internal::g_placement_started;

namespace {

// Taken by StartPlacement alone, once per process in practice.
LeafLock g_placement_lock;

// The placed regions' binder (numa/region.h, SetPlacedBinder).
bool BindPlaced(void* start, size_t len, int id) {
  if (g_state.fake) {
    // Fake nodes do not exist in the kernel: never bind to them.
    BumpCounter(&g_state.counters.skipped);
    return true;
  }
  const Binding b = DecidePlacedBinding(PlacedKernelId(id), g_placement.nodes,
                                        g_placement.caps);
  return ApplyBinding(start, len, b, &g_placement.caps, &g_state.counters);
}

// Placement's answer: 0, ENOMEM (no node) or EPERM (two nodes or more and no
// mbind: nothing would keep a placement).
int DecidePlacement() {
  g_placement.nodes =
      g_state.active ? g_state.topo.usable : DiscoverPlacementNodes();
  if (g_placement.nodes == 0) return ENOMEM;
  if (g_state.fake) return 0;
  int err = 0;
  g_placement.caps.weighted_interleave = ProbeWeightedInterleave(&err);
  if (IsRefusal(err)) {
    g_state.refused.mbind = err;
    if (PopCount(g_placement.nodes) >= 2) return EPERM;
  }
  return 0;
}

// TCMALLOC_NUMA_INTERLEAVE_ABOVE cannot interleave without mbind: said once,
// then blocks are placed as without it.
void DropInterleaveAbove() {
  if (g_state.interleave_above == 0) return;
  __atomic_store_n(&g_state.interleave_above, 0, __ATOMIC_RELAXED);
  Line()
      .Add(
          "tcmalloc: ignoring TCMALLOC_NUMA_INTERLEAVE_ABOVE: interleaving "
          "needs mbind, which the kernel refuses (")
      .Add(RefusalName(g_state.refused.mbind))
      .Add(
          ": a container's seccomp profile?); large blocks are placed as "
          "without it")
      .WriteToStderr();
}

}  // namespace

bool StartPlacement() {
  if (PlacementStarted()) return true;
  g_placement_lock.Lock();
  if (!g_placement.tried) {
    g_placement.error = DecidePlacement();
    __atomic_store_n(&g_placement.tried, true, __ATOMIC_RELEASE);
    if (g_placement.error == 0) {
      SetPlacedBinder(BindPlaced);
      __atomic_store_n(&internal::g_placement_started, true, __ATOMIC_RELEASE);
      UpdateSmallObjects();  // sized delete looks at addresses from now on
    } else if (g_placement.error == EPERM) {
      DropInterleaveAbove();
    }
  }
  const bool ok = g_placement.error == 0;
  g_placement_lock.Unlock();
  return ok;
}

int PlacementError() {
  return __atomic_load_n(&g_placement.tried, __ATOMIC_ACQUIRE)
             ? g_placement.error
             : 0;
}

uint64_t PlacementNodes() {
  return __atomic_load_n(&g_placement.tried, __ATOMIC_ACQUIRE)
             ? g_placement.nodes
             : 0;
}

uint64_t InterleaveAbove() {
  return __atomic_load_n(&g_state.interleave_above, __ATOMIC_RELAXED);
}

bool HasRegion(int id) {
  if (IsPlacedRegion(id)) return PlacementStarted();
  return g_state.active && id >= 0 && id < g_state.num_nodes;
}

}  // namespace numa
}  // namespace tcmalloc
