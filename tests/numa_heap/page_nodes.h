// Where the kernel holds a set of pages: move_pages with nodes == NULL only
// reports, it moves nothing; where a seccomp filter refuses it, the frame
// numbers of /proc/self/pagemap (benchmarks/locality/page_query.h). For the
// region lab's placement check.
#ifndef TESTS_NUMA_HEAP_PAGE_NODES_H_
#define TESTS_NUMA_HEAP_PAGE_NODES_H_

#include <map>
#include <vector>

namespace region_lab {

// Page count per node id for the page-aligned addresses in `pages`; a
// negative key is an errno the query reported for some pages (-ENOENT: not
// present, i.e. never touched). False if neither way could answer.
bool CountPageNodes(const std::vector<void*>& pages, std::map<int, long>* out);

// The node (or negative errno) of each page of `pages`, in order. False if
// neither way could answer.
bool PageNodes(const std::vector<void*>& pages, std::vector<int>* out);

}  // namespace region_lab

#endif  // TESTS_NUMA_HEAP_PAGE_NODES_H_
