// Helpers of the tests that run the allocator linked in on a fake two-node
// topology (TCMALLOC_NUMA_FAKE_NODES=2 puts CPU i on node i % 2): its numeric
// properties, pinning a thread to a CPU (so to a node), and which node's
// region holds a pointer.
#ifndef TESTS_NUMA_HEAP_FAKE_TWO_NODES_H_
#define TESTS_NUMA_HEAP_FAKE_TWO_NODES_H_

#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"

namespace fake_two_nodes {

// A numeric property of the allocator; a failed expectation if it has none.
inline size_t Property(const std::string& name) {
  size_t value = 0;
  EXPECT_TRUE(
      MallocExtension::instance()->GetNumericProperty(name.c_str(), &value))
      << name;
  return value;
}

// Runs the calling thread on `cpu` (node cpu % 2). False on a one-CPU
// machine.
inline bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

// The node whose region holds p, by the properties the allocator reports;
// -1 for neither.
inline int RegionOf(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (int node = 0; node < 2; ++node) {
    const std::string prefix = "tcmalloc.numa.node" + std::to_string(node);
    if (a >= Property(prefix + ".region_begin") &&
        a < Property(prefix + ".region_end")) {
      return node;
    }
  }
  return -1;
}

}  // namespace fake_two_nodes

#endif  // TESTS_NUMA_HEAP_FAKE_TWO_NODES_H_
