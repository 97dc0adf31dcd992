// Deterministic small-object fast path for instruction counting under
// callgrind (tools/callgrind-gate, tools/compare): after a warm-up, `pairs`
// malloc+free pairs whose sizes cycle over a few small classes.
//
//   fastpath_pairs PAIRS [MODE]
//     local (default)  one block live at a time: every pair is served by the
//                      thread cache; this is what the gate measures
//     sized            the same with operator new and sized operator delete
//     batch            PAIRS blocks are allocated, then all freed, on CPU 0
//     remote           the same, but freed after moving to CPU 1: under
//                      TCMALLOC_NUMA_FAKE_NODES=2 every free is a remote one
//                      (compare with batch for the cost of a remote free)
//     cacheless        PAIRS blocks are allocated, then freed by a thread
//                      that never allocates, so has no thread cache: free()'s
//                      path into the central lists (mimalloc-bench's
//                      xmalloc-test releasers take it)
//
// The gate runs this with two pair counts and takes the difference, so the
// process start-up and the warm-up cancel out.
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {
constexpr size_t kSizes[] = {16, 32, 48, 64, 96, 128, 256};
constexpr int kNumSizes = sizeof(kSizes) / sizeof(kSizes[0]);
constexpr long kWarmup = 10000;

void PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    workloads::Die("sched_setaffinity failed (batch/remote need CPUs 0 and 1)");
  }
}

void LocalPairs(long n) {
  for (long i = 0; i < n; ++i) {
    void* p = std::malloc(kSizes[i % kNumSizes]);
    if (p == nullptr) workloads::Die("malloc failed");
    workloads::Escape(p);
    std::free(p);
  }
}

void SizedPairs(long n) {
  for (long i = 0; i < n; ++i) {
    const size_t size = kSizes[i % kNumSizes];
    void* p = ::operator new(size);
    workloads::Escape(p);
    ::operator delete(p, size);
  }
}

// All blocks live at once, then all freed on `free_cpu`.
void BatchPairs(long n, int free_cpu, std::vector<void*>& blocks) {
  PinToCpu(0);
  for (long i = 0; i < n; ++i) {
    blocks[i] = std::malloc(kSizes[i % kNumSizes]);
    if (blocks[i] == nullptr) workloads::Die("malloc failed");
    workloads::Escape(blocks[i]);
  }
  PinToCpu(free_cpu);
  for (long i = 0; i < n; ++i) std::free(blocks[i]);
}

// All blocks allocated here, then freed by a new thread that allocates
// nothing (its start-up and exit are the same for every PAIRS).
void CachelessFrees(long n, std::vector<void*>& blocks) {
  for (long i = 0; i < n; ++i) {
    blocks[i] = std::malloc(kSizes[i % kNumSizes]);
    if (blocks[i] == nullptr) workloads::Die("malloc failed");
    workloads::Escape(blocks[i]);
  }
  pthread_t freer;
  const auto free_all = [](void* arg) -> void* {
    auto* all = static_cast<std::vector<void*>*>(arg);
    for (void* p : *all) std::free(p);
    return nullptr;
  };
  if (pthread_create(&freer, nullptr, free_all, &blocks) != 0 ||
      pthread_join(freer, nullptr) != 0) {
    workloads::Die("pthread_create failed");
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    workloads::Die(
        "usage: fastpath_pairs PAIRS [local|sized|batch|remote|cacheless]");
  }
  const long pairs = workloads::ParsePositive(argv[1], "PAIRS");
  const char* mode = argc == 3 ? argv[2] : "local";
  if (std::strcmp(mode, "local") == 0) {
    LocalPairs(kWarmup + pairs);
  } else if (std::strcmp(mode, "sized") == 0) {
    SizedPairs(kWarmup + pairs);
  } else if (std::strcmp(mode, "batch") == 0 ||
             std::strcmp(mode, "remote") == 0) {
    // Reserved up front so the vector's own allocation is the same for every
    // PAIRS and cancels out.
    std::vector<void*> blocks(kWarmup + pairs);
    BatchPairs(kWarmup + pairs, std::strcmp(mode, "remote") == 0 ? 1 : 0,
               blocks);
  } else if (std::strcmp(mode, "cacheless") == 0) {
    std::vector<void*> blocks(kWarmup + pairs);
    CachelessFrees(kWarmup + pairs, blocks);
  } else {
    workloads::Die(
        "unknown mode (expected local, sized, batch, remote or cacheless)");
  }
  return 0;
}
