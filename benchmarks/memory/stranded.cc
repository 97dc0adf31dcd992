// Stranded memory: does memory freed on one NUMA node serve the next node
// that needs it, or does each node keep its own? One thread runs phases,
// each pinned to one CPU (by default 0, then 1, then 0 again: with fake
// nodes, or in a 2-node lab guest, node 0, node 1, node 0). In each phase it
// allocates --blocks blocks of --block-size (1 GiB by default), writes every
// byte, and frees them all. Vanilla tcmalloc has one page heap, so phase 2
// reuses phase 1's pages and the heap stays at one phase's size; an allocator
// that strands freed memory on its node reaches a heap (and possibly a
// resident set) of two phases. Prints a line per phase, then the largest heap
// size sampled (with each phase's blocks allocated, and after they are
// freed) and the peak RSS (figures.h).
#include <getopt.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "benchmarks/memory/figures.h"
#include "benchmarks/memory/pin.h"
#include "benchmarks/workloads/common.h"

namespace {

struct Options {
  long blocks = 256;
  size_t block_size = 4 << 20;
  std::vector<int> cpus = {0, 1, 0};
};

// "4194304", "4096K", "4M", "1G": a positive size in bytes (binary suffixes).
size_t ParseSize(const char* text, const char* flag) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  int shift = 0;
  if (end != text && *end != '\0' && end[1] == '\0') {
    static const char kUnits[] = "KkMmGg";  // 2^10, 2^20, 2^30
    const char* unit = std::strchr(kUnits, *end);
    if (unit != nullptr) {
      shift = 10 * (1 + static_cast<int>(unit - kUnits) / 2);
      ++end;
    }
  }
  // Up to 64 GiB a block: far beyond any use here, and no overflow below.
  if (errno != 0 || end == text || *end != '\0' || value <= 0 ||
      value > (1LL << (36 - shift))) {
    workloads::Die(
        "%s wants a size such as 4M, 4096K or 4194304 (at most 64G), got '%s'",
        flag, text);
  }
  return static_cast<size_t>(value) << shift;
}

Options Parse(int argc, char** argv) {
  static const option kLong[] = {
      {"blocks", required_argument, nullptr, 'b'},
      {"block-size", required_argument, nullptr, 's'},
      {"cpus", required_argument, nullptr, 'c'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  Options o;
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 'b':
        o.blocks = workloads::ParsePositive(optarg, "--blocks");
        break;
      case 's':
        o.block_size = ParseSize(optarg, "--block-size");
        break;
      case 'c':
        o.cpus = memory_probe::ParseCpuList(optarg, "--cpus");
        break;
      case 'h':
        std::printf(
            "usage: stranded [--blocks=256] [--block-size=4M] [--cpus=0,1,0]\n"
            "One phase per CPU of --cpus, in order, pinned there: allocate "
            "--blocks blocks\nof --block-size, write every byte, free them "
            "all. Then prints heap_mib= (the\nlargest generic.heap_size "
            "sampled), peak_rss_mib= (ru_maxrss) and METRIC lines.\n");
        std::exit(0);
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  // 16 TiB a phase at most: beyond that the product is a typo.
  if (static_cast<double>(o.blocks) * o.block_size > 16.0 * (1LL << 40)) {
    workloads::Die("--blocks x --block-size is more than 16 TiB a phase");
  }
  for (int cpu : o.cpus) memory_probe::CheckCpuAllowed(cpu, "--cpus");
  return o;
}

void RunPhase(const Options& o, int phase, int cpu) {
  memory_probe::PinToCpu(cpu);
  std::vector<void*> blocks(o.blocks);  // before the loop: not between blocks
  for (long i = 0; i < o.blocks; ++i) {
    blocks[i] = std::malloc(o.block_size);
    if (blocks[i] == nullptr) {
      workloads::Die("phase %d: malloc(%zu) failed after %ld blocks", phase,
                     o.block_size, i);
    }
    std::memset(blocks[i], phase, o.block_size);
    workloads::Escape(blocks[i]);  // or the compiler drops the memset
  }
  // The phase's heap at its largest; after the frees it can only be lower.
  const long long allocated_heap = memory_probe::SampleHeap();
  for (void* p : blocks) std::free(p);
  // Unmapped: released to the kernel, still counted in the heap size.
  const long long unmapped =
      memory_probe::Property("tcmalloc.pageheap_unmapped_bytes");
  const long rss_kib = memory_probe::CurrentRssKib();
  std::printf(
      "phase=%d cpu=%d allocated_heap_mib=%s heap_mib=%s unmapped_mib=%s "
      "rss_mib=%s\n",
      phase, cpu, memory_probe::Mib(allocated_heap).c_str(),
      memory_probe::Mib(memory_probe::SampleHeap()).c_str(),
      memory_probe::Mib(unmapped).c_str(),
      memory_probe::Mib(rss_kib < 0 ? -1 : rss_kib * 1024LL).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::printf("# stranded blocks=%ld block_size=%zu cpus=%s\n", o.blocks,
              o.block_size, memory_probe::JoinCpus(o.cpus).c_str());
  for (size_t i = 0; i < o.cpus.size(); ++i) {
    RunPhase(o, static_cast<int>(i + 1), o.cpus[i]);
  }
  memory_probe::PrintResult();
  return 0;
}
