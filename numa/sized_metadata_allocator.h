// Carves objects of one size, chosen at run time, out of tcmalloc's metadata
// memory: the run-time-sized sibling of upstream's PageHeapAllocator<T>.
//
// Thread caches with per-node lists need it: their size depends on the node
// count, which is known only after numa::Init. Like PageHeapAllocator it
// needs external locking (the caller holds pageheap_lock) and never returns
// memory to the system.
//
// Only the allocator compiles this file (it lives at
// src/numa/sized_metadata_allocator.h in the gperftools tree and uses
// upstream's MetaDataAlloc and Log).
#ifndef NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_
#define NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "common.h"            // MetaDataAlloc
#include "internal_logging.h"  // Log, kCrash

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

class SizedMetadataAllocator {
 public:
  constexpr SizedMetadataAllocator() = default;

  // Objects are rounded up to whole cache lines, so that one object's hot
  // fields never share a line with the next object's.
  //
  // With page_offset > 0, objects are whole kPage multiples placed so that
  // each one's byte page_offset starts a page: an object whose tail is made
  // of page-sized parts that are often left untouched then costs resident
  // memory only for the parts it uses.
  void Init(size_t object_size, size_t page_offset = 0) {
    page_offset_ = page_offset;
    const size_t unit = page_offset > 0 ? kPage : 64;
    object_size_ = (object_size + unit - 1) & ~(unit - 1);
    chunk_size_ = object_size_ * 8 > kMinChunk ? object_size_ * 8 : kMinChunk;
  }

  size_t object_size() const { return object_size_; }

  void* New() {
    void* result;
    if (free_list_ != nullptr) {
      result = free_list_;
      free_list_ = *static_cast<void**>(result);
    } else {
      if (free_avail_ < object_size_) {
        const size_t slack = page_offset_ > 0 ? kPage : 0;
        free_area_ = static_cast<char*>(MetaDataAlloc(chunk_size_ + slack));
        if (free_area_ == nullptr) {
          Log(kCrash, __FILE__, __LINE__,
              "FATAL ERROR: Out of memory trying to allocate internal "
              "tcmalloc data (bytes, object-size)",
              chunk_size_, object_size_);
        }
        free_avail_ = chunk_size_;
        if (page_offset_ > 0) {
          const uintptr_t at =
              reinterpret_cast<uintptr_t>(free_area_) + page_offset_;
          free_area_ += ((at + kPage - 1) & ~(kPage - 1)) - at;
        }
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
  size_t page_offset_ = 0;
  size_t chunk_size_ = 0;
  char* free_area_ = nullptr;
  size_t free_avail_ = 0;
  void* free_list_ = nullptr;
  int inuse_ = 0;
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_SIZED_METADATA_ALLOCATOR_H_
