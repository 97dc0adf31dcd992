// Resident memory of many warm thread caches under transparent huge pages
// (issue 26). --threads threads, pinned round robin to the allowed CPUs (so
// in a lab guest every node's lists and region are used), each allocate,
// write and free --rounds batches of --objects small objects (a fixed
// pseudo-random mix of sizes, log-uniform in --min-size..--max-size, 16 B to
// 8 KiB by default: the same sizes, in the same order, under any allocator),
// so that every thread has a warm cache. Then all wait at a barrier while
// the main thread reads the peak RSS (ru_maxrss), Rss and AnonHugePages
// from /proc/self/smaps_rollup, the same two counted from the page tables
// (page_tables.h: resident_kib, huge_kib; smaps misses huge pages under NUMA
// balancing), and prints them as one result line
// ("thp_threads: ..."), followed by figures.h's heap_mib= line and METRIC
// lines (tools/compare).
//
// --heap-mib N is the large-heap mode: the threads also allocate and write
// N MiB between them (half in the same small mix, half in 1 MiB blocks) and
// hold it at the barrier, to compare AnonHugePages with vanilla's on a heap
// that huge pages are good for.
//
// For finding where the memory goes: --maps prints Rss and AnonHugePages
// summed per kind of mapping (each NUMA node's region, read from the
// allocator's tcmalloc.numa.node<N>.region_* properties; the brk heap, where
// tcmalloc's metadata lives; the thread stacks, which the probe maps itself;
// other anonymous memory; files), --smaps FILE copies /proc/self/smaps at the
// barrier, and --nohuge KIND,... applies MADV_NOHUGEPAGE to the node regions
// (from main, before any thread starts) or the thread stacks (before first
// use). The brk heap and the allocator's own mmaps are covered by the
// LD_PRELOAD shim thp_shim.c, which sees every growth before it is touched.
//
// The probe links plain libc malloc: the allocator under test is
// LD_PRELOADed, as for the other memory probes (figures.h).
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/memory/figures.h"
#include "benchmarks/memory/page_tables.h"
#include "benchmarks/memory/pin.h"
#include "benchmarks/workloads/common.h"

extern "C" void MallocExtension_GetStats(char* buffer, int buffer_length)
    __attribute__((weak));

namespace {

// Bad input: one line on stderr, exit status 1.
[[noreturn]] void BadInput(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
void BadInput(const char* format, ...) {
  std::fprintf(stderr, "thp_threads: error: ");
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fprintf(stderr, " (see --help)\n");
  std::exit(1);
}

long ParseCount(const char* text, const char* flag, long min, long max) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < min || value > max) {
    BadInput("%s wants a whole number in %ld..%ld, got '%s'", flag, min, max,
             text);
  }
  return value;
}

struct Options {
  long threads = 8;
  long rounds = 8;
  long objects = 32;
  long min_size = 16;
  long max_size = 8192;
  long stack_kib = 256;
  long heap_mib = 0;
  bool pin = true;
  bool maps = false;
  bool frames = false;
  bool nohuge_regions = false;
  bool nohuge_stacks = false;
  long touch_kib = 0;
  bool thp_disable = false;
  std::string smaps_file;
};

const char kUsage[] =
    "usage: thp_threads [--threads=8] [--rounds=8] [--objects=32]\n"
    "         [--min-size=16] [--max-size=8192] [--stack-kib=256]\n"
    "         [--heap-mib=0] [--no-pin] [--maps] [--frames] [--smaps=FILE]\n"
    "         [--nohuge=regions,stacks] [--touch-kib=0] [--thp-disable]\n"
    "Each thread allocates, writes and frees --rounds batches of --objects\n"
    "objects of a fixed log-uniform size mix, then all wait at a barrier\n"
    "while the main thread prints one line:\n"
    "  thp_threads: threads=T thp=always|madvise|never peak_rss_kib=\n"
    "  smaps_rss_kib= anon_huge_kib= resident_kib= huge_kib= heap_bytes= ...\n"
    "(resident_kib, huge_kib: counted from pagemap; huge_kib=-1 unless\n"
    "root), then heap_mib= and METRIC lines. --heap-mib N: the threads also "
    "hold\n"
    "N MiB (half small objects, half 1 MiB blocks) at the barrier.\n"
    "--maps: 'mapping kind=...' lines (Rss, AnonHugePages per kind of\n"
    "mapping, and the 2 MiB frames with present pages: frames=, frame_kib=);\n"
    "--frames: also one 'frame' line per such frame of the brk heap and the\n"
    "node regions; --smaps FILE: a copy of /proc/self/smaps at the barrier;\n"
    "--nohuge: MADV_NOHUGEPAGE on the NUMA node regions and/or the thread\n"
    "stacks. For the controls of tests/numa_heap/thp_lab_run: --touch-kib N\n"
    "makes the main thread allocate and write N KiB more before measuring;\n"
    "--thp-disable turns THP off for the process (prctl PR_SET_THP_DISABLE)\n"
    "when main starts. Bad input: one line on stderr, exit status 1.\n";

Options Parse(int argc, char** argv) {
  static const option kLong[] = {{"threads", required_argument, nullptr, 't'},
                                 {"rounds", required_argument, nullptr, 'r'},
                                 {"objects", required_argument, nullptr, 'o'},
                                 {"min-size", required_argument, nullptr, 'm'},
                                 {"max-size", required_argument, nullptr, 'M'},
                                 {"stack-kib", required_argument, nullptr, 's'},
                                 {"heap-mib", required_argument, nullptr, 'H'},
                                 {"no-pin", no_argument, nullptr, 'n'},
                                 {"maps", no_argument, nullptr, 'p'},
                                 {"frames", no_argument, nullptr, 'f'},
                                 {"smaps", required_argument, nullptr, 'S'},
                                 {"nohuge", required_argument, nullptr, 'N'},
                                 {"touch-kib", required_argument, nullptr, 'T'},
                                 {"thp-disable", no_argument, nullptr, 'D'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = ParseCount(optarg, "--threads", 1, 4096);
        break;
      case 'r':
        o.rounds = ParseCount(optarg, "--rounds", 1, 1 << 20);
        break;
      case 'o':
        o.objects = ParseCount(optarg, "--objects", 1, 1 << 20);
        break;
      case 'm':
        o.min_size = ParseCount(optarg, "--min-size", 1, 1 << 20);
        break;
      case 'M':
        o.max_size = ParseCount(optarg, "--max-size", 1, 1 << 20);
        break;
      case 's':
        o.stack_kib = ParseCount(optarg, "--stack-kib", 64, 1 << 20);
        break;
      case 'H':
        o.heap_mib = ParseCount(optarg, "--heap-mib", 0, 1 << 16);
        break;
      case 'n':
        o.pin = false;
        break;
      case 'p':
        o.maps = true;
        break;
      case 'f':
        o.maps = o.frames = true;
        break;
      case 'S':
        if (*optarg == '\0') BadInput("--smaps wants a file name");
        o.smaps_file = optarg;
        break;
      case 'N': {
        const std::string all(optarg);
        size_t start = 0;
        while (true) {
          const size_t comma = all.find(',', start);
          const std::string kind = all.substr(start, comma - start);
          if (kind == "regions") {
            o.nohuge_regions = true;
          } else if (kind == "stacks") {
            o.nohuge_stacks = true;
          } else if (kind != "none") {
            BadInput(
                "--nohuge wants regions, stacks or none, comma-separated, "
                "got '%s'",
                optarg);
          }
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        break;
      }
      case 'T':
        o.touch_kib = ParseCount(optarg, "--touch-kib", 0, 1 << 24);
        break;
      case 'D':
        o.thp_disable = true;
        break;
      case 'h':
        std::fputs(kUsage, stdout);
        std::exit(0);
      default:
        BadInput("unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) BadInput("unexpected argument '%s'", argv[optind]);
  if (o.min_size > o.max_size) {
    BadInput("--min-size (%ld) is above --max-size (%ld)", o.min_size,
             o.max_size);
  }
  if (o.heap_mib != 0 && (o.heap_mib << 20) / o.threads < (2 << 20)) {
    BadInput("--heap-mib %ld is less than 2 MiB per thread for %ld threads",
             o.heap_mib, o.threads);
  }
  return o;
}

// The THP mode the kernel runs with: the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled, or "unknown".
std::string ThpMode() {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f == nullptr) return "unknown";
  char line[128] = "";
  const bool ok = std::fgets(line, sizeof(line), f) != nullptr;
  std::fclose(f);
  const char* open = ok ? std::strchr(line, '[') : nullptr;
  const char* close = open != nullptr ? std::strchr(open, ']') : nullptr;
  if (close == nullptr) return "unknown";
  return std::string(open + 1, close);
}

// One counter of /proc/vmstat (system-wide; the lab guest runs nothing
// else), or -1.
long long Vmstat(const char* name) {
  std::FILE* f = std::fopen("/proc/vmstat", "r");
  if (f == nullptr) return -1;
  char key[128];
  long long value;
  long long result = -1;
  while (std::fscanf(f, "%127s %lld", key, &value) == 2) {
    if (std::strcmp(key, name) == 0) {
      result = value;
      break;
    }
  }
  std::fclose(f);
  return result;
}

// "Bytes in malloc metadata" from the allocator's GetStats text, or -1.
long long MetadataBytes() {
  static char text[1 << 16];
  if (MallocExtension_GetStats == nullptr) return -1;
  MallocExtension_GetStats(text, sizeof(text));
  for (const char* line = text; *line != '\0';) {
    const char* end = std::strchr(line, '\n');
    const std::string row(line,
                          end == nullptr ? std::strlen(line) : end - line);
    if (row.find("Bytes in malloc metadata") != std::string::npos) {
      const size_t plus = row.find('+');
      if (plus != std::string::npos) {
        return std::strtoll(row.c_str() + plus + 1, nullptr, 10);
      }
    }
    if (end == nullptr) break;
    line = end + 1;
  }
  return -1;
}

struct Range {
  uintptr_t begin;
  uintptr_t end;
};

// Each node's region window (region_begin..region_end): the part of the
// address space only that node's heap grows in. Empty when the allocator
// has no NUMA layer (vanilla) or it is off.
std::vector<Range> Regions() {
  std::vector<Range> regions;
  const long long nodes = memory_probe::Property("tcmalloc.numa.num_nodes");
  for (long long n = 0; n < nodes && n < 64; ++n) {
    char name[96];
    std::snprintf(name, sizeof(name), "tcmalloc.numa.node%lld.region_begin", n);
    const long long begin = memory_probe::Property(name);
    std::snprintf(name, sizeof(name), "tcmalloc.numa.node%lld.region_end", n);
    const long long end = memory_probe::Property(name);
    if (begin <= 0 || end <= begin) break;
    regions.push_back(
        {static_cast<uintptr_t>(begin), static_cast<uintptr_t>(end)});
  }
  return regions;
}

long long RegionProperty(int node, const char* field) {
  char name[96];
  std::snprintf(name, sizeof(name), "tcmalloc.numa.node%d.region_%s", node,
                field);
  return memory_probe::Property(name);
}

// The smaps_rollup figures, in KiB.
struct Rollup {
  long rss = -1;
  long anon_huge = -1;
};

Rollup ReadRollup() {
  Rollup r;
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return r;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "Rss:", 4) == 0) r.rss = std::atol(line + 4);
    if (std::strncmp(line, "AnonHugePages:", 14) == 0) {
      r.anon_huge = std::atol(line + 14);
    }
  }
  std::fclose(f);
  return r;
}

// Per kind of mapping: how many VMAs, their size, Rss and AnonHugePages.
struct KindTotals {
  std::string kind;
  long vmas = 0;
  long size_kib = 0;
  long rss_kib = 0;
  long anon_huge_kib = 0;
  // 2 MiB-aligned frames that lie wholly inside a readable or writable
  // mapping and hold at least one present page (/proc/self/pagemap), and the
  // present KiB in them: under THP=always the first touch of such a frame
  // can fault a whole huge page, so with THP off, 2048 * frames - frame_kib
  // is what huge pages at fault would add here.
  long frames = 0;
  long frame_kib = 0;
  // Present pages of the kind that hold only zero bytes (never written, or
  // written with zeros): under THP=always, mostly what huge pages added.
  long zero_kib = 0;
};

struct Shared {
  Options options;
  std::vector<int> cpus;
  std::vector<Range> stacks;  // usable part of each thread's stack
  pthread_barrier_t warm;     // every thread warmed; the main thread measures
  pthread_barrier_t done;     // measured; threads may free and exit
};

std::string KindOf(uintptr_t begin, uintptr_t end, const std::string& path,
                   const std::vector<Range>& regions, const Shared& s) {
  for (size_t n = 0; n < regions.size(); ++n) {
    if (begin >= regions[n].begin && end <= regions[n].end) {
      return "node" + std::to_string(n) + "-region";
    }
  }
  for (const Range& r : s.stacks) {
    // The guard page below each stack counts with it.
    if (begin >= r.begin - 4096 && end <= r.end) return "thread-stacks";
  }
  if (path == "[heap]") return "brk-heap";
  if (path == "[stack]") return "main-stack";
  if (path.empty()) return "anon-other";
  if (path[0] == '[') return "kernel";  // [vdso], [vvar], [vsyscall]
  return "files";
}

// Reads /proc/self/smaps once: totals per kind, optionally a raw copy.
std::vector<KindTotals> ReadSmaps(const std::vector<Range>& regions,
                                  const Shared& s, const std::string& copy,
                                  bool frames_out) {
  std::vector<KindTotals> totals;
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) workloads::Die("cannot read /proc/self/smaps");
  std::FILE* out = nullptr;
  if (!copy.empty()) {
    out = std::fopen(copy.c_str(), "w");
    if (out == nullptr) {
      workloads::Die("cannot write %s: %s", copy.c_str(), std::strerror(errno));
    }
  }
  struct Vma {
    uintptr_t begin, end;
    size_t kind;
    bool readable;
  };
  std::vector<Vma> vmas;
  KindTotals* current = nullptr;
  char line[4096];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (out != nullptr) std::fputs(line, out);
    unsigned long begin, end;
    char perms[8] = "";
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &begin, &end, perms,
                    &path_at) == 3 &&
        path_at > 0) {
      std::string path(line + path_at);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) {
        path.pop_back();
      }
      const std::string kind = KindOf(begin, end, path, regions, s);
      current = nullptr;
      for (KindTotals& t : totals) {
        if (t.kind == kind) current = &t;
      }
      if (current == nullptr) {
        totals.push_back(KindTotals{kind});
        current = &totals.back();
      }
      ++current->vmas;
      current->size_kib += static_cast<long>((end - begin) >> 10);
      vmas.push_back({begin, end, static_cast<size_t>(current - &totals[0]),
                      perms[0] == 'r'});
    } else if (current != nullptr) {
      if (std::strncmp(line, "Rss:", 4) == 0) {
        current->rss_kib += std::atol(line + 4);
      } else if (std::strncmp(line, "AnonHugePages:", 14) == 0) {
        current->anon_huge_kib += std::atol(line + 14);
      }
    }
  }
  std::fclose(f);
  if (out != nullptr && std::fclose(out) != 0) {
    workloads::Die("cannot write %s", copy.c_str());
  }
  // Present pages, from /proc/self/pagemap (bit 63: present; bit 62:
  // swapped, which counts too), and which of them hold only zero bytes:
  // memory resident without ever having been written, which is what a huge
  // page faulted in for a few bytes brings along. Read 2 MiB-aligned frame
  // by frame, each clipped to its mapping.
  const int pagemap = open("/proc/self/pagemap", O_RDONLY);
  if (pagemap < 0) workloads::Die("cannot read /proc/self/pagemap");
  constexpr uintptr_t kFrame = uintptr_t{2} << 20;
  static uint64_t entries[kFrame / 4096];
  for (const Vma& v : vmas) {
    KindTotals& t = totals[v.kind];
    if (!v.readable || t.kind == "files" || t.kind == "kernel") continue;
    for (uintptr_t frame = v.begin & ~(kFrame - 1); frame < v.end;
         frame += kFrame) {
      const uintptr_t from = std::max(frame, v.begin);
      const uintptr_t to = std::min(frame + kFrame, v.end);
      const size_t pages = (to - from) / 4096;
      const off_t at = static_cast<off_t>(from / 4096 * sizeof(uint64_t));
      const ssize_t want = static_cast<ssize_t>(pages * sizeof(uint64_t));
      if (pread(pagemap, entries, want, at) != want) {
        workloads::Die("cannot read /proc/self/pagemap at 0x%" PRIxPTR, from);
      }
      long present = 0, zero = 0;
      for (size_t i = 0; i < pages; ++i) {
        if ((entries[i] >> 62) == 0) continue;
        ++present;
        const uint64_t* page =
            reinterpret_cast<const uint64_t*>(from + i * 4096);
        bool all_zero = true;
        for (size_t w = 0; w < 4096 / sizeof(uint64_t) && all_zero; ++w) {
          all_zero = page[w] == 0;
        }
        zero += all_zero;
      }
      t.zero_kib += zero * 4;
      if (present == 0 || to - from != kFrame) continue;
      ++t.frames;
      t.frame_kib += present * 4;
      if (frames_out && (t.kind == "brk-heap" ||
                         t.kind.find("-region") != std::string::npos)) {
        std::printf("frame kind=%s addr=0x%" PRIxPTR
                    " present_kib=%ld zero_kib=%ld\n",
                    t.kind.c_str(), frame, present * 4, zero * 4);
      }
    }
  }
  close(pagemap);
  std::sort(
      totals.begin(), totals.end(),
      [](const KindTotals& a, const KindTotals& b) { return a.kind < b.kind; });
  return totals;
}

// Sizes log-uniform in [min, max], from a generator seeded by the thread's
// index: every allocator sees the same requests in the same order.
class SizeMix {
 public:
  SizeMix(uint64_t seed, long min, long max)
      : state_(seed * 0x9E3779B97F4A7C15ull + 1),
        log_min_(std::log(static_cast<double>(min))),
        log_span_(std::log(static_cast<double>(max)) -
                  std::log(static_cast<double>(min))),
        max_(max) {}

  size_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    const double u = static_cast<double>(state_ >> 11) / 9007199254740992.0;
    const long size = std::lround(std::exp(log_min_ + u * log_span_));
    return static_cast<size_t>(std::min(size, max_));
  }

 private:
  uint64_t state_;
  double log_min_;
  double log_span_;
  long max_;
};

void* Fill(size_t size, int value) {
  void* p = std::malloc(size);
  if (p == nullptr) workloads::Die("malloc(%zu) failed", size);
  std::memset(p, value, size);
  workloads::Escape(p);
  return p;
}

struct ThreadArg {
  Shared* shared;
  long index;
};

void* Work(void* raw) {
  const ThreadArg& arg = *static_cast<ThreadArg*>(raw);
  Shared& s = *arg.shared;
  const Options& o = s.options;
  if (o.pin) memory_probe::PinToCpu(s.cpus[arg.index % s.cpus.size()]);
  SizeMix mix(static_cast<uint64_t>(arg.index) + 1, o.min_size, o.max_size);
  const int value = static_cast<int>(arg.index & 0x7f) + 1;
  std::vector<void*> held(o.objects);
  for (long round = 0; round < o.rounds; ++round) {
    for (void*& p : held) p = Fill(mix.Next(), value);
    for (void* p : held) std::free(p);
  }
  // The large heap: this thread's share, half small objects, half 1 MiB
  // blocks, held until the main thread has measured.
  std::vector<void*> heap;
  if (o.heap_mib > 0) {
    const size_t share = (static_cast<size_t>(o.heap_mib) << 20) / o.threads;
    heap.reserve(share / 64 + 16);
    size_t small = 0;
    while (small < share / 2) {
      const size_t size = mix.Next();
      heap.push_back(Fill(size, value));
      small += size;
    }
    for (size_t big = 0; big + (1 << 20) <= share - share / 2; big += 1 << 20) {
      heap.push_back(Fill(1 << 20, value));
    }
  }
  pthread_barrier_wait(&s.warm);
  pthread_barrier_wait(&s.done);
  for (void* p : heap) std::free(p);
  return nullptr;
}

// A stack for one thread, mapped by the probe (so that its range is known
// and --nohuge=stacks applies before first use), with a guard page below.
// Raw syscalls, so that an LD_PRELOADed shim that watches the allocator's
// mmaps does not count it.
Range MapStack(size_t bytes, bool nohuge) {
  const size_t total = bytes + 4096;
  const long p = syscall(SYS_mmap, 0L, total, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0L);
  if (p < 0) workloads::Die("cannot map a %zu KiB stack", bytes >> 10);
  const uintptr_t base = static_cast<uintptr_t>(p);
  if (syscall(SYS_mprotect, base, 4096L, PROT_NONE) != 0) {
    workloads::Die("cannot protect a stack guard page");
  }
  if (nohuge && syscall(SYS_madvise, base + 4096, static_cast<long>(bytes),
                        MADV_NOHUGEPAGE) != 0) {
    workloads::Die("madvise(MADV_NOHUGEPAGE) on a stack failed: %s",
                   std::strerror(errno));
  }
  return {base + 4096, base + total};
}

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  s.options = Parse(argc, argv);
  const Options& o = s.options;
  if (o.thp_disable && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
    workloads::Die("prctl(PR_SET_THP_DISABLE): %s", std::strerror(errno));
  }
  const long long thp_faults_before = Vmstat("thp_fault_alloc");
  const long long thp_collapses_before = Vmstat("thp_collapse_alloc");
  s.cpus = memory_probe::AllowedCpus();
  const std::string thp = ThpMode();
  const std::vector<Range> regions = Regions();

  // MADV_NOHUGEPAGE on each node's reserved region, before any thread runs.
  // What the program and its libraries allocated before main may already
  // sit in a huge page (node0's first granule, usually): reported as
  // pre_main_huge_kib, from the regions' AnonHugePages at this point.
  long pre_main_huge_kib = 0;
  std::vector<long long> reserved_at_start;
  if (o.nohuge_regions) {
    if (regions.empty()) {
      std::fprintf(stderr,
                   "thp_threads: note: --nohuge=regions: the allocator has no "
                   "NUMA regions; nothing to advise\n");
    }
    for (size_t n = 0; n < regions.size(); ++n) {
      const long long reserved =
          RegionProperty(static_cast<int>(n), "reserved_bytes");
      reserved_at_start.push_back(reserved);
      if (reserved > 0 &&
          madvise(reinterpret_cast<void*>(regions[n].begin),
                  static_cast<size_t>(reserved), MADV_NOHUGEPAGE) != 0) {
        workloads::Die("madvise(MADV_NOHUGEPAGE) on node %zu's region: %s", n,
                       std::strerror(errno));
      }
    }
    for (const KindTotals& t : ReadSmaps(regions, s, "", false)) {
      if (t.kind.find("-region") != std::string::npos) {
        pre_main_huge_kib += t.anon_huge_kib;
      }
    }
  }

  const long n = o.threads;
  std::printf(
      "# thp_threads threads=%ld rounds=%ld objects=%ld sizes=%ld..%ld "
      "stack_kib=%ld heap_mib=%ld touch_kib=%ld thp_disable=%d pin=%s "
      "nohuge=%s%s thp=%s\n",
      n, o.rounds, o.objects, o.min_size, o.max_size, o.stack_kib, o.heap_mib,
      o.touch_kib, o.thp_disable ? 1 : 0,
      o.pin ? memory_probe::JoinCpus(s.cpus).c_str() : "no",
      o.nohuge_regions ? "regions" : "",
      o.nohuge_stacks ? (o.nohuge_regions ? ",stacks" : "stacks")
                      : (o.nohuge_regions ? "" : "none"),
      thp.c_str());
  pthread_barrier_init(&s.warm, nullptr, static_cast<unsigned>(n + 1));
  pthread_barrier_init(&s.done, nullptr, static_cast<unsigned>(n + 1));
  s.stacks.reserve(n);
  for (long i = 0; i < n; ++i) {
    s.stacks.push_back(
        MapStack(static_cast<size_t>(o.stack_kib) << 10, o.nohuge_stacks));
  }
  std::vector<pthread_t> threads(n);
  std::vector<ThreadArg> args(n);
  for (long i = 0; i < n; ++i) {
    args[i] = {&s, i};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, reinterpret_cast<void*>(s.stacks[i].begin),
                          s.stacks[i].end - s.stacks[i].begin);
    const int rc = pthread_create(&threads[i], &attr, Work, &args[i]);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      workloads::Die("pthread_create failed for thread %ld of %ld: %s", i + 1,
                     n, std::strerror(rc));
    }
  }
  // The control's extra resident memory, held until the end.
  void* touched = nullptr;
  if (o.touch_kib > 0) {
    touched = Fill(static_cast<size_t>(o.touch_kib) << 10, 1);
  }
  pthread_barrier_wait(&s.warm);

  // Everything below reads; what it allocates (stdio buffers, strings) is a
  // few KiB, the same under every allocator.
  const Rollup rollup = ReadRollup();
  const memory_probe::PageTableCount counted =
      memory_probe::CountFromPageTables();
  const long peak_kib = memory_probe::PeakRssKib();
  const long long heap = memory_probe::SampleHeap();
  const long long metadata = MetadataBytes();
  const std::vector<KindTotals> kinds =
      ReadSmaps(regions, s, o.smaps_file, o.frames);
  const long long thp_faults = Vmstat("thp_fault_alloc");
  const long long thp_collapses = Vmstat("thp_collapse_alloc");
  bool regions_grew = false;
  for (size_t i = 0; i < reserved_at_start.size(); ++i) {
    if (RegionProperty(static_cast<int>(i), "reserved_bytes") !=
        reserved_at_start[i]) {
      regions_grew = true;
    }
  }
  if (o.maps) {
    for (const KindTotals& t : kinds) {
      std::printf(
          "mapping kind=%s vmas=%ld size_kib=%ld rss_kib=%ld "
          "anon_huge_kib=%ld zero_kib=%ld frames=%ld frame_kib=%ld\n",
          t.kind.c_str(), t.vmas, t.size_kib, t.rss_kib, t.anon_huge_kib,
          t.zero_kib, t.frames, t.frame_kib);
    }
    for (size_t i = 0; i < regions.size(); ++i) {
      const int node = static_cast<int>(i);
      std::printf("region node=%d begin=0x%" PRIxPTR
                  " committed_kib=%lld "
                  "reserved_kib=%lld\n",
                  node, regions[i].begin,
                  RegionProperty(node, "committed_bytes") >> 10,
                  RegionProperty(node, "reserved_bytes") >> 10);
    }
  }
  if (o.nohuge_regions && regions_grew) {
    std::fprintf(stderr,
                 "thp_threads: note: --nohuge=regions: a region reserved more "
                 "address space after main advised it; that part could get "
                 "huge pages\n");
  }
  const auto delta = [](long long after, long long before) {
    return after < 0 || before < 0 ? -1 : after - before;
  };
  std::printf(
      "thp_threads: threads=%ld heap_mib_held=%ld thp=%s peak_rss_kib=%ld "
      "smaps_rss_kib=%ld anon_huge_kib=%ld resident_kib=%ld huge_kib=%ld "
      "heap_bytes=%lld "
      "metadata_bytes=%lld thp_fault_alloc=%lld thp_collapse_alloc=%lld "
      "pre_main_huge_kib=%ld nohuge_complete=%s numa_active=%lld "
      "numa_nodes=%lld\n",
      n, o.heap_mib, thp.c_str(), peak_kib, rollup.rss, rollup.anon_huge,
      counted.present_kib, counted.huge_kib, heap, metadata,
      delta(thp_faults, thp_faults_before),
      delta(thp_collapses, thp_collapses_before), pre_main_huge_kib,
      o.nohuge_regions ? (regions_grew ? "no" : "yes") : "-",
      memory_probe::Property("tcmalloc.numa.active"),
      memory_probe::Property("tcmalloc.numa.num_nodes"));
  memory_probe::PrintResult();
  pthread_barrier_wait(&s.done);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  std::free(touched);
  return 0;
}
