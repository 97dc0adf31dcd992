// The kernel's automatic NUMA balancing, and what the node heaps do about it.
//
// With kernel.numa_balancing on (the default of Debian's, Ubuntu's and RHEL's
// kernels on multi-node machines) the kernel samples which node touches each
// page and migrates pages toward it. A CPU node's region, left to first
// touch, has no memory policy of its own, so its pages may move: a thread on
// node 1 that keeps reading node 0's objects draws their pages to node 1,
// which is what balancing is for while the objects live. Once freed they go
// back to node 0's heap (their owner, by address), which would hand them to
// node 0's next allocation with their pages still on node 1: remote memory
// for a thread that never touched it, until the kernel moves the pages back.
//
// So, while the kernel balances (TCMALLOC_NUMA_BALANCING=cooperate), a freed
// small-object span on its way back to its heap may be checked, with one
// move_pages sample of its pages, and released when they lie elsewhere: its
// next writer faults it in on its own node (policy.h, DecideMovedSpan).
//  - Not every span: one in kSampleEvery, and every one for the next
//    kCheckAllAfterMoved after one was released for having moved
//    (MovedSpanSampler): a batch's spans move together. A process whose
//    pages do not move, or whose moved spans are all kept (below), pays one
//    system call per kSampleEvery spans its heaps take back or hand out.
//  - Not the same span twice: a span that moved again after it was released
//    is memory the program keeps using from another node (a producer on one
//    node, a consumer on another). Releasing it again would only make the
//    kernel move its pages again, so it is kept where the kernel put it
//    (MovedSpanLog). No ping-pong.
// Large blocks are checked on every return anyway (NodeHeaps::
// ReleaseBeforeReuse), whatever moved their pages.
//
// Inside the gperftools tree this file lives at src/numa/balancing.h.
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
// with memory tiering). 0, 2 (memory tiering alone, which promotes pages of
// slow memory nodes and leaves CPU nodes' pages be), a missing file (a
// kernel without NUMA balancing) or a malformed one: false.
bool KernelBalancesPages(const char* path);

// Spans a heap checks between two found moved, and how many it checks one
// by one after finding one.
inline constexpr uint32_t kSampleEvery = 16;
inline constexpr uint32_t kCheckAllAfterMoved = 1024;

// Which freed spans of one heap are checked. Used under the page heap lock;
// zero-initialized is ready.
class MovedSpanSampler {
 public:
  // True when the span returning now is to be checked.
  bool ShouldCheck();
  // The outcome of a check ShouldCheck asked for: whether the span was
  // released for having moved.
  void Checked(bool released);

 private:
  uint32_t passed_;     // spans passed since the last sampled check
  uint32_t check_all_;  // spans still to check one by one
};

// The spans released for having moved, by first page: a direct-mapped table,
// so a collision forgets one (that span may then be released once more).
class MovedSpanLog {
 public:
  static constexpr size_t kEntries = 4096;
  // `entries`: kEntries zero words (or null: every page is unknown).
  void Init(uintptr_t* entries) { entries_ = entries; }
  bool ready() const { return entries_ != nullptr; }
  bool ReleasedBefore(uintptr_t page) const;
  void NoteReleased(uintptr_t page);

 private:
  static size_t Slot(uintptr_t page) {
    return (page * uintptr_t{0x9E3779B97F4A7C15}) >> (64 - 12);
  }
  static_assert(kEntries == size_t{1} << 12, "Slot takes 12 bits");
  uintptr_t* entries_;
};

// One node's check of its freed small-object spans: which are sampled, and
// what a sample means given the spans released before. Zero-initialized is
// ready (the log gets its storage at the first moved span: NeedsLog).
class MovedSpanCheck {
 public:
  // True when the span passing now is to be sampled.
  bool ShouldCheck() { return sampler_.ShouldCheck(); }
  // True when a sample with `pages_elsewhere` needs the log, which has none.
  bool NeedsLog(int pages_elsewhere) const {
    return pages_elsewhere > 0 && !log_.ready();
  }
  void InitLog(uintptr_t* entries) { log_.Init(entries); }
  // What to do with the span whose first page is `page`, sampled with
  // `pages_elsewhere` pages off its heap's node (DecideMovedSpan). A release
  // is noted, and sets every span to be checked for a while; a span found
  // home again stays noted, so its next move keeps it (no ping-pong).
  MovedSpan Judge(uintptr_t page, int pages_elsewhere);

 private:
  MovedSpanSampler sampler_;
  MovedSpanLog log_;
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_BALANCING_H_
