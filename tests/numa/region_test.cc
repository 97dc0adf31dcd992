// Node address regions (numa/region.h): the page-size arithmetic, the window
// layout, and real growth on this machine: commits are contiguous and
// granule-aligned, each reservation is bound once, and a region stays two
// mappings however it grows.
#include "numa/region.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "numa/numa.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"
#include "tests/numa/stderr_capture.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::FakeGetenv;
using numa_test::SetFakeEnv;

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// A kernel page of 4 KiB, 16 KiB or 64 KiB (arm64) divides the 2 MiB granule;
// a larger one (a hypothetical 4 MiB page) becomes the unit.
TEST(CommitBytes, RoundsToGranuleAndKernelPage) {
  for (size_t page : {4 * kKiB, 16 * kKiB, 64 * kKiB}) {
    EXPECT_EQ(CommitBytes(1, page), kCommitGranule) << page;
    EXPECT_EQ(CommitBytes(kMiB, page), kCommitGranule) << page;
    EXPECT_EQ(CommitBytes(kCommitGranule, page), kCommitGranule) << page;
    EXPECT_EQ(CommitBytes(kCommitGranule + 8 * kKiB, page), 2 * kCommitGranule)
        << page;
    EXPECT_EQ(CommitBytes(5 * kMiB, page) % page, 0u) << page;
  }
  EXPECT_EQ(CommitBytes(kMiB, 4 * kMiB), 4 * kMiB);
  EXPECT_EQ(CommitBytes(5 * kMiB, 4 * kMiB), 8 * kMiB);
  EXPECT_EQ(CommitBytes(~size_t{0} - 1, 4 * kKiB), 0u);  // overflow: refused
}

TEST(ReserveBytes, GrowsGeometricallyWithinRoom) {
  EXPECT_EQ(ReserveBytes(2 * kMiB, 64 * kMiB, size_t{1} << 40), 64 * kMiB);
  EXPECT_EQ(ReserveBytes(100 * kMiB, 64 * kMiB, size_t{1} << 40), 100 * kMiB);
  EXPECT_EQ(ReserveBytes(2 * kMiB, 64 * kMiB, 10 * kMiB), 10 * kMiB);
  EXPECT_EQ(ReserveBytes(20 * kMiB, 64 * kMiB, 10 * kMiB), 0u);
}

// Regions never touch, so the page heap never sees neighbouring spans of two
// nodes; node n's region lies in window n.
TEST(RegionWindow, DisjointOneWindowEach) {
  uintptr_t prev_end = 0;
  for (int node = 0; node < kMaxNodes; ++node) {
    uintptr_t begin, end;
    RegionWindow(node, &begin, &end);
    EXPECT_GT(begin, prev_end) << node;
    EXPECT_EQ(begin % kCommitGranule, 0u);
    EXPECT_EQ((begin - kLayoutBase) >> kWindowShift,
              static_cast<uintptr_t>(node));
    EXPECT_EQ((end - 1 - kLayoutBase) >> kWindowShift,
              static_cast<uintptr_t>(node));
    prev_end = end;
  }
  EXPECT_LE(prev_end, WindowStart(kWindows));
  // Then every named part, then interleaved memory, all below PIE
  // executables (85 TiB), each in its own owner-table slots.
  for (int id = kFirstNamedRegion; id < kRegions; ++id) {
    uintptr_t begin, end;
    RegionWindow(id, &begin, &end);
    EXPECT_GT(begin, prev_end) << id;
    EXPECT_EQ(begin % kCommitGranule, 0u);
    EXPECT_NE(begin >> kSectorShift, (prev_end - 1) >> kSectorShift) << id;
    prev_end = end;
  }
  EXPECT_LE(prev_end, kPlacedEnd);
  EXPECT_LE(kPlacedEnd, uintptr_t{81} << 40);
}

// Node regions start at different offsets into upstream's page-map cache
// period, so nodes growing in step never share that direct-mapped cache's
// entries: node 1 half a period from node 0, nodes 2 and 3 at the quarters,
// and the first 64 nodes all apart, in whole commit granules, within the
// 2 GiB page-map leaf of the region's first page.
TEST(RegionWindow, NodeStartsStaggeredOverThePageMapCachePeriod) {
  uintptr_t begin[kMaxNodes], end;
  for (int node = 0; node < kMaxNodes; ++node) {
    RegionWindow(node, &begin[node], &end);
  }
  auto phase = [&](int node) { return begin[node] % kPageMapCachePeriod; };
  EXPECT_EQ((phase(1) + kPageMapCachePeriod - phase(0)) % kPageMapCachePeriod,
            kPageMapCachePeriod / 2);
  EXPECT_EQ((phase(2) + kPageMapCachePeriod - phase(0)) % kPageMapCachePeriod,
            kPageMapCachePeriod / 4);
  std::set<uintptr_t> phases;
  for (int node = 0; node < 64 && node < kMaxNodes; ++node) {
    phases.insert(phase(node));
    EXPECT_EQ(begin[node] % kCommitGranule, 0u) << node;
    const uintptr_t window = WindowStart(node);
    if (node > 0) {
      EXPECT_EQ((begin[node] - 1) >> 31, (window + kRegionGuard) >> 31)
          << node << ": the page before it shares the first page's leaf";
    }
  }
  EXPECT_EQ(phases.size(),
            static_cast<size_t>(kMaxNodes < 64 ? kMaxNodes : 64));
}

// A placed region reserves its first chunk at its first growth, with or
// without the layer, binds it through the placed binder and records its
// kind; it never grows without a binder (placement not started).
int g_bound_id = -1;
bool RecordBind(void*, size_t, int id) {
  g_bound_id = id;
  return true;
}

TEST(PlacedRegion, GrowsOnFirstUseWithItsKind) {
  ResetForTest();  // the layer off
  SetPlacedBinder(nullptr);
  size_t actual = 0;
  EXPECT_EQ(RegionGrow(NamedRegion(5), kMiB, &actual), nullptr)
      << "no binder: placement has not started";
  SetPlacedBinder(RecordBind);
  void* p = RegionGrow(NamedRegion(5), kMiB, &actual);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(actual, kCommitGranule);
  EXPECT_EQ(g_bound_id, NamedRegion(5));
  static_cast<char*>(p)[0] = 1;  // committed
  EXPECT_EQ(OwnerOf(p).kind, MemoryKind::kNamed);
  EXPECT_EQ(OwnerOf(p).node, 5);
  void* q = RegionGrow(kInterleavedRegion, 3 * kMiB, &actual);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(actual, 2 * kCommitGranule);
  EXPECT_EQ(g_bound_id, kInterleavedRegion);
  EXPECT_EQ(OwnerOf(q).kind, MemoryKind::kInterleaved);
  RegionStats stats;
  ASSERT_TRUE(GetRegionStats(kInterleavedRegion, &stats));
  EXPECT_EQ(stats.committed, 2 * kCommitGranule);
  EXPECT_FALSE(GetRegionStats(NamedRegion(6), &stats)) << "never used";
  SetPlacedBinder(nullptr);
}

// Lines of /proc/self/maps that overlap [begin, end).
int MappingsIn(uintptr_t begin, uintptr_t end) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) {
    unsigned long lo, hi;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2) continue;
    if (lo < end && hi > begin) ++n;
  }
  return n;
}

// The layer forced on over this machine's real topology (one node, so real
// mbind calls): many growths and several reservations leave exactly two
// mappings, one read-write and one reserved, and one mbind per reservation
// under TCMALLOC_NUMA_POLICY=preferred.
TEST(RegionGrow, TwoMappingsAndOneBindPerReservation) {
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}, {"TCMALLOC_NUMA_POLICY", "preferred"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  RegionStats before;
  ASSERT_TRUE(GetRegionStats(0, &before));
  const uint64_t binds_before = MbindCalls();

  uintptr_t expected = before.begin + before.committed;
  size_t grown = 0;
  // 300 MiB in 1 MiB asks: past the 64 and 128 MiB reservations.
  for (int i = 0; i < 300; ++i) {
    size_t actual = 0;
    void* p = GrowRegion(0, kMiB, &actual);
    ASSERT_NE(p, nullptr) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p), expected);
    EXPECT_EQ(actual, kCommitGranule);
    static_cast<char*>(p)[0] = 1;  // committed: writable
    expected += actual;
    grown += actual;
  }
  RegionStats after;
  ASSERT_TRUE(GetRegionStats(0, &after));
  EXPECT_EQ(after.committed, before.committed + grown);
  EXPECT_GE(after.reserved, after.committed);
  EXPECT_EQ(MappingsIn(after.begin, after.end), 2);
  // 64 MiB at Init, then 128, 256 and 512 MiB cover 600+ MiB of growth.
  EXPECT_LE(MbindCalls() - binds_before, 3u);
  EXPECT_GE(MbindCalls() - binds_before, 1u);
  EXPECT_EQ(MbindFailures(), 0u);
  int mode = -1;
  unsigned long mask = 0;
  ASSERT_EQ(syscall(SYS_get_mempolicy, &mode, &mask, 64,
                    reinterpret_cast<void*>(after.begin), MPOL_F_ADDR),
            0);
  EXPECT_NE(mode, MPOL_DEFAULT) << "the region is bound";
  // Every reservation is node 0's memory for the owner function, and only
  // what was reserved.
  EXPECT_EQ(OwnerOf(after.begin).kind, MemoryKind::kNode);
  EXPECT_EQ(OwnerOf(expected - 1).kind, MemoryKind::kNode);
  EXPECT_EQ(OwnerOf(after.begin + after.reserved - 1).kind, MemoryKind::kNode);
  EXPECT_EQ(OwnerOf(after.begin + after.reserved).kind, MemoryKind::kUnplaced);
  EXPECT_EQ(OwnerOf(after.begin - 1).kind, MemoryKind::kUnplaced);
}

// The default, `local`: a CPU node's region is never bound, however far it
// grows; its pages land where they are first written.
TEST(RegionGrow, LocalLeavesCpuNodesRegionsUnbound) {
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  ASSERT_EQ(Policy(), BindPolicy::kLocal);
  RegionStats before;
  ASSERT_TRUE(GetRegionStats(0, &before));
  const uint64_t binds_before = MbindCalls();
  for (int i = 0; i < 100; ++i) {
    size_t actual = 0;
    ASSERT_NE(GrowRegion(0, 4 * kMiB, &actual), nullptr) << i;
  }
  RegionStats after;
  ASSERT_TRUE(GetRegionStats(0, &after));
  EXPECT_GT(after.reserved, before.reserved) << "a new reservation was made";
  EXPECT_EQ(MbindCalls(), binds_before);
  int mode = -1;
  unsigned long mask = 0;
  // The newest reservation (an earlier test of this process may have bound
  // the older ones).
  const uintptr_t newest = after.begin + after.reserved - 1;
  ASSERT_EQ(syscall(SYS_get_mempolicy, &mode, &mask, 64,
                    reinterpret_cast<void*>(newest), MPOL_F_ADDR),
            0);
  EXPECT_EQ(mode, MPOL_DEFAULT) << "the region is not bound";
}

// A request no window can hold fails cleanly, without counting a failure; the
// region keeps working.
TEST(RegionGrow, ImpossibleRequestFailsCleanly) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  const uint64_t failures = RegionFailures();
  size_t actual = 0;
  EXPECT_EQ(GrowRegion(1, size_t{2} << 40, &actual), nullptr);
  EXPECT_EQ(RegionFailures(), failures);
  EXPECT_NE(GrowRegion(1, kMiB, &actual), nullptr);
  EXPECT_EQ(GrowRegion(2, kMiB, &actual), nullptr) << "no such node";
}

// Region 1's committed bytes and holes, for the tests below.
RegionStats Region1() {
  RegionStats stats{};
  EXPECT_TRUE(GetRegionStats(1, &stats));
  return stats;
}

// Ranges given back become holes: the lowest one that fits is committed
// again first, neighbours merge, and a region whose holes are all filled is
// two mappings again.
TEST(RegionReturn, HolesAreFilledFirstAndMerge) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  constexpr size_t kG = kCommitGranule;
  uintptr_t a[5];
  for (uintptr_t& p : a) {
    size_t actual = 0;
    p = reinterpret_cast<uintptr_t>(GrowRegion(1, kG, &actual));
    ASSERT_NE(p, 0u);
    ASSERT_EQ(actual, kG);
    memset(reinterpret_cast<void*>(p), 1, kG);
  }
  const RegionStats start = Region1();
  ASSERT_EQ(start.holes, 0);
  ASSERT_EQ(MappingsIn(start.begin, start.end), 2);

  ASSERT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[1]), kG));
  EXPECT_EQ(Region1().holes, 1);
  EXPECT_EQ(Region1().committed, start.committed - kG);
  EXPECT_EQ(MappingsIn(start.begin, start.end), 4) << "rw, hole, rw, reserved";
  ASSERT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[2]), kG));
  EXPECT_EQ(Region1().holes, 1) << "a[1] and a[2] merge";
  EXPECT_EQ(Region1().committed, start.committed - 2 * kG);

  size_t actual = 0;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(GrowRegion(1, kG, &actual)), a[1]);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(GrowRegion(1, kG, &actual)), a[2]);
  memset(reinterpret_cast<void*>(a[1]), 2, 2 * kG);  // writable again
  EXPECT_EQ(Region1().holes, 0);
  EXPECT_EQ(Region1().committed, start.committed);
  EXPECT_EQ(MappingsIn(start.begin, start.end), 2);

  // The last range just shrinks the committed part; growth takes it back.
  ASSERT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[4]), kG));
  EXPECT_EQ(Region1().holes, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(GrowRegion(1, kG, &actual)), a[4]);
  EXPECT_EQ(MappingsIn(start.begin, start.end), 2);
}

// What the region cannot take back it refuses, changing nothing: another
// node's memory, memory never committed, a range not on kernel page
// boundaries, one already given back, and a hole beyond kMaxHoles.
TEST(RegionReturn, RefusesWhatItCannotTake) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  constexpr size_t kG = kCommitGranule;
  constexpr int kRanges = 2 * kMaxHoles + 3;
  uintptr_t a[kRanges];
  for (uintptr_t& p : a) {
    size_t actual = 0;
    p = reinterpret_cast<uintptr_t>(GrowRegion(1, kG, &actual));
    ASSERT_NE(p, 0u);
  }
  const RegionStats start = Region1();
  const size_t page = getpagesize();
  void* const first = reinterpret_cast<void*>(a[0]);
  EXPECT_FALSE(ShrinkRegion(0, first, kG)) << "node 1's memory";
  EXPECT_FALSE(ShrinkRegion(
      1, reinterpret_cast<void*>(start.begin + start.committed + kG), kG))
      << "not committed";
  EXPECT_FALSE(ShrinkRegion(1, reinterpret_cast<void*>(a[0] + 1), page));
  EXPECT_FALSE(ShrinkRegion(1, first, page + 1));
  EXPECT_FALSE(ShrinkRegion(1, first, 0));
  EXPECT_EQ(Region1().committed, start.committed);

  // Every other granule: kMaxHoles holes that cannot merge, then one more.
  for (int i = 0; i < kMaxHoles; ++i) {
    ASSERT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[2 * i]), kG)) << i;
  }
  EXPECT_EQ(Region1().holes, kMaxHoles);
  EXPECT_FALSE(ShrinkRegion(1, reinterpret_cast<void*>(a[2 * kMaxHoles]), kG));
  EXPECT_FALSE(ShrinkRegion(1, first, kG)) << "already a hole";
  EXPECT_EQ(Region1().committed, start.committed - kMaxHoles * kG);
  EXPECT_LE(MappingsIn(start.begin, start.end), 2 + 2 * kMaxHoles);
  // Filling the gap between two holes merges them, and frees an entry.
  ASSERT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[1]), kG));
  EXPECT_EQ(Region1().holes, kMaxHoles - 1);
  EXPECT_TRUE(ShrinkRegion(1, reinterpret_cast<void*>(a[2 * kMaxHoles]), kG));
}

// `ulimit -v` too small for the first reservations: Init says so in one line
// and leaves the layer off (vanilla), with nothing reserved.
TEST(ReserveRegions, AddressSpaceLimitLeavesTheLayerOff) {
  pid_t pid = fork();
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max =
        static_cast<rlim_t>(pages) * getpagesize() + 32 * kMiB;
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(10);
    SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "4"}});
    const std::string err = numa_test::CaptureStderr([] { Init(FakeGetenv); });
    if (Active()) _exit(11);
    if (RegionFailures() == 0) _exit(12);
    if (err.find("cannot reserve the NUMA address region") ==
            std::string::npos ||
        err.find("stays off") == std::string::npos) {
      _exit(13);
    }
    if (std::count(err.begin(), err.end(), '\n') != 1) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
