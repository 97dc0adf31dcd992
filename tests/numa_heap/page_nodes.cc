#include "tests/numa_heap/page_nodes.h"

#include <algorithm>

#include "benchmarks/locality/page_query.h"

namespace region_lab {

bool CountPageNodes(const std::vector<void*>& pages, std::map<int, long>* out) {
  // Batches keep the kernel's per-call work (and our status array) bounded.
  constexpr size_t kBatch = 4096;
  std::vector<int> status(kBatch);
  for (size_t i = 0; i < pages.size(); i += kBatch) {
    const size_t n = std::min(kBatch, pages.size() - i);
    void** batch = const_cast<void**>(pages.data() + i);
    if (!locality::QueryPageNodes(n, batch, status.data())) return false;
    for (size_t j = 0; j < n; ++j) ++(*out)[status[j]];
  }
  return true;
}

}  // namespace region_lab
