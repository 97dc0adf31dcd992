// Which CPU nodes have gone idle (docs/design.md, "Small-object caches
// across nodes"): no thread has refilled its cache from their lists for a
// while, so an active node's refill path gives their transfer caches back.
#ifndef NUMA_TCMALLOC_NUMA_IDLE_NODES_H_
#define NUMA_TCMALLOC_NUMA_IDLE_NODES_H_

#include <stdint.h>

#include "numa/node_class.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

inline constexpr uint64_t kRefillsPerLook = 1024;
// A node counts as idle once kQuietLooks looks in a row found no refill of
// its own. One quiet look is not enough: a program whose threads come and go
// in rounds (mstress) leaves a node quiet between two rounds, and draining
// it then only makes its next round fetch everything again.
inline constexpr int kQuietLooks = 4;

// Counts a thread-cache refill from `node`'s lists. True on every
// kRefillsPerLook-th of them: time for TakeIdleNodes.
bool NoteRefill(int node);

// The CPU nodes below `cpu_nodes`, other than `self`, that made no refill
// in the last kQuietLooks looks (a node never refilled from too: other
// nodes' threads may have freed objects to it), as a bit mask; each idle
// spell is reported once. 0 while another thread is looking.
uint64_t TakeIdleNodes(int self, int cpu_nodes);

// Puts each node's refill count on a page of its own (numa/node_pages.h).
void PlaceRefillCountsOnNodePages();
// For tests: where node `node`'s refill count lies; forgetting all counts.
const uint64_t* RefillCountOf(int node);
void ResetIdleNodesForTest();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_IDLE_NODES_H_
