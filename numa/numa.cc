// The NUMA layer's state and the numa.h functions: Init decides once whether
// the layer is on; after that every call is a few loads from State.
#include "numa/numa.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>
#include <sys/syscall.h>

#include "numa/balancing.h"
#include "numa/bind.h"
#include "numa/config.h"
#include "numa/cpuset.h"
#include "numa/current_cpu.h"
#include "numa/line.h"
#include "numa/mempolicy.h"
#include "numa/node_pages.h"
#include "numa/numa_testing.h"
#include "numa/parse.h"
#include "numa/placement.h"
#include "numa/region.h"
#include "numa/reuse_witness.h"
#include "numa/sparse_memory.h"
#include "numa/syscall.h"
#include "numa/topology.h"

namespace tcmalloc {
namespace numa {

internal::SmallObjects internal::g_small_objects = {1, false, false, false, 1};
bool internal::g_placement_started;

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
  uint64_t interleave_above;
  int num_nodes;
  int cpu_nodes;  // with small-object lists (NumCpuNodes)
  // Nodes whose fresh memory `local` leaves to first touch: CPU nodes that
  // serve only their own CPUs (all CPU nodes when mbind is refused).
  uint64_t first_touch_nodes;
  // Proxies left to first touch because mbind is refused (NodeHoldsItsMemory).
  uint64_t unbound_proxies;
  Refusals refused;
  bool witness;  // ReuseByWitness
  // kernel.numa_balancing moves pages (read at Init, for real topologies).
  bool kernel_balances;
  Cooperation balancing;
  // The allocator's metadata mappings are bound where they are first written
  // (MetadataStaysPut), and those binds.
  bool metadata_stays_put;
  BindCounters metadata_counters;
  // MemsSource, CpusSource ("" for none). Plain arrays, not Lines: State
  // must need no constructor.
  char mems_source[256];
  char cpus_source[256];
  BindCounters counters;
  // Decided at Init; BindRange hands them to DecideBinding. `caps` may lose
  // home_node later if the kernel refuses it (ApplyBinding).
  TaskPolicy task;
  KernelCaps caps;
  Topology topo;
  // Nodes: a dense numbering of the usable kernel nodes, CPU nodes first.
  uint8_t kernel_id[kMaxNodes];  // node -> kernel node id
  uint8_t node_of[kMaxNodes];    // kernel node id -> node (usable ones only)
  uint8_t cpu_node[kMaxCpus];    // CPU -> the node that serves it
  uint8_t default_node;
  uint8_t fallback_len[kMaxNodes];
  uint8_t fallback[kMaxNodes][kMaxNodes];  // by node, in nodes
};

State g_state;

// The event counters, a row per CPU node, each row written by its node's
// threads (numa/node_pages.h); a counter's value is the sum of the rows.
struct CounterRow {
  uint64_t by_kind[static_cast<int>(Counter::kNumCounters)];
};
NodePages<CounterRow> g_counters;

void Reset() {
  SetSparseMappingHook(nullptr);
  memset(&g_state, 0, sizeof(g_state));
  g_counters.Clear();
  g_state.policy = BindPolicy::kLocal;
  g_state.cpu_nodes = 1;
  internal::g_small_objects = {1, false, false, false, 1};
}

// Numbers the usable kernel nodes: CPU nodes first, then memory-only nodes,
// each by id. Returns the number of CPU nodes.
int NumberNodes(const Topology& t, State* s) {
  int node = 0;
  for (uint64_t m = t.cpu_nodes; m != 0; m &= m - 1) {
    s->kernel_id[node++] = static_cast<uint8_t>(__builtin_ctzll(m));
  }
  const int cpu_nodes = node;
  for (uint64_t m = t.usable & ~t.cpu_nodes; m != 0; m &= m - 1) {
    s->kernel_id[node++] = static_cast<uint8_t>(__builtin_ctzll(m));
  }
  for (int i = 0; i < node; ++i) s->node_of[s->kernel_id[i]] = i;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    s->cpu_node[cpu] = s->node_of[t.cpu_node[cpu]];
  }
  s->default_node = s->node_of[t.default_node];
  for (int i = 0; i < node; ++i) {
    const int id = s->kernel_id[i];
    s->fallback_len[i] = t.fallback_len[id];
    for (int j = 0; j < t.fallback_len[id]; ++j) {
      s->fallback[i][j] = s->node_of[t.fallback[id][j]];
    }
  }
  return cpu_nodes;
}

// The region code's binder (ReserveRegions).
bool BindToNode(void* start, size_t len, int node) {
  return BindRange(start, len, node);
}

// Turns the layer on over the finished topology, unless the address regions
// cannot be reserved (then it stays off: vanilla).
void Activate() {
  State& s = g_state;
  const int cpu_nodes = NumberNodes(s.topo, &s);
  s.num_nodes = PopCount(s.topo.usable);
  for (int node = 0; node < cpu_nodes; ++node) {
    const uint64_t bit = uint64_t{1} << node;
    if (!((s.topo.proxies >> s.kernel_id[node]) & 1)) {
      s.first_touch_nodes |= bit;
    } else if (s.refused.mbind != 0) {
      // Nothing can bind it: its own and the proxied CPUs' threads place it.
      s.first_touch_nodes |= bit;
      s.unbound_proxies |= bit;
    }
  }
  s.active = true;  // ReserveRegions binds through BindRange
  if (!ReserveRegions(s.num_nodes, s.kernel_id, BindToNode)) {
    s.active = false;
    s.num_nodes = 0;
    ClearTopology(&s.topo);
    return;
  }
  if (cpu_nodes <= kMaxCpuNodes) {
    s.cpu_nodes = cpu_nodes;
    return;
  }
  Line()
      .Add(
          "tcmalloc: more NUMA nodes serve CPUs than per-node small-object "
          "lists can track; small objects share one set of lists "
          "(page-level memory stays per node)")
      .WriteToStderr();
}

// What Init learns from the kernel (get_mempolicy, probes), or a test's
// stand-in.
struct KernelView {
  bool from_kernel;       // true: ask the kernel; false: use the fields
  uint64_t allowed;       // cpuset mems_allowed
  int policy;             // the thread's memory policy mode
  uint64_t policy_nodes;  // and its nodes
  bool home_node;         // set_mempolicy_home_node is available
  // Where /proc/self/{status,cgroup,mountinfo} and the cgroup2 mount are:
  // "" for the real ones, a fake tree in tests.
  const char* proc_root;
  // Tests: the errno get_mempolicy, mbind and move_pages are refused with.
  int get_mempolicy_errno;
  int mbind_errno;
  int move_pages_errno;
};

// The cpuset's memory nodes without get_mempolicy (refused with `err`):
// /proc/self/status, else the cgroup's cpuset.mems.effective. False (one
// line on stderr) if neither can be read.
bool ReadMemsFromFiles(const char* proc_root, int err, uint64_t* mems,
                       Line* where) {
  FileRead r = ReadStatusMems(proc_root, mems, where);
  if (r == FileRead::kMissing) r = ReadCgroupMems(proc_root, mems, where);
  if (r == FileRead::kFound) return true;
  Line()
      .Add("tcmalloc: NUMA layer off: get_mempolicy is refused (")
      .Add(RefusalName(err))
      .Add(r == FileRead::kMalformed
               ? ") and this file is malformed: "
               : ") and no file names the cpuset's memory nodes: ")
      .Add(r == FileRead::kMalformed ? where->c_str() : "/proc/self/status")
      .WriteToStderr();
  return false;
}

// The cgroup's CPUs into *cpus; false if the layer must stay off (a
// malformed file: said on stderr). *bound is set when a file was found.
bool ReadCpuBound(const char* proc_root, CpuMask* cpus, bool* bound,
                  Line* where) {
  const FileRead r = ReadCgroupCpus(proc_root, cpus, where);
  *bound = r == FileRead::kFound;
  if (r != FileRead::kMalformed) return true;
  Line()
      .Add("tcmalloc: NUMA layer off: cannot parse ")
      .Add(where->c_str())
      .WriteToStderr();
  return false;
}

// What the kernel refuses of what the layer would call, from a real
// kernel's answers or a test's. A refused mbind costs the layer its bindings:
// memory-only nodes (nobody there writes them first) are left out, and
// TCMALLOC_NUMA_POLICY=preferred|bind falls back to first touch, said once.
void ProbeRefusals(const KernelView& view, BindPolicy* policy) {
  State& s = g_state;
  s.refused.mbind = view.from_kernel ? ProbeMbind() : view.mbind_errno;
  if (!IsRefusal(s.refused.mbind)) s.refused.mbind = 0;
  s.refused.move_pages =
      view.from_kernel ? ProbeMovePages() : view.move_pages_errno;
  if (!IsRefusal(s.refused.move_pages)) s.refused.move_pages = 0;
  if (s.refused.mbind == 0) return;
  s.topo.memory &= s.topo.with_cpus;
  if (*policy == BindPolicy::kLocal) return;
  Line()
      .Add("tcmalloc: TCMALLOC_NUMA_POLICY=")
      .Add(*policy == BindPolicy::kBind ? "bind" : "preferred")
      .Add(" needs mbind, which the kernel refuses (")
      .Add(RefusalName(s.refused.mbind))
      .Add(": a container's seccomp profile?); using local")
      .WriteToStderr();
  *policy = BindPolicy::kLocal;
}

// Keeps what DecideBinding needs: the task policy (a membind set narrowed to
// the usable nodes, the ones the heaps know) and, only when a binding could
// use it, whether the kernel has home nodes: one zero-length syscall, so the
// common cases pay nothing.
void RecordTaskPolicy(const KernelView& view, BindPolicy policy) {
  State& s = g_state;
  s.task = TaskPolicy{view.policy, view.policy_nodes};
  if (view.policy != MPOL_BIND) return;
  s.task.nodes &= s.topo.usable;
  // `local` binds memory-only nodes as `preferred` does.
  if (policy == BindPolicy::kBind || PopCount(s.task.nodes) < 2) return;
  int err = 0;
  s.caps.home_node = view.from_kernel
                         ? ProbeHomeNode(__builtin_ctzll(s.task.nodes), &err)
                         : view.home_node;
  if (err == EPERM) s.refused.home_node = err;
}

// ApplyBinding may clear home_node from another thread's bind.
KernelCaps LoadCaps() {
  return KernelCaps{__atomic_load_n(&g_state.caps.home_node, __ATOMIC_RELAXED),
                    false};
}

// Whether the heaps look for pages the kernel's NUMA balancing moved: only
// where it can move ours (nodes left to first touch; bound memory stays on
// its node) and move_pages can see where they went.
void DecideCooperation(Balancing knob) {
  State& s = g_state;
  s.balancing = Cooperation::kNone;
  if (!s.kernel_balances || s.policy != BindPolicy::kLocal ||
      s.first_touch_nodes == 0) {
    return;
  }
  if (knob == Balancing::kIgnore) {
    s.balancing = Cooperation::kIgnored;
  } else if (s.refused.move_pages != 0) {
    s.balancing = Cooperation::kBlind;
  } else {
    s.balancing = Cooperation::kCooperating;
  }
}

// A fresh metadata mapping (numa/sparse_memory.h) bound as
// DecideMetadataBinding says: still placed by its first writer, and no
// longer moved by the kernel's NUMA balancing.
void KeepMetadataInPlace(void* start, size_t len) {
  const Binding b = DecideMetadataBinding(g_state.task, g_state.topo.usable);
  KernelCaps caps = {};  // no home node
  ApplyBinding(start, len, b, &caps, &g_state.metadata_counters);
}

// Whether the metadata's first-touch placement is kept from the kernel's NUMA
// balancing. The heaps' objects are the program's data, which balancing may
// move toward the node that uses them (CooperatesWithBalancing); the
// allocator's metadata (log blocks, inboxes, central lists, the class cache)
// is placed where its node's threads use it, and balancing moved it toward
// the other nodes that also touch it: xmalloc-test's owners read their log
// blocks remotely once the kernel had moved them to the releasers' node.
// Not under TCMALLOC_NUMA_BALANCING=ignore, nor where mbind is refused.
void DecideMetadataPlacement(Balancing knob) {
  State& s = g_state;
  s.metadata_stays_put = s.kernel_balances && s.refused.mbind == 0 &&
                         knob != Balancing::kIgnore &&
                         DecideMetadataBinding(s.task, s.topo.usable).apply;
  if (s.metadata_stays_put) SetSparseMappingHook(&KeepMetadataInPlace);
}

// Init's body: reads topology under `root`.
void InitFrom(GetenvFn getenv_fn, const char* root, KernelView view) {
  Reset();
  const Config config = ParseConfig(getenv_fn);
  g_state.interleave_above = config.interleave_above;
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

  // The cpuset's memory nodes: get_mempolicy first, so that the common
  // single-socket case costs one call; files only when it is refused.
  int refused = view.get_mempolicy_errno;
  if (view.from_kernel && !QueryAllowedMems(&view.allowed, &refused) &&
      !IsRefusal(refused)) {
    return;
  }
  if (refused != 0) {
    s.refused.get_mempolicy = refused;
    Line where;
    if (!ReadMemsFromFiles(view.proc_root, refused, &view.allowed, &where)) {
      return;
    }
    StrCopy(s.mems_source, sizeof(s.mems_source), where.c_str());
  }
  // One allowed node (the common single-socket case): one get_mempolicy is
  // all auto mode costs; sysfs is not read.
  if (config.mode == Mode::kAuto && PopCount(view.allowed) < 2) return;
  if (s.refused.get_mempolicy != 0) {
    // Unreadable: the default policy, which the kernel applies to a
    // container's processes unless something set another.
    view.policy = MPOL_DEFAULT;
    view.policy_nodes = 0;
  } else if (view.from_kernel &&
             !QueryTaskPolicy(&view.policy, &view.policy_nodes, &refused)) {
    if (!IsRefusal(refused)) return;
    s.refused.get_mempolicy = refused;
    view.policy = MPOL_DEFAULT;
    view.policy_nodes = 0;
  }
  bool stay_off;
  const uint64_t allowed = ApplyTaskPolicy(
      config.mode, view.policy, view.policy_nodes, view.allowed, &stay_off);
  if (stay_off) return;
  if (config.mode == Mode::kAuto && PopCount(allowed) < 2) return;

  // Only a cgroup's cpuset bounds where every thread may run.
  CpuMask cpus;
  bool cpu_bound;
  Line where;
  if (!ReadCpuBound(view.proc_root, &cpus, &cpu_bound, &where)) return;
  if (!ReadSysfsTopology(root, allowed, &s.topo, cpu_bound ? &cpus : nullptr)) {
    ClearTopology(&s.topo);
    return;
  }
  // Said (CpusSource) only where the cgroup left some CPU out.
  if (s.topo.cpus_left_out > 0) {
    StrCopy(s.cpus_source, sizeof(s.cpus_source), where.c_str());
  }
  BindPolicy policy = config.policy;
  ProbeRefusals(view, &policy);
  g_state.policy = policy;
  if (!FinishTopology(&s.topo)) {
    ClearTopology(&s.topo);
    return;
  }
  const int usable = PopCount(s.topo.usable);
  if (config.mode == Mode::kAuto && usable < 2) return;
  // auto: per-node heaps pay off only if threads run on more than one node.
  // A memory-only node (CXL, HBM) next to one CPU node is not that. Not the
  // calling thread's affinity: a main thread pinned before its first malloc
  // may still start workers on every node.
  if (config.mode == Mode::kAuto && PopCount(s.topo.cpu_nodes) < 2) {
    ClearTopology(&s.topo);
    return;
  }
  RecordTaskPolicy(view, policy);  // before Activate binds regions
  Activate();
  if (s.active && s.refused.move_pages != 0 && s.first_touch_nodes != 0 &&
      policy == BindPolicy::kLocal) {
    s.witness = true;
    SetPagesPerFault(view.from_kernel ? ReadPagesPerFault() : 1);
  }
  if (s.active) {
    Line path;
    path.Add(view.proc_root).Add(kKernelBalancingPath);
    s.kernel_balances = path.ok() && KernelBalancesPages(path.c_str());
  }
  DecideCooperation(config.balancing);
  DecideMetadataPlacement(config.balancing);
}

}  // namespace

void Init(const char* (*getenv_fn)(const char*)) {
  InitFrom(getenv_fn, kSysfsNodeRoot,
           KernelView{true, 0, 0, 0, false, "", 0, 0, 0});
}

void InitForTest(const char* sysfs_root, uint64_t allowed,
                 const char* (*getenv_fn)(const char*), int task_policy,
                 uint64_t task_policy_nodes, bool home_node) {
  // No cgroup under a sysfs tree: the CPUs are not narrowed.
  InitFrom(getenv_fn, sysfs_root,
           KernelView{false, allowed, task_policy, task_policy_nodes, home_node,
                      sysfs_root, 0, 0, 0});
}

void InitWithKernelForTest(const FakeKernel& k,
                           const char* (*getenv_fn)(const char*)) {
  InitFrom(getenv_fn, k.sysfs_root,
           KernelView{false, k.allowed, k.task_policy, k.task_policy_nodes,
                      k.home_node, k.proc_root, k.get_mempolicy_errno,
                      k.mbind_errno, k.move_pages_errno});
}

void ResetForTest() {
  Reset();
  ResetPlacementForTest();
}

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
  return NodeOfCpu(CurrentCpu());
}

int NodeOfCpu(int cpu) {
  if (!g_state.active) return 0;
  if (cpu < 0 || cpu >= kMaxCpus) return g_state.default_node;
  return g_state.cpu_node[cpu];
}

int BorrowFrom(int node, Borrow what, int out[kMaxNodes]) {
  if (!g_state.active || node < 0 || node >= g_state.num_nodes) return 0;
  return BorrowOrder(what, g_state.fallback[node], g_state.fallback_len[node],
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

namespace {
void UpdateSmallObjects() {
  internal::SmallObjects& s = internal::g_small_objects;
  s.strays = s.nodes_with_central_lists > 1 && !s.node_classes;
  __atomic_store_n(&s.sized_free_by_owner, s.node_classes || PlacementStarted(),
                   __ATOMIC_RELAXED);
}
}  // namespace

void SetNodesWithCentralLists(int n) {
  internal::g_small_objects.nodes_with_central_lists = n;
  __atomic_store_n(&internal::g_small_objects.lists_made, n == 1 ? 1 : 0,
                   __ATOMIC_RELEASE);
  UpdateSmallObjects();
}

void MarkNodeListsMade(int node) {
  __atomic_fetch_or(&internal::g_small_objects.lists_made, uint64_t{1} << node,
                    __ATOMIC_RELEASE);
}

void SetNodeClasses(bool on) {
  internal::g_small_objects.node_classes = on;
  UpdateSmallObjects();
}

uint64_t MbindCalls() { return LoadCounter(&g_state.counters.calls); }
uint64_t MbindFailures() { return LoadCounter(&g_state.counters.failures); }
uint64_t BindSkipped() { return LoadCounter(&g_state.counters.skipped); }
int MbindLastErrno() {
  return __atomic_load_n(&g_state.counters.last_errno, __ATOMIC_RELAXED);
}

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

const void* CountersOf(int node) { return &g_counters[node]; }

// --- Placement: memory the program places itself. ---

namespace {

// Written once, under g_placement_lock, before g_placement_started says so.
struct Placement {
  uint64_t nodes;  // kernel ids
  KernelCaps caps;
  bool tried;
  int error;  // PlacementError
};
Placement g_placement;
int g_placement_lock;
// Zero-initialized, 12 KiB: the topology read when the layer is off.
Topology g_placement_topo;

// The usable nodes with the layer off: the cpuset's, narrowed by a membind
// task policy, that have memory. One node (0) when the kernel has no NUMA
// support to ask, or refuses and no file says: a one-node machine places
// everything on node 0.
uint64_t ReadPlacementNodes() {
  uint64_t allowed;
  int refused = 0;
  if (!QueryAllowedMems(&allowed, &refused)) {
    Line where;
    if (!IsRefusal(refused)) return 1;
    g_state.refused.get_mempolicy = refused;
    if (ReadStatusMems("", &allowed, &where) != FileRead::kFound &&
        ReadCgroupMems("", &allowed, &where) != FileRead::kFound) {
      return 1;
    }
  } else {
    int mode;
    uint64_t policy_nodes;
    if (QueryTaskPolicy(&mode, &policy_nodes) && mode == MPOL_BIND) {
      allowed &= policy_nodes;
    }
  }
  if (PopCount(allowed) < 2) return allowed;
  Topology& t = g_placement_topo;
  if (!ReadSysfsTopology(kSysfsNodeRoot, allowed, &t) || !FinishTopology(&t)) {
    ClearTopology(&t);
    return allowed;
  }
  return t.usable;
}

// The placed regions' binder (numa/region.h, SetPlacedBinder).
bool BindPlaced(void* start, size_t len, int id) {
  if (g_state.fake) {
    // Fake nodes do not exist in the kernel: never bind to them.
    BumpCounter(&g_state.counters.skipped);
    return true;
  }
  const Binding b = DecidePlacedBinding(PlacedKernelId(id), g_placement.nodes,
                                        g_placement.caps);
  return ApplyBinding(start, len, b, &g_placement.caps, &g_state.counters);
}

// Placement's answer, decided once: 0, ENOMEM (no node) or EPERM (two nodes
// or more and no mbind: nothing would keep a placement).
int DecidePlacement() {
  g_placement.nodes =
      g_state.active ? g_state.topo.usable : ReadPlacementNodes();
  if (g_placement.nodes == 0) return ENOMEM;
  if (g_state.fake) return 0;
  int err = 0;
  g_placement.caps.weighted_interleave = ProbeWeightedInterleave(&err);
  if (IsRefusal(err)) {
    g_state.refused.mbind = err;
    if (PopCount(g_placement.nodes) >= 2) return EPERM;
  }
  return 0;
}

// TCMALLOC_NUMA_INTERLEAVE_ABOVE cannot interleave without mbind: said once,
// then blocks are placed as without it.
void DropInterleaveAbove() {
  if (g_state.interleave_above == 0) return;
  __atomic_store_n(&g_state.interleave_above, 0, __ATOMIC_RELAXED);
  Line()
      .Add(
          "tcmalloc: ignoring TCMALLOC_NUMA_INTERLEAVE_ABOVE: interleaving "
          "needs mbind, which the kernel refuses (")
      .Add(RefusalName(g_state.refused.mbind))
      .Add(
          ": a container's seccomp profile?); large blocks are placed as "
          "without it")
      .WriteToStderr();
}

}  // namespace

bool StartPlacement() {
  if (PlacementStarted()) return true;
  while (__atomic_exchange_n(&g_placement_lock, 1, __ATOMIC_ACQUIRE) != 0) {
    RawSyscall(SYS_sched_yield);
  }
  if (!g_placement.tried) {
    g_placement.error = DecidePlacement();
    __atomic_store_n(&g_placement.tried, true, __ATOMIC_RELEASE);
    if (g_placement.error == 0) {
      SetPlacedBinder(BindPlaced);
      __atomic_store_n(&internal::g_placement_started, true, __ATOMIC_RELEASE);
      UpdateSmallObjects();  // sized delete looks at addresses from now on
    } else if (g_placement.error == EPERM) {
      DropInterleaveAbove();
    }
  }
  const bool ok = g_placement.error == 0;
  __atomic_store_n(&g_placement_lock, 0, __ATOMIC_RELEASE);
  return ok;
}

int PlacementError() {
  return __atomic_load_n(&g_placement.tried, __ATOMIC_ACQUIRE)
             ? g_placement.error
             : 0;
}

uint64_t PlacementNodes() {
  return __atomic_load_n(&g_placement.tried, __ATOMIC_ACQUIRE)
             ? g_placement.nodes
             : 0;
}

uint64_t InterleaveAbove() {
  return __atomic_load_n(&g_state.interleave_above, __ATOMIC_RELAXED);
}

bool HasRegion(int id) {
  if (IsPlacedRegion(id)) return PlacementStarted();
  return g_state.active && id >= 0 && id < g_state.num_nodes;
}

void ResetPlacementForTest() {
  __atomic_store_n(&internal::g_placement_started, false, __ATOMIC_RELEASE);
  g_placement = Placement{};
  SetPlacedBinder(nullptr);
  UpdateSmallObjects();
}

}  // namespace numa
}  // namespace tcmalloc
