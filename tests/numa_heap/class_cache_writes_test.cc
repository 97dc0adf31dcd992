// The page map's class cache is written only when an entry changes (patch
// 0012). Every free reads its page's entry; a remote free reads one its owner
// node wrote, and each write takes that line out of every other node's cache.
// A span recycled with its class used to write its first page's entry twice
// (invalidated when the span was made, rewritten by Populate), though nothing
// changed. These tests fail against the series without 0012: the second Put
// writes a read-only page, and NewWithSizeClass invalidates the entry.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "gtest/gtest.h"
#include "packed-cache-inl.h"
#include "page_heap.h"
#include "span.h"

namespace {

using Cache = PackedCache<kAddressBits - kPageShift>;

// A cache in a mapping of its own, so that the page of one entry can be made
// read-only: a store to it then kills the process.
class ReadOnlyEntry {
 public:
  explicit ReadOnlyEntry(Cache::K key) : key_(key) {
    memory_ = mmap(nullptr, sizeof(Cache), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cache_ = new (memory_) Cache;
  }
  ~ReadOnlyEntry() { munmap(memory_, sizeof(Cache)); }

  Cache* cache() { return cache_; }
  // The page holding key's entry becomes read-only.
  // ASSERT_NO_FATAL_FAILURE(Freeze()): a failure must end the test.
  void Freeze() {
    const uintptr_t entry =
        reinterpret_cast<uintptr_t>(memory_) +
        (key_ & ((Cache::K{1} << Cache::kHashbits) - 1)) * sizeof(uintptr_t);
    const uintptr_t page = entry & ~(uintptr_t{4095});
    ASSERT_EQ(mprotect(reinterpret_cast<void*>(page), 4096, PROT_READ), 0);
  }

 private:
  Cache::K key_;
  void* memory_;
  Cache* cache_;
};

constexpr Cache::K kKey = 0x123456789;  // a page number, as free() asks

TEST(ClassCacheWrites, AnUnchangedEntryIsNotWrittenAgain) {
  ReadOnlyEntry entry(kKey);
  entry.cache()->Put(kKey, 17);
  ASSERT_NO_FATAL_FAILURE(entry.Freeze());
  entry.cache()->Put(kKey, 17);  // a store here would kill the test
  Cache::V value = 0;
  EXPECT_TRUE(entry.cache()->TryGet(kKey, &value));
  EXPECT_EQ(value, 17u);
}

TEST(ClassCacheWrites, AChangedEntryIsWritten) {
  // The control of the test above: its frozen page does catch a store.
  EXPECT_EXIT(
      {
        ReadOnlyEntry entry(kKey);
        entry.cache()->Put(kKey, 17);
        ASSERT_NO_FATAL_FAILURE(entry.Freeze());
        entry.cache()->Put(kKey, 18);
        _exit(0);
      },
      testing::KilledBySignal(SIGSEGV), "");
  ReadOnlyEntry entry(kKey);
  entry.cache()->Put(kKey, 17);
  entry.cache()->Put(kKey, 18);
  Cache::V value = 0;
  EXPECT_TRUE(entry.cache()->TryGet(kKey, &value));
  EXPECT_EQ(value, 18u);
}

// A page heap of its own (as upstream's page_heap_test makes one): with one
// span's worth of memory, a span deleted and made again has the same pages.
TEST(ClassCacheWrites, ASmallSpanLeavesItsEntryToPopulate) {
  constexpr uint32_t kClass = 3;
  auto* heap = new tcmalloc::PageHeap;
  tcmalloc::Span* span = heap->NewWithSizeClass(1, kClass);
  ASSERT_NE(span, nullptr);
  const PageID page = span->start;
  heap->SetCachedSizeClass(page, kClass);  // what Populate does
  heap->Delete(span);

  span = heap->NewWithSizeClass(1, kClass);
  ASSERT_NE(span, nullptr);
  ASSERT_EQ(span->start, page);
  uint32_t cl = 0;
  EXPECT_TRUE(heap->TryGetSizeClass(page, &cl))
      << "a span made for a size class is cached by Populate; invalidating "
         "its first page first writes the entry twice";
  EXPECT_EQ(cl, kClass);
  heap->Delete(span);

  // A large span (or a sampled object's) is never cached, so a stale entry
  // of its first page would name a class free() then trusts.
  span = heap->New(1);
  ASSERT_NE(span, nullptr);
  ASSERT_EQ(span->start, page);
  EXPECT_FALSE(heap->TryGetSizeClass(page, &cl));
  heap->Delete(span);
  // The heap's memory stays with the process, as page_heap_test's does.
}

}  // namespace
