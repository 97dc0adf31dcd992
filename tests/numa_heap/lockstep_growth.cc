// Test A of the region lab (tests/numa_heap/region_lab_run, issue 13): how
// many mappings a heap that grows on every node at once leaves behind.
//
// One thread per CPU node, pinned there, allocates --mib MiB in objects of
// --object-bytes and writes every page of them. The threads meet at a barrier
// after every --step-kib KiB, so the nodes' heaps grow in turns: the worst
// case for an allocator that binds each growth step to its node, because
// neighbouring steps then carry different policies and the kernel cannot merge
// their mappings. Node-owned regions bind one large reservation per node, so
// the count must stay near vanilla's.
//
// Prints "key: value" lines (touched_mib, expected_mib, maps, mbind_calls,
// numa_active, one "region:" line per node when the allocator reports one)
// and "lockstep: OK" last; exits 3 if a malloc returned null, 2 on bad usage
// or setup failure. Run with the allocator LD_PRELOADed (vanilla or patched).
#include <pthread.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kPage = 4096;

struct Options {
  size_t mib = 256;            // per thread
  size_t object_bytes = 4096;  // a small-object size class
  size_t step_kib = 1024;      // one heap growth step (kMinSystemAlloc)
};

struct Worker {
  int node = -1;
  std::vector<char*> objects;
  size_t touched = 0;
  bool pinned = false;
  bool malloc_failed = false;
};

pthread_barrier_t barrier;

void Run(const Options& opt, Worker* w) {
  w->pinned = region_lab::PinToNode(w->node);
  const size_t per_step =
      std::max<size_t>(1, opt.step_kib * 1024 / opt.object_bytes);
  const size_t total = opt.mib * 1024 * 1024 / opt.object_bytes;
  w->objects.reserve(total);  // before the first step: no growth in between
  pthread_barrier_wait(&barrier);
  // Every thread meets the barrier the same number of times, even after a
  // failed malloc, or the others would wait for it forever.
  const size_t steps = (total + per_step - 1) / per_step;
  for (size_t step = 0; step < steps; ++step) {
    for (size_t i = step * per_step;
         i < total && i < (step + 1) * per_step && !w->malloc_failed; ++i) {
      char* p = static_cast<char*>(std::malloc(opt.object_bytes));
      if (p == nullptr) {
        w->malloc_failed = true;
        break;
      }
      for (size_t off = 0; off < opt.object_bytes; off += kPage) p[off] = 1;
      p[opt.object_bytes - 1] = 1;
      w->objects.push_back(p);
      w->touched += opt.object_bytes;
    }
    pthread_barrier_wait(&barrier);
  }
}

size_t CountMaps() {
  std::ifstream maps("/proc/self/maps");
  size_t lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

std::string Show(const region_lab::Property& p) {
  return p.known ? std::to_string(p.value) : "unknown";
}

bool ParseSize(const char* s, size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0' || v == 0) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    bool ok = has_value;
    if (has_value && std::strcmp(argv[i], "--mib") == 0) {
      ok = ParseSize(argv[++i], &opt.mib);
    } else if (has_value && std::strcmp(argv[i], "--object-bytes") == 0) {
      ok = ParseSize(argv[++i], &opt.object_bytes);
    } else if (has_value && std::strcmp(argv[i], "--step-kib") == 0) {
      ok = ParseSize(argv[++i], &opt.step_kib);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: lockstep_growth [--mib M] [--object-bytes B] "
                   "[--step-kib K]\n");
      return 2;
    }
  }
  const std::vector<int> nodes = region_lab::CpuNodes();
  if (nodes.empty()) {
    std::fprintf(stderr, "lockstep_growth: no NUMA node with CPUs\n");
    return 2;
  }
  std::printf(
      "lockstep: %zu threads (nodes with CPUs), %zu MiB each in %zu-byte"
      " objects, barrier every %zu KiB\n",
      nodes.size(), opt.mib, opt.object_bytes, opt.step_kib);
  std::fflush(stdout);

  pthread_barrier_init(&barrier, nullptr, nodes.size());
  std::vector<Worker> workers(nodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nodes.size(); ++i) {
    workers[i].node = nodes[i];
    threads.emplace_back(Run, std::cref(opt), &workers[i]);
  }
  for (std::thread& t : threads) t.join();

  // Everything is still allocated: count before anything is freed.
  const size_t maps = CountMaps();
  size_t touched = 0;
  bool pinned = true, failed = false;
  for (const Worker& w : workers) {
    touched += w.touched;
    pinned = pinned && w.pinned;
    failed = failed || w.malloc_failed;
  }
  std::printf("touched_mib: %zu\n", touched >> 20);
  std::printf("expected_mib: %zu\n", nodes.size() * opt.mib);
  std::printf("maps: %zu\n", maps);
  std::printf("numa_active: %s\n", Show(region_lab::Numa("active")).c_str());
  std::printf("mbind_calls: %s\n",
              Show(region_lab::Numa("mbind_calls")).c_str());
  for (int node : nodes) {
    const region_lab::Region r = region_lab::NodeRegion(node);
    if (!r.begin.known && !r.end.known) continue;
    std::printf("region: node%d [%#" PRIx64 ", %#" PRIx64
                ") reserved %s committed %s\n",
                node, r.begin.value, r.end.value,
                Show(r.reserved_bytes).c_str(),
                Show(r.committed_bytes).c_str());
  }
  if (!pinned) {
    std::printf("lockstep: FAILED: a thread could not be pinned to its node\n");
    return 2;
  }
  if (failed) {
    std::printf("lockstep: FAILED: malloc returned null\n");
    return 3;
  }
  std::printf("lockstep: OK\n");
  return 0;
}
