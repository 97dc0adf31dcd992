// The layer's decisions (numa/policy.h).
#include "numa/policy.h"

namespace tcmalloc {
namespace numa {

int LenderOrder(Borrowed what, const uint8_t* fallback, int len, int cpu_nodes,
                int out[kMaxNodes]) {
  int n = 0;
  for (int i = 0; i < len && n < kMaxNodes; ++i) {
    if (what == Borrowed::kObjects && fallback[i] >= cpu_nodes) continue;
    out[n++] = fallback[i];
  }
  return n;
}

uint64_t PagesToUnstrand(int node, int nodes, const uint64_t free_bytes[],
                         uint64_t bound_bytes, int page_shift,
                         uint64_t growth_pages) {
  uint64_t others = 0;
  for (int i = 0; i < nodes; ++i) {
    if (i != node) others += free_bytes[i];
  }
  if (others <= bound_bytes) return 0;
  const uint64_t page = uint64_t{1} << page_shift;
  const uint64_t beyond = (others - bound_bytes + page - 1) >> page_shift;
  return beyond < growth_pages ? beyond : growth_pages;
}

bool GrowthPassesMark(uint64_t peak_bytes, uint64_t now_bytes,
                      uint64_t grow_bytes, uint64_t interval) {
  if (now_bytes > peak_bytes) peak_bytes = now_bytes;
  const uint64_t after = now_bytes + grow_bytes;
  return after > peak_bytes && peak_bytes / interval != after / interval;
}

void PlanRetirement(int node, int nodes, const uint64_t released_pages[],
                    uint64_t growth_pages, uint64_t out[]) {
  uint64_t left = growth_pages;
  for (int i = 0; i < nodes; ++i) {
    out[i] = 0;
    if (i == node || left == 0) continue;
    out[i] = released_pages[i] < left ? released_pages[i] : left;
    left -= out[i];
  }
}

bool TooManyPagesElsewhere(int pages_on_node, int pages_elsewhere) {
  return pages_elsewhere * 20 > (pages_on_node + pages_elsewhere);
}

MovedSpan DecideMovedSpan(int pages_elsewhere, bool released_before) {
  // Any page elsewhere: a span is a few pages, written whole when carved.
  if (pages_elsewhere == 0) return MovedSpan::kStays;
  return released_before ? MovedSpan::kKeep : MovedSpan::kRelease;
}

bool WitnessSaysRelease(const ReuseWitness& w) {
  if (w.gained_pages == 0) return false;
  if (!w.allocator_on_node) return !w.released_before;
  const uint64_t per_fault = w.pages_per_fault > 0 ? w.pages_per_fault : 1;
  // Others' faults could have placed at most this many of its pages.
  if (w.other_faults * per_fault * 20 <= w.block_pages) return false;
  const uint64_t needed = (w.gained_pages + per_fault - 1) / per_fault;
  const bool wrote_it =
      w.allocator_faults >= needed && w.allocator_faults <= 2 * needed;
  if (per_fault == 1) return !wrote_it || w.other_faults >= needed;
  return !(wrote_it && w.released_before);
}

int TransferCacheShare(int cap, int nodes, int node) {
  if (node >= kMaxNodes) return 0;
  if (nodes <= 1) return cap;
  return cap / nodes + (node < cap % nodes ? 1 : 0);
}

OnMigration DecideMigration(int old_node, int new_node, Migration policy,
                            bool sorted_by_owner) {
  if (old_node == new_node) return OnMigration::kStay;
  if (sorted_by_owner && policy == Migration::kFlush) {
    return OnMigration::kSwitchAndFlush;
  }
  return OnMigration::kSwitch;
}

}  // namespace numa
}  // namespace tcmalloc
