// Init: reads the knobs and the topology once and decides the layer's state
// (numa/state.h); after that every numa.h call is a few loads.
#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>

#include "numa/balancing.h"
#include "numa/counters.h"
#include "numa/mempolicy.h"
#include "numa/node_class.h"
#include "numa/page_sample.h"
#include "numa/parse.h"
#include "numa/region.h"
#include "numa/reuse_witness.h"
#include "numa/small_objects.h"
#include "numa/sparse_memory.h"
#include "numa/state.h"
#include "numa/topology.h"

namespace tcmalloc {
namespace numa {

void ResetState() {
  SetSparseMappingHook(nullptr);
  SetSparseArena(nullptr);
  memset(&g_state, 0, sizeof(g_state));
  ClearCounters();
  g_state.policy = BindPolicy::kLocal;
  g_state.cpu_nodes = 1;
  internal::g_small_objects = {1, false, false, false, 1};
}

namespace {

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
  if (!ReserveRegions(s.num_nodes, s.kernel_id, BindRange)) {
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

// The cpuset's memory nodes into view->allowed: get_mempolicy first, so
// that the common single-socket case costs one call; where it is refused,
// /proc/self/status, else the cgroup's cpuset.mems.effective. False if
// nothing names them; `for_layer`: Init's look, which says why on stderr
// and keeps the file's name (MemsSource).
bool ReadMems(KernelView* view, bool for_layer) {
  int refused = view->get_mempolicy_errno;
  if (view->from_kernel && !QueryAllowedMems(&view->allowed, &refused) &&
      !IsRefusal(refused)) {
    return false;
  }
  if (refused == 0) return true;
  g_state.refused.get_mempolicy = refused;
  Line where;
  FileRead r = ReadStatusMems(view->proc_root, &view->allowed, &where);
  if (r == FileRead::kMissing) {
    r = ReadCgroupMems(view->proc_root, &view->allowed, &where);
  }
  if (!for_layer) return r == FileRead::kFound;
  if (r == FileRead::kFound) {
    StrCopy(g_state.mems_source, sizeof(g_state.mems_source), where.c_str());
    return true;
  }
  Line()
      .Add("tcmalloc: NUMA layer off: get_mempolicy is refused (")
      .Add(RefusalName(refused))
      .Add(r == FileRead::kMalformed
               ? ") and this file is malformed: "
               : ") and no file names the cpuset's memory nodes: ")
      .Add(r == FileRead::kMalformed ? where.c_str() : "/proc/self/status")
      .WriteToStderr();
  return false;
}

// The thread's memory policy into view->policy and policy_nodes; where
// get_mempolicy is refused, the default policy, which the kernel applies to
// a container's processes unless something set another. False if the kernel
// cannot say.
bool ReadTaskPolicy(KernelView* view) {
  if (g_state.refused.get_mempolicy == 0) {
    int refused = 0;
    if (!view->from_kernel ||
        QueryTaskPolicy(&view->policy, &view->policy_nodes, &refused)) {
      return true;
    }
    if (!IsRefusal(refused)) return false;
    g_state.refused.get_mempolicy = refused;
  }
  view->policy = MPOL_DEFAULT;
  view->policy_nodes = 0;
  return true;
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

// A fresh metadata mapping (numa/sparse_memory.h) bound as
// DecideMetadataBinding says: still placed by its first writer, and no
// longer moved by the kernel's NUMA balancing.
void KeepMetadataInPlace(void* start, size_t len) {
  const Binding b = DecideMetadataBinding(g_state.task, g_state.topo.usable);
  KernelCaps caps = {};  // no home node
  ApplyBinding(start, len, b, &caps, &g_state.metadata_counters);
}

// What the layer does about the kernel's NUMA balancing (docs/design.md,
// "The kernel's NUMA balancing"): the heaps look for moved pages only where
// a node is left to first touch and move_pages answers; the metadata stays
// put as MetadataStaysPut (numa.h) says.
void DecideBalancing(Balancing knob) {
  State& s = g_state;
  s.balancing = Cooperation::kNone;
  if (s.kernel_balances && s.policy == BindPolicy::kLocal &&
      s.first_touch_nodes != 0) {
    s.balancing = knob == Balancing::kIgnore || s.refused.move_pages != 0
                      ? Cooperation::kUnchecked
                      : Cooperation::kCooperating;
  }
  s.metadata_stays_put = s.kernel_balances && s.refused.mbind == 0 &&
                         knob != Balancing::kIgnore &&
                         DecideMetadataBinding(s.task, s.topo.usable).apply;
  if (s.metadata_stays_put) SetSparseMappingHook(&KeepMetadataInPlace);
}

}  // namespace

void InitFrom(GetenvFn getenv_fn, const char* root, KernelView view) {
  ResetState();
  const Config config = ParseConfig(getenv_fn);
  g_state.interleave_above = config.interleave_above;
  // TCMALLOC_NUMA=0: vanilla, so no syscall beyond reading the environment.
  if (config.mode == Mode::kOff) return;
  g_state.policy = config.policy;
  g_state.stats = config.stats;
  g_state.remote_free = config.remote_free;
  g_state.migration = config.migration;
  g_state.max_stranded_bytes = uint64_t{config.max_stranded_mb} << 20;
  g_state.stranded_after_ns = uint64_t{config.stranded_idle_ms} * 1000000;
  State& s = g_state;

  if (config.fake_nodes > 0) {
    BuildFakeTopology(config.fake_nodes, &s.topo);
    FinishTopology(&s.topo);
    s.fake = true;
    Activate();
    return;
  }

  if (!ReadMems(&view, true)) return;
  // One allowed node (the common single-socket case): one get_mempolicy is
  // all auto mode costs; sysfs is not read.
  if (config.mode == Mode::kAuto && PopCount(view.allowed) < 2) return;
  if (!ReadTaskPolicy(&view)) return;
  bool stay_off;
  const uint64_t allowed = ApplyTaskPolicy(
      config.mode, view.policy, view.policy_nodes, view.allowed, &stay_off);
  if (stay_off) return;
  if (config.mode == Mode::kAuto && PopCount(allowed) < 2) return;

  // Only a cgroup's cpuset bounds where every thread may run.
  CpuMask cpus;
  Line where;
  const FileRead cpus_read = ReadCgroupCpus(view.proc_root, &cpus, &where);
  if (cpus_read == FileRead::kMalformed) {
    Line()
        .Add("tcmalloc: NUMA layer off: cannot parse ")
        .Add(where.c_str())
        .WriteToStderr();
    return;
  }
  if (!ReadSysfsTopology(root, allowed, &s.topo,
                         cpus_read == FileRead::kFound ? &cpus : nullptr)) {
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
  // auto: two CPU nodes (docs/design.md, "The node model"), whatever the
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
  DecideBalancing(config.balancing);
}

uint64_t DiscoverPlacementNodes() {
  KernelView view = kRealKernel;
  if (!ReadMems(&view, false)) return 1;
  bool stay_off;
  if (ReadTaskPolicy(&view)) {
    view.allowed = ApplyTaskPolicy(Mode::kOn, view.policy, view.policy_nodes,
                                   view.allowed, &stay_off);
  }
  if (PopCount(view.allowed) < 2) return view.allowed;
  Topology& t = g_state.topo;
  if (!ReadSysfsTopology(kSysfsNodeRoot, view.allowed, &t) ||
      !FinishTopology(&t)) {
    ClearTopology(&t);
    return view.allowed;
  }
  return t.usable;
}

void Init(const char* (*getenv_fn)(const char*)) {
  InitFrom(getenv_fn, kSysfsNodeRoot, kRealKernel);
}

}  // namespace numa
}  // namespace tcmalloc
