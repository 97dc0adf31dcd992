// Where each CPU node's allocator metadata lies, in a lab guest
// (tests/numa_heap/small_lab_run). One thread per CPU node, pinned, in turn
// allocates small objects of several sizes and keeps them; the kernel is
// then asked (move_pages, which moves nothing) where the pages of their
// spans, of the central lists that take them back and of the page map's
// class cache entries their frees read are, and where the node's own state
// is (its page heap, its inbox of remote frees, refill count, event
// counters and growth asks: each thread starts on another node and moves,
// which its node counts). Run it with the main thread on the first CPU node
// (taskset): it writes the cache's first page, which holds that node's first
// entries, at start. Linked statically with the patched allocator, whose
// internals it reads; TCMALLOC_NUMA=0 makes it vanilla's layout (the control).
//
//   node_metadata_probe
// prints "node N: spans A of B pages on node N, lists C of D, cache E of F",
// then "spans: share S (A of B pages)", likewise "lists:", "cache:" and
// "own:", "metadata: share S (A of B pages)" (spans, lists and cache; S in
// %), for a node whose own state is not all on it a line per page ("node N:
// own inbox page 0x... on node M"), and
// "node_metadata: OK";
// exit 1 when something could not be measured.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <set>
#include <thread>
#include <vector>

#include "numa/numa.h"
#include "numa/small_objects.h"
#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/node_metadata.h"
#include "tests/numa_heap/page_nodes.h"

namespace {

constexpr size_t kSizes[] = {16, 64, 256, 1024, 4096, 16384, 65536};
constexpr int kPerSize = 256;

struct Tally {
  long on_node = 0;
  long pages = 0;
  void Add(const Tally& t) {
    on_node += t.on_node;
    pages += t.pages;
  }
};

// How many of `pages` the kernel holds on `node`; false if it cannot say.
bool CountOnNode(const std::set<uintptr_t>& pages, int node, Tally* out) {
  std::vector<void*> list;
  for (uintptr_t page : pages) list.push_back(reinterpret_cast<void*>(page));
  std::vector<int> nodes;
  if (!region_lab::PageNodes(list, &nodes)) return false;
  for (int n : nodes) out->on_node += n == node;
  out->pages += static_cast<long>(list.size());
  return true;
}

// Where each page of a node's own state is (move_pages: < 0 for a page no
// one wrote), for a node whose own state is not all on it.
void PrintOwnPages(int node,
                   const std::vector<node_metadata::NamedPage>& own_pages) {
  std::vector<void*> list;
  for (const auto& p : own_pages)
    list.push_back(reinterpret_cast<void*>(p.page));
  std::vector<int> where;
  if (!region_lab::PageNodes(list, &where)) return;
  for (size_t i = 0; i < own_pages.size(); ++i) {
    printf("node %d: own %s page 0x%lx on node %d\n", node, own_pages[i].what,
           static_cast<unsigned long>(own_pages[i].page), where[i]);
  }
}

void PrintShare(const char* what, const Tally& t) {
  printf("%s: share %.1f (%ld of %ld pages)\n", what,
         t.pages ? 100.0 * t.on_node / t.pages : 0.0, t.on_node, t.pages);
}

}  // namespace

int main() {
  const std::vector<int> nodes = region_lab::CpuNodes();
  if (nodes.size() < 2) {
    fprintf(stderr, "node_metadata_probe: needs two CPU nodes\n");
    return 1;
  }
  std::vector<void*> kept;
  Tally spans, lists, cache, own;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int node = nodes[i];
    node_metadata::MetadataPages pages;
    std::vector<node_metadata::NamedPage> own_pages;
    bool pinned = false;
    const int other = nodes[(i + 1) % nodes.size()];
    std::thread t([&] {
      // A refill on another node (a size no earlier allocation of this
      // thread had), so that the cache's node is that one and the move
      // below counts an event. Volatile: a malloc freed unused may be elided.
      if (!region_lab::PinToNode(other)) return;
      void* volatile first = malloc(12345);
      free(first);
      pinned = region_lab::PinToNode(node);
      if (!pinned) return;
      std::vector<void*> objects;
      for (size_t size : kSizes) {
        for (int i = 0; i < kPerSize; ++i) objects.push_back(malloc(size));
      }
      node_metadata::AddMetadataPages(objects, &pages);
      const int list_node = tcmalloc::numa::ThisThreadsListNode();
      own_pages = node_metadata::OwnStatePages(list_node);
      for (const auto& p : node_metadata::PageHeapPages(list_node)) {
        own_pages.push_back(p);
      }
      for (const auto& p : own_pages) pages.own.insert(p.page);
      kept.insert(kept.end(), objects.begin(), objects.end());
    });
    t.join();
    if (!pinned) {
      fprintf(stderr, "node_metadata_probe: cannot pin to node %d\n", node);
      return 1;
    }
    Tally s, l, c, o;
    if (!CountOnNode(pages.spans, node, &s) ||
        !CountOnNode(pages.lists, node, &l) ||
        !CountOnNode(pages.cache, node, &c) ||
        !CountOnNode(pages.own, node, &o)) {
      fprintf(stderr, "node_metadata_probe: cannot ask where pages are\n");
      return 1;
    }
    printf(
        "node %d: spans %ld of %ld pages on node %d, lists %ld of %ld, cache "
        "%ld of %ld, own %ld of %ld\n",
        node, s.on_node, s.pages, node, l.on_node, l.pages, c.on_node, c.pages,
        o.on_node, o.pages);
    spans.Add(s);
    lists.Add(l);
    cache.Add(c);
    own.Add(o);
    if (o.on_node < o.pages) PrintOwnPages(node, own_pages);
  }
  PrintShare("spans", spans);
  PrintShare("lists", lists);
  PrintShare("cache", cache);
  PrintShare("own", own);
  Tally all = spans;
  all.Add(lists);
  all.Add(cache);
  PrintShare("metadata", all);
  for (void* object : kept) free(object);
  printf("node_metadata: OK\n");
  return 0;
}
