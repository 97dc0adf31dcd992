// The numa.h functions: after Init (numa/init.cc) every one is a few loads
// from the layer's state (numa/state.h).
#include "numa/numa.h"

#include "numa/current_cpu.h"
#include "numa/mempolicy.h"
#include "numa/placed_start.h"
#include "numa/region.h"
#include "numa/state.h"

namespace tcmalloc {
namespace numa {

State g_state;

namespace {

// ApplyBinding may clear home_node from another thread's bind.
KernelCaps LoadCaps() {
  return KernelCaps{__atomic_load_n(&g_state.caps.home_node, __ATOMIC_RELAXED),
                    false};
}

}  // namespace

bool Active() { return g_state.active; }

int NumNodes() { return g_state.active ? g_state.num_nodes : 1; }

int NumCpuNodes() { return g_state.active ? g_state.cpu_nodes : 1; }

int KernelId(int node) {
  if (!g_state.active || node < 0 || node >= g_state.num_nodes) return 0;
  return g_state.kernel_id[node];
}

int NodeOfKernelId(int kernel_id) {
  if (!g_state.active) return kernel_id == 0 ? 0 : -1;
  return HasNode(g_state.topo.usable, kernel_id) ? g_state.node_of[kernel_id]
                                                 : -1;
}

int CurrentNode() {
  if (!g_state.active) return 0;
  const int cpu = CurrentCpu();
  if (cpu < 0 || cpu >= kMaxCpus) return g_state.default_node;
  return g_state.cpu_node[cpu];
}

int LendersOf(int node, Borrowed what, int out[kMaxNodes]) {
  if (!g_state.active || node < 0 || node >= g_state.num_nodes) return 0;
  return LenderOrder(what, g_state.fallback[node], g_state.fallback_len[node],
                     g_state.cpu_nodes, out);
}

bool BindRange(void* start, size_t len, int node) {
  if (!g_state.active) return true;
  BindPolicy policy = g_state.policy;
  if (policy == BindPolicy::kLocal) {
    // First-touch placement: a CPU node's memory lands where it is first
    // written. Nobody runs on a memory-only node to write its memory first,
    // and the writers a proxy serves for an unusable node (numactl
    // --membind) run elsewhere: those are bound as `preferred` binds.
    if (node >= 0 && node < kMaxNodes &&
        ((g_state.first_touch_nodes >> node) & 1)) {
      return true;
    }
    policy = BindPolicy::kPreferred;
  }
  if (g_state.fake) {
    // Fake nodes do not exist in the kernel: never bind to them.
    BumpCounter(&g_state.counters.skipped);
    return true;
  }
  // A node the process does not have binds to no kernel node: EINVAL,
  // counted like any refusal.
  const int kernel_id =
      node >= 0 && node < g_state.num_nodes ? g_state.kernel_id[node] : -1;
  const Binding b = DecideBinding(g_state.task, policy, kernel_id, LoadCaps());
  return ApplyBinding(start, len, b, &g_state.caps, &g_state.counters);
}

void* GrowRegion(int id, size_t bytes, size_t* actual) {
  if (!HasRegion(id)) return nullptr;
  return RegionGrow(id, bytes, actual);
}

bool ShrinkRegion(int node, void* start, size_t bytes) {
  if (!g_state.active || node < 0 || node >= g_state.num_nodes) return false;
  return RegionReturn(node, reinterpret_cast<uintptr_t>(start), bytes);
}

uint64_t MaxStrandedBytes() { return g_state.max_stranded_bytes; }
uint64_t StrandedAfterNs() { return g_state.stranded_after_ns; }

BindPolicy Policy() { return g_state.policy; }
RemoteFree RemoteFreePolicy() { return g_state.remote_free; }
Migration MigrationPolicy() { return g_state.migration; }
bool FakeTopology() { return g_state.fake; }
bool FirstTouchNode(int node) {
  return g_state.active && !g_state.fake &&
         g_state.policy == BindPolicy::kLocal && node >= 0 &&
         node < kMaxNodes && ((g_state.first_touch_nodes >> node) & 1);
}
bool StatsAtExit() { return g_state.stats; }

bool NodeHoldsItsMemory(int node) {
  return g_state.active && node >= 0 && node < g_state.num_nodes &&
         !((g_state.unbound_proxies >> node) & 1);
}

Refusals RefusedCalls() {
  Refusals r = g_state.refused;
  const int home =
      __atomic_load_n(&g_state.counters.home_node_refused, __ATOMIC_RELAXED);
  if (r.home_node == 0) r.home_node = home;
  return r;
}

bool ReuseByWitness() { return g_state.witness; }

Cooperation BalancingCooperation() { return g_state.balancing; }
bool MetadataStaysPut() { return g_state.metadata_stays_put; }
uint64_t MetadataBinds() {
  return LoadCounter(&g_state.metadata_counters.calls);
}
uint64_t MetadataBindFailures() {
  return LoadCounter(&g_state.metadata_counters.failures);
}
bool CooperatesWithBalancing() {
  return g_state.balancing == Cooperation::kCooperating;
}

const char* MemsSource() {
  return g_state.mems_source[0] != '\0' ? g_state.mems_source : nullptr;
}

const char* CpusSource() {
  return g_state.cpus_source[0] != '\0' ? g_state.cpus_source : nullptr;
}

uint64_t MbindCalls() { return LoadCounter(&g_state.counters.calls); }
uint64_t MbindFailures() { return LoadCounter(&g_state.counters.failures); }

}  // namespace numa
}  // namespace tcmalloc
