// One measured phase of a long-running pattern (benchmarks/balancing): what
// the kernel's automatic NUMA balancing did while it ran, and where the pages
// of the objects the phase's using thread works on lie at its end.
#ifndef BENCHMARKS_BALANCING_PHASE_H_
#define BENCHMARKS_BALANCING_PHASE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/balancing/page_nodes.h"

namespace balancing {

// /proc/vmstat's NUMA-balancing counters (zero on a kernel without them).
struct VmCounters {
  int64_t pages_migrated = 0;  // numa_pages_migrated
  int64_t hint_faults = 0;     // numa_hint_faults
};
VmCounters ReadVmCounters();

// Opens a counting window of the lab's access plugin (when windows are on)
// and notes the counters; End() closes the window and notes them again;
// Count() reads where the phase's objects' pages lie (page_nodes.h), on the
// using thread; Report() prints one line:
//   phase PATTERN NAME user_node=N objects=K pages=P on_user_node=L
//     share=L/P migrated=M hint_faults=F seconds=S
class Phase {
 public:
  Phase(std::string pattern, std::string name, int user_node);
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  void End();

  // The pages of `objects` (each `size` bytes, written) and how many lie on
  // the using node. Call it on the phase's using thread: the object list lies
  // in the heap beside the objects, and early in a task's life the kernel
  // migrates a page at its first hinting fault, so one read of the list from
  // another node can move the 2 MiB huge page under it, objects and all, to
  // that node (docs/lab.md).
  PageCount Count(const std::vector<char*>& objects, size_t size) const;
  // `pages` is Count's answer for `objects` objects.
  void Report(const PageCount& pages, size_t objects) const;

 private:
  const std::string pattern_;
  const std::string name_;
  const int user_node_;
  VmCounters before_, after_;
  std::chrono::steady_clock::time_point start_, end_;
};

}  // namespace balancing

#endif  // BENCHMARKS_BALANCING_PHASE_H_
