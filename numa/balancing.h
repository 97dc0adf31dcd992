// The kernel's NUMA balancing: which freed small-object spans a heap samples
// (DecideMovedSpan, numa/policy.h), and the table of memory released for
// having moved. Why and how: docs/design.md, "The kernel's NUMA balancing".
#ifndef NUMA_TCMALLOC_NUMA_BALANCING_H_
#define NUMA_TCMALLOC_NUMA_BALANCING_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/policy.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

inline constexpr char kKernelBalancingPath[] =
    "/proc/sys/kernel/numa_balancing";

// True when the kernel's file at `path` (kKernelBalancingPath) says pages
// migrate toward the node that touches them: bit 0 of its value (1, or 3
// with memory tiering). 0, 2 (memory tiering alone leaves CPU nodes' pages
// be), a missing file or a malformed one: false.
bool KernelBalancesPages(const char* path);

// Spans a heap checks between two found moved, and how many it checks one
// by one after finding one.
inline constexpr uint32_t kSampleEvery = 16;
inline constexpr uint32_t kCheckAllAfterMoved = 1024;

// Memory released because its pages lay on another node, by start address,
// by the moved-span check and by the reuse witness: one table, so that
// neither releases the same memory again for the same reason (no ping-pong).
// Direct-mapped: a collision or a lost race forgets a start, which may then
// be released once more; so no lock. SparseAlloc'd at the first release.
class ReleasedSpans {
 public:
  static constexpr size_t kEntries = 16384;
  void Note(uintptr_t start);
  bool Contains(uintptr_t start) const;
  // Contains, and forgets it.
  bool Take(uintptr_t start);

 private:
  static size_t Slot(uintptr_t start) {
    return ((start >> 13) * uintptr_t{0x9E3779B97F4A7C15}) >> (64 - 14);
  }
  static_assert(kEntries == size_t{1} << 14, "Slot takes 14 bits");
  uintptr_t* table_;
};

// The process's, shared by both checks.
extern ReleasedSpans g_released_spans;

// One node's check of its freed small-object spans: which are sampled, and
// what a sample means given the spans released before. Used under the page
// heap lock; zero-initialized is ready.
class MovedSpanCheck {
 public:
  // True when the span passing now is to be sampled.
  bool ShouldCheck();
  // What to do with the span at `start`, sampled with `pages_elsewhere`
  // pages off its heap's node (DecideMovedSpan), given the spans `released`
  // before. A release is noted there; a span found home again stays noted.
  MovedSpan Judge(uintptr_t start, int pages_elsewhere,
                  ReleasedSpans* released);

 private:
  uint32_t passed_;     // spans passed since the last sampled check
  uint32_t check_all_;  // spans still to check one by one
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_BALANCING_H_
