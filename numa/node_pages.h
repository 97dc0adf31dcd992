// State one CPU node's threads write on their slow paths, a 4 KiB page per
// node (two for the inbox and its pool), so that first touch puts it on their
// node (docs/design.md, "Each node's metadata on its node"; SparseAlloc, no
// huge pages: numa/sparse_memory.h). Until Place(), or if the mapping is
// refused, a static line per node serves. T must be usable as all-zero
// memory, unwritten: a constructor run by the placing thread would put every
// page on its node.
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
