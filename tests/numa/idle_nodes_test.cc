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

TEST_F(IdleNodes, ANodeQuietForkQuietLooksIsReportedOnce) {
  NoteRefill(1);
  NoteRefill(2);
  EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << "first look: both were active";
  for (int look = 1; look < kQuietLooks; ++look) {
    NoteRefill(2);
    EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << look << " quiet looks of node 1";
  }
  NoteRefill(2);
  EXPECT_EQ(TakeIdleNodes(0, 3), uint64_t{1} << 1) << "node 1 went idle";
  NoteRefill(2);
  EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << "reported once per idle spell";
  NoteRefill(1);
  EXPECT_EQ(TakeIdleNodes(0, 3), 0u) << "node 1 came back";
  uint64_t idle = 0;
  for (int look = 0; look < kQuietLooks; ++look) idle |= TakeIdleNodes(0, 3);
  EXPECT_EQ(idle, (uint64_t{1} << 1) | (uint64_t{1} << 2))
      << "both quiet for kQuietLooks looks: idle again";
}

// A program whose threads come and go in rounds: a node that refills at
// least once every kQuietLooks looks is never drained.
TEST_F(IdleNodes, ARefillWithinkQuietLooksKeepsANodeActive) {
  uint64_t idle = 0;
  for (int look = 0; look < 10 * kQuietLooks; ++look) {
    if (look % kQuietLooks == 0) NoteRefill(1);
    NoteRefill(2);
    idle |= TakeIdleNodes(0, 3);
  }
  EXPECT_EQ(idle, 0u);
}

// A node no thread ever refilled from may still hold objects other nodes'
// threads freed to it: its quiet looks count from the first.
TEST_F(IdleNodes, ANodeNeverRefilledIsIdleAfterkQuietLooks) {
  for (int look = 1; look < kQuietLooks; ++look) {
    EXPECT_EQ(TakeIdleNodes(0, 2), 0u) << look;
  }
  EXPECT_EQ(TakeIdleNodes(0, 2), uint64_t{1} << 1);
  EXPECT_EQ(TakeIdleNodes(0, 2), 0u);
}

TEST_F(IdleNodes, TheLookingNodeAndNodesPastTheListNodesAreNeverReported) {
  auto quiet_looks = [](int self, int cpu_nodes) {
    uint64_t idle = 0;
    for (int look = 0; look < kQuietLooks; ++look) {
      idle |= TakeIdleNodes(self, cpu_nodes);
    }
    return idle;
  };
  EXPECT_EQ(quiet_looks(1, 2), uint64_t{1} << 0);
  ResetIdleNodesForTest();
  EXPECT_EQ(quiet_looks(0, 1), 0u);
  ResetIdleNodesForTest();
  EXPECT_EQ(quiet_looks(0, kMaxCpuNodes + 1), ~uint64_t{0} & ~uint64_t{1})
      << "every node but the looking one, up to kMaxCpuNodes";
}

// Bounded: a node that stops refilling is reported within kQuietLooks + 1
// looks of an active node, that is within (kQuietLooks + 1) *
// kRefillsPerLook of its refills.
TEST_F(IdleNodes, IdleNodeIsReportedWithinkQuietLooksPlusOne) {
  NoteRefill(3);
  uint64_t idle = 0;
  int looks = 0;
  while ((idle & (uint64_t{1} << 3)) == 0 && looks < 2 * kQuietLooks + 2) {
    RefillUntilLook(0);
    idle |= TakeIdleNodes(0, 4);
    ++looks;
  }
  EXPECT_EQ(idle, (uint64_t{1} << 1) | (uint64_t{1} << 2) | (uint64_t{1} << 3));
  EXPECT_EQ(looks, kQuietLooks + 1);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
