#include "tests/numa_heap/page_nodes.h"

#include <algorithm>

#include "benchmarks/locality/page_query.h"

namespace region_lab {

bool PageNodes(const std::vector<void*>& pages, std::vector<int>* out) {
  out->assign(pages.size(), 0);
  // Batches keep the kernel's per-call work bounded.
  constexpr size_t kBatch = 4096;
  for (size_t i = 0; i < pages.size(); i += kBatch) {
    const size_t n = std::min(kBatch, pages.size() - i);
    if (!locality::QueryPageNodes(n, pages.data() + i, out->data() + i)) {
      return false;
    }
  }
  return true;
}

bool CountPageNodes(const std::vector<void*>& pages, std::map<int, long>* out) {
  std::vector<int> nodes;
  if (!PageNodes(pages, &nodes)) return false;
  for (int n : nodes) ++(*out)[n];
  return true;
}

}  // namespace region_lab
