// What Init decides about the kernel's NUMA balancing (issue 34): the heaps
// check freed small-object spans for moved pages only where the kernel moves
// ours (kernel.numa_balancing bit 0, nodes left to first touch) and
// move_pages can see where they went, unless TCMALLOC_NUMA_BALANCING=ignore.
#include <errno.h>
#include <linux/mempolicy.h>

#include <string>

#include "gtest/gtest.h"
#include "numa/numa.h"
#include "numa/sparse_memory.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"
#include "tests/numa/stderr_capture.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::CaptureStderr;
using numa_test::FakeGetenv;
using numa_test::SetFakeEnv;
using numa_test::WriteFakeSysfs;
using numa_test::WriteFile;

// Two CPU nodes, and a fake "/" whose proc/sys/kernel/numa_balancing holds
// `balancing` (no file when empty).
struct Machine {
  std::string sysfs;
  std::string proc;
  Machine(const std::string& name, const std::string& balancing) {
    sysfs = WriteFakeSysfs(
        "coop-" + name, {{0, "0-1", "10 21", 100}, {1, "2-3", "21 10", 100}});
    proc = std::string(getenv("TEST_TMPDIR")) + "/coop-proc-" + name;
    WriteFile(proc + "/.keep", "");
    if (!balancing.empty()) {
      WriteFile(proc + "/proc/sys/kernel/numa_balancing", balancing + "\n");
    }
  }
  FakeKernel Kernel(int move_pages_errno = 0) const {
    FakeKernel k = {};
    k.sysfs_root = sysfs.c_str();
    k.proc_root = proc.c_str();
    k.allowed = 0x3;
    k.move_pages_errno = move_pages_errno;
    return k;
  }
};

class CooperationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResetForTest();
    SetFakeEnv({});
  }
  void TearDown() override { ResetForTest(); }

  Cooperation InitAndRead(const FakeKernel& k) {
    const std::string err =
        CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
    EXPECT_EQ(err, "");
    EXPECT_TRUE(Active());
    return BalancingCooperation();
  }
};

TEST_F(CooperationTest, KernelBalancingOnCooperates) {
  const Machine m("on", "1");
  EXPECT_EQ(InitAndRead(m.Kernel()), Cooperation::kCooperating);
  EXPECT_TRUE(CooperatesWithBalancing());
}

TEST_F(CooperationTest, TieringWithBalancingCooperates) {
  const Machine m("tiering", "3");
  EXPECT_EQ(InitAndRead(m.Kernel()), Cooperation::kCooperating);
}

// Controls: the kernel moves none of our pages.
TEST_F(CooperationTest, KernelBalancingOffOrMissingDoesNothing) {
  for (const char* value : {"0", "2", ""}) {
    ResetForTest();
    const Machine m(std::string("off-") + value, value);
    EXPECT_EQ(InitAndRead(m.Kernel()), Cooperation::kNone) << value;
    EXPECT_FALSE(CooperatesWithBalancing()) << value;
  }
}

TEST_F(CooperationTest, BoundNodesAreNotChecked) {
  SetFakeEnv({{"TCMALLOC_NUMA_POLICY", "preferred"}});
  const Machine m("bound", "1");
  EXPECT_EQ(InitAndRead(m.Kernel()), Cooperation::kNone)
      << "bound memory stays on its node whatever the kernel balances";
}

TEST_F(CooperationTest, IgnoreKnob) {
  SetFakeEnv({{"TCMALLOC_NUMA_BALANCING", "ignore"}});
  const Machine m("ignore", "1");
  EXPECT_EQ(InitAndRead(m.Kernel()), Cooperation::kUnchecked);
  EXPECT_FALSE(CooperatesWithBalancing());
}

TEST_F(CooperationTest, MovePagesRefusedIsBlind) {
  const Machine m("blind", "1");
  EXPECT_EQ(InitAndRead(m.Kernel(EPERM)), Cooperation::kUnchecked);
  EXPECT_FALSE(CooperatesWithBalancing());
}

TEST_F(CooperationTest, FakeTopologyNeverCooperates) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  const Machine m("fake", "1");
  InitWithKernelForTest(m.Kernel(), FakeGetenv);
  EXPECT_EQ(BalancingCooperation(), Cooperation::kNone);
}

// The allocator's metadata mappings are bound as they are made, so that the
// kernel's balancing leaves them where their first writer put them: only
// where the kernel moves pages, mbind is allowed and the knob is not
// `ignore`, whatever the heaps' own policy.
class MetadataPlacementTest : public CooperationTest {
 protected:
  bool StaysPut(const FakeKernel& k) {
    ResetForTest();
    InitWithKernelForTest(k, FakeGetenv);
    return Active() && MetadataStaysPut();
  }
};

TEST_F(MetadataPlacementTest, KeptWhereTheKernelBalances) {
  const Machine m("meta-on", "1");
  ASSERT_TRUE(StaysPut(m.Kernel()));
  // A fresh mapping (larger than a step) is bound once, before any use.
  const uint64_t before = MetadataBinds();
  ASSERT_NE(SparseAlloc(size_t{64} << 20), nullptr);
  EXPECT_EQ(MetadataBinds(), before + 1);
  SetFakeEnv({{"TCMALLOC_NUMA_POLICY", "preferred"}});
  EXPECT_TRUE(StaysPut(m.Kernel()))
      << "bound heaps, but metadata is first-touch placed all the same";
}

TEST_F(MetadataPlacementTest, LeftToTheKernelOtherwise) {
  const Machine off("meta-off", "0"), on("meta-on2", "1");
  EXPECT_FALSE(StaysPut(off.Kernel())) << "the kernel moves nothing";
  FakeKernel refused = on.Kernel();
  refused.mbind_errno = EPERM;
  EXPECT_FALSE(StaysPut(refused)) << "a container's seccomp profile";
  SetFakeEnv({{"TCMALLOC_NUMA_BALANCING", "ignore"}});
  EXPECT_FALSE(StaysPut(on.Kernel()));
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  EXPECT_FALSE(StaysPut(on.Kernel())) << "fake nodes never bind";
  SetFakeEnv({});
  FakeKernel interleaved = on.Kernel();
  interleaved.task_policy = MPOL_INTERLEAVE;
  interleaved.task_policy_nodes = 0x3;
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  EXPECT_FALSE(StaysPut(interleaved))
      << "an explicit placement the heaps override is left to the metadata";
  EXPECT_TRUE(Active()) << "TCMALLOC_NUMA=1 runs the layer under it";
  ResetForTest();
  const uint64_t before = MetadataBinds();
  ASSERT_NE(SparseAlloc(size_t{64} << 20), nullptr);
  EXPECT_EQ(MetadataBinds(), before) << "off: no bind";
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
