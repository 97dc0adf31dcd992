// What a growing node takes from another node's heap before it grows
// (NodeHeaps::BeforeGrowth), under a fake two-node topology
// (TCMALLOC_NUMA_FAKE_NODES=2: CPU i is node i % 2). Each test expects the
// heaps as a fresh process leaves them, so each runs in a process of its own
// (main re-executes the binary once per test).
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"
#include "tests/numa_heap/fake_two_nodes.h"

namespace {

using fake_two_nodes::PinToCpu;
using fake_two_nodes::Property;

size_t NodeProperty(int node, const char* field) {
  return Property("tcmalloc.numa.node" + std::to_string(node) + "." + field);
}

constexpr size_t kBlock = 4 << 20;  // a large block: a span of its own

// malloc(bytes), written, so that the compiler keeps it (it may drop a
// malloc whose block is only freed).
void* Allocate(size_t bytes) {
  void* volatile block = malloc(bytes);
  if (block != nullptr) *static_cast<volatile char*>(block) = 1;
  return block;
}

// A block larger than node 1 holds, free or released: node 1's heap grows.
void* GrowNode1(size_t by) {
  return Allocate(NodeProperty(1, "pageheap_free_bytes") +
                  NodeProperty(1, "pageheap_unmapped_bytes") + by);
}

// Node 1 gets free pages of its own for its small refills, so that a
// GrowNode1 after it is the only growth of its step. Leaves the thread on
// node 1; false if it cannot run there.
bool GiveNode1FreePages() {
  if (!PinToCpu(1)) return false;
  free(Allocate(kBlock));
  return true;
}

// Node 1 gets free pages of its own (GiveNode1FreePages), then node 0 holds
// sixteen free blocks apart (spans are released whole) between sixteen live
// ones, kept in `live` for the caller to free. Leaves the thread on node 0.
void SixteenFreeBlocksOnNode0(void* live[16]) {
  MallocExtension::instance()->ReleaseFreeMemory();
  ASSERT_TRUE(GiveNode1FreePages());
  ASSERT_TRUE(PinToCpu(0));
  void* blocks[32];
  for (void*& b : blocks) b = Allocate(kBlock);
  for (int i = 0; i < 16; ++i) {
    free(blocks[2 * i]);
    live[i] = blocks[2 * i + 1];
  }
  ASSERT_GE(NodeProperty(0, "pageheap_free_bytes"), 15 * kBlock);
}

class FakeTwoNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PinToCpu(0) || !PinToCpu(1)) GTEST_SKIP() << "needs 2 CPUs";
  }
};

// Within the stranded bound (16 MiB by default) a growing node leaves the
// others' free pages alone: they are about to be reused.
TEST_F(FakeTwoNodes, WithinTheBoundNothingIsReleased) {
  MallocExtension::instance()->ReleaseFreeMemory();
  ASSERT_TRUE(GiveNode1FreePages());
  ASSERT_TRUE(PinToCpu(0));
  void* held[3];
  for (void*& b : held) b = Allocate(kBlock);
  for (void* b : held) free(b);
  const size_t free0 = NodeProperty(0, "pageheap_free_bytes");
  ASSERT_GE(free0, 2 * kBlock);
  ASSERT_LE(free0, 16u << 20);
  const size_t done = Property("tcmalloc.numa.unstrandings");

  ASSERT_TRUE(PinToCpu(1));
  void* grown = GrowNode1(kBlock);
  // (Node 0's heap may take back a span or two of its objects freed here.)
  EXPECT_GE(NodeProperty(0, "pageheap_free_bytes") + (256 << 10), free0)
      << "node 1 released node 0's pages within the bound";
  EXPECT_EQ(Property("tcmalloc.numa.unstrandings"), done);
  free(grown);
}

// Beyond the bound the growing node releases what lies past it, at most as
// much as it grows.
TEST_F(FakeTwoNodes, BeyondTheBoundTheGrowingNodeReleases) {
  constexpr size_t kBound = 16 << 20;  // the default
  constexpr size_t kSlack = 1 << 20;
  void* live[16];
  ASSERT_NO_FATAL_FAILURE(SixteenFreeBlocksOnNode0(live));

  ASSERT_TRUE(PinToCpu(1));
  const size_t done = Property("tcmalloc.numa.unstrandings");
  // Node 1 grows by more than node 0 holds: the growth does not limit it.
  void* grown = GrowNode1(16 * kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_free_bytes"), kBound + kSlack);
  EXPECT_GT(Property("tcmalloc.numa.unstrandings"), done);
  free(grown);
  for (void* b : live) free(b);
}

// A growth takes from the other nodes no more than it grows: what the process
// holds stays level, and a node whose threads come back finds the rest of its
// free pages (released all beyond the bound at once, threads that move between
// nodes would fault their working set back in at every move).
TEST_F(FakeTwoNodes, AGrowthTakesNoMoreThanItGrows) {
  void* live[16];
  ASSERT_NO_FATAL_FAILURE(SixteenFreeBlocksOnNode0(live));
  const size_t free0 = NodeProperty(0, "pageheap_free_bytes");

  ASSERT_TRUE(PinToCpu(1));
  const size_t system1 = NodeProperty(1, "pageheap_system_bytes");
  void* grown = GrowNode1(kBlock);
  const size_t growth = NodeProperty(1, "pageheap_system_bytes") - system1;
  ASSERT_GE(growth, kBlock);
  ASSERT_LE(growth, 4 * kBlock) << "a growth this test did not plan";
  const size_t given = free0 - NodeProperty(0, "pageheap_free_bytes");
  EXPECT_GE(given, growth - kBlock)
      << "released at once: node 0 holds far more than the bound";
  // Spans are released whole: one block more at most.
  EXPECT_LE(given, growth + kBlock) << "node 0 gave more than node 1 grew";
  free(grown);
  for (void* b : live) free(b);
}

// Before a node grows, the other nodes' released address space goes back to
// their regions, so the heap size follows what the process uses.
TEST_F(FakeTwoNodes, AGrowthRetiresOtherNodesReleasedPages) {
  MallocExtension::instance()->ReleaseFreeMemory();
  // Node 0: eight released blocks apart (spans retire whole).
  ASSERT_TRUE(PinToCpu(0));
  void* blocks[16];
  for (void*& b : blocks) b = Allocate(kBlock);
  for (int i = 0; i < 16; i += 2) free(blocks[i]);
  MallocExtension::instance()->ReleaseFreeMemory();
  ASSERT_GE(NodeProperty(0, "pageheap_unmapped_bytes"), 7 * kBlock);
  ASSERT_TRUE(GiveNode1FreePages());

  ASSERT_TRUE(PinToCpu(1));
  const size_t unmapped0 = NodeProperty(0, "pageheap_unmapped_bytes");
  const size_t system0 = NodeProperty(0, "pageheap_system_bytes");
  void* grown = GrowNode1(kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_unmapped_bytes"), unmapped0 - kBlock)
      << "node 0's released pages were not retired";
  EXPECT_LE(NodeProperty(0, "pageheap_system_bytes"), system0 - kBlock);
  free(grown);
  for (int i = 1; i < 16; i += 2) free(blocks[i]);
}

}  // namespace

int main(int argc, char** argv) {
  // Knobs are read once at start-up: re-exec with them set, one process per
  // test.
  if (getenv("TCMALLOC_NUMA_FAKE_NODES") == nullptr) {
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    // These tests walk the release plans; a node counts as stranded at once
    // (fake_topology_test covers the idle time).
    setenv("TCMALLOC_NUMA_STRANDED_IDLE_MS", "0", 1);
    int failed = 0;
    for (const char* test : {"*WithinTheBound*", "*BeyondTheBound*",
                             "*NoMoreThanItGrows*", "*AGrowthRetires*"}) {
      const std::string filter = std::string("--gtest_filter=") + test;
      fflush(stdout);
      const pid_t pid = fork();
      if (pid == 0) {
        char* args[] = {argv[0], const_cast<char*>(filter.c_str()), nullptr};
        execv("/proc/self/exe", args);
        perror("execv /proc/self/exe");
        _exit(127);
      }
      int status = 0;
      if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
          WEXITSTATUS(status) != 0) {
        failed = 1;
      }
    }
    return failed;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
