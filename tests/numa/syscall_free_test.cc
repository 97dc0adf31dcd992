// "No syscalls" claims, checked by the kernel: the code under test runs in a
// forked child under a seccomp filter that kills the process on any system
// call outside an allow list. Positive controls show the filter does catch
// the layer's syscalls when they happen.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <initializer_list>

#include "gtest/gtest.h"
#include "numa/mempolicy.h"
#include "numa/numa.h"
#include "numa/topology.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/layer_testing.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::FakeGetenv;
using numa_test::SetFakeEnv;

// Exit codes of the child.
constexpr int kOk = 0;
constexpr int kWrongAnswer = 3;

// Installs a filter allowing only `allowed` (plus exit/exit_group).
bool AllowOnly(std::initializer_list<long> allowed) {
  std::vector<sock_filter> f;
  f.push_back(
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
#if defined(__x86_64__)
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
#elif defined(__aarch64__)
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0));
#endif
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  f.push_back(
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  std::vector<long> all(allowed);
  all.push_back(SYS_exit);
  all.push_back(SYS_exit_group);
  for (long nr : all) {
    f.push_back(
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  sock_fprog prog = {static_cast<unsigned short>(f.size()), f.data()};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Forks; the child installs the filter, runs body() (which returns an exit
// code) and exits with raw exit_group. Returns the wait status.
template <typename Body>
int RunFiltered(std::initializer_list<long> allowed, Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!AllowOnly(allowed)) syscall(SYS_exit_group, 100);
    int code = body();
    syscall(SYS_exit_group, code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

bool KilledBySeccomp(int status) {
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

// Calls every numa.h query and a BindRange; all must answer "node 0".
int ExerciseInactive() {
  static char page[4096] __attribute__((aligned(4096)));
  int out[kMaxNodes];
  bool ok = !Active() && NumNodes() == 1 && CurrentNode() == 0 &&
            (NodeOfKernelId(0) >= 0) && !(NodeOfKernelId(1) >= 0) &&
            LendersOf(0, Borrowed::kPages, out) == 0 &&
            BindRange(page, sizeof(page), 0) && MbindCalls() == 0;
  return ok ? kOk : kWrongAnswer;
}

bool SeccompWorks() {
  int status = RunFiltered({}, [] { return kOk; });
  return WIFEXITED(status) && WEXITSTATUS(status) == kOk;
}

// TCMALLOC_NUMA=0: Init reads the (fake) environment and makes no syscall,
// not even for a bad knob's warning, and nothing after it makes one either.
TEST(SyscallFree, OffMakesNoSyscalls) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  SetFakeEnv({{"TCMALLOC_NUMA", "0"}, {"TCMALLOC_NUMA_POLICY", "bogus"}});
  int status = RunFiltered({}, [] {
    Init(FakeGetenv);
    return ExerciseInactive();
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kOk) << status;
}

// Control: the default (auto) asks the kernel for the allowed nodes, and the
// empty allow list catches that.
TEST(SyscallFree, ControlAutoIsCaught) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  SetFakeEnv({});
  int status = RunFiltered({}, [] {
    Init(FakeGetenv);
    return kOk;
  });
  EXPECT_TRUE(KilledBySeccomp(status)) << status;
}

// auto on a one-node machine: Init may call get_mempolicy (once), reads no
// sysfs file, and nothing afterwards makes a syscall.
TEST(SyscallFree, AutoOnOneNodeOnlyGetMempolicy) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  uint64_t allowed = 0;
  ASSERT_TRUE(QueryAllowedMems(&allowed));
  if (__builtin_popcountll(allowed) > 1) GTEST_SKIP() << "multi-node machine";
  SetFakeEnv({});
  int status = RunFiltered({SYS_get_mempolicy}, [] {
    Init(FakeGetenv);
    return ExerciseInactive();
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kOk) << status;
}

// Forced on with the default placement (first touch): binding a CPU node's
// memory is no binding at all, so no syscall.
TEST(SyscallFree, FirstTouchBindsNothing) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}});
  Init(FakeGetenv);
  ASSERT_TRUE(Active());
  int status = RunFiltered({}, [] {
    static char page[4096] __attribute__((aligned(4096)));
    return BindRange(page, sizeof(page), 0) && MbindCalls() == 0 ? kOk
                                                                 : kWrongAnswer;
  });
  EXPECT_EQ(status, kOk);
  ResetForTest();
}

// Control: forced on with TCMALLOC_NUMA_POLICY=preferred, BindRange does call
// mbind, and the filter sees it.
TEST(SyscallFree, ControlForcedBindIsCaught) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  SetFakeEnv({{"TCMALLOC_NUMA", "1"}, {"TCMALLOC_NUMA_POLICY", "preferred"}});
  Init(FakeGetenv);  // in the parent: sysfs reads are not under test here
  ASSERT_TRUE(Active());
  int status = RunFiltered({}, [] {
    static char page[4096] __attribute__((aligned(4096)));
    BindRange(page, sizeof(page), 0);
    return kOk;
  });
  EXPECT_TRUE(KilledBySeccomp(status)) << status;
  ResetForTest();
}

// A fake topology never binds: BindRange in fake mode makes no syscall, and
// CurrentNode uses no syscall either (rseq or vDSO). Init itself reserves the
// node address regions (mmap), so it runs before the filter.
TEST(SyscallFree, FakeTopologyMakesNoSyscallsAfterInit) {
  if (!SeccompWorks()) GTEST_SKIP() << "seccomp filters unavailable";
  SetFakeEnv({{"TCMALLOC_NUMA_FAKE_NODES", "4"}});
  Init(FakeGetenv);  // fake: not even get_mempolicy, but regions
  int status = RunFiltered({}, [] {
    static char page[4096] __attribute__((aligned(4096)));
    bool ok = Active() && NumNodes() == 4 && CurrentNode() < 4 &&
              BindRange(page, sizeof(page), 2) && MbindCalls() == 0;
    return ok ? kOk : kWrongAnswer;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kOk) << status;
  ResetForTest();
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
