// CountFromPageTables against memory whose residency the test decides:
// pages it writes, a huge page it asks for, and that huge page made
// PROT_NONE (the state NUMA balancing's hinting puts a sampled PMD in).
#include "benchmarks/memory/page_tables.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace memory_probe {
namespace {

constexpr size_t kHuge = size_t{2} << 20;

// An anonymous mapping with a 2 MiB-aligned stretch of `bytes` inside.
class AlignedMapping {
 public:
  explicit AlignedMapping(size_t bytes) : size_(bytes + kHuge) {
    raw_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw_ == MAP_FAILED) raw_ = nullptr;
    const uintptr_t at = reinterpret_cast<uintptr_t>(raw_);
    begin_ = reinterpret_cast<char*>((at + kHuge - 1) & ~(kHuge - 1));
  }
  ~AlignedMapping() {
    if (raw_ != nullptr) munmap(raw_, size_);
  }
  char* begin() const { return begin_; }
  bool ok() const { return raw_ != nullptr; }

 private:
  size_t size_;
  void* raw_;
  char* begin_;
};

// smaps' AnonHugePages and Rss (KiB) of the mapping holding `p`.
struct SmapsEntry {
  long rss_kib = -1;
  long anon_huge_kib = -1;
};
SmapsEntry SmapsOf(const void* p) {
  SmapsEntry e;
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return e;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  char line[512];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long begin, end;
    // A mapping's header; its fields ("Rss:") never read as a range.
    if (std::sscanf(line, "%lx-%lx ", &begin, &end) == 2) {
      inside = at >= begin && at < end;
    } else if (inside && std::strncmp(line, "Rss:", 4) == 0) {
      e.rss_kib = std::atol(line + 4);
    } else if (inside && std::strncmp(line, "AnonHugePages:", 14) == 0) {
      e.anon_huge_kib = std::atol(line + 14);
    }
  }
  std::fclose(f);
  return e;
}

TEST(PageTablesTest, PresentCountsEveryWrittenPage) {
  AlignedMapping m(8 << 20);
  ASSERT_TRUE(m.ok());
  // 4 KiB pages only, whatever the machine's THP setting.
  ASSERT_EQ(madvise(m.begin(), 8 << 20, MADV_NOHUGEPAGE), 0);
  const PageTableCount before = CountFromPageTables();
  ASSERT_GE(before.present_kib, 0);
  for (size_t i = 0; i < (4u << 20); i += 4096) m.begin()[i] = 1;
  const PageTableCount after = CountFromPageTables();
  // 4 MiB written; the walk's own stdio buffer and stack add a few pages.
  EXPECT_GE(after.present_kib - before.present_kib, 4096);
  EXPECT_LE(after.present_kib - before.present_kib, 4096 + 64);
  if (before.huge_kib >= 0) EXPECT_EQ(after.huge_kib, before.huge_kib);
}

TEST(PageTablesTest, HugePageCountedAlsoWhenProtNone) {
  AlignedMapping m(kHuge);
  ASSERT_TRUE(m.ok());
  const PageTableCount before = CountFromPageTables();
  if (before.huge_kib < 0) {
    GTEST_SKIP() << "page frame numbers hidden (not root): no huge count";
  }
  if (madvise(m.begin(), kHuge, MADV_HUGEPAGE) != 0) {
    GTEST_SKIP() << "no transparent huge pages here";
  }
  m.begin()[0] = 1;
  const SmapsEntry faulted = SmapsOf(m.begin());
  if (faulted.anon_huge_kib != 2048) {
    GTEST_SKIP() << "the kernel gave no huge page (THP never, or none free): "
                 << "smaps AnonHugePages " << faulted.anon_huge_kib << " KiB";
  }
  const PageTableCount huge = CountFromPageTables();
  EXPECT_EQ(huge.huge_kib - before.huge_kib, 2048);
  EXPECT_GE(huge.present_kib - before.present_kib, 2048);

  // What a NUMA hinting fault is waiting on: the PMD without access.
  ASSERT_EQ(mprotect(m.begin(), kHuge, PROT_NONE), 0);
  const PageTableCount hidden = CountFromPageTables();
  EXPECT_EQ(hidden.huge_kib, huge.huge_kib);
  EXPECT_EQ(hidden.present_kib, huge.present_kib);
  const SmapsEntry smaps = SmapsOf(m.begin());
  std::printf(
      "smaps of the PROT_NONE huge page: Rss %ld KiB, "
      "AnonHugePages %ld KiB (pagemap: 2048 present)\n",
      smaps.rss_kib, smaps.anon_huge_kib);
}

}  // namespace
}  // namespace memory_probe
