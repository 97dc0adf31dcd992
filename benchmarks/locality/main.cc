// locality_probe: for each named workload, the fraction of the pages its
// threads wrote that sit on the thread's own NUMA node, under whichever
// allocator serves malloc (linked in or LD_PRELOADed). See docs/locality.md for
// the method.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/locality/allocator_name.h"
#include "benchmarks/locality/isolate.h"
#include "benchmarks/locality/page_log.h"
#include "benchmarks/locality/report.h"
#include "benchmarks/locality/topology.h"
#include "benchmarks/locality/window_marks.h"
#include "benchmarks/locality/workloads.h"

namespace locality {
namespace {

constexpr char kUsage[] =
    "usage: locality_probe [--workloads a,b,...] [--size-class "
    "all|small|page]\n"
    "                      [--seed N] [--scale N] [--label NAME] "
    "[--csv|--json]\n"
    "                      [--windows] [--explain N] [--list]\n"
    "  --size-class  print only rows of that class: small = blocks <= 256 "
    "KiB,\n"
    "                page = blocks > 256 KiB, all = both together (default: "
    "every row)\n"
    "  --scale N     multiply the work (iterations, rounds) by N (default 1)\n"
    "  --label NAME  allocator name in the output (default: detected from the\n"
    "                libraries mapped into the process)\n"
    "  --windows     mark each workload's work as a counting window of the\n"
    "                lab's access plugin (tools/numa-vm --accesses)\n"
    "  --explain N   name up to N pages per workload that were not local, on\n"
    "                stderr: writer's node, owner (tc_numa_node_of), nodes "
    "seen\n";

[[noreturn]] void Usage(const char* problem) {
  std::fprintf(stderr, "locality_probe: %s (see --help)\n", problem);
  std::exit(2);
}

bool ValidLabel(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        !std::strchr("._+-", c)) {
      return false;
    }
  }
  return true;
}

bool ParseInt(const char* text, long lo, long hi, long* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int Main(int argc, char** argv) {
  Options options;
  Format format = Format::kTable;
  std::string label, size_class, selected;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage((arg + " needs a value").c_str());
      return argv[++i];
    };
    long n = 0;
    if (arg == "--workloads") {
      selected = value();
    } else if (arg == "--size-class") {
      size_class = value();
      if (size_class != "all" && size_class != "small" &&
          size_class != "page") {
        Usage("--size-class must be all, small or page");
      }
    } else if (arg == "--seed") {
      if (!ParseInt(value(), 0, 1L << 62, &n)) Usage("--seed wants a number");
      options.seed = static_cast<uint64_t>(n);
    } else if (arg == "--scale") {
      if (!ParseInt(value(), 1, 1000, &n)) Usage("--scale wants 1-1000");
      options.scale = static_cast<int>(n);
    } else if (arg == "--label") {
      label = value();
      if (!ValidLabel(label)) Usage("--label wants letters, digits, . _ + -");
    } else if (arg == "--explain") {
      if (!ParseInt(value(), 0, 1000000, &n)) {
        Usage("--explain wants 0-1000000");
      }
      ExplainPages(static_cast<int>(n));
    } else if (arg == "--windows") {
      EnableWindows(true);
    } else if (arg == "--csv") {
      format = Format::kCsv;
    } else if (arg == "--json") {
      format = Format::kJson;
    } else if (arg == "--list") {
      for (const Workload& w : AllWorkloads()) {
        std::printf("%-18s %s\n", w.name, w.description);
      }
      return 0;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      Usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  // Said on stderr even with --label, so scripts can check that a preload took
  // effect.
  const std::string detected = DetectAllocator();
  std::fprintf(stderr, "locality_probe: malloc is served by %s\n",
               detected.c_str());
  if (label.empty()) label = detected;

  std::vector<const Workload*> chosen;
  if (selected.empty()) {
    for (const Workload& w : AllWorkloads()) chosen.push_back(&w);
  } else {
    std::stringstream in(selected);
    std::string name;
    while (std::getline(in, name, ',')) {
      const Workload* found = nullptr;
      for (const Workload& w : AllWorkloads()) {
        if (name == w.name) found = &w;
      }
      if (found == nullptr)
        Usage(("no workload named '" + name + "' (see --list)").c_str());
      chosen.push_back(found);
    }
  }

  const Topology topology = ReadTopology();
  std::vector<Row> rows;
  for (const Workload* w : chosen) {
    std::fprintf(stderr, "locality_probe: %s\n", w->name);
    const Result r = RunIsolated(*w, options);
    const Tally* by_class = r.summary.by_class;
    const struct {
      const char* name;
      const Tally& tally;
    } classes[] = {{"all", r.summary.all},
                   {"small", by_class[kSmall]},
                   {"page", by_class[kPage]}};
    for (const auto& c : classes) {
      if (!size_class.empty() && size_class != c.name) continue;
      // Class rows only where the workload has blocks of that class.
      if (r.ran && std::strcmp(c.name, "all") != 0 && c.tally.pages == 0)
        continue;
      rows.push_back({w->name, c.name, r.ran, r.reason, c.tally});
    }
  }
  PrintRows(stdout, format, label, static_cast<int>(topology.cpu_nodes.size()),
            rows);
  return 0;
}

}  // namespace
}  // namespace locality

int main(int argc, char** argv) {
  if (locality::IsIsolatedChild(argc, argv)) {
    return locality::RunIsolatedChild(argc, argv);
  }
  return locality::Main(argc, argv);
}
