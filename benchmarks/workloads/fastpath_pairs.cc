// Deterministic small-object fast path for instruction counting under
// callgrind (tools/callgrind-gate, tools/compare): after a warm-up, `pairs`
// malloc+free pairs whose sizes cycle over a few small classes. One block is
// live at a time, so every pair is served from the thread cache.
//
// The gate runs this with two pair counts and takes the difference, so the
// process start-up and the warm-up cancel out.
#include <cstdio>
#include <cstdlib>

#include "benchmarks/workloads/common.h"

namespace {
constexpr size_t kSizes[] = {16, 32, 48, 64, 96, 128, 256};
constexpr int kNumSizes = sizeof(kSizes) / sizeof(kSizes[0]);
constexpr long kWarmup = 10000;
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) workloads::Die("usage: fastpath_pairs PAIRS");
  const long pairs = workloads::ParsePositive(argv[1], "PAIRS");
  for (long i = 0; i < kWarmup + pairs; ++i) {
    void* p = std::malloc(kSizes[i % kNumSizes]);
    if (p == nullptr) workloads::Die("malloc failed");
    workloads::Escape(p);
    std::free(p);
  }
  return 0;
}
