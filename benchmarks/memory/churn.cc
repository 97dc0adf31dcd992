// Threads that come and go: --threads short-lived threads, --concurrent at a
// time, each unpinned (the scheduler places it). Each allocates and writes
// --objects objects (mostly 16 B - 4 KiB, one in 50 of 256 KiB - 8 MiB),
// frees them, and exits; its thread cache goes back to the central lists.
// A service's worker pool that grows and shrinks does this.
//
// Prints threads per second and minor page faults per thread (getrusage),
// as key=value and as METRIC lines for tools/compare.
#include <getopt.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  long threads = 5000;
  long concurrent = 4;
  long objects = 200;
};

Options Parse(int argc, char** argv) {
  static const option kLong[] = {
      {"threads", required_argument, nullptr, 't'},
      {"concurrent", required_argument, nullptr, 'c'},
      {"objects", required_argument, nullptr, 'o'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = workloads::ParsePositive(optarg, "--threads");
        break;
      case 'c':
        o.concurrent = workloads::ParsePositive(optarg, "--concurrent");
        if (o.concurrent > 1024) workloads::Die("--concurrent is at most 1024");
        break;
      case 'o':
        o.objects = workloads::ParsePositive(optarg, "--objects");
        break;
      case 'h':
        std::printf(
            "usage: churn [--threads=5000] [--concurrent=4] [--objects=200]\n"
            "Starts --threads short-lived unpinned threads, --concurrent at a "
            "time; each\nallocates, writes and frees --objects objects "
            "(mostly 16 B - 4 KiB, 1 in 50\nof 256 KiB - 8 MiB). Prints "
            "threads_per_s= and faults_per_thread= (minor\npage faults) and "
            "METRIC lines.\n");
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  return o;
}

void Work(long seed, long objects) {
  uint64_t s = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(seed + 1);
  std::vector<char*> live(objects);
  for (long i = 0; i < objects; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t r = s >> 33;
    const size_t size = r % 50 == 0 ? (size_t{256} << 10) << (r / 50 % 6)
                                    : size_t{16} << (r / 50 % 9);
    char* p = static_cast<char*>(std::malloc(size));
    if (p == nullptr) workloads::Die("malloc(%zu) failed", size);
    for (size_t j = 0; j < size; j += 4096) p[j] = static_cast<char>(i);
    p[size - 1] = 1;
    live[i] = p;
  }
  for (char* p : live) std::free(p);
}

long MinorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::printf("# churn threads=%ld concurrent=%ld objects=%ld\n", o.threads,
              o.concurrent, o.objects);
  const long faults_before = MinorFaults();
  const double start = workloads::NowSeconds();
  std::vector<std::thread> running;
  for (long started = 0; started < o.threads;) {
    for (long k = 0; k < o.concurrent && started < o.threads; ++k) {
      running.emplace_back(Work, started++, o.objects);
    }
    for (std::thread& t : running) t.join();
    running.clear();
  }
  const double wall = workloads::NowSeconds() - start;
  const long faults = MinorFaults() - faults_before;
  std::printf(
      "threads=%ld seconds=%.2f threads_per_s=%.0f minor_faults=%ld "
      "faults_per_thread=%.2f\n",
      o.threads, wall, o.threads / wall, faults,
      static_cast<double>(faults) / o.threads);
  workloads::PrintMetric("threads_per_s", o.threads / wall, "threads/s");
  workloads::PrintMetric("faults_per_thread",
                         static_cast<double>(faults) / o.threads, "faults");
  // The same figures for tools/compare --cmd, which reads METRIC lines.
  std::printf("METRIC threads_per_s %.6g threads/s higher\n", o.threads / wall);
  std::printf("METRIC faults_per_thread %.6g faults lower\n",
              static_cast<double>(faults) / o.threads);
  return 0;
}
