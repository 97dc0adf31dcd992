// malloc latency distribution: p50, p99, p99.9 and max of single malloc calls
// under a mixed-size churn, plus the cost of the first malloc in main() and the
// first malloc of a new thread (where thread caches get set up).
//
// Calls are timed with the TSC (calibrated against CLOCK_MONOTONIC), because
// clock_gettime costs about as much as a fast-path malloc. The median cost of
// an empty timed region is subtracted. Percentiles above p99 and the max are
// noisy on a shared machine: read them as orders of magnitude.
#include <getopt.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {

inline uint64_t Ticks() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

double TicksPerNs() {
  const double t0 = workloads::NowSeconds();
  const uint64_t c0 = Ticks();
  while (workloads::NowSeconds() - t0 < 0.02) {
  }
  const double t1 = workloads::NowSeconds();
  const uint64_t c1 = Ticks();
  return (c1 - c0) / ((t1 - t0) * 1e9);
}

// Median cost, in ticks, of timing nothing.
uint64_t TimerOverhead() {
  std::vector<uint64_t> samples(10001);
  for (uint64_t& s : samples) {
    uint64_t a = Ticks();
    s = Ticks() - a;
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2,
                   samples.end());
  return samples[samples.size() / 2];
}

// Size mix: mostly small, some medium, a few page-sized and larger.
size_t PickSize(uint64_t r) {
  const unsigned bucket = r % 100;
  r /= 100;
  if (bucket < 70) return 8 + r % 249;     // 8..256
  if (bucket < 95) return 257 + r % 3840;  // 257..4096
  return 4097 + r % (60 * 1024);           // 4 KiB..64 KiB
}

}  // namespace

int main(int argc, char** argv) {
  static const option kLong[] = {{"samples", required_argument, nullptr, 's'},
                                 {"live", required_argument, nullptr, 'l'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  long samples = 1000000;
  long live = 4096;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 's':
        samples = workloads::ParsePositive(optarg, "--samples");
        break;
      case 'l':
        live = workloads::ParsePositive(optarg, "--live");
        break;
      case 'h':
        std::printf(
            "usage: latency [--samples=1000000] [--live=4096]\n"
            "Times single malloc calls under churn over `live` slots. "
            "Prints metric= lines.\n");
        return 0;
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);

  // First, before anything else in main allocates.
  uint64_t t0 = Ticks();
  void* first = std::malloc(64);
  uint64_t first_ticks = Ticks() - t0;
  workloads::Escape(first);

  const double ticks_per_ns = TicksPerNs();
  const uint64_t overhead = TimerOverhead();
  auto to_ns = [&](uint64_t ticks) {
    return (ticks > overhead ? ticks - overhead : 0) / ticks_per_ns;
  };

  uint64_t thread_first_ticks = 0;
  std::thread([&] {
    uint64_t a = Ticks();
    void* p = std::malloc(64);
    thread_first_ticks = Ticks() - a;
    workloads::Escape(p);
    std::free(p);
  }).join();

  std::vector<void*> slots(live, nullptr);
  std::vector<uint64_t> times(samples);
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (long i = 0; i < samples; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    void*& slot = slots[state % live];
    std::free(slot);
    const size_t size = PickSize(state >> 20);
    uint64_t a = Ticks();
    slot = std::malloc(size);
    times[i] = Ticks() - a;
    if (slot == nullptr) workloads::Die("malloc(%zu) failed", size);
    static_cast<char*>(slot)[0] = 1;
  }
  for (void* p : slots) std::free(p);
  std::free(first);

  std::sort(times.begin(), times.end());
  auto pct = [&](double q) {
    size_t idx = static_cast<size_t>(q * (times.size() - 1));
    return to_ns(times[idx]);
  };
  std::printf("# latency samples=%ld live=%ld tsc=%.3f ticks/ns overhead=%lu\n",
              samples, live, ticks_per_ns,
              static_cast<unsigned long>(overhead));
  workloads::PrintMetric("first_malloc_ns", to_ns(first_ticks), "ns");
  workloads::PrintMetric("first_malloc_new_thread_ns",
                         to_ns(thread_first_ticks), "ns");
  workloads::PrintMetric("p50_ns", pct(0.50), "ns");
  workloads::PrintMetric("p99_ns", pct(0.99), "ns");
  workloads::PrintMetric("p99.9_ns", pct(0.999), "ns");
  workloads::PrintMetric("max_ns", to_ns(times.back()), "ns");
  return 0;
}
