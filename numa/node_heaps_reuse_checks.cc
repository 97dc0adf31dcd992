// NodeHeaps' reuse checks (numa/node_heaps.h): memory coming back to, or
// just taken from, a first-touch node's heap is released if its pages lie
// elsewhere (docs/design.md, "Fresh memory", "The kernel's NUMA balancing").
// A part of numa/node_heaps.cc, included inside its namespace.
namespace {

// Each CPU node's check of its small-object spans while the kernel balances
// (CooperatesWithBalancing), under the page heap lock. A page each: written
// on every span that passes, mostly by the node's own threads, so first
// touch puts each where it is used.
struct alignas(4096) NodeMovedSpanCheck {
  MovedSpanCheck check;
};
NodeMovedSpanCheck g_moved[kMaxNodes];

// True when small-object span `span` of first-touch `node`'s heap is to be
// released (MovedSpanCheck). Requires the page heap lock.
bool ReleaseMovedSpan(int node, const Span* span) {
  MovedSpanCheck& check = g_moved[node].check;
  if (!check.ShouldCheck()) return false;
  const uintptr_t start = static_cast<uintptr_t>(span->start) << kPageShift;
  const size_t bytes = static_cast<size_t>(span->length) << kPageShift;
  PageSample sample;
  if (!SamplePages(start, bytes, KernelId(node), &sample)) return false;
  AddToCounter(Counter::kMovedSpansChecked, 1);
  switch (check.Judge(start, sample.elsewhere, &g_released_spans)) {
    case MovedSpan::kStays:
      return false;
    case MovedSpan::kKeep:
      AddToCounter(Counter::kMovedSpansKept, 1);
      return false;
    case MovedSpan::kRelease:
      AddToCounter(Counter::kMovedSpansReleased, 1);
      return true;
  }
  return false;
}

}  // namespace

// Large blocks a thread takes from pages its heap kept between two that it
// looks at (NoteLargeHandOut).
inline constexpr unsigned kKeptHandOutsPerLook = 16;
static __attribute__((
    tls_model("initial-exec"))) thread_local unsigned t_kept_hand_outs = 0;

uint64_t NodeHeaps::CommitsOf(int node) {
  // Upstream's Stats, read without the lock: another thread's commit in
  // between only costs a look.
  const PageHeap* heap = ReuseByWitness() ? ExistingHeap(node) : nullptr;
  return heap != nullptr
             ? __atomic_load_n(&heap->stats_.commit_count, __ATOMIC_RELAXED)
             : kNoCommits;
}

// Notes a large block of a first-touch node as the calling thread (on
// `node`) takes it, for the witness. Of blocks seen whole and served without
// a commit, one in kKeptHandOutsPerLook is looked at (docs/design.md,
// "Without move_pages": a mincore on every large malloc costs its p99).
void NodeHeaps::NoteLargeHandOut(const Span* span, int node, uint64_t commits) {
  const uintptr_t start = static_cast<uintptr_t>(span->start) << kPageShift;
  const size_t bytes = static_cast<size_t>(span->length) << kPageShift;
  if (bytes < kMinReuseCheckBytes || !FirstTouchNode(OwnerOf(start).node)) {
    return;
  }
  if (commits != kNoCommits && commits == CommitsOf(node) &&
      SeenWhole(start, bytes) &&
      ++t_kept_hand_outs % kKeptHandOutsPerLook != 0) {
    return;
  }
  HandOut h;
  if (ObserveHandOut(start, bytes, node, &h)) NoteHandOut(h);
}

// Span, just taken for a central list of first-touch `node`, before any
// object in it is written: free pages of the heap that never served an
// object may lie on another node too, when the kernel moved a transparent
// huge page they share with objects another node read (a 2 MiB page moves
// whole). Released, they fault in where the list's thread writes them.
void NodeHeaps::ReleaseIfMoved(int node, const Span* span) {
  {
    SpinLockHolder l(Static::pageheap_lock());
    if (!ReleaseMovedSpan(node, span)) return;
  }
  TCMalloc_SystemRelease(reinterpret_cast<void*>(span->start << kPageShift),
                         static_cast<size_t>(span->length) << kPageShift);
}

// The large block the calling thread is freeing and JudgeLargeReturn found
// must be released, until its DeleteLocked takes the verdict.
static __attribute__((tls_model(
    "initial-exec"))) thread_local const Span* t_release_span = nullptr;

void NodeHeaps::JudgeLargeReturn(const Span* span) {
  if (!Active()) return;  // the layer never sets a verdict then
  t_release_span = nullptr;
  const uintptr_t start = static_cast<uintptr_t>(span->start) << kPageShift;
  const size_t bytes = static_cast<size_t>(span->length) << kPageShift;
  const Owner o = OwnerOf(start);
  // A bound node's pages are on it whoever wrote them, and the kernel's
  // balancing leaves them there.
  if (o.kind != MemoryKind::kNode || !FirstTouchNode(o.node) ||
      bytes < kMinReuseCheckBytes) {
    return;
  }
  if (ReuseByWitness()) {
    // Without move_pages: what was noted when the block went out.
    ReuseWitness w;
    if (TakeWitness(start, bytes, o.node, &w)) {
      AddToCounter(Counter::kWitnessedReturns, 1);
    }
    if (!WitnessSaysRelease(w)) return;
    NoteRelease(start);
  } else {
    PageSample sample;
    if (!SamplePages(start, bytes, KernelId(o.node), &sample) ||
        !TooManyPagesElsewhere(sample.on_node, sample.elsewhere)) {
      return;
    }
  }
  AddToCounter(Counter::kReleasedForReuse, 1);
  t_release_span = span;
}

bool NodeHeaps::ReleaseBeforeReuse(const PageHeap* heap, const Span* span) {
  if (heap->numa_region_ < 0 || !FirstTouchNode(heap->numa_region_)) {
    return false;
  }
  // Large blocks are handed whole to a program that may write them from
  // anywhere: judged before the lock (JudgeLargeReturn).
  if (span->sizeclass == 0) {
    const bool release = t_release_span == span;
    t_release_span = nullptr;
    return release;
  }
  // Small-object spans are written by their own node's threads: only the
  // kernel moves their pages.
  return CooperatesWithBalancing() &&
         ReleaseMovedSpan(heap->numa_region_, span);
}
