// The reuse check's cost in a busy process, where the heap's notes stand in
// for move_pages (numa/reuse_witness.h): one thread per CPU node, pinned,
// reuses its own block (malloc, write every page, free) while, with
// --noise, another thread keeps faulting fresh memory outside the heap
// (mmap, touch, munmap), as a busy process's other threads do. Prints each
// worker's minor faults over the rounds after its first, and the blocks the
// heap released for reuse. Figures for docs/design.md, not a test.
//
//   busy_reuse [--mib M] [--rounds R] [--noise]
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

long MinorFaults() {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 8;
  int rounds = 100;
  bool noise = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
      mib = std::strtoul(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--noise") == 0) {
      noise = true;
    } else {
      std::fprintf(stderr,
                   "usage: busy_reuse [--mib M] [--rounds R] [--noise]\n");
      return 2;
    }
  }
  const size_t bytes = mib << 20;
  const std::vector<int> nodes = region_lab::CpuNodes();
  if (nodes.size() < 2) {
    std::fprintf(stderr, "busy_reuse: needs two CPU nodes or more\n");
    return 1;
  }
  std::atomic<bool> done{false};
  std::atomic<long> noise_faults{0};
  std::thread noisy;
  if (noise) {
    noisy = std::thread([&] {
      const long before = MinorFaults();
      while (!done.load()) {
        void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        madvise(p, 1 << 20, MADV_NOHUGEPAGE);
        for (size_t off = 0; off < (1 << 20); off += 4096) {
          static_cast<char*>(p)[off] = 1;
        }
        munmap(p, 1 << 20);
      }
      noise_faults = MinorFaults() - before;
    });
  }
  std::vector<long> faults(nodes.size(), -1);
  std::vector<std::thread> workers;
  for (size_t t = 0; t < nodes.size(); ++t) {
    workers.emplace_back([&, t] {
      if (!region_lab::PinToNode(nodes[t])) return;
      long before = 0;
      for (int r = 0; r <= rounds; ++r) {
        if (r == 1) before = MinorFaults();
        char* p = static_cast<char*>(std::malloc(bytes));
        for (size_t off = 0; off < bytes; off += 4096) p[off] = 1;
        std::free(p);
      }
      faults[t] = MinorFaults() - before;
    });
  }
  for (auto& w : workers) w.join();
  done = true;
  if (noisy.joinable()) noisy.join();
  for (size_t t = 0; t < nodes.size(); ++t) {
    std::printf("node %d: %ld faults in %d rounds of %zu MiB\n", nodes[t],
                faults[t], rounds, mib);
  }
  if (noise) std::printf("noise: %ld faults\n", noise_faults.load());
  const region_lab::Property released = region_lab::Numa("released_for_reuse");
  std::printf(
      "released_for_reuse: %s\n",
      released.known ? std::to_string(released.value).c_str() : "unknown");
  return 0;
}
