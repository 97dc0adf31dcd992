// The layer's event counters, for introspection (MallocExtension
// properties, stats). A row per CPU node, each written by its node's threads
// (numa/node_pages.h); a counter's value is the sum of the rows.
//
// Inside the gperftools tree this file lives at src/numa/counters.h.
#ifndef NUMA_TCMALLOC_NUMA_COUNTERS_H_
#define NUMA_TCMALLOC_NUMA_COUNTERS_H_

#include <stdint.h>

#include "numa/nodes.h"

namespace tcmalloc {
namespace numa {

// Event counters, bumped on slow paths only (relaxed atomics).
enum class Counter : int {
  kRemoteFreeObjects,    // objects a thread cache returned to another node
  kThreadMigrations,     // thread caches that found their thread on a new node
  kFlushedObjects,       // objects returned by the flush migration policy
  kReroutedObjects,      // objects a central list handed on to their owner's
  kIdleDrainedObjects,   // objects idle nodes' transfer caches gave back
  kBorrowedObjects,      // objects a thread took from another node's list
  kReleasedForReuse,     // large blocks released on their way back to their
                         // heap, their pages lying on another node
  kWitnessedReturns,     // large blocks judged by ReuseWitness on their way
                         // back (move_pages refused)
  kMovedSpansChecked,    // small-object spans whose page nodes were sampled,
                         // coming back or going to a list
                         // (CooperatesWithBalancing)
  kMovedSpansReleased,   // of those, released: the kernel had moved pages away
  kMovedSpansKept,       // of those, kept: moved away again after a release
  kInboxFullObjects,     // remote frees the freeing thread linked in itself:
                         // their owner's inbox was full
  kRefillsMoved,         // refills whose thread the scheduler moved to another
                         // node before it wrote a new span: the span went
                         // back, and the thread's new node served it
  kUnstrandingByOwner,   // releases and retirements a growing node asked of
                         // another, done by that node's own thread
  kUnstrandingByGrower,  // done on another node's heap by a growing node
                         // (beyond the stranded bound, a memory-only node,
                         // an owner that had not done it by the next growth)
  kNumCounters,
};
NUMA_TCMALLOC_HIDDEN void AddToCounter(Counter c, uint64_t n);
NUMA_TCMALLOC_HIDDEN uint64_t CounterValue(Counter c);
// Puts each CPU node's counters on a page of its own (numa/node_pages.h):
// AddToCounter writes the row of the calling thread's node.
NUMA_TCMALLOC_HIDDEN void PlaceCountersOnNodePages();
// Node `node`'s row of counters (tests ask where it lies).
NUMA_TCMALLOC_HIDDEN const void* CountersOf(int node);
// Zeroes every row (Init, before any thread counts).
NUMA_TCMALLOC_HIDDEN void ClearCounters();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_COUNTERS_H_
