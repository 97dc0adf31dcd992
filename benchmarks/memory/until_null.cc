// Capacity under an address-space limit: allocates blocks of --block-size,
// writing one byte a page, until malloc returns NULL (or --max-mib is
// reached), then prints how many bytes it held and the allocator's region
// failures. Run under `ulimit -v` (tests/numa_heap/rlimit_run): vanilla and
// numa should hold the same.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "benchmarks/memory/figures.h"
#include "benchmarks/workloads/common.h"

int main(int argc, char** argv) {
  size_t block = 4096;
  long max_mib = 1 << 20;
  static const option kLong[] = {
      {"block-size", required_argument, nullptr, 's'},
      {"max-mib", required_argument, nullptr, 'm'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", kLong, nullptr)) != -1) {
    switch (c) {
      case 's':
        block = static_cast<size_t>(
            workloads::ParsePositive(optarg, "--block-size"));
        break;
      case 'm':
        max_mib = workloads::ParsePositive(optarg, "--max-mib");
        break;
      case 'h':
        std::printf(
            "usage: until_null [--block-size=BYTES] [--max-mib=N]\n"
            "Allocates --block-size blocks (one byte written a page) until "
            "malloc returns\nNULL; prints held_mib= and region_failures=.\n");
        return 0;
      default:
        workloads::Die("bad arguments (see --help)");
    }
  }
  if (optind != argc) workloads::Die("unexpected argument '%s'", argv[optind]);
  std::vector<void*> held;
  held.reserve(1 << 20);
  size_t bytes = 0;
  while (bytes < (static_cast<size_t>(max_mib) << 20) &&
         held.size() < held.capacity()) {
    char* p = static_cast<char*>(std::malloc(block));
    if (p == nullptr) break;
    for (size_t i = 0; i < block; i += 4096) p[i] = 1;
    held.push_back(p);
    bytes += block;
  }
  std::printf("held_mib=%.1f blocks=%zu region_failures=%lld\n",
              bytes / 1048576.0, held.size(),
              memory_probe::Property("tcmalloc.numa.region_failures"));
  for (void* p : held) std::free(p);
  return 0;
}
