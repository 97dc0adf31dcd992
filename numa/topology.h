// The machine's NUMA topology as plain data, built once at Init from sysfs
// (or made up for TCMALLOC_NUMA_FAKE_NODES), plus the derived tables the hot
// paths read: which memory node serves each CPU, and per-node fallback order.
#ifndef NUMA_TCMALLOC_NUMA_TOPOLOGY_H_
#define NUMA_TCMALLOC_NUMA_TOPOLOGY_H_

#include <stdint.h>

#include "numa/cpuset.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

inline constexpr char kSysfsNodeRoot[] = "/sys/devices/system/node";

// POD: zero-initialized globals need no constructor. Node masks have bit i
// for node i.
struct Topology {
  uint64_t online;       // nodes the kernel lists as online
  uint64_t memory;       // nodes with memory
  uint64_t with_cpus;    // nodes with at least one CPU
  uint64_t allowed;      // get_mempolicy(MPOL_F_MEMS_ALLOWED) (cpuset)
  uint64_t usable;       // memory & allowed: nodes a heap may live on
  uint64_t cpu_nodes;    // usable nodes that serve CPUs (FinishTopology)
  uint64_t proxies;      // nodes that also serve CPUs of a node not usable
                         // (FinishTopology)
  uint8_t default_node;  // serves CPUs beyond kMaxCpus or of no node
  // CPUs of online nodes that ReadSysfsTopology's `cpus` left out.
  int cpus_left_out;
  // Before FinishTopology: the kernel's node of each CPU (kNoNode if none).
  // After: the usable node that serves the CPU (the CPU's node).
  uint8_t cpu_node[kMaxCpus];
  uint8_t distance[kMaxNodes][kMaxNodes];  // SLIT: distance[from][to]
  uint8_t fallback_len[kMaxNodes];
  uint8_t fallback[kMaxNodes][kMaxNodes];  // usable nodes but self, nearest 1st
};

// Resets *t to "nothing known" (no nodes, every CPU kNoNode).
void ClearTopology(Topology* t);

// Fills *t from `root` (normally kSysfsNodeRoot): online, has_memory (else
// each node's meminfo), nodeN/cpulist and nodeN/distance, with `allowed` as
// the allowed-mems mask. With `cpus` (a cgroup cpuset), only those CPUs
// count. False on any open or parse error. Call FinishTopology next.
bool ReadSysfsTopology(const char* root, uint64_t allowed, Topology* t,
                       const CpuMask* cpus = nullptr);

// Fills *t with `nodes` (2..kMaxNodes) fake nodes, all allowed, CPU c on
// node c % nodes, distance 10 + 10 * |i - j| up to 254 (SLIT's largest).
// Call FinishTopology next.
void BuildFakeTopology(int nodes, Topology* t);

// Derives usable, the CPU nodes and the fallback orders from the raw data.
// A CPU's node is its own node if usable, else the nearest usable node that
// has CPUs (ties by id), its proxy; only if no usable node has CPUs may a
// memory-only node serve CPUs. False if no node is usable.
bool FinishTopology(Topology* t);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_TOPOLOGY_H_
