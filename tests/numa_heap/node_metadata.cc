#include "tests/numa_heap/node_metadata.h"

#include <sys/mman.h>

#include "central_freelist.h"
#include "common.h"
#include "numa/central_lists.h"
#include "numa/counters.h"
#include "numa/idle_nodes.h"
#include "numa/node_heaps.h"
#include "numa/numa.h"
#include "numa/remote_free_log.h"
#include "numa/small_objects.h"
#include "page_heap.h"
#include "static_vars.h"

namespace node_metadata {
namespace {

void AddPages(const void* begin, size_t size, std::set<uintptr_t>* out) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(begin) & ~(kOsPage - 1);
  const uintptr_t last =
      (reinterpret_cast<uintptr_t>(begin) + size - 1) & ~(kOsPage - 1);
  for (uintptr_t page = first; page <= last; page += kOsPage) {
    out->insert(page);
  }
}

// The class cache's entries: the cache is its array alone.
const uintptr_t* CacheEntries(size_t* count) {
  const auto& cache =
      tcmalloc::numa::NodeHeaps::PageMapCacheFor(tcmalloc::Static::pageheap());
  *count = sizeof(cache) / sizeof(uintptr_t);
  return reinterpret_cast<const uintptr_t*>(&cache);
}

}  // namespace

void AddMetadataPages(const std::vector<void*>& objects, MetadataPages* out) {
  using tcmalloc::CentralFreeList;
  using tcmalloc::Span;
  using tcmalloc::Static;
  for (void* object : objects) {
    const Span* span = Static::pageheap()->GetDescriptor(
        reinterpret_cast<uintptr_t>(object) >> kPageShift);
    if (span == nullptr) continue;
    AddPages(span, sizeof(*span), &out->spans);
    const int region = tcmalloc::numa::ListRegionOf(object);
    const CentralFreeList* list =
        &tcmalloc::numa::CentralListsOf(region)[span->sizeclass];
    AddPages(list, sizeof(*list), &out->lists);
    size_t entries;
    const uintptr_t* cache = CacheEntries(&entries);
    const uintptr_t page = reinterpret_cast<uintptr_t>(object) >> kPageShift;
    AddPages(&cache[page & (entries - 1)], sizeof(uintptr_t), &out->cache);
  }
}

std::vector<NamedPage> OwnStatePages(int node) {
  // Each fits in a line, so its first byte names its page.
  const auto page = [](const void* p) {
    return reinterpret_cast<uintptr_t>(p) & ~(kOsPage - 1);
  };
  return {
      {"inbox", page(&tcmalloc::numa::InboxOf(node))},
      {"refills", page(tcmalloc::numa::RefillCountOf(node))},
      {"counters", page(tcmalloc::numa::CountersOf(node))},
      {"span store", page(tcmalloc::numa::NodeHeaps::SpanStoreOfNode(node))}};
}

std::vector<NamedPage> PageHeapPages(int node) {
  std::set<uintptr_t> pages;
  const tcmalloc::PageHeap* heap = tcmalloc::numa::NodeHeaps::Heap(node);
  if (heap != nullptr) AddPages(heap, sizeof(*heap), &pages);
  std::vector<NamedPage> named;
  for (uintptr_t page : pages) named.push_back({"page heap", page});
  return named;
}

void AddOwnStatePages(int node, MetadataPages* out) {
  for (const NamedPage& p : OwnStatePages(node)) out->own.insert(p.page);
}

std::set<uintptr_t> AllListPages() {
  std::set<uintptr_t> pages;
  for (int node = 0; node < tcmalloc::numa::NodesWithCentralLists(); ++node) {
    AddPages(tcmalloc::numa::CentralListsOf(node),
             kClassSizesMax * sizeof(tcmalloc::CentralFreeList), &pages);
  }
  return pages;
}

std::set<uintptr_t> AllCachePages() {
  size_t entries;
  const uintptr_t* cache = CacheEntries(&entries);
  std::set<uintptr_t> pages;
  AddPages(cache, entries * sizeof(uintptr_t), &pages);
  return pages;
}

std::set<uintptr_t> ResidentPages(const std::set<uintptr_t>& pages) {
  std::set<uintptr_t> resident;
  for (uintptr_t page : pages) {
    unsigned char in_core = 0;
    if (mincore(reinterpret_cast<void*>(page), kOsPage, &in_core) == 0 &&
        (in_core & 1)) {
      resident.insert(page);
    }
  }
  return resident;
}

}  // namespace node_metadata
