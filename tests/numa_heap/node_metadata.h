// The allocator metadata behind small objects, by page: the spans that
// describe them, the central lists that take them back and the entries of
// the page map's class cache that free() reads for them. For the tests of
// where a CPU node's metadata lies (node_metadata_test.cc and the lab's
// node_metadata_probe.cc), which link the patched allocator statically and
// read its internals.
#ifndef TESTS_NUMA_HEAP_NODE_METADATA_H_
#define TESTS_NUMA_HEAP_NODE_METADATA_H_

#include <stdint.h>

#include <set>
#include <vector>

namespace node_metadata {

constexpr uintptr_t kOsPage = 4096;

struct MetadataPages {
  std::set<uintptr_t> spans;  // pages holding the objects' Span records
  std::set<uintptr_t> lists;  // pages holding the lists that take them back
  std::set<uintptr_t> cache;  // pages holding their class cache entries
  // pages holding the node's own state: its inbox of remote frees, its
  // refill count and its event counters (numa/node_pages.h)
  std::set<uintptr_t> own;
};

// Adds the pages of each object's Span, central list and cache entry to
// *out.
void AddMetadataPages(const std::vector<void*>& objects, MetadataPages* out);

// The pages of CPU node `node`'s own state (the layer's node number), each
// named ("inbox", "refills", "counters").
struct NamedPage {
  const char* what;
  uintptr_t page;
};
std::vector<NamedPage> OwnStatePages(int node);

// Adds them to *out.
void AddOwnStatePages(int node, MetadataPages* out);

// The pages of CPU node `node`'s page heap ("page heap"), which the call
// makes if it does not exist yet: ask once the node's thread has run.
std::vector<NamedPage> PageHeapPages(int node);

// The pages of every CPU node's central lists that exist or may be made.
std::set<uintptr_t> AllListPages();
// The pages of the page map's class cache.
std::set<uintptr_t> AllCachePages();

// The pages among `pages` that are resident (mincore).
std::set<uintptr_t> ResidentPages(const std::set<uintptr_t>& pages);

}  // namespace node_metadata

#endif  // TESTS_NUMA_HEAP_NODE_METADATA_H_
