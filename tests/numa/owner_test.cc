// OwnerOf over its whole domain: regions of nodes, the parts of windows no
// region reserved, addresses above the windows, and a layer that is off.
#include "numa/owner.h"

#include "gtest/gtest.h"
#include "numa/numa.h"
#include "numa/region.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"

namespace tcmalloc {
namespace numa {
namespace {

constexpr uintptr_t kGiB = uintptr_t{1} << 30;
// Window w's start, and the layout's end (numa/owner.h).
uintptr_t W(int w) { return WindowStart(w); }

class OwnerTable : public ::testing::Test {
 protected:
  void SetUp() override { ClearOwners(); }
  void TearDown() override { ClearOwners(); }
};

bool Unplaced(uintptr_t addr) {
  const Owner o = OwnerOf(addr);
  return o.kind == MemoryKind::kUnplaced && o.node == 0;
}

TEST_F(OwnerTable, NothingIsPlacedWhileNoWindowHasAnOwner) {
  for (uintptr_t addr :
       {uintptr_t{0}, uintptr_t{4096}, kNode0RegionStart, W(1) + kGiB,
        W(63) + kGiB, uintptr_t{127} << 40, ~uintptr_t{0}}) {
    EXPECT_TRUE(Unplaced(addr)) << std::hex << addr;
  }
}

TEST_F(OwnerTable, AReservedPartIsItsNodesAndNothingAroundIt) {
  const uintptr_t begin = W(3) + kGiB;
  SetOwner(begin, 64 << 20, MemoryKind::kNode, 5);
  const Owner o = OwnerOf(begin + 4096);
  EXPECT_EQ(o.kind, MemoryKind::kNode);
  EXPECT_EQ(o.node, 5);
  EXPECT_EQ(OwnerOf(begin).node, 5);
  EXPECT_EQ(OwnerOf(begin + (64 << 20) - 1).node, 5);
  EXPECT_TRUE(Unplaced(begin - 1)) << "the guard below the region";
  EXPECT_TRUE(Unplaced(begin + (64 << 20))) << "not reserved yet";
  EXPECT_TRUE(Unplaced(W(3))) << "the window's start";
  EXPECT_TRUE(Unplaced(begin + kWindowSize)) << "the next window";

  // The region reserves more: the part grows, its start stays.
  SetOwner(begin + (64 << 20), 128 << 20, MemoryKind::kNode, 5);
  EXPECT_EQ(OwnerOf(begin + (64 << 20)).node, 5);
  EXPECT_EQ(OwnerOf(begin + (192 << 20) - 1).node, 5);
  EXPECT_TRUE(Unplaced(begin + (192 << 20)));
  EXPECT_EQ(OwnerOf(begin).node, 5);
}

TEST_F(OwnerTable, AddressesAboveThePlacedAreaAreUnplaced) {
  SetOwner(W(63) + kGiB, 64 << 20, MemoryKind::kNode, 63);
  EXPECT_EQ(OwnerOf(W(63) + kGiB).node, 63);
  SetOwner(kPlacedEnd + kGiB, 64 << 20, MemoryKind::kNode, 1);
  EXPECT_TRUE(Unplaced(kPlacedEnd + kGiB)) << "no slot can be set there";
  EXPECT_TRUE(Unplaced(uintptr_t{127} << 40));
  if (kLayoutBase > 0) {
    SetOwner(kLayoutBase - kGiB, 64 << 20, MemoryKind::kNode, 1);
    EXPECT_TRUE(Unplaced(kLayoutBase - kGiB)) << "below the layout";
  }
}

// A part that grows past a slot (256 GiB; 2 GiB in sanitizer builds) is
// found through every slot.
TEST_F(OwnerTable, APartSpanningSlotsIsFoundInEach) {
  const uintptr_t slot = uintptr_t{1} << kSectorShift;
  const uintptr_t begin = W(2) + kGiB;
  const uintptr_t size = slot + slot / 8;
  SetOwner(begin, size, MemoryKind::kNode, 2);
  EXPECT_EQ(OwnerOf(begin + size - 4096).node, 2);
  EXPECT_EQ(OwnerOf(begin + size - 4096).kind, MemoryKind::kNode);
  EXPECT_TRUE(Unplaced(begin + size));
}

// Named-node memory has its kernel node; interleaved memory no node.
TEST_F(OwnerTable, PlacedPartsHaveTheirKinds) {
  const uintptr_t named3 = kNamedBase + 3 * kNamedPartSize + kGiB;
  SetOwner(named3, 64 << 20, MemoryKind::kNamed, 3);
  const Owner o = OwnerOf(named3 + 100);
  EXPECT_EQ(o.kind, MemoryKind::kNamed);
  EXPECT_EQ(o.node, 3);
  EXPECT_TRUE(IsPlaced(o));
  EXPECT_TRUE(Unplaced(named3 - kNamedPartSize)) << "node 2's part is free";
  const uintptr_t interleaved = kInterleavedBase + kGiB;
  SetOwner(interleaved, 64 << 20, MemoryKind::kInterleaved, 0);
  EXPECT_EQ(OwnerOf(interleaved).kind, MemoryKind::kInterleaved);
  EXPECT_TRUE(IsPlaced(OwnerOf(interleaved)));
  EXPECT_FALSE(IsPlaced(OwnerOf(uintptr_t{4096})));
}

// With the layer on, each node's first reservation is its node's; with the
// layer off (one node), no address has an owner but node 0 unplaced.
TEST_F(OwnerTable, TheLayerRecordsEveryNodesRegion) {
  numa_test::SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "3"}});
  Init(numa_test::FakeGetenv);
  ASSERT_TRUE(Active());
  for (int node = 0; node < 3; ++node) {
    RegionStats r;
    ASSERT_TRUE(GetRegionStats(node, &r));
    EXPECT_EQ(OwnerOf(r.begin).kind, MemoryKind::kNode) << node;
    EXPECT_EQ(OwnerOf(r.begin).node, node);
    EXPECT_EQ(OwnerOf(r.begin + r.reserved - 1).node, node);
    EXPECT_TRUE(Unplaced(r.begin + r.reserved)) << node;
  }
  EXPECT_TRUE(Unplaced(4096)) << "below node 0's region: brk, not placed";
}

TEST_F(OwnerTable, ALayerThatIsOffPlacesNothing) {
  numa_test::SetFakeEnv({{"TCMALLOC_NUMA", "0"}});
  Init(numa_test::FakeGetenv);
  ASSERT_FALSE(Active());
  EXPECT_TRUE(Unplaced(kNode0RegionStart));
  EXPECT_TRUE(Unplaced(W(1) + kGiB));
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
