// Work a growing node leaves to another CPU node's own threads: releasing
// free pages (the stranded-memory bound) and retiring released address
// space. Done by the growing node, it walks the other heaps' free lists,
// spans and page-map entries remotely, a miss for nearly every line; asked
// of the owner, its own thread does it at its next refill from its heap,
// where all of it is local (NodeHeaps::BeforeGrowth and NewForList).
//
// Each node's asks lie on a page of its own (numa/node_pages.h). All reads
// and writes but OwnerHasChores's are made under the page heap lock.
#ifndef NUMA_TCMALLOC_NUMA_NODE_CHORES_H_
#define NUMA_TCMALLOC_NUMA_NODE_CHORES_H_

#include <stdint.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// What other nodes asked of one node's heap, in pages.
struct NodeChores {
  uint64_t release;  // free pages to release to the kernel
  uint64_t retire;   // released pages to give back to the node's region
  bool owner_wrote;  // set by the owner's first look (OwnerHasChores)
};

// Asks CPU node `node`'s threads to release `pages` of its free pages
// (replacing an earlier ask: each growth measures anew).
void AskToRelease(int node, uint64_t pages);
// Asks them to retire `pages` more of its released pages.
void AskToRetire(int node, uint64_t pages);

// Whether `node` has been asked for anything, asked by a thread of `node`;
// read without the lock, so only a hint. The first call writes the node's
// page, so that it lies on the owner's node, not on the first asker's.
bool OwnerHasChores(int node);
// Node `node`'s asks, which are then gone (taken by its own thread, or by
// the next growing node).
NodeChores TakeChores(int node);

// Puts each node's asks on a page of its own.
void PlaceChoresOnNodePages();
// Node `node`'s asks (tests ask where they lie).
const void* ChoresOf(int node);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_NODE_CHORES_H_
