// Carves objects of one size, chosen at run time, out of tcmalloc's metadata
// memory, each starting a page unless asked otherwise: the run-time-sized
// sibling of upstream's PageHeapAllocator<T>, whose chunks come from
// SparseAlloc (their own mappings, without huge pages; fresh ones are zero),
// so that each 4 KiB page lands on the node that writes it first.
//
// A thread cache's node lists need it: their size depends on the node count,
// known only after numa::Init, and each node's lists start a page, so that
// the lists of nodes a thread never uses stay untouched memory. Each CPU
// node's Spans come from one too (numa/node_heaps.cc), so that no page holds
// two nodes' spans. Like PageHeapAllocator it needs external locking (the
// caller holds pageheap_lock) and never returns memory to the system.
//
// Only the allocator compiles this file (it lives at
// src/numa/sized_metadata_allocator.h in the gperftools tree and uses
// upstream's MetaDataAlloc and Log).
#ifndef NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_
#define NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "internal_logging.h"  // Log, kCrash
#include "numa/sparse_memory.h"

namespace tcmalloc {
namespace numa {

class SizedMetadataAllocator {
 public:
  constexpr SizedMetadataAllocator() = default;

  // Objects of object_size bytes, rounded up to a multiple of `align` (a
  // power of two; whole pages by default).
  void Init(size_t object_size, size_t align = kPage) {
    object_size_ = (object_size + align - 1) & ~(align - 1);
    chunk_size_ = object_size_ * 8 > kMinChunk ? object_size_ * 8 : kMinChunk;
  }
  bool ready() const { return object_size_ != 0; }

  // An object, aligned as Init said. Fresh ones are zero; a reused one is as
  // its last user left it, but for its first word, which is cleared. Stops with
  // a message, as upstream's metadata allocators do, when there is no memory
  // left.
  void* New() {
    void* result;
    if (free_list_ != nullptr) {
      result = free_list_;
      free_list_ = *static_cast<void**>(result);
      *static_cast<void**>(result) = nullptr;
    } else {
      if (free_avail_ < object_size_) {
        char* area = static_cast<char*>(SparseAlloc(chunk_size_));
        if (area == nullptr) {
          Log(kCrash, __FILE__, __LINE__,
              "FATAL ERROR: Out of memory trying to allocate internal "
              "tcmalloc data (bytes, object-size)",
              chunk_size_, object_size_);
        }
        free_area_ = area;  // page aligned
        free_avail_ = chunk_size_;
      }
      result = free_area_;
      free_area_ += object_size_;
      free_avail_ -= object_size_;
    }
    ++inuse_;
    return result;
  }

  void Delete(void* p) {
    *static_cast<void**>(p) = free_list_;
    free_list_ = p;
    --inuse_;
  }

  int inuse() const { return inuse_; }

 private:
  static constexpr size_t kMinChunk = 128 << 10;  // PageHeapAllocator's
  static constexpr size_t kPage = 4096;           // the smallest kernel page

  size_t object_size_ = 0;
  size_t chunk_size_ = 0;
  char* free_area_ = nullptr;
  size_t free_avail_ = 0;
  void* free_list_ = nullptr;
  int inuse_ = 0;
};

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_
