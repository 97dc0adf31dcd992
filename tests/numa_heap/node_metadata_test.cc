// Where a CPU node's allocator metadata lies, under a fake two-node topology
// (TCMALLOC_NUMA_FAKE_NODES=2 puts CPU i on node i % 2). A node's central
// lists stay untouched until the node's first thread cache makes them, so
// that the kernel puts their pages where that thread runs; a node's spans
// never share a page with another node's; nor do the page map's class cache
// entries its frees read, which nobody clears at start. (Which node the kernel
// chose is the lab's to check: node_metadata_probe.cc.)
//
// main() re-executes the binary pinned to CPU 0 with the knobs set, so that
// no thread has run on node 1 when the tests start. `--numa-off-control`
// runs it with TCMALLOC_NUMA=0, where one set of lists, made at start,
// serves every thread and all spans come from one allocator: the tests then
// assert that their measures see exactly that, so they are measures that can
// fail.
#include "tests/numa_heap/node_metadata.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "numa/node_heaps.h"

namespace {

using node_metadata::AddMetadataPages;
using node_metadata::AddOwnStatePages;
using node_metadata::AllCachePages;
using node_metadata::AllListPages;
using node_metadata::MetadataPages;
using node_metadata::ResidentPages;

constexpr size_t kSizes[] = {16, 64, 1024, 8192, 65536};
constexpr int kPerSize = 64;

bool NumaOffControl() {
  const char* v = getenv("TCMALLOC_NUMA");
  return v != nullptr && strcmp(v, "0") == 0;
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

// Runs `body` on a new thread pinned to `cpu`; false if it could not pin.
bool RunOnCpu(int cpu, const std::function<void()>& body) {
  bool pinned = false;
  std::thread t([&] {
    pinned = PinToCpu(cpu);
    if (pinned) body();
  });
  t.join();
  return pinned;
}

// kPerSize objects of each size, kept by the caller.
void AllocateSome(std::vector<void*>* objects) {
  for (size_t size : kSizes) {
    for (int i = 0; i < kPerSize; ++i) objects->push_back(malloc(size));
  }
}

std::set<uintptr_t> Intersection(const std::set<uintptr_t>& a,
                                 const std::set<uintptr_t>& b) {
  std::set<uintptr_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::inserter(both, both.begin()));
  return both;
}

// Both in one test: node 1's first thread is the one that must write them.
TEST(NodeMetadata, ANodesListsAndCacheEntriesAreFirstWrittenByItsOwnThread) {
  const std::set<uintptr_t> lists_before = ResidentPages(AllListPages());
  const std::set<uintptr_t> cache_before = ResidentPages(AllCachePages());
  MetadataPages own0, own1;
  AddOwnStatePages(0, &own0);
  AddOwnStatePages(1, &own1);
  const std::set<uintptr_t> own_before = ResidentPages(own1.own);
  std::vector<void*> objects;
  MetadataPages node1;
  // The thread refills on node 0 and moves, an event node 1 counts.
  // Volatile: a malloc freed unused may be elided.
  if (!RunOnCpu(0,
                [&] {
                  void* volatile first = malloc(12345);
                  free(first);
                  if (!PinToCpu(1)) return;
                  AllocateSome(&objects);
                  AddMetadataPages(objects, &node1);
                }) ||
      objects.empty()) {
    GTEST_SKIP() << "needs CPUs 0 and 1";
  }
  ASSERT_FALSE(node1.lists.empty());
  ASSERT_FALSE(node1.cache.empty());
  const std::set<uintptr_t> lists_written =
      Intersection(node1.lists, lists_before);
  const std::set<uintptr_t> cache_written =
      Intersection(node1.cache, cache_before);
  if (NumaOffControl()) {
    // One set of lists, made at start by the main thread on CPU 0, and a
    // cache that upstream clears whole at start.
    EXPECT_FALSE(lists_written.empty());
    EXPECT_FALSE(cache_written.empty());
  } else {
    EXPECT_TRUE(lists_written.empty())
        << lists_written.size() << " of the " << node1.lists.size()
        << " pages of node 1's lists were written before its first thread ran";
    EXPECT_EQ(ResidentPages(node1.lists).size(), node1.lists.size());
    EXPECT_TRUE(cache_written.empty())
        << cache_written.size() << " of the " << node1.cache.size()
        << " pages of node 1's cache entries were written before its first "
           "thread ran";
  }
  // A node's own state (inbox, refill count, counters, growth asks, span
  // store) on pages of its own, first written by its thread; with one node,
  // lines of one static page.
  const std::set<uintptr_t> own_shared = Intersection(own0.own, own1.own);
  if (NumaOffControl()) {
    EXPECT_FALSE(own_shared.empty());
  } else {
    EXPECT_TRUE(own_shared.empty())
        << own_shared.size() << " pages hold both nodes' own state";
    EXPECT_TRUE(own_before.empty())
        << own_before.size() << " of the " << own1.own.size()
        << " pages of node 1's own state were written before its first "
           "thread ran";
    EXPECT_EQ(ResidentPages(own1.own), own1.own)
        << "node 1's thread did not write all of its own state";
    // Node 1's page heap, made by that thread, on pages of its own.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tcmalloc::numa::NodeHeaps::Heap(1)) %
                  node_metadata::kOsPage,
              0u)
        << "node 1's page heap shares its first page with other metadata";
  }
  for (void* object : objects) free(object);
}

// The class cache is not cleared at start with several nodes: a pointer
// below 512 MiB that the allocator never handed out must still be reported
// as invalid, as vanilla reports it, and free(NULL) must still do nothing.
TEST(NodeMetadata, FreeOfAPointerNeverHandedOutStillDies) {
  free(nullptr);
  void* never_handed_out = reinterpret_cast<void*>(uintptr_t{256} << 20);
  EXPECT_DEATH(free(never_handed_out), "Attempt to free invalid pointer");
  EXPECT_DEATH(RunOnCpu(1, [&] { free(never_handed_out); }),
               "Attempt to free invalid pointer");
}

TEST(NodeMetadata, ANodesSpansShareNoPageWithAnotherNodes) {
  std::vector<void*> objects[2];
  MetadataPages pages[2];
  // Alternating, so that one shared allocator would put both nodes' spans
  // side by side.
  for (int round = 0; round < 4; ++round) {
    for (int cpu = 0; cpu < 2; ++cpu) {
      std::vector<void*> fresh;
      if (!RunOnCpu(cpu, [&] {
            AllocateSome(&fresh);
            AddMetadataPages(fresh, &pages[cpu]);
          })) {
        GTEST_SKIP() << "needs CPUs 0 and 1";
      }
      objects[cpu].insert(objects[cpu].end(), fresh.begin(), fresh.end());
    }
  }
  ASSERT_FALSE(pages[0].spans.empty());
  ASSERT_FALSE(pages[1].spans.empty());
  const std::set<uintptr_t> shared =
      Intersection(pages[0].spans, pages[1].spans);
  if (NumaOffControl()) {
    EXPECT_FALSE(shared.empty());
  } else {
    EXPECT_TRUE(shared.empty())
        << shared.size() << " pages hold both nodes' spans";
  }
  for (auto& list : objects) {
    for (void* object : list) free(object);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (getenv("NODE_METADATA_TEST_CHILD") == nullptr) {
    setenv("NODE_METADATA_TEST_CHILD", "1", 1);
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    for (int i = 1; i < argc; ++i) {
      if (strcmp(argv[i], "--numa-off-control") == 0) {
        setenv("TCMALLOC_NUMA", "0", 1);
      }
    }
    if (!PinToCpu(0)) {
      fprintf(stderr, "node_metadata_test: cannot pin to CPU 0\n");
      return 1;
    }
    execv("/proc/self/exe", argv);
    perror("node_metadata_test: execv");
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
