// What a growing node asks of another node's heap, done by that node's own
// thread (numa/node_chores.h), under a fake two-node topology
// (TCMALLOC_NUMA_FAKE_NODES=2: CPU i is node i % 2). Each test expects the
// heaps as a fresh process leaves them, so each runs in a process of its own
// (main re-executes the binary once per test).
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

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

// Refills on node 0 (its thread cache, then its central lists from its page
// heap) until node 0's own thread has done what another node asked of its
// heap: tcmalloc.numa.unstranding_by_owner passes `done`, read before the
// thread came to node 0 (any allocation there may be the refill that does
// it). False if it never did. The objects stay allocated so that each refill
// reaches further.
bool RefillUntilNode0DidItsChores(size_t done, std::vector<void*>* objects) {
  if (!PinToCpu(0)) return false;
  for (int i = 0; i < 4096; ++i) {
    if (Property("tcmalloc.numa.unstranding_by_owner") > done) return true;
    objects->push_back(Allocate(1024));
  }
  return false;
}

// Below the stranded bound, a growing node does not walk another node's heap
// from afar: it asks, and the owner's own thread releases its free pages down
// to half the bound at its next refill from its page heap.
TEST_F(FakeTwoNodes, BelowTheBoundTheOwnersThreadReleasesWhenAsked) {
  constexpr size_t kHalfBound = 8 << 20;  // the default bound is 16 MiB
  constexpr size_t kSlack = 256 << 10;
  MallocExtension::instance()->ReleaseFreeMemory();
  ASSERT_TRUE(GiveNode1FreePages());
  // Node 0: a large block does what it was asked so far (nothing is owed).
  ASSERT_TRUE(PinToCpu(0));
  void* held[3];
  for (void*& b : held) b = Allocate(kBlock);
  for (void* b : held) free(b);
  const size_t free0 = NodeProperty(0, "pageheap_free_bytes");
  ASSERT_GE(free0, kHalfBound + (2 << 20));
  ASSERT_LE(free0, 16u << 20) << "within the bound: nothing released at once";
  const size_t unmapped0 = NodeProperty(0, "pageheap_unmapped_bytes");

  ASSERT_TRUE(PinToCpu(1));
  void* grown = GrowNode1(kBlock);
  // (Node 0's heap may take back a span or two of its objects freed here.)
  EXPECT_GE(NodeProperty(0, "pageheap_free_bytes") + kSlack, free0)
      << "node 1 released node 0's pages itself";

  std::vector<void*> objects;
  EXPECT_TRUE(RefillUntilNode0DidItsChores(
      Property("tcmalloc.numa.unstranding_by_owner"), &objects));
  EXPECT_GE(NodeProperty(0, "pageheap_unmapped_bytes"),
            unmapped0 + (free0 - kHalfBound) - (1 << 20))
      << "node 0 did not release down to half the bound";
  for (void* p : objects) free(p);
  free(grown);
}

// Far beyond the bound the growing node releases at once, down to 16 MiB
// past it (what it may ask); the rest it asks, and when the owner (here
// idle) has not done it by the next growth, that growth does it.
TEST_F(FakeTwoNodes, FarBeyondTheBoundTheGrowingNodeReleasesAtOnce) {
  constexpr size_t kBound = 16 << 20;  // the default
  constexpr size_t kAsked = 16 << 20;  // kMaxAskedBytes
  constexpr size_t kSlack = 1 << 20;
  void* live[16];
  ASSERT_NO_FATAL_FAILURE(SixteenFreeBlocksOnNode0(live));

  ASSERT_TRUE(PinToCpu(1));
  const size_t by_grower = Property("tcmalloc.numa.unstranding_by_grower");
  // Node 1 grows by more than node 0 holds: the growth does not limit it.
  void* first = GrowNode1(16 * kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_free_bytes"), kBound + kAsked + kSlack);
  EXPECT_GT(NodeProperty(0, "pageheap_free_bytes"), kBound)
      << "the growing node released what it may ask for";
  const size_t after_first = Property("tcmalloc.numa.unstranding_by_grower");
  EXPECT_GT(after_first, by_grower);
  void* second = GrowNode1(kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_free_bytes"), kBound / 2 + kSlack)
      << "the next growth did not do what node 0 owed";
  EXPECT_GT(Property("tcmalloc.numa.unstranding_by_grower"), after_first);
  free(first);
  free(second);
  for (void* b : live) free(b);
}

// A growth takes from the other nodes no more than it grows, released at
// once or asked: what the process holds stays level, and a node whose
// threads come back finds the rest of its free pages (released all beyond
// the bound at once, threads that move between nodes would fault their
// working set back in at every move).
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
// their regions. A CPU node's own thread does that at its next refill; one
// that has not by the next growth has it done by that growth, so the heap
// size lags by at most one growth.
TEST_F(FakeTwoNodes, RetirementIsTheOwnersOrTheNextGrowths) {
  MallocExtension::instance()->ReleaseFreeMemory();
  // Node 0: eight released blocks apart (spans retire whole).
  ASSERT_TRUE(PinToCpu(0));
  void* blocks[16];
  for (void*& b : blocks) b = Allocate(kBlock);
  for (int i = 0; i < 16; i += 2) free(blocks[i]);
  MallocExtension::instance()->ReleaseFreeMemory();
  ASSERT_GE(NodeProperty(0, "pageheap_unmapped_bytes"), 7 * kBlock);
  // Node 1's free pages; its growth there asks node 0 to retire, node 0's
  // thread does it, and nothing is owed from here on.
  ASSERT_TRUE(GiveNode1FreePages());
  std::vector<void*> objects;
  ASSERT_TRUE(RefillUntilNode0DidItsChores(
      Property("tcmalloc.numa.unstranding_by_owner"), &objects));

  ASSERT_TRUE(PinToCpu(1));
  size_t unmapped0 = NodeProperty(0, "pageheap_unmapped_bytes");
  const size_t by_grower = Property("tcmalloc.numa.unstranding_by_grower");
  void* first = GrowNode1(kBlock);
  EXPECT_GE(NodeProperty(0, "pageheap_unmapped_bytes"), unmapped0)
      << "node 1 retired node 0's pages itself";
  EXPECT_TRUE(RefillUntilNode0DidItsChores(
      Property("tcmalloc.numa.unstranding_by_owner"), &objects));
  EXPECT_LE(NodeProperty(0, "pageheap_unmapped_bytes"), unmapped0 - kBlock)
      << "node 0's thread did not retire";
  EXPECT_EQ(Property("tcmalloc.numa.unstranding_by_grower"), by_grower);

  // Asked again, node 0 does not refill: node 1's next growth retires.
  ASSERT_TRUE(PinToCpu(1));
  unmapped0 = NodeProperty(0, "pageheap_unmapped_bytes");
  void* second = GrowNode1(kBlock);
  EXPECT_GE(NodeProperty(0, "pageheap_unmapped_bytes"), unmapped0);
  void* third = GrowNode1(kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_unmapped_bytes"), unmapped0 - kBlock);
  EXPECT_EQ(Property("tcmalloc.numa.unstranding_by_grower"), by_grower + 1);
  for (void* p : objects) free(p);
  free(first);
  free(second);
  free(third);
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
    for (const char* test : {"*BelowTheBound*", "*FarBeyond*",
                             "*NoMoreThanItGrows*", "*RetirementIs*"}) {
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
