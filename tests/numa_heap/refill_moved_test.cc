// A refill whose thread the scheduler moves to another node between its look
// at the thread's node and the writes that build the new span's free list
// (fake two-node topology: CPU i is node i). A hook stands in for the
// scheduler: it moves the thread from CPU 0 to CPU 1 once node 0's heap has
// handed out the span. Under first touch those writes would place the span's
// pages, and under THP=always the 2 MiB around them, on node 1, where node
// 0's threads would later get them; the container lab's 4-node locality runs
// lost a few dozen to a hundred small-object pages that way now and then. The
// span must go back unwritten and node 1 serve the request. Against the code
// before the check, node 0's object comes back, written from CPU 1.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"
#include "numa/node_heaps.h"
#include "tests/numa_heap/fake_two_nodes.h"

namespace {

using fake_two_nodes::PinToCpu;
using fake_two_nodes::Property;
using fake_two_nodes::RegionOf;

// A small size class nothing else in this process uses, so that its first
// allocation makes a new span.
constexpr size_t kSize = 200 << 10;

// The scheduler's move, once: called inside malloc, so no allocation here.
bool g_move_armed = false;
void MoveToCpu1() {
  if (!g_move_armed) return;
  g_move_armed = false;
  PinToCpu(1);
}

TEST(RefillMoved, TheNewNodeServesAndTheUnwrittenSpanGoesBack) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  ASSERT_EQ(Property("tcmalloc.numa.num_nodes"), 2u);
  ASSERT_NO_FATAL_FAILURE(
      std::thread([] {
        ASSERT_TRUE(PinToCpu(0));
        free(malloc(64));  // this thread's cache, on node 0
        const size_t moved = Property("tcmalloc.numa.refills_moved");

        g_move_armed = true;
        tcmalloc::numa::NodeHeaps::SetAfterSpanForTest(MoveToCpu1);
        void* p = malloc(kSize);
        tcmalloc::numa::NodeHeaps::SetAfterSpanForTest(nullptr);
        ASSERT_NE(p, nullptr);
        EXPECT_FALSE(g_move_armed) << "the refill made no new span";
        EXPECT_EQ(sched_getcpu(), 1);
        EXPECT_EQ(RegionOf(p), 1)
            << "served by the node the thread now runs on";
        EXPECT_EQ(Property("tcmalloc.numa.refills_moved") - moved, 1u);
        free(p);
      }).join());

  // Node 0's span went back to its heap, whole: a new thread of node 0 gets
  // its objects of that class there, and its refill is not counted.
  const size_t moved = Property("tcmalloc.numa.refills_moved");
  ASSERT_NO_FATAL_FAILURE(std::thread([] {
                            ASSERT_TRUE(PinToCpu(0));
                            void* q = malloc(kSize);
                            EXPECT_EQ(RegionOf(q), 0);
                            free(q);
                          }).join());
  EXPECT_EQ(Property("tcmalloc.numa.refills_moved"), moved);
}

// Refills that stay on their node, new spans among them, are not counted.
// (A borrower fills another node's list on purpose and is not taken for a
// moved thread: node_heap_metadata_test borrows that way.)
TEST(RefillMoved, RefillsThatStayAreNotCounted) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  const size_t moved = Property("tcmalloc.numa.refills_moved");
  ASSERT_NO_FATAL_FAILURE(std::thread([] {
                            ASSERT_TRUE(PinToCpu(1));
                            for (int i = 0; i < 1000; ++i)
                              free(malloc(100 + i * 64));
                          }).join());
  EXPECT_EQ(Property("tcmalloc.numa.refills_moved"), moved);
}

}  // namespace

int main(int argc, char** argv) {
  // The allocator reads its knobs once, at start-up: set them and re-execute,
  // on CPU 0 (node 0) from exec on.
  if (getenv("TCMALLOC_NUMA_FAKE_NODES") == nullptr) {
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    PinToCpu(0);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
