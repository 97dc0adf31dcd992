// Idle times per CPU node, learned from releases that were followed by
// regrowth (numa/stranded_nodes.h).
#include "numa/stranded_nodes.h"

namespace tcmalloc {
namespace numa {
namespace {

// Serves, bumped on allocation's slow path by each node's threads.
uint32_t g_serves[kMaxNodes];

// What StrandedNodes last saw of each node, and what its releases taught;
// written only under the page-heap lock.
struct Idleness {
  uint32_t seen;         // serves at the previous look
  uint64_t serve_ns;     // when a look first saw the current count
  uint64_t grown_bytes;  // what other nodes grew since then
  uint64_t released_ns;  // the last release not yet followed by regrowth
  int doublings;         // the idle time is the base << doublings
};
Idleness g_idleness[kMaxNodes];

bool Valid(int node) { return node >= 0 && node < kMaxNodes; }

}  // namespace

void NoteServe(int node) {
  if (!Valid(node)) return;
  __atomic_store_n(&g_serves[node],
                   __atomic_load_n(&g_serves[node], __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
}

uint64_t IdleNsOf(int node, uint64_t base_idle_ns) {
  if (!Valid(node)) return base_idle_ns;
  return base_idle_ns << g_idleness[node].doublings;
}

uint64_t StrandedNodes(int cpu_nodes, uint64_t base_idle_ns, uint64_t now_ns,
                       int grower, uint64_t grown_bytes,
                       uint64_t base_grown_bytes) {
  if (base_idle_ns == 0) return ~uint64_t{0};
  if (cpu_nodes > kMaxNodes) cpu_nodes = kMaxNodes;
  uint64_t stranded = 0;
  for (int i = 0; i < cpu_nodes; ++i) {
    Idleness& n = g_idleness[i];
    const uint32_t serves = __atomic_load_n(&g_serves[i], __ATOMIC_RELAXED);
    if (serves != n.seen || n.serve_ns == 0) {
      n.seen = serves;
      n.serve_ns = now_ns;
      n.grown_bytes = 0;
      continue;
    }
    if (i != grower) n.grown_bytes += grown_bytes;
    const bool grown_past = base_grown_bytes != 0 &&
                            n.grown_bytes >= base_grown_bytes << n.doublings;
    if (grown_past || now_ns - n.serve_ns >= IdleNsOf(i, base_idle_ns)) {
      stranded |= uint64_t{1} << i;
    }
  }
  return stranded;
}

void NoteUnstranded(int node, uint64_t now_ns) {
  if (Valid(node)) g_idleness[node].released_ns = now_ns;
}

void NoteRegrowth(int node, uint64_t base_idle_ns, uint64_t now_ns) {
  if (!Valid(node)) return;
  Idleness& n = g_idleness[node];
  if (n.released_ns == 0) return;
  const uint64_t away = now_ns - n.released_ns;
  if (away < base_idle_ns << kMaxIdleDoublings) {
    // Next time, keep the pages longer than the threads were away this time.
    const uint64_t wanted = IdleNsOf(node, base_idle_ns) + away;
    while (n.doublings < kMaxIdleDoublings) {
      ++n.doublings;
      if (IdleNsOf(node, base_idle_ns) >= wanted) break;
    }
  } else if (n.doublings > 0) {
    --n.doublings;
  }
  n.released_ns = 0;
}

void ResetStrandedNodesForTest() {
  for (int i = 0; i < kMaxNodes; ++i) {
    g_serves[i] = 0;
    g_idleness[i] = Idleness{};
  }
}

}  // namespace numa
}  // namespace tcmalloc
