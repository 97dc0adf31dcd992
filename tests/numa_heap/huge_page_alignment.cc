// Large blocks on a first-touch node start on a 2 MiB (huge page) boundary,
// so that threads first-writing equal shares of them each get whole huge
// pages (numa/policy.h, kHugePageBytes). Runs the allocator with the layer
// forced on over this machine's real topology (TCMALLOC_NUMA=1), which leaves
// node 0's memory to first touch; the control (--control) runs it with
// TCMALLOC_NUMA_POLICY=preferred, where nothing is aligned, and expects the
// same sequence of blocks to miss the boundary at least once.
//
// main() sets the environment and re-executes itself, because the allocator
// reads its knobs at its first allocation.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uintptr_t kHugePage = 2 * kMiB;

bool Control() { return getenv("HUGE_ALIGNMENT_CONTROL") != nullptr; }

TEST(HugePageAlignment, LargeBlocksStartOnHugePages) {
  size_t active = 0;
  ASSERT_TRUE(MallocExtension::instance()->GetNumericProperty(
      "tcmalloc.numa.active", &active));
  ASSERT_EQ(active, 1u);
  // Odd-sized neighbours first, so that the heap's free spans start off the
  // boundary.
  std::vector<void*> keep;
  int misaligned = 0, large = 0;
  const size_t sizes[] = {300 * 1024, 2 * kMiB, 5 * kMiB / 2, 700 * 1024,
                          3 * kMiB,   8 * kMiB, 1 * kMiB,     64 * kMiB};
  for (int round = 0; round < 3; ++round) {
    for (size_t size : sizes) {
      void* p = malloc(size);
      ASSERT_NE(p, nullptr);
      memset(p, 1, 4096);
      keep.push_back(p);
      if (size < kHugePage) continue;
      ++large;
      if (reinterpret_cast<uintptr_t>(p) % kHugePage != 0) ++misaligned;
    }
    // Free every other block: later rounds reuse holes of mixed sizes.
    for (size_t i = keep.size() - 8; i < keep.size(); i += 2) {
      free(keep[i]);
      keep[i] = nullptr;
    }
  }
  for (void* p : keep) free(p);
  if (Control()) {
    EXPECT_GT(misaligned, 0) << "control: with binding nothing is aligned";
  } else {
    EXPECT_EQ(misaligned, 0) << misaligned << " of " << large
                             << " blocks of 2 MiB or more off the boundary";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (getenv("TCMALLOC_NUMA") == nullptr) {
    setenv("TCMALLOC_NUMA", "1", 1);
    if (argc > 1 && strcmp(argv[1], "--control") == 0) {
      setenv("TCMALLOC_NUMA_POLICY", "preferred", 1);
      setenv("HUGE_ALIGNMENT_CONTROL", "1", 1);
    }
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
