// Out of metadata memory when a node's page heap is to be made (fake 2-node
// topology, the stand-in installed before node 1 allocates anything): the
// node cannot serve, and its threads' allocations are served by node 0,
// large and small, without a crash. Before the fix a node heap was placed
// in MetaDataAlloc's result unchecked, and this segfaulted.
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gperftools/malloc_extension.h"
#include "gtest/gtest.h"
#include "numa/node_heaps.h"
#include "tests/numa_heap/fake_two_nodes.h"

namespace {

using fake_two_nodes::PinToCpu;
using fake_two_nodes::Property;
using fake_two_nodes::RegionOf;

void* NoMetadata(size_t) { return nullptr; }

TEST(NodeHeapMetadata, ANodeWithoutItsHeapIsServedByTheOthers) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  ASSERT_EQ(Property("tcmalloc.numa.num_nodes"), 2u);
  ASSERT_EQ(Property("tcmalloc.numa.node1.pageheap_system_bytes"), 0u)
      << "node 1 must not have allocated before the stand-in is in place";
  tcmalloc::numa::NodeHeaps::SetStorageForTest(NoMetadata);

  ASSERT_NO_FATAL_FAILURE(
      std::thread([] {
        ASSERT_TRUE(PinToCpu(1));
        // Large: page-level memory from node 1's heap, which cannot be made.
        const int saved_errno = errno = 1234;
        void* big = malloc(4 << 20);
        ASSERT_NE(big, nullptr);
        EXPECT_EQ(errno, saved_errno) << "a served request leaves errno alone";
        memset(big, 1, 4 << 20);
        EXPECT_EQ(RegionOf(big), 0) << "node 0's heap served it";
        free(big);

        // Small: node 1's central lists cannot get a span; objects come from
        // node 0's, and go back there whichever delete frees them.
        const size_t borrowed_before =
            Property("tcmalloc.numa.borrowed_objects");
        std::vector<void*> objects;
        for (int i = 0; i < 20000; ++i) {
          objects.push_back(::operator new(48));
          memset(objects.back(), 2, 48);
        }
        EXPECT_GT(Property("tcmalloc.numa.borrowed_objects"), borrowed_before);
        for (void* p : objects) EXPECT_EQ(RegionOf(p), 0);
        for (size_t i = 0; i < objects.size(); ++i) {
          if (i % 2 == 0) {
            ::operator delete(objects[i], 48);
          } else {
            free(objects[i]);
          }
        }
      }).join());

  EXPECT_EQ(Property("tcmalloc.numa.node1.pageheap_system_bytes"), 0u);
  tcmalloc::numa::NodeHeaps::SetStorageForTest(nullptr);
  // With metadata back, node 1 makes its heap and serves itself.
  ASSERT_NO_FATAL_FAILURE(std::thread([] {
                            ASSERT_TRUE(PinToCpu(1));
                            void* big = malloc(4 << 20);
                            ASSERT_NE(big, nullptr);
                            EXPECT_EQ(RegionOf(big), 1);
                            free(big);
                          }).join());
}

}  // namespace

int main(int argc, char** argv) {
  // The allocator reads its knobs once, at start-up: set them and re-execute.
  // Everything but the test's threads runs on CPU 0 (node 0) from exec on,
  // so that node 1 has allocated nothing before the test begins.
  if (getenv("TCMALLOC_NUMA_FAKE_NODES") == nullptr) {
    setenv("TCMALLOC_NUMA_FAKE_NODES", "2", 1);
    PinToCpu(0);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
