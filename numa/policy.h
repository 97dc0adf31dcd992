// The decisions the NUMA layer makes for the allocator, as pure functions of
// plain inputs, so that the unit tests walk them without a heap; the glue
// carries out the answers. Which hook asks which: docs/design.md.
#ifndef NUMA_TCMALLOC_NUMA_POLICY_H_
#define NUMA_TCMALLOC_NUMA_POLICY_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/config.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// What a node borrows when it cannot serve a request.
enum class Borrowed : uint8_t {
  // Pages, from any other node's heap (memory-only nodes included); the
  // pages stay that node's.
  kPages,
  // Small objects, from another CPU node's central list. A span never moves
  // between nodes' lists: an object keeps the owner of its address.
  kObjects,
};

// The nodes to borrow `what` from, in `fallback` order (`len` entries), for
// kObjects only those below `cpu_nodes`. Returns how many it wrote.
int LenderOrder(Borrowed what, const uint8_t* fallback, int len, int cpu_nodes,
                int out[kMaxNodes]);

// Before `node`'s resident memory grows by `growth_pages`: how many pages the
// other nodes release together, towards keeping at most `bound_bytes` of free
// pages (TCMALLOC_NUMA_MAX_STRANDED_MB); free_bytes[i] is node i's. At most
// the growth: what the process holds stays level, and a node its threads
// left for a moment keeps what it does not have to give.
uint64_t PagesToUnstrand(int node, int nodes, const uint64_t free_bytes[],
                         uint64_t bound_bytes, int page_shift,
                         uint64_t growth_pages);

// Whether a heap now of `now_bytes`, that held at most `peak_bytes` (now
// included), passes a multiple of `interval` above that peak by growing
// `grow_bytes`: upstream's unmap-all before growth, measured from the peak
// as a node heap shrinks and regrows (docs/design.md, "Release").
bool GrowthPassesMark(uint64_t peak_bytes, uint64_t now_bytes,
                      uint64_t grow_bytes, uint64_t interval);

// Before `node`'s heap grows by `growth_pages`: how many released pages each
// other node gives back to its region (out[i]; 0 for `node`), lowest index
// first, each at most what it holds released, so that the heap's size follows
// what the process uses, not the sum of every node's peak.
void PlanRetirement(int node, int nodes, const uint64_t released_pages[],
                    uint64_t growth_pages, uint64_t out[]);

// True when a large block back in its node's heap, whose sampled pages lie
// `pages_on_node` on the node and `pages_elsewhere` on others, should be
// released before it serves again (first touch put its pages where its
// writers ran). At most 1 in 20 elsewhere is kept, so a node's own reuse loop
// faults nothing.
bool TooManyPagesElsewhere(int pages_on_node, int pages_elsewhere);

// A freed small-object span back in its heap while the kernel balances NUMA
// memory (numa/balancing.h), `pages_elsewhere` of its sample off the node.
enum class MovedSpan : uint8_t {
  kStays,    // its pages are home (or none was seen): reuse it as it is
  kRelease,  // they moved: release it, so its next writer faults it in here
  kKeep,     // they moved again after it was released for it: the program
             // uses this memory from another node; keep it where it is
};
MovedSpan DecideMovedSpan(int pages_elsewhere, bool released_before);

// Where move_pages is refused (container seccomp profiles), what the heap
// noted when it handed a block out and the fault counters stand in: only
// the pages it gained while out, brought in by faults, are in question.
struct ReuseWitness {
  uint64_t block_pages;
  uint64_t gained_pages;      // present now, absent when handed out
  uint64_t allocator_faults;  // page faults of the thread that took it, since
  uint64_t other_faults;      // page faults of every other thread, since
  uint64_t pages_per_fault;   // a huge page's under THP `always`, else 1
  // The taker ran on the block's node then, and still does (or last did).
  bool allocator_on_node;
  bool released_before;  // at its previous return: it came back empty
};
// True when the block must be released (TooManyPagesElsewhere's
// counterpart; docs/design.md, "Without move_pages"). Kept: a block that
// gained no page; one whose other threads faulted too little to place 1 in
// 20 of its pages; one its taker wrote, staying on the node and faulting 1-2x
// what it gained (under huge pages, which any thread faults in passing, only
// after a release at its previous return: this ends a busy process's
// release-refault cycle); one released then and taken from another node.
bool WitnessSaysRelease(const ReuseWitness& w);

// The x86-64 and arm64 (4 KiB pages) transparent huge page.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Whether a large block of `bytes` on a first-touch node starts on a huge
// page boundary: when its length is whole huge pages (docs/design.md, "Fresh
// memory"); other lengths stay packed as vanilla's, which upstream's
// TCMallocTest.LargeAllocsRelease relies on.
inline constexpr bool StartsOnHugePage(size_t bytes) {
  return bytes >= kHugePageBytes && bytes % kHugePageBytes == 0;
}

// Large blocks below this are not checked on their way back: rarely shared
// out, and the check would cost more than a few percent of writing them.
inline constexpr size_t kMinReuseCheckBytes = kHugePageBytes;

// Transfer-cache entries of CPU node `node`'s central list of a class, when
// `nodes` CPU nodes share vanilla's cap of `cap` entries: together they hold
// no more than vanilla's one list. A list of no CPU node (`node` >=
// kMaxNodes: placed memory's) gets none; the cache in front of it batches.
int TransferCacheShare(int cap, int nodes, int node);

// What a thread cache does when its thread moved from `old_node`.
enum class OnMigration : uint8_t {
  kStay,            // same node: nothing
  kSwitch,          // allocate from, and refill from, the new node's lists
  kSwitchAndFlush,  // and return the old node's objects to their lists now
};
// `sorted_by_owner`: the cache files objects under their owner's lists
// (TCMALLOC_NUMA_REMOTE_FREE=owner); a node-blind cache has nothing to flush.
OnMigration DecideMigration(int old_node, int new_node, Migration policy,
                            bool sorted_by_owner);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_POLICY_H_
