// Pages never change nodes, even released ones that hold no pages.
//
// Run in a 4-node guest with linear SLIT distances (10 + 10*|i-j|), NUMA on.
// A thread on node 0 allocates, frees and releases 64 MiB; then one on node 3
// does the same with 128 MiB. Both now hold a released, page-less span (the
// design before node regions re-bound such a span to the node that needed
// it, nearest first: node 3's). A thread on node 2 asks for 64 MiB: it must
// take neither, and commit fresh memory in its own region instead, while the
// released spans go back to their own regions, so the heap does not grow.
//
// Prints "adopted-from: <node>" (the node whose region holds the block, or
// "none" when it is node 2's), the heap growth in bytes (signed) and how much
// node 2's region committed.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "gperftools/malloc_extension.h"
#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kBytes = 64 << 20;

size_t Property(const std::string& name) {
  size_t value = 0;
  if (!MallocExtension::instance()->GetNumericProperty(name.c_str(), &value)) {
    std::fprintf(stderr, "fallback_order: no property %s\n", name.c_str());
    std::exit(2);
  }
  return value;
}

// The node whose region holds `p`, or -1.
int RegionOf(const void* p) {
  for (int node = 0; node < 4; ++node) {
    if (region_lab::NodeRegion(node).Contains(p, 1)) return node;
  }
  return -1;
}

void PinToNode(int node) {
  if (!region_lab::PinToNode(node)) {
    std::fprintf(stderr, "fallback_order: cannot run on node %d\n", node);
    std::exit(2);
  }
}

// Runs on a thread pinned to `node`: allocate, touch, free, release.
void LeaveReleasedSpan(int node, size_t bytes) {
  std::thread([node, bytes] {
    PinToNode(node);
    char* p = static_cast<char*>(std::malloc(bytes));
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    std::free(p);
    MallocExtension::instance()->ReleaseFreeMemory();
  }).join();
}

}  // namespace

int main() {
  if (Property("tcmalloc.numa.num_nodes") < 4) {
    std::fprintf(stderr, "fallback_order: needs 4 active nodes\n");
    return 2;
  }
  LeaveReleasedSpan(0, kBytes);
  LeaveReleasedSpan(3, 2 * kBytes);
  const size_t heap_before = Property("generic.heap_size");
  const size_t committed2 =
      Property("tcmalloc.numa.node2.region_committed_bytes");

  PinToNode(2);
  char* p = static_cast<char*>(std::malloc(kBytes));
  // Used after the measurement, so the compiler cannot drop the malloc/free
  // pair.
  asm volatile("" : : "g"(p) : "memory");
  const int owner = RegionOf(p);
  if (owner == 2) {
    std::printf("adopted-from: none\n");
  } else {
    std::printf("adopted-from: %d\n", owner);
  }
  std::printf("heap-growth: %lld\n",
              static_cast<long long>(Property("generic.heap_size")) -
                  static_cast<long long>(heap_before));
  std::printf(
      "node2-committed: %zu\n",
      Property("tcmalloc.numa.node2.region_committed_bytes") - committed2);
  std::free(p);
  return 0;
}
