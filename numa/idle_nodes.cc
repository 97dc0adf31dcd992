// Refill counts per CPU node and the look for idle ones (numa/idle_nodes.h).
#include "numa/idle_nodes.h"

namespace tcmalloc {
namespace numa {
namespace {

// One cache line per node: refills of different nodes never share a line.
struct alignas(64) NodeRefills {
  uint64_t refills;  // bumped by the node's refills
  uint64_t seen;     // `refills` at the previous look
  int quiet_looks;   // looks in a row that found `refills` unchanged
  bool reported;     // idle since `seen`, and already reported
};

NodeRefills g_nodes[kMaxCpuNodes];
bool g_looking;

}  // namespace

bool NoteRefill(int node) {
  if (node < 0 || node >= kMaxCpuNodes) return false;
  const uint64_t n =
      __atomic_add_fetch(&g_nodes[node].refills, 1, __ATOMIC_RELAXED);
  return n % kRefillsPerLook == 0;
}

uint64_t TakeIdleNodes(int self, int cpu_nodes) {
  if (__atomic_exchange_n(&g_looking, true, __ATOMIC_ACQUIRE)) return 0;
  if (cpu_nodes > kMaxCpuNodes) cpu_nodes = kMaxCpuNodes;
  uint64_t idle = 0;
  for (int node = 0; node < cpu_nodes; ++node) {
    if (node == self) continue;
    NodeRefills& r = g_nodes[node];
    const uint64_t refills = __atomic_load_n(&r.refills, __ATOMIC_RELAXED);
    if (refills != r.seen) {
      r.seen = refills;
      r.quiet_looks = 0;
      r.reported = false;
    } else if (!r.reported && ++r.quiet_looks >= kQuietLooks) {
      r.reported = true;
      idle |= uint64_t{1} << node;
    }
  }
  __atomic_store_n(&g_looking, false, __ATOMIC_RELEASE);
  return idle;
}

void ResetIdleNodesForTest() {
  for (NodeRefills& r : g_nodes) r = NodeRefills{};
  g_looking = false;
}

}  // namespace numa
}  // namespace tcmalloc
