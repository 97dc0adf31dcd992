// One thread per listed node: each pins itself to that node's first CPU,
// allocates --mib MiB in 1 MiB blocks (page-level spans) and writes every
// page; then main reports, per thread, where its pages landed. Used in the
// lab to check that under `numactl --membind=1,3` each thread's memory is on
// its own node (tests/numa_heap/membind_lab_run).
//
//   node_threads --nodes 1,3 --mib M
//   prints one line per thread: "thread node1: node1=A node3=B"
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/page_nodes.h"

namespace {

constexpr size_t kBlock = 1 << 20;
constexpr size_t kPage = 4096;

struct Worker {
  int node;
  long mib;
  bool ok = false;
  std::vector<char*> blocks;

  void Run() {
    if (!region_lab::PinToNode(node)) return;
    for (long i = 0; i < mib; ++i) {
      char* p = static_cast<char*>(std::malloc(kBlock));
      if (p == nullptr) return;
      for (size_t off = 0; off < kBlock; off += kPage) p[off] = 1;
      blocks.push_back(p);
    }
    ok = true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> nodes;
  long mib = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--nodes") == 0) {
      for (char* t = std::strtok(argv[i + 1], ","); t != nullptr;
           t = std::strtok(nullptr, ",")) {
        nodes.push_back(std::atoi(t));
      }
    }
  }
  if (nodes.empty() || mib <= 0) {
    std::fprintf(stderr, "usage: node_threads --nodes A,B,... --mib M\n");
    return 2;
  }
  std::vector<Worker> workers(nodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nodes.size(); ++i) {
    workers[i].node = nodes[i];
    workers[i].mib = mib;
  }
  // One after the other: a thread's pages must be placed by its own node's
  // binding, not by racing for the same free memory.
  for (Worker& w : workers) std::thread(&Worker::Run, &w).join();

  int status = 0;
  for (const Worker& w : workers) {
    if (!w.ok) {
      std::printf("thread node%d: failed\n", w.node);
      status = 3;
      continue;
    }
    std::vector<void*> pages;
    for (char* block : w.blocks) {
      for (size_t off = 0; off < kBlock; off += kPage)
        pages.push_back(block + off);
    }
    std::map<int, long> per_node;
    if (!region_lab::CountPageNodes(pages, &per_node)) {
      std::perror("move_pages");
      return 2;
    }
    std::printf("thread node%d:", w.node);
    for (const auto& [n, count] : per_node)
      std::printf(" node%d=%ld", n, count);
    std::printf("\n");
  }
  return status;
}
