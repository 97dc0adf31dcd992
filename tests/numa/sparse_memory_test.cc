// SparseAlloc: zeroed, page-aligned metadata memory without huge pages, carved
// in order from few mappings (numa/sparse_memory.h).
#include "numa/sparse_memory.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tcmalloc {
namespace numa {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The VmFlags line of the mapping that holds `p`, from /proc/self/smaps.
std::string VmFlagsAt(const void* p) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin, end;
    if (sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {
      inside = begin <= addr && addr < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// The mapping hook sees each fresh mapping once, whole, before SparseAlloc
// hands out any of it, and no call carved from a mapping already made.
std::vector<std::pair<uintptr_t, size_t>>* g_mappings;
void RecordMapping(void* start, size_t len) {
  g_mappings->push_back({reinterpret_cast<uintptr_t>(start), len});
}

TEST(SparseAlloc, TheHookSeesEachFreshMappingOnce) {
  std::vector<std::pair<uintptr_t, size_t>> mappings;
  g_mappings = &mappings;
  SetSparseMappingHook(&RecordMapping);
  // Larger than any step, so that it needs a mapping of its own.
  char* big = static_cast<char*>(SparseAlloc(64 * kMiB));
  char* next = static_cast<char*>(SparseAlloc(4096));
  SetSparseMappingHook(nullptr);
  char* unseen = static_cast<char*>(SparseAlloc(64 * kMiB));
  ASSERT_NE(big, nullptr);
  ASSERT_NE(next, nullptr);
  ASSERT_NE(unseen, nullptr);
  ASSERT_GE(mappings.size(), 1u);
  EXPECT_LE(mappings.size(), 2u) << "the small call maps at most one step";
  EXPECT_EQ(mappings[0].first, reinterpret_cast<uintptr_t>(big));
  EXPECT_GE(mappings[0].second, 64 * kMiB);
  for (const auto& m : mappings) {
    EXPECT_FALSE(m.first <= reinterpret_cast<uintptr_t>(unseen) &&
                 reinterpret_cast<uintptr_t>(unseen) < m.first + m.second)
        << "no hook once it is unset";
  }
  g_mappings = nullptr;
}

// Leaves and node lists of a small process follow one another, so they share
// one mapping instead of adding one each to the process's mapping count.
TEST(SparseAlloc, CallsAreCarvedInOrderFromOneMapping) {
  char* leaf0 = static_cast<char*>(SparseAlloc(2 * kMiB));
  char* leaf1 = static_cast<char*>(SparseAlloc(2 * kMiB));
  char* lists = static_cast<char*>(SparseAlloc(128 << 10));
  ASSERT_NE(leaf0, nullptr);
  ASSERT_NE(leaf1, nullptr);
  ASSERT_NE(lists, nullptr);
  EXPECT_EQ(leaf1, leaf0 + 2 * kMiB);
  EXPECT_EQ(lists, leaf1 + 2 * kMiB);
}

TEST(SparseAlloc, ZeroedPageAlignedWithoutHugePages) {
  char* p = static_cast<char*>(SparseAlloc(5000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  char* q = static_cast<char*>(SparseAlloc(1));
  EXPECT_EQ(q, p + 8192) << "5000 bytes take two pages";
  for (int i = 0; i < 8192; ++i) ASSERT_EQ(p[i], 0) << i;
  memset(p, 1, 8192);
  EXPECT_NE(VmFlagsAt(p).find(" nh"), std::string::npos) << VmFlagsAt(p);
}

// Callers hold different locks (the page heap lock, the log blocks' chunk
// lock), so SparseAlloc must keep concurrent carvings apart by itself: no
// page handed out twice.
TEST(SparseAlloc, ConcurrentCallsGetDisjointPages) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 4000;
  std::vector<std::vector<uintptr_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&got, t] {
      got[t].reserve(kCalls);
      for (int i = 0; i < kCalls; ++i) {
        got[t].push_back(reinterpret_cast<uintptr_t>(SparseAlloc(4096)));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<uintptr_t> all;
  for (const auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  int shared = 0;
  for (size_t i = 1; i < all.size(); ++i) shared += all[i] == all[i - 1];
  EXPECT_EQ(shared, 0) << "pages handed out twice";
  EXPECT_NE(all.front(), 0u) << "a call failed";
}

// The lock SparseAlloc takes is the one fork() holds: a call waits for it.
TEST(SparseAlloc, WaitsForTheLockForkHolds) {
  std::atomic<bool> done{false};
  LockSparseMemory();
  std::thread t([&done] {
    SparseAlloc(4096);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done) << "SparseAlloc did not wait for the lock";
  UnlockSparseMemory();
  t.join();
  EXPECT_TRUE(done);
}

TEST(SparseAlloc, LargerThanAStepGetsItsOwnMapping) {
  char* big = static_cast<char*>(SparseAlloc(20 * kMiB));
  ASSERT_NE(big, nullptr);
  big[20 * kMiB - 1] = 1;
  EXPECT_NE(VmFlagsAt(big + 20 * kMiB - 1).find(" nh"), std::string::npos);
}

// An arena that hands out its own buffer in order, unaligned, and counts.
alignas(4096) char g_arena_buffer[64 * 1024 + 1];
size_t g_arena_used = 1;  // so that nothing it returns is page aligned
int g_arena_calls = 0;
void* TestArena(size_t bytes) {
  ++g_arena_calls;
  if (g_arena_used + bytes > sizeof(g_arena_buffer)) return nullptr;
  void* p = g_arena_buffer + g_arena_used;
  g_arena_used += bytes;
  return p;
}

TEST(SparseAlloc, UnderALimitSmallRequestsComeFromTheArenaPageAligned) {
  SetSparseArena(&TestArena);
  char* a = static_cast<char*>(SparseAlloc(100));
  char* b = static_cast<char*>(SparseAlloc(4096));
  char* big = static_cast<char*>(SparseAlloc(2 * kMiB));    // its own mapping
  char* none = static_cast<char*>(SparseAlloc(60 * 1024));  // arena full
  SetSparseArena(nullptr);
  const int calls = g_arena_calls;
  char* after = static_cast<char*>(SparseAlloc(100));
  EXPECT_EQ(g_arena_calls, calls);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(calls, 3);
  for (char* p : {a, b, big, after}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  }
  const auto in_arena = [](const char* p) {
    return p >= g_arena_buffer && p < g_arena_buffer + sizeof(g_arena_buffer);
  };
  EXPECT_TRUE(in_arena(a) && in_arena(b));
  EXPECT_GE(b, a + 4096);
  EXPECT_LE(b + 4096, g_arena_buffer + sizeof(g_arena_buffer));
  EXPECT_FALSE(in_arena(big) || in_arena(after));
  big[2 * kMiB - 1] = 1;
}

// A program's SysAllocator may hand the arena recycled memory.
TEST(SparseAlloc, ArenaMemoryIsZeroedWhenItIsNot) {
  g_arena_used = 1;
  memset(g_arena_buffer, 0xab, sizeof(g_arena_buffer));
  SetSparseArena(&TestArena);
  char* p = static_cast<char*>(SparseAlloc(8192));
  SetSparseArena(nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(std::all_of(p, p + 8192, [](char c) { return c == 0; }));
}

TEST(SparseAlloc, RefusesWhatCannotBeMapped) {
  EXPECT_EQ(SparseAlloc(0), nullptr);
  EXPECT_EQ(SparseAlloc(~size_t{0}), nullptr);
  EXPECT_EQ(SparseAlloc(size_t{1} << 62), nullptr);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
