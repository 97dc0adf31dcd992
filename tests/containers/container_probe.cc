// Lab probe for the NUMA layer inside a container (issue 30;
// tests/containers/container_lab_run). Runs with the allocator LD_PRELOADed
// and reports what the lab script judges:
//
//   container_probe props
//     "prop <name> <value>" for the layer's properties, refusals included
//     ("unknown" when the allocator does not answer: vanilla answers none),
//     then "stats: <line>" for every GetStats line that mentions NUMA.
//
//   container_probe pages [--mib M]
//     One thread per CPU node the process may run on, pinned there, writes
//     4000 small objects (16 B - 8 KiB) and M MiB (default 16) of 1-4 MiB
//     blocks and keeps them; then "pages node<K> <count>" for the pages of
//     all of them, and "pages threads <T>". Where the kernel keeps the
//     memory of a cgroup whose cpuset.mems is one node.
//
// Exit status 0, 1 when a page could not be looked up, 2 for usage errors.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/page_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMiB = size_t{1} << 20;

int Props() {
  for (const char* name :
       {"active", "num_nodes", "cpu_nodes", "mbind_calls", "mbind_failures",
        "refused_get_mempolicy", "refused_mbind",
        "refused_set_mempolicy_home_node", "refused_move_pages",
        "witnessed_returns", "released_for_reuse", "placement_nodes"}) {
    std::printf("prop %s %s\n", name,
                region_lab::ValueText(region_lab::Numa(name)).c_str());
  }
  region_lab::PrintNumaStatsLines();
  return 0;
}

// The CPU nodes this process may run on (its affinity, which a cgroup's
// cpuset bounds).
std::vector<int> RunnableNodes() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  std::vector<int> nodes;
  for (int node : region_lab::CpuNodes()) {
    std::string path =
        "/sys/devices/system/node/node" + std::to_string(node) + "/cpulist";
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) continue;
    int lo, hi;
    bool any = false;
    while (std::fscanf(f, "%d", &lo) == 1) {
      hi = lo;
      if (std::fscanf(f, "-%d", &hi) != 1) hi = lo;
      for (int c = lo; c <= hi; ++c) any = any || CPU_ISSET(c, &set);
      if (std::fgetc(f) != ',') break;
    }
    std::fclose(f);
    if (any) nodes.push_back(node);
  }
  return nodes;
}

int Pages(size_t mib) {
  const std::vector<int> nodes = RunnableNodes();
  if (nodes.empty()) return 1;
  std::vector<std::vector<std::pair<char*, size_t>>> blocks(nodes.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < nodes.size(); ++t) {
    threads.emplace_back([&, t] {
      if (!region_lab::PinToNode(nodes[t])) return;
      for (int i = 0; i < 4000; ++i) {
        const size_t size = size_t{16} << (i % 10);
        char* p = static_cast<char*>(std::malloc(size));
        std::memset(p, 1, size);
        blocks[t].emplace_back(p, size);
      }
      for (size_t done = 0, i = 0; done < mib * kMiB; ++i) {
        const size_t size = (1 + i % 4) * kMiB;
        char* p = static_cast<char*>(std::malloc(size));
        std::memset(p, 1, size);
        blocks[t].emplace_back(p, size);
        done += size;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::map<uintptr_t, bool> seen;
  std::vector<void*> pages;
  for (const auto& list : blocks) {
    for (const auto& [p, n] : list) {
      const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
      const uintptr_t last =
          (reinterpret_cast<uintptr_t>(p) + n - 1) & ~(kPage - 1);
      for (uintptr_t a = first; a <= last; a += kPage) {
        if (!seen[a]) {
          seen[a] = true;
          pages.push_back(reinterpret_cast<void*>(a));
        }
      }
    }
  }
  std::map<int, long> by_node;
  if (!region_lab::CountPageNodes(pages, &by_node)) return 1;
  for (const auto& [node, count] : by_node) {
    std::printf("pages node%d %ld\n", node, count);
  }
  std::printf("pages threads %zu\n", nodes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "props") == 0) return Props();
  if (argc >= 2 && std::strcmp(argv[1], "pages") == 0) {
    long mib = 16;
    if (argc == 4 && std::strcmp(argv[2], "--mib") == 0) {
      mib = std::atol(argv[3]);
    }
    if (mib > 0) return Pages(static_cast<size_t>(mib));
  }
  std::fprintf(stderr, "usage: container_probe props | pages [--mib M]\n");
  return 2;
}
