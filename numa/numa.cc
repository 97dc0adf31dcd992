// The NUMA layer's state and the numa.h functions: Init decides once whether
// the layer is active; after that every call is a few loads from State.
#include "numa/numa.h"

#include <linux/mempolicy.h>
#include <string.h>
#include <sys/syscall.h>

#include "numa/bind.h"
#include "numa/config.h"
#include "numa/current_node.h"
#include "numa/mempolicy.h"
#include "numa/numa_testing.h"
#include "numa/region.h"
#include "numa/syscall.h"
#include "numa/topology.h"

namespace tcmalloc {
namespace numa {

uintptr_t internal::owner_from_address_mask;

namespace {

// Zero-initialized (no constructor runs): before Init, and whenever Init
// decides against NUMA, `active` is false and every call answers "node 0".
struct State {
  bool active;
  bool fake;
  bool stats;
  BindPolicy policy;
  RemoteFree remote_free;
  Migration migration;
  uint64_t max_stranded_bytes;
  int num_nodes;  // slots
  int list_nodes;
  int list_nodes_built;
  uint64_t list_counters[static_cast<int>(ListCounter::kNumCounters)];
  BindCounters counters;
  // Decided at Init; BindRange hands them to DecideBinding. `caps` may lose
  // home_node later if the kernel refuses it (ApplyBinding).
  TaskPolicy task;
  KernelCaps caps;
  Topology topo;
  // Slots: a dense numbering of the usable nodes, CPU homes first.
  uint8_t slot_node[kMaxNodes];  // slot -> kernel node id
  uint8_t node_slot[kMaxNodes];  // kernel node id -> slot (usable nodes only)
  uint8_t cpu_slot[kMaxCpus];    // CPU -> slot of its home node
  uint8_t default_slot;
  uint8_t fallback_len[kMaxNodes];
  uint8_t fallback[kMaxNodes][kMaxNodes];  // by slot, in slots
};

State g_state;

void Reset() {
  memset(&g_state, 0, sizeof(g_state));
  internal::owner_from_address_mask = 0;
  g_state.policy = BindPolicy::kPreferred;
  g_state.list_nodes = 1;
  g_state.list_nodes_built = 1;
}

// Numbers the usable nodes: homes (nodes serving CPUs) first, then
// memory-only nodes, each by id. Returns the number of homes.
int AssignSlots(const Topology& t, State* s) {
  int slot = 0;
  for (uint64_t m = t.homes; m != 0; m &= m - 1) {
    s->slot_node[slot++] = static_cast<uint8_t>(__builtin_ctzll(m));
  }
  const int homes = slot;
  for (uint64_t m = t.usable & ~t.homes; m != 0; m &= m - 1) {
    s->slot_node[slot++] = static_cast<uint8_t>(__builtin_ctzll(m));
  }
  for (int i = 0; i < slot; ++i) s->node_slot[s->slot_node[i]] = i;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    s->cpu_slot[cpu] = s->node_slot[t.cpu_node[cpu]];
  }
  s->default_slot = s->node_slot[t.default_home];
  for (int i = 0; i < slot; ++i) {
    const int node = s->slot_node[i];
    s->fallback_len[i] = t.fallback_len[node];
    for (int j = 0; j < t.fallback_len[node]; ++j) {
      s->fallback[i][j] = s->node_slot[t.fallback[node][j]];
    }
  }
  return homes;
}

// Turns the layer on over the finished topology, unless the address regions
// cannot be reserved (then it stays off: vanilla).
void Activate() {
  State& s = g_state;
  const int homes = AssignSlots(s.topo, &s);
  s.num_nodes = PopCount(s.topo.usable);
  s.active = true;  // ReserveRegions binds through BindRange
  if (!ReserveRegions(s.num_nodes)) {
    s.active = false;
    s.num_nodes = 0;
    ClearTopology(&s.topo);
    return;
  }
  internal::owner_from_address_mask = ~uintptr_t{0};
  if (homes <= kMaxListNodes) {
    s.list_nodes = homes;
    return;
  }
  static const char kWarning[] =
      "tcmalloc: more NUMA nodes serve CPUs than per-node small-object lists "
      "can track; small objects share one set of lists (page-level memory "
      "stays per node)\n";
  RawSyscall(SYS_write, 2, reinterpret_cast<long>(kWarning),
             sizeof(kWarning) - 1);
}

// What Init learns from the kernel (get_mempolicy), or a test's stand-in.
struct KernelView {
  bool from_kernel;       // true: ask the kernel; false: use the fields
  uint64_t allowed;       // cpuset mems_allowed
  int policy;             // the thread's memory policy mode
  uint64_t policy_nodes;  // and its nodes
  bool home_node;         // set_mempolicy_home_node is available
};

// Keeps what DecideBinding needs: the task policy (a membind set narrowed to
// the usable nodes, the ones the heaps know) and, only when a binding could
// use it, whether the kernel has home nodes: one zero-length syscall, so the
// common cases pay nothing.
void RecordTaskPolicy(const KernelView& view, BindPolicy policy) {
  State& s = g_state;
  s.task = TaskPolicy{view.policy, view.policy_nodes};
  if (view.policy != MPOL_BIND) return;
  s.task.nodes &= s.topo.usable;
  if (policy != BindPolicy::kPreferred || PopCount(s.task.nodes) < 2) return;
  s.caps.home_node = view.from_kernel
                         ? ProbeHomeNode(__builtin_ctzll(s.task.nodes))
                         : view.home_node;
}

// ApplyBinding may clear home_node from another thread's bind.
KernelCaps LoadCaps() {
  return KernelCaps{__atomic_load_n(&g_state.caps.home_node, __ATOMIC_RELAXED)};
}

// Init's body: reads topology under `root`.
void InitFrom(GetenvFn getenv_fn, const char* root, KernelView view) {
  Reset();
  const Config config = ParseConfig(getenv_fn);
  // TCMALLOC_NUMA=0: vanilla, so no syscall beyond reading the environment.
  if (config.mode == Mode::kOff) return;
  g_state.policy = config.policy;
  g_state.stats = config.stats;
  g_state.remote_free = config.remote_free;
  g_state.migration = config.migration;
  g_state.max_stranded_bytes = uint64_t{config.max_stranded_mb} << 20;
  State& s = g_state;

  if (config.fake_nodes > 0) {
    BuildFakeTopology(config.fake_nodes, &s.topo);
    FinishTopology(&s.topo);
    s.fake = true;
    Activate();
    return;
  }

  if (view.from_kernel && !QueryAllowedMems(&view.allowed)) return;
  // One allowed node (the common single-socket case): one get_mempolicy is
  // all auto mode costs; sysfs is not read.
  if (config.mode == Mode::kAuto && PopCount(view.allowed) < 2) return;
  if (view.from_kernel && !QueryTaskPolicy(&view.policy, &view.policy_nodes)) {
    return;
  }
  bool stay_off;
  const uint64_t allowed = ApplyTaskPolicy(
      config.mode, view.policy, view.policy_nodes, view.allowed, &stay_off);
  if (stay_off) return;
  if (config.mode == Mode::kAuto && PopCount(allowed) < 2) return;

  if (!ReadSysfsTopology(root, allowed, &s.topo) || !FinishTopology(&s.topo)) {
    ClearTopology(&s.topo);
    return;
  }
  const int usable = PopCount(s.topo.usable);
  if (config.mode == Mode::kAuto && usable < 2) return;
  // auto: per-node heaps pay off only if threads run on more than one node.
  // A memory-only node (CXL, HBM) next to one CPU node is not that. Not the
  // calling thread's affinity: a main thread pinned before its first malloc
  // may still start workers on every node.
  if (config.mode == Mode::kAuto && PopCount(s.topo.homes) < 2) {
    ClearTopology(&s.topo);
    return;
  }
  RecordTaskPolicy(view, config.policy);  // before Activate binds regions
  Activate();
}

}  // namespace

void Init(const char* (*getenv_fn)(const char*)) {
  InitFrom(getenv_fn, kSysfsNodeRoot, KernelView{true, 0, 0, 0, false});
}

void InitForTest(const char* sysfs_root, uint64_t allowed,
                 const char* (*getenv_fn)(const char*), int task_policy,
                 uint64_t task_policy_nodes, bool home_node) {
  InitFrom(
      getenv_fn, sysfs_root,
      KernelView{false, allowed, task_policy, task_policy_nodes, home_node});
}

void ResetForTest() { Reset(); }

bool Active() { return g_state.active; }

int NumNodes() { return g_state.active ? g_state.num_nodes : 1; }

int NodeId(int slot) {
  if (!g_state.active || slot < 0 || slot >= g_state.num_nodes) return 0;
  return g_state.slot_node[slot];
}

int SlotOfNode(int node_id) {
  if (!g_state.active) return node_id == 0 ? 0 : -1;
  return HasNode(g_state.topo.usable, node_id) ? g_state.node_slot[node_id]
                                               : -1;
}

bool NodeUsable(int node_id) {
  return g_state.active ? HasNode(g_state.topo.usable, node_id) : node_id == 0;
}

int CurrentNode() {
  if (!g_state.active) return 0;
  const int cpu = CurrentCpu();
  if (cpu < 0 || cpu >= kMaxCpus) return g_state.default_slot;
  return g_state.cpu_slot[cpu];
}

int FallbackOrder(int slot, int out[kMaxNodes]) {
  if (!g_state.active || slot < 0 || slot >= g_state.num_nodes) return 0;
  const int len = g_state.fallback_len[slot];
  for (int i = 0; i < len; ++i) out[i] = g_state.fallback[slot][i];
  return len;
}

bool BindRange(void* start, size_t len, int node_id) {
  if (!g_state.active || g_state.policy == BindPolicy::kLocal) return true;
  if (g_state.fake) {
    // Fake nodes do not exist in the kernel: never bind to them.
    BumpCounter(&g_state.counters.skipped);
    return true;
  }
  const Binding b =
      DecideBinding(g_state.task, g_state.policy, node_id, LoadCaps());
  return ApplyBinding(start, len, b, &g_state.caps, &g_state.counters);
}

void NoteMemoryOutsideRegions() {
  __atomic_store_n(&internal::owner_from_address_mask, uintptr_t{0},
                   __ATOMIC_RELAXED);
}

bool RegionsOn() { return g_state.active && RegionsReserved(); }

void* GrowRegion(int slot, size_t bytes, size_t* actual) {
  if (!g_state.active || slot >= g_state.num_nodes) return nullptr;
  return RegionGrow(slot, bytes, actual);
}

bool ShrinkRegion(int slot, void* start, size_t bytes) {
  if (!g_state.active || slot >= g_state.num_nodes) return false;
  return RegionReturn(slot, reinterpret_cast<uintptr_t>(start), bytes);
}

uint64_t MaxStrandedBytes() { return g_state.max_stranded_bytes; }

uint64_t MbindCalls() { return LoadCounter(&g_state.counters.calls); }
uint64_t MbindFailures() { return LoadCounter(&g_state.counters.failures); }
uint64_t BindSkipped() { return LoadCounter(&g_state.counters.skipped); }
int MbindLastErrno() {
  return __atomic_load_n(&g_state.counters.last_errno, __ATOMIC_RELAXED);
}

BindPolicy Policy() { return g_state.policy; }
RemoteFree RemoteFreePolicy() { return g_state.remote_free; }
Migration MigrationPolicy() { return g_state.migration; }
int ListNodes() { return g_state.active ? g_state.list_nodes : 1; }
void SetListNodesBuilt(int n) { g_state.list_nodes_built = n; }
int ListNodesBuilt() { return g_state.list_nodes_built; }

void AddToCounter(ListCounter c, uint64_t n) {
  __atomic_fetch_add(&g_state.list_counters[static_cast<int>(c)], n,
                     __ATOMIC_RELAXED);
}

uint64_t CounterValue(ListCounter c) {
  return __atomic_load_n(&g_state.list_counters[static_cast<int>(c)],
                         __ATOMIC_RELAXED);
}

bool FakeTopology() { return g_state.fake; }
bool StatsAtExit() { return g_state.stats; }

}  // namespace numa
}  // namespace tcmalloc
