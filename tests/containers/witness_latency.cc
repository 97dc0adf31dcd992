// The latency of large malloc + free with many live threads, for the reuse
// witness's lab gate (tests/containers/witness_lab_run): where move_pages is
// refused, the page heap notes each large block it hands out and judges it
// on its way back (numa/reuse_witness.h), part of that under the page heap
// lock every large allocation takes. This shows what a malloc + free pair
// costs with that lock shared by many threads.
//
// --threads threads are started and all stay alive until the last one is
// done (the thread count is printed, read from /proc/self/status). Each
// makes --warmup pairs untimed, then --pairs timed ones: malloc a block of
// --mib MiB, write a byte of every page (so the block's pages are faulted by
// its taker and the witness has pages to judge), free it. The time of a pair
// is that of the malloc call plus that of the free call (CLOCK_MONOTONIC),
// not of the writes: page faults are the kernel's cost, not the heap's.
// At most --holders threads hold a block at once (a semaphore taken before
// the untimed start of a pair), which bounds the resident memory to about
// holders x MiB whatever the scheduler does.
//
// Prints "pairs N", "p50_us X", "p99_us X", "max_us X" (and the p99 of the
// malloc and free calls alone), the thread count, and the layer's witness
// counters (unknown under vanilla): witnessed_timed, the returns the witness
// judged during the timed pairs, says how many of them it can have slowed.
//
//   witness_latency [--threads N] [--pairs P] [--warmup W] [--mib M]
//                   [--holders H]
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/numa_heap/region_props.h"

namespace {

struct Options {
  int threads = 256;
  int pairs = 40;
  int warmup = 2;
  size_t mib = 4;
  int holders = 32;
};

struct Shared {
  Options opt;
  pthread_barrier_t started;  // every thread alive before any pair
  pthread_barrier_t warm;     // every warm-up pair made before a timed one
  pthread_barrier_t done;     // none exits before the last pair
  sem_t holders;
  // Per thread, the timed pairs: malloc + free, malloc, free.
  std::vector<std::vector<uint64_t>> ns, malloc_ns, free_ns;
};

uint64_t Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// The thread count the kernel gives for this process.
int LiveThreads() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int n = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "Threads: %d", &n) == 1) break;
  }
  std::fclose(f);
  return n;
}

struct Worker {
  Shared* shared;
  int index;
};

void* Run(void* arg) {
  const Worker* w = static_cast<Worker*>(arg);
  Shared* s = w->shared;
  const size_t bytes = s->opt.mib << 20;
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<uint64_t>& out = s->ns[w->index];
  std::vector<uint64_t>& out_malloc = s->malloc_ns[w->index];
  std::vector<uint64_t>& out_free = s->free_ns[w->index];
  out.reserve(s->opt.pairs);
  out_malloc.reserve(s->opt.pairs);
  out_free.reserve(s->opt.pairs);
  pthread_barrier_wait(&s->started);
  for (int i = 0; i < s->opt.warmup + s->opt.pairs; ++i) {
    if (i == s->opt.warmup) pthread_barrier_wait(&s->warm);
    while (sem_wait(&s->holders) != 0) {
    }
    const uint64_t t0 = Now();
    char* p = static_cast<char*>(std::malloc(bytes));
    const uint64_t t1 = Now();
    if (p == nullptr) {
      std::fprintf(stderr, "witness_latency: malloc(%zu) failed\n", bytes);
      std::exit(1);
    }
    for (size_t off = 0; off < bytes; off += page)
      p[off] = static_cast<char>(i);
    const uint64_t t2 = Now();
    std::free(p);
    const uint64_t t3 = Now();
    sem_post(&s->holders);
    if (i >= s->opt.warmup) {
      out.push_back((t1 - t0) + (t3 - t2));
      out_malloc.push_back(t1 - t0);
      out_free.push_back(t3 - t2);
    }
  }
  pthread_barrier_wait(&s->done);
  return nullptr;
}

bool ParseInt(const char* s, long min, long max, long* v) {
  char* end;
  errno = 0;
  *v = std::strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && *v >= min && *v <= max;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: witness_latency [--threads N] [--pairs P] [--warmup W] "
               "[--mib M] [--holders H]\n");
  std::exit(2);
}

double Percentile(const std::vector<uint64_t>& sorted, double q) {
  // Nearest rank: the smallest value with at least q of them at or below.
  size_t rank = static_cast<size_t>(q * sorted.size() + 0.999999);
  if (rank == 0) rank = 1;
  return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

std::vector<uint64_t> Sorted(const std::vector<std::vector<uint64_t>>& per) {
  std::vector<uint64_t> all;
  for (const auto& v : per) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  for (int i = 1; i < argc; ++i) {
    long v;
    if (i + 1 >= argc) Usage();
    const char* a = argv[i];
    const char* val = argv[++i];
    if (std::strcmp(a, "--threads") == 0 && ParseInt(val, 1, 4096, &v)) {
      s.opt.threads = static_cast<int>(v);
    } else if (std::strcmp(a, "--pairs") == 0 &&
               ParseInt(val, 1, 1 << 20, &v)) {
      s.opt.pairs = static_cast<int>(v);
    } else if (std::strcmp(a, "--warmup") == 0 && ParseInt(val, 0, 1000, &v)) {
      s.opt.warmup = static_cast<int>(v);
    } else if (std::strcmp(a, "--mib") == 0 && ParseInt(val, 1, 1024, &v)) {
      s.opt.mib = static_cast<size_t>(v);
    } else if (std::strcmp(a, "--holders") == 0 && ParseInt(val, 1, 4096, &v)) {
      s.opt.holders = static_cast<int>(v);
    } else {
      Usage();
    }
  }
  const int n = s.opt.threads;
  s.ns.resize(n);
  s.malloc_ns.resize(n);
  s.free_ns.resize(n);
  // The main thread joins both barriers: it reads the thread count while
  // every worker is alive and parked.
  pthread_barrier_init(&s.started, nullptr, n + 1);
  pthread_barrier_init(&s.warm, nullptr, n + 1);
  pthread_barrier_init(&s.done, nullptr, n + 1);
  sem_init(&s.holders, 0, s.opt.holders);
  std::vector<pthread_t> tids(n);
  std::vector<Worker> workers(n);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Small stacks: 256 threads' default 8 MiB stacks are address space only,
  // but a small guest need not map them.
  pthread_attr_setstacksize(&attr, 256 << 10);
  for (int t = 0; t < n; ++t) {
    workers[t] = Worker{&s, t};
    if (pthread_create(&tids[t], &attr, Run, &workers[t]) != 0) {
      std::fprintf(stderr, "witness_latency: pthread_create %d failed\n", t);
      return 1;
    }
  }
  const int live = LiveThreads();
  pthread_barrier_wait(&s.started);
  // The blocks the heap grew for the warm-up are noted too: only the
  // witness's work during the timed pairs can move their p99.
  pthread_barrier_wait(&s.warm);
  const region_lab::Property witnessed_before =
      region_lab::Numa("witnessed_returns");
  const uint64_t start = Now();
  pthread_barrier_wait(&s.done);
  const uint64_t wall = Now() - start;
  for (pthread_t t : tids) pthread_join(t, nullptr);

  std::printf("threads %d\n", live);
  const std::vector<uint64_t> all = Sorted(s.ns);
  std::printf("pairs %zu\n", all.size());
  if (all.empty()) return 1;
  std::printf("p50_us %.1f\n", Percentile(all, 0.50));
  std::printf("p99_us %.1f\n", Percentile(all, 0.99));
  std::printf("max_us %.1f\n", static_cast<double>(all.back()) / 1000.0);
  // Which call the tail is in.
  std::printf("malloc_p99_us %.1f\n", Percentile(Sorted(s.malloc_ns), 0.99));
  std::printf("free_p99_us %.1f\n", Percentile(Sorted(s.free_ns), 0.99));
  std::printf("wall_ms %.0f\n", static_cast<double>(wall) / 1e6);
  const region_lab::Property witnessed = region_lab::Numa("witnessed_returns");
  if (witnessed.known && witnessed_before.known) {
    std::printf("witnessed_timed %llu\n",
                static_cast<unsigned long long>(witnessed.value -
                                                witnessed_before.value));
  } else {
    std::printf("witnessed_timed unknown\n");
  }
  for (const char* name :
       {"witnessed_returns", "released_for_reuse", "refused_move_pages"}) {
    std::printf("%s %s\n", name,
                region_lab::ValueText(region_lab::Numa(name)).c_str());
  }
  return 0;
}
