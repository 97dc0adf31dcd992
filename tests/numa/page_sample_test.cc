// SamplePages against this machine's kernel: what move_pages reports for
// untouched, written and partly written memory.
#include "numa/page_sample.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"
#include "tests/numa/mapping.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::Mapping;

// The kernel node holding the calling thread's freshly written pages.
int NodeOfFreshPage() {
  Mapping m(getpagesize());
  static_cast<char*>(m.get())[0] = 1;
  PageSample s;
  for (int node = 0; node < 64; ++node) {
    if (SamplePages(reinterpret_cast<uintptr_t>(m.get()), m.size(), node, &s) &&
        s.on_node == 1) {
      return node;
    }
  }
  return -1;
}

TEST(SamplePages, UntouchedMemoryIsNowhere) {
  Mapping m(1 << 20);
  PageSample s;
  ASSERT_TRUE(
      SamplePages(reinterpret_cast<uintptr_t>(m.get()), m.size(), 0, &s));
  EXPECT_EQ(s.on_node, 0);
  EXPECT_EQ(s.elsewhere, 0);
}

TEST(SamplePages, WrittenPagesAreOnTheirNodeAndNotElsewhere) {
  const int node = NodeOfFreshPage();
  ASSERT_GE(node, 0) << "move_pages found no node for a written page";
  Mapping m(4 << 20);
  memset(m.get(), 1, m.size());
  const uintptr_t start = reinterpret_cast<uintptr_t>(m.get());
  PageSample s;
  ASSERT_TRUE(SamplePages(start, m.size(), node, &s));
  EXPECT_EQ(s.on_node, kMaxSampledPages);  // 1024 pages, a few sampled
  EXPECT_EQ(s.elsewhere, 0);
  // Asked about another node, the same pages are all elsewhere.
  ASSERT_TRUE(SamplePages(start, m.size(), node + 1, &s));
  EXPECT_EQ(s.on_node, 0);
  EXPECT_EQ(s.elsewhere, kMaxSampledPages);
}

TEST(SamplePages, TheSampleSpansTheWholeRange) {
  const int node = NodeOfFreshPage();
  ASSERT_GE(node, 0);
  Mapping m(4 << 20);
  // Under THP=always a huge page could straddle the halves.
  madvise(m.get(), m.size(), MADV_NOHUGEPAGE);
  // Only the second half written: half the sample finds pages.
  memset(static_cast<char*>(m.get()) + m.size() / 2, 1, m.size() / 2);
  PageSample s;
  ASSERT_TRUE(
      SamplePages(reinterpret_cast<uintptr_t>(m.get()), m.size(), node, &s));
  EXPECT_EQ(s.on_node, kMaxSampledPages / 2);
}

TEST(SamplePages, ShortRangesSampleEveryPage) {
  const int node = NodeOfFreshPage();
  ASSERT_GE(node, 0);
  const size_t page = getpagesize();
  Mapping m(3 * page);
  memset(m.get(), 1, m.size());
  PageSample s;
  ASSERT_TRUE(
      SamplePages(reinterpret_cast<uintptr_t>(m.get()), m.size(), node, &s));
  EXPECT_EQ(s.on_node, 3);
  // Less than a whole page: no page to ask about, an empty sample.
  ASSERT_TRUE(SamplePages(reinterpret_cast<uintptr_t>(m.get()) + 1, page - 2,
                          node, &s));
  EXPECT_EQ(s.on_node + s.elsewhere, 0);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
