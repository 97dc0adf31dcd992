// Objects of one size chosen at run time, each starting a page unless asked
// otherwise, carved (BumpCarve) from SparseAlloc'd chunks so that each page
// lands on the node that writes it first (numa/sparse_memory.h): the
// run-time-sized sibling of upstream's PageHeapAllocator<T>, for thread
// caches' node lists (sized by the node count numa::Init finds) and each CPU
// node's Spans (NodeHeaps::NewSpanStorage). Needs external locking
// (pageheap_lock); never returns memory. Only the allocator compiles this
// file (it uses upstream's Log).
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
  }
  bool ready() const { return object_size_ != 0; }

  // An object, aligned as Init said. Fresh ones are zero; a reused one is as
  // its last user left it, but for its first word, which is cleared. Stops with
  // a message, as upstream's metadata allocators do, when there is no memory
  // left.
  void* New() {
    void* result = free_list_;
    if (result != nullptr) {
      free_list_ = *static_cast<void**>(result);
      *static_cast<void**>(result) = nullptr;
    } else {
      const size_t chunk =
          object_size_ * 8 > kMinChunk ? object_size_ * 8 : kMinChunk;
      result = BumpCarve(&free_area_, &free_avail_, object_size_, chunk,
                         SparseAlloc);
      if (result == nullptr) {
        Log(kCrash, __FILE__, __LINE__,
            "FATAL ERROR: Out of memory trying to allocate internal "
            "tcmalloc data (bytes, object-size)",
            chunk, object_size_);
      }
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
  char* free_area_ = nullptr;
  size_t free_avail_ = 0;
  void* free_list_ = nullptr;
  int inuse_ = 0;
};

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_
