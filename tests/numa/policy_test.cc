// The layer's decisions (numa/policy.h), walked without a heap.
#include "numa/policy.h"

#include "gtest/gtest.h"

namespace tcmalloc {
namespace numa {
namespace {

TEST(LenderOrder, PagesFromEveryNodeObjectsOnlyFromCpuNodes) {
  // Node 0 of 2 CPU nodes (0, 1) and 2 memory-only nodes (2, 3); its
  // fallback order puts the memory-only node 2 nearest.
  const uint8_t fallback[] = {2, 1, 3};
  int out[kMaxNodes];
  ASSERT_EQ(LenderOrder(Borrowed::kPages, fallback, 3, 2, out), 3);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 3);
  ASSERT_EQ(LenderOrder(Borrowed::kObjects, fallback, 3, 2, out), 1);
  EXPECT_EQ(out[0], 1) << "small objects never come from a memory-only node";
  EXPECT_EQ(LenderOrder(Borrowed::kObjects, fallback, 3, 1, out), 0)
      << "one CPU node: nobody to borrow objects from";
  EXPECT_EQ(LenderOrder(Borrowed::kPages, fallback, 0, 2, out), 0);
}

TEST(PagesToUnstrand, OtherNodesKeepAtMostTheBound) {
  constexpr uint64_t kAny = ~uint64_t{0};  // a growth larger than all of it
  const uint64_t free_bytes[] = {100 << 20, 10 << 20, 8 << 20};
  // Node 0 grows: nodes 1 and 2 hold 18 MiB, 2 MiB over a 16 MiB bound.
  EXPECT_EQ(PagesToUnstrand(0, 3, free_bytes, 16 << 20, 13, kAny), 256u);
  // Node 1 grows: its own free pages do not count.
  EXPECT_EQ(PagesToUnstrand(1, 3, free_bytes, 16 << 20, 13, kAny),
            ((108u << 20) - (16u << 20)) >> 13);
  EXPECT_EQ(PagesToUnstrand(0, 3, free_bytes, 18 << 20, 13, kAny), 0u)
      << "at bound";
  EXPECT_EQ(PagesToUnstrand(0, 1, free_bytes, 0, 13, kAny), 0u) << "one node";
  const uint64_t odd[] = {0, 1};
  EXPECT_EQ(PagesToUnstrand(0, 2, odd, 0, 13, kAny), 1u)
      << "rounds up to a page";
}

TEST(PagesToUnstrand, AtMostTheGrowth) {
  const uint64_t free_bytes[] = {0, 200 << 20};
  // 184 MiB beyond the bound, but node 0 grows by 4 MiB: node 1 gives 4.
  EXPECT_EQ(PagesToUnstrand(0, 2, free_bytes, 16 << 20, 13, 512), 512u);
  EXPECT_EQ(PagesToUnstrand(0, 2, free_bytes, 16 << 20, 13, 0), 0u);
  EXPECT_EQ(PagesToUnstrand(0, 2, free_bytes, 199 << 20, 13, 512), 128u)
      << "the bound still limits it";
}

TEST(GrowthPassesMark, OncePerIntervalAboveThePeak) {
  constexpr uint64_t kMiB = 1 << 20;
  constexpr uint64_t kMark = 128 * kMiB;
  // A heap that only grows (its peak is its size): upstream's rule.
  EXPECT_FALSE(GrowthPassesMark(100 * kMiB, 100 * kMiB, 20 * kMiB, kMark));
  EXPECT_TRUE(GrowthPassesMark(120 * kMiB, 120 * kMiB, 10 * kMiB, kMark));
  EXPECT_FALSE(GrowthPassesMark(130 * kMiB, 130 * kMiB, 10 * kMiB, kMark));
  EXPECT_TRUE(GrowthPassesMark(0, 250 * kMiB, 10 * kMiB, kMark))
      << "the size counts when the peak is older";
  // It held 130 MiB, shrank to 90 and grows back: no mark passed within it.
  EXPECT_FALSE(GrowthPassesMark(130 * kMiB, 90 * kMiB, 40 * kMiB, kMark));
  EXPECT_FALSE(GrowthPassesMark(130 * kMiB, 100 * kMiB, 30 * kMiB, kMark));
  // Past its peak, across the next multiple.
  EXPECT_TRUE(GrowthPassesMark(130 * kMiB, 120 * kMiB, 140 * kMiB, kMark));
  EXPECT_FALSE(GrowthPassesMark(260 * kMiB, 200 * kMiB, 60 * kMiB, kMark));
}

TEST(PlanRetirement, OtherNodesInOrderUntilTheGrowthIsCovered) {
  const uint64_t released[] = {50, 30, 0, 40};
  uint64_t out[4];
  PlanRetirement(2, 4, released, 60, out);
  EXPECT_EQ(out[0], 50u);
  EXPECT_EQ(out[1], 10u);
  EXPECT_EQ(out[2], 0u);
  EXPECT_EQ(out[3], 0u);
  PlanRetirement(0, 4, released, 500, out);
  EXPECT_EQ(out[0], 0u) << "never the growing node itself";
  EXPECT_EQ(out[1], 30u);
  EXPECT_EQ(out[3], 40u) << "at most what a node has released";
  PlanRetirement(1, 4, released, 0, out);
  for (uint64_t pages : out) EXPECT_EQ(pages, 0u);
}

TEST(TransferCacheShare, TheNodesTogetherHoldVanillasCap) {
  for (int cap : {1, 7, 64}) {
    for (int nodes : {1, 2, 3, 8, 64}) {
      int sum = 0;
      for (int node = 0; node < nodes; ++node) {
        const int share = TransferCacheShare(cap, nodes, node);
        EXPECT_GE(share, cap / nodes);
        sum += share;
      }
      EXPECT_EQ(sum, cap) << cap << " entries over " << nodes << " nodes";
    }
  }
}

TEST(TransferCacheShare, PlacedListsHaveNoSlots) {
  EXPECT_EQ(TransferCacheShare(64, 1, kMaxNodes), 0);
  EXPECT_EQ(TransferCacheShare(64, 2, kMaxNodes + 5), 0);
  EXPECT_EQ(TransferCacheShare(64, 1, 0), 64);
}

TEST(DecideMigration, FlushOnlyWhatIsSortedByOwner) {
  EXPECT_EQ(DecideMigration(1, 1, Migration::kFlush, true), OnMigration::kStay);
  EXPECT_EQ(DecideMigration(0, 1, Migration::kFlush, true),
            OnMigration::kSwitchAndFlush);
  EXPECT_EQ(DecideMigration(0, 1, Migration::kDrain, true),
            OnMigration::kSwitch);
  EXPECT_EQ(DecideMigration(0, 1, Migration::kFlush, false),
            OnMigration::kSwitch)
      << "a node-blind cache has no old node's objects to flush";
}

TEST(TooManyPagesElsewhere, MoreThanOneInTwentyElsewhere) {
  EXPECT_FALSE(TooManyPagesElsewhere(32, 0));
  EXPECT_FALSE(TooManyPagesElsewhere(0, 0)) << "nothing written: nothing to do";
  EXPECT_FALSE(TooManyPagesElsewhere(19, 1)) << "1 in 20 is kept";
  EXPECT_TRUE(TooManyPagesElsewhere(18, 2));
  EXPECT_TRUE(TooManyPagesElsewhere(16, 16)) << "two nodes wrote it";
  EXPECT_TRUE(TooManyPagesElsewhere(0, 32)) << "another node wrote it all";
  EXPECT_TRUE(TooManyPagesElsewhere(0, 1));
}

TEST(DecideMovedSpan, ReleasedOnceThenKept) {
  EXPECT_EQ(DecideMovedSpan(0, false), MovedSpan::kStays);
  EXPECT_EQ(DecideMovedSpan(0, true), MovedSpan::kStays)
      << "home again: nothing to do";
  EXPECT_EQ(DecideMovedSpan(1, false), MovedSpan::kRelease);
  EXPECT_EQ(DecideMovedSpan(2, true), MovedSpan::kKeep)
      << "moved again after a release: releasing it would make it move again";
}

// The figures are the lab's (tests/containers/container_lab_run): a 64 MiB
// block, 16384 pages, under THP always (512 pages a fault) and never.
ReuseWitness Witness(uint64_t gained, uint64_t mine, uint64_t others,
                     uint64_t per_fault, bool on_node = true,
                     bool released_before = false) {
  return ReuseWitness{16384,     gained,  mine,           others,
                      per_fault, on_node, released_before};
}

TEST(WitnessSaysRelease, NothingGainedIsKept) {
  EXPECT_FALSE(WitnessSaysRelease(Witness(0, 0, 5000, 512)))
      << "all present when handed out: the heap's own pages";
  EXPECT_FALSE(WitnessSaysRelease(Witness(0, 0, 0, 1, /*on_node=*/false)));
}

TEST(WitnessSaysRelease, TakenOnAnotherNodeIsReleased) {
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 32, 0, 512, false)));
}

TEST(WitnessSaysRelease, OthersFaultingTooLittleIsKept) {
  // The faults loop: the taker alone faulted.
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 32, 0, 512)));
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 16384, 0, 1)));
  // One huge page of another thread's could be 1 in 32 of the block.
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 32, 1, 512)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 32, 2, 512)));
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 16384, 819, 1)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 8192, 820, 1)));
}

TEST(WitnessSaysRelease, ParallelInitialisationIsReleased) {
  // Node 0 took it, each of two nodes wrote half (lab: 18 and 19 faults
  // with huge pages, 8194 and 8234 without).
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 18, 19, 512)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 8194, 8234, 1)));
  // With huge pages a few incidental faults of the taker's could pass for
  // the block's own (lab, 8 MiB: the taker took 4 for a block of 4, half of
  // it written by the other node): not enough there, unless the block came
  // back empty from a release.
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 40, 16, 512)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 32, 16, 512)));
}

TEST(WitnessSaysRelease, HugePagesReleasedBlockRewrittenByItsTakerIsKept) {
  // A busy process's own loop: the other threads keep faulting.
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 32, 500, 512, true, true)));
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 64, 500, 512, true, true)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 16, 500, 512, true, true)))
      << "half the block was someone else's";
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 65, 500, 512, true, true)))
      << "far more faults than the block needed";
}

TEST(WitnessSaysRelease, TakenOnAnotherNodeAgainAfterAReleaseIsKept) {
  // Threads that move: each release faults back in wherever they run next.
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 32, 500, 512, false, true)));
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 16384, 500, 1, false, true)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 16384, 500, 1, false, false)))
      << "the first time it is released";
}

TEST(WitnessSaysRelease, TakerWroteItWhileOthersFaultedIsKeptWithoutHugePages) {
  // A busy process: others faulted, but fewer times than the block needed,
  // and the taker about as many as it needed.
  EXPECT_FALSE(WitnessSaysRelease(Witness(16384, 16390, 3000, 1)));
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 16390, 16384, 1)))
      << "others could have faulted it all";
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 16383, 3000, 1)))
      << "fewer faults than gained pages: someone else faulted some";
  EXPECT_TRUE(WitnessSaysRelease(Witness(16384, 40000, 3000, 1)))
      << "far more than it needed: its faults say nothing of this block";
}

TEST(StartsOnHugePage, WholeHugePagesOnly) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_FALSE(StartsOnHugePage(1 * kMiB));
  EXPECT_TRUE(StartsOnHugePage(2 * kMiB));
  EXPECT_FALSE(StartsOnHugePage(3 * kMiB));
  EXPECT_FALSE(StartsOnHugePage(2 * kMiB + 8192));
  EXPECT_TRUE(StartsOnHugePage(64 * kMiB));
  EXPECT_FALSE(StartsOnHugePage(0));
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
