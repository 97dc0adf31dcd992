// The decisions the NUMA layer makes for the allocator, as pure functions of
// plain inputs (per-node figures, the topology's orders, the knobs). The
// allocator's glue gathers the inputs, asks one of these, and carries out
// the answer (numa/node_heaps.cc, numa/central_lists.cc,
// numa/thread_cache_nodes.cc); the unit tests walk the decisions without a
// heap. Which hook asks which: docs/design.md.
//
// Inside the gperftools tree this file lives at src/numa/policy.h.
#ifndef NUMA_TCMALLOC_NUMA_POLICY_H_
#define NUMA_TCMALLOC_NUMA_POLICY_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/config.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// --- Borrowing: where a node turns when it cannot serve a request. ---

enum class Borrowed : uint8_t {
  // Page-level memory (large objects, aligned blocks), when the node's heap
  // can neither serve the request nor grow: any other node's heap, memory-only
  // nodes included; that heap grows if it must. The pages stay that node's.
  kPages,
  // Small objects, when the node's central list can neither serve nor take a
  // span from its own heap: another CPU node's central list. A span never
  // moves between nodes' lists: an object keeps the owner of its address.
  kObjects,
};

// The nodes to borrow `what` from: `fallback` (the node's fallback order,
// nearest first, `len` entries), for kObjects only the nodes below
// `cpu_nodes` (the nodes with small-object lists). Returns how many it wrote.
int LenderOrder(Borrowed what, const uint8_t* fallback, int len, int cpu_nodes,
                int out[kMaxNodes]);

// --- Memory moves between nodes only through the kernel. ---

// Before `node`'s resident memory grows (its heap grows, or recommits
// released pages): how many pages the other nodes must release together so
// that they keep at most `bound_bytes` of free, unreleased pages
// (TCMALLOC_NUMA_MAX_STRANDED_MB). free_bytes[i] is node i's, for i below
// `nodes`. 0 when they are within the bound.
uint64_t PagesToUnstrand(int node, int nodes, const uint64_t free_bytes[],
                         uint64_t bound_bytes, int page_shift);

// Free pages of the other nodes beyond this line are released by those
// nodes' own threads at their next refill, when the growing node asks
// (numa/node_chores.h), up to kMaxAskedBytes beyond the bound.
inline uint64_t OwnReleaseLine(uint64_t bound_bytes) { return bound_bytes / 2; }

// How much a growing node may ask of the other CPU nodes' own threads
// instead of doing it (numa/node_chores.h): free pages beyond the stranded
// bound, and each node's retirement. More (a load that moved whole to
// another node) is done at once, so resident memory and the heap size lag
// the bound by at most this, and for at most one growth (what is asked and
// not done by the next growth is done by it).
inline constexpr uint64_t kMaxAskedBytes = uint64_t{16} << 20;

// Which of the other nodes release `pages` of their free pages together, and
// how many each (out[i]; 0 for `node` itself): nearest node index first, each
// at most what it holds free (free_bytes[i], rounded up to a page).
void PlanRelease(int node, int nodes, const uint64_t free_bytes[],
                 uint64_t pages, int page_shift, uint64_t out[]);

// Before `node`'s heap grows by `growth_pages`: how many pages of released
// address space each other node gives back to its region (out[i]; 0 for
// `node` itself), nearest node index first, until the growth is covered; a
// node gives at most what it holds released (released_pages[i]). So the heap's
// size follows what the process uses, not the sum of every node's peak.
void PlanRetirement(int node, int nodes, const uint64_t released_pages[],
                    uint64_t growth_pages, uint64_t out[]);

// A large block comes back to its node's heap, and a sample of its pages
// found `pages_on_node` on that node and `pages_elsewhere` on others: true
// when it should be released before it serves again (NodeHeaps::
// ReleaseBeforeReuse). Under first-touch placement a block's pages lie where
// its first writers ran (threads of several nodes, or one thread of another
// node). A block with at most 1 in 20 of its sampled pages elsewhere is kept
// as it is, so a node's own reuse loop faults nothing.
bool TooManyPagesElsewhere(int pages_on_node, int pages_elsewhere);

// A freed small-object span comes back to its heap while the kernel balances
// NUMA memory (numa/balancing.h), and a sample of its pages found
// `pages_elsewhere` on other nodes than the heap's.
enum class MovedSpan : uint8_t {
  kStays,    // its pages are home (or none was seen): reuse it as it is
  kRelease,  // they moved: release it, so its next writer faults it in here
  kKeep,     // they moved again after it was released for it: the program
             // uses this memory from another node; keep it where it is
};
MovedSpan DecideMovedSpan(int pages_elsewhere, bool released_before);

// Where move_pages is refused (every container's default seccomp profile),
// nobody can say where a returning block's pages are; what the heap noted
// when it handed the block out (numa/reuse_witness.h) and the kernel's
// fault counters stand in. Pages present when the block was handed out lay
// on its node (the invariant above), so only the pages it gained while out
// are in question, and only faults can have brought them in:
struct ReuseWitness {
  uint64_t block_pages;
  uint64_t gained_pages;      // present now, absent when handed out
  uint64_t allocator_faults;  // page faults of the thread that took it, since
  uint64_t other_faults;      // page faults of every other thread, since
  // The most pages one fault brings in: a huge page's under transparent
  // huge pages `always`, else 1.
  uint64_t pages_per_fault;
  // The thread that took the block ran on the block's node then, and still
  // does (or last did) now.
  bool allocator_on_node;
  // The block was released at its previous return (ReleasedSpans): it was
  // empty when taken, and its taker faulted it in.
  bool released_before;
};
// True when the block must be released (the counterpart of
// TooManyPagesElsewhere). Kept:
//  - a block that gained no page;
//  - a block whose other threads faulted too little to have placed more
//    than 1 in 20 of its pages (each fault counted as pages_per_fault);
//  - a block its taker wrote itself: it stayed on the node and took at
//    least as many faults as the gained pages needed, and at most twice
//    that. With one page per fault (no transparent huge pages) a thread's
//    incidental faults are few against a block's pages, and the other
//    threads must have faulted fewer than the block needed. With huge
//    pages a block needs a few faults, as many as a thread takes elsewhere
//    in passing, so this counts only for a block released at its previous
//    return (it came back empty). Either way it ends the release-refault
//    cycle of a busy process, whose other threads keep faulting.
// Released: a block taken by a thread of another node, or one whose gained
// pages none of the above accounts for. But a block released at its previous
// return and taken by a thread of another node again is kept: its takers are
// threads the scheduler moves between nodes, and each release would only
// fault back in wherever the next one runs (no ping-pong, as with moved
// spans).
bool WitnessSaysRelease(const ReuseWitness& w);

// The x86-64 and arm64 (4 KiB pages) transparent huge page.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Whether a large block of `bytes` on a first-touch node starts on a huge
// page boundary: when its length is a whole number of huge pages. Threads
// that each first-write an equal share of such a block (2 MiB multiples) then
// each fault whole huge pages of their own; a block off the boundary has
// every huge page straddle two shares, and whichever thread touches it first
// takes it all (measured: parallel share 0.50 instead of 1.00 on 4 nodes,
// 8 MiB). A block of another length straddles a huge page at one end
// wherever it starts, and aligning it would leave a hole behind it: a run of
// 3 MiB blocks would lie 4 MiB apart, where vanilla packs them (upstream's
// TCMallocTest.LargeAllocsRelease relies on that). google/tcmalloc places
// its large allocations on huge-page boundaries for page-table reasons.
inline constexpr bool StartsOnHugePage(size_t bytes) {
  return bytes >= kHugePageBytes && bytes % kHugePageBytes == 0;
}

// Large blocks below this are not checked on their way back. The check is one
// move_pages call (about 1.5 us for its 8 sampled pages), or without it the
// witness's few calls at both ends (ReuseWitness); writing a 2 MiB block
// takes some 100 us, so the check stays within a few percent of using the
// block. Smaller blocks are rarely shared out among nodes, and the pieces
// that aligning a block splits off (each under a huge page) are never checked.
inline constexpr size_t kMinReuseCheckBytes = kHugePageBytes;

// --- Small-object caches. ---

// Transfer-cache entries of one CPU node's central list of a class, when
// `nodes` CPU nodes share vanilla's cap of `cap` entries for the class: the
// first cap % nodes nodes get one more, so that together they hold no more
// than vanilla's one list. A list of no CPU node (`node` >= kMaxNodes: placed
// memory's, numa/central_lists.h) gets none: the cache in front of it
// batches instead, and a list without slots never takes another class's
// (whose lists are indexed by CPU node).
int TransferCacheShare(int cap, int nodes, int node);

// What a thread cache does when a slow path finds its thread on `new_node`
// after serving `old_node`.
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
