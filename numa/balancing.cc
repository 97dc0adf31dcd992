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

MovedSpan MovedSpanCheck::Judge(uintptr_t page, int pages_elsewhere) {
  const MovedSpan decision =
      DecideMovedSpan(pages_elsewhere, log_.ReleasedBefore(page));
  // Only a fresh move calls for checking its neighbours: kept spans are the
  // steady state of memory used across nodes, and checking every one of them
  // would cost a system call per span for nothing.
  sampler_.Checked(decision == MovedSpan::kRelease);
  if (decision == MovedSpan::kRelease) log_.NoteReleased(page);
  return decision;
}

}  // namespace numa
}  // namespace tcmalloc
