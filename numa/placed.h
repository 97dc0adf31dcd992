// Memory the program places itself: the allocator's side of
// gperftools/numa.h (tc_numa_malloc_onnode, tc_numa_malloc_interleaved, ...).
//
// Placed memory is its own kind (numa/owner.h): each named node, and
// interleaved memory, has a region (numa/region.h) bound as asked, a page
// heap (numa/node_heaps.h) and small-object lists (numa/central_lists.h).
// None of it ever serves another kind, and no other memory serves it. The
// page map caches no size class for placed small objects, so free() meets
// them on its slow path, where FreePlaced takes them back; their thread
// caches never see them.
//
// Compiled only inside the patched gperftools tree, as src/numa/placed.cc.
#ifndef NUMA_TCMALLOC_NUMA_PLACED_H_
#define NUMA_TCMALLOC_NUMA_PLACED_H_

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "numa/numa.h"

namespace tcmalloc {
namespace numa {

namespace internal {
// False only in tests (SetPlacedSeparationForTest).
ATTRIBUTE_VISIBILITY_HIDDEN extern bool g_placed_apart;
}  // namespace internal

// True when `ptr` is placed memory (cheap: a flag, then the owner table).
inline bool IsPlacedPointer(const void* ptr) {
  return PlacementStarted() && IsPlaced(OwnerOf(ptr));
}

// True when free()'s slow path must give the small object `ptr` to
// FreePlaced: placement started and `ptr`, a span of the page heap, lies in
// the placed part of the address space, where only placed regions are
// (numa/owner.h); and tests have not turned that off. A range test, not the
// owner table: free()'s fast path keeps its registers.
inline bool FreesAsPlaced(const void* ptr) {
  return PlacementStarted() &&
         reinterpret_cast<uintptr_t>(ptr) - kNamedBase <
             kPlacedEnd - kNamedBase &&
         internal::g_placed_apart;
}

// Takes placed small object `ptr`, of class cl, back to its lists. Called
// last on free()'s slow path (a tail call: the fast path keeps its shape).
ATTRIBUTE_VISIBILITY_HIDDEN void FreePlaced(void* ptr, uint32_t cl);

// Tests only: false makes FreesAsPlaced false, so that placed small
// objects go where any other object goes (the thread caches) and come
// back as plain malloc memory: what keeping the kinds apart prevents
// (tests/numa_heap/placed_test.cc). Only with the layer off.
ATTRIBUTE_VISIBILITY_HIDDEN void SetPlacedSeparationForTest(bool on);

// realloc()'s new block for placed `old_ptr`: `size` bytes of the same kind
// (the same node, or interleaved); nullptr with errno ENOMEM if none.
ATTRIBUTE_VISIBILITY_HIDDEN void* AllocLike(const void* old_ptr, size_t size);

// False in the debug libraries (debugallocation.cc), whose free() checks a
// header placed memory has not: placement is not offered there
// (numa/placement_offered.h defines it, once per library).
ATTRIBUTE_VISIBILITY_HIDDEN bool PlacementOffered();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_PLACED_H_
