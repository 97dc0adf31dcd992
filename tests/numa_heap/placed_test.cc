// The placement API (gperftools/numa.h) inside the allocator, in the modes a
// process can be in on this machine: the layer off (one node, the default
// here), a fake two-node layer (TCMALLOC_NUMA_FAKE_NODES=2: named nodes 0 and
// 1 exist, nothing is bound) and TCMALLOC_NUMA=0. main() sets the mode's
// environment and re-executes itself. Placement on real nodes is checked in
// the lab (tests/numa_heap/placed_lab_run).
//
//   placed_test [--mode off|fake2|numa0|mixing-control]
// mixing-control runs the reuse test with the kinds not kept apart
// (SetPlacedSeparationForTest) and expects it to see placed objects come back
// from plain malloc: the reuse test can fail.
#include "numa/placed.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gperftools/malloc_extension.h"
#include "gperftools/numa.h"
#include "gtest/gtest.h"
#include "numa/owner.h"

namespace {

using tcmalloc::numa::MemoryKind;
using tcmalloc::numa::OwnerOf;

std::string Mode() {
  const char* m = getenv("PLACED_TEST_MODE");
  return m != nullptr ? m : "off";
}

std::vector<int> Nodes() {
  int ids[64];
  const int n = tc_numa_node_ids(ids, 64);
  return std::vector<int>(ids, ids + (n < 64 ? n : 64));
}

MemoryKind KindOf(const void* p) { return OwnerOf(p).kind; }

TEST(Placed, NodesAreListed) {
  const std::vector<int> nodes = Nodes();
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(tc_numa_num_nodes(), static_cast<int>(nodes.size()));
  for (size_t i = 1; i < nodes.size(); ++i) EXPECT_LT(nodes[i - 1], nodes[i]);
  if (Mode() == "fake2") EXPECT_EQ(nodes, (std::vector<int>{0, 1}));
  int one = -1;
  EXPECT_EQ(tc_numa_node_ids(&one, 1), static_cast<int>(nodes.size()));
  EXPECT_EQ(one, nodes[0]);
}

TEST(Placed, NamedSmallAndLargeAreTheirNodes) {
  for (int node : Nodes()) {
    for (size_t size : {size_t{1}, size_t{64}, size_t{4000}, size_t{256 << 10},
                        size_t{300 << 10}, size_t{3 << 20}}) {
      char* p = static_cast<char*>(tc_numa_malloc_onnode(size, node));
      ASSERT_NE(p, nullptr) << size;
      EXPECT_EQ(tc_numa_node_of(p), node) << size;
      EXPECT_EQ(KindOf(p), MemoryKind::kNamed);
      EXPECT_GE(malloc_usable_size(p), size);
      EXPECT_EQ(MallocExtension::instance()->GetAllocatedSize(p),
                malloc_usable_size(p));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(max_align_t), 0u);
      memset(p, 0x5a, size);
      free(p);
    }
  }
}

TEST(Placed, InterleavedIsItsOwnKind) {
  for (size_t size : {size_t{48}, size_t{100000}, size_t{8 << 20}}) {
    char* p = static_cast<char*>(tc_numa_malloc_interleaved(size));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(tc_numa_node_of(p), -1);
    EXPECT_EQ(KindOf(p), MemoryKind::kInterleaved);
    memset(p, 1, size);
    free(p);
  }
}

TEST(Placed, BadInputIsRefusedCleanly) {
  const std::vector<int> nodes = Nodes();
  int missing = -1;
  for (int k = 0; k < 64 && missing < 0; ++k) {
    bool used = false;
    for (int n : nodes) used |= n == k;
    if (!used) missing = k;
  }
  for (int node : {-1, -1000, 64, 1 << 30, missing}) {
    errno = 0;
    EXPECT_EQ(tc_numa_malloc_onnode(64, node), nullptr) << node;
    EXPECT_EQ(errno, EINVAL) << node;
  }
  for (size_t size : {~size_t{0}, ~size_t{0} - 4096, size_t{1} << 62}) {
    errno = 0;
    EXPECT_EQ(tc_numa_malloc_onnode(size, nodes[0]), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(tc_numa_malloc_interleaved(size), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
  EXPECT_EQ(tc_numa_node_of(nullptr), -1);
  int x;
  EXPECT_EQ(tc_numa_node_of(&x), -1) << "a stack address";
}

// Freed memory of one kind is never handed out as another.
TEST(Placed, ReuseKeepsKindsApart) {
  const int node = Nodes()[0];
  const bool control = Mode() == "mixing-control";
  tcmalloc::numa::SetPlacedSeparationForTest(!control);
  for (size_t size : {size_t{64}, size_t{4096}}) {
    std::set<void*> named;
    std::vector<void*> batch;
    for (int i = 0; i < 200; ++i) {
      void* p = tc_numa_malloc_onnode(size, node);
      ASSERT_NE(p, nullptr);
      named.insert(p);
      batch.push_back(p);
    }
    for (void* p : batch) free(p);
    batch.clear();
    int mixed = 0;
    for (int i = 0; i < 400; ++i) {
      void* p = malloc(size);
      mixed += named.count(p) + (IsPlaced(OwnerOf(p)) ? 1 : 0);
      batch.push_back(p);
    }
    std::set<void*> plain(batch.begin(), batch.end());
    for (void* p : batch) free(p);
    batch.clear();
    for (int i = 0; i < 400 && !control; ++i) {
      void* p = tc_numa_malloc_onnode(size, node);
      mixed += plain.count(p);
      void* q = tc_numa_malloc_interleaved(size);
      mixed += named.count(q) + plain.count(q);
      batch.push_back(p);
      batch.push_back(q);
    }
    for (void* p : batch) free(p);
    if (control) {
      EXPECT_GT(mixed, 0) << "control: without separation, plain malloc "
                             "hands out the named objects just freed";
    } else {
      EXPECT_EQ(mixed, 0) << size;
    }
  }
  tcmalloc::numa::SetPlacedSeparationForTest(true);
}

// Many objects of one class freed at once: the lists' caches hand batches
// back and forth, and no placed list touches another's slots.
TEST(Placed, ManyObjectsOfOneClass) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const int node = Nodes()[0];
  for (int round = 0; round < 2; ++round) {
    std::vector<void*> objects;
    for (int i = 0; i < 50000; ++i) {
      objects.push_back(tc_numa_malloc_onnode(64, node));
      ASSERT_NE(objects.back(), nullptr);
      objects.push_back(tc_numa_malloc_interleaved(64));
      ASSERT_NE(objects.back(), nullptr);
    }
    for (void* p : objects) free(p);
  }
}

TEST(Placed, ReallocKeepsTheKind) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const int node = Nodes().back();
  char* p = static_cast<char*>(tc_numa_malloc_onnode(100, node));
  ASSERT_NE(p, nullptr);
  memset(p, 7, 100);
  for (size_t size : {size_t{200}, size_t{5000}, size_t{1 << 20},
                      size_t{3 << 20}, size_t{80}}) {
    p = static_cast<char*>(realloc(p, size));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(tc_numa_node_of(p), node) << size;
    EXPECT_EQ(p[0], 7);
    EXPECT_EQ(p[79], 7);
  }
  free(p);
  char* q = static_cast<char*>(tc_numa_malloc_interleaved(64));
  q = static_cast<char*>(realloc(q, 1 << 20));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(KindOf(q), MemoryKind::kInterleaved);
  free(q);
  char* plain = static_cast<char*>(realloc(nullptr, 64));
  EXPECT_FALSE(IsPlaced(OwnerOf(plain)));
  free(plain);
}

TEST(Placed, SizedDeleteOfPlacedObjects) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const int node = Nodes()[0];
  std::set<void*> named;
  for (int round = 0; round < 3; ++round) {
    std::vector<int*> objects;
    for (int i = 0; i < 300; ++i) {
      void* p = tc_numa_malloc_onnode(sizeof(int), node);
      ASSERT_NE(p, nullptr);
      named.insert(p);
      objects.push_back(new (p) int(i));
    }
    for (int* o : objects) ::operator delete(o, sizeof(int));  // sized
  }
  int mixed = 0;
  std::vector<int*> plain;
  for (int i = 0; i < 600; ++i) {
    plain.push_back(new int(i));
    mixed += named.count(plain.back());
  }
  for (int* o : plain) delete o;
  EXPECT_EQ(mixed, 0);
}

TEST(Placed, CppAllocators) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const int node = Nodes().back();
  std::vector<int, tcmalloc::numa::NodeAllocator<int>> v(
      tcmalloc::numa::NodeAllocator<int>{node});
  for (int i = 0; i < 100000; ++i) v.push_back(i);
  EXPECT_EQ(tc_numa_node_of(v.data()), node);
  EXPECT_EQ(v[99999], 99999);
  struct alignas(128) Line {
    char bytes[128];
  };
  std::vector<Line, tcmalloc::numa::InterleavedAllocator<Line>> lines(33);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(lines.data()) % 128, 0u);
  EXPECT_EQ(tc_numa_node_of(lines.data()), -1);
  tcmalloc::numa::NodeAllocator<char> bad(-5);
  bool threw = false;
  try {
    bad.allocate(10);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  EXPECT_TRUE(threw);
}

TEST(Placed, ThreadsOnEveryNodeAtOnce) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const std::vector<int> nodes = Nodes();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const int node = nodes[t % nodes.size()];
      std::vector<void*> mine;
      for (int i = 0; i < 20000; ++i) {
        const size_t size = 16 + (i * 37 + t) % 3000;
        void* p = (i % 3 == 0) ? tc_numa_malloc_interleaved(size)
                               : tc_numa_malloc_onnode(size, node);
        if (p == nullptr) {
          ++wrong;
          continue;
        }
        memset(p, t, size < 64 ? size : 64);
        if (i % 3 != 0 && tc_numa_node_of(p) != node) ++wrong;
        mine.push_back(p);
        if (mine.size() > 64) {
          // Freed by this thread or, every other time, handed to the next.
          free(mine.front());
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Placed, PropertiesAndStats) {
  if (Mode() == "mixing-control") GTEST_SKIP();
  const int node = Nodes()[0];
  void* p = tc_numa_malloc_onnode(5 << 20, node);
  void* q = tc_numa_malloc_interleaved(5 << 20);
  size_t named = 0, interleaved = 0, nodes = 0;
  MallocExtension* m = MallocExtension::instance();
  EXPECT_TRUE(m->GetNumericProperty(
      ("tcmalloc.numa.node" + std::to_string(node) + ".named_system_bytes")
          .c_str(),
      &named));
  EXPECT_GE(named, size_t{5} << 20);
  EXPECT_TRUE(m->GetNumericProperty("tcmalloc.numa.interleaved_system_bytes",
                                    &interleaved));
  EXPECT_GE(interleaved, size_t{5} << 20);
  EXPECT_TRUE(m->GetNumericProperty("tcmalloc.numa.placement_nodes", &nodes));
  EXPECT_EQ(nodes, Nodes().size());
  size_t heap = 0;
  EXPECT_TRUE(m->GetNumericProperty("generic.heap_size", &heap));
  EXPECT_GE(heap, named + interleaved) << "placed heaps count in the totals";
  std::string stats(1 << 16, '\0');
  m->GetStats(&stats[0], stats.size());
  EXPECT_NE(stats.find("NUMA named node"), std::string::npos) << stats;
  EXPECT_NE(stats.find("NUMA interleaved:"), std::string::npos);
  free(p);
  free(q);
}

}  // namespace

int main(int argc, char** argv) {
  if (getenv("PLACED_TEST_MODE") == nullptr) {
    std::string mode = "off";
    for (int i = 1; i < argc; ++i) {
      if (strncmp(argv[i], "--mode=", 7) == 0) mode = argv[i] + 7;
    }
    setenv("PLACED_TEST_MODE", mode.c_str(), 1);
    if (mode == "fake2") setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    if (mode == "numa0") setenv("TCMALLOC_NUMA", "0", 1);
    if (mode == "mixing-control") {
      setenv("TCMALLOC_NUMA", "0", 1);
      setenv("GTEST_FILTER", "Placed.ReuseKeepsKindsApart", 1);
    }
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
