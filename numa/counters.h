// The layer's event counters, read as MallocExtension properties and in the
// stats text (numa/introspection.cc; docs/stats.md says what each counts).
// A row per CPU node, each written by its node's threads on a page of that
// node (numa/node_pages.h); a counter's value is the sum of the rows. Bumped
// on slow paths only, with relaxed atomics.
#ifndef NUMA_TCMALLOC_NUMA_COUNTERS_H_
#define NUMA_TCMALLOC_NUMA_COUNTERS_H_

#include <stdint.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

enum class Counter : int {
  kRemoteFreeObjects,
  kThreadMigrations,
  kFlushedObjects,
  kReroutedObjects,
  kIdleDrainedObjects,
  kBorrowedObjects,
  kReleasedForReuse,
  kWitnessedReturns,
  kMovedSpansChecked,
  kMovedSpansReleased,
  kMovedSpansKept,
  kInboxFullObjects,
  kRefillsMoved,
  kUnstrandings,
  kNumCounters,
};
void AddToCounter(Counter c, uint64_t n);
uint64_t CounterValue(Counter c);
// Puts each CPU node's counters on a page of its own (numa/node_pages.h):
// AddToCounter writes the row of the calling thread's node.
void PlaceCountersOnNodePages();
// Node `node`'s row of counters (tests ask where it lies).
const void* CountersOf(int node);
// Zeroes every row (Init, before any thread counts).
void ClearCounters();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_COUNTERS_H_
