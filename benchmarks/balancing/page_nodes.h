// Which node holds each page, read without disturbing NUMA balancing. A query
// with move_pages (nodes == NULL) fails with -EFAULT for a page whose entry the
// kernel's balancing scanner has made PROT_NONE to sample its next access
// (measured on Linux 6.1: a third of a freshly written batch after 100 ms
// scans), and touching the page first would take the very hinting fault that
// may migrate it. /proc/self/pagemap still gives such a page's frame number
// (root only), and /proc/zoneinfo which node's zones span it.
#ifndef BENCHMARKS_BALANCING_PAGE_NODES_H_
#define BENCHMARKS_BALANCING_PAGE_NODES_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace balancing {

struct PageCount {
  uint64_t pages = 0;    // distinct pages
  uint64_t on_node = 0;  // of which on the node asked about
  uint64_t absent = 0;   // of which not present (never written)
};

// Counts the distinct pages covered by the `size`-byte blocks at `blocks`.
// Exits with a message if pagemap or zoneinfo cannot be read.
PageCount CountPagesOnNode(const std::vector<char*>& blocks, size_t size,
                           int node);

// The node of each present page of the process's mappings without huge pages
// (VmFlags "nh" in /proc/self/smaps), by page number: numa-tcmalloc's sparse
// metadata (its log blocks, central lists, class cache, node pages), which
// nothing else in this program maps so. Read from pagemap, as above.
using PageNodes = std::vector<std::pair<uint64_t, int>>;  // sorted by page
PageNodes NoHugePageNodes();

// Those mappings, and how many of them have a memory policy of their own
// (/proc/self/numa_maps: anything but "default"), which keeps the kernel's
// balancing from moving their pages.
struct NoHugePageMappings {
  uint64_t mappings = 0;
  uint64_t with_policy = 0;
};
NoHugePageMappings CountNoHugePageMappings();

// Of the pages present in both snapshots, how many lie on another node in
// `after` than in `before`.
struct Moves {
  uint64_t pages = 0;
  uint64_t moved = 0;
};
Moves CountMoves(const PageNodes& before, const PageNodes& after);

}  // namespace balancing

#endif  // BENCHMARKS_BALANCING_PAGE_NODES_H_
