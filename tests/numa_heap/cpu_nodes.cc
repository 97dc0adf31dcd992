#include "tests/numa_heap/cpu_nodes.h"

#include <numa.h>
#include <sched.h>

namespace region_lab {

std::vector<int> CpuNodes() {
  std::vector<int> nodes;
  if (numa_available() < 0) return nodes;
  bitmask* cpus = numa_allocate_cpumask();
  for (int node = 0; node <= numa_max_node(); ++node) {
    if (numa_node_to_cpus(node, cpus) == 0 && numa_bitmask_weight(cpus) > 0) {
      nodes.push_back(node);
    }
  }
  numa_free_cpumask(cpus);
  return nodes;
}

bool PinToNode(int node) {
  if (numa_run_on_node(node) != 0) return false;
  // The affinity change moves the thread at its next scheduling point;
  // yield until it has happened (a few rounds at most).
  for (int i = 0; i < 1000 && CurrentNode() != node; ++i) sched_yield();
  return CurrentNode() == node;
}

int CurrentNode() {
  const int cpu = sched_getcpu();
  return cpu < 0 ? -1 : numa_node_of_cpu(cpu);
}

}  // namespace region_lab
