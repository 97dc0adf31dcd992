// State that one CPU node's threads write on their slow paths (a node's
// inbox of remote frees, its refill count, its event counters, its stores of
// spans and node lists), whole 4 KiB pages per node (one, or two for the
// inbox and its pool). Each page is first written by its node's own threads,
// so first touch puts it on their node, with or without mbind; in one static
// array, every other node's threads would pay a remote miss for each write.
//
// The pages come from SparseAlloc (no huge pages: a 2 MiB page would put all
// nodes' pages on one node) once the layer has several CPU nodes (Place()).
// Until then, and if the kernel refuses the mapping, a static line per node
// serves. T must be usable as all-zero memory, unwritten: a constructor run
// by the placing thread would put every page on its node.
#ifndef NUMA_TCMALLOC_NUMA_NODE_PAGES_H_
#define NUMA_TCMALLOC_NUMA_NODE_PAGES_H_

#include <stddef.h>
#include <string.h>

#include "numa/node_class.h"
#include "numa/sparse_memory.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

template <typename T>
class NodePages {
 public:
  static constexpr size_t kPageBytes = 4096;  // the smallest kernel page

  // From now on node n's state is on page n. Call before the state is first
  // used (what the static lines hold is not carried over); later calls do
  // nothing.
  void Place() {
    if (__atomic_load_n(&pages_, __ATOMIC_ACQUIRE) != nullptr) return;
    void* memory = SparseAlloc(sizeof(Page) * kMaxCpuNodes);
    __atomic_store_n(&pages_, static_cast<Page*>(memory), __ATOMIC_RELEASE);
  }

  // Node `node`'s state (node < kMaxCpuNodes).
  T& operator[](int node) {
    Page* pages = __atomic_load_n(&pages_, __ATOMIC_ACQUIRE);
    return pages != nullptr ? pages[node].state : lines_[node].state;
  }

  // Calls f(state) on each node's static line, then on each node's page once
  // placed: for totals that count what was written before Place() too.
  template <typename F>
  void ForEach(F f) {
    for (Line& line : lines_) f(line.state);
    Page* pages = __atomic_load_n(&pages_, __ATOMIC_ACQUIRE);
    if (pages == nullptr) return;
    for (int node = 0; node < kMaxCpuNodes; ++node) f(pages[node].state);
  }

  // Zeroes every node's state (re-initialisation, tests), writing only what
  // was written before: a page that is only read stays unplaced.
  void Clear() {
    ForEach([](T& state) {
      const unsigned char* bytes = reinterpret_cast<unsigned char*>(&state);
      for (size_t i = 0; i < sizeof(T); ++i) {
        if (bytes[i] != 0) {
          memset(static_cast<void*>(&state), 0, sizeof(T));
          return;
        }
      }
    });
  }

 private:
  struct alignas(kPageBytes) Page {
    T state;
  };
  struct alignas(64) Line {
    T state;
  };

  Page* pages_ = nullptr;
  Line lines_[kMaxCpuNodes] = {};
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_NODE_PAGES_H_
