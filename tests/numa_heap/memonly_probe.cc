// Lab probe for memory-only nodes (issue 14; tests/numa_heap/memonly_lab_run).
// Runs with the allocator LD_PRELOADed (patched or vanilla) and reports what
// the allocator says about itself, so that the lab script can judge:
//
//   memonly_probe props
//     "prop <name> <value>" for the layer's properties (tcmalloc.numa.<name>)
//     and each node's page heap and region, "unknown" for one the allocator
//     does not answer (vanilla answers none); then "stats: <line>" for every
//     line of GetStats that mentions NUMA (none when the layer is inactive).
//
//   memonly_probe fallback --node N [--beyond-mib M] [--no-block] [--objects]
//     Makes node N's heap unable to grow and shows where it grows instead.
//     Run it pinned to node N's CPUs from exec on (taskset), so that no other
//     node's heap holds free spans it could take first. It maps a page right
//     after node N's reserved region, so that the region's next reservation
//     (MAP_FIXED_NOREPLACE) fails as a full window would; then it allocates
//     what is left of the reservation plus M MiB (32) in 1 MiB blocks and
//     writes every page. Prints, per node whose region holds blocks,
//     "in node<K>: <blocks> blocks; pages node<J>=<count> ..." (move_pages)
//     and node K's pageheap_system_bytes, "outside: <blocks> blocks" for
//     blocks in no node's region, and the region_failures count. The
//     layer's fallback order should send the blocks beyond the reservation to
//     the nearest node, memory-only nodes included. --no-block is the
//     control: every block must then stay in node N's region.
//     --objects: the same amount in 1 KiB objects (operator new), which
//     small-object lists serve; prints "in node<K>: <n> objects" per region
//     and the borrowed_objects count, then frees them all with sized delete
//     and prints "freed: <n> objects". A node that cannot grow borrows
//     objects of another node with CPUs: a memory-only node has no lists.
//
// Exit status 0, or 2 for usage and setup errors.
#include <numa.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/page_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMiB = 1 << 20;

int Usage() {
  std::fprintf(stderr,
               "usage: memonly_probe props\n"
               "       memonly_probe fallback --node N [--beyond-mib M] "
               "[--no-block] [--objects]\n");
  return 2;
}

int Props() {
  for (const char* name : {"active", "num_nodes", "cpu_nodes", "mbind_calls",
                           "mbind_failures", "region_failures"}) {
    std::printf("prop %s %s\n", name,
                region_lab::ValueText(region_lab::Numa(name)).c_str());
  }
  // Every node the kernel knows, not only the ones with CPUs: a memory-only
  // node with its own page heap answers these like any other.
  const int max_node = numa_available() < 0 ? 0 : numa_max_node();
  for (int node = 0; node <= max_node; ++node) {
    const std::string prefix = "node" + std::to_string(node) + ".";
    for (const char* field :
         {"pageheap_system_bytes", "central_cache_free_bytes",
          "region_reserved_bytes", "region_committed_bytes"}) {
      std::printf(
          "prop %s%s %s\n", prefix.c_str(), field,
          region_lab::ValueText(region_lab::Numa(prefix + field)).c_str());
    }
  }
  region_lab::PrintNumaStatsLines();
  return 0;
}

// The node whose region holds [p, p + size), -1 if none does.
int RegionOf(const std::vector<region_lab::Region>& regions, const void* p,
             size_t size) {
  for (size_t node = 0; node < regions.size(); ++node) {
    if (regions[node].Contains(p, size)) return static_cast<int>(node);
  }
  return -1;
}

// The objects mode of Fallback: `mib` MiB in 1 KiB objects.
int FallbackObjects(size_t mib) {
  constexpr size_t kObject = 1024;
  std::vector<unsigned char*> objects;
  const size_t n = mib * (kMiB / kObject);
  for (size_t i = 0; i < n; ++i) {
    auto* p = static_cast<unsigned char*>(::operator new(kObject));
    std::memset(p, static_cast<int>(i & 0xff), kObject);
    objects.push_back(p);
  }
  const int max_node = numa_max_node();
  std::vector<region_lab::Region> regions;
  for (int r = 0; r <= max_node; ++r)
    regions.push_back(region_lab::NodeRegion(r));
  std::map<int, size_t> by_region;  // -1: outside every region
  for (unsigned char* p : objects) ++by_region[RegionOf(regions, p, kObject)];
  std::printf("outside: %zu objects\n", by_region[-1]);
  for (const auto& [r, count] : by_region) {
    if (r >= 0) std::printf("in node%d: %zu objects\n", r, count);
  }
  std::printf(
      "prop borrowed_objects %s\n",
      region_lab::ValueText(region_lab::Numa("borrowed_objects")).c_str());
  std::printf(
      "prop region_failures %s\n",
      region_lab::ValueText(region_lab::Numa("region_failures")).c_str());
  // Sized delete files each object under its owner's lists; a second round
  // reuses what the first freed. Every byte is checked before it goes.
  size_t bad = 0;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < objects.size(); ++i) {
      if (objects[i][0] != (i & 0xff) ||
          objects[i][kObject - 1] != (i & 0xff)) {
        ++bad;
      }
      ::operator delete(objects[i], kObject);
    }
    std::fflush(stdout);
    if (round == 0) {
      for (size_t i = 0; i < objects.size(); ++i) {
        objects[i] = static_cast<unsigned char*>(::operator new(kObject));
        std::memset(objects[i], static_cast<int>(i & 0xff), kObject);
      }
    }
  }
  std::printf("freed: %zu objects, %zu corrupted\n", objects.size(), bad);
  return bad == 0 ? 0 : 1;
}

int Fallback(int node, size_t beyond_mib, bool block, bool objects) {
  if (region_lab::CurrentNode() != node) {
    std::fprintf(stderr,
                 "memonly_probe: running on node %d, not %d: start it with "
                 "taskset on node %d's CPUs\n",
                 region_lab::CurrentNode(), node, node);
    return 2;
  }
  const region_lab::Region own = region_lab::NodeRegion(node);
  if (!own.Complete()) {
    std::fprintf(stderr, "memonly_probe: node %d has no region (layer off?)\n",
                 node);
    return 2;
  }
  const uint64_t reserved_end = own.begin.value + own.reserved_bytes.value;
  if (block) {
    // Occupies the address the region's next reservation must start at.
    void* want = reinterpret_cast<void*>(reserved_end);
    void* got = mmap(want, kPage, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got != want) {
      std::perror("memonly_probe: mmap at the region's end");
      return 2;
    }
  }
  const size_t left = own.reserved_bytes.value - own.committed_bytes.value;
  const size_t mib = left / kMiB + beyond_mib;
  std::printf(
      "fallback: node %d, region reserved %zu MiB, committed %zu MiB; %s; "
      "allocating %zu MiB\n",
      node, static_cast<size_t>(own.reserved_bytes.value / kMiB),
      static_cast<size_t>(own.committed_bytes.value / kMiB),
      block ? "next reservation blocked" : "not blocked", mib);
  if (objects) return FallbackObjects(mib);

  std::vector<char*> blocks;
  for (size_t i = 0; i < mib; ++i) {
    char* p = static_cast<char*>(std::malloc(kMiB));
    if (p == nullptr) {
      std::printf("fallback: malloc failed after %zu MiB\n", i);
      break;
    }
    for (size_t off = 0; off < kMiB; off += kPage) p[off] = 1;
    blocks.push_back(p);
  }

  // Regions are read after the allocations: a fallback node's region may
  // have grown, and one that had no region would have none to report.
  const int max_node = numa_max_node();
  std::vector<region_lab::Region> regions;
  for (int n = 0; n <= max_node; ++n) {
    regions.push_back(region_lab::NodeRegion(n));
  }
  std::map<int, std::vector<void*>> pages_by_region;  // -1: outside
  std::map<int, size_t> blocks_by_region;
  for (char* p : blocks) {
    const int r = RegionOf(regions, p, kMiB);
    ++blocks_by_region[r];
    for (size_t off = 0; off < kMiB; off += kPage) {
      pages_by_region[r].push_back(p + off);
    }
  }
  std::printf("outside: %zu blocks\n", blocks_by_region[-1]);
  for (const auto& [r, pages] : pages_by_region) {
    if (r < 0) continue;
    std::map<int, long> where;
    if (!region_lab::CountPageNodes(pages, &where)) {
      std::perror("memonly_probe: move_pages");
      return 2;
    }
    std::printf("in node%d: %zu blocks; pages", r, blocks_by_region[r]);
    for (const auto& [n, count] : where) {
      if (n < 0) {
        std::printf(" err%d=%ld", -n, count);
      } else {
        std::printf(" node%d=%ld", n, count);
      }
    }
    std::printf("\n");
    // The heap that served them: only node r's page heap grows node r's
    // region.
    const std::string heap =
        "node" + std::to_string(r) + ".pageheap_system_bytes";
    std::printf("prop %s %s\n", heap.c_str(),
                region_lab::ValueText(region_lab::Numa(heap)).c_str());
  }
  std::printf(
      "prop region_failures %s\n",
      region_lab::ValueText(region_lab::Numa("region_failures")).c_str());
  for (char* p : blocks) std::free(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "props") == 0 && argc == 2) {
    return Props();
  }
  if (argc < 2 || std::strcmp(argv[1], "fallback") != 0) return Usage();
  int node = -1;
  size_t beyond_mib = 32;
  bool block = true;
  bool objects = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-block") {
      block = false;
    } else if (a == "--objects") {
      objects = true;
    } else if (a == "--node" && i + 1 < argc) {
      node = std::atoi(argv[++i]);
    } else if (a == "--beyond-mib" && i + 1 < argc) {
      beyond_mib = std::strtoul(argv[++i], nullptr, 10);
    } else {
      return Usage();
    }
  }
  if (node < 0) return Usage();
  return Fallback(node, beyond_mib, block, objects);
}
