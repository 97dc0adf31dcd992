// Memory cost of many warm thread caches: --threads threads (512 by default)
// each allocate and free blocks of every small size class up to --max-size,
// so that every thread cache holds free objects of every class, then all
// stay alive at a barrier while the main thread reads the heap size and the
// resident set. An allocator whose thread caches grow with the number of
// NUMA nodes (one list per class and node) pays for it here, once per
// thread. Thread i is pinned to the i-th allowed CPU (round robin), so with
// fake nodes every node's lists are warmed, the same way each run.
#include <getopt.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "benchmarks/memory/figures.h"
#include "benchmarks/memory/pin.h"
#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  long threads = 512;
  long max_size = 32 * 1024;
  long repeat = 4;  // blocks of each size held together, then freed
  bool pin = true;
};

Options Parse(int argc, char** argv) {
  static const option kLong[] = {{"threads", required_argument, nullptr, 't'},
                                 {"max-size", required_argument, nullptr, 's'},
                                 {"repeat", required_argument, nullptr, 'r'},
                                 {"no-pin", no_argument, nullptr, 'n'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = workloads::ParsePositive(optarg, "--threads");
        break;
      case 's':
        o.max_size = workloads::ParsePositive(optarg, "--max-size");
        break;
      case 'r':
        o.repeat = workloads::ParsePositive(optarg, "--repeat");
        break;
      case 'n':
        o.pin = false;
        break;
      case 'h':
        std::printf(
            "usage: threads [--threads=512] [--max-size=32768] [--repeat=4] "
            "[--no-pin]\nEach thread allocates --repeat blocks of every "
            "small size up to --max-size\nand frees them; all stay alive "
            "while the main thread prints heap_mib=\n(generic.heap_size) and "
            "peak_rss_mib= (ru_maxrss), and METRIC lines.\n");
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  if (o.threads > 16384) workloads::Die("--threads: at most 16384");
  if (o.max_size > (1 << 20)) workloads::Die("--max-size: at most 1048576");
  if (o.repeat > 1024) workloads::Die("--repeat: at most 1024");
  return o;
}

// Sizes that land in every tcmalloc size class up to max_size: classes are
// 8 or 16 bytes apart up to 1 KiB and about an eighth apart above, so steps
// of 8 bytes, then of a sixteenth, miss none.
std::vector<size_t> Sizes(long max_size) {
  std::vector<size_t> sizes;
  for (size_t s = 8; s <= static_cast<size_t>(max_size);) {
    sizes.push_back(s);
    const size_t step = s < 1024 ? 8 : (s / 16 + 7) / 8 * 8;
    s += step;
  }
  return sizes;
}

struct Shared {
  Options options;
  std::vector<int> cpus;
  std::vector<size_t> sizes;
  pthread_barrier_t warm;  // every thread warmed; the main thread measures
  pthread_barrier_t done;  // measured; threads may exit
};

struct ThreadArg {
  Shared* shared;
  long index;
};

void* Warm(void* raw) {
  const ThreadArg& arg = *static_cast<ThreadArg*>(raw);
  Shared& s = *arg.shared;
  if (s.options.pin) {
    memory_probe::PinToCpu(s.cpus[arg.index % s.cpus.size()]);
  }
  std::vector<void*> held(s.options.repeat);
  for (size_t size : s.sizes) {
    for (void*& p : held) {
      p = std::malloc(size);
      if (p == nullptr) workloads::Die("malloc(%zu) failed", size);
      std::memset(p, static_cast<int>(arg.index), size);
      workloads::Escape(p);
    }
    for (void* p : held) std::free(p);
  }
  pthread_barrier_wait(&s.warm);
  pthread_barrier_wait(&s.done);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  s.options = Parse(argc, argv);
  s.cpus = memory_probe::AllowedCpus();
  s.sizes = Sizes(s.options.max_size);
  const long n = s.options.threads;
  std::printf("# threads threads=%ld sizes=%zu (8..%ld B) repeat=%ld pin=%s\n",
              n, s.sizes.size(), s.options.max_size, s.options.repeat,
              s.options.pin ? memory_probe::JoinCpus(s.cpus).c_str() : "no");
  pthread_barrier_init(&s.warm, nullptr, static_cast<unsigned>(n + 1));
  pthread_barrier_init(&s.done, nullptr, static_cast<unsigned>(n + 1));
  // Small stacks: 512 default 8 MiB stacks are 4 GiB of address space, and
  // the probe measures the allocator, not thread stacks.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  std::vector<pthread_t> threads(n);
  std::vector<ThreadArg> args(n);
  for (long i = 0; i < n; ++i) {
    args[i] = {&s, i};
    const int rc = pthread_create(&threads[i], &attr, Warm, &args[i]);
    if (rc != 0) {
      workloads::Die("pthread_create failed for thread %ld of %ld: %s", i + 1,
                     n, std::strerror(rc));
    }
  }
  pthread_barrier_wait(&s.warm);
  std::printf(
      "thread_cache_mib=%s\n",
      memory_probe::Mib(
          memory_probe::Property("tcmalloc.current_total_thread_cache_bytes"))
          .c_str());
  memory_probe::PrintResult();
  pthread_barrier_wait(&s.done);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  return 0;
}
