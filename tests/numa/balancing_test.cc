// The kernel's balancing setting as the layer reads it, which freed spans the
// heaps check, and the memory of spans released for having moved.
#include "numa/balancing.h"

#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/numa/fake_sysfs.h"

namespace tcmalloc {
namespace numa {
namespace {

std::string Setting(const std::string& contents) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/numa_balancing";
  numa_test::WriteFile(path, contents);
  return path;
}

TEST(KernelBalancesPages, BitZeroOfTheKernelsValue) {
  EXPECT_TRUE(KernelBalancesPages(Setting("1\n").c_str()));
  EXPECT_TRUE(KernelBalancesPages(Setting("3\n").c_str()))
      << "balancing with memory tiering";
  EXPECT_FALSE(KernelBalancesPages(Setting("0\n").c_str()));
  EXPECT_FALSE(KernelBalancesPages(Setting("2\n").c_str()))
      << "memory tiering alone leaves CPU nodes' pages be";
}

TEST(KernelBalancesPages, MissingOrMalformedIsOff) {
  EXPECT_FALSE(KernelBalancesPages("/nonexistent/numa_balancing"));
  EXPECT_FALSE(KernelBalancesPages(Setting("").c_str()));
  EXPECT_FALSE(KernelBalancesPages(Setting("yes\n").c_str()));
  EXPECT_FALSE(KernelBalancesPages(Setting("1 1\n").c_str()));
  EXPECT_FALSE(KernelBalancesPages(Setting("1-3\n").c_str()));
}

TEST(MovedSpanCheck, OneInKUntilARelease) {
  ReleasedSpans released{};
  MovedSpanCheck check{};
  int checks = 0;
  for (uint32_t i = 0; i < 10 * kSampleEvery; ++i) {
    if (check.ShouldCheck()) {
      ++checks;
      EXPECT_EQ(check.Judge(0x4040000000, 0, &released), MovedSpan::kStays);
    }
  }
  EXPECT_EQ(checks, 10);
}

TEST(MovedSpanCheck, EverySpanForAWhileAfterARelease) {
  ReleasedSpans released{};
  MovedSpanCheck check{};
  while (!check.ShouldCheck()) {
  }
  ASSERT_EQ(check.Judge(0x4040000000, 1, &released), MovedSpan::kRelease);
  for (uint32_t i = 0; i < kCheckAllAfterMoved; ++i) {
    ASSERT_TRUE(check.ShouldCheck()) << i;
    check.Judge(0x4040000000, 0, &released);
  }
  EXPECT_FALSE(check.ShouldCheck()) << "back to sampling";
  // A release while checking every span starts the count afresh.
  MovedSpanCheck other{};
  while (!other.ShouldCheck()) {
  }
  ASSERT_EQ(other.Judge(0x4080000000, 1, &released), MovedSpan::kRelease);
  for (uint32_t i = 0; i < kCheckAllAfterMoved - 1; ++i) other.ShouldCheck();
  ASSERT_TRUE(other.ShouldCheck());
  ASSERT_EQ(other.Judge(0x4080002000, 1, &released), MovedSpan::kRelease);
  EXPECT_TRUE(other.ShouldCheck());
}

TEST(ReleasedSpans, RemembersReleasedSpansByStart) {
  ReleasedSpans released{};
  EXPECT_FALSE(released.Contains(0x4040000000)) << "no table: nothing known";
  EXPECT_FALSE(released.Take(0x4040000000));
  released.Note(0x4040000000);
  released.Note(0x4080002000);
  EXPECT_TRUE(released.Contains(0x4040000000));
  EXPECT_TRUE(released.Contains(0x4080002000));
  EXPECT_FALSE(released.Contains(0x4040002000));
  EXPECT_FALSE(released.Contains(0)) << "address 0 is no span's";
  EXPECT_TRUE(released.Take(0x4040000000));
  EXPECT_FALSE(released.Contains(0x4040000000)) << "taken: forgotten";
  EXPECT_FALSE(released.Take(0x4040000000));
  EXPECT_TRUE(released.Contains(0x4080002000)) << "the other stays";
}

TEST(ReleasedSpans, ACollisionForgetsTheOlderSpan) {
  ReleasedSpans released{};
  const uintptr_t first = 0x4040000000;
  uintptr_t other = first + 0x2000;
  for (;; other += 0x2000) {
    released.Note(first);
    released.Note(other);
    if (!released.Contains(first)) break;
    released.Take(other);
  }
  EXPECT_TRUE(released.Contains(other));
  EXPECT_FALSE(released.Contains(first));
}

// Producer/consumer: the kernel moves a span to the consumer's node, the heap
// releases it, the producer refaults it at home, the kernel moves it again.
TEST(MovedSpanCheck, ASpanMovedAgainAfterItsReleaseIsKept) {
  ReleasedSpans released{};
  MovedSpanCheck check{};
  const uintptr_t span = 0x4040000000, other = 0x4040200000;
  EXPECT_EQ(check.Judge(span, 0, &released), MovedSpan::kStays);
  EXPECT_EQ(check.Judge(span, 3, &released), MovedSpan::kRelease);
  EXPECT_EQ(check.Judge(span, 0, &released), MovedSpan::kStays)
      << "refaulted at home";
  EXPECT_EQ(check.Judge(span, 3, &released), MovedSpan::kKeep)
      << "no second release";
  EXPECT_EQ(check.Judge(span, 1, &released), MovedSpan::kKeep);
  EXPECT_EQ(check.Judge(other, 1, &released), MovedSpan::kRelease);
}

TEST(MovedSpanCheck, OnlyAReleaseChecksEverySpan) {
  ReleasedSpans released{};
  MovedSpanCheck check{};
  const uintptr_t span = 0x4040000000;
  while (!check.ShouldCheck()) {
  }
  ASSERT_EQ(check.Judge(span, 2, &released), MovedSpan::kRelease);
  for (uint32_t i = 0; i < kCheckAllAfterMoved; ++i) {
    ASSERT_TRUE(check.ShouldCheck()) << i;
  }
  while (!check.ShouldCheck()) {
  }
  ASSERT_EQ(check.Judge(span, 2, &released), MovedSpan::kKeep);
  // Kept spans are the steady state of memory used from another node: back
  // to one span in kSampleEvery.
  int checks = 0;
  for (uint32_t i = 0; i < kSampleEvery; ++i) checks += check.ShouldCheck();
  EXPECT_EQ(checks, 1);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
