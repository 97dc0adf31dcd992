// Sparsely written metadata, away from huge pages (numa/sparse_memory.h).
#include "numa/sparse_memory.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "numa/leaf_lock.h"
#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {
namespace {

constexpr size_t kPage = 4096;
// A step holds a 2-node process's leaves and node lists in one mapping;
// address space only, until written.
constexpr size_t kStep = size_t{8} << 20;

// Guards the carving state and the hook. Callers hold the page heap lock or
// a log lock (log blocks), never both, so neither alone keeps two carvings
// apart.
LeafLock g_lock;
char* g_next;
size_t g_left;
void (*g_mapping_hook)(void* start, size_t len);

// A fresh step of `len` bytes (under g_lock).
void* MapStep(size_t len) {
  const long p =
      RawSyscall(SYS_mmap, 0, static_cast<long>(len), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p < 0 && p > -4096) return nullptr;
  RawSyscall(SYS_madvise, p, static_cast<long>(len), MADV_NOHUGEPAGE);
  if (g_mapping_hook != nullptr) {
    g_mapping_hook(reinterpret_cast<void*>(p), len);
  }
  return reinterpret_cast<void*>(p);
}

}  // namespace

void SetSparseMappingHook(void (*hook)(void* start, size_t len)) {
  g_lock.Lock();
  g_mapping_hook = hook;
  g_lock.Unlock();
}

void LockSparseMemory() { g_lock.Lock(); }
void UnlockSparseMemory() { g_lock.Unlock(); }

void* SparseAlloc(size_t bytes) {
  if (bytes == 0 || bytes > ~size_t{0} - kStep) return nullptr;
  const size_t len = (bytes + kPage - 1) & ~(kPage - 1);
  LockSparseMemory();
  void* result =
      BumpCarve(&g_next, &g_left, len, len > kStep ? len : kStep, MapStep);
  UnlockSparseMemory();
  return result;
}

}  // namespace numa
}  // namespace tcmalloc
