// DecideBinding: the memory policy of a range of heap memory for every task
// policy x TCMALLOC_NUMA_POLICY x kernel, and ApplyBinding against the real
// kernel (including a kernel without set_mempolicy_home_node, faked with
// seccomp).
#include <errno.h>
#include <linux/filter.h>
#include <linux/mempolicy.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "numa/mempolicy.h"
#include "tests/numa/mapping.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::Mapping;
using numa_test::PolicyAt;

constexpr KernelCaps kNewKernel = {true};   // 5.17+ (Debian 12's 6.1)
constexpr KernelCaps kOldKernel = {false};  // e.g. 5.10: no home node
constexpr int kNoHome = -1;

// numactl --membind=0,2 on a 4-node machine; the heap asks for node 0.
constexpr uint64_t kSet02 = 0b0101;
constexpr uint64_t kNode0 = 0b0001;

struct Row {
  const char* task_name;
  TaskPolicy task;
  BindPolicy policy;
  KernelCaps caps;
  Binding want;
};

std::string Describe(const Row& r) {
  static const char* const kPolicy[] = {"local", "preferred", "bind"};
  return std::string(r.task_name) + " x " +
         kPolicy[static_cast<int>(r.policy)] + " x " +
         (r.caps.home_node ? "new kernel" : "old kernel");
}

constexpr Binding kNone = {false, MPOL_DEFAULT, 0, kNoHome};
constexpr Binding kPreferred0 = {true, MPOL_PREFERRED, kNode0, kNoHome};
constexpr Binding kBind0 = {true, MPOL_BIND, kNode0, kNoHome};

// The whole matrix for node 0: task policy x TCMALLOC_NUMA_POLICY x kernel.
const Row kMatrix[] = {
    // No task policy: one node; the cpuset bounds MPOL_PREFERRED's fallback.
    {"default",
     {MPOL_DEFAULT, 0},
     BindPolicy::kPreferred,
     kNewKernel,
     kPreferred0},
    {"default",
     {MPOL_DEFAULT, 0},
     BindPolicy::kPreferred,
     kOldKernel,
     kPreferred0},
    {"default", {MPOL_DEFAULT, 0}, BindPolicy::kBind, kNewKernel, kBind0},
    {"default", {MPOL_DEFAULT, 0}, BindPolicy::kBind, kOldKernel, kBind0},
    {"default", {MPOL_DEFAULT, 0}, BindPolicy::kLocal, kNewKernel, kNone},
    {"default", {MPOL_DEFAULT, 0}, BindPolicy::kLocal, kOldKernel, kNone},
    // --membind=0,2: never outside {0,2}. preferred = 0 first, then the
    // nearest of the set: a home node where the kernel has them, else the
    // faulting CPU's node first (it is node 0's heap's own thread).
    {"bind",
     {MPOL_BIND, kSet02},
     BindPolicy::kPreferred,
     kNewKernel,
     {true, MPOL_BIND, kSet02, 0}},
    {"bind",
     {MPOL_BIND, kSet02},
     BindPolicy::kPreferred,
     kOldKernel,
     {true, MPOL_BIND, kSet02, kNoHome}},
    {"bind", {MPOL_BIND, kSet02}, BindPolicy::kBind, kNewKernel, kBind0},
    {"bind", {MPOL_BIND, kSet02}, BindPolicy::kBind, kOldKernel, kBind0},
    // local: no range policy, so the task's own MPOL_BIND places the page.
    {"bind", {MPOL_BIND, kSet02}, BindPolicy::kLocal, kNewKernel, kNone},
    {"bind", {MPOL_BIND, kSet02}, BindPolicy::kLocal, kOldKernel, kNone},
    // --interleave / --preferred: the layer runs under them only with
    // TCMALLOC_NUMA=1, and then overrides them (docs/deployment.md).
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kPreferred,
     kNewKernel,
     kPreferred0},
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kPreferred,
     kOldKernel,
     kPreferred0},
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kBind,
     kNewKernel,
     kBind0},
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kBind,
     kOldKernel,
     kBind0},
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kLocal,
     kNewKernel,
     kNone},
    {"interleave",
     {MPOL_INTERLEAVE, 0b1111},
     BindPolicy::kLocal,
     kOldKernel,
     kNone},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kPreferred,
     kNewKernel,
     kPreferred0},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kPreferred,
     kOldKernel,
     kPreferred0},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kBind,
     kNewKernel,
     kBind0},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kBind,
     kOldKernel,
     kBind0},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kLocal,
     kNewKernel,
     kNone},
    {"preferred",
     {MPOL_PREFERRED, 0b0010},
     BindPolicy::kLocal,
     kOldKernel,
     kNone},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kPreferred, kNewKernel, kPreferred0},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kPreferred, kOldKernel, kPreferred0},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kBind, kNewKernel, kBind0},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kBind, kOldKernel, kBind0},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kLocal, kNewKernel, kNone},
    {"local", {MPOL_LOCAL, 0}, BindPolicy::kLocal, kOldKernel, kNone},
};

TEST(DecideBinding, EveryTaskPolicyKnobAndKernel) {
  for (const Row& r : kMatrix) {
    const Binding got = DecideBinding(r.task, r.policy, 0, r.caps);
    EXPECT_EQ(got.apply, r.want.apply) << Describe(r);
    if (!r.want.apply) continue;
    EXPECT_EQ(got.mode, r.want.mode) << Describe(r);
    EXPECT_EQ(got.nodes, r.want.nodes) << Describe(r);
    EXPECT_EQ(got.home_node, r.want.home_node) << Describe(r);
  }
}

// The property the issue is about, over every node and set: under membind no
// binding names a node outside the set, and only `preferred` names more.
TEST(DecideBinding, MembindNeverLeavesTheSet) {
  for (uint64_t set = 1; set < 16; ++set) {
    for (int node = 0; node < 4; ++node) {
      for (BindPolicy p : {BindPolicy::kPreferred, BindPolicy::kBind}) {
        for (KernelCaps caps : {kNewKernel, kOldKernel}) {
          const Binding b = DecideBinding({MPOL_BIND, set}, p, node, caps);
          SCOPED_TRACE("set " + std::to_string(set) + " node " +
                       std::to_string(node));
          EXPECT_EQ(b.mode, MPOL_BIND);
          EXPECT_NE(b.nodes, 0u);
          EXPECT_EQ(b.nodes & ~set, 0u);
          if (b.home_node >= 0) {
            EXPECT_NE(b.nodes & (1u << b.home_node), 0u);
          }
        }
      }
    }
  }
}

// A set of one node needs no home node; a heap node outside the set (the
// heaps never ask for one) still gets the set, not its own node.
TEST(DecideBinding, EdgesOfTheSet) {
  Binding b =
      DecideBinding({MPOL_BIND, 0b100}, BindPolicy::kPreferred, 2, kNewKernel);
  EXPECT_EQ(b.mode, MPOL_BIND);
  EXPECT_EQ(b.nodes, 0b100u);
  EXPECT_EQ(b.home_node, kNoHome);

  b = DecideBinding({MPOL_BIND, kSet02}, BindPolicy::kBind, 1, kNewKernel);
  EXPECT_EQ(b.mode, MPOL_BIND);
  EXPECT_EQ(b.nodes, kSet02);
  EXPECT_EQ(b.home_node, kNoHome);

  b = DecideBinding({MPOL_BIND, kSet02}, BindPolicy::kPreferred, 2, kNewKernel);
  EXPECT_EQ(b.nodes, kSet02);
  EXPECT_EQ(b.home_node, 2);
}

// Node ids a 64-bit mask cannot hold: an empty mask, which ApplyBinding
// refuses (EINVAL, counted) without a syscall.
TEST(DecideBinding, BadNodeIsAnEmptyMask) {
  for (int node : {-1, kMaxNodes}) {
    for (TaskPolicy t : {TaskPolicy{MPOL_DEFAULT, 0}, {MPOL_BIND, kSet02}}) {
      const Binding b =
          DecideBinding(t, BindPolicy::kPreferred, node, kNewKernel);
      EXPECT_TRUE(b.apply);
      EXPECT_EQ(b.nodes, 0u);
    }
  }
}

// Kernels before 5.14 report --localalloc as MPOL_PREFERRED with no node.
TEST(NormalizeTaskMode, PreferredWithoutNodesIsLocal) {
  EXPECT_EQ(NormalizeTaskMode(MPOL_PREFERRED, true), MPOL_LOCAL);
  EXPECT_EQ(NormalizeTaskMode(MPOL_PREFERRED, false), MPOL_PREFERRED);
  EXPECT_EQ(NormalizeTaskMode(MPOL_BIND, true), MPOL_BIND);
  EXPECT_EQ(NormalizeTaskMode(MPOL_DEFAULT, true), MPOL_DEFAULT);
  // And so auto stays on under it, as under a 5.14+ kernel's MPOL_LOCAL.
  bool off = true;
  EXPECT_EQ(
      ApplyTaskPolicy(Mode::kAuto, NormalizeTaskMode(MPOL_PREFERRED, true), 0,
                      0b11, &off),
      0b11u);
  EXPECT_FALSE(off);
}

// --- ApplyBinding on the real kernel -------------------------------------

int FirstAllowedNode() {
  uint64_t allowed = 0;
  EXPECT_TRUE(QueryAllowedMems(&allowed));
  EXPECT_NE(allowed, 0u);
  return allowed != 0 ? __builtin_ctzll(allowed) : 0;  // ctz(0) is undefined
}

// MPOL_BIND plus a home node on a PROT_NONE reservation that is made
// read-write afterwards: the policy survives, the memory is usable.
TEST(ApplyBinding, BindWithHomeNodeOnReservedRange) {
  const int node = FirstAllowedNode();
  Mapping m(4 << 20, PROT_NONE);
  ASSERT_NE(m.get(), MAP_FAILED);
  KernelCaps caps = {ProbeHomeNode(node)};
  BindCounters c = {};
  const Binding b = {true, MPOL_BIND, uint64_t{1} << node, node};
  ASSERT_TRUE(ApplyBinding(m.get(), m.size(), b, &caps, &c));
  EXPECT_EQ(c.calls, 1u);
  EXPECT_EQ(c.failures, 0u);
  ASSERT_EQ(mprotect(m.get(), m.size(), PROT_READ | PROT_WRITE), 0);
  static_cast<char*>(m.get())[0] = 1;
  uint64_t nodes = 0;
  EXPECT_EQ(PolicyAt(m.get(), &nodes), MPOL_BIND);
  EXPECT_EQ(nodes, uint64_t{1} << node);
}

// Debian 12's kernel (6.1) and later have set_mempolicy_home_node.
TEST(ProbeHomeNode, PresentFrom517) {
  int major = 0, minor = 0;
  FILE* f = fopen("/proc/sys/kernel/osrelease", "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fscanf(f, "%d.%d", &major, &minor), 2);
  fclose(f);
  const bool want = major > 5 || (major == 5 && minor >= 17);
  EXPECT_EQ(ProbeHomeNode(FirstAllowedNode()), want);
}

// An old kernel, faked: seccomp answers ENOSYS for set_mempolicy_home_node.
// The range is still bound (inside its set), the call is not counted as a
// failure, and the capability is forgotten so later ranges skip it.
TEST(ApplyBinding, NoHomeNodeSyscallFallsBackAndRemembers) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 450, 0, 1),
        BPF_STMT(BPF_RET | BPF_K,
                 SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
      _exit(77);
    }
    const int node = FirstAllowedNode();
    if (ProbeHomeNode(node)) _exit(1);  // the probe sees the old kernel
    Mapping m(1 << 20, PROT_NONE);
    KernelCaps caps = {true};  // as if probed on a newer kernel
    BindCounters c = {};
    const Binding b = {true, MPOL_BIND, uint64_t{1} << node, node};
    if (!ApplyBinding(m.get(), m.size(), b, &caps, &c)) _exit(2);
    if (c.failures != 0) _exit(3);
    if (caps.home_node) _exit(4);  // forgotten
    uint64_t nodes = 0;
    if (PolicyAt(m.get(), &nodes) != MPOL_BIND) _exit(5);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "seccomp unavailable";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Placed memory: a named node strictly, interleaving over the usable nodes
// (weighted where the kernel has it), never a node outside them.
TEST(DecidePlacedBinding, NamedStrictInterleavedOverTheUsableNodes) {
  const uint64_t usable = 0b1011;
  const Binding named = DecidePlacedBinding(3, usable, KernelCaps{});
  EXPECT_TRUE(named.apply);
  EXPECT_EQ(named.mode, MPOL_BIND);
  EXPECT_EQ(named.nodes, uint64_t{1} << 3);
  EXPECT_EQ(named.home_node, -1);
  EXPECT_EQ(DecidePlacedBinding(2, usable, KernelCaps{}).nodes, 0u)
      << "node 2 is not usable: refused";
  EXPECT_EQ(DecidePlacedBinding(64, usable, KernelCaps{}).nodes, 0u);
  const Binding plain = DecidePlacedBinding(-1, usable, KernelCaps{});
  EXPECT_EQ(plain.mode, MPOL_INTERLEAVE);
  EXPECT_EQ(plain.nodes, usable);
  const Binding weighted =
      DecidePlacedBinding(-1, usable, KernelCaps{false, true});
  EXPECT_EQ(weighted.mode, kMpolWeightedInterleave);
  EXPECT_EQ(weighted.nodes, usable);
}

// The allocator's metadata keeps the task's membind set and otherwise the
// usable nodes, under MPOL_BIND (balancing's scanner skips it, and the
// faulting CPU's node comes first, as with the default policy); an explicit
// placement the layer overrides for its heaps is left to the metadata.
TEST(DecideMetadataBinding, BindsToTheUsableNodesOrTheMembindSet) {
  const uint64_t usable = 0b1111;
  for (int mode : {MPOL_DEFAULT, MPOL_LOCAL}) {
    const Binding b = DecideMetadataBinding(TaskPolicy{mode, 0}, usable);
    EXPECT_TRUE(b.apply) << mode;
    EXPECT_EQ(b.mode, MPOL_BIND) << mode;
    EXPECT_EQ(b.nodes, usable) << mode;
    EXPECT_EQ(b.home_node, -1) << mode;
  }
  const Binding membind =
      DecideMetadataBinding(TaskPolicy{MPOL_BIND, 0b0101}, usable);
  EXPECT_TRUE(membind.apply);
  EXPECT_EQ(membind.mode, MPOL_BIND);
  EXPECT_EQ(membind.nodes, 0b0101u) << "never outside a membind set";
  for (int mode : {MPOL_INTERLEAVE, MPOL_PREFERRED}) {
    EXPECT_FALSE(DecideMetadataBinding(TaskPolicy{mode, 0b0011}, usable).apply)
        << mode;
  }
}

// Linux 6.9 and later know MPOL_WEIGHTED_INTERLEAVE; 6.1 does not.
TEST(ProbeWeightedInterleave, PresentFrom69) {
  int major = 0, minor = 0;
  FILE* f = fopen("/proc/sys/kernel/osrelease", "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fscanf(f, "%d.%d", &major, &minor), 2);
  fclose(f);
  const bool want = major > 6 || (major == 6 && minor >= 9);
  EXPECT_EQ(ProbeWeightedInterleave(), want);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
