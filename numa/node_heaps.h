// The glue between upstream's PageHeap, one per node and per placed region,
// and the layer's decisions (numa/policy.h). Why and how: docs/design.md,
// "Page heaps: one per node". A PageHeap made any other way (upstream's
// page_heap_test makes its own) is not a node heap and keeps to itself.
// Compiled only inside the patched gperftools tree (node_heaps.cc and the
// parts it includes).
#ifndef NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_
#define NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_

#include "common.h"
#include "page_heap.h"
#include "span.h"

namespace tcmalloc {
namespace numa {

// Hidden as a whole (on the definition: page_heap.h declares it first).
class ATTRIBUTE_VISIBILITY_HIDDEN NodeHeaps {
 public:
  // The page map and its cache of `heap`, which is being made: the node
  // heaps share one (the first call makes it); a heap of no node gets its
  // own, as in vanilla, so that it never sees another heap's spans.
  static PageHeap::PageMap& PageMapFor(const PageHeap* heap);
  static PageHeap::PageMapCache& PageMapCacheFor(const PageHeap* heap);

  // The region of `heap` as upstream's constructor makes it: 0 for node 0's
  // heap, else -1 (Heap() then sets a node heap's).
  static int InitialRegion(const PageHeap* heap);

  // TCMalloc_SystemAlloc for `heap`'s growth (GrowHeap): from its region
  // while it has one (HasRegion) and the system allocator is tcmalloc's own.
  // A SysAllocator of the user's serves node 0's heap alone: its memory's
  // owner cannot be told from its address, so other nodes get nullptr and
  // borrow. A heap of no region gets TCMalloc_SystemAlloc's memory.
  static void* SystemAlloc(const PageHeap* heap, size_t bytes, size_t* actual,
                           size_t alignment);

  // The heap of `region` (a node's, or a placed one once placement started),
  // made on first use; nullptr if it cannot be made (out of metadata memory:
  // a node then cannot serve, others do; a placed allocation fails).
  static PageHeap* Heap(int region);
  // The heap of `region` if it exists (nullptr), without making it.
  static PageHeap* ExistingHeap(int region);

  // A span of n pages from placed `region`'s heap, for a large placed block;
  // nullptr with errno ENOMEM when it can neither serve nor grow.
  static Span* NewPlaced(int region, Length n);

  // Page-level memory for the calling thread: from its node's heap, else
  // borrowed from the nearest nodes that can serve it (Borrowed::kPages);
  // nullptr with errno ENOMEM when no node can. Blocks of
  // TCMALLOC_NUMA_INTERLEAVE_ABOVE bytes or more come from the interleaved
  // heap, with or without the layer, when it can serve.
  static Span* New(Length n);  // NewAligned(n, 0)
  static Span* NewAligned(Length n, Length align_pages);

  // A span of n pages for `region`'s central list of class cl, from that
  // region's heap only; nullptr when that heap can neither serve nor grow,
  // or when the scheduler moved the calling thread to another CPU node
  // inside the refill (its writes would place the span's pages there; the
  // span goes back unwritten, tcmalloc.numa.refills_moved).
  static Span* NewForList(int region, Length n, uint32_t cl);
  // Marks the calling thread as filling another node's list on purpose (a
  // borrower, ThreadCacheNodes::Borrow) until called with false.
  static void SetBorrowing(bool on);

  // The heap that takes `span` back: its owner's (OwnerOf), placed memory's
  // always; `heap` itself when that is not a node heap, or for unplaced
  // memory while the layer is off.
  static PageHeap* OwnerHeap(PageHeap* heap, const Span* span);

  // Before large block `span` goes back to its heap (do_free_pages, without
  // the page heap lock): whether to release it before it serves again
  // (TooManyPagesElsewhere, or the reuse witness where move_pages is
  // refused). Only blocks of kMinReuseCheckBytes or more of FirstTouchNode
  // nodes; the verdict waits for the block's DeleteLocked on this thread.
  static void JudgeLargeReturn(const Span* span);
  // True when `span`, coming back to its owner `heap` (under the page heap
  // lock), is to be released: a large block as JudgeLargeReturn found, a
  // small-object span whose pages the kernel moved away (numa/balancing.h).
  static bool ReleaseBeforeReuse(const PageHeap* heap, const Span* span);

  // Before `heap`'s resident memory grows by `pages` (growth = true: its
  // heap grows; false: it recommits released pages): the other nodes release
  // their free pages beyond TCMALLOC_NUMA_MAX_STRANDED_MB and, on growth,
  // give released address space back to their regions, up to the growth.
  // Requires the page heap lock.
  static void BeforeGrowth(PageHeap* heap, Length pages, bool growth);

  // ReleaseAtLeastNPages over every node's heap, round robin, then the
  // placed heaps (`heap`'s alone when it is not a node heap). Requires the
  // page heap lock.
  static Length ReleaseAtLeastNPages(PageHeap* heap, Length num_pages);

  // Upstream's limit on unmapping every free page before a growth, measured
  // from the most `heap` ever held (GrowthPassesMark, numa/policy.h).
  // Requires the page heap lock.
  static bool GrowsPastMark(PageHeap* heap, uint64_t bytes, uint64_t interval);

  // `heap`'s stats, summed over every node's heap and every placed heap when
  // it is a node heap.
  static PageHeap::Stats Stats(const PageHeap* heap);
  // The stats of `region`'s heap (a node's, or a placed region's); false if
  // it has no heap yet.
  static bool HeapStats(int region, PageHeap::Stats* stats);

  // The free-span histograms of every node's and placed heap, summed.
  // Require the page heap lock.
  static void GetSmallSpanStats(PageHeap::SmallSpanStats* result);
  static void GetLargeSpanStats(PageHeap::LargeSpanStats* result);

  // Storage for the Span of pages from `start` (upstream's NewSpan and
  // DeleteSpan): with several nodes' lists, a CPU node's own store (first
  // touch), else upstream's allocator. Requires the page heap lock.
  static void* NewSpanStorage(PageID start);
  static void DeleteSpanStorage(Span* span);
  static int NodeSpansInUse();  // upstream's allocator counts the rest
  // Where CPU node `node`'s span store lies (tests look at its page).
  static const void* SpanStoreOfNode(int node);

#ifdef NUMA_TCMALLOC_TEST_HOOKS  // test builds only (tcmalloc_test_hooks)
  // Where node heaps 1.. get their memory, to see what happens when there is
  // none (nullptr: the usual place again).
  static void SetStorageForTest(void* (*alloc)(size_t));
  // Calls `hook` (nullptr: none) in NewForList between the heap's span and
  // its check of the thread's node, where the scheduler may move a thread.
  static void SetAfterSpanForTest(void (*hook)());
#endif

 private:
  static void* HeapStorage(size_t bytes);
  // `node`'s heap's commits so far, for the witness's hand-out notes
  // (kNoCommits: it has no heap yet, or the witness is not in use).
  static constexpr uint64_t kNoCommits = ~uint64_t{0};
  static uint64_t CommitsOf(int node);
  static void NoteLargeHandOut(const Span* span, int node, uint64_t commits);
  static void ReleaseIfMoved(int node, const Span* span);
  static bool RetireSpan(PageHeap* heap, Span* s);
  static Length RetireReleased(PageHeap* heap, Length num_pages);
};

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NODE_HEAPS_H_
