// What growing nodes ask of other CPU nodes' heaps (numa/node_chores.h).
#include "numa/node_chores.h"

#include "numa/node_class.h"
#include "numa/node_pages.h"

namespace tcmalloc {
namespace numa {
namespace {

NodePages<NodeChores> g_chores;

bool IsCpuNode(int node) { return node >= 0 && node < kMaxCpuNodes; }

}  // namespace

void AskToRelease(int node, uint64_t pages) {
  if (!IsCpuNode(node)) return;
  // Written only when it changes: a node nobody asks keeps its page unwritten
  // until its own threads write it.
  NodeChores& c = g_chores[node];
  if (__atomic_load_n(&c.release, __ATOMIC_RELAXED) != pages) {
    __atomic_store_n(&c.release, pages, __ATOMIC_RELAXED);
  }
}

void AskToRetire(int node, uint64_t pages) {
  if (!IsCpuNode(node) || pages == 0) return;
  __atomic_store_n(&g_chores[node].retire, g_chores[node].retire + pages,
                   __ATOMIC_RELAXED);
}

bool OwnerHasChores(int node) {
  if (!IsCpuNode(node)) return false;
  NodeChores& c = g_chores[node];
  if (!__atomic_load_n(&c.owner_wrote, __ATOMIC_RELAXED)) {
    __atomic_store_n(&c.owner_wrote, true, __ATOMIC_RELAXED);
  }
  return (__atomic_load_n(&c.release, __ATOMIC_RELAXED) |
          __atomic_load_n(&c.retire, __ATOMIC_RELAXED)) != 0;
}

NodeChores TakeChores(int node) {
  if (!IsCpuNode(node)) return NodeChores{};
  NodeChores& c = g_chores[node];
  NodeChores taken{};
  taken.release = __atomic_load_n(&c.release, __ATOMIC_RELAXED);
  taken.retire = __atomic_load_n(&c.retire, __ATOMIC_RELAXED);
  if (taken.release != 0) __atomic_store_n(&c.release, 0, __ATOMIC_RELAXED);
  if (taken.retire != 0) __atomic_store_n(&c.retire, 0, __ATOMIC_RELAXED);
  return taken;
}

void PlaceChoresOnNodePages() { g_chores.Place(); }

const void* ChoresOf(int node) { return &g_chores[node]; }

}  // namespace numa
}  // namespace tcmalloc
