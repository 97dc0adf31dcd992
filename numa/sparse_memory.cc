// Sparsely written metadata, away from huge pages (numa/sparse_memory.h).
#include "numa/sparse_memory.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {
namespace {

uint64_t g_sparse_bytes;

}  // namespace

void* SparseAlloc(size_t bytes) {
  const size_t page = 4096;
  if (bytes == 0 || bytes > ~size_t{0} - page) return nullptr;
  const size_t len = (bytes + page - 1) & ~(page - 1);
  const long p =
      RawSyscall(SYS_mmap, 0, static_cast<long>(len), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p < 0 && p > -4096) return nullptr;
  RawSyscall(SYS_madvise, p, static_cast<long>(len), MADV_NOHUGEPAGE);
  __atomic_fetch_add(&g_sparse_bytes, len, __ATOMIC_RELAXED);
  return reinterpret_cast<void*>(p);
}

uint64_t SparseBytes() {
  return __atomic_load_n(&g_sparse_bytes, __ATOMIC_RELAXED);
}

}  // namespace numa
}  // namespace tcmalloc
