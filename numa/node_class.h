// Node size classes: a size class with the owning node packed above it.
//
// With per-node small-object lists, the page map's size-class cache stores
// (node << kNodeClassShift) | class for every page of a small-object span, so
// free() learns an object's owner node with the same single cache lookup that
// vanilla uses for its class, and the thread cache files the object under a
// per-node list without a branch. Node 0's node classes are the plain classes,
// which is why a single-node process sees vanilla's values everywhere.
//
// Inside the gperftools tree this file lives at src/numa/node_class.h.
#ifndef NUMA_TCMALLOC_NUMA_NODE_CLASS_H_
#define NUMA_TCMALLOC_NUMA_NODE_CLASS_H_

#include <stdint.h>

#include "numa/numa.h"
#include "numa/region.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Bits of a node class that hold the plain size class; upstream's
// kClassSizesMax must equal 1 << kNodeClassShift (checked where both are
// visible).
inline constexpr int kNodeClassShift = 7;
inline constexpr uint32_t kClassMask = (1u << kNodeClassShift) - 1;

// Every node class is below this: the bound of per-node class arrays.
inline constexpr uint32_t kNodeClassesMax = kMaxListNodes << kNodeClassShift;

inline constexpr uint32_t NodeClass(int node, uint32_t cl) {
  return (static_cast<uint32_t>(node) << kNodeClassShift) | cl;
}
inline constexpr uint32_t BaseClass(uint32_t node_class) {
  return node_class & kClassMask;
}
inline constexpr int ClassNode(uint32_t node_class) {
  return static_cast<int>(node_class >> kNodeClassShift);
}

// NodeClass(RegionOwner(ptr), cl), in the fewest instructions: the window
// number shifted straight into the node bits.
inline uint32_t AddressNodeClass(const void* ptr, uint32_t cl) {
  static_assert(kRegionShift > kNodeClassShift, "node bits from the address");
  return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(ptr) >>
                                (kRegionShift - kNodeClassShift)) &
                               ~uintptr_t{kClassMask}) |
         cl;
}

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_NODE_CLASS_H_
