// One set of central free lists per CPU node, indexed by node class, and
// the placed regions' lists (docs/design.md, "Small objects"). A list sets
// another node's objects (strays) aside while it holds its lock and hands
// them to their owner's list after dropping it: no path holds two list locks.
#ifndef NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_
#define NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_

#include <stdint.h>

#include "central_freelist.h"
#include "internal_logging.h"
#include "numa/small_objects.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Initialises the central lists and returns them, indexed by node class:
// vanilla's array `one_node` with one CPU node (or if the kernel refuses the
// memory), else NumCpuNodes() sets of kClassSizesMax lists, each set on
// pages of its own, made by its node's first thread cache (MakeNodeLists),
// so that they lie on its node. Requires the page heap lock.
CentralFreeList* MakeCentralLists(CentralFreeList* one_node);
// Makes CPU node `node`'s lists unless they are made; MakeNodeLists under
// the page heap lock, EnsureNodeLists taking it.
void MakeNodeLists(int node);
void EnsureNodeLists(int node);
// For the fork handlers, under the page heap lock (no lists made meanwhile).
void LockCentralLists();
void UnlockCentralLists();

// True when `region`'s transfer cache may take the list `start` (n objects)
// as it is: every object belongs to `region`'s lists, and, while the kernel
// balances NUMA memory, the list was freed on `region`'s node. Another
// node's frees then go back to their spans, so that a span whose objects
// all came back is checked for pages the kernel moved before it serves
// again (NodeHeaps::ReleaseBeforeReuse).
bool TransferCacheTakes(int region, void* start, int n);
// Brackets the linking of logged remote frees, which happens on the owner's
// node: TransferCacheTakes treats them as freed on another node.
void LinkingRemoteFrees(bool linking);

// The first of kClassSizesMax lists of `region`: a CPU node's, or a placed
// region's (numa/region.h), whose lists must exist (PopPlaced makes them).
CentralFreeList* CentralListsOf(int region);

// --- Small objects of memory the program places (docs/design.md, "Memory
// the program places"): a central list per class and region, with a small
// locked cache in front; thread caches never hold them. ---

// An object of class cl from region id's lists, or nullptr.
void* PopPlaced(int id, uint32_t cl);
void PushPlaced(int id, uint32_t cl, void* object);
// Free objects of class cl in every placed region's caches and central
// lists, and in their transfer caches; the lists' overhead bytes.
size_t PlacedCentralLength(unsigned cl);
size_t PlacedTransferLength(unsigned cl);
size_t PlacedOverheadBytes(unsigned cl);
size_t PlacedFreeBytes(int id);
// For the fork handlers (after the node lists').
void LockPlacedLists();
void UnlockPlacedLists();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_
