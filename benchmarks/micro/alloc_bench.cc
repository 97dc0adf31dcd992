// Allocator microbenchmarks (Google Benchmark). The binary links plain libc
// malloc; tools/compare picks the allocator with LD_PRELOAD.
//
//   alloc_bench [--max_threads=N] [--benchmark_* flags]
//
// --max_threads (default 2, this machine's core count) bounds the threaded
// runs: 1, 2, 4, ... up to N.
#include <stdlib.h>
#include <x86intrin.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"

namespace {

// One malloc+free pair of a fixed size, the allocator's fast path.
void BM_MallocFree(benchmark::State& state) {
  const size_t size = state.range(0);
  for (auto _ : state) {
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MallocFree)
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(32 << 10)
    ->Arg(256 << 10)
    ->Arg(1 << 20);

// Allocate a batch, then free it: drains and refills the thread cache, so
// central free lists show up.
void BM_BatchAllocFree(benchmark::State& state) {
  const size_t size = state.range(0);
  constexpr int kBatch = 1000;
  std::vector<void*> batch(kBatch);
  for (auto _ : state) {
    for (void*& p : batch) {
      p = std::malloc(size);
      benchmark::DoNotOptimize(p);
    }
    for (void* p : batch) std::free(p);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_BatchAllocFree)->Arg(16)->Arg(128)->Arg(1024)->Arg(8192);

// realloc from 16 bytes up to range(0) bytes, doubling (vector-like growth).
void BM_ReallocDouble(benchmark::State& state) {
  const size_t max = state.range(0);
  for (auto _ : state) {
    void* p = std::malloc(16);
    for (size_t size = 32; size <= max; size *= 2) {
      p = std::realloc(p, size);
      benchmark::DoNotOptimize(p);
    }
    std::free(p);
  }
}
BENCHMARK(BM_ReallocDouble)->Arg(64 << 10)->Arg(1 << 20);

// realloc in 64-byte steps up to range(0) bytes (string-append-like growth).
void BM_ReallocStep(benchmark::State& state) {
  const size_t max = state.range(0);
  for (auto _ : state) {
    void* p = std::malloc(64);
    for (size_t size = 128; size <= max; size += 64) {
      p = std::realloc(p, size);
      benchmark::DoNotOptimize(p);
    }
    std::free(p);
  }
}
BENCHMARK(BM_ReallocStep)->Arg(4096);

// posix_memalign(alignment = range(0), size = range(1)) + free.
void BM_Memalign(benchmark::State& state) {
  const size_t alignment = state.range(0);
  const size_t size = state.range(1);
  for (auto _ : state) {
    void* p = nullptr;
    if (posix_memalign(&p, alignment, size) != 0) {
      state.SkipWithError("posix_memalign failed");
      break;
    }
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_Memalign)
    ->Args({64, 64})
    ->Args({64, 1024})
    ->Args({4096, 4096})
    ->Args({4096, 64 << 10});

// malloc+free pairs on several threads at once, sizes cycling over small
// classes. Registered in main() because the thread range is a flag.
void BM_MallocFreeThreads(benchmark::State& state) {
  static constexpr size_t kSizes[] = {16, 64, 256, 1024};
  unsigned i = state.thread_index();
  for (auto _ : state) {
    void* p = std::malloc(kSizes[i++ % 4]);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  state.SetItemsProcessed(state.iterations());
}

// Single-producer single-consumer ring of pointers: the producer (the
// benchmark thread) mallocs, a consumer thread frees. Every block is freed on
// a thread other than its allocating one, the case per-thread caches handle
// worst.
class Ring {
 public:
  void Push(void* p) {
    const unsigned head = head_.load(std::memory_order_relaxed);
    while (head - tail_.load(std::memory_order_acquire) == kSize) Wait();
    slots_[head % kSize] = p;
    head_.store(head + 1, std::memory_order_release);
  }
  void* Pop() {
    const unsigned tail = tail_.load(std::memory_order_relaxed);
    while (head_.load(std::memory_order_acquire) == tail) Wait();
    void* p = slots_[tail % kSize];
    tail_.store(tail + 1, std::memory_order_release);
    return p;
  }

 private:
  static constexpr unsigned kSize = 4096;
  // Spin briefly, then yield: with 2 cores the other side may be descheduled.
  static void Wait() {
    for (int i = 0; i < 64; ++i) _mm_pause();
    std::this_thread::yield();
  }
  alignas(64) std::atomic<unsigned> head_{0};
  alignas(64) std::atomic<unsigned> tail_{0};
  alignas(64) void* slots_[kSize];
};

void BM_CrossThreadFree(benchmark::State& state) {
  const size_t size = state.range(0);
  auto ring = std::make_unique<Ring>();
  std::thread consumer([&] {
    while (void* p = ring->Pop()) std::free(p);
  });
  for (auto _ : state) {
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    ring->Push(p);
  }
  ring->Push(nullptr);  // stop
  consumer.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CrossThreadFree)->Arg(64)->Arg(4096)->UseRealTime();

// Takes --max_threads=N out of argv; leaves everything else to Benchmark.
int TakeMaxThreads(int* argc, char** argv) {
  int max_threads = 2;
  const char kFlag[] = "--max_threads=";
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], kFlag, sizeof(kFlag) - 1) == 0) {
      char* end = nullptr;
      long n = std::strtol(argv[i] + sizeof(kFlag) - 1, &end, 10);
      if (*end != '\0' || n < 1 || n > 1024) {
        std::fprintf(stderr, "alloc_bench: error: bad %s\n", argv[i]);
        std::exit(2);
      }
      max_threads = static_cast<int>(n);
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return max_threads;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_threads = TakeMaxThreads(&argc, argv);
  benchmark::RegisterBenchmark("BM_MallocFreeThreads", BM_MallocFreeThreads)
      ->ThreadRange(1, max_threads)
      ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
