// Refill counts per CPU node and the look for idle ones (numa/idle_nodes.h).
#include "numa/idle_nodes.h"

#include "numa/leaf_lock.h"
#include "numa/node_pages.h"

namespace tcmalloc {
namespace numa {
namespace {

// A page per node (numa/node_pages.h), so that its refills' writes stay on it.
NodePages<uint64_t> g_refills;

// What the looker last saw of each node, written only by the looker.
struct Look {
  uint64_t seen;    // the node's refill count at the previous look
  int quiet_looks;  // looks in a row that found it unchanged
  bool reported;    // idle since `seen`, and already reported
};
Look g_looks[kMaxCpuNodes];
// Held by the one thread looking; others skip the look.
LeafLock g_looking;

}  // namespace

bool NoteRefill(int node) {
  if (node < 0 || node >= kMaxCpuNodes) return false;
  const uint64_t n = __atomic_add_fetch(&g_refills[node], 1, __ATOMIC_RELAXED);
  return n % kRefillsPerLook == 0;
}

uint64_t TakeIdleNodes(int self, int cpu_nodes) {
  if (!g_looking.TryLock()) return 0;
  if (cpu_nodes > kMaxCpuNodes) cpu_nodes = kMaxCpuNodes;
  uint64_t idle = 0;
  for (int node = 0; node < cpu_nodes; ++node) {
    if (node == self) continue;
    Look& r = g_looks[node];
    const uint64_t refills =
        __atomic_load_n(&g_refills[node], __ATOMIC_RELAXED);
    if (refills != r.seen) {
      r.seen = refills;
      r.quiet_looks = 0;
      r.reported = false;
    } else if (!r.reported && ++r.quiet_looks >= kQuietLooks) {
      r.reported = true;
      idle |= uint64_t{1} << node;
    }
  }
  g_looking.Unlock();
  return idle;
}

void PlaceRefillCountsOnNodePages() { g_refills.Place(); }

const uint64_t* RefillCountOf(int node) { return &g_refills[node]; }

void ResetIdleNodesForTest() {
  g_refills.Clear();
  for (Look& look : g_looks) look = Look{};
}

}  // namespace numa
}  // namespace tcmalloc
