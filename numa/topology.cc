// The NUMA topology from sysfs, or a fake one (numa/topology.h).
#include "numa/topology.h"

#include <string.h>

#include "numa/byte_stream.h"
#include "numa/line.h"
#include "numa/parse.h"

namespace tcmalloc {
namespace numa {
namespace {

// Parses the node list in file `root`/`name` into *mask. With `missing`, a
// file that cannot be opened sets *missing instead of failing.
bool ReadMaskFile(const char* root, const char* name, uint64_t* mask,
                  int* beyond, bool* missing = nullptr) {
  Line p;
  p.Add(root).Add("/").Add(name);
  if (!p.ok()) return false;
  ByteStream in(p.c_str());
  if (!in.ok() && missing != nullptr) {
    *missing = true;
    return true;
  }
  return in.ok() && ParseNodeMask(&in, mask, beyond);
}

bool NodeFilePath(const char* root, int node, const char* file, Line* p) {
  p->Add(root).Add("/node").AddUint(node).Add("/").Add(file);
  return p->ok();
}

struct CpuCtx {
  Topology* t;
  uint8_t node;
  bool any;
  const CpuMask* allowed;  // null: every CPU
};

bool AddCpus(void* ctx, uint32_t lo, uint32_t hi) {
  CpuCtx* c = static_cast<CpuCtx*>(ctx);
  for (uint64_t cpu = lo; cpu <= hi && cpu < kMaxCpus; ++cpu) {
    // A CPU listed under two nodes means sysfs is inconsistent: give up.
    if (c->t->cpu_node[cpu] != kNoNode) return false;
    if (c->allowed != nullptr && !c->allowed->Has(static_cast<int>(cpu))) {
      c->t->cpus_left_out++;
      continue;
    }
    c->t->cpu_node[cpu] = c->node;
    c->any = true;
  }
  return true;
}

struct RowCtx {
  Topology* t;
  int from;
  int column;        // index among online nodes, ascending
  uint64_t columns;  // online nodes < kMaxNodes not yet given a distance
};

// The kernel prints one distance per online node, in ascending node id order
// (drivers/base/node.c, for_each_online_node), so with sparse ids the k-th
// column is the k-th online node, not node k.
bool AddDistance(void* ctx, uint32_t lo, uint32_t hi) {
  RowCtx* r = static_cast<RowCtx*>(ctx);
  if (lo != hi || lo == 0 || lo > 255) return false;
  if (r->columns != 0) {
    int to = __builtin_ctzll(r->columns);
    r->columns &= r->columns - 1;
    r->t->distance[r->from][to] = static_cast<uint8_t>(lo);
  }
  // Columns of online nodes >= kMaxNodes come last and are ignored.
  r->column++;
  return true;
}

bool ReadNode(const char* root, int node, bool need_meminfo, int online_count,
              const CpuMask* cpus, Topology* t) {
  {
    Line p;
    if (!NodeFilePath(root, node, "cpulist", &p)) return false;
    ByteStream in(p.c_str());
    CpuCtx ctx = {t, static_cast<uint8_t>(node), false, cpus};
    if (!in.ok() || !ParseRanges(&in, AddCpus, &ctx)) return false;
    if (ctx.any) t->with_cpus |= uint64_t{1} << node;
  }
  {
    Line p;
    if (!NodeFilePath(root, node, "distance", &p)) return false;
    ByteStream in(p.c_str());
    RowCtx ctx = {t, node, 0, t->online};
    if (!in.ok() || !ParseRanges(&in, AddDistance, &ctx)) return false;
    if (ctx.column != online_count) return false;
  }
  if (need_meminfo) {
    Line p;
    if (!NodeFilePath(root, node, "meminfo", &p)) return false;
    ByteStream in(p.c_str());
    uint64_t kb;
    if (!in.ok() || !ParseMemTotal(&in, &kb)) return false;
    if (kb > 0) t->memory |= uint64_t{1} << node;
  }
  return true;
}

// Nearest node to `from` among `candidates` (ties by lowest id), or -1.
int Nearest(const Topology& t, int from, uint64_t candidates) {
  int best = -1;
  for (uint64_t m = candidates; m != 0; m &= m - 1) {
    int to = __builtin_ctzll(m);
    if (best < 0 || t.distance[from][to] < t.distance[from][best]) best = to;
  }
  return best;
}

}  // namespace

void ClearTopology(Topology* t) {
  memset(t, 0, sizeof(*t));
  memset(t->cpu_node, kNoNode, sizeof(t->cpu_node));
}

bool ReadSysfsTopology(const char* root, uint64_t allowed, Topology* t,
                       const CpuMask* cpus) {
  ClearTopology(t);
  t->allowed = allowed;
  int beyond = 0;
  if (!ReadMaskFile(root, "online", &t->online, &beyond)) return false;
  if (t->online == 0) return false;
  const int online_count = PopCount(t->online) + beyond;
  // has_memory (N_MEMORY) is there since Linux 2.6.35; meminfo is the
  // fallback for trees without it.
  bool need_meminfo = false;
  if (!ReadMaskFile(root, "has_memory", &t->memory, nullptr, &need_meminfo)) {
    return false;
  }
  for (uint64_t m = t->online; m != 0; m &= m - 1) {
    if (!ReadNode(root, __builtin_ctzll(m), need_meminfo, online_count, cpus,
                  t)) {
      return false;
    }
  }
  t->memory &= t->online;
  return true;
}

void BuildFakeTopology(int nodes, Topology* t) {
  ClearTopology(t);
  const uint64_t all = nodes >= 64 ? ~uint64_t{0} : (uint64_t{1} << nodes) - 1;
  t->online = t->memory = t->with_cpus = t->allowed = all;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    t->cpu_node[cpu] = static_cast<uint8_t>(cpu % nodes);
  }
  for (int i = 0; i < nodes; ++i) {
    for (int j = 0; j < nodes; ++j) {
      int d = 10 + 10 * (i > j ? i - j : j - i);
      t->distance[i][j] = static_cast<uint8_t>(d > 254 ? 254 : d);
    }
  }
}

bool FinishTopology(Topology* t) {
  t->usable = t->memory & t->allowed & t->online;
  if (t->usable == 0) return false;
  // A thread's node should be a node with CPUs: a memory-only (CXL/HBM-like)
  // node only serves as a fallback, unless it is all the process may use.
  uint64_t cpu_nodes = t->usable & t->with_cpus;
  if (cpu_nodes == 0) cpu_nodes = t->usable;
  t->cpu_nodes = cpu_nodes;

  uint8_t serving[kMaxNodes];
  for (int n = 0; n < kMaxNodes; ++n) {
    int h = HasNode(cpu_nodes, n) ? n : Nearest(*t, n, cpu_nodes);
    serving[n] = static_cast<uint8_t>(h);
  }
  t->default_node = static_cast<uint8_t>(__builtin_ctzll(cpu_nodes));
  t->proxies = 0;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    uint8_t n = t->cpu_node[cpu];
    t->cpu_node[cpu] = (n == kNoNode) ? t->default_node : serving[n];
    if (n != kNoNode && serving[n] != n) {
      t->proxies |= uint64_t{1} << serving[n];
    }
  }

  // Fallback order: insertion sort of the other usable nodes by distance;
  // only a strictly smaller distance moves a node forward, so ties stay by id.
  for (int n = 0; n < kMaxNodes; ++n) {
    int len = 0;
    for (uint64_t m = t->usable & ~(uint64_t{1} << n); m != 0; m &= m - 1) {
      int to = __builtin_ctzll(m);
      int i = len++;
      while (i > 0 &&
             t->distance[n][to] < t->distance[n][t->fallback[n][i - 1]]) {
        t->fallback[n][i] = t->fallback[n][i - 1];
        --i;
      }
      t->fallback[n][i] = static_cast<uint8_t>(to);
    }
    t->fallback_len[n] = static_cast<uint8_t>(len);
  }
  return true;
}

}  // namespace numa
}  // namespace tcmalloc
