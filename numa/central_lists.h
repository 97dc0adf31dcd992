// One set of central free lists per CPU node: each size class has a
// CentralFreeList (with its transfer-cache slots) per CPU node, which takes
// spans only from its node's page heap (numa/node_heaps.h), so every object
// in it is owned by that node. Static::central_cache() is indexed by node
// class (numa/node_class.h): node 0's lists are vanilla's array, the others
// follow in metadata.
//
// An object can reach another node's list only when thread caches do not
// sort by owner (TCMALLOC_NUMA_REMOTE_FREE=local: a cache returns every
// object to its own node's list). The list then sets such strays aside while
// it holds its lock and hands them to their owner's list after dropping it,
// so no path holds two list locks; with node classes it need not look.
//
// Compiled only inside the patched gperftools tree, as
// src/numa/central_lists.cc.
#ifndef NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_
#define NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_

#include <stdint.h>

#include "central_freelist.h"
#include "internal_logging.h"

namespace tcmalloc {
namespace numa {

// Initialises the central lists and returns them, indexed by node class:
// vanilla's array `one_node` with one CPU node, else a metadata array of
// NumCpuNodes() sets (stops with a message, as vanilla's metadata
// allocators do, if there is no metadata memory left at Init). Records the
// count (SetNodesWithCentralLists).
ATTRIBUTE_VISIBILITY_HIDDEN CentralFreeList* MakeCentralLists(
    CentralFreeList* one_node);

// True when every object of the list `start` (N of them) belongs to
// `node`'s lists; always true when no stray can exist (StraysPossible).
ATTRIBUTE_VISIBILITY_HIDDEN bool BatchBelongsTo(int node, void* start, int n);

// Every list of `node`, all classes: for the fork handlers and the idle-node
// drain. Returns the first of kClassSizesMax lists.
ATTRIBUTE_VISIBILITY_HIDDEN CentralFreeList* CentralListsOf(int node);

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_
