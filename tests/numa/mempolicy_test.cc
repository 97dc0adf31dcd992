#include "numa/mempolicy.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace tcmalloc {
namespace numa {
namespace {

TEST(ApplyTaskPolicy, DefaultAndLocalChangeNothing) {
  for (Mode mode : {Mode::kAuto, Mode::kOn}) {
    for (int policy : {MPOL_DEFAULT, MPOL_LOCAL}) {
      bool off = true;
      EXPECT_EQ(ApplyTaskPolicy(mode, policy, 0, 0b1111, &off), 0b1111u);
      EXPECT_FALSE(off);
    }
  }
}

// numactl --membind=0 on a 4-node box: only node 0 is left.
TEST(ApplyTaskPolicy, BindNarrowsAllowedNodes) {
  bool off = true;
  EXPECT_EQ(ApplyTaskPolicy(Mode::kAuto, MPOL_BIND, 0b0001, 0b1111, &off),
            0b0001u);
  EXPECT_FALSE(off);
  EXPECT_EQ(ApplyTaskPolicy(Mode::kOn, MPOL_BIND, 0b0110, 0b1101, &off),
            0b0100u);
}

// numactl --interleave / --preferred: auto leaves placement to the kernel;
// a forced "1" overrides it.
TEST(ApplyTaskPolicy, OtherPoliciesTurnAutoOff) {
  for (int policy : {int{MPOL_INTERLEAVE}, int{MPOL_PREFERRED},
                     5 /* PREFERRED_MANY */, 6 /* WEIGHTED_INTERLEAVE */}) {
    bool off = false;
    EXPECT_EQ(ApplyTaskPolicy(Mode::kAuto, policy, 0b01, 0b11, &off), 0b11u);
    EXPECT_TRUE(off) << policy;
    EXPECT_EQ(ApplyTaskPolicy(Mode::kOn, policy, 0b01, 0b11, &off), 0b11u);
    EXPECT_FALSE(off) << policy;
  }
}

long SetMempolicy(int mode, uint64_t nodes) {
  unsigned long mask[1] = {static_cast<unsigned long>(nodes)};
  return syscall(SYS_set_mempolicy, mode, nodes ? mask : nullptr,
                 nodes ? 65 : 0);
}

// The real kernel reports the thread policy set_mempolicy installed.
TEST(QueryTaskPolicy, ReadsTheThreadsPolicy) {
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  ASSERT_NE(allowed, 0u);
  const uint64_t first = allowed & -allowed;

  int mode = -1;
  uint64_t nodes = 7;
  ASSERT_TRUE(QueryTaskPolicy(&mode, &nodes));
  EXPECT_EQ(mode, MPOL_DEFAULT);

  ASSERT_EQ(SetMempolicy(MPOL_BIND | MPOL_F_STATIC_NODES, first), 0) << errno;
  ASSERT_TRUE(QueryTaskPolicy(&mode, &nodes));
  EXPECT_EQ(mode, MPOL_BIND);  // the mode flag is stripped
  EXPECT_EQ(nodes, first);

  ASSERT_EQ(SetMempolicy(MPOL_INTERLEAVE, allowed), 0) << errno;
  ASSERT_TRUE(QueryTaskPolicy(&mode, &nodes));
  EXPECT_EQ(mode, MPOL_INTERLEAVE);
  EXPECT_EQ(nodes, allowed);

  ASSERT_EQ(SetMempolicy(MPOL_DEFAULT, 0), 0) << errno;
  ASSERT_TRUE(QueryTaskPolicy(&mode, &nodes));
  EXPECT_EQ(mode, MPOL_DEFAULT);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
