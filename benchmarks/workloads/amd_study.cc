// The workload of AMD's NUMA-aware TCMalloc study: each thread repeatedly
// allocates a block of 2^k bytes (k drawn from [min-shift, max-shift]), writes
// every 64th byte (one store per cache line) `writes` times, and frees it.
// The stores dominate, so the figure reflects where the allocator placed the
// memory (local or remote node) as much as the allocator's own speed.
//
// Weak scaling: every thread does the same work, so the ideal time does not
// grow with the thread count.
#include <getopt.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  std::vector<int> threads = {1, 2};
  long iterations = 5000;
  int min_shift = 6;
  int max_shift = 24;
  int writes = 10;
};

void Usage() {
  std::printf(
      "usage: amd_study [--threads=1,2] [--iterations=5000] [--min-shift=6]\n"
      "                 [--max-shift=24] [--writes=10]\n"
      "Per thread: `iterations` times malloc(2^k), k uniform in "
      "[min-shift,max-shift],\nwrite every 64th byte `writes` times, free. "
      "Prints metric= lines.\n");
}

Options Parse(int argc, char** argv) {
  static const option kLong[] = {
      {"threads", required_argument, nullptr, 't'},
      {"iterations", required_argument, nullptr, 'i'},
      {"min-shift", required_argument, nullptr, 'a'},
      {"max-shift", required_argument, nullptr, 'b'},
      {"writes", required_argument, nullptr, 'w'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = workloads::ParseIntList(optarg, "--threads");
        break;
      case 'i':
        o.iterations = workloads::ParsePositive(optarg, "--iterations");
        break;
      case 'a':
        o.min_shift = workloads::ParsePositive(optarg, "--min-shift");
        break;
      case 'b':
        o.max_shift = workloads::ParsePositive(optarg, "--max-shift");
        break;
      case 'w':
        o.writes = workloads::ParsePositive(optarg, "--writes");
        break;
      case 'h':
        Usage();
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  if (o.min_shift < 6 || o.max_shift > 34 || o.min_shift > o.max_shift) {
    workloads::Die("want 6 <= --min-shift <= --max-shift <= 34");
  }
  return o;
}

// One thread's share. The seed depends on the thread index only, so every
// allocator sees the same size sequence.
void Work(const Options& o, int thread_index) {
  uint64_t state = 0x9e3779b97f4a7c15ull * (thread_index + 1);
  const int span = o.max_shift - o.min_shift + 1;
  for (long i = 0; i < o.iterations; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const size_t size = size_t{1} << (o.min_shift + state % span);
    volatile char* p = static_cast<volatile char*>(std::malloc(size));
    if (p == nullptr) workloads::Die("malloc(%zu) failed", size);
    for (int w = 0; w < o.writes; ++w) {
      for (size_t off = 0; off < size; off += 64) p[off] = static_cast<char>(w);
    }
    std::free(const_cast<char*>(p));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::printf("# amd_study iterations=%ld sizes=2^%d..2^%d writes=%d\n",
              o.iterations, o.min_shift, o.max_shift, o.writes);
  for (int threads : o.threads) {
    double seconds = workloads::RunThreads(threads, [&](int i) { Work(o, i); });
    workloads::PrintMetric("t" + std::to_string(threads) + ".seconds", seconds,
                           "s");
  }
  return 0;
}
