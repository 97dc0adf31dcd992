// The kernel's NUMA balancing setting, and which freed spans the heaps check
// for pages it moved (numa/balancing.h).
#include "numa/balancing.h"

#include "numa/parse.h"
#include "numa/sparse_memory.h"

namespace tcmalloc {
namespace numa {
namespace {

bool FirstValue(void* ctx, uint32_t lo, uint32_t hi) {
  uint32_t* value = static_cast<uint32_t*>(ctx);
  if (lo != hi || *value != UINT32_MAX) return false;  // one number only
  *value = lo;
  return true;
}

}  // namespace

bool KernelBalancesPages(const char* path) {
  ByteStream in(path);
  uint32_t value = UINT32_MAX;
  if (!in.ok() || !ParseRanges(&in, FirstValue, &value)) return false;
  return value != UINT32_MAX && (value & 1) != 0;
}

bool MovedSpanCheck::ShouldCheck() {
  if (check_all_ > 0) {
    --check_all_;
    return true;
  }
  if (++passed_ < kSampleEvery) return false;
  passed_ = 0;
  return true;
}

ReleasedSpans g_released_spans;

void ReleasedSpans::Note(uintptr_t start) {
  uintptr_t* table = SparseTable(&table_, kEntries);
  if (table != nullptr) {
    __atomic_store_n(&table[Slot(start)], start, __ATOMIC_RELAXED);
  }
}

bool ReleasedSpans::Contains(uintptr_t start) const {
  const uintptr_t* table = __atomic_load_n(&table_, __ATOMIC_ACQUIRE);
  return table != nullptr && start != 0 &&
         __atomic_load_n(&table[Slot(start)], __ATOMIC_RELAXED) == start;
}

bool ReleasedSpans::Take(uintptr_t start) {
  uintptr_t* table = __atomic_load_n(&table_, __ATOMIC_ACQUIRE);
  uintptr_t expected = start;
  return table != nullptr && start != 0 &&
         __atomic_compare_exchange_n(&table[Slot(start)], &expected, 0, false,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

MovedSpan MovedSpanCheck::Judge(uintptr_t start, int pages_elsewhere,
                                ReleasedSpans* released) {
  const MovedSpan decision =
      DecideMovedSpan(pages_elsewhere, released->Contains(start));
  // Only a fresh move calls for checking its neighbours: kept spans are the
  // steady state of memory used across nodes, and checking every one of them
  // would cost a system call per span for nothing.
  if (decision == MovedSpan::kRelease) {
    check_all_ = kCheckAllAfterMoved;
    released->Note(start);
  }
  return decision;
}

}  // namespace numa
}  // namespace tcmalloc
