// reuse: memory freed on one node and reused on another, seen as memory
// accesses (tools/compare --cmd ... --lab 2 --accesses; docs/compare.md).
//
// Phase 1: --threads threads pinned to node 0 each allocate small objects
// (16 B - 1 KiB, a fixed pseudo-random sequence) until they hold --mib MiB
// between them, write every word of each, and free them all; the threads end.
// Phase 2: one thread pinned to node 1 allocates the same sizes, writes its
// objects and works on them: --passes passes that read and rewrite every
// word. An allocator that hands node 1 the memory node 0 freed makes most of
// phase 2's accesses remote; one that keeps freed memory on its node makes
// them local. Everything else the threads touch is local by construction:
// each thread's stack (with its TLS) is bound to its node before it starts,
// and the main thread only waits.
//   reuse [--mib M] [--passes P] [--threads T] [--mem-node N]
// --mem-node binds every thread's stack to node N instead (a control for the
// tests: stacks on the wrong node make phase 2 remote under any allocator).
// The main thread moves to node 0 in main(), after the loader, the C library
// and the allocator have started wherever the kernel put the process: start
// it on node 0 (numactl --cpunodebind=0) for counts that repeat.
// Prints "METRIC objects N" and exits 0. Meant for two nodes with CPUs; on
// a machine with one node it runs unpinned (for timing it natively).
#include <getopt.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kStackBytes = 1 << 20;

struct Options {
  long mib = 16;
  int passes = 2;
  int threads = 2;
  int mem_node = -1;  // -1: each thread's own node
};

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

// The CPUs /sys lists for `node` ("0-1,4" form); empty when it has none.
cpu_set_t NodeCpus(int node, int* count) {
  cpu_set_t set;
  CPU_ZERO(&set);
  *count = 0;
  const std::string path =
      "/sys/devices/system/node/node" + std::to_string(node) + "/cpulist";
  FILE* f = std::fopen(path.c_str(), "r");
  char list[256] = {0};
  if (f == nullptr || std::fgets(list, sizeof(list), f) == nullptr) {
    if (f) std::fclose(f);
    return set;
  }
  std::fclose(f);
  for (char* item = std::strtok(list, ",\n"); item != nullptr;
       item = std::strtok(nullptr, ",\n")) {
    int lo = 0, hi = 0;
    if (std::sscanf(item, "%d-%d", &lo, &hi) < 2) hi = lo;
    for (int cpu = lo; cpu <= hi; ++cpu) {
      CPU_SET(cpu, &set);
      ++*count;
    }
  }
  return set;
}

// The size of object i: 16 B - 1 KiB, multiples of 16, the same sequence in
// both phases (a 64-bit LCG, so no allocation happens to make it).
size_t SizeOf(uint64_t i) {
  uint64_t x = i * 6364136223846793005ull + 1442695040888963407ull;
  x ^= x >> 29;
  return 16 * (1 + (x >> 40) % 64);
}

void Fill(uint64_t* p, size_t words, uint64_t seed) {
  for (size_t w = 0; w < words; ++w) p[w] = seed + w;
}

struct Work {
  int node;        // where the thread runs
  uint64_t first;  // its slice of the size sequence
  uint64_t count;
  int passes;         // 0: phase 1 (allocate, write, free)
  uint64_t checksum;  // phase 2's reads, so they are not optimised away
};

void* Run(void* arg) {
  Work* w = static_cast<Work*>(arg);
  // Copies: the Work lives on the main thread's stack (node 0), and stores
  // through uint64_t pointers would make the compiler reload its fields.
  const uint64_t first = w->first, count = w->count;
  const int passes = w->passes;
  std::vector<uint64_t*> objects;
  objects.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t size = SizeOf(first + i);
    uint64_t* p = static_cast<uint64_t*>(std::malloc(size));
    if (p == nullptr) Fail("malloc");
    Fill(p, size / 8, i);
    objects.push_back(p);
  }
  uint64_t sum = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t* p = objects[i];
      const size_t words = SizeOf(first + i) / 8;
      for (size_t k = 0; k < words; ++k) {
        sum += p[k];
        p[k] = sum;
      }
    }
  }
  for (uint64_t* p : objects) std::free(p);
  w->checksum = sum;
  return nullptr;
}

// Starts a thread on `cpu_node` whose stack is bound to `stack_node` before
// anything touches it (pthread_create writes the thread's descriptor and TLS
// into the top of the stack from the calling thread).
pthread_t Start(Work* work, int cpu_node, int stack_node) {
  int cpus = 0, stack_cpus = 0;
  cpu_set_t set = NodeCpus(cpu_node, &cpus);
  NodeCpus(stack_node, &stack_cpus);
  void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) Fail("mmap");
  unsigned long mask[16] = {};
  mask[stack_node / 64] = 1ul << (stack_node % 64);
  // On a machine without the node (a one-node host, for timing) the thread
  // runs unpinned, with its stack wherever the kernel puts it.
  if (stack_cpus > 0 &&
      syscall(SYS_mbind, stack, kStackBytes, MPOL_BIND, mask, 1024, 0) != 0) {
    Fail("mbind");
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, kStackBytes);
  if (cpus > 0) pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
  pthread_t t;
  if (pthread_create(&t, &attr, Run, work) != 0) Fail("pthread_create");
  pthread_attr_destroy(&attr);
  return t;
}

Options Parse(int argc, char** argv) {
  Options o;
  static const option kLong[] = {{"mib", required_argument, nullptr, 'm'},
                                 {"passes", required_argument, nullptr, 'p'},
                                 {"threads", required_argument, nullptr, 't'},
                                 {"mem-node", required_argument, nullptr, 'n'},
                                 {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", kLong, nullptr)) != -1;) {
    switch (c) {
      case 'm':
        o.mib = std::atol(optarg);
        break;
      case 'p':
        o.passes = std::atoi(optarg);
        break;
      case 't':
        o.threads = std::atoi(optarg);
        break;
      case 'n':
        o.mem_node = std::atoi(optarg);
        break;
      default:
        std::fprintf(stderr,
                     "usage: reuse [--mib M] [--passes P] [--threads T] "
                     "[--mem-node N]\n");
        std::exit(2);
    }
  }
  if (o.mib < 1 || o.passes < 1 || o.threads < 1) {
    std::fprintf(stderr, "reuse: --mib, --passes and --threads must be >= 1\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  // How many objects make --mib MiB: the sequence's sizes, summed.
  uint64_t objects = 0;
  for (uint64_t bytes = 0; bytes < (uint64_t)o.mib << 20; ++objects) {
    bytes += SizeOf(objects);
  }
  // The main thread waits on node 0; its own accesses are a handful.
  int cpus = 0;
  cpu_set_t set = NodeCpus(0, &cpus);
  if (cpus > 0) sched_setaffinity(0, sizeof(set), &set);

  std::vector<Work> phase1(o.threads);
  std::vector<pthread_t> threads;
  const uint64_t per_thread = objects / o.threads;
  for (int t = 0; t < o.threads; ++t) {
    const uint64_t first = t * per_thread;
    const uint64_t count = t + 1 == o.threads ? objects - first : per_thread;
    phase1[t] = {0, first, count, 0, 0};
    threads.push_back(Start(&phase1[t], 0, o.mem_node < 0 ? 0 : o.mem_node));
  }
  for (pthread_t t : threads) pthread_join(t, nullptr);

  Work phase2 = {1, 0, objects, o.passes, 0};
  pthread_join(Start(&phase2, 1, o.mem_node < 0 ? 1 : o.mem_node), nullptr);
  std::printf("METRIC objects %llu\n", (unsigned long long)objects);
  std::printf("checksum %llu\n", (unsigned long long)phase2.checksum);
  return 0;
}
