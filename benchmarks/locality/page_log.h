// Where the pages of live blocks really are. A thread records each block it has
// written, while the block is still allocated: the block's pages are looked up
// with move_pages and kept as (page, node of the writing thread, node of the
// page) observations. The log's storage comes from mmap, never from the
// allocator under test.
#ifndef BENCHMARKS_LOCALITY_PAGE_LOG_H_
#define BENCHMARKS_LOCALITY_PAGE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace locality {

// Blocks up to tcmalloc's largest small size class (kMaxSize, 256 KiB) are
// "small"; larger ones are served by the page heap and are "page" blocks.
constexpr size_t kSmallLimit = 256 * 1024;
enum SizeClass : uint8_t { kSmall = 0, kPage = 1, kNumSizeClasses = 2 };
inline SizeClass ClassOf(size_t bytes) {
  return bytes <= kSmallLimit ? kSmall : kPage;
}

struct Observation {
  uintptr_t page;
  int16_t expected;  // node of the thread that wrote the page
  int16_t actual;    // node move_pages reports, or a negative errno
  uint8_t size_class;
};

class PageLog {
 public:
  PageLog() = default;
  ~PageLog();
  PageLog(const PageLog&) = delete;
  PageLog& operator=(const PageLog&) = delete;

  // Looks up every page of [block, block + bytes), which the caller (running on
  // `node`) has written, and records them. The block must still be allocated.
  void Record(const void* block, size_t bytes, int node);

  const Observation* begin() const { return data_; }
  const Observation* end() const { return data_ + size_; }

 private:
  void Append(const Observation& o);

  Observation* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Locality of one workload, per size class and overall.
struct Tally {
  uint64_t pages = 0;    // distinct (page, writer node) pairs
  uint64_t local = 0;    // of which every observation was on the writer's node
  uint64_t unknown = 0;  // of which move_pages gave an error (page not present)
};
struct Summary {
  Tally by_class[kNumSizeClasses];
  Tally all;
};

// Merges the logs of one workload: each (page, writer node) pair counts once;
// it is local only if every observation of it found the page on the writer's
// node.
Summary Summarize(const std::vector<const PageLog*>& logs);

// Makes Summarize name up to `pages` pages that were not local, on stderr,
// with the node the allocator says owns each (tc_numa_node_of, when the
// allocator has it): a diagnosis of a short row, not part of the figures.
void ExplainPages(int pages);
int ExplainedPages();  // the limit ExplainPages set (0: none)

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_PAGE_LOG_H_
