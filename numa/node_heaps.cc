// One page heap per NUMA node (numa/node_heaps.h): the heaps, which one
// serves and takes back page-level memory, and their stats. Upstream's build
// lists name this file alone: the rest of NodeHeaps, one concern a part, is
// included at its end, inside its namespace, with the includes here.
#include "numa/node_heaps.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <initializer_list>
#include <iterator>  // std::prev
#include <new>

#include "base/spinlock.h"
#include "base/static_storage.h"
#include "internal_logging.h"
#include "numa/balancing.h"
#include "numa/counters.h"
#include "numa/node_pages.h"
#include "numa/numa.h"
#include "numa/page_sample.h"
#include "numa/reuse_witness.h"
#include "numa/sized_metadata_allocator.h"
#include "numa/small_objects.h"
#include "numa/sparse_memory.h"
#include "numa/stranded_nodes.h"
#include "static_vars.h"
#include "system-alloc.h"

namespace tcmalloc {
namespace numa {
namespace {

// Heaps of regions 1.. (nodes 1..NumNodes()-1, then placed regions), made
// on first use; node 0's is Static::pageheap(). Written under the page heap
// lock, read without it.
PageHeap* g_heaps[kRegions];
// Set once a placed heap exists: sums and releases then visit them.
bool g_placed_heaps;
// The node heap where the next ReleaseAtLeastNPages over all nodes starts.
int g_release_next;

// Set while the calling thread fills another node's list on purpose
// (SetBorrowing), so NewForList does not take it for a thread that moved.
__attribute__((tls_model("initial-exec"))) thread_local bool t_borrowing =
    false;
#ifdef NUMA_TCMALLOC_TEST_HOOKS
// Called once a list's span is taken, before the mover check.
void (*g_after_span_for_test)() = nullptr;
#endif

// Whether the thread filling `region`'s list was moved there by the
// scheduler, not by borrowing, between the refill's look at its node and the
// writes that build the new span's free list: under first touch those writes
// place the span's pages (under THP=always the 2 MiB around them) where the
// thread runs.
bool FilledFromAnotherNode(int region) {
  return NodesWithCentralLists() > 1 && region < NodesWithCentralLists() &&
         !t_borrowing && ThisThreadsListNode() != region;
}

// Each node's region needs a page map leaf of its own (2 MiB in the
// two-level map), of which a heap writes only the entries of pages it uses.
// With the layer on, leaves come from SparseAlloc (under THP=always a leaf
// among other metadata would make its whole 2 MiB resident) and, being fresh
// mappings, are not cleared; nor, once memory is placed with the layer off,
// are leaves fresh from tcmalloc's own system allocator. Maps without the
// hook (the three-level map's leaves are small) clear as upstream does.
bool FreshMappingsAreZero() { return true; }
template <typename Map>
auto SkipClearingFreshLeaves(Map* map, bool (*zeroes)(), int)
    -> decltype(map->allocator_zeroes = nullptr, void()) {
  map->allocator_zeroes = zeroes;
}
template <typename Map>
void SkipClearingFreshLeaves(Map*, bool (*)(), long) {}

// True while tcmalloc's own system allocator serves: its memory is fresh and
// zero (a user's SysAllocator may hand out anything).
bool OwnAllocatorZeroes() {
  SpinLockHolder l(GetSysAllocLock());
  return TCMalloc_OwnSystemAllocator();
}

// True while Heap() makes a node heap: it shares the page map.
bool g_making_node_heap;

// A page map or cache of its own for a heap of no node, from metadata.
template <typename T, typename... Args>
T& MakeOwn(Args... args) {
  void* storage = MetaDataAlloc(sizeof(T));
  CHECK_CONDITION(storage != nullptr);
  return *new (storage) T(args...);
}

bool IsNodeHeap(const PageHeap* heap) {
  return heap == Static::pageheap() || g_making_node_heap;
}

// The shared page map, once made (a PageHeap::PageMap).
void* g_shared_page_map;

// The page map's class cache (PageMapCacheFor). With several nodes' lists it
// lies in fresh sparse memory that nobody clears at start, so that each page
// of entries is first written on the node whose threads use it (each node's
// regions map to entries of their own, numa/region.h). A zero entry is a
// miss for every address from 512 MiB up (kCacheZeroHitLimit), where all of
// the layer's memory lies; below it, it would read as class 0. So the page of
// entries for the lowest addresses is cleared at start, the whole cache
// before a heap takes memory below the limit (SystemAlloc), and a class-0
// hit in between is reported as an invalid free
// (ThreadCacheNodes::DeallocateSlow).
void* g_lazy_cache;  // a PageHeap::PageMapCache, while not yet cleared

}  // namespace

PageHeap::PageMap& NodeHeaps::PageMapFor(const PageHeap* heap) {
  if (!IsNodeHeap(heap)) return MakeOwn<PageHeap::PageMap>(MetaDataAlloc);
  // Trivial storage, constant-initialized: usable before any constructor.
  static StaticStorage<PageHeap::PageMap> storage;
  static bool made;
  if (!made) {
    storage.Construct(Active() ? SparseAlloc : MetaDataAlloc);
    if (Active()) {
      SkipClearingFreshLeaves(storage.get(), FreshMappingsAreZero, 0);
    }
    g_shared_page_map = storage.get();
    made = true;
  }
  return *storage.get();
}

PageHeap::PageMapCache& NodeHeaps::PageMapCacheFor(const PageHeap* heap) {
  if (!IsNodeHeap(heap)) return MakeOwn<PageHeap::PageMapCache>();
  using Cache = PageHeap::PageMapCache;
  static_assert(sizeof(Cache) == sizeof(uintptr_t) << Cache::kHashbits,
                "the class cache is its array of entries alone");
  static StaticStorage<Cache> storage;
  static Cache* cache;
  if (cache == nullptr && NodesWithCentralLists() > 1) {
    // Used without its constructor, which would write every entry here.
    void* entries = SparseAlloc(sizeof(Cache));
    if (entries != nullptr) {
      memset(entries, 0xff, 4096);  // the lowest addresses' entries
      g_lazy_cache = entries;
      cache = static_cast<Cache*>(entries);
    }
  }
  if (cache == nullptr) {
    storage.Construct();
    cache = storage.get();
  }
  return *cache;
}

int NodeHeaps::InitialRegion(const PageHeap* heap) {
  return heap == Static::pageheap() ? 0 : -1;
}

void* NodeHeaps::SystemAlloc(const PageHeap* heap, size_t bytes, size_t* actual,
                             size_t alignment) {
  const int region = heap->numa_region_;
  if (region >= 0 && HasRegion(region)) {
    SpinLockHolder l(GetSysAllocLock());
    if (TCMalloc_OwnSystemAllocator()) {
      void* result = GrowRegion(region, bytes, actual);
      if (result != nullptr) TCMalloc_SystemTaken += *actual;
      return result;
    }
    if (region != 0) return nullptr;
  }
  void* result = TCMalloc_SystemAlloc(bytes, actual, alignment);
  constexpr uintptr_t kCacheZeroHitLimit =
      uintptr_t{1} << (kPageShift + PageHeap::PageMapCache::kHashbits);
  if (g_lazy_cache != nullptr && result != nullptr &&
      reinterpret_cast<uintptr_t>(result) < kCacheZeroHitLimit) {
    static_cast<PageHeap::PageMapCache*>(g_lazy_cache)->Clear();
    g_lazy_cache = nullptr;
  }
  return result;
}

PageHeap* NodeHeaps::ExistingHeap(int region) {
  if (region == 0) return Static::pageheap();
  return __atomic_load_n(&g_heaps[region], __ATOMIC_ACQUIRE);
}

PageHeap* NodeHeaps::Heap(int region) {
  const bool placed = IsPlacedRegion(region);
  if (placed ? !PlacementStarted() : (region < 0 || region >= NumNodes())) {
    return nullptr;
  }
  PageHeap* heap = ExistingHeap(region);
  if (heap != nullptr) return heap;
  SpinLockHolder l(Static::pageheap_lock());
  heap = g_heaps[region];
  if (heap != nullptr) return heap;
  // About 12.5 KiB of metadata per heap; when there is none left, this node
  // cannot serve and the others do (New borrows, small objects borrow).
  void* storage = HeapStorage(sizeof(PageHeap));
  if (storage == nullptr) return nullptr;
  g_making_node_heap = true;
  heap = new (storage) PageHeap(Static::sizemap()->min_span_size_in_pages());
  g_making_node_heap = false;
  heap->numa_region_ = region;
  if (placed) {
    // Placed regions' leaves of the shared page map, like node regions'.
    if (!Active()) {
      SkipClearingFreshLeaves(
          static_cast<PageHeap::PageMap*>(g_shared_page_map),
          OwnAllocatorZeroes, 0);
    }
    __atomic_store_n(&g_placed_heaps, true, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&g_heaps[region], heap, __ATOMIC_RELEASE);
  return heap;
}

// The placed heaps that exist, for sums and releases: ids kFirstNamedRegion..
template <typename Fn>
static void ForEachPlacedHeap(Fn fn) {
  if (!__atomic_load_n(&g_placed_heaps, __ATOMIC_ACQUIRE)) return;
  for (int region = kFirstNamedRegion; region < kRegions; ++region) {
    if (PageHeap* h = NodeHeaps::ExistingHeap(region)) fn(h);
  }
}

// Every heap that exists but node 0's (Static::pageheap()): nodes
// 1..NumNodes()-1, then the placed ones, for sums over all of them.
template <typename Fn>
static void ForEachHeapAfterNode0(Fn fn) {
  for (int i = 1; i < NumNodes(); ++i) {
    if (PageHeap* h = NodeHeaps::ExistingHeap(i)) fn(h);
  }
  ForEachPlacedHeap(fn);
}

Span* NodeHeaps::NewPlaced(int region, Length n) {
  PageHeap* heap = Heap(region);
  Span* span = heap != nullptr ? heap->New(n) : nullptr;
  if (span == nullptr) errno = ENOMEM;
  return span;
}

// Span of n pages (aligned to align_pages if not 0) from `heap`, if any.
static Span* NewIn(PageHeap* heap, Length n, Length align_pages) {
  if (heap == nullptr) return nullptr;
  return align_pages != 0 ? heap->NewAligned(n, align_pages) : heap->New(n);
}

// A block of TCMALLOC_NUMA_INTERLEAVE_ABOVE or more, from the interleaved
// heap; nullptr when interleaving is off or cannot serve (the caller then
// serves it from a node's heap: the region code said why, once).
static Span* NewInterleaved(Length n, Length align_pages) {
  const uint64_t above = InterleaveAbove();
  if (above == 0 || (static_cast<uint64_t>(n) << kPageShift) < above ||
      !StartPlacement()) {
    return nullptr;
  }
  const int saved_errno = errno;
  Span* span = NewIn(NodeHeaps::Heap(kInterleavedRegion), n, align_pages);
  errno = saved_errno;
  return span;
}

Span* NodeHeaps::New(Length n) { return NewAligned(n, 0); }

Span* NodeHeaps::NewAligned(Length n, Length align_pages) {
  if (Span* span = NewInterleaved(n, align_pages)) return span;
  if (!Active()) return NewIn(Static::pageheap(), n, align_pages);
  const int node = CurrentNode();
  const int saved_errno = errno;  // a borrowed success leaves errno alone
  if (align_pages == 0 && StartsOnHugePage(n << kPageShift) &&
      FirstTouchNode(node)) {
    align_pages = kHugePageBytes >> kPageShift;
  }
  const uint64_t commits = CommitsOf(node);  // for NoteLargeHandOut
  Span* span = NewIn(Heap(node), n, align_pages);
  if (span != nullptr) NoteServe(node);
  if (span == nullptr) {
    int order[kMaxNodes];
    const int count = LendersOf(node, Borrowed::kPages, order);
    for (int i = 0; i < count && span == nullptr; ++i) {
      span = NewIn(Heap(order[i]), n, align_pages);
    }
  }
  errno = span != nullptr ? saved_errno : ENOMEM;
  if (span != nullptr && ReuseByWitness()) {
    NoteLargeHandOut(span, node, commits);
  }
  return span;
}

Span* NodeHeaps::NewForList(int region, Length n, uint32_t cl) {
  PageHeap* heap = Heap(region);
  if (heap == nullptr) return nullptr;
  Span* span = heap->NewWithSizeClass(n, cl);
  if (span == nullptr) return nullptr;
  NoteServe(region);
#ifdef NUMA_TCMALLOC_TEST_HOOKS
  if (g_after_span_for_test != nullptr) g_after_span_for_test();
#endif
  // Checked last, so that only the free list's own writes come after it.
  // The span is still unwritten: it goes back whole, and the refill is
  // served on the thread's new node (ThreadCacheNodes::Borrow).
  if (FilledFromAnotherNode(region)) {
    heap->Delete(span);
    AddToCounter(Counter::kRefillsMoved, 1);
    return nullptr;
  }
  if (CooperatesWithBalancing() && FirstTouchNode(region)) {
    ReleaseIfMoved(region, span);
  }
  return span;
}

void NodeHeaps::SetBorrowing(bool on) { t_borrowing = on; }

PageHeap* NodeHeaps::OwnerHeap(PageHeap* heap, const Span* span) {
  if (heap->numa_region_ < 0 || (!Active() && !PlacementStarted())) return heap;
  const Owner o = OwnerOf(static_cast<uintptr_t>(span->start) << kPageShift);
  PageHeap* owner;
  if (IsPlaced(o)) {
    owner = ExistingHeap(PlacedRegionOf(o));
  } else if (!Active()) {
    return heap->numa_region_ == 0 ? heap : Static::pageheap();
  } else {
    owner = ExistingHeap(o.node);
  }
  ASSERT(owner != nullptr);
  return owner;
}

Length NodeHeaps::ReleaseAtLeastNPages(PageHeap* heap, Length num_pages) {
  if (heap->numa_region_ < 0) return heap->ReleaseAtLeastNPages(num_pages);
  Length released = 0;
  if (!Active()) {
    released = heap->ReleaseAtLeastNPages(num_pages);
  } else {
    const int nodes = NumNodes();
    for (int i = 0; i < nodes && released < num_pages; ++i) {
      PageHeap* h = ExistingHeap(g_release_next);
      g_release_next = (g_release_next + 1) % nodes;
      if (h != nullptr) {
        released += h->ReleaseAtLeastNPages(num_pages - released);
      }
    }
  }
  ForEachPlacedHeap([&](PageHeap* h) {
    if (released < num_pages) {
      released += h->ReleaseAtLeastNPages(num_pages - released);
    }
  });
  return released;
}

// Adds one heap's stats to `sum`, field by field.
static void AddStats(const PageHeap::Stats& s, PageHeap::Stats* sum) {
  using S = PageHeap::Stats;
  for (uint64_t S::*f :
       {&S::system_bytes, &S::free_bytes, &S::unmapped_bytes,
        &S::committed_bytes, &S::scavenge_count, &S::commit_count,
        &S::total_commit_bytes, &S::decommit_count, &S::total_decommit_bytes,
        &S::reserve_count, &S::total_reserve_bytes}) {
    sum->*f += s.*f;
  }
}

PageHeap::Stats NodeHeaps::Stats(const PageHeap* heap) {
  if (heap->numa_region_ < 0 || (!Active() && !g_placed_heaps)) {
    return heap->stats_;
  }
  PageHeap::Stats sum = Static::pageheap()->stats_;
  ForEachHeapAfterNode0([&](PageHeap* h) { AddStats(h->stats_, &sum); });
  return sum;
}

#ifdef NUMA_TCMALLOC_TEST_HOOKS
void NodeHeaps::SetAfterSpanForTest(void (*hook)()) {
  g_after_span_for_test = hook;
}
#endif

bool NodeHeaps::HeapStats(int region, PageHeap::Stats* stats) {
  if (region < 0 || region >= kRegions ||
      (!IsPlacedRegion(region) && region >= NumNodes())) {
    return false;
  }
  const PageHeap* h = ExistingHeap(region);
  if (h == nullptr) return false;
  *stats = h->stats_;
  return true;
}

void NodeHeaps::GetSmallSpanStats(PageHeap::SmallSpanStats* result) {
  Static::pageheap()->GetSmallSpanStatsLocked(result);
  ForEachHeapAfterNode0([&](PageHeap* h) {
    PageHeap::SmallSpanStats other;
    h->GetSmallSpanStatsLocked(&other);
    for (int s = 0; s < kMaxPages; ++s) {
      result->normal_length[s] += other.normal_length[s];
      result->returned_length[s] += other.returned_length[s];
    }
  });
}

void NodeHeaps::GetLargeSpanStats(PageHeap::LargeSpanStats* result) {
  Static::pageheap()->GetLargeSpanStatsLocked(result);
  ForEachHeapAfterNode0([&](PageHeap* h) {
    PageHeap::LargeSpanStats other;
    h->GetLargeSpanStatsLocked(&other);
    result->spans += other.spans;
    result->normal_pages += other.normal_pages;
    result->returned_pages += other.returned_pages;
  });
}

#include "numa/node_heaps_metadata.cc"
#include "numa/node_heaps_reuse_checks.cc"
#include "numa/node_heaps_unstranding.cc"

}  // namespace numa

PageHeap::Stats PageHeap::StatsLocked() const {
  return numa::NodeHeaps::Stats(this);
}

}  // namespace tcmalloc
