// balancing_patterns: the long-running patterns of issue 34 (patterns.h) under
// whichever allocator serves malloc (LD_PRELOAD), for the NUMA lab with the
// kernel's automatic NUMA balancing on or off
// (tests/numa_heap/balancing_lab_run, docs/lab.md). Prints a config line, then
// one "phase ..." line per phase.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "benchmarks/balancing/patterns.h"
#include "benchmarks/locality/allocator_name.h"
#include "benchmarks/locality/topology.h"
#include "benchmarks/locality/window_marks.h"

namespace {

constexpr char kUsage[] =
    "usage: balancing_patterns [--patterns handoff,migration,prodcons]\n"
    "                          [--seconds S] [--objects N] [--size B]\n"
    "                          [--queue Q] [--windows]\n"
    "  --seconds S   each timed stretch, in seconds (default 30)\n"
    "  --objects N   objects per batch (default 40000)\n"
    "  --size B      bytes per object (default 256)\n"
    "  --queue Q     producer/consumer ring, messages (default 4096)\n"
    "  --windows     mark each phase as a counting window of the lab's\n"
    "                access plugin (tools/numa-vm --accesses)\n";

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr, "balancing_patterns: %s (see --help)\n",
               problem.c_str());
  std::exit(2);
}

size_t ParseCount(const char* text, const char* flag, size_t min) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > (1ull << 32)) {
    Usage(std::string(flag) +
          " wants a whole number >= " + std::to_string(min));
  }
  return static_cast<size_t>(v);
}

std::string NumaBalancing() {
  std::ifstream in("/proc/sys/kernel/numa_balancing");
  std::string value;
  return (in >> value) ? value : "absent";
}

}  // namespace

int main(int argc, char** argv) {
  balancing::Options options;
  std::string patterns = "handoff,migration,prodcons";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--patterns") {
      patterns = value();
    } else if (arg == "--seconds") {
      char* end = nullptr;
      const char* text = value();
      options.seconds = std::strtod(text, &end);
      if (end == text || *end != '\0' || !(options.seconds > 0)) {
        Usage("--seconds wants a positive number");
      }
    } else if (arg == "--objects") {
      options.objects = ParseCount(value(), "--objects", 1);
    } else if (arg == "--size") {
      options.size = ParseCount(value(), "--size", 8);
    } else if (arg == "--queue") {
      options.queue = ParseCount(value(), "--queue", 1);
    } else if (arg == "--windows") {
      locality::EnableWindows(true);
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      Usage("unknown argument '" + arg + "'");
    }
  }
  const locality::Topology topology = locality::ReadTopology();
  std::printf(
      "config allocator=%s numa_balancing=%s seconds=%g objects=%zu size=%zu "
      "queue=%zu\n",
      locality::DetectAllocator().c_str(), NumaBalancing().c_str(),
      options.seconds, options.objects, options.size, options.queue);
  std::fflush(stdout);
  std::stringstream list(patterns);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name == "handoff") {
      balancing::Handoff(topology, options);
    } else if (name == "migration") {
      balancing::Migration(topology, options);
    } else if (name == "prodcons") {
      balancing::ProducerConsumer(topology, options);
    } else {
      Usage("no pattern named '" + name + "' (handoff, migration, prodcons)");
    }
  }
  return 0;
}
