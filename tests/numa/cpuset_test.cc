// The cpuset read from files (numa/topology.h), against fake /proc and cgroup
// v2 trees: what a container's process sees when get_mempolicy is refused.
#include <string>

#include "gtest/gtest.h"
#include "numa/topology.h"
#include "tests/numa/fake_sysfs.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::WriteFile;

// A fresh directory under $TEST_TMPDIR standing for "/".
std::string FakeRoot(const std::string& name) {
  const std::string root = std::string(getenv("TEST_TMPDIR")) + "/" + name;
  WriteFile(root + "/.keep", "");
  return root;
}

constexpr char kStatus[] =
    "Name:\tprobe\nCpus_allowed_list:\t0-3\nMems_allowed:\t00000000,00000005\n"
    "Mems_allowed_list:\t0,2\nvoluntary_ctxt_switches:\t1\n";
constexpr char kCgroup2Mount[] =
    "22 1 0:20 / /proc rw,nosuid - proc proc rw\n"
    "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate\n";

// A cgroup2 mount at /sys/fs/cgroup and the process in `path` of it.
void InCgroup(const std::string& root, const std::string& path) {
  WriteFile(root + "/proc/self/mountinfo", kCgroup2Mount);
  WriteFile(root + "/proc/self/cgroup", "0::" + path + "\n");
}

bool Cpus(const CpuMask& m, std::initializer_list<int> want) {
  CpuMask expected = {};
  for (int c : want) expected.words[c / 64] |= uint64_t{1} << (c % 64);
  for (int i = 0; i < kMaxCpus / 64; ++i) {
    if (m.words[i] != expected.words[i]) return false;
  }
  return true;
}

TEST(StatusMems, ReadsMemsAllowedList) {
  const std::string root = FakeRoot("status-ok");
  WriteFile(root + "/proc/self/status", kStatus);
  uint64_t mems = 0;
  Line where;
  ASSERT_EQ(ReadStatusMems(root.c_str(), &mems, &where), FileRead::kFound);
  EXPECT_EQ(mems, 0b101u);
  EXPECT_EQ(std::string(where.c_str()), root + "/proc/self/status");
}

TEST(StatusMems, MissingFileOrLineIsMissing) {
  const std::string root = FakeRoot("status-missing");
  uint64_t mems = 0;
  Line where;
  EXPECT_EQ(ReadStatusMems(root.c_str(), &mems, &where), FileRead::kMissing);
  WriteFile(root + "/proc/self/status", "Name:\tprobe\nMems_allowed:\t1\n");
  EXPECT_EQ(ReadStatusMems(root.c_str(), &mems, &where), FileRead::kMissing)
      << "Mems_allowed is not Mems_allowed_list";
}

TEST(StatusMems, MalformedOrEmptyListIsMalformed) {
  const std::string root = FakeRoot("status-bad");
  uint64_t mems = 0;
  Line where;
  for (const char* bad : {"Mems_allowed_list:\t0-x\n", "Mems_allowed_list:\n",
                          "Mems_allowed_list:\t3-1\n"}) {
    WriteFile(root + "/proc/self/status", bad);
    EXPECT_EQ(ReadStatusMems(root.c_str(), &mems, &where), FileRead::kMalformed)
        << bad;
  }
}

TEST(CgroupCpuset, ReadsTheProcessCgroup) {
  const std::string root = FakeRoot("cg-own");
  InCgroup(root, "/ctr/child");
  WriteFile(root + "/sys/fs/cgroup/ctr/child/cpuset.cpus.effective", "0-1,6\n");
  WriteFile(root + "/sys/fs/cgroup/ctr/child/cpuset.mems.effective", "1\n");
  CpuMask cpus;
  uint64_t mems = 0;
  Line where;
  ASSERT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kFound);
  EXPECT_TRUE(Cpus(cpus, {0, 1, 6}));
  EXPECT_EQ(std::string(where.c_str()),
            root + "/sys/fs/cgroup/ctr/child/cpuset.cpus.effective");
  ASSERT_EQ(ReadCgroupMems(root.c_str(), &mems, &where), FileRead::kFound);
  EXPECT_EQ(mems, 0b10u);
}

// The cpuset controller enabled higher up: the nearest ancestor's file.
TEST(CgroupCpuset, WalksUpToTheNearestFile) {
  const std::string root = FakeRoot("cg-up");
  InCgroup(root, "/a/b/c");
  WriteFile(root + "/sys/fs/cgroup/a/cpuset.cpus.effective", "2-3\n");
  WriteFile(root + "/sys/fs/cgroup/a/b/c/cgroup.procs", "1\n");
  CpuMask cpus;
  Line where;
  ASSERT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kFound);
  EXPECT_TRUE(Cpus(cpus, {2, 3}));
  // ... and up to the mount point, not above it.
  WriteFile(root + "/proc/self/cgroup", "0::/x\n");
  EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMissing);
  WriteFile(root + "/sys/fs/cgroup/cpuset.cpus.effective", "0-7\n");
  ASSERT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kFound);
  EXPECT_TRUE(Cpus(cpus, {0, 1, 2, 3, 4, 5, 6, 7}));
}

// A container without a cgroup namespace mounts its own subtree: the
// cgroup's path starts with the mount's root.
TEST(CgroupCpuset, SubtreeMountAndEscapedMountPoint) {
  const std::string root = FakeRoot("cg-subtree");
  WriteFile(root + "/proc/self/mountinfo",
            "40 30 0:26 /docker/abc /sys/fs/cg\\040v2 ro - cgroup2 cgroup2 "
            "rw\n");
  WriteFile(root + "/proc/self/cgroup", "0::/docker/abc\n");
  WriteFile(root + "/sys/fs/cg v2/cpuset.cpus.effective", "4\n");
  CpuMask cpus;
  Line where;
  ASSERT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kFound);
  EXPECT_TRUE(Cpus(cpus, {4}));
  // A cgroup outside the mounted subtree cannot be seen.
  WriteFile(root + "/proc/self/cgroup", "0::/docker/abcd\n");
  EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMissing);
}

// cgroup v1 only, or no /proc: nothing to read, which is no error.
TEST(CgroupCpuset, NoCgroup2IsMissing) {
  const std::string root = FakeRoot("cg-v1");
  CpuMask cpus;
  Line where;
  EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMissing);
  WriteFile(
      root + "/proc/self/mountinfo",
      "30 25 0:26 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n");
  WriteFile(root + "/proc/self/cgroup", "3:cpuset:/ctr\n");
  EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMissing);
}

TEST(CgroupCpuset, MalformedFilesAreMalformed) {
  const std::string root = FakeRoot("cg-bad");
  InCgroup(root, "ctr");
  CpuMask cpus;
  uint64_t mems;
  Line where;
  EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMalformed)
      << "a cgroup path that is not absolute";
  WriteFile(root + "/proc/self/cgroup", "0::/ctr\n");
  for (const char* bad : {"0-z\n", "\n", "5-2\n"}) {
    WriteFile(root + "/sys/fs/cgroup/ctr/cpuset.cpus.effective", bad);
    WriteFile(root + "/sys/fs/cgroup/ctr/cpuset.mems.effective", bad);
    EXPECT_EQ(ReadCgroupCpus(root.c_str(), &cpus, &where), FileRead::kMalformed)
        << bad;
    EXPECT_EQ(ReadCgroupMems(root.c_str(), &mems, &where), FileRead::kMalformed)
        << bad;
  }
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
