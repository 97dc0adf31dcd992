// The owner of a heap address, from the address alone: which node's memory
// holds it, and what kind of memory it is. Every part of the allocator that
// needs an address's node asks OwnerOf; the copies kept for speed (the node
// class in the page map's cache, a thread cache's bounds of its own region)
// are written from it.
//
// The address space below 64 TiB is cut into windows of 1 TiB. The layer
// gives a window to a node: the node's region grows upward inside it
// (numa/region.h), and the part reserved so far is the node's memory. The
// owner table records, per window, where that part starts, how long it is
// and whose it is; it only grows while the process runs.
//
// OwnerOf's whole domain:
//  - an address inside the reserved part of a node's region:
//    {MemoryKind::kNode, node}; the layer bound those pages to the node.
//  - any other address: {MemoryKind::kUnplaced, 0}. That is all heap memory
//    while the layer is off (one node, TCMALLOC_NUMA=0, regions refused),
//    memory from a user SysAllocator (it always goes to node 0's heap, as
//    its owner cannot be told from its address), and addresses that are not
//    heap memory at all. The kernel's first touch placed unplaced pages;
//    node 0's heap holds them.
//  No heap memory predates the layer: numa::Init runs before the page heap
//  exists. Other kinds of memory (memory placed on a node the program
//  names, interleaved memory) would take windows of their own and a kind of
//  their own here.
//
// Inside the gperftools tree this file lives at src/numa/owner.h.
#ifndef NUMA_TCMALLOC_NUMA_OWNER_H_
#define NUMA_TCMALLOC_NUMA_OWNER_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/nodes.h"

namespace tcmalloc {
namespace numa {

// Window w is [w << kWindowShift, (w + 1) << kWindowShift).
inline constexpr int kWindowShift = 40;
inline constexpr uintptr_t kWindowSize = uintptr_t{1} << kWindowShift;
// Windows below 64 TiB, far below where Linux puts mmaps, the stack and PIE
// executables on 47-bit and 48-bit address spaces.
inline constexpr int kWindows = 64;

enum class MemoryKind : uint8_t {
  kUnplaced,  // not placed by the layer: node 0's heap, first touch
  kNode,      // a node's region: bound to that node
};

struct Owner {
  MemoryKind kind;
  uint8_t node;
};

namespace internal {
// One window's owned part: [begin, begin + size). size is 0 until the window
// has an owner, and only grows; relaxed atomics, as a reader only needs to
// see the part that held the address when the address was handed out, which
// the page heap lock ordered before.
struct Window {
  uintptr_t begin;
  uintptr_t size;
  MemoryKind kind;
  uint8_t node;
};
NUMA_TCMALLOC_HIDDEN extern Window g_windows[kWindows];
}  // namespace internal

inline Owner OwnerOf(uintptr_t addr) {
  const uintptr_t w = addr >> kWindowShift;
  if (w < kWindows) {
    const internal::Window& win = internal::g_windows[w];
    const uintptr_t size = __atomic_load_n(&win.size, __ATOMIC_ACQUIRE);
    if (addr - win.begin < size) return Owner{win.kind, win.node};
  }
  return Owner{MemoryKind::kUnplaced, 0};
}

inline Owner OwnerOf(const void* ptr) {
  return OwnerOf(reinterpret_cast<uintptr_t>(ptr));
}

// The owned part of window w: [*begin, *begin + *size), size 0 if none. A
// copy of it stays right while the part grows: it only ever grows.
inline void OwnedPart(int w, uintptr_t* begin, uintptr_t* size) {
  const internal::Window& win = internal::g_windows[w];
  *size = __atomic_load_n(&win.size, __ATOMIC_ACQUIRE);
  *begin = win.begin;
}

// The owned part of the window that holds `begin`: [begin, begin + size),
// `node`'s memory of `kind`. The first call for a window sets its start;
// later calls may only extend it (the region reserved more). Called during
// Init and under the page heap lock, never concurrently.
NUMA_TCMALLOC_HIDDEN void SetOwner(uintptr_t begin, size_t size,
                                   MemoryKind kind, int node);

// Forgets every window's owner (the layer stays off; tests).
NUMA_TCMALLOC_HIDDEN void ClearOwners();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_OWNER_H_
