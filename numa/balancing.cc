// The kernel's NUMA balancing setting, and which freed spans the heaps check
// for pages it moved (numa/balancing.h).
#include "numa/balancing.h"

#include "numa/byte_stream.h"
#include "numa/parse.h"

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

bool MovedSpanSampler::ShouldCheck() {
  if (check_all_ > 0) {
    --check_all_;
    return true;
  }
  if (++passed_ < kSampleEvery) return false;
  passed_ = 0;
  return true;
}

void MovedSpanSampler::Checked(bool released) {
  if (released) check_all_ = kCheckAllAfterMoved;
}

bool MovedSpanLog::ReleasedBefore(uintptr_t page) const {
  return entries_ != nullptr && page != 0 && entries_[Slot(page)] == page;
}

void MovedSpanLog::NoteReleased(uintptr_t page) {
  if (entries_ != nullptr) entries_[Slot(page)] = page;
}

}  // namespace numa
}  // namespace tcmalloc
