// What the allocator built for small objects (numa/small_objects.h).
#include "numa/small_objects.h"

#include "numa/state.h"

namespace tcmalloc {
namespace numa {

internal::SmallObjects internal::g_small_objects = {1, false, false, false, 1};

void UpdateSmallObjects() {
  internal::SmallObjects& s = internal::g_small_objects;
  s.strays = s.nodes_with_central_lists > 1 && !s.node_classes;
  __atomic_store_n(&s.sized_free_by_owner, s.node_classes || PlacementStarted(),
                   __ATOMIC_RELAXED);
}

void SetNodesWithCentralLists(int n) {
  internal::g_small_objects.nodes_with_central_lists = n;
  __atomic_store_n(&internal::g_small_objects.lists_made, n == 1 ? 1 : 0,
                   __ATOMIC_RELEASE);
  UpdateSmallObjects();
}

void MarkNodeListsMade(int node) {
  __atomic_fetch_or(&internal::g_small_objects.lists_made, uint64_t{1} << node,
                    __ATOMIC_RELEASE);
}

void SetNodeClasses(bool on) {
  internal::g_small_objects.node_classes = on;
  UpdateSmallObjects();
}

}  // namespace numa
}  // namespace tcmalloc
