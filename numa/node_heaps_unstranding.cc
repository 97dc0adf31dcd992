// NodeHeaps' unstranding (numa/node_heaps.h): before a node's heap grows,
// the free pages other nodes hold beyond the bound are released and their
// address space given back to their regions. A part of numa/node_heaps.cc,
// included inside its namespace.

// The most each region's heap held: its size only falls in RetireSpan, which
// notes it first (under the page heap lock).
static uint64_t g_peak_bytes[kRegions];

static void NotePeak(int region, uint64_t system_bytes) {
  if (region < 0 || region >= kRegions) return;
  if (system_bytes > g_peak_bytes[region]) g_peak_bytes[region] = system_bytes;
}

// Gives released span s of heap back to its node's region and forgets it.
// False if the region cannot take it (no hole left, not on kernel page
// boundaries); s is unchanged then.
bool NodeHeaps::RetireSpan(PageHeap* heap, Span* s) {
  ASSERT(s->location == Span::ON_RETURNED_FREELIST);
  const Length n = s->length;
  {
    SpinLockHolder l(GetSysAllocLock());  // the region's state, Taken
    if (!ShrinkRegion(heap->numa_region_,
                      reinterpret_cast<void*>(s->start << kPageShift),
                      static_cast<size_t>(n << kPageShift))) {
      return false;
    }
    TCMalloc_SystemTaken -= static_cast<size_t>(n << kPageShift);
  }
  heap->RemoveFromFreeList(s);
  NotePeak(heap->numa_region_, heap->stats_.system_bytes);
  heap->stats_.system_bytes -= n << kPageShift;
  // No span covers these pages now; one grown there later records itself.
  for (Length i = 0; i < n; i++) heap->pagemap_.set(s->start + i, nullptr);
  DeleteSpan(s);
  return true;
}

// Retires at least num_pages of heap's released spans if it has them,
// largest first (the fewest holes in the region per page given back).
Length NodeHeaps::RetireReleased(PageHeap* heap, Length num_pages) {
  Length retired = 0;
  SpanSet* set = &heap->large_returned_;
  SpanSetIter it = set->end();
  while (it != set->begin() && retired < num_pages) {
    SpanSetIter cur = std::prev(it);
    const Length len = cur->length;
    if (RetireSpan(heap, cur->span)) {
      retired += len;  // erased cur; `it` stays valid
    } else {
      it = cur;
    }
  }
  for (int i = kMaxPages - 1; i >= 0 && retired < num_pages; i--) {
    Span* list = &heap->free_[i].returned;
    for (Span* s = list->next; s != list && retired < num_pages;) {
      Span* next = s->next;
      const Length len = s->length;
      if (RetireSpan(heap, s)) retired += len;
      s = next;
    }
  }
  return retired;
}

// A vDSO clock read, no system call: BeforeGrowth runs under the page heap
// lock.
static uint64_t CoarseNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return uint64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void NodeHeaps::BeforeGrowth(PageHeap* heap, Length pages, bool growth) {
  const int node = heap->numa_region_;
  // Placed memory is the program's choice: no node gives memory up for it.
  if (node < 0 || IsPlacedRegion(node) || !Active()) return;
  ASSERT(Static::pageheap_lock()->IsHeld());
  const int nodes = NumNodes();
  const int cpu_nodes = NodesWithCentralLists();
  uint64_t free_bytes[kMaxNodes] = {};
  const uint64_t idle_ns = StrandedAfterNs();
  const uint64_t now = CoarseNowNs();
  NoteRegrowth(node, idle_ns, now);
  const uint64_t bound = MaxStrandedBytes();
  // A node is also stranded once the others grew by twice the bound since its
  // heap last served: a load that moves for good then costs at most that much
  // more than vanilla's footprint, however fast it faults memory in. Half of
  // it measured: short-lived threads refaulted at every thread.
  const uint64_t stranded =
      StrandedNodes(cpu_nodes, idle_ns, now, node,
                    static_cast<uint64_t>(pages) << kPageShift, 2 * bound);
  for (int i = 0; i < nodes; ++i) {
    // A CPU node whose threads served from its heap lately keeps its free
    // pages: they are about to be reused.
    if (i < cpu_nodes && (stranded >> i & 1) == 0) continue;
    if (const PageHeap* h = ExistingHeap(i)) {
      free_bytes[i] = h->stats_.free_bytes;
    }
  }
  const uint64_t unstrand =
      PagesToUnstrand(node, nodes, free_bytes, bound, kPageShift, pages);
  Length released = 0;
  for (int i = 0; i < nodes && released < unstrand; ++i) {
    if (i == node || free_bytes[i] == 0) continue;
    released += ExistingHeap(i)->ReleaseAtLeastNPages(unstrand - released);
    NoteUnstranded(i, now);
    AddToCounter(Counter::kUnstrandings, 1);
  }
  if (!growth) return;

  uint64_t released_pages[kMaxNodes] = {};
  for (int i = 0; i < nodes; ++i) {
    if (i == node || ExistingHeap(i) == nullptr) continue;
    released_pages[i] = ExistingHeap(i)->stats_.unmapped_bytes >> kPageShift;
  }
  // A node that gives back less than planned leaves the rest to the nodes
  // after it: plan again without the nodes already done.
  uint64_t left = pages >= PageHeap::kMinSystemAlloc
                      ? pages
                      : static_cast<uint64_t>(PageHeap::kMinSystemAlloc);
  uint64_t plan[kMaxNodes];
  for (int i = 0; i < nodes && left > 0; ++i) {
    PlanRetirement(node, nodes, released_pages, left, plan);
    if (plan[i] == 0) continue;
    const Length got = RetireReleased(ExistingHeap(i), plan[i]);
    AddToCounter(Counter::kUnstrandings, 1);
    left = got >= left ? 0 : left - got;
    released_pages[i] = 0;
  }
}

bool NodeHeaps::GrowsPastMark(PageHeap* heap, uint64_t bytes,
                              uint64_t interval) {
  const uint64_t now = heap->stats_.system_bytes;
  const int region = heap->numa_region_;
  if (region < 0 || region >= kRegions) {
    return GrowthPassesMark(now, now, bytes, interval);  // it never shrinks
  }
  NotePeak(region, now);
  return GrowthPassesMark(g_peak_bytes[region], now, bytes, interval);
}
