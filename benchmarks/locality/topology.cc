#include "benchmarks/locality/topology.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace locality {
namespace {

// Parses a kernel list such as "0-3,8,10-11".
std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item == "\n") continue;
    int lo = 0, hi = 0;
    if (std::sscanf(item.c_str(), "%d-%d", &lo, &hi) == 2) {
      for (int i = lo; i <= hi; ++i) out.push_back(i);
    } else if (std::sscanf(item.c_str(), "%d", &lo) == 1) {
      out.push_back(lo);
    }
  }
  return out;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::getline(in, *text);
  return true;
}

}  // namespace

Topology ReadTopology() {
  Topology t;
  std::string text;
  const std::string base = "/sys/devices/system/node/";
  std::vector<int> online;
  if (ReadFile(base + "online", &text)) online = ParseList(text);
  for (int node : online) {
    if (static_cast<int>(t.cpus.size()) <= node) t.cpus.resize(node + 1);
    std::string list;
    const std::string dir = base + "node" + std::to_string(node) + "/";
    if (ReadFile(dir + "cpulist", &list)) t.cpus[node] = ParseList(list);
    if (!t.cpus[node].empty()) t.cpu_nodes.push_back(node);
    if (ReadFile(base + "has_memory", &text)) {
      for (int m : ParseList(text)) {
        if (m == node) t.memory_nodes.push_back(node);
      }
    }
  }
  if (t.cpu_nodes.empty()) {
    // No NUMA in the kernel: one node with every CPU.
    t.cpus.assign(1, {});
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < n; ++i) t.cpus[0].push_back(static_cast<int>(i));
    t.cpu_nodes = {0};
  }
  if (t.memory_nodes.empty()) t.memory_nodes = {t.cpu_nodes.front()};
  return t;
}

int CurrentNode() {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return 0;
  return static_cast<int>(node);
}

bool PinToNode(const Topology& topology, int node) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : topology.cpus[node]) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) return false;
  // The kernel moves the thread at its next scheduling point; make one happen
  // so that everything after this call runs (and first-touches) on `node`.
  for (int i = 0; i < 1000 && CurrentNode() != node; ++i) sched_yield();
  return CurrentNode() == node;
}

}  // namespace locality
