// The page sample behind the reuse check (numa/page_sample.h).
#include "numa/page_sample.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {

bool SamplePages(uintptr_t start, size_t len, int kernel_id, PageSample* out) {
  *out = PageSample{0, 0};
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  const uintptr_t first = (start + page - 1) & ~(page - 1);
  const uintptr_t end = (start + len) & ~(page - 1);
  if (end <= first) return true;
  const uintptr_t pages = (end - first) / page;
  const int count =
      pages < kMaxSampledPages ? static_cast<int>(pages) : kMaxSampledPages;
  void* addrs[kMaxSampledPages];
  int status[kMaxSampledPages];
  for (int i = 0; i < count; ++i) {
    addrs[i] = reinterpret_cast<void*>(first + (pages * i / count) * page);
  }
  // move_pages(pid 0, count, pages, nodes NULL: report only, status, flags 0)
  const long r =
      RawSyscall(SYS_move_pages, 0, count, reinterpret_cast<long>(addrs), 0,
                 reinterpret_cast<long>(status), 0);
  if (r != 0) return false;
  for (int i = 0; i < count; ++i) {
    if (status[i] == kernel_id) {
      ++out->on_node;
    } else if (status[i] >= 0) {
      ++out->elsewhere;
    }
  }
  return true;
}

int ProbeMovePages() {
  return static_cast<int>(-RawSyscall(SYS_move_pages, 0, 0, 0, 0, 0, 0));
}

}  // namespace numa
}  // namespace tcmalloc
