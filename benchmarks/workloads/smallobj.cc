// Small-object throughput: each thread allocates a batch of small blocks
// (sizes cycling over common small classes), touches each, and frees the batch.
// Reports malloc+free pairs per second, summed over threads, per thread count.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/workloads/common.h"

namespace {

constexpr size_t kSizes[] = {8,  16,  24,  32,  48,  64,
                             96, 128, 192, 256, 384, 512};
constexpr int kNumSizes = sizeof(kSizes) / sizeof(kSizes[0]);

struct Options {
  std::vector<int> threads = {1, 2};
  long pairs = 10000000;  // per thread
  int batch = 256;
};

Options Parse(int argc, char** argv) {
  static const option kLong[] = {{"threads", required_argument, nullptr, 't'},
                                 {"pairs", required_argument, nullptr, 'p'},
                                 {"batch", required_argument, nullptr, 'b'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = workloads::ParseIntList(optarg, "--threads");
        break;
      case 'p':
        o.pairs = workloads::ParsePositive(optarg, "--pairs");
        break;
      case 'b':
        o.batch = workloads::ParsePositive(optarg, "--batch");
        break;
      case 'h':
        std::printf(
            "usage: smallobj [--threads=1,2] [--pairs=10000000] [--batch=256]\n"
            "Per thread: batches of small mallocs (8..512 B), then free. "
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
  std::vector<char*> slots(o.batch);
  int next_size = thread_index;
  for (long done = 0; done < o.pairs; done += o.batch) {
    for (char*& slot : slots) {
      slot = static_cast<char*>(std::malloc(kSizes[next_size]));
      if (slot == nullptr) workloads::Die("malloc failed");
      slot[0] = 1;  // touch, as a real user of the block would
      next_size = (next_size + 1) % kNumSizes;
    }
    for (char* slot : slots) std::free(slot);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  o.pairs = (o.pairs + o.batch - 1) / o.batch * o.batch;  // whole batches
  std::printf("# smallobj pairs=%ld batch=%d\n", o.pairs, o.batch);
  for (int threads : o.threads) {
    double seconds = workloads::RunThreads(threads, [&](int i) { Work(o, i); });
    workloads::PrintMetric("t" + std::to_string(threads) + ".mops_per_sec",
                           threads * o.pairs / seconds / 1e6, "Mops/s");
  }
  return 0;
}
