// Per-node central free lists and node-aware thread caches under a fake
// two-node topology (TCMALLOC_NUMA_FAKE_NODES=2 puts CPU i on node i % 2).
//
// A block's node is not visible under a fake topology (nothing is bound), so
// these tests follow addresses: a block freed on the wrong node and handed out
// again shows up as the same address. main() re-executes the binary with the
// knobs set; `--local-control` runs it with TCMALLOC_NUMA_REMOTE_FREE=local,
// where a remote free IS reused locally, and the reuse test then asserts that
// its measure sees that reuse (so it is not a measure that cannot fail).
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"
#include "tests/numa_heap/fake_two_nodes.h"

namespace {

using fake_two_nodes::PinToCpu;
using fake_two_nodes::Property;
using fake_two_nodes::RegionOf;

constexpr int kObjects = 4096;
constexpr size_t kSizes[] = {16, 64, 1024, 8192, 65536};

bool LocalControl() {
  const char* v = getenv("TCMALLOC_NUMA_REMOTE_FREE");
  return v != nullptr && strcmp(v, "local") == 0;
}

bool OwnerListsControl() {
  const char* v = getenv("TCMALLOC_NUMA_REMOTE_FREE");
  return v != nullptr && strcmp(v, "owner-lists") == 0;
}

// A byte count, signed for differences.
int64_t Bytes(const std::string& property) {
  return static_cast<int64_t>(Property(property));
}

size_t CentralFreeBytes(int node) {
  return Property("tcmalloc.numa.node" + std::to_string(node) +
                  ".central_cache_free_bytes");
}

// Runs `body` on a new thread pinned to `cpu` (node cpu % 2).
template <typename Body>
void OnCpu(int cpu, Body body) {
  std::thread t([cpu, &body] {
    ASSERT_TRUE(PinToCpu(cpu));
    // Creates this thread's cache first: a thread without one frees straight
    // to the central lists, which would not exercise the cache.
    void* volatile warm = malloc(8);
    free(warm);
    body();
  });
  t.join();
}

std::vector<void*> AllocateMany(size_t size, int n) {
  std::vector<void*> v(n);
  for (void*& p : v) {
    p = malloc(size);
    memset(p, 0x5a, size);
  }
  return v;
}

void FreeAll(const std::vector<void*>& v) {
  for (void* p : v) free(p);
}

// Objects whose first word still reads as AllocateMany wrote it: after a
// free, nothing wrote into them (the memory stays mapped: it is the heap's).
int Untouched(const std::vector<void*>& objects) {
  int untouched = 0;
  for (void* p : objects) {
    uint64_t first_word;
    memcpy(&first_word, p, sizeof(first_word));
    untouched += first_word == 0x5a5a5a5a5a5a5a5aull;
  }
  return untouched;
}

size_t Node0InboxBytes() {
  size_t value = 0;
  MallocExtension::instance()->GetNumericProperty(
      "tcmalloc.numa.node0.remote_free_inbox_bytes", &value);
  return value;
}

int Overlap(const std::vector<void*>& a, const std::vector<void*>& b) {
  const std::set<void*> seen(a.begin(), a.end());
  int n = 0;
  for (void* p : b) n += seen.count(p);
  return n;
}

class FakeTwoNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PinToCpu(0) || !PinToCpu(1)) GTEST_SKIP() << "needs 2 CPUs";
    ASSERT_EQ(Property("tcmalloc.numa.cpu_nodes"), 2u);
  }
};

// A refill on node 0 links in what its inbox holds, and node 0 hands the
// objects out again: most of `freed` comes back.
void ExpectReusedOnNode0(const std::vector<void*>& freed, size_t size) {
  std::vector<void*> again;
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [&] { again = AllocateMany(size, kObjects); }));
  EXPECT_EQ(Node0InboxBytes(), 0u);
  EXPECT_GT(Overlap(freed, again), kObjects / 2);
  FreeAll(again);
}

// Node 0 allocates; a thread on node 1 frees, then allocates the same sizes.
// Owner mode: none of node 0's objects comes back on node 1, every one of
// them is counted as a remote free, and node 0 reuses them afterwards.
TEST_F(FakeTwoNodes, RemoteFreesGoBackToTheirOwner) {
  for (size_t size : kSizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<void*> from_node0, on_node1, node0_again;
    ASSERT_NO_FATAL_FAILURE(
        OnCpu(0, [&] { from_node0 = AllocateMany(size, kObjects); }));
    const size_t remote_before = Property("tcmalloc.numa.remote_free_objects");
    const size_t rerouted_before = Property("tcmalloc.numa.rerouted_objects");
    const size_t drained_before =
        Property("tcmalloc.numa.idle_drained_objects");
    ASSERT_NO_FATAL_FAILURE(OnCpu(1, [&] {
      FreeAll(from_node0);
      on_node1 = AllocateMany(size, kObjects);
      // Returns what the cache still holds, so the count below is exact.
      MallocExtension::instance()->MarkThreadIdle();
    }));
    const int reused = Overlap(from_node0, on_node1);
    if (LocalControl()) {
      // The freeing thread's cache hands some out again (how many depends on
      // its list lengths): the measure sees it.
      EXPECT_GT(reused, 0);
      FreeAll(on_node1);
      continue;
    }
    EXPECT_EQ(reused, 0);
    EXPECT_EQ(Property("tcmalloc.numa.remote_free_objects") - remote_before,
              static_cast<size_t>(kObjects));
    EXPECT_EQ(Property("tcmalloc.numa.rerouted_objects"), rerouted_before);
    // Node 1's refills may have found node 0 idle and given its cached
    // objects back to their spans (IdleNodesCachesAreGivenBack); then node 0
    // need not see the same addresses again.
    const bool drained =
        Property("tcmalloc.numa.idle_drained_objects") != drained_before;
    // Past TCMALLOC_NUMA_MAX_STRANDED_MB (16 MiB by default), node 1's growth
    // above released node 0's free spans, and node 0 takes other addresses.
    const bool stranded = size * kObjects > (size_t{16} << 20);
    ASSERT_NO_FATAL_FAILURE(
        OnCpu(0, [&] { node0_again = AllocateMany(size, kObjects); }));
    if (!drained && !stranded) {
      EXPECT_GE(Overlap(from_node0, node0_again), kObjects / 2)
          << "node 0 did not get its objects back";
    }
    FreeAll(on_node1);
    FreeAll(node0_again);
  }
}

// Half of node 0's objects are freed by node 1 while the other half stay
// live, so their spans stay in the central lists: the freed bytes must show
// up in node 0's central cache, not node 1's.
TEST_F(FakeTwoNodes, CentralFreeBytesArePerNode) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  constexpr size_t kSize = 256;
  std::vector<void*> all, freed, kept;
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [&] { all = AllocateMany(kSize, 2 * kObjects); }));
  for (size_t i = 0; i < all.size(); ++i)
    (i % 2 ? freed : kept).push_back(all[i]);
  const size_t node0_before = CentralFreeBytes(0);
  const size_t node1_before = CentralFreeBytes(1);
  ASSERT_NO_FATAL_FAILURE(OnCpu(1, [&] {
    FreeAll(freed);
    MallocExtension::instance()->MarkThreadIdle();
  }));
  // Logged remote frees wait in node 0's inbox until a refill on node 0
  // links them in: a new thread's first allocation is one.
  ASSERT_NO_FATAL_FAILURE(OnCpu(0, [] {}));
  // Not all of it: making room in a transfer cache may evict another class's
  // slot back to its spans, which leaves the central lists.
  EXPECT_GE(CentralFreeBytes(0), node0_before + kObjects * kSize * 3 / 4);
  EXPECT_LT(CentralFreeBytes(1), node1_before + kObjects * kSize / 2);
  FreeAll(kept);
}

// A thread that moves to node 1 stops allocating node 0's cached objects once
// a slow path (here a page-level allocation) has noticed the move; with the
// default flush policy its node 0 objects went back to node 0 at that point.
TEST_F(FakeTwoNodes, MigratedThreadStopsUsingItsOldNodesObjects) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  const size_t migrations_before = Property("tcmalloc.numa.thread_migrations");
  const size_t flushed_before =
      Property("tcmalloc.numa.migration_flushed_objects");
  std::vector<void*> on_node0, on_node1;
  ASSERT_NO_FATAL_FAILURE(OnCpu(0, [&] {
    on_node0 = AllocateMany(64, kObjects);
    FreeAll(on_node0);  // now cached in this thread, node 0's group
    ASSERT_TRUE(PinToCpu(1));
    void* volatile page_level = malloc(1 << 20);  // a slow path
    free(page_level);
    on_node1 = AllocateMany(64, kObjects);
  }));
  EXPECT_EQ(Overlap(on_node0, on_node1), 0);
  EXPECT_GE(Property("tcmalloc.numa.thread_migrations"), migrations_before + 1);
  EXPECT_GT(Property("tcmalloc.numa.migration_flushed_objects"),
            flushed_before);
  FreeAll(on_node1);
}

// Node 0 allocates objects of `size` (a class no other test here uses);
// `free_on_node1` frees them from node 1 and returns how many of them still
// read as AllocateMany left them. A remote free writes nothing into the
// object: the freeing thread logs it, node 0's inbox holds it (at least
// `inbox_at_least` of its bytes: the rest waits in a partial log) until a
// refill on node 0 links it in. Under owner-lists the freeing thread's list
// pointers land in the objects, and the measure sees them.
template <typename FreeOnNode1>
void ExpectRemoteFreesUntouched(size_t size, size_t inbox_at_least,
                                FreeOnNode1 free_on_node1) {
  std::vector<void*> objects;
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [&] { objects = AllocateMany(size, kObjects); }));
  const size_t inbox_before = Node0InboxBytes();
  const int untouched = free_on_node1(objects);
  ASSERT_FALSE(::testing::Test::HasFatalFailure()) << "node 1's thread failed";
  if (OwnerListsControl()) {
    EXPECT_LT(untouched, kObjects / 2) << "the measure sees list pointers";
    EXPECT_EQ(Node0InboxBytes(), 0u);
  } else {
    EXPECT_EQ(untouched, kObjects);
    EXPECT_GE(Node0InboxBytes(), inbox_before + inbox_at_least);
  }
  ExpectReusedOnNode0(objects, size);
}

// A thread with a cache hands its logs over when it goes idle.
TEST_F(FakeTwoNodes, RemoteFreesLeaveTheObjectUntouched) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  constexpr size_t kSize = 96;
  ExpectRemoteFreesUntouched(kSize, kObjects * kSize, [](auto& objects) {
    int untouched = 0;
    OnCpu(1, [&] {
      FreeAll(objects);
      MallocExtension::instance()->MarkThreadIdle();  // hands its logs over
      untouched = Untouched(objects);
    });
    return untouched;
  });
}

// A thread that marks itself idle gives its cache back: the thread-cache
// figure returns to what it was before the thread ran (upstream's
// markidle_unittest checks this, and failed under 2 fake nodes when the
// scheduler moved its thread). Its remote frees, handed to their owner's
// inbox, count with the central lists, where vanilla would have them.
TEST_F(FakeTwoNodes, IdleThreadLeavesNoThreadCacheBytes) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  constexpr size_t kSize = 1024;
  std::vector<void*> objects;
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [&] { objects = AllocateMany(kSize, kObjects); }));
  // Earlier tests' remote frees wait in node 0's inbox; a refill there links
  // them in before the count starts.
  ASSERT_NO_FATAL_FAILURE(OnCpu(0, [] {}));
  const int64_t thread_before =
      Bytes("tcmalloc.current_total_thread_cache_bytes");
  const int64_t central_before = Bytes("tcmalloc.central_cache_free_bytes");
  int64_t inbox = 0;
  ASSERT_NO_FATAL_FAILURE(OnCpu(1, [&] {
    FreeAll(objects);
    MallocExtension::instance()->MarkThreadIdle();
    inbox = Node0InboxBytes();
  }));
  if (!OwnerListsControl()) {
    EXPECT_GE(inbox, static_cast<int64_t>(kObjects * kSize) / 2)
        << "the remote frees were not handed to node 0";
  }
  EXPECT_LE(Bytes("tcmalloc.current_total_thread_cache_bytes"), thread_before);
  EXPECT_GE(Bytes("tcmalloc.central_cache_free_bytes") - central_before, inbox);
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [] {}));  // links them in for the tests after this one
}

// The same for a thread that never allocates, so has no cache (xmalloc-test's
// releasers): vanilla links each object it frees into the central list. Its
// node's shared log hands over whole blocks (904 objects or 64 KiB of them,
// numa/remote_free_log.h) and keeps the rest.
TEST_F(FakeTwoNodes, CachelessRemoteFreesLeaveTheObjectUntouched) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  constexpr size_t kSize = 112;
  ExpectRemoteFreesUntouched(kSize, kObjects * kSize - (64 << 10),
                             [](auto& objects) {
                               int untouched = 0;
                               std::thread releaser([&] {
                                 // No malloc on this thread: it gets no cache.
                                 if (!PinToCpu(1)) return;
                                 for (void* p : objects) free(p);
                                 untouched = Untouched(objects);
                               });
                               releaser.join();
                               return untouched;
                             });
}

// The CPU nodes split vanilla's per-class transfer-cache cap: for 48-byte
// objects (a class no other test here uses) vanilla keeps at most 64 batches
// of 32, so each of 2 nodes keeps 32 (48 KiB), and the nodes together no
// more than vanilla's one cache.
TEST_F(FakeTwoNodes, TransferCachesShareVanillasCap) {
  constexpr size_t kNodeCap = 32 * 32 * 48;
  // Earlier tests' remote frees wait in node 0's inbox; a refill there links
  // them in (into transfer caches too) before the count starts.
  ASSERT_NO_FATAL_FAILURE(OnCpu(0, [] {}));
  const size_t before = Property("tcmalloc.transfer_cache_free_bytes");
  // A thread that exits returns its cache to node 0's lists in batches.
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(0, [] { FreeAll(AllocateMany(48, 4 * kObjects)); }));
  const size_t held = Property("tcmalloc.transfer_cache_free_bytes") - before;
  EXPECT_GE(held, kNodeCap * 3 / 4) << "the cache filled up";
  EXPECT_LE(held, kNodeCap + 8192) << "node 0 kept more than its share";
}

// A node whose threads have left keeps objects in its central lists'
// transfer caches; they go back to their spans (and free spans to node 1's
// page heap) once node 0 has made enough refills to see node 1 idle
// (numa/idle_nodes.h: (kQuietLooks + 1) * 1024 refills).
TEST_F(FakeTwoNodes, IdleNodesCachesAreGivenBack) {
  ASSERT_NO_FATAL_FAILURE(
      OnCpu(1, [] { FreeAll(AllocateMany(64, 8 * kObjects)); }));
  const size_t cached = CentralFreeBytes(1);
  ASSERT_GE(cached, size_t{64} * kObjects) << "node 1 kept nothing to give";
  const size_t drained_before = Property("tcmalloc.numa.idle_drained_objects");

  ASSERT_NO_FATAL_FAILURE(OnCpu(0, [] {
    // Refills: 16-byte objects come 32 to a refill once a list is warm.
    for (int round = 0; round < 4; ++round) {
      FreeAll(AllocateMany(16, 32 * kObjects));
      // Returns them to node 0's central lists, so the next round refills.
      MallocExtension::instance()->MarkThreadIdle();
    }
  }));
  // What stays is free space in spans that still hold live objects.
  EXPECT_LE(CentralFreeBytes(1), cached / 2);
  // At least the 64-byte class's share of the transfer cache: 32 entries of
  // 32 objects.
  EXPECT_GE(Property("tcmalloc.numa.idle_drained_objects"),
            drained_before + 1024);
}

// Node 1's region cannot grow (a page mapped right after what it reserved,
// as a full window would): once its reservation is used up, its threads'
// small objects are borrowed from node 0, one at a time, and go straight
// back there: neither a span nor an object of node 0 ever enters node 1's
// lists, so nothing is rerouted. Runs last: node 1 stays blocked.
TEST_F(FakeTwoNodes, ZZ_ANodeThatCannotGrowBorrowsObjectsNotSpans) {
  if (LocalControl()) GTEST_SKIP() << "owner mode only";
  const uintptr_t end = Property("tcmalloc.numa.node1.region_begin") +
                        Property("tcmalloc.numa.node1.region_reserved_bytes");
  void* wall = mmap(reinterpret_cast<void*>(end), 4096, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(wall, reinterpret_cast<void*>(end)) << "cannot block node 1";
  const size_t borrowed = Property("tcmalloc.numa.borrowed_objects");
  const size_t rerouted = Property("tcmalloc.numa.rerouted_objects");
  std::vector<void*> objects;
  ASSERT_NO_FATAL_FAILURE(OnCpu(1, [&] {
    // Twice what node 1 reserved, in 1 KiB objects.
    const size_t n =
        2 * Property("tcmalloc.numa.node1.region_reserved_bytes") / 1024;
    for (size_t i = 0; i < n; ++i) {
      objects.push_back(::operator new(1024));
      memset(objects.back(), 7, 1024);
    }
  }));
  int on_node[2] = {0, 0};
  for (void* p : objects) {
    const int node = RegionOf(p);
    ASSERT_GE(node, 0);
    ++on_node[node];
  }
  EXPECT_GT(on_node[1], 0) << "node 1 served what it had";
  EXPECT_GT(on_node[0], 0) << "then borrowed node 0's objects";
  EXPECT_GE(Property("tcmalloc.numa.borrowed_objects") - borrowed,
            static_cast<size_t>(on_node[0]));
  EXPECT_GT(Property("tcmalloc.numa.region_failures"), 0u);
  ASSERT_NO_FATAL_FAILURE(OnCpu(1, [&] {
    for (size_t i = 0; i < objects.size(); ++i) {
      if (i % 2 == 0) {
        ::operator delete(objects[i], 1024);
      } else {
        free(objects[i]);
      }
    }
  }));
  EXPECT_EQ(Property("tcmalloc.numa.rerouted_objects"), rerouted)
      << "every object went straight back to its owner's lists";
}

}  // namespace

int main(int argc, char** argv) {
  // The allocator reads its knobs once, at start-up: set them and re-execute.
  if (getenv("TCMALLOC_NUMA_FAKE_NODES") == nullptr) {
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    for (int i = 1; i < argc; ++i) {
      if (strcmp(argv[i], "--local-control") == 0) {
        setenv("TCMALLOC_NUMA_REMOTE_FREE", "local", 1);
      }
      if (strcmp(argv[i], "--owner-lists-control") == 0) {
        setenv("TCMALLOC_NUMA_REMOTE_FREE", "owner-lists", 1);
      }
    }
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
