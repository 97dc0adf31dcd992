// Init inside a default Docker or Kubernetes container (issue 30), with the
// refusals stood in for (InitWithKernelForTest): get_mempolicy refused, the
// cpuset read from fake /proc and cgroup v2 trees, mbind and move_pages
// refused. Missing and malformed files leave the layer off with one line on
// stderr, and the program runs on.
#include <errno.h>
#include <linux/mempolicy.h>

#include <string>

#include "gtest/gtest.h"
#include "numa/numa.h"
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

constexpr char kCgroup2Mount[] =
    "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";

// Two CPU nodes (CPUs 0-1 and 2-3) and, with `memory_only`, node 2 without
// CPUs.
std::string Sysfs(const std::string& name, bool memory_only = false) {
  if (memory_only) {
    return WriteFakeSysfs(name, {{0, "0-1", "10 21 30", 100},
                                 {1, "2-3", "21 10 30", 100},
                                 {2, "", "30 30 10", 100}});
  }
  return WriteFakeSysfs(name,
                        {{0, "0-1", "10 21", 100}, {1, "2-3", "21 10", 100}});
}

// A fake "/" holding proc/self/{status,cgroup,mountinfo} and a cgroup2 mount.
struct Proc {
  std::string root;
  explicit Proc(const std::string& name)
      : root(std::string(getenv("TEST_TMPDIR")) + "/proc-" + name) {
    WriteFile(root + "/.keep", "");
  }
  Proc& Status(const std::string& mems) {
    WriteFile(root + "/proc/self/status",
              "Name:\tprobe\nMems_allowed_list:\t" + mems + "\n");
    return *this;
  }
  Proc& Cgroup(const std::string& cpus, const std::string& mems) {
    WriteFile(root + "/proc/self/mountinfo", kCgroup2Mount);
    WriteFile(root + "/proc/self/cgroup", "0::/ctr\n");
    const std::string dir = root + "/sys/fs/cgroup/ctr/";
    if (!cpus.empty()) WriteFile(dir + "cpuset.cpus.effective", cpus + "\n");
    if (!mems.empty()) WriteFile(dir + "cpuset.mems.effective", mems + "\n");
    return *this;
  }
};

// The kernel of a default container: the four memory-policy calls and
// move_pages refused with EPERM.
FakeKernel Container(const std::string& sysfs, const Proc& proc) {
  FakeKernel k = {};
  k.sysfs_root = sysfs.c_str();
  k.proc_root = proc.root.c_str();
  k.get_mempolicy_errno = EPERM;
  k.mbind_errno = EPERM;
  k.move_pages_errno = EPERM;
  k.home_node = true;
  return k;
}

class ContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResetForTest();
    SetFakeEnv({});
  }
  void TearDown() override { ResetForTest(); }
};

TEST_F(ContainersTest, MemoryNodesFromProcSelfStatus) {
  const std::string sysfs = Sysfs("c-status");
  Proc proc("status");
  proc.Status("0-1");
  const FakeKernel k = Container(sysfs, proc);
  const std::string err =
      CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
  EXPECT_EQ(err, "");
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 2);
  const Refusals r = RefusedCalls();
  EXPECT_EQ(r.get_mempolicy, EPERM);
  EXPECT_EQ(r.mbind, EPERM);
  EXPECT_EQ(r.move_pages, EPERM);
  EXPECT_EQ(r.home_node, 0) << "never asked: the task policy is the default";
  ASSERT_NE(MemsSource(), nullptr);
  EXPECT_EQ(std::string(MemsSource()), proc.root + "/proc/self/status");
  EXPECT_EQ(CpusSource(), nullptr) << "no cgroup: CPUs not narrowed";
  EXPECT_TRUE(ReuseByWitness());
  EXPECT_TRUE(FirstTouchNode(0) && FirstTouchNode(1));
}

// Control: get_mempolicy answers, so no file is read (a malformed status file
// changes nothing) and nothing is refused but what the probes say.
TEST_F(ContainersTest, ControlGetMempolicyFirstFilesUnread) {
  const std::string sysfs = Sysfs("c-control");
  Proc proc("control");
  proc.Status("garbage");
  FakeKernel k = Container(sysfs, proc);
  k.get_mempolicy_errno = 0;
  k.allowed = 0b11;
  k.mbind_errno = 0;
  k.move_pages_errno = 0;
  const std::string err =
      CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
  EXPECT_EQ(err, "");
  ASSERT_TRUE(Active());
  EXPECT_EQ(RefusedCalls().get_mempolicy, 0);
  EXPECT_EQ(MemsSource(), nullptr);
  EXPECT_FALSE(ReuseByWitness()) << "move_pages answers";
}

TEST_F(ContainersTest, OneAllowedNodeStaysOffQuietly) {
  const std::string sysfs = Sysfs("c-one");
  Proc proc("one");
  proc.Status("1");
  const FakeKernel k = Container(sysfs, proc);
  const std::string err =
      CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
  EXPECT_EQ(err, "");
  EXPECT_FALSE(Active());
  EXPECT_EQ(RefusedCalls().get_mempolicy, EPERM) << "still said at exit";
}

TEST_F(ContainersTest, CgroupMemsWhenStatusHasNone) {
  const std::string sysfs = Sysfs("c-cgmems");
  Proc proc("cgmems");
  proc.Cgroup("", "0-1");
  const FakeKernel k = Container(sysfs, proc);
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(std::string(MemsSource()),
            proc.root + "/sys/fs/cgroup/ctr/cpuset.mems.effective");
}

// Missing and malformed: one line, the layer off, and the caller goes on.
TEST_F(ContainersTest, NoFileOrAMalformedOneTurnsTheLayerOffWithOneLine) {
  const std::string sysfs = Sysfs("c-bad");
  struct Case {
    const char* name;
    void (*setup)(Proc*);
    const char* says;
  };
  const Case cases[] = {
      {"none", [](Proc*) {}, "no file names the cpuset's memory nodes"},
      {"status", [](Proc* p) { p->Status("0-"); }, "/proc/self/status"},
      {"cgroup-mems", [](Proc* p) { p->Cgroup("", "x"); },
       "cpuset.mems.effective"},
      {"cgroup-cpus", [](Proc* p) { p->Status("0-1").Cgroup("0,a", ""); },
       "cpuset.cpus.effective"},
  };
  for (const Case& c : cases) {
    ResetForTest();
    Proc proc(std::string("bad-") + c.name);
    c.setup(&proc);
    const FakeKernel k = Container(sysfs, proc);
    const std::string err =
        CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
    EXPECT_FALSE(Active()) << c.name;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << c.name << err;
    EXPECT_EQ(err.rfind("tcmalloc: NUMA layer off: ", 0), 0u) << err;
    EXPECT_NE(err.find(c.says), std::string::npos) << c.name << ": " << err;
    EXPECT_EQ(NumNodes(), 1);
    EXPECT_EQ(CurrentNode(), 0);
  }
}

// --cpuset-cpus with one node's CPUs: no thread ever runs on node 1, so auto
// runs as on one node; TCMALLOC_NUMA=1 still can, node 1 being memory-only.
TEST_F(ContainersTest, CgroupCpusOfOneNodeKeepAutoOff) {
  const std::string sysfs = Sysfs("c-cpus");
  Proc proc("cpus");
  proc.Status("0-1").Cgroup("0-1", "0-1");
  FakeKernel k = Container(sysfs, proc);
  InitWithKernelForTest(k, FakeGetenv);
  EXPECT_FALSE(Active());
  EXPECT_NE(CpusSource(), nullptr);

  // Control: CPUs on both nodes.
  ResetForTest();
  Proc both("cpus-both");
  both.Status("0-1").Cgroup("1-2", "0-1");
  k = Container(sysfs, both);
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumCpuNodes(), 2);

  // Forced on: node 1 keeps its memory, without CPUs; mbind is refused, so
  // such a node is left out.
  ResetForTest();
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  k = Container(sysfs, proc);
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 1);
  k.mbind_errno = 0;
  ResetForTest();
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 2) << "with mbind, node 1 is a memory-only node";
  EXPECT_EQ(NumCpuNodes(), 1);
}

// cpuset.mems of one node with CPUs on two (as numactl --membind=0): the
// kernel keeps every page on node 0; the layer has nothing to split.
TEST_F(ContainersTest, CgroupMemsOfOneNodeIsOneNode) {
  const std::string sysfs = Sysfs("c-mems");
  Proc proc("mems");
  proc.Status("0").Cgroup("0-3", "0");
  InitWithKernelForTest(Container(sysfs, proc), FakeGetenv);
  EXPECT_FALSE(Active());
}

TEST_F(ContainersTest, RefusedMbindLeavesMemoryOnlyNodesOut) {
  const std::string sysfs = Sysfs("c-memonly", /*memory_only=*/true);
  Proc proc("memonly");
  proc.Status("0-2");
  FakeKernel k = Container(sysfs, proc);
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 2) << "node 2 could not be bound";
  EXPECT_EQ(NodeOfKernelId(2), -1);
  // Control: with mbind, the memory-only node is a node of the layer.
  ResetForTest();
  k.mbind_errno = 0;
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(NumNodes(), 3);
}

TEST_F(ContainersTest, RefusedMbindTurnsBindPoliciesIntoLocalWithOneLine) {
  const std::string sysfs = Sysfs("c-policy");
  Proc proc("policy");
  proc.Status("0-1");
  SetFakeEnv({{"TCMALLOC_NUMA_POLICY", "bind"}});
  const FakeKernel k = Container(sysfs, proc);
  const std::string err =
      CaptureStderr([&] { InitWithKernelForTest(k, FakeGetenv); });
  ASSERT_TRUE(Active());
  EXPECT_EQ(Policy(), BindPolicy::kLocal);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("TCMALLOC_NUMA_POLICY=bind"), std::string::npos) << err;
  EXPECT_NE(err.find("EPERM"), std::string::npos) << err;
  EXPECT_TRUE(ReuseByWitness());
}

// ENOSYS (another runtime's answer) is a refusal as EPERM is.
TEST_F(ContainersTest, EnosysIsARefusalToo) {
  const std::string sysfs = Sysfs("c-enosys");
  Proc proc("enosys");
  proc.Status("0-1");
  FakeKernel k = Container(sysfs, proc);
  k.get_mempolicy_errno = ENOSYS;
  k.mbind_errno = ENOSYS;
  k.move_pages_errno = ENOSYS;
  InitWithKernelForTest(k, FakeGetenv);
  ASSERT_TRUE(Active());
  EXPECT_EQ(RefusedCalls().get_mempolicy, ENOSYS);
  EXPECT_TRUE(ReuseByWitness());
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
