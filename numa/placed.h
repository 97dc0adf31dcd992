// Memory the program places itself: the allocator's side of
// gperftools/numa.h (docs/design.md, "Memory the program places").
// Compiled only inside the patched gperftools tree.
#ifndef NUMA_TCMALLOC_NUMA_PLACED_H_
#define NUMA_TCMALLOC_NUMA_PLACED_H_

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "numa/numa.h"
#include "numa/owner.h"
#include "numa/placed_start.h"

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
// FreePlaced: placement started and `ptr` lies in the placed part of the
// address space (a range test, not the owner table: free()'s fast path keeps
// its registers), and tests have not turned that off.
inline bool FreesAsPlaced(const void* ptr) {
  return PlacementStarted() &&
         reinterpret_cast<uintptr_t>(ptr) - kNamedBase <
             kPlacedEnd - kNamedBase &&
         internal::g_placed_apart;
}

// Takes placed small object `ptr`, of class cl, back to its lists. Called
// last on free()'s slow path (a tail call: the fast path keeps its shape).
ATTRIBUTE_VISIBILITY_HIDDEN void FreePlaced(void* ptr, uint32_t cl);

// Tests only, with the layer off: false makes FreesAsPlaced false, so that
// placed small objects go to the thread caches and come back as plain malloc
// memory: what keeping the kinds apart prevents.
ATTRIBUTE_VISIBILITY_HIDDEN void SetPlacedSeparationForTest(bool on);

// realloc()'s new block for placed `old_ptr`: `size` bytes of the same kind
// (the same node, or interleaved); nullptr with errno ENOMEM if none.
ATTRIBUTE_VISIBILITY_HIDDEN void* AllocLike(const void* old_ptr, size_t size);

// False in the debug libraries (numa/placement_offered.h defines it).
ATTRIBUTE_VISIBILITY_HIDDEN bool PlacementOffered();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_PLACED_H_
