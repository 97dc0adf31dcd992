// Threads that move: what an allocator costs a service whose threads are not
// pinned, or are re-pinned now and then. --threads threads run for
// --seconds. Each keeps --slots live objects and replaces one at random per
// operation: mostly small (16 B - 4 KiB), --large-percent of them 256 KiB -
// 8 MiB. One freed object in 8 is handed to the next thread, which frees it
// (producer/consumer traffic between nodes). Every --move-ms each thread
// re-pins itself to the next allowed CPU (with fake nodes, or in a 2-node
// guest, the other node); --move-ms=0 leaves the threads unpinned, for the
// scheduler to move. Every page of a new object is written once, so a page
// the allocator released and handed out again faults.
//
// Prints operations per second and minor page faults per operation
// (getrusage), as key=value and as METRIC lines for tools/compare. With
// --warmup=S both count only after the first S seconds: the heaps' first
// growth is a fixed cost whose share of a short run depends on how fast this
// machine faults, while what a long-running service pays is the steady state.
//
// --ops=N counts operations instead of seconds: each thread runs
// --warmup-ops operations, waits for the others, then N counted operations,
// re-pinning itself every --move-ops operations. Faults per operation then
// depend on what the allocator does, not on how fast the machine runs: in an
// emulated guest a timed run's warm-up may end before the heaps' first growth
// does, and its faults are then that growth's.
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "benchmarks/memory/pin.h"
#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  int threads = 4;
  double seconds = 8;
  double warmup = 0;
  long move_ms = 300;
  long large_percent = 2;
  long slots = 1024;
  long ops = 0;  // 0: timed by --seconds
  long warmup_ops = 0;
  long move_ops = 1000;
};

long ParseCount(const char* arg, const char* flag) {
  return std::strcmp(arg, "0") == 0 ? 0 : workloads::ParsePositive(arg, flag);
}

Options Parse(int argc, char** argv) {
  static const option kLong[] = {
      {"threads", required_argument, nullptr, 't'},
      {"seconds", required_argument, nullptr, 's'},
      {"warmup", required_argument, nullptr, 'w'},
      {"move-ms", required_argument, nullptr, 'm'},
      {"large-percent", required_argument, nullptr, 'l'},
      {"slots", required_argument, nullptr, 'n'},
      {"ops", required_argument, nullptr, 'o'},
      {"warmup-ops", required_argument, nullptr, 'W'},
      {"move-ops", required_argument, nullptr, 'M'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  Options o;
  bool timed_flags = false;
  bool counted_flags = false;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads =
            static_cast<int>(workloads::ParsePositive(optarg, "--threads"));
        if (o.threads > 1024) workloads::Die("--threads is at most 1024");
        break;
      case 's':
        timed_flags = true;
        o.seconds =
            static_cast<double>(workloads::ParsePositive(optarg, "--seconds"));
        break;
      case 'w':
        timed_flags = true;
        o.warmup = std::strcmp(optarg, "0") == 0
                       ? 0
                       : static_cast<double>(
                             workloads::ParsePositive(optarg, "--warmup"));
        break;
      case 'm':
        timed_flags = true;
        o.move_ms = ParseCount(optarg, "--move-ms");  // 0: unpinned
        break;
      case 'l':
        o.large_percent = ParseCount(optarg, "--large-percent");
        if (o.large_percent > 100) {
          workloads::Die("--large-percent is at most 100");
        }
        break;
      case 'n':
        o.slots = workloads::ParsePositive(optarg, "--slots");
        break;
      case 'o':
        o.ops = workloads::ParsePositive(optarg, "--ops");
        break;
      case 'W':
        counted_flags = true;
        o.warmup_ops = ParseCount(optarg, "--warmup-ops");
        break;
      case 'M':
        counted_flags = true;
        o.move_ops = ParseCount(optarg, "--move-ops");  // 0: unpinned
        break;
      case 'h':
        std::printf(
            "usage: migrating [--threads=4] [--seconds=8] [--warmup=0] "
            "[--move-ms=300]\n                 [--large-percent=2] "
            "[--slots=1024]\n"
            "       migrating --ops=N [--warmup-ops=0] [--move-ops=1000] "
            "[--threads=4] ...\n"
            "Threads replace random live objects (mostly 16 B - 4 KiB, "
            "--large-percent\nof 256 KiB - 8 MiB), hand one freed object in "
            "8 to the next thread, and\nre-pin to the next CPU every "
            "--move-ms (0: unpinned). Prints ops_per_s=\nand "
            "faults_per_op= (minor page faults) and METRIC lines, counted "
            "after\nthe first --warmup seconds of the --seconds run. With "
            "--ops, each thread runs\n--warmup-ops operations, waits for "
            "the others, then --ops counted ones,\nre-pinning every "
            "--move-ops operations (0: unpinned).\n");
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  if (o.warmup >= o.seconds) workloads::Die("--warmup must be below --seconds");
  if (o.ops == 0 && counted_flags) {
    workloads::Die("--warmup-ops and --move-ops need --ops");
  }
  if (o.ops > 0 && timed_flags) {
    workloads::Die(
        "--ops counts operations: --seconds, --warmup, --move-ms "
        "do not apply");
  }
  return o;
}

struct Object {
  char* p = nullptr;
  size_t size = 0;
};

// Objects handed from one thread to the next; each thread frees its inbox.
struct Inbox {
  std::mutex mu;
  std::vector<Object> objects;
};

uint64_t Next(uint64_t* s) {  // xorshift64*
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

size_t PickSize(uint64_t* rng, long large_percent) {
  if (static_cast<long>(Next(rng) % 100) < large_percent) {
    return (size_t{256} << 10) << (Next(rng) % 6);  // 256 KiB - 8 MiB
  }
  return size_t{16} << (Next(rng) % 9);  // 16 B - 4 KiB
}

// One byte a page: the first write of each page faults it in.
void Touch(char* p, size_t size, char value) {
  for (size_t i = 0; i < size; i += 4096) p[i] = value;
  p[size - 1] = value;
}

long MinorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const std::vector<int> cpus = memory_probe::AllowedCpus();
  if (o.ops > 0) {
    std::printf(
        "# migrating threads=%d ops=%ld warmup_ops=%ld move_ops=%ld "
        "large_percent=%ld slots=%ld cpus=%s\n",
        o.threads, o.ops, o.warmup_ops, o.move_ops, o.large_percent, o.slots,
        memory_probe::JoinCpus(cpus).c_str());
  } else {
    std::printf(
        "# migrating threads=%d seconds=%g warmup=%g move_ms=%ld "
        "large_percent=%ld slots=%ld cpus=%s\n",
        o.threads, o.seconds, o.warmup, o.move_ms, o.large_percent, o.slots,
        memory_probe::JoinCpus(cpus).c_str());
  }
  std::vector<Inbox> inboxes(o.threads);
  std::atomic<long> total_ops{0};
  // The first thread past a timed warm-up, or the last one to finish a
  // counted warm-up, reads the process's faults.
  std::once_flag warm_once;
  long faults_before = MinorFaults();
  double warm_at = 0;
  std::mutex warm_mu;
  std::condition_variable warm_cv;
  int warmed = 0;
  const bool counted = o.ops > 0;
  double wall = workloads::RunThreads(o.threads, [&](int t) {
    uint64_t rng = 0x9E3779B97F4A7C15ULL * (t + 1);
    size_t cpu_index = static_cast<size_t>(t) % cpus.size();
    const bool pinned = counted ? o.move_ops > 0 : o.move_ms > 0;
    if (pinned) memory_probe::PinToCpu(cpus[cpu_index]);
    std::vector<Object> live(o.slots);
    std::vector<Object> drained;
    Inbox& next = inboxes[(t + 1) % o.threads];
    const double start = workloads::NowSeconds();
    double next_move = start + o.move_ms / 1000.0;
    long ops = 0;
    long ops_at_warm = 0;
    bool counting = counted ? o.warmup_ops == 0 : o.warmup == 0;
    auto move = [&] {
      cpu_index = (cpu_index + 1) % cpus.size();
      memory_probe::PinToCpu(cpus[cpu_index]);
    };
    for (;;) {
      if (counted) {
        if (!counting && ops == o.warmup_ops) {
          std::unique_lock<std::mutex> l(warm_mu);
          if (++warmed == o.threads) {
            faults_before = MinorFaults();
            warm_at = workloads::NowSeconds();
            warm_cv.notify_all();
          }
          warm_cv.wait(l, [&] { return warmed == o.threads; });
          counting = true;
          ops_at_warm = ops;
        }
        if (ops - ops_at_warm == o.ops && counting) break;
        if (pinned && ops > 0 && ops % o.move_ops == 0) move();
      }
      if ((ops & 63) == 0) {
        if (!counted) {
          const double now = workloads::NowSeconds();
          if (now - start >= o.seconds) break;
          if (!counting && now - start >= o.warmup) {
            std::call_once(warm_once, [&] {
              faults_before = MinorFaults();
              warm_at = now;
            });
            counting = true;
            ops_at_warm = ops;
          }
          if (pinned && now >= next_move) {
            move();
            next_move = now + o.move_ms / 1000.0;
          }
        }
        {
          std::lock_guard<std::mutex> l(inboxes[t].mu);
          drained.swap(inboxes[t].objects);
        }
        for (const Object& d : drained) std::free(d.p);
        drained.clear();
      }
      Object& slot = live[Next(&rng) % live.size()];
      if (slot.p != nullptr) {
        if (Next(&rng) % 8 == 0) {
          std::lock_guard<std::mutex> l(next.mu);
          next.objects.push_back(slot);
        } else {
          std::free(slot.p);
        }
      }
      slot.size = PickSize(&rng, o.large_percent);
      slot.p = static_cast<char*>(std::malloc(slot.size));
      if (slot.p == nullptr) workloads::Die("malloc(%zu) failed", slot.size);
      Touch(slot.p, slot.size, static_cast<char>(ops));
      ++ops;
    }
    for (const Object& s : live) std::free(s.p);
    total_ops += ops - ops_at_warm;
  });
  for (Inbox& in : inboxes) {
    for (const Object& d : in.objects) std::free(d.p);
  }
  if (counted ? o.warmup_ops > 0 : o.warmup > 0) {
    wall = workloads::NowSeconds() - warm_at;
  }
  const long faults = MinorFaults() - faults_before;
  const double ops = static_cast<double>(total_ops.load());
  std::printf(
      "ops=%.0f seconds=%.2f ops_per_s=%.0f minor_faults=%ld "
      "faults_per_op=%.3f\n",
      ops, wall, ops / wall, faults, faults / ops);
  workloads::PrintMetric("ops_per_s", ops / wall, "ops/s");
  workloads::PrintMetric("faults_per_op", faults / ops, "faults");
  // The same figures for tools/compare --cmd, which reads METRIC lines.
  std::printf("METRIC ops_per_s %.6g ops/s higher\n", ops / wall);
  std::printf("METRIC faults_per_op %.6g faults lower\n", faults / ops);
  return 0;
}
