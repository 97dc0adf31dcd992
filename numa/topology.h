// The machine's NUMA topology as plain data, built once at Init from sysfs
// (or made up for TCMALLOC_NUMA_FAKE_NODES), and what the process may use,
// read from /proc/self/status and its cgroup v2 cpuset (docs/design.md, "The
// node model"): a cpuset, not affinity, because another thread may widen its
// own. Malloc-free (ByteStream, Line): Init runs inside malloc. Every path is
// taken under `root`, "" on a real system; the unit tests pass a fake tree.
#ifndef NUMA_TCMALLOC_NUMA_TOPOLOGY_H_
#define NUMA_TCMALLOC_NUMA_TOPOLOGY_H_

#include <stdint.h>

#include "numa/nodes.h"
#include "numa/parse.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// How a read went. A missing file is normal (no cgroup v2, no cpuset
// controller there); a malformed one is not.
enum class FileRead : uint8_t { kFound, kMissing, kMalformed };

// CPUs 0..kMaxCpus-1, bit c for CPU c.
struct CpuMask {
  uint64_t words[kMaxCpus / 64];
  bool Has(int cpu) const {
    return cpu >= 0 && cpu < kMaxCpus && ((words[cpu / 64] >> (cpu % 64)) & 1);
  }
};

// Mems_allowed_list of root/proc/self/status, what
// get_mempolicy(MPOL_F_MEMS_ALLOWED) returns. *where names the file read.
FileRead ReadStatusMems(const char* root, uint64_t* mems, Line* where);

// cpuset.cpus.effective and cpuset.mems.effective of the process's cgroup
// v2 directory, or of its nearest ancestor that has the file, found from
// root/proc/self/cgroup and the cgroup2 mount of root/proc/self/mountinfo.
// kMissing when there is no cgroup2 mount, the cgroup lies outside it, or no
// directory up to the mount has the file. *where names the file read.
FileRead ReadCgroupCpus(const char* root, CpuMask* cpus, Line* where);
FileRead ReadCgroupMems(const char* root, uint64_t* mems, Line* where);

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
