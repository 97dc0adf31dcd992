// When a CPU node's free pages count as stranded, and how each node's idle
// time follows its threads' comings and goings.
#include "numa/stranded_nodes.h"

#include "gtest/gtest.h"

namespace tcmalloc {
namespace numa {
namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kBase = 100 * kMs;

class StrandedNodesTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetStrandedNodesForTest(); }

  // Node `node` released at `at`, regrown `after` later.
  static void ReleaseAndRegrow(int node, uint64_t at, uint64_t after) {
    NoteUnstranded(node, at);
    NoteRegrowth(node, kBase, at + after);
  }
};

TEST_F(StrandedNodesTest, ANodeIdleForItsIdleTimeIsStranded) {
  NoteServe(0);
  NoteServe(1);
  EXPECT_EQ(StrandedNodes(2, kBase, 1000 * kMs), 0u) << "first look";
  NoteServe(0);
  EXPECT_EQ(StrandedNodes(2, kBase, 1099 * kMs), 0u) << "99 ms idle";
  NoteServe(0);
  EXPECT_EQ(StrandedNodes(2, kBase, 1100 * kMs), uint64_t{1} << 1);
}

// A node the others outgrow by the bound is stranded before its idle time:
// what it keeps does not depend on how fast they fault memory in.
TEST_F(StrandedNodesTest, ANodeOutgrownByTheBoundIsStranded) {
  constexpr uint64_t kBound = 16 << 20;
  NoteServe(0);
  NoteServe(1);
  EXPECT_EQ(StrandedNodes(2, kBase, 1000 * kMs, 1, 8 << 20, kBound), 0u)
      << "first look";
  EXPECT_EQ(StrandedNodes(2, kBase, 1001 * kMs, 1, 8 << 20, kBound), 0u)
      << "node 1 grew 8 MiB since node 0 served";
  EXPECT_EQ(StrandedNodes(2, kBase, 1002 * kMs, 1, 8 << 20, kBound), 1u)
      << "16 MiB: node 0 is stranded 2 ms after its last serve";
  NoteServe(0);
  EXPECT_EQ(StrandedNodes(2, kBase, 1003 * kMs, 1, 64 << 20, kBound), 0u)
      << "a serve starts the count afresh";
  EXPECT_EQ(StrandedNodes(2, kBase, 1004 * kMs, 0, 64 << 20, kBound) & 1, 0u)
      << "a node's own growth does not count";
  EXPECT_EQ(StrandedNodes(2, kBase, 1005 * kMs, 1, 8 << 20, 0), 0u)
      << "no bound: idle time alone";
}

TEST_F(StrandedNodesTest, TheGrowthLimitScalesWithTheIdleTime) {
  constexpr uint64_t kBound = 16 << 20;
  ReleaseAndRegrow(0, 1000 * kMs, kMs);  // came back: twice the idle time
  NoteServe(0);
  StrandedNodes(2, kBase, 2000 * kMs, 1, 0, kBound);
  EXPECT_EQ(StrandedNodes(2, kBase, 2001 * kMs, 1, 16 << 20, kBound) & 1, 0u);
  EXPECT_EQ(StrandedNodes(2, kBase, 2002 * kMs, 1, 16 << 20, kBound) & 1, 1u);
}

TEST_F(StrandedNodesTest, ZeroIdleTimeStrandsEveryNode) {
  NoteServe(0);
  EXPECT_EQ(StrandedNodes(2, 0, kMs), ~uint64_t{0});
}

TEST_F(StrandedNodesTest, ComingBackSoonAfterAReleaseDoublesTheIdleTime) {
  EXPECT_EQ(IdleNsOf(1, kBase), kBase);
  ReleaseAndRegrow(1, 1000 * kMs, 50 * kMs);  // gone 150 ms
  EXPECT_EQ(IdleNsOf(1, kBase), 2 * kBase);
  EXPECT_EQ(IdleNsOf(0, kBase), kBase) << "only the node that came back";
  // Idle for 150 ms: no longer stranded.
  StrandedNodes(2, kBase, 2000 * kMs);
  EXPECT_EQ(StrandedNodes(2, kBase, 2150 * kMs) & 2, 0u);
  EXPECT_EQ(StrandedNodes(2, kBase, 2200 * kMs) & 2, 2u);
}

TEST_F(StrandedNodesTest, TheIdleTimeStopsDoubling) {
  for (int i = 0; i < kMaxIdleDoublings + 3; ++i) {
    ReleaseAndRegrow(1, (i + 1) * 100000 * kMs, kMs);
  }
  EXPECT_EQ(IdleNsOf(1, kBase), kBase << kMaxIdleDoublings);
}

TEST_F(StrandedNodesTest, ThreadsAwayLongerThanTheIdleTimeLearnItAtOnce) {
  // Back 2.5 s after a release at 100 ms: the next release waits longer than
  // the 2.6 s they were gone (3.2 s), so it does not come at each round trip.
  ReleaseAndRegrow(1, 1000 * kMs, 2500 * kMs);
  EXPECT_EQ(IdleNsOf(1, kBase), 32 * kBase);
  StrandedNodes(2, kBase, 10000 * kMs);
  EXPECT_EQ(StrandedNodes(2, kBase, 12600 * kMs) & 2, 0u) << "away again";
}

TEST_F(StrandedNodesTest, StayingAwayHalvesItAgain) {
  ReleaseAndRegrow(1, 1000 * kMs, kMs);
  ReleaseAndRegrow(1, 2000 * kMs, kMs);
  EXPECT_EQ(IdleNsOf(1, kBase), 4 * kBase);
  // Back after more than the longest idle time (12.8 s).
  ReleaseAndRegrow(1, 3000 * kMs, 13000 * kMs);
  EXPECT_EQ(IdleNsOf(1, kBase), 2 * kBase);
}

TEST_F(StrandedNodesTest, GrowthWithoutAReleaseTeachesNothing) {
  NoteRegrowth(1, kBase, 1000 * kMs);
  EXPECT_EQ(IdleNsOf(1, kBase), kBase);
  ReleaseAndRegrow(1, 2000 * kMs, kMs);
  NoteRegrowth(1, kBase, 2000 * kMs + 2 * kMs);  // the same release
  EXPECT_EQ(IdleNsOf(1, kBase), 2 * kBase);
}

TEST_F(StrandedNodesTest, NodesOutOfRangeAreIgnored) {
  NoteServe(-1);
  NoteServe(kMaxNodes);
  NoteUnstranded(kMaxNodes, kMs);
  NoteRegrowth(-1, kBase, kMs);
  EXPECT_EQ(IdleNsOf(kMaxNodes, kBase), kBase);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
