// "Is your memory management multi-core ready?": every thread loops over
// malloc(200 KiB), memset, free. A scalable allocator keeps the total rate
// growing with the thread count; one with a shared lock on this size flattens.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  std::vector<int> threads = {1, 2};
  long iterations = 20000;  // per thread
  long size = 200 * 1024;
};

Options Parse(int argc, char** argv) {
  static const option kLong[] = {
      {"threads", required_argument, nullptr, 't'},
      {"iterations", required_argument, nullptr, 'i'},
      {"size", required_argument, nullptr, 's'},
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
      case 's':
        o.size = workloads::ParsePositive(optarg, "--size");
        break;
      case 'h':
        std::printf(
            "usage: multicore [--threads=1,2] [--iterations=20000] "
            "[--size=204800]\nPer thread: malloc(size), memset, free. "
            "Prints metric= lines.\n");
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  return o;
}

void Work(const Options& o, int thread_index) {
  for (long i = 0; i < o.iterations; ++i) {
    void* p = std::malloc(o.size);
    if (p == nullptr) workloads::Die("malloc(%ld) failed", o.size);
    std::memset(p, static_cast<int>(i + thread_index), o.size);
    workloads::Escape(p);
    std::free(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::printf("# multicore iterations=%ld size=%ld\n", o.iterations, o.size);
  double single_rate = 0;
  for (int threads : o.threads) {
    double seconds = workloads::RunThreads(threads, [&](int i) { Work(o, i); });
    double rate = threads * o.iterations / seconds;
    const std::string t = "t" + std::to_string(threads);
    workloads::PrintMetric(t + ".ops_per_sec", rate, "ops/s");
    if (threads == 1) single_rate = rate;
    // Scaling against the 1-thread rate of the same run (1 = no gain).
    if (threads > 1 && single_rate > 0) {
      workloads::PrintMetric(t + ".scaling", rate / single_rate, "x");
    }
  }
  return 0;
}
