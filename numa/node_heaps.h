// One page heap per NUMA node: upstream's PageHeap, unchanged in how it keeps
// free spans, made once per node. The heaps share one lock, one page map and
// its cache (an address maps to one span whichever node owns it); each grows
// only from its node's region (numa/region.h). This file is the glue between
// those heaps and the layer's decisions (numa/policy.h): which heap serves a
// request, where a freed span goes, what moves between nodes when one grows.
//
// Node 0's heap is the one upstream makes (Static::pageheap()); the others
// are made from metadata the first time their node allocates, so a one-node
// process carries none. Memory the program places itself (a named node,
// interleaved: numa/placed.h) has heaps of the same kind, one per placed
// region (numa/region.h), made when first used, with or without the layer.
// A PageHeap made any other way (upstream's page_heap_test makes its own) is
// not a node heap and keeps to itself.
//
// Compiled only inside the patched gperftools tree, as src/numa/node_heaps.cc
// (which includes node_heaps_metadata.cc, _reuse_checks.cc, _unstranding.cc).
#ifndef NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_
#define NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_

#include "common.h"
#include "page_heap.h"
#include "span.h"

namespace tcmalloc {
namespace numa {

class NodeHeaps {
 public:
  // The page map and its cache of `heap`, which is being made: the node
  // heaps share one (the first call makes it); a heap of no node gets its
  // own, as in vanilla, so that it never sees another heap's spans.
  static PageHeap::PageMap& PageMapFor(const PageHeap* heap)
      ATTRIBUTE_VISIBILITY_HIDDEN;
  static PageHeap::PageMapCache& PageMapCacheFor(const PageHeap* heap)
      ATTRIBUTE_VISIBILITY_HIDDEN;

  // The region `heap` belongs to as upstream's constructor makes it: 0 for
  // node 0's heap (Static::pageheap()), else -1 (Heap() then sets a node
  // heap's id; a heap made any other way keeps -1).
  static int InitialRegion(const PageHeap* heap) ATTRIBUTE_VISIBILITY_HIDDEN;

  // TCMalloc_SystemAlloc for `heap`'s growth (GrowHeap): from its region
  // while it has one (HasRegion) and the system allocator is tcmalloc's own.
  // A SysAllocator of the user's serves node 0's heap alone: its memory's
  // owner cannot be told from its address, so other nodes get nullptr and
  // borrow. A heap of no region gets TCMalloc_SystemAlloc's memory.
  static void* SystemAlloc(const PageHeap* heap, size_t bytes, size_t* actual,
                           size_t alignment) ATTRIBUTE_VISIBILITY_HIDDEN;

  // The heap of `region` (a node's, or a placed one once placement started:
  // numa/region.h), made on first use; nullptr if it cannot be made (out of
  // metadata memory: a node then cannot serve, others do; a placed
  // allocation fails).
  static PageHeap* Heap(int region) ATTRIBUTE_VISIBILITY_HIDDEN;
  // The heap of `region` if it exists (nullptr), without making it.
  static PageHeap* ExistingHeap(int region) ATTRIBUTE_VISIBILITY_HIDDEN;

  // A span of n pages from placed `region`'s heap, for a large placed block;
  // nullptr with errno ENOMEM when it can neither serve nor grow.
  static Span* NewPlaced(int region, Length n) ATTRIBUTE_VISIBILITY_HIDDEN;

  // Page-level memory for the calling thread (large objects, sampled
  // objects, aligned blocks): from its node's heap, else borrowed from the
  // nearest nodes that can serve it (Borrowed::kPages). nullptr with errno
  // ENOMEM when no node can. Blocks of TCMALLOC_NUMA_INTERLEAVE_ABOVE bytes
  // or more come from the interleaved heap instead, with or without the
  // layer (from the thread's node's if that cannot serve).
  static Span* New(Length n) ATTRIBUTE_VISIBILITY_HIDDEN;
  static Span* NewAligned(Length n,
                          Length align_pages) ATTRIBUTE_VISIBILITY_HIDDEN;

  // A span of n pages for `region`'s central list of class cl, from that
  // region's heap only (a list's objects are always its region's); nullptr
  // when that heap can neither serve nor grow, or when the calling thread
  // now runs on another CPU node and is not borrowing (the scheduler moved
  // it inside the refill: its writes would place the span's pages there;
  // the span goes back unwritten, tcmalloc.numa.refills_moved).
  static Span* NewForList(int region, Length n,
                          uint32_t cl) ATTRIBUTE_VISIBILITY_HIDDEN;
  // Does what growing nodes asked of CPU node `node`'s heap
  // (numa/node_chores.h), if anything; the calling thread runs on `node`
  // (its refills and large blocks call it). Takes the page heap lock only
  // when asked; the first call writes the node's page of asks.
  static void DoChores(int node) ATTRIBUTE_VISIBILITY_HIDDEN;
  // Marks the calling thread as filling another node's list on purpose (a
  // borrower, ThreadCacheNodes::Borrow) until called with false.
  static void SetBorrowing(bool on) ATTRIBUTE_VISIBILITY_HIDDEN;

  // The heap that takes `span` back: its owner's (OwnerOf), placed memory's
  // always; `heap` itself when that is not a node heap, or for unplaced
  // memory while the layer is off.
  static PageHeap* OwnerHeap(PageHeap* heap,
                             const Span* span) ATTRIBUTE_VISIBILITY_HIDDEN;

  // Before large block `span` goes back to its heap (tcmalloc's
  // do_free_pages, without the page heap lock): whether it should be released
  // (decommitted) before it serves again. Fresh memory is placed where it is
  // first written, so a block's pages lie where its writers ran, not always
  // on its heap's node; a sample of them (one move_pages call) finds how many
  // lie elsewhere (policy.h, TooManyPagesElsewhere), or, where the kernel
  // refuses move_pages, what New noted when it handed the block out
  // (numa/reuse_witness.h, WitnessSaysRelease). Released, the block's next
  // writer on this node faults its pages in there. Only blocks of
  // kMinReuseCheckBytes or more, of nodes left to first touch
  // (FirstTouchNode), are checked. The verdict waits for the block's
  // DeleteLocked on this thread (ReleaseBeforeReuse).
  static void JudgeLargeReturn(const Span* span) ATTRIBUTE_VISIBILITY_HIDDEN;
  // True when `span`, coming back to its owner `heap` (under the page heap
  // lock), is to be released: a large block as JudgeLargeReturn found, a
  // small-object span whose pages the kernel moved away (numa/balancing.h).
  static bool ReleaseBeforeReuse(const PageHeap* heap,
                                 const Span* span) ATTRIBUTE_VISIBILITY_HIDDEN;

  // Before `heap`'s resident memory grows by `pages` (growth = true: its
  // heap grows; false: it recommits released pages): the other nodes release
  // their free pages beyond TCMALLOC_NUMA_MAX_STRANDED_MB (PagesToUnstrand),
  // and, on growth, give released address space back to their regions
  // (PlanRetirement). A CPU node is asked instead (numa/node_chores.h): to
  // release down to half the bound and to retire, which its own thread does
  // at its next refill from its heap, where the heap's lists are local; what
  // it has not done by the next growth is done by that growth. More than
  // kMaxAskedBytes beyond the bound or of retirement, and a memory-only
  // node's share, is done here at once. Requires the page heap lock.
  static void BeforeGrowth(PageHeap* heap, Length pages,
                           bool growth) ATTRIBUTE_VISIBILITY_HIDDEN;

  // ReleaseAtLeastNPages over every node's heap, round robin, then the
  // placed heaps (`heap`'s alone when it is not a node heap). Requires the
  // page heap lock.
  static Length ReleaseAtLeastNPages(PageHeap* heap, Length num_pages)
      ATTRIBUTE_VISIBILITY_HIDDEN;

  // `heap`'s stats, summed over every node's heap and every placed heap when
  // it is a node heap.
  static PageHeap::Stats Stats(const PageHeap* heap)
      ATTRIBUTE_VISIBILITY_HIDDEN;
  // The stats of `region`'s heap (a node's, or a placed region's); false if
  // it has no heap yet.
  static bool HeapStats(int region,
                        PageHeap::Stats* stats) ATTRIBUTE_VISIBILITY_HIDDEN;

  // The free-span histograms of every node's and placed heap, summed.
  // Require the page heap lock.
  static void GetSmallSpanStats(PageHeap::SmallSpanStats* result)
      ATTRIBUTE_VISIBILITY_HIDDEN;
  static void GetLargeSpanStats(PageHeap::LargeSpanStats* result)
      ATTRIBUTE_VISIBILITY_HIDDEN;

  // Storage for the Span of pages from `start` (upstream's NewSpan and
  // DeleteSpan). With several nodes' lists, a CPU node's spans come from
  // memory of its own, which its threads (who make, walk and update those
  // spans) write first, so it lies on their node; other spans, and every
  // span with one node, from upstream's allocator. Requires the page heap
  // lock, as upstream's allocator does.
  static void* NewSpanStorage(PageID start) ATTRIBUTE_VISIBILITY_HIDDEN;
  static void DeleteSpanStorage(Span* span) ATTRIBUTE_VISIBILITY_HIDDEN;
  // Spans in use from the nodes' storage (upstream's allocator counts the
  // rest).
  static int NodeSpansInUse() ATTRIBUTE_VISIBILITY_HIDDEN;
  // Where CPU node `node`'s span store lies (tests look at its page).
  static const void* SpanStoreOfNode(int node) ATTRIBUTE_VISIBILITY_HIDDEN;

#ifdef NUMA_TCMALLOC_TEST_HOOKS  // test builds only (tcmalloc_test_hooks)
  // Where node heaps 1.. get their memory: MetaDataAlloc, unless a test
  // installed a stand-in (nullptr: MetaDataAlloc again) to see what happens
  // when there is none (tests/numa_heap/node_heap_metadata_test.cc).
  static void SetStorageForTest(void* (*alloc)(size_t))
      ATTRIBUTE_VISIBILITY_HIDDEN;
  // Calls `hook` (nullptr: none) in NewForList between the heap's span and
  // its check of the thread's node, where the scheduler may move a thread
  // (tests/numa_heap/refill_moved_test.cc).
  static void SetAfterSpanForTest(void (*hook)()) ATTRIBUTE_VISIBILITY_HIDDEN;
#endif

 private:
  // Memory for node heaps 1.. (numa/node_heaps_metadata.cc).
  static void* HeapStorage(size_t bytes) ATTRIBUTE_VISIBILITY_HIDDEN;
  static Span* NewForThisThread(Length n,
                                Length align_pages) ATTRIBUTE_VISIBILITY_HIDDEN;
  // The reuse checks of numa/node_heaps_reuse_checks.cc.
  // `node`'s heap's commits so far, for the witness's hand-out notes
  // (kNoCommits: it has no heap yet, or the witness is not in use).
  static constexpr uint64_t kNoCommits = ~uint64_t{0};
  static uint64_t CommitsOf(int node) ATTRIBUTE_VISIBILITY_HIDDEN;
  static void NoteLargeHandOut(const Span* span, int node,
                               uint64_t commits) ATTRIBUTE_VISIBILITY_HIDDEN;
  static void ReleaseIfMoved(int node,
                             const Span* span) ATTRIBUTE_VISIBILITY_HIDDEN;
  // Takes what was asked of `heap`, CPU node `node`'s, and does it; false
  // when nothing was asked. Requires the page heap lock.
  static bool CarryOutChores(PageHeap* heap,
                             int node) ATTRIBUTE_VISIBILITY_HIDDEN;
  static void DoOwedChores(int node, int cpu_nodes) ATTRIBUTE_VISIBILITY_HIDDEN;
  static bool RetireSpan(PageHeap* heap, Span* s) ATTRIBUTE_VISIBILITY_HIDDEN;
  static Length RetireReleased(PageHeap* heap,
                               Length num_pages) ATTRIBUTE_VISIBILITY_HIDDEN;
};

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_
