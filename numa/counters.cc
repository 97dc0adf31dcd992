// The event counters (numa/counters.h): a row per CPU node.
#include "numa/counters.h"

#include "numa/node_pages.h"
#include "numa/small_objects.h"

namespace tcmalloc {
namespace numa {
namespace {

struct CounterRow {
  uint64_t by_kind[static_cast<int>(Counter::kNumCounters)];
};
NodePages<CounterRow> g_counters;

}  // namespace

void AddToCounter(Counter c, uint64_t n) {
  __atomic_fetch_add(
      &g_counters[ThisThreadsListNode()].by_kind[static_cast<int>(c)], n,
      __ATOMIC_RELAXED);
}

uint64_t CounterValue(Counter c) {
  uint64_t sum = 0;
  g_counters.ForEach([&](CounterRow& row) {
    sum += __atomic_load_n(&row.by_kind[static_cast<int>(c)], __ATOMIC_RELAXED);
  });
  return sum;
}

void PlaceCountersOnNodePages() { g_counters.Place(); }

void ClearCounters() { g_counters.Clear(); }

const void* CountersOf(int node) { return &g_counters[node]; }

}  // namespace numa
}  // namespace tcmalloc
