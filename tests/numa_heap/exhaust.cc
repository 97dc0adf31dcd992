// Fills one NUMA node: pins itself to a CPU of --node, allocates --mib MiB in
// 1 MiB blocks (page-level spans), writes every page, then reports where the
// pages landed. Used in the lab to check what the binding policies do when a
// node runs out (docs/configuration.md, TCMALLOC_NUMA_POLICY).
//
//   exhaust --node N --mib M
//   prints: "allocated M MiB" then "pages: node0=A node1=B ..."
#include <numaif.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr size_t kBlock = 1 << 20;
constexpr size_t kPage = 4096;

bool PinToNode(int node) {
  const std::string path =
      "/sys/devices/system/node/node" + std::to_string(node) + "/cpulist";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  int cpu = -1;
  const int n = std::fscanf(f, "%d", &cpu);
  std::fclose(f);
  if (n != 1) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int node = -1;
  long mib = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--node") == 0) node = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::atol(argv[i + 1]);
  }
  if (node < 0 || mib <= 0) {
    std::fprintf(stderr, "usage: exhaust --node N --mib M\n");
    return 2;
  }
  if (!PinToNode(node)) {
    std::fprintf(stderr, "exhaust: cannot pin to node %d\n", node);
    return 2;
  }
  std::vector<char*> blocks;
  for (long i = 0; i < mib; ++i) {
    char* p = static_cast<char*>(std::malloc(kBlock));
    if (p == nullptr) {
      std::printf("malloc failed after %ld MiB\n", i);
      return 3;
    }
    for (size_t off = 0; off < kBlock; off += kPage) p[off] = 1;
    blocks.push_back(p);
  }
  std::printf("allocated %ld MiB\n", mib);
  std::fflush(stdout);

  std::map<int, long> pages_per_node;
  std::vector<void*> pages(kBlock / kPage);
  std::vector<int> status(pages.size());
  for (char* block : blocks) {
    for (size_t i = 0; i < pages.size(); ++i) pages[i] = block + i * kPage;
    if (move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0) !=
        0) {
      std::perror("move_pages");
      return 2;
    }
    for (int s : status) ++pages_per_node[s];
  }
  std::printf("pages:");
  for (const auto& [n, count] : pages_per_node) {
    std::printf(" node%d=%ld", n, count);
  }
  std::printf("\n");
  return 0;
}
