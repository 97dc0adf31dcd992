// Test B of the region lab (tests/numa_heap/region_lab_run, issue 13): with
// node-owned address regions, a block's address names its node, and its pages
// are on that node.
//
// One thread per CPU node, pinned there (the main thread on the first node),
// allocates a shuffled mix of small (16 B - 256 KiB) and large (1 - 8 MiB)
// blocks and writes every page of them.
// Then, per thread, with N its node:
//  (a) region: every block lies in [region_begin, region_end) of node N, as
//      tcmalloc.numa.node<N>.region_* say; the four properties must exist and
//      be consistent (begin < end, committed <= reserved <= end - begin, the
//      thread's live bytes <= committed), and no two nodes' windows overlap;
//  (b) placement: move_pages finds >= 99% of the touched pages on node N.
// Prints one line per node and "region_placement: OK" or a "FAIL:" line per
// problem and "region_placement: FAILED"; exits 0, 1 (a check failed) or 2
// (usage, setup). Run with the allocator LD_PRELOADed.
//
//   --small-mib M, --large-mib M   bytes per thread of each kind (8, 16)
//   --no-region-check              (b) only: works before issue 13 too
//   --node-offset K                control: check thread i against node
//                                  (i + K) mod nodes, which must fail
//   --seed S                       block sizes and order
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/page_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMiB = 1 << 20;
constexpr double kMinLocalPct = 99.0;

struct Options {
  size_t small_mib = 8;
  size_t large_mib = 16;
  bool region_check = true;
  size_t node_offset = 0;
  uint64_t seed = 1;
};

struct Block {
  char* p;
  size_t size;
  bool large;
  int ran_on;  // the node the thread ran on once it had written the block
};

struct Worker {
  int node = -1;
  uint64_t seed = 0;
  bool pinned = false;
  bool malloc_failed = false;
  std::vector<Block> blocks;
  size_t small = 0, large = 0;  // block counts
  size_t bytes = 0;
};

// SplitMix64: the same sizes on every run with the same seed.
uint64_t Next(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void Touch(char* p, size_t size) {
  for (size_t off = 0; off < size; off += kPage) p[off] = 1;
  p[size - 1] = 1;
}

void Run(const Options& opt, Worker* w) {
  w->pinned = region_lab::PinToNode(w->node);
  if (!w->pinned) return;
  size_t small_left = opt.small_mib * kMiB, large_left = opt.large_mib * kMiB;
  uint64_t rng = w->seed;
  while (small_left > 0 || large_left > 0) {
    // About one large block in eight, so both kinds grow the heap in turns.
    const bool large =
        large_left > 0 && (small_left == 0 || Next(&rng) % 8 == 0);
    size_t size;
    if (large) {
      size = kMiB + Next(&rng) % (7 * kMiB + 1);
      large_left -= std::min(size, large_left);
    } else {
      // 16 B - 256 KiB, the power of two skewed low (the smaller of two
      // draws), so that the tiny classes get many blocks.
      const int shift =
          4 + static_cast<int>(std::min(Next(&rng) % 14, Next(&rng) % 14));
      size = (size_t{1} << shift) + Next(&rng) % ((size_t{1} << shift) + 1);
      small_left -= std::min(size, small_left);
    }
    char* p = static_cast<char*>(std::malloc(size));
    if (p == nullptr) {
      w->malloc_failed = true;
      return;
    }
    Touch(p, size);
    w->blocks.push_back({p, size, large, region_lab::CurrentNode()});
    ++(large ? w->large : w->small);
    w->bytes += size;
  }
}

// The pages block `b` covers, in address order, appended to `pages`.
void AppendPages(const Block& b, std::vector<void*>* pages) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(b.p) & ~(kPage - 1);
  const uintptr_t last =
      (reinterpret_cast<uintptr_t>(b.p) + b.size - 1) & ~(kPage - 1);
  for (uintptr_t a = first; a <= last; a += kPage) {
    pages->push_back(reinterpret_cast<void*>(a));
  }
}

// Every page the worker's small (or large) blocks cover, once each. Small and
// large blocks never share a page: they come from different spans.
std::vector<void*> Pages(const Worker& w, bool large) {
  std::vector<void*> pages;
  for (const Block& b : w.blocks) {
    if (b.large == large) AppendPages(b, &pages);
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  return pages;
}

class Report {
 public:
  void Fail(const std::string& what) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures_;
  }
  int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

std::string Mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / double{kMiB});
  return buf;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%#" PRIx64, v);
  return buf;
}

// (a) for one worker against node `target`; returns the line's region part.
std::string CheckRegion(const Worker& w, int target, Report* report) {
  const region_lab::Region r = region_lab::NodeRegion(target);
  if (!r.Complete()) {
    std::string missing;
    const char* fields[] = {"begin", "end", "reserved_bytes",
                            "committed_bytes"};
    const region_lab::Property* props[] = {&r.begin, &r.end, &r.reserved_bytes,
                                           &r.committed_bytes};
    for (int i = 0; i < 4; ++i) {
      if (!props[i]->known) {
        missing += " " + region_lab::RegionPropertyName(target, fields[i]);
      }
    }
    report->Fail("node " + std::to_string(target) +
                 ": the allocator does not answer" + missing +
                 " (no node-owned address regions)");
    return "region missing";
  }
  const std::string node = "node " + std::to_string(target) + ": ";
  const uint64_t b = r.begin.value, e = r.end.value;
  if (b >= e) report->Fail(node + "region_begin >= region_end");
  if (b < e && r.reserved_bytes.value > e - b) {
    report->Fail(node + "region_reserved_bytes exceeds the window");
  }
  if (r.committed_bytes.value > r.reserved_bytes.value) {
    report->Fail(node + "region_committed_bytes > region_reserved_bytes");
  }
  if (w.bytes > r.committed_bytes.value) {
    report->Fail(node + "the thread's " + Mib(w.bytes) +
                 " of live blocks exceed region_committed_bytes (" +
                 Mib(r.committed_bytes.value) + ")");
  }
  size_t outside = 0;
  for (const Block& blk : w.blocks) {
    if (r.Contains(blk.p, blk.size)) continue;
    if (++outside <= 3) {
      report->Fail(node + "block " + Hex(reinterpret_cast<uintptr_t>(blk.p)) +
                   " (" + std::to_string(blk.size) +
                   " B) of the thread on node " + std::to_string(w.node) +
                   " is outside [" + Hex(b) + ", " + Hex(e) + ")");
    }
  }
  if (outside > 3) {
    report->Fail(node + std::to_string(outside) + " blocks outside in all");
  }
  return "region [" + Hex(b) + ", " + Hex(e) + ") reserved " +
         Mib(r.reserved_bytes.value) + " committed " +
         Mib(r.committed_bytes.value) + ", " + std::to_string(outside) +
         " blocks outside";
}

// No address belongs to two nodes' windows.
void CheckDisjoint(const std::vector<int>& nodes, Report* report) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = i + 1; j < nodes.size(); ++j) {
      const region_lab::Region a = region_lab::NodeRegion(nodes[i]);
      const region_lab::Region b = region_lab::NodeRegion(nodes[j]);
      if (!a.Complete() || !b.Complete()) continue;
      if (a.begin.value < b.end.value && b.begin.value < a.end.value) {
        report->Fail("the windows of nodes " + std::to_string(nodes[i]) +
                     " and " + std::to_string(nodes[j]) + " overlap");
      }
    }
  }
}

// Percentage of `pages` move_pages finds on `target`; the other nodes (and
// errors) go to `elsewhere`.
double LocalPct(const std::vector<void*>& pages, int target,
                std::map<int, long>* elsewhere, bool* ok) {
  std::map<int, long> where;
  *ok = region_lab::CountPageNodes(pages, &where);
  long local = 0;
  for (const auto& [n, count] : where) {
    if (n == target) {
      local = count;
    } else {
      (*elsewhere)[n] += count;
    }
  }
  return pages.empty() ? 100.0 : 100.0 * local / pages.size();
}

// Every byte Touch wrote must still read 1: a page the allocator released
// while its block was live reads back zero, and move_pages would then report
// the zero page's node instead of a placement.
void CheckContents(const Worker& w, Report* report) {
  size_t lost = 0;
  for (const Block& b : w.blocks) {
    for (size_t off = 0; off < b.size; off += kPage) {
      if (b.p[off] == 1) continue;
      if (++lost <= 3) {
        report->Fail("node " + std::to_string(w.node) + ": byte " +
                     Hex(reinterpret_cast<uintptr_t>(b.p + off)) + " of a " +
                     std::to_string(b.size) +
                     " B block lost what the thread wrote");
      }
    }
  }
  if (lost > 3) {
    report->Fail("node " + std::to_string(w.node) + ": " +
                 std::to_string(lost) + " written pages lost in all");
  }
}

// (b) for one worker against node `target`; returns the line's pages part:
// small and large blocks apart, so that a miss names its kind.
std::string CheckPlacement(const Worker& w, int target, Report* report) {
  const std::vector<void*> small = Pages(w, false), large = Pages(w, true);
  std::map<int, long> elsewhere;
  bool ok_small = false, ok_large = false;
  const double small_pct = LocalPct(small, target, &elsewhere, &ok_small);
  const double large_pct = LocalPct(large, target, &elsewhere, &ok_large);
  if (!ok_small || !ok_large) {
    report->Fail("move_pages failed");
    return "move_pages failed";
  }
  const size_t total = small.size() + large.size();
  const double pct =
      total == 0
          ? 0
          : (small_pct * small.size() + large_pct * large.size()) / total;
  std::string others;
  for (const auto& [n, count] : elsewhere) {
    others +=
        (n < 0 ? " err" + std::to_string(-n) : " node" + std::to_string(n)) +
        "=" + std::to_string(count);
  }
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%zu pages, %.2f%% on node %d (small %.2f%% of %zu, large "
                "%.2f%% of %zu)%s%s",
                total, pct, target, small_pct, small.size(), large_pct,
                large.size(),
                others.empty() ? "" : "; elsewhere:", others.c_str());
  if (total == 0 || pct < kMinLocalPct) {
    report->Fail("node " + std::to_string(target) + ": below " +
                 std::to_string(static_cast<int>(kMinLocalPct)) + "%: " + buf);
  }
  return buf;
}

// The line of /proc/self/numa_maps for the mapping that holds `addr`: its
// policy and pages per node say whether the kernel was asked for that node.
std::string NumaMapsLine(uintptr_t addr) {
  std::ifstream maps("/proc/self/numa_maps");
  std::string line, best;
  while (std::getline(maps, line)) {
    const uintptr_t start = std::strtoull(line.c_str(), nullptr, 16);
    if (start > addr) break;
    best = line;
  }
  return best.empty() ? "(none)" : best;
}

// Why a placement check failed, when it did: the first few runs of pages
// that lie on another node than `target`, with the block they belong to, the
// node the thread ran on when it wrote that block, and the mapping's policy.
void DescribeMisplaced(const Worker& w, int target) {
  int shown = 0;
  size_t runs = 0;
  for (const Block& b : w.blocks) {
    std::vector<void*> pages;
    AppendPages(b, &pages);
    std::vector<int> nodes;
    if (!region_lab::PageNodes(pages, &nodes)) return;
    for (size_t i = 0; i < nodes.size();) {
      if (nodes[i] == target) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
      ++runs;
      if (shown++ < 4) {
        const uintptr_t a = reinterpret_cast<uintptr_t>(pages[i]);
        std::printf(
            "misplaced: node %d: %zu pages on %s%d at %s (%s MiB-aligned), "
            "page offset %td in a %zu B %s block at %s written on node %d; "
            "numa_maps: %s\n",
            w.node, j - i, nodes[i] < 0 ? "err" : "node",
            nodes[i] < 0 ? -nodes[i] : nodes[i], Hex(a).c_str(),
            a % (2 * kMiB) == 0 ? "2" : "not 2",
            static_cast<ptrdiff_t>(a - reinterpret_cast<uintptr_t>(b.p)),
            b.size, b.large ? "large" : "small",
            Hex(reinterpret_cast<uintptr_t>(b.p)).c_str(), b.ran_on,
            NumaMapsLine(a).c_str());
      }
      i = j;
    }
  }
  if (runs > 4)
    std::printf("misplaced: node %d: %zu runs in all\n", w.node, runs);
}

bool ParseNumber(const char* s, uint64_t* out) {
  char* end = nullptr;
  *out = std::strtoull(s, &end, 10);
  return end != s && *end == '\0';
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: region_placement [--small-mib M] [--large-mib M] "
               "[--no-region-check] [--node-offset K] [--seed S]\n");
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-region-check") {
      opt.region_check = false;
      continue;
    }
    uint64_t v = 0;
    if (i + 1 >= argc || !ParseNumber(argv[++i], &v)) Usage();
    if (a == "--small-mib") {
      opt.small_mib = v;
    } else if (a == "--large-mib") {
      opt.large_mib = v;
    } else if (a == "--node-offset") {
      opt.node_offset = v;
    } else if (a == "--seed") {
      opt.seed = v;
    } else {
      Usage();
    }
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = Parse(argc, argv);
  const std::vector<int> nodes = region_lab::CpuNodes();
  if (nodes.empty()) {
    std::fprintf(stderr, "region_placement: no NUMA node with CPUs\n");
    return 2;
  }
  // The main thread stays on the first node, and the workers start there
  // (they inherit its CPUs) until they pin themselves. Unpinned, it was now and
  // then moved to another node between a refill's look at its node and the
  // new span's free list being written (CentralFreeList::Populate, traced in
  // the lab): that write placed the 2 MiB huge page around the span, and the
  // blocks a worker later got from the same range, on the node it moved to.
  if (!region_lab::PinToNode(nodes[0])) {
    std::fprintf(stderr,
                 "region_placement: cannot pin the main thread to node %d\n",
                 nodes[0]);
    return 2;
  }
  std::vector<Worker> workers(nodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nodes.size(); ++i) {
    workers[i].node = nodes[i];
    workers[i].seed = opt.seed * 1000 + i;
    threads.emplace_back(Run, std::cref(opt), &workers[i]);
  }
  for (std::thread& t : threads) t.join();

  Report report;
  const region_lab::Property active = region_lab::Numa("active");
  std::printf("region_placement: %zu nodes with CPUs, %s; numa_active %s\n",
              nodes.size(),
              opt.region_check ? "region + placement" : "placement only",
              active.known ? std::to_string(active.value).c_str() : "unknown");
  if (!active.known || active.value != 1) {
    report.Fail("tcmalloc.numa.active is not 1: the NUMA layer is not on");
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    const Worker& w = workers[i];
    if (!w.pinned) {
      report.Fail("cannot pin a thread to node " + std::to_string(w.node));
      continue;
    }
    if (w.malloc_failed) {
      report.Fail("malloc returned null on node " + std::to_string(w.node));
    }
    const int target = nodes[(i + opt.node_offset) % nodes.size()];
    std::string line = "node " + std::to_string(w.node) + ": " +
                       std::to_string(w.blocks.size()) + " blocks (" +
                       std::to_string(w.small) + " small, " +
                       std::to_string(w.large) + " large), " + Mib(w.bytes);
    if (target != w.node)
      line += "; checked against node " + std::to_string(target);
    if (opt.region_check) line += "; " + CheckRegion(w, target, &report);
    const int failures = report.failures();
    line += "; " + CheckPlacement(w, target, &report);
    std::printf("%s\n", line.c_str());
    if (report.failures() > failures && opt.node_offset == 0) {
      DescribeMisplaced(w, target);
    }
    CheckContents(w, &report);
  }
  if (opt.region_check) CheckDisjoint(nodes, &report);
  if (report.failures() > 0) {
    std::printf("region_placement: FAILED (%d problems)\n", report.failures());
    return 1;
  }
  std::printf("region_placement: OK\n");
  return 0;
}
