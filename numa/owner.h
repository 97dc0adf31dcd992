// OwnerOf and its table: which node's memory holds a heap address, and of
// what kind, from the address alone. The layout and why: docs/design.md,
// "The owner of an address".
#ifndef NUMA_TCMALLOC_NUMA_OWNER_H_
#define NUMA_TCMALLOC_NUMA_OWNER_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/nodes.h"

namespace tcmalloc {
namespace numa {

// GCC says which sanitizer builds the code with __SANITIZE_*__, clang
// with __has_feature.
#if defined(__SANITIZE_THREAD__)
#define NUMA_TCMALLOC_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define NUMA_TCMALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NUMA_TCMALLOC_TSAN 1
#elif __has_feature(address_sanitizer)
#define NUMA_TCMALLOC_ASAN 1
#endif
#endif

#if !defined(NUMA_TCMALLOC_TSAN) && !defined(NUMA_TCMALLOC_ASAN)
// Node windows below 64 TiB, far below where Linux puts mmaps, the stack and
// PIE executables (above 85 TiB) on 47-bit and 48-bit address spaces.
inline constexpr uintptr_t kLayoutBase = 0;
inline constexpr int kWindowShift = 40;     // 1 TiB
inline constexpr int kNamedPartShift = 38;  // 256 GiB
#else
// Sanitizer builds: the same parts, smaller, in the runtime's free part
// (docs/design.md, "The owner of an address"); tests stay below the 3 GiB
// this leaves a node's heap.
#ifdef NUMA_TCMALLOC_TSAN
inline constexpr uintptr_t kLayoutBase = uintptr_t{64} << 30;
#else
inline constexpr uintptr_t kLayoutBase = uintptr_t{32} << 40;
#endif
inline constexpr int kWindowShift = 32;     // 4 GiB
inline constexpr int kNamedPartShift = 31;  // 2 GiB
#endif

// Window w is [WindowStart(w), WindowStart(w + 1)).
inline constexpr uintptr_t kWindowSize = uintptr_t{1} << kWindowShift;
inline constexpr int kWindows = 64;
inline constexpr uintptr_t WindowStart(int w) {
  return kLayoutBase + (static_cast<uintptr_t>(w) << kWindowShift);
}
// Windows are aligned to their size: a window's addresses share their high
// bits (numa/remote_free_log.h keeps only the low ones).
static_assert(kLayoutBase % kWindowSize == 0, "aligned windows");
// Named-node memory: one part of kNamedPartSize per kernel node id.
inline constexpr uintptr_t kNamedBase = WindowStart(kWindows);
inline constexpr uintptr_t kNamedPartSize = uintptr_t{1} << kNamedPartShift;
// Interleaved memory: one window.
inline constexpr uintptr_t kInterleavedBase =
    kNamedBase + kMaxNodes * kNamedPartSize;
// Every address of placed memory lies in [kNamedBase, kPlacedEnd).
inline constexpr uintptr_t kPlacedEnd = kInterleavedBase + kWindowSize;
// The owner table's sectors, from kLayoutBase: each holds one region's part
// at most, as a named part is one sector.
inline constexpr int kSectorShift = kNamedPartShift;
inline constexpr int kSectors =
    static_cast<int>((kPlacedEnd - kLayoutBase) >> kSectorShift);

enum class MemoryKind : uint8_t {
  kUnplaced,     // not placed by the layer: node 0's heap, first touch
  kNode,         // a node's region (node: the layer's node index)
  kNamed,        // placed on a node the program named (node: kernel id)
  kInterleaved,  // spread over the usable nodes
};

struct Owner {
  MemoryKind kind;
  uint8_t node;
};

// Memory the program placed itself (named node, interleaved): its own heaps
// and lists, never handed out as another kind.
inline bool IsPlaced(Owner o) {
  return o.kind == MemoryKind::kNamed || o.kind == MemoryKind::kInterleaved;
}

namespace internal {
// A region's reserved part, in every sector it overlaps: [begin, begin +
// size). size is 0 until the sector has an owner, and only grows: a reader
// needs only the part that held the address when it was handed out.
struct Sector {
  uintptr_t begin;
  uintptr_t size;
  MemoryKind kind;
  uint8_t node;
};
NUMA_TCMALLOC_HIDDEN extern Sector g_sectors[kSectors];
}  // namespace internal

inline Owner OwnerOf(uintptr_t addr) {
  const uintptr_t s = (addr - kLayoutBase) >> kSectorShift;
  if (s < static_cast<uintptr_t>(kSectors)) {
    const internal::Sector& sector = internal::g_sectors[s];
    const uintptr_t size = __atomic_load_n(&sector.size, __ATOMIC_ACQUIRE);
    if (addr - sector.begin < size) return Owner{sector.kind, sector.node};
  }
  return Owner{MemoryKind::kUnplaced, 0};
}

inline Owner OwnerOf(const void* ptr) {
  return OwnerOf(reinterpret_cast<uintptr_t>(ptr));
}

// The reserved part of node window w's region: [*begin, *begin + *size),
// size 0 if none. A copy stays right: the part only grows.
inline void OwnedPart(int w, uintptr_t* begin, uintptr_t* size) {
  // The region starts in one of the window's sectors (node 0's past the brk
  // heap, the others past a guard); that sector's entry holds the whole part.
  constexpr int kSectorsPerWindow = 1 << (kWindowShift - kSectorShift);
  *begin = 0;
  *size = 0;
  for (int i = 0; i < kSectorsPerWindow; ++i) {
    const internal::Sector& sector =
        internal::g_sectors[w * kSectorsPerWindow + i];
    const uintptr_t s = __atomic_load_n(&sector.size, __ATOMIC_ACQUIRE);
    if (s != 0) {
      *size = s;
      *begin = sector.begin;
      return;
    }
  }
}

// A region's reserved part: [begin, begin + size), `node`'s memory of
// `kind`. The first call for a region sets its start; later calls may only
// extend it (the region reserved more). Called during Init and under the
// page heap lock, never concurrently; a part at or above the last sector is
// not recorded.
NUMA_TCMALLOC_HIDDEN void SetOwner(uintptr_t begin, size_t size,
                                   MemoryKind kind, int node);

// Forgets every region's owner (the layer stays off; tests).
NUMA_TCMALLOC_HIDDEN void ClearOwners();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_OWNER_H_
