// One set of central free lists per CPU node: each size class has a
// CentralFreeList (with its transfer-cache slots) per CPU node, which takes
// spans only from its node's page heap (numa/node_heaps.h), so every object
// in it is owned by that node. Static::central_cache() is indexed by node
// class (numa/node_class.h): with one CPU node it is vanilla's array; with
// several, each node's lists lie on pages its own threads wrote first, since
// they are what its refills and frees touch most (MakeCentralLists).
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
// vanilla's array `one_node` with one CPU node, else NumCpuNodes() sets of
// kClassSizesMax lists, each set on pages of its own, made only when its
// node's first thread cache is (MakeNodeLists): the thread that makes them
// is the first to write their pages, which then lie on its node. Falls back
// to `one_node` if the kernel refuses the memory. Records the count
// (SetNodesWithCentralLists). Requires the page heap lock.
ATTRIBUTE_VISIBILITY_HIDDEN CentralFreeList* MakeCentralLists(
    CentralFreeList* one_node);
// Makes CPU node `node`'s lists unless they are made (NodeListsMade,
// numa/numa.h): for a thread cache's node when the cache is set up for it,
// and for a node another node borrows objects from before any of its own
// threads ran (ThreadCacheNodes::Borrow). MakeNodeLists requires the page
// heap lock; EnsureNodeLists takes it when the lists are not made yet.
ATTRIBUTE_VISIBILITY_HIDDEN void MakeNodeLists(int node);
ATTRIBUTE_VISIBILITY_HIDDEN void EnsureNodeLists(int node);
// Every made node's lists' locks, for the fork handlers (called with the
// page heap lock held, so no node's lists are made meanwhile).
ATTRIBUTE_VISIBILITY_HIDDEN void LockCentralLists();
ATTRIBUTE_VISIBILITY_HIDDEN void UnlockCentralLists();

// True when `region`'s transfer cache may take the list `start` (n objects)
// as it is: every object belongs to `region`'s lists (always, when no stray
// can exist: StraysPossible), and, while the kernel balances NUMA memory
// (CooperatesWithBalancing), the list was freed on `region`'s node. Another
// node's frees then go back to their spans, so that a span whose objects all
// came back is checked for pages the kernel moved before it serves again
// (NodeHeaps::ReleaseBeforeReuse); from the transfer cache they would be
// handed straight to the owner's next allocation, remote.
ATTRIBUTE_VISIBILITY_HIDDEN bool TransferCacheTakes(int region, void* start,
                                                    int n);
// Brackets the linking of logged remote frees (numa/remote_free_log.h),
// which happens on the owner's node: TransferCacheTakes treats them as freed
// on another node, which they were.
ATTRIBUTE_VISIBILITY_HIDDEN void LinkingRemoteFrees(bool linking);

// Every list of `region`, all classes: a CPU node's, once made (for the
// idle-node drain and borrowing), or a placed region's (numa/region.h), whose
// lists must exist (PlacedLists). Returns the first of kClassSizesMax lists.
ATTRIBUTE_VISIBILITY_HIDDEN CentralFreeList* CentralListsOf(int region);

// --- Small objects of memory the program places (numa/placed.h). ---
//
// Each placed region (a named node, interleaved) has a central list per
// class, taking spans from the region's heap only (numa/node_heaps.h), and in
// front of each a small locked cache of objects, so that an object freed and
// allocated again does not send its span back to the heap each time. Thread
// caches never hold placed objects: the page map caches no class for them,
// so free() finds them on its slow path and pushes them here.

// Region id's lists, made on first use (kClassSizesMax of them, with their
// caches, from metadata); nullptr if there is no metadata left.
ATTRIBUTE_VISIBILITY_HIDDEN CentralFreeList* PlacedLists(int id);
// An object of class cl from region id's lists; nullptr when the region can
// serve none (its heap cannot grow, no metadata).
ATTRIBUTE_VISIBILITY_HIDDEN void* PopPlaced(int id, uint32_t cl);
// Takes back `object`, of class cl, of region id.
ATTRIBUTE_VISIBILITY_HIDDEN void PushPlaced(int id, uint32_t cl, void* object);
// Free objects of class cl in every placed region's caches and central
// lists, and in their transfer caches; the lists' overhead bytes.
ATTRIBUTE_VISIBILITY_HIDDEN size_t PlacedCentralLength(unsigned cl);
ATTRIBUTE_VISIBILITY_HIDDEN size_t PlacedTransferLength(unsigned cl);
ATTRIBUTE_VISIBILITY_HIDDEN size_t PlacedOverheadBytes(unsigned cl);
// Bytes of free objects in region id's caches and lists.
ATTRIBUTE_VISIBILITY_HIDDEN size_t PlacedFreeBytes(int id);
// Every placed list's and cache's lock, for the fork handlers (after the
// node lists').
ATTRIBUTE_VISIBILITY_HIDDEN void LockPlacedLists();
ATTRIBUTE_VISIBILITY_HIDDEN void UnlockPlacedLists();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_CENTRAL_LISTS_H_
