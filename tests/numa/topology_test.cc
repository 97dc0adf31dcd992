// Topology from fake sysfs trees, through the layer's public functions
// (InitForTest with TCMALLOC_NUMA=1 so that even one usable node is active)
// and through the Topology tables.
#include "numa/topology.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "numa/numa.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::FakeGetenv;
using numa_test::FakeNode;
using numa_test::FakeSysfsOptions;
using numa_test::SetFakeEnv;
using numa_test::WriteFakeSysfs;

constexpr uint64_t kAll = ~uint64_t{0};

std::vector<int> Fallback(int node) {
  int out[kMaxNodes];
  int n = LendersOf(node, Borrowed::kPages, out);
  return std::vector<int>(out, out + n);
}

// Reads and finishes a topology: ASSERT_TRUE(Load(...)), so that a failure
// ends the test.
[[nodiscard]] ::testing::AssertionResult Load(const std::string& root,
                                              uint64_t allowed, Topology* t) {
  if (!ReadSysfsTopology(root.c_str(), allowed, t)) {
    return ::testing::AssertionFailure() << "ReadSysfsTopology " << root;
  }
  if (!FinishTopology(t)) {
    return ::testing::AssertionFailure() << "FinishTopology " << root;
  }
  return ::testing::AssertionSuccess();
}

class TopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
    ResetForTest();
  }
  void TearDown() override { ResetForTest(); }
  Topology t_;  // ~12 KiB: a member, not a stack variable
};

TEST_F(TopologyTest, TwoNodes) {
  std::string root = WriteFakeSysfs(
      "two", {{0, "0-1", "10 21", 1000}, {1, "2-3", "21 10", 1000}});
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.online, 0b11u);
  EXPECT_EQ(t_.memory, 0b11u);
  EXPECT_EQ(t_.usable, 0b11u);
  EXPECT_EQ(t_.cpu_node[0], 0);
  EXPECT_EQ(t_.cpu_node[1], 0);
  EXPECT_EQ(t_.cpu_node[2], 1);
  EXPECT_EQ(t_.cpu_node[3], 1);
  // CPUs not listed anywhere get the default home (lowest home node).
  EXPECT_EQ(t_.cpu_node[4], 0);
  EXPECT_EQ(t_.distance[0][1], 21);
  EXPECT_EQ(t_.proxies, 0u) << "each node serves its own CPUs only";

  InitForTest(root.c_str(), kAll, FakeGetenv);
  EXPECT_TRUE(Active());
  EXPECT_FALSE(FakeTopology());
  EXPECT_EQ(NumNodes(), 2);
  EXPECT_TRUE(NodeOfKernelId(0) >= 0);
  EXPECT_TRUE(NodeOfKernelId(1) >= 0);
  EXPECT_FALSE(NodeOfKernelId(2) >= 0);
  EXPECT_EQ(Fallback(0), std::vector<int>{1});
  EXPECT_EQ(Fallback(1), std::vector<int>{0});
}

// Asymmetric, non-monotonic distances: a fallback order sorted by id, by the
// wrong row/column, or with ties broken the wrong way all fail here.
TEST_F(TopologyTest, FallbackNearestFirstTiesById) {
  std::string root = WriteFakeSysfs("order", {
                                                 {0, "0", "10 30 20 40", 100},
                                                 {1, "1", "20 10 20 30", 100},
                                                 {2, "2", "40 12 10 12", 100},
                                                 {3, "3", "20 20 20 10", 100},
                                             });
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(Fallback(0), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(Fallback(1), (std::vector<int>{0, 2, 3}));  // 0 and 2 tie at 20
  EXPECT_EQ(Fallback(2), (std::vector<int>{1, 3, 0}));  // 1 and 3 tie at 12
  EXPECT_EQ(Fallback(3), (std::vector<int>{0, 1, 2}));  // three-way tie
  int out[kMaxNodes];
  EXPECT_EQ(LendersOf(-1, Borrowed::kPages, out), 0);
  EXPECT_EQ(LendersOf(kMaxNodes, Borrowed::kPages, out), 0);
}

TEST_F(TopologyTest, FourNodesLinearDistances) {
  std::string root = WriteFakeSysfs("four", {
                                                {0, "0-1", "10 20 30 40", 100},
                                                {1, "2-3", "20 10 20 30", 100},
                                                {2, "4-5", "30 20 10 20", 100},
                                                {3, "6-7", "40 30 20 10", 100},
                                            });
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 4);
  EXPECT_EQ(Fallback(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Fallback(2), (std::vector<int>{1, 3, 0}));
  EXPECT_EQ(Fallback(3), (std::vector<int>{2, 1, 0}));
  ASSERT_TRUE(Load(root, kAll, &t_));
  for (int cpu = 0; cpu < 8; ++cpu) EXPECT_EQ(t_.cpu_node[cpu], cpu / 2);
}

// Node ids {0, 2, 5}: the distance file has one column per ONLINE node, so
// column 1 is node 2 and column 2 is node 5.
TEST_F(TopologyTest, SparseNodeIds) {
  std::string root = WriteFakeSysfs("sparse", {
                                                  {0, "0-1", "10 21 31", 100},
                                                  {2, "2-3", "21 10 17", 100},
                                                  {5, "4", "31 17 10", 100},
                                              });
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.online, 0b100101u);
  EXPECT_EQ(t_.distance[0][2], 21);
  EXPECT_EQ(t_.distance[0][5], 31);
  EXPECT_EQ(t_.distance[2][5], 17);
  EXPECT_EQ(t_.distance[0][1], 0);  // node 1 does not exist
  EXPECT_EQ(t_.cpu_node[2], 2);
  EXPECT_EQ(t_.cpu_node[4], 5);

  // Nodes are dense: kernel nodes 0, 2 and 5 are nodes 0, 1 and 2.
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 3);
  EXPECT_FALSE(NodeOfKernelId(1) >= 0);
  EXPECT_TRUE(NodeOfKernelId(5) >= 0);
  EXPECT_EQ(KernelId(1), 2);
  EXPECT_EQ(KernelId(2), 5);
  EXPECT_EQ(Fallback(0), (std::vector<int>{1, 2}));
  EXPECT_EQ(Fallback(2), (std::vector<int>{1, 0}));
}

// Node 1 has CPUs 2-3 but no memory; its nearest memory node is 2 (higher
// id, nearer), so a "lowest id" or "same id" shortcut fails.
TEST_F(TopologyTest, CpuOnlyNodeMapsToNearestMemoryNode) {
  std::string root = WriteFakeSysfs("cpuonly", {
                                                   {0, "0-1", "10 25 30", 100},
                                                   {1, "2-3", "25 10 15", 0},
                                                   {2, "4-5", "30 15 10", 100},
                                               });
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.memory, 0b101u);
  EXPECT_EQ(t_.usable, 0b101u);
  EXPECT_EQ(t_.cpu_node[1], 0);
  EXPECT_EQ(t_.cpu_node[2], 2);
  EXPECT_EQ(t_.cpu_node[3], 2);
  EXPECT_EQ(t_.cpu_node[4], 2);
  EXPECT_EQ(t_.proxies, 0b100u) << "node 2 serves the CPU-only node's CPUs";

  // Fallback order of the CPU-only node itself is still defined.
  EXPECT_EQ(t_.fallback_len[1], 2);
  EXPECT_EQ(t_.fallback[1][0], 2);
  EXPECT_EQ(t_.fallback[1][1], 0);

  // The CPU-only node is no node of ours: kernel nodes 0 and 2 are nodes 0, 1.
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_FALSE(NodeOfKernelId(1) >= 0);
  EXPECT_EQ(NumNodes(), 2);
  EXPECT_EQ(KernelId(1), 2);
  EXPECT_EQ(NodeOfKernelId(1), -1);
  EXPECT_EQ(Fallback(0), std::vector<int>{1});
}

// The same tree without has_memory: memory comes from each meminfo.
TEST_F(TopologyTest, MeminfoWhenHasMemoryIsAbsent) {
  FakeSysfsOptions no_has_memory;
  no_has_memory.write_has_memory = false;
  std::string root = WriteFakeSysfs("meminfo",
                                    {
                                        {0, "0-1", "10 25 30", 100},
                                        {1, "2-3", "25 10 15", 0},
                                        {2, "4-5", "30 15 10", 100},
                                    },
                                    no_has_memory);
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.memory, 0b101u);
  EXPECT_EQ(t_.cpu_node[2], 2);
}

// Node 1 is memory only (CXL/HBM-like): never a home, but a fallback.
TEST_F(TopologyTest, MemoryOnlyNodeIsFallbackNeverHome) {
  std::string root = WriteFakeSysfs(
      "memonly", {{0, "0-3", "10 14", 100}, {1, "", "14 10", 100}});
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.with_cpus, 0b01u);
  EXPECT_EQ(t_.usable, 0b11u);
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) ASSERT_EQ(t_.cpu_node[cpu], 0);
  EXPECT_EQ(t_.proxies, 0u) << "a memory-only node has no CPUs to serve";

  // auto: every thread runs on node 0, so the layer stays off (vanilla).
  SetFakeEnv({});
  InitForTest(root.c_str(), kAll, FakeGetenv);
  EXPECT_FALSE(Active());

  // Forced on: node 1 is a heap and a fallback, never a home, and gets no
  // small-object lists.
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 2);
  EXPECT_EQ(NumCpuNodes(), 1);
  EXPECT_TRUE(NodeOfKernelId(1) >= 0);
  EXPECT_EQ(Fallback(0), std::vector<int>{1});
  EXPECT_EQ(CurrentNode(), 0);
}

// Two CPU nodes and two memory-only nodes: on in auto, with exactly two list
// nodes (nodes 0 and 1); the memory-only nodes are nodes 2 and 3.
TEST_F(TopologyTest, TwoCpuNodesAndTwoMemoryOnlyNodes) {
  std::string root = WriteFakeSysfs("2cpu2mem", {{0, "0-1", "10 20 14 24", 100},
                                                 {1, "2-3", "20 10 24 14", 100},
                                                 {2, "", "14 24 10 28", 100},
                                                 {3, "", "24 14 28 10", 100}});
  SetFakeEnv({});  // auto
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 4);
  EXPECT_EQ(NumCpuNodes(), 2);
  EXPECT_EQ(KernelId(2), 2);
  EXPECT_EQ(Fallback(0), (std::vector<int>{2, 1, 3}));
}

// A CPU-only node whose nearest memory is a memory-only node: its CPUs are
// still served by the nearest node that has CPUs (node 0), not by node 2.
TEST_F(TopologyTest, CpuOnlyNodeNeverServedByMemoryOnlyNode) {
  std::string root =
      WriteFakeSysfs("cpuonly-memonly", {{0, "0-1", "10 20 30", 100},
                                         {1, "2-3", "20 10 12", 0},
                                         {2, "", "30 12 10", 100}});
  ASSERT_TRUE(Load(root, kAll, &t_));
  EXPECT_EQ(t_.usable, 0b101u);
  EXPECT_EQ(t_.cpu_node[2], 0);
  EXPECT_EQ(t_.cpu_node[3], 0);
  EXPECT_EQ(t_.fallback_len[1], 2);
  EXPECT_EQ(t_.fallback[1][0], 2);  // but it is node 1's first fallback
}

// If the process may only use the memory-only node, it must be the home.
TEST_F(TopologyTest, MemoryOnlyNodeIsHomeWhenItIsAllThereIs) {
  std::string root = WriteFakeSysfs(
      "memonly2", {{0, "0-3", "10 14", 100}, {1, "", "14 10", 100}});
  ASSERT_TRUE(Load(root, uint64_t{1} << 1, &t_));
  EXPECT_EQ(t_.usable, 0b10u);
  EXPECT_EQ(t_.cpu_node[0], 1);
  EXPECT_EQ(t_.default_node, 1);
}

// A cpuset allowing nodes {1, 3}: nodes 0 and 2 keep their CPUs, which are
// served by the nearest allowed node.
TEST_F(TopologyTest, CpusetRestrictedAllowedMask) {
  std::string root = WriteFakeSysfs("cpuset", {
                                                  {0, "0", "10 20 30 25", 100},
                                                  {1, "1", "20 10 20 30", 100},
                                                  {2, "2", "30 20 10 15", 100},
                                                  {3, "3", "25 30 15 10", 100},
                                              });
  const uint64_t allowed = 0b1010;
  ASSERT_TRUE(Load(root, allowed, &t_));
  EXPECT_EQ(t_.usable, allowed);
  EXPECT_EQ(t_.cpu_node[0], 1);  // 20 to node 1, 25 to node 3
  EXPECT_EQ(t_.cpu_node[1], 1);
  EXPECT_EQ(t_.cpu_node[2], 3);  // 20 to node 1, 15 to node 3
  EXPECT_EQ(t_.cpu_node[3], 3);
  EXPECT_EQ(t_.proxies, 0b1010u);

  // Nodes are dense: kernel nodes 1 and 3 are nodes 0 and 1.
  InitForTest(root.c_str(), allowed, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 2);
  EXPECT_FALSE(NodeOfKernelId(0) >= 0);
  EXPECT_FALSE(NodeOfKernelId(2) >= 0);
  EXPECT_EQ(KernelId(0), 1);
  EXPECT_EQ(KernelId(1), 3);
  EXPECT_EQ(Fallback(0), std::vector<int>{1});
  EXPECT_EQ(Fallback(1), std::vector<int>{0});
}

// Any unreadable or malformed file leaves the layer inactive (vanilla).
TEST_F(TopologyTest, ErrorsFallBackToOneNode) {
  const std::vector<FakeNode> good = {{0, "0", "10 20", 100},
                                      {1, "1", "20 10", 100}};
  struct Case {
    const char* name;
    std::vector<FakeNode> nodes;
    FakeSysfsOptions options;
  };
  FakeSysfsOptions extra_online;
  extra_online.online = "0-2";  // node2/ does not exist
  const Case cases[] = {
      {"badcpulist", {{0, "0-", "10 20", 100}, {1, "1", "20 10", 100}}, {}},
      {"shortrow", {{0, "0", "10", 100}, {1, "1", "20 10", 100}}, {}},
      {"longrow", {{0, "0", "10 20 30", 100}, {1, "1", "20 10", 100}}, {}},
      {"zerodist", {{0, "0", "10 0", 100}, {1, "1", "20 10", 100}}, {}},
      {"bigdist", {{0, "0", "10 256", 100}, {1, "1", "20 10", 100}}, {}},
      {"dupcpu", {{0, "0-1", "10 20", 100}, {1, "1", "20 10", 100}}, {}},
      {"missingnode", good, extra_online},
  };
  // The control: the good tree is active, so each failure below is caused
  // by its one defect.
  std::string root = WriteFakeSysfs("good", good);
  InitForTest(root.c_str(), kAll, FakeGetenv);
  ASSERT_TRUE(Active());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    root = WriteFakeSysfs(c.name, c.nodes, c.options);
    EXPECT_FALSE(ReadSysfsTopology(root.c_str(), kAll, &t_));
    InitForTest(root.c_str(), kAll, FakeGetenv);
    EXPECT_FALSE(Active());
    EXPECT_EQ(NumNodes(), 1);
    EXPECT_EQ(CurrentNode(), 0);
  }
  InitForTest("/nonexistent/sysfs", kAll, FakeGetenv);
  EXPECT_FALSE(Active());
}

TEST_F(TopologyTest, NoUsableNodeIsInactive) {
  std::string root = WriteFakeSysfs(
      "nousable", {{0, "0", "10 20", 100}, {1, "1", "20 10", 100}});
  InitForTest(root.c_str(), uint64_t{1} << 7, FakeGetenv);
  EXPECT_FALSE(Active());
}

TEST(FakeTopologyTable, RoundRobinAndLinearDistances) {
  static Topology t;
  BuildFakeTopology(3, &t);
  ASSERT_TRUE(FinishTopology(&t));
  EXPECT_EQ(t.usable, 0b111u);
  for (int cpu = 0; cpu < 9; ++cpu) EXPECT_EQ(t.cpu_node[cpu], cpu % 3);
  EXPECT_EQ(t.distance[0][0], 10);
  EXPECT_EQ(t.distance[0][1], 20);
  EXPECT_EQ(t.distance[2][0], 30);
  BuildFakeTopology(64, &t);
  ASSERT_TRUE(FinishTopology(&t));
  EXPECT_EQ(t.usable, kAll);
  EXPECT_EQ(t.distance[0][24], 250);
  EXPECT_EQ(t.distance[0][25], 254);  // capped: SLIT's largest finite value
  EXPECT_EQ(t.distance[63][0], 254);
  EXPECT_EQ(t.cpu_node[4095], 4095 % 64);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
