// Sparsely written metadata, away from huge pages (numa/sparse_memory.h).
#include "numa/sparse_memory.h"

#include <string.h>
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

// Under an address-space limit, a request this large gets a mapping of its
// own size: the arena would abandon the rest of its chunk for it.
constexpr size_t kOwnMappingUnderLimit = size_t{1} << 20;

// Guards the carving state and the hook. Callers hold the page heap lock or
// no lock (log blocks), so neither keeps two carvings apart.
LeafLock g_lock;
char* g_next;
size_t g_left;
void (*g_mapping_hook)(void* start, size_t len);
void* (*g_arena)(size_t bytes);

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

// The arena's memory is fresh, so zero, unless a SysAllocator of the
// program's supplied it. Reading leaves untouched pages unbacked.
void ZeroIfWritten(char* p, size_t len) {
  for (size_t i = 0; i < len; i += sizeof(uint64_t)) {
    uint64_t word;
    memcpy(&word, p + i, sizeof(word));
    if (word != 0) {
      memset(p + i, 0, len - i);
      return;
    }
  }
}

}  // namespace

void SetSparseMappingHook(void (*hook)(void* start, size_t len)) {
  g_lock.Lock();
  g_mapping_hook = hook;
  g_lock.Unlock();
}

void SetSparseArena(void* (*arena)(size_t bytes)) {
  __atomic_store_n(&g_arena, arena, __ATOMIC_RELEASE);
}

void LockSparseMemory() { g_lock.Lock(); }
void UnlockSparseMemory() { g_lock.Unlock(); }

void* SparseAlloc(size_t bytes) {
  if (bytes == 0 || bytes > ~size_t{0} - kStep) return nullptr;
  const size_t len = (bytes + kPage - 1) & ~(kPage - 1);
  // Set once at start; called without g_lock, which holds no other lock.
  void* (*arena)(size_t) = __atomic_load_n(&g_arena, __ATOMIC_ACQUIRE);
  if (arena != nullptr && len < kOwnMappingUnderLimit) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(arena(len + kPage - 1));
    if (p == 0) return nullptr;
    char* result = reinterpret_cast<char*>((p + kPage - 1) & ~(kPage - 1));
    ZeroIfWritten(result, len);
    return result;
  }
  LockSparseMemory();
  void* result = arena != nullptr
                     ? MapStep(len)
                     : BumpCarve(&g_next, &g_left, len,
                                 len > kStep ? len : kStep, MapStep);
  UnlockSparseMemory();
  return result;
}

}  // namespace numa
}  // namespace tcmalloc
