// Per-node page heaps under a fake two-node topology, on any machine.
//
// TCMALLOC_NUMA_FAKE_NODES=2 maps CPU i to node i % 2 and never calls mbind,
// so this exercises the page heap's node bookkeeping without a NUMA machine.
// The allocator reads its knobs once at start-up, so main() re-executes the
// binary with them set.
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"
#include "numa/owner.h"
#include "tests/numa_heap/fake_two_nodes.h"

namespace {

using fake_two_nodes::PinToCpu;
using fake_two_nodes::Property;

constexpr size_t kPageLevelBytes = 1 << 20;  // far above kMaxSize: a span

size_t NodeProperty(int node, const char* field) {
  return Property("tcmalloc.numa.node" + std::to_string(node) + "." + field);
}

class FakeTwoNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PinToCpu(0) || !PinToCpu(1)) GTEST_SKIP() << "needs 2 CPUs";
  }
};

TEST_F(FakeTwoNodes, LayerIsActiveWithTwoNodes) {
  EXPECT_EQ(Property("tcmalloc.numa.active"), 1u);
  EXPECT_EQ(Property("tcmalloc.numa.num_nodes"), 2u);
  // The fake topology never binds: it must not touch real node 1.
  EXPECT_EQ(Property("tcmalloc.numa.mbind_calls"), 0u);
}

TEST_F(FakeTwoNodes, EachNodeGrowsItsOwnHeap) {
  for (int node = 0; node < 2; ++node) {
    ASSERT_TRUE(PinToCpu(node));
    const size_t before = NodeProperty(node, "pageheap_system_bytes");
    void* p = malloc(64 * kPageLevelBytes);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(NodeProperty(node, "pageheap_system_bytes"),
              before + 64 * kPageLevelBytes)
        << "node " << node << " did not grow its own heap";
    free(p);
    // The span went back to its owner's free list.
    EXPECT_GE(NodeProperty(node, "pageheap_free_bytes") +
                  NodeProperty(node, "pageheap_unmapped_bytes"),
              64 * kPageLevelBytes);
  }
}

TEST_F(FakeTwoNodes, FreedSpanIsNotReusedByTheOtherNode) {
  ASSERT_TRUE(PinToCpu(0));
  void* on_node0 = malloc(4 * kPageLevelBytes);
  ASSERT_NE(on_node0, nullptr);
  free(on_node0);  // now a free (not released) span of node 0

  ASSERT_TRUE(PinToCpu(1));
  void* on_node1 = malloc(4 * kPageLevelBytes);
  ASSERT_NE(on_node1, nullptr);
  EXPECT_NE(on_node1, on_node0) << "node 1 was handed node 0's free span";
  free(on_node1);
}

TEST_F(FakeTwoNodes, FreeFromAnotherNodeReturnsSpanToOwner) {
  ASSERT_TRUE(PinToCpu(0));
  void* p = malloc(8 * kPageLevelBytes);
  ASSERT_NE(p, nullptr);
  const size_t free0 = NodeProperty(0, "pageheap_free_bytes");
  const size_t free1 = NodeProperty(1, "pageheap_free_bytes");

  ASSERT_TRUE(PinToCpu(1));
  free(p);  // freed on node 1, owned by node 0

  EXPECT_GE(NodeProperty(0, "pageheap_free_bytes") +
                NodeProperty(0, "pageheap_unmapped_bytes"),
            free0 + 8 * kPageLevelBytes);
  EXPECT_LE(NodeProperty(1, "pageheap_free_bytes"), free1);
}

// Spans of different nodes never coalesce: every node's free and unmapped
// bytes stay within what that node took from the system. A merge across
// nodes would move one node's pages onto another node's lists.
TEST_F(FakeTwoNodes, NoCrossNodeCoalescing) {
  void* blocks[16];
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(PinToCpu(i % 2));
    blocks[i] = malloc((i + 1) * kPageLevelBytes / 2);
    ASSERT_NE(blocks[i], nullptr);
  }
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(PinToCpu((i + 1) % 2));
    free(blocks[i]);
  }
  for (int node = 0; node < 2; ++node) {
    EXPECT_LE(NodeProperty(node, "pageheap_free_bytes") +
                  NodeProperty(node, "pageheap_unmapped_bytes"),
              NodeProperty(node, "pageheap_system_bytes"))
        << "node " << node;
  }
}

// Every node's heap lies in its own address window, and the owner of an
// address follows from the address: small objects, page-level blocks and
// aligned ones alike.
TEST_F(FakeTwoNodes, EveryBlockLiesInItsNodesRegion) {
  for (int node = 0; node < 2; ++node) {
    const uintptr_t begin = NodeProperty(node, "region_begin");
    const uintptr_t end = NodeProperty(node, "region_end");
    ASSERT_LT(begin, end) << "node " << node;
    EXPECT_EQ(
        (begin - tcmalloc::numa::kLayoutBase) >> tcmalloc::numa::kWindowShift,
        static_cast<uintptr_t>(node));
    // A new thread, so that its cache starts on the node it is pinned to.
    ASSERT_NO_FATAL_FAILURE(
        std::thread([&] {
          ASSERT_TRUE(PinToCpu(node));
          for (size_t size : {16, 1000, 32 << 10, 256 << 10, 3 << 20}) {
            void* p = malloc(size);
            void* q = memalign(1 << 20, size);
            for (void* block : {p, q}) {
              const uintptr_t a = reinterpret_cast<uintptr_t>(block);
              EXPECT_TRUE(a >= begin && a < end)
                  << "node " << node << " size " << size << " at " << block;
            }
            free(p);
            free(q);
          }
        }).join());
    EXPECT_GT(NodeProperty(node, "region_committed_bytes"), 0u);
    EXPECT_GE(NodeProperty(node, "region_reserved_bytes"),
              NodeProperty(node, "region_committed_bytes"));
  }
  EXPECT_EQ(Property("tcmalloc.numa.region_failures"), 0u);
}

// Released memory never changes nodes: node 1 grows in its own region, and
// node 0's released pages go back to node 0's region, out of the heap's size,
// where node 0's next growth finds them again.
TEST_F(FakeTwoNodes, ReleasedMemoryGoesBackToItsRegion) {
  // Larger than anything node 1 ever held, so node 1 cannot serve it itself.
  constexpr size_t kBytes = 200 * kPageLevelBytes;
  ASSERT_TRUE(PinToCpu(0));
  void* p = malloc(kBytes);
  ASSERT_NE(p, nullptr);
  free(p);
  MallocExtension::instance()->ReleaseFreeMemory();  // node 0: unmapped
  const size_t node0_system = NodeProperty(0, "pageheap_system_bytes");
  const size_t node0_committed = NodeProperty(0, "region_committed_bytes");
  ASSERT_GE(NodeProperty(0, "pageheap_unmapped_bytes"), kBytes);

  ASSERT_TRUE(PinToCpu(1));
  void* q = malloc(kBytes);
  ASSERT_NE(q, nullptr);
  const uintptr_t a = reinterpret_cast<uintptr_t>(q);
  EXPECT_TRUE(a >= NodeProperty(1, "region_begin") &&
              a < NodeProperty(1, "region_end"))
      << q;
  EXPECT_LE(NodeProperty(0, "pageheap_system_bytes"), node0_system - kBytes);
  EXPECT_LE(NodeProperty(0, "region_committed_bytes"),
            node0_committed - kBytes);
  free(q);
  MallocExtension::instance()->ReleaseFreeMemory();  // node 1: unmapped

  ASSERT_TRUE(PinToCpu(0));
  void* r = malloc(kBytes);
  ASSERT_NE(r, nullptr);
  const uintptr_t b = reinterpret_cast<uintptr_t>(r);
  EXPECT_TRUE(b >= NodeProperty(0, "region_begin") &&
              b < NodeProperty(0, "region_end"))
      << r;
  EXPECT_LE(NodeProperty(0, "region_committed_bytes"), node0_committed)
      << "node 0 grew into the space it gave back, not past it";
  free(r);
}

// Physical memory moves between nodes through the kernel: as node 1 grows,
// node 0, idle for TCMALLOC_NUMA_STRANDED_IDLE_MS (100 by default), releases
// the free pages it holds beyond the bound (TCMALLOC_NUMA_MAX_STRANDED_MB, 16
// by default) and gives their address space back, so a load that moves from
// one node to the other keeps vanilla's resident size and heap size, whatever
// the release rate.
TEST_F(FakeTwoNodes, OtherNodesFreePagesAreReleasedAsANodeGrows) {
  constexpr int kBlocks = 16;
  constexpr size_t kBlock = 4 << 20;
  constexpr size_t kBytes = kBlocks * kBlock;
  constexpr size_t kBound = 16 << 20;
  constexpr size_t kSlack = 4 << 20;  // growth granules, the process's other
                                      // allocations
  void* blocks[kBlocks];
  ASSERT_TRUE(PinToCpu(0));
  for (void*& b : blocks) b = malloc(kBlock);
  for (void* b : blocks) free(b);
  ASSERT_GE(NodeProperty(0, "pageheap_free_bytes"), kBytes);
  const size_t heap = Property("generic.heap_size");

  ASSERT_TRUE(PinToCpu(1));
  blocks[0] = malloc(kBlock);
  // Node 0 serves nothing for longer than its idle time: 100 ms, or up to
  // 400 ms where the tests before this one taught it that its threads come
  // back (one or two doublings).
  usleep(450 * 1000);
  for (int i = 1; i < kBlocks; ++i) blocks[i] = malloc(kBlock);
  EXPECT_LE(NodeProperty(0, "pageheap_free_bytes"), kBound);
  EXPECT_LE(Property("generic.heap_size"), heap + kBound + kSlack + kBlock);
  for (void* b : blocks) free(b);
}

// A node whose threads used its heap lately keeps its free pages while
// another node grows less than twice the stranded bound (32 MiB) since: threads
// that move between nodes come back to them (with
// TCMALLOC_NUMA_STRANDED_IDLE_MS=0 node 0 would be left 16 MiB).
TEST_F(FakeTwoNodes, ANodeInUseKeepsItsFreePagesAsAnotherGrowsALittle) {
  constexpr int kBlocks = 16;
  constexpr size_t kBlock = 4 << 20;
  // Small objects' spans move a few pages in and out of node 0's free pages
  // while the test allocates; releasing would leave at most 16 MiB.
  constexpr size_t kSlack = 1 << 20;
  void* blocks[kBlocks];
  ASSERT_TRUE(PinToCpu(0));
  for (void*& b : blocks) b = malloc(kBlock);
  for (void* b : blocks) free(b);
  const size_t kept = NodeProperty(0, "pageheap_free_bytes");
  ASSERT_GE(kept, kBlocks * kBlock - kSlack);
  // Node 1 takes what it holds free, then 12 MiB more: it grows, by less
  // than the bound.
  ASSERT_TRUE(PinToCpu(1));
  const size_t n = NodeProperty(1, "pageheap_free_bytes") / kBlock + 3;
  ASSERT_LE(n, size_t{64}) << "node 1 holds more free than this test takes";
  void* more[64];
  for (size_t i = 0; i < n; ++i) more[i] = malloc(kBlock);
  EXPECT_GE(NodeProperty(0, "pageheap_free_bytes"), kept - kSlack);
  for (size_t i = 0; i < n; ++i) free(more[i]);
}

// Once the others have grown by twice the bound since a node's heap last
// served, its free pages beyond the bound are released, however fast they
// grew: the footprint of a load that moves for good stays near vanilla's.
TEST_F(FakeTwoNodes, ANodeOutgrownByTheBoundGivesItsFreePagesUp) {
  constexpr int kBlocks = 16;
  constexpr size_t kBlock = 4 << 20;
  void* blocks[kBlocks];
  ASSERT_TRUE(PinToCpu(0));
  for (void*& b : blocks) b = malloc(kBlock);
  for (void* b : blocks) free(b);
  ASSERT_GE(NodeProperty(0, "pageheap_free_bytes"), size_t{48} << 20);
  ASSERT_TRUE(PinToCpu(1));
  void* more[3 * kBlocks];
  for (void*& b : more) b = malloc(kBlock);
  // The bound, what node 0 may still be asked to release, and some slack.
  EXPECT_LE(NodeProperty(0, "pageheap_free_bytes"), size_t{34} << 20);
  for (void* b : more) free(b);
}

TEST_F(FakeTwoNodes, StatsShowOneLinePerNode) {
  ASSERT_TRUE(PinToCpu(1));
  free(malloc(kPageLevelBytes));
  char buffer[64 << 10];
  MallocExtension::instance()->GetStats(buffer, sizeof(buffer));
  const std::string stats(buffer);
  EXPECT_NE(stats.find("NUMA node  0:"), std::string::npos) << stats;
  EXPECT_NE(stats.find("NUMA node  1:"), std::string::npos) << stats;
}

TEST_F(FakeTwoNodes, UnknownNodePropertyIsRejected) {
  size_t value;
  EXPECT_FALSE(MallocExtension::instance()->GetNumericProperty(
      "tcmalloc.numa.node63.pageheap_free_bytes", &value));
  EXPECT_FALSE(MallocExtension::instance()->GetNumericProperty(
      "tcmalloc.numa.node0.no_such_field", &value));
}

}  // namespace

int main(int argc, char** argv) {
  // Knobs are read once at start-up: re-exec with them set.
  if (getenv("TCMALLOC_NUMA_FAKE_NODES") == nullptr) {
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
