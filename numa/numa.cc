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
#include "numa/syscall.h"
#include "numa/topology.h"

namespace tcmalloc {
namespace numa {
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
  int num_nodes;
  int list_nodes;
  int list_nodes_built;
  uint64_t list_counters[static_cast<int>(ListCounter::kNumCounters)];
  BindCounters counters;
  // Decided at Init; BindRange hands them to DecideBinding. `caps` may lose
  // home_node later if the kernel refuses it (ApplyBinding).
  TaskPolicy task;
  KernelCaps caps;
  Topology topo;
};

State g_state;

void Reset() {
  memset(&g_state, 0, sizeof(g_state));
  g_state.policy = BindPolicy::kPreferred;
  g_state.list_nodes = 1;
  g_state.list_nodes_built = 1;
}

// Called once the layer is active with `num_nodes` slots.
void Activate(int num_nodes) {
  g_state.num_nodes = num_nodes;
  g_state.active = true;
  if (num_nodes <= kMaxListNodes) {
    g_state.list_nodes = num_nodes;
    return;
  }
  static const char kWarning[] =
      "tcmalloc: more than 8 NUMA node slots; small objects share one set of "
      "free lists (page-level memory stays per node)\n";
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
  State& s = g_state;

  if (config.fake_nodes > 0) {
    BuildFakeTopology(config.fake_nodes, &s.topo);
    FinishTopology(&s.topo);
    s.fake = true;
    Activate(config.fake_nodes);
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
  RecordTaskPolicy(view, config.policy);
  Activate(HighestNode(s.topo.usable) + 1);
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

bool NodeUsable(int node) {
  return g_state.active ? HasNode(g_state.topo.usable, node) : node == 0;
}

int CurrentNode() {
  if (!g_state.active) return 0;
  const int cpu = CurrentCpu();
  if (cpu < 0 || cpu >= kMaxCpus) return g_state.topo.default_home;
  return g_state.topo.cpu_node[cpu];
}

int FallbackOrder(int node, int out[kMaxNodes]) {
  if (!g_state.active || node < 0 || node >= kMaxNodes) return 0;
  const int len = g_state.topo.fallback_len[node];
  for (int i = 0; i < len; ++i) out[i] = g_state.topo.fallback[node][i];
  return len;
}

bool BindRange(void* start, size_t len, int node) {
  if (!g_state.active || g_state.policy == BindPolicy::kLocal) return true;
  if (g_state.fake) {
    // Fake nodes do not exist in the kernel: never bind to them.
    BumpCounter(&g_state.counters.skipped);
    return true;
  }
  const Binding b =
      DecideBinding(g_state.task, g_state.policy, node, LoadCaps());
  return ApplyBinding(start, len, b, &g_state.caps, &g_state.counters);
}

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
