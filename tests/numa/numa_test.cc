// The numa.h functions: inactive states, the fake topology, and BindRange
// against this machine's real kernel.
#include "numa/numa.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "numa/counters.h"
#include "numa/mempolicy.h"
#include "numa/small_objects.h"
#include "numa/topology.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"
#include "tests/numa/mapping.h"
#include "tests/numa/stderr_capture.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::Mapping;
using numa_test::PolicyAt;

using numa_test::FakeGetenv;
using numa_test::SetFakeEnv;
using numa_test::WriteFakeSysfs;

constexpr uint64_t kAll = ~uint64_t{0};

std::vector<int> Fallback(int node) {
  int out[kMaxNodes];
  int n = LendersOf(node, Borrowed::kPages, out);
  return std::vector<int>(out, out + n);
}

std::string TwoNodeTree() {
  return WriteFakeSysfs("numa-two",
                        {{0, "0", "10 21", 100}, {1, "1", "21 10", 100}});
}

// A page-aligned, untouched anonymous mapping, unmapped at scope exit.

class NumaTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetForTest(); }
  void TearDown() override { ResetForTest(); }
};

TEST_F(NumaTest, BeforeInitEverythingIsNodeZero) {
  EXPECT_FALSE(Active());
  EXPECT_EQ(NumNodes(), 1);
  EXPECT_EQ(CurrentNode(), 0);
  EXPECT_TRUE(NodeOfKernelId(0) >= 0);
  EXPECT_FALSE(NodeOfKernelId(1) >= 0);
  EXPECT_EQ(Fallback(0), std::vector<int>{});
  Mapping m(1 << 16);
  EXPECT_TRUE(BindRange(m.get(), m.size(), 0));
  EXPECT_EQ(MbindCalls(), 0u);
  EXPECT_FALSE(FakeTopology());
  EXPECT_FALSE(StatsAtExit());
}

// The same two-node tree is active under auto and inactive under "0".
TEST_F(NumaTest, OffIsInactiveEvenWithTwoNodes) {
  const std::string root = TwoNodeTree();
  SetFakeEnv({});
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());  // control
  EXPECT_EQ(NumNodes(), 2);

  SetFakeEnv({{"TCMALLOC_NUMA", "0"},
              {"TCMALLOC_NUMA_STATS", "1"},
              {"TCMALLOC_NUMA_FAKE_NODES", "8"}});
  InitForTest(root.c_str(), kAll, FakeGetenv);
  EXPECT_FALSE(Active());
  EXPECT_FALSE(FakeTopology());
  EXPECT_FALSE(StatsAtExit());
  EXPECT_EQ(NumNodes(), 1);
  EXPECT_EQ(CurrentNode(), 0);
  EXPECT_FALSE(NodeOfKernelId(1) >= 0);
  Mapping m(1 << 16);
  EXPECT_TRUE(BindRange(m.get(), m.size(), 1));
  EXPECT_EQ(MbindCalls(), 0u);
}

// auto needs two allowed nodes; "1" forces the layer on with one.
TEST_F(NumaTest, AutoNeedsTwoNodesForceDoesNot) {
  const std::string root = TwoNodeTree();
  SetFakeEnv({{"TCMALLOC_NUMA", "auto"}});
  InitForTest(root.c_str(), 0b01, FakeGetenv);
  EXPECT_FALSE(Active());
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  InitForTest(root.c_str(), 0b01, FakeGetenv);
  EXPECT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 1);
  EXPECT_FALSE(NodeOfKernelId(1) >= 0);
  // Both CPUs, including node 1's, are served by node 0.
  EXPECT_EQ(CurrentNode(), 0);
}

// The thread's memory policy (numactl) is honoured: --membind narrows the
// nodes, --interleave turns auto off, and "1" overrides interleave.
TEST_F(NumaTest, TaskPolicyIsHonoured) {
  const std::string root =
      WriteFakeSysfs("numa-three", {{0, "0", "10 21 21", 100},
                                    {1, "1", "21 10 21", 100},
                                    {2, "2", "21 21 10", 100}});
  SetFakeEnv({});
  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_DEFAULT, 0);
  ASSERT_TRUE(Active());  // control
  EXPECT_EQ(NumNodes(), 3);

  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_BIND, 0b110);
  ASSERT_TRUE(Active());
  EXPECT_FALSE(NodeOfKernelId(0) >= 0);
  EXPECT_TRUE(NodeOfKernelId(1) >= 0);
  EXPECT_TRUE(NodeOfKernelId(2) >= 0);
  EXPECT_EQ(NumNodes(), 2);
  EXPECT_NE(KernelId(CurrentNode()), 0);  // node 0 is not allowed

  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_BIND, 0b001);
  EXPECT_FALSE(Active());  // one node left

  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_INTERLEAVE, 0b111);
  EXPECT_FALSE(Active());
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_INTERLEAVE, 0b111);
  EXPECT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 3);
}

// Issue 16: under numactl --membind=0,2 every binding keeps to {0,2}. Init
// records the task policy and BindRange asks DecideBinding; checked on this
// machine's kernel, which stores the set narrowed to its own nodes. `local`
// binds too: nodes 0 and 2 also serve the CPUs of nodes 1 and 3, whose
// threads would first-touch their memory on the wrong node of the set.
TEST_F(NumaTest, MembindKeepsBindingsInTheSet) {
  const std::string root =
      WriteFakeSysfs("numa-four-linear", {{0, "0", "10 20 30 40", 100},
                                          {1, "1", "20 10 20 30", 100},
                                          {2, "2", "30 20 10 20", 100},
                                          {3, "3", "40 30 20 10", 100}});
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  if (!(allowed & 1)) GTEST_SKIP() << "node 0 is not allowed here";
  for (const char* policy : {"local", "preferred", "bind"}) {
    SetFakeEnv({{"TCMALLOC_NUMA_POLICY", policy}});
    InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_BIND, 0b0101);
    ASSERT_TRUE(Active());
    EXPECT_FALSE(NodeOfKernelId(1) >= 0);
    EXPECT_FALSE(FirstTouchNode(0)) << policy;
    Mapping m(1 << 20);
    ASSERT_TRUE(BindRange(m.get(), m.size(), 0)) << MbindLastErrno();
    uint64_t nodes = 0;
    // Before the fix: MPOL_PREFERRED, whose fallback ignores the set.
    EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_BIND) << policy;
    EXPECT_EQ(nodes & ~uint64_t{0b0101}, 0u) << policy;
  }
}

// `local` with a membind set that leaves out no CPU's node binds nothing: the
// task's own MPOL_BIND places first-touched pages in the set.
TEST_F(NumaTest, LocalUnderMembindOfEveryCpuNodeBindsNothing) {
  const std::string root =
      WriteFakeSysfs("numa-two-cpus-one-memonly", {{0, "0", "10 20 30", 100},
                                                   {1, "1", "20 10 20", 100},
                                                   {2, "", "30 20 10", 100}});
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  if (!(allowed & 1)) GTEST_SKIP() << "node 0 is not allowed here";
  SetFakeEnv({});
  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_BIND, 0b011);
  ASSERT_TRUE(Active());
  EXPECT_TRUE(FirstTouchNode(0));
  EXPECT_TRUE(FirstTouchNode(1));
  const uint64_t calls = MbindCalls();
  Mapping m(1 << 20);
  EXPECT_TRUE(BindRange(m.get(), m.size(), 0));
  EXPECT_EQ(MbindCalls(), calls);
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_DEFAULT);
}

// Without membind, `preferred` is MPOL_PREFERRED to the one node.
TEST_F(NumaTest, PreferredWithoutMembindIsMpolPreferred) {
  const std::string root = TwoNodeTree();
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  if (!(allowed & 1)) GTEST_SKIP() << "node 0 is not allowed here";
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}, {"TCMALLOC_NUMA_POLICY", "preferred"}});
  for (int task : {MPOL_DEFAULT, MPOL_LOCAL, MPOL_INTERLEAVE, MPOL_PREFERRED}) {
    InitForTest(root.c_str(), kAll, FakeGetenv, task, 0b11);
    ASSERT_TRUE(Active());
    Mapping m(1 << 20);
    ASSERT_TRUE(BindRange(m.get(), m.size(), 0));
    uint64_t nodes = 0;
    EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_PREFERRED) << task;
    EXPECT_EQ(nodes, 1u) << task;
  }
}

// The default, `local`, leaves a CPU node's memory to first touch and binds a
// memory-only node's as `preferred` does: nobody runs there to touch it first.
// Kernel node 0 is the memory-only one here, so that the bind is real.
TEST_F(NumaTest, LocalBindsOnlyMemoryOnlyNodes) {
  const std::string root = WriteFakeSysfs(
      "numa-memonly-first", {{0, "", "10 21", 100}, {1, "0-1", "21 10", 100}});
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  if (!(allowed & 1)) GTEST_SKIP() << "node 0 is not allowed here";
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  InitForTest(root.c_str(), kAll, FakeGetenv, MPOL_DEFAULT, 0);
  ASSERT_TRUE(Active());
  ASSERT_EQ(Policy(), BindPolicy::kLocal);
  ASSERT_EQ(NumCpuNodes(), 1);
  ASSERT_EQ(KernelId(1), 0);  // CPU nodes come first
  EXPECT_TRUE(FirstTouchNode(0));
  EXPECT_FALSE(FirstTouchNode(1));

  Mapping cpu_node(1 << 20);
  const uint64_t calls = MbindCalls();
  EXPECT_TRUE(BindRange(cpu_node.get(), cpu_node.size(), 0));
  EXPECT_EQ(MbindCalls(), calls);
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(cpu_node.get(), &nodes), MPOL_DEFAULT);

  Mapping memory_only(1 << 20);
  EXPECT_TRUE(BindRange(memory_only.get(), memory_only.size(), 1));
  EXPECT_EQ(MbindCalls(), calls + 1);
  EXPECT_EQ(PolicyAt(memory_only.get(), &nodes), MPOL_PREFERRED);
  EXPECT_EQ(nodes, 1u);
}

TEST_F(NumaTest, KnobsAreReported) {
  const std::string root = TwoNodeTree();
  SetFakeEnv({{"TCMALLOC_NUMA_POLICY", "bind"}, {"TCMALLOC_NUMA_STATS", "1"}});
  InitForTest(root.c_str(), kAll, FakeGetenv);
  EXPECT_EQ(Policy(), BindPolicy::kBind);
  EXPECT_TRUE(StatsAtExit());
}

// Runs the calling thread on `cpu`; false if the cpuset does not allow it.
bool PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

TEST_F(NumaTest, FakeTopologyRoundRobinAndNeverBinds) {
  // `preferred`, which binds on a real topology (`local` binds no CPU node).
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "4"},
              {"TCMALLOC_NUMA_POLICY", "preferred"}});
  // The sysfs root must not matter: a fake topology reads nothing.
  InitForTest("/nonexistent", 0b1, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_TRUE(FakeTopology());
  EXPECT_EQ(NumNodes(), 4);
  for (int n = 0; n < 4; ++n) EXPECT_TRUE(NodeOfKernelId(n) >= 0);
  EXPECT_FALSE(NodeOfKernelId(4) >= 0);
  // Linear distances: from 1, nodes 0 and 2 tie at 20 (by id), 3 is at 30.
  EXPECT_EQ(Fallback(1), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(Fallback(3), (std::vector<int>{2, 1, 0}));

  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int checked = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &saved) || !PinTo(cpu)) continue;
    EXPECT_EQ(sched_getcpu(), cpu);
    EXPECT_EQ(CurrentNode(), cpu % 4) << "cpu " << cpu;
    ++checked;
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_GT(checked, 0);

  EXPECT_FALSE(FirstTouchNode(0)) << "no kernel node to ask about";
  Mapping m(1 << 16);
  const uint64_t skipped = BindSkipped();  // Init's regions were skipped too
  EXPECT_TRUE(BindRange(m.get(), m.size(), 3));
  EXPECT_TRUE(BindRange(m.get(), m.size(), 1));
  EXPECT_EQ(MbindCalls(), 0u);
  EXPECT_EQ(MbindFailures(), 0u);
  EXPECT_EQ(BindSkipped(), skipped + 2);
  uint64_t nodes;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_DEFAULT);  // really untouched
}

// The machine's own topology, forced on so that one node is enough.
class RealMachineTest : public NumaTest {
 protected:
  // A failure here must end the test: ASSERT_TRUE(InitReal(...)).
  [[nodiscard]] ::testing::AssertionResult InitReal(const char* policy) {
    SetFakeEnv({{"TCMALLOC_NUMA", "1"}, {"TCMALLOC_NUMA_POLICY", policy}});
    Init(FakeGetenv);
    if (!Active()) {
      return ::testing::AssertionFailure()
             << "sysfs or get_mempolicy unusable here";
    }
    if (!QueryAllowedMems(&allowed_) || allowed_ == 0) {
      return ::testing::AssertionFailure() << "no allowed node";
    }
    return ::testing::AssertionSuccess();
  }
  // A node the process does not have (nodes are dense, 0..NumNodes()-1).
  int ForbiddenNode() const { return NumNodes(); }
  uint64_t allowed_ = 0;
};

TEST_F(RealMachineTest, PreferredBindsAllowedNode) {
  ASSERT_TRUE(InitReal("preferred"));
  EXPECT_FALSE(FirstTouchNode(0));
  const int node = __builtin_ctzll(allowed_);
  EXPECT_TRUE(NodeOfKernelId(node) >= 0);
  Mapping m(1 << 20);
  ASSERT_TRUE(BindRange(m.get(), m.size(), node));
  EXPECT_EQ(MbindCalls(), 1u);
  EXPECT_EQ(MbindFailures(), 0u);
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_PREFERRED);
  EXPECT_EQ(nodes, uint64_t{1} << node);
}

TEST_F(RealMachineTest, BindPolicyUsesMpolBind) {
  ASSERT_TRUE(InitReal("bind"));
  const int node = __builtin_ctzll(allowed_);
  Mapping m(1 << 20);
  ASSERT_TRUE(BindRange(m.get(), m.size(), node));
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_BIND);
  EXPECT_EQ(nodes, uint64_t{1} << node);
  // The memory is usable afterwards.
  static_cast<char*>(m.get())[0] = 1;
}

TEST_F(RealMachineTest, LocalPolicyNeverCallsMbind) {
  ASSERT_TRUE(InitReal("local"));
  EXPECT_TRUE(FirstTouchNode(0));
  Mapping m(1 << 20);
  EXPECT_TRUE(BindRange(m.get(), m.size(), __builtin_ctzll(allowed_)));
  EXPECT_EQ(MbindCalls(), 0u);
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_DEFAULT);
}

TEST_F(RealMachineTest, ForbiddenNodeFailsCountedNotFatal) {
  ASSERT_TRUE(InitReal("preferred"));
  const int node = ForbiddenNode();
  ASSERT_LT(node, kMaxNodes);
  Mapping m(1 << 20);
  EXPECT_FALSE(BindRange(m.get(), m.size(), node));
  EXPECT_EQ(MbindCalls(), 1u);
  EXPECT_EQ(MbindFailures(), 1u);
  EXPECT_EQ(MbindLastErrno(), EINVAL);
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_DEFAULT);  // nothing changed

  // Node ids the kernel's mask cannot hold never reach it.
  EXPECT_FALSE(BindRange(m.get(), m.size(), -1));
  EXPECT_FALSE(BindRange(m.get(), m.size(), kMaxNodes));
  EXPECT_EQ(MbindFailures(), 3u);
  // A misaligned start is the kernel's EINVAL too.
  EXPECT_FALSE(BindRange(static_cast<char*>(m.get()) + 1, 4096,
                         __builtin_ctzll(allowed_)));
  EXPECT_EQ(MbindFailures(), 4u);
  // errno is the caller's, untouched by the failures.
  errno = 1234;
  BindRange(m.get(), m.size(), node);
  EXPECT_EQ(errno, 1234);
}

TEST_F(RealMachineTest, CurrentNodeIsTheCpusHome) {
  ASSERT_TRUE(InitReal("preferred"));
  const int node = CurrentNode();
  EXPECT_TRUE(NodeOfKernelId(node) >= 0) << node;
}

// Auto mode on the real machine: active exactly when >1 node is allowed.
TEST_F(NumaTest, AutoOnThisMachine) {
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  SetFakeEnv({});
  Init(FakeGetenv);
  EXPECT_EQ(Active(), __builtin_popcountll(allowed) > 1);
}

// Every node that serves CPUs gets its own small-object lists, up to
// kMaxCpuNodes (64: as many as fake nodes go); the fallback to one shared set
// exists only in TCMALLOC_SMALL_BUT_SLOW builds (8).
TEST_F(NumaTest, SmallObjectListsForEveryCpuNode) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "64"}});
  EXPECT_EQ(numa_test::CaptureStderr(
                [] { InitForTest("/nonexistent", 0b1, FakeGetenv); }),
            "");
  EXPECT_EQ(NumNodes(), 64);
  EXPECT_EQ(NumCpuNodes(), kMaxCpuNodes);
}

TEST_F(NumaTest, ListsBuiltAreWhatTheAllocatorRecorded) {
  // Introspection indexes central lists by this count: the layer's decision
  // (ListNodes) must not stand in for lists nobody built.
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "2"}});
  InitForTest("/nonexistent", 0b1, FakeGetenv);
  EXPECT_EQ(NumCpuNodes(), 2);
  EXPECT_EQ(NodesWithCentralLists(), 1);
  SetNodesWithCentralLists(NumCpuNodes());
  EXPECT_EQ(NodesWithCentralLists(), 2);
  InitForTest("/nonexistent", 0b1, FakeGetenv);
  EXPECT_EQ(NodesWithCentralLists(), 1);
}

TEST_F(NumaTest, CountersAdd) {
  InitForTest("/nonexistent", 0b1, FakeGetenv);
  const uint64_t before = CounterValue(Counter::kThreadMigrations);
  AddToCounter(Counter::kThreadMigrations, 3);
  EXPECT_EQ(CounterValue(Counter::kThreadMigrations), before + 3);
}

// Placement starts in any process: over the layer's nodes when it is on,
// over the machine's when it is off; placed regions exist only after it.
TEST_F(NumaTest, PlacementStartsWithOrWithoutTheLayer) {
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "3"}});
  InitForTest("/nonexistent", 0b1, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_FALSE(PlacementStarted());
  EXPECT_FALSE(HasRegion(NamedRegion(1)));
  EXPECT_EQ(PlacementNodes(), 0u);
  ASSERT_TRUE(StartPlacement());
  EXPECT_TRUE(PlacementStarted());
  EXPECT_EQ(PlacementNodes(), 0b111u) << "the layer's nodes";
  EXPECT_TRUE(HasRegion(NamedRegion(1)));
  EXPECT_TRUE(HasRegion(kInterleavedRegion));
  // Placed memory is never released by the first-touch reuse rule.
  EXPECT_FALSE(FirstTouchNode(NamedRegion(1)));
  EXPECT_FALSE(FirstTouchNode(kInterleavedRegion));
  EXPECT_TRUE(HasRegion(2));
  EXPECT_FALSE(HasRegion(3));

  ResetForTest();  // the layer off: this machine's nodes, read now
  EXPECT_FALSE(PlacementStarted());
  ASSERT_TRUE(StartPlacement());
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  EXPECT_NE(PlacementNodes(), 0u);
  EXPECT_EQ(PlacementNodes() & ~allowed, 0u) << "never outside the cpuset";
  EXPECT_FALSE(HasRegion(0)) << "no node regions while the layer is off";
}

// The layer off, a placed object's central list is its region's.
TEST_F(NumaTest, PlacedObjectsHaveTheirRegionsLists) {
  ResetForTest();
  const uintptr_t named2 =
      kNamedBase + 2 * kNamedPartSize + (uintptr_t{1} << 30);
  SetOwner(named2, 64 << 20, MemoryKind::kNamed, 2);
  EXPECT_EQ(ListRegionOf(reinterpret_cast<void*>(named2)), 0)
      << "before placement started, nothing is looked up";
  ASSERT_TRUE(StartPlacement());
  EXPECT_EQ(ListRegionOf(reinterpret_cast<void*>(named2)), NamedRegion(2));
  EXPECT_EQ(ListRegionOf(reinterpret_cast<void*>(uintptr_t{4096})), 0);
  ClearOwners();
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
