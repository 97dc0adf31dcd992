// Where NodeHeaps' metadata lies (numa/node_heaps.h): node heaps 1.. and
// each CPU node's spans, on memory their own node's threads write first.
// A part of numa/node_heaps.cc, included inside its namespace.
namespace {

// Node heaps 1.. (about 12.5 KiB each: their free lists' heads, which every
// page allocation of the node walks). With the layer active, pages of their
// own without huge pages, first written by the heap's constructor on the
// thread that first needs the heap, for a CPU node one of its own, so the
// heap lies on its node (not beside other metadata, on the main thread's).
void* NodeHeapStorage(size_t bytes) {
  return Active() ? SparseAlloc(bytes) : MetaDataAlloc(bytes);
}

// Where node heaps 1.. come from (SetStorageForTest).
void* (*g_storage)(size_t) = NodeHeapStorage;

// Each CPU node's spans (NewSpanStorage): a store on a page of the node's
// own (numa/node_pages.h), set up by the node's first span, so first written
// by a thread of the node (its first refill grows its heap).
NodePages<SizedMetadataAllocator> g_span_stores;

// Node `node`'s store. Spans are made and freed under the page heap lock,
// so the first call places them all.
SizedMetadataAllocator& SpanStore(int node) {
  static bool placed = false;
  if (!placed) {
    g_span_stores.Place();
    placed = true;
  }
  return g_span_stores[node];
}

// The CPU node whose store keeps the span of pages from `start`, or -1 for
// upstream's allocator.
int SpanStoreOf(PageID start) {
  if (NodesWithCentralLists() == 1) return -1;
  const Owner o = OwnerOf(start << kPageShift);
  if (o.kind != MemoryKind::kNode || o.node >= NodesWithCentralLists()) {
    return -1;
  }
  return o.node;
}

}  // namespace

void* NodeHeaps::HeapStorage(size_t bytes) { return g_storage(bytes); }

void* NodeHeaps::NewSpanStorage(PageID start) {
  const int node = SpanStoreOf(start);
  if (node < 0) return Static::span_allocator()->New();
  SizedMetadataAllocator& store = SpanStore(node);
  if (!store.ready()) store.Init(sizeof(Span), alignof(Span));
  return store.New();
}

void NodeHeaps::DeleteSpanStorage(Span* span) {
  // A span keeps its owner for life: its pages stay in one node's region,
  // and coalescing never crosses regions.
  const int node = SpanStoreOf(span->start);
  if (node < 0) {
    Static::span_allocator()->Delete(span);
    return;
  }
#ifndef NDEBUG
  memset(static_cast<void*>(span), 0xAA, sizeof(*span));  // as upstream's
#endif
  SpanStore(node).Delete(span);
}

int NodeHeaps::NodeSpansInUse() {
  int n = 0;
  g_span_stores.ForEach(
      [&n](const SizedMetadataAllocator& store) { n += store.inuse(); });
  return n;
}

const void* NodeHeaps::SpanStoreOfNode(int node) {
  return &g_span_stores[node];  // placed once the layer made a span
}

#ifdef NUMA_TCMALLOC_TEST_HOOKS
void NodeHeaps::SetStorageForTest(void* (*alloc)(size_t)) {
  g_storage = alloc != nullptr ? alloc : NodeHeapStorage;
}
#endif
