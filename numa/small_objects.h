// What the allocator built for small objects, and what that means for an
// object's list and its cached class. Set once during Init (but for the
// lists made) and read inline on the allocator's slow paths and in free()'s
// page map cache miss.
#ifndef NUMA_TCMALLOC_NUMA_SMALL_OBJECTS_H_
#define NUMA_TCMALLOC_NUMA_SMALL_OBJECTS_H_

#include <stdint.h>

#include "numa/node_class.h"
#include "numa/nodes.h"
#include "numa/numa.h"
#include "numa/owner.h"
#include "numa/placed_start.h"

namespace tcmalloc {
namespace numa {

namespace internal {
struct SmallObjects {
  int nodes_with_central_lists;
  bool node_classes;
  bool strays;  // several sets of lists, and caches that do not sort by owner
  bool sized_free_by_owner;  // node classes, or placed memory may exist
  uint64_t lists_made;       // bit n: node n's lists are made
};
NUMA_TCMALLOC_HIDDEN extern SmallObjects g_small_objects;
}  // namespace internal

// The CPU nodes whose central lists the allocator has built: 1 until it
// builds them per node. Introspection reads this, not NumCpuNodes(), so that
// it indexes only lists that exist.
NUMA_TCMALLOC_HIDDEN void SetNodesWithCentralLists(int n);
inline int NodesWithCentralLists() {
  return internal::g_small_objects.nodes_with_central_lists;
}

// The CPU node whose central lists serve the calling thread: its node, or
// node 0 with one set of lists.
inline int ThisThreadsListNode() {
  const int node = CurrentNode();
  return node < NodesWithCentralLists() ? node : 0;
}

// True once CPU node `node`'s central lists are made (by its first thread
// cache). Only paths that visit every node's lists need ask.
inline bool NodeListsMade(int node) {
  return (__atomic_load_n(&internal::g_small_objects.lists_made,
                          __ATOMIC_ACQUIRE) >>
          node) &
         1;
}
NUMA_TCMALLOC_HIDDEN void MarkNodeListsMade(int node);

// Node classes: the page map's class cache stores NodeClass(owner, class)
// and thread caches file objects under their owner's lists.
NUMA_TCMALLOC_HIDDEN void SetNodeClasses(bool on);
inline bool NodeClasses() { return internal::g_small_objects.node_classes; }

// True when an object can reach a central list other than its owner's:
// several sets of lists, and caches that do not sort by owner (or a thread
// without a cache that frees through the plain class).
inline bool StraysPossible() { return internal::g_small_objects.strays; }

// The region whose central lists take `object`: its owner's (numa/region.h),
// or node 0's when all nodes share one set of lists.
inline int ListRegionOf(const void* object) {
  if (NodesWithCentralLists() == 1 && !PlacementStarted()) return 0;
  const Owner o = OwnerOf(object);
  if (__builtin_expect(IsPlaced(o), 0)) return PlacedRegionOf(o);
  return NodesWithCentralLists() == 1 ? 0 : o.node;
}

// The value the page map caches for an object of class cl of node `node`'s
// lists: the node class with node classes, else the plain class.
inline uint32_t CachedClass(int node, uint32_t cl) {
  return NodeClasses() ? NodeClass(node, cl) : cl;
}

// The same for `object`, a node's memory (not placed memory, whose class is
// never cached).
inline uint32_t CachedClassOf(const void* object, uint32_t cl) {
  return NodeClasses() ? NodeClass(OwnerOf(object).node, cl) : cl;
}

// True when `cached`, the page map's cached value for `object`, is what
// Populate or free() would have written for it (Debug builds check).
inline bool CachedClassIs(uint32_t cached, const void* object, uint32_t cl) {
  return BaseClass(cached) == cl && cached == CachedClassOf(object, cl);
}

// True when a sized delete cannot trust the size alone and must look at the
// address (numa/sized_delete.h). A plain load, on every sized delete; set
// once (Init, the first placement), before any object it concerns exists.
inline bool SizedFreeNeedsOwner() {
  return internal::g_small_objects.sized_free_by_owner;
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_SMALL_OBJECTS_H_
