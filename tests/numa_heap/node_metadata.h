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
};

// Adds the pages of each object's Span, central list and cache entry to
// *out.
void AddMetadataPages(const std::vector<void*>& objects, MetadataPages* out);

// The pages of every CPU node's central lists that exist or may be made.
std::set<uintptr_t> AllListPages();
// The pages of the page map's class cache.
std::set<uintptr_t> AllCachePages();

// The pages among `pages` that are resident (mincore).
std::set<uintptr_t> ResidentPages(const std::set<uintptr_t>& pages);

}  // namespace node_metadata

#endif  // TESTS_NUMA_HEAP_NODE_METADATA_H_
