// An mbind the kernel refuses must cost nothing but what it gave: run the
// allocator with the NUMA layer forced on (TCMALLOC_NUMA=1) and binding
// (TCMALLOC_NUMA_POLICY=preferred) under a seccomp filter that makes every
// mbind and move_pages fail with EPERM, as a container's default profile
// does. Init finds the refusals: it binds nothing (preferred falls back to
// local, with one warning line), names them in tcmalloc.numa.refused_mbind
// and refused_move_pages, and judges large blocks by the heap's notes
// (tcmalloc.numa.witnessed_returns). Allocations must still succeed and
// keep their contents.
//
// main() installs the filter (or not: --no-filter is the control, which
// must bind and see no refusal) and re-executes itself, because the
// allocator initialises at its first allocation.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"

namespace {

size_t Property(const char* name) {
  size_t value = 0;
  EXPECT_TRUE(MallocExtension::instance()->GetNumericProperty(name, &value))
      << name;
  return value;
}

bool RefusingMbind() { return getenv("MBIND_REFUSED_FILTER") != nullptr; }

TEST(MbindRefused, AllocationsSurviveAndRefusalsAreNamed) {
  ASSERT_EQ(Property("tcmalloc.numa.active"), 1u);
  constexpr int kBlocks = 64;
  constexpr size_t kSize = 3 << 20;  // page-level: each grows the heap
  char* blocks[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = static_cast<char*>(malloc(kSize));
    ASSERT_NE(blocks[i], nullptr);
    memset(blocks[i], i, kSize);
  }
  for (int i = 0; i < kBlocks; ++i) {
    for (size_t off = 0; off < kSize; off += 4096) {
      ASSERT_EQ(blocks[i][off], static_cast<char>(i));
    }
    free(blocks[i]);
  }
  const size_t calls = Property("tcmalloc.numa.mbind_calls");
  const size_t failures = Property("tcmalloc.numa.mbind_failures");
  const size_t witnessed = Property("tcmalloc.numa.witnessed_returns");
  if (RefusingMbind()) {
    EXPECT_EQ(calls, 0u) << "nothing is bound once mbind is known refused";
    EXPECT_EQ(failures, 0u);
    EXPECT_EQ(Property("tcmalloc.numa.refused_mbind"), size_t{EPERM});
    EXPECT_EQ(Property("tcmalloc.numa.refused_move_pages"), size_t{EPERM});
    EXPECT_EQ(Property("tcmalloc.numa.refused_get_mempolicy"), 0u);
    EXPECT_GE(witnessed, size_t{kBlocks}) << "blocks judged by the notes";
  } else {
    EXPECT_GT(calls, 0u) << "control: preferred binds";
    EXPECT_EQ(failures, 0u) << "control: nothing refuses mbind";
    EXPECT_EQ(Property("tcmalloc.numa.refused_mbind"), 0u);
    EXPECT_EQ(Property("tcmalloc.numa.refused_move_pages"), 0u);
    EXPECT_EQ(witnessed, 0u) << "control: move_pages answers";
  }
}

// Installs a seccomp filter: mbind and move_pages (the reuse check's page
// sample) fail with EPERM, everything else runs.
bool RefuseMbind() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mbind, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_move_pages, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof(filter) / sizeof(filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (getenv("TCMALLOC_NUMA") == nullptr) {
    const bool control = argc > 1 && strcmp(argv[1], "--no-filter") == 0;
    if (!control) {
      if (!RefuseMbind()) {
        perror("seccomp");
        return 1;
      }
      setenv("MBIND_REFUSED_FILTER", "1", 1);
    }
    setenv("TCMALLOC_NUMA", "1", 1);
    setenv("TCMALLOC_NUMA_POLICY", "preferred", 1);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
