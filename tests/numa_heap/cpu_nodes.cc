#include "tests/numa_heap/cpu_nodes.h"

#include <fcntl.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

namespace {

// `node`'s CPUs from sysfs ("0-3,8"), read with plain syscalls into stack
// buffers: libnuma's queries (numa_run_on_node, numa_node_of_cpu) malloc,
// and the allocator under test would make the calling thread's cache on the
// node it is about to leave.
bool NodeCpus(int node, cpu_set_t* cpus) {
  char path[64];
  snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char list[4096];
  const ssize_t n = read(fd, list, sizeof(list) - 1);
  close(fd);
  if (n <= 0) return false;
  list[n] = '\0';
  CPU_ZERO(cpus);
  char* p = list;
  while (*p >= '0' && *p <= '9') {  // each round takes a number or a range
    const long first = strtol(p, &p, 10);
    const long last = *p == '-' ? strtol(p + 1, &p, 10) : first;
    for (long cpu = first; cpu <= last && cpu < CPU_SETSIZE; ++cpu) {
      CPU_SET(cpu, cpus);
    }
    if (*p == ',') ++p;
  }
  return CPU_COUNT(cpus) > 0;
}

}  // namespace

bool PinToNode(int node) {
  cpu_set_t cpus;
  if (!NodeCpus(node, &cpus) ||
      sched_setaffinity(0, sizeof(cpus), &cpus) != 0) {
    return false;
  }
  // The affinity change moves the thread at its next scheduling point;
  // yield until it has happened (a few rounds at most).
  for (int i = 0; i < 1000; ++i) {
    const int cpu = sched_getcpu();
    if (cpu >= 0 && CPU_ISSET(cpu, &cpus)) return true;
    sched_yield();
  }
  return false;
}

int CurrentNode() {
  const int cpu = sched_getcpu();
  return cpu < 0 ? -1 : numa_node_of_cpu(cpu);
}

}  // namespace region_lab
