#include "benchmarks/balancing/phase.h"

#include <cstdio>
#include <fstream>
#include <utility>

#include "benchmarks/locality/window_marks.h"

namespace balancing {

VmCounters ReadVmCounters() {
  VmCounters c;
  std::ifstream in("/proc/vmstat");
  std::string key;
  int64_t value;
  while (in >> key >> value) {
    if (key == "numa_pages_migrated") c.pages_migrated = value;
    if (key == "numa_hint_faults") c.hint_faults = value;
  }
  return c;
}

Phase::Phase(std::string pattern, std::string name, int user_node)
    : pattern_(std::move(pattern)),
      name_(std::move(name)),
      user_node_(user_node),
      before_(ReadVmCounters()),
      start_(std::chrono::steady_clock::now()) {
  locality::OpenWindow();
}

void Phase::End() {
  locality::CloseWindow();
  end_ = std::chrono::steady_clock::now();
  after_ = ReadVmCounters();
}

PageCount Phase::Count(const std::vector<char*>& objects, size_t size) const {
  return CountPagesOnNode(objects, size, user_node_);
}

void Phase::Report(const PageCount& c, size_t objects) const {
  const double share =
      c.pages == 0 ? 0.0 : static_cast<double>(c.on_node) / c.pages;
  std::printf(
      "phase %s %s user_node=%d objects=%zu pages=%llu on_user_node=%llu "
      "absent=%llu share=%.4f migrated=%lld hint_faults=%lld seconds=%.1f\n",
      pattern_.c_str(), name_.c_str(), user_node_, objects,
      static_cast<unsigned long long>(c.pages),
      static_cast<unsigned long long>(c.on_node),
      static_cast<unsigned long long>(c.absent), share,
      static_cast<long long>(after_.pages_migrated - before_.pages_migrated),
      static_cast<long long>(after_.hint_faults - before_.hint_faults),
      std::chrono::duration<double>(end_ - start_).count());
  std::fflush(stdout);
}

}  // namespace balancing
