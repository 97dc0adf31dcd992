// The NUMA shape the probe sees: which nodes have CPUs, and how to pin a thread
// to one. Read from /sys so that it needs no libnuma and works on a kernel
// without NUMA (one node).
#ifndef BENCHMARKS_LOCALITY_TOPOLOGY_H_
#define BENCHMARKS_LOCALITY_TOPOLOGY_H_

#include <vector>

namespace locality {

struct Topology {
  // Node ids that have at least one online CPU, ascending. Never empty.
  std::vector<int> cpu_nodes;
  // Node ids that have memory (including CPU-less nodes), ascending. Never
  // empty.
  std::vector<int> memory_nodes;
  // cpus[node]: the CPUs of that node (empty for CPU-less nodes).
  std::vector<std::vector<int>> cpus;
};

// Reads /sys/devices/system/node; falls back to one node holding every CPU.
Topology ReadTopology();

// Restricts the calling thread to the CPUs of `node` and waits until it runs
// there. Returns false if the kernel refuses.
bool PinToNode(const Topology& topology, int node);

// The node of the CPU the calling thread is running on.
int CurrentNode();

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_TOPOLOGY_H_
