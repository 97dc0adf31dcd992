// When the refill path looks for idle nodes, and which nodes it reports.
#include "numa/idle_nodes.h"

#include "gtest/gtest.h"

namespace tcmalloc {
namespace numa {
namespace {

class IdleNodes : public ::testing::Test {
 protected:
  void SetUp() override { ResetIdleNodesForTest(); }

  // Refills of `node` up to and including the next one that asks for a look.
  static void RefillUntilLook(int node) {
    for (uint64_t i = 1; i <= kRefillsPerLook; ++i) {
      if (NoteRefill(node)) return;
    }
    FAIL() << "no look after " << kRefillsPerLook << " refills";
  }
};

TEST_F(IdleNodes, EveryKthRefillAsksForALook) {
  int looks = 0;
  for (uint64_t i = 0; i < 3 * kRefillsPerLook; ++i) looks += NoteRefill(2);
  EXPECT_EQ(looks, 3);
  EXPECT_FALSE(NoteRefill(-1));
  EXPECT_FALSE(NoteRefill(kMaxCpuNodes));
}

TEST_F(IdleNodes, ANodeWithoutRefillsBetweenTwoLooksIsReportedOnce) {
  NoteRefill(1);
  NoteRefill(2);
  EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << "first look: both were active";
  NoteRefill(2);
  EXPECT_EQ(TakeIdleNodes(0, 3), uint64_t{1} << 1) << "node 1 went idle";
  NoteRefill(1);
  EXPECT_EQ(TakeIdleNodes(0, 3), uint64_t{1} << 2) << "node 2 went idle";
  EXPECT_EQ(TakeIdleNodes(0, 3), uint64_t{1} << 1) << "node 1 idle again";
  EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << "reported once per idle spell";
}

// A node no thread ever refilled from may still hold objects other nodes'
// threads freed to it: it is idle from the first look.
TEST_F(IdleNodes, ANodeNeverRefilledIsIdleAtTheFirstLook) {
  EXPECT_EQ(TakeIdleNodes(0, 2), uint64_t{1} << 1);
  EXPECT_EQ(TakeIdleNodes(0, 2), 0u);
}

TEST_F(IdleNodes, TheLookingNodeAndNodesPastTheListNodesAreNeverReported) {
  EXPECT_EQ(TakeIdleNodes(1, 2), uint64_t{1} << 0);
  ResetIdleNodesForTest();
  EXPECT_EQ(TakeIdleNodes(0, 1), 0u);
  EXPECT_EQ(TakeIdleNodes(0, kMaxCpuNodes + 1), ~uint64_t{0} & ~uint64_t{1})
      << "every node but the looking one, up to kMaxCpuNodes";
}

// Bounded: a node that stops refilling is reported within two looks of an
// active node, that is within 2 * kRefillsPerLook of its refills.
TEST_F(IdleNodes, IdleNodeIsReportedWithinTwoLooks) {
  NoteRefill(3);
  uint64_t idle = 0;
  int looks = 0;
  while ((idle & (uint64_t{1} << 3)) == 0 && looks < 5) {
    RefillUntilLook(0);
    idle |= TakeIdleNodes(0, 4);
    ++looks;
  }
  EXPECT_EQ(idle, (uint64_t{1} << 1) | (uint64_t{1} << 2) | (uint64_t{1} << 3));
  EXPECT_EQ(looks, 2);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
