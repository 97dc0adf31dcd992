// Where the kernel holds a range's pages, from a sample: move_pages(2) with
// no target nodes only reports, it moves nothing. The page heaps ask it when a
// large block comes back, to keep reuse local under first-touch placement
// (policy.h, ReleaseBeforeReuse).
#ifndef NUMA_TCMALLOC_NUMA_PAGE_SAMPLE_H_
#define NUMA_TCMALLOC_NUMA_PAGE_SAMPLE_H_

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Pages of a sample that the kernel holds, by where.
struct PageSample {
  int on_node;    // on the kernel node asked about
  int elsewhere;  // on any other node
  // Pages never touched (or only read) are in neither count.
};

// Up to kMaxSampledPages pages of [start, start + len), spread evenly, by
// whether they lie on kernel node `kernel_id`. One system call. False if it
// failed (the sample is then empty).
inline constexpr int kMaxSampledPages = 8;
bool SamplePages(uintptr_t start, size_t len, int kernel_id, PageSample* out);

// 0 if the kernel answers move_pages, else its errno (EPERM under every
// container's default seccomp profile): a call for no page.
int ProbeMovePages();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_PAGE_SAMPLE_H_
