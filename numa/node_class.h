// Node classes: a size class with the owner node packed above it, as the
// page map's class cache stores them, so that free() learns an object's
// owner in vanilla's one lookup. Node 0's node classes are the plain
// classes, so a one-node process sees vanilla's values everywhere.
#ifndef NUMA_TCMALLOC_NUMA_NODE_CLASS_H_
#define NUMA_TCMALLOC_NUMA_NODE_CLASS_H_

#include <stdint.h>

#include "numa/nodes.h"

namespace tcmalloc {
namespace numa {

// Bits of a node class that hold the plain size class: upstream's
// kClassSizesMax (checked in numa/thread_cache_nodes.cc).
inline constexpr int kNodeClassShift = 7;

// CPU nodes with small-object lists of their own, at most: the owner rides
// in the value bits of the page map's class cache (TCMALLOC_SMALL_BUT_SLOW's
// has only 12 hash bits). With more CPU nodes, small objects share one set
// of lists.
#ifdef TCMALLOC_SMALL_BUT_SLOW
inline constexpr int kCpuNodeBits = 3;
#else
inline constexpr int kCpuNodeBits = 6;
#endif
inline constexpr int kMaxCpuNodes = 1 << kCpuNodeBits;

// Value bits of the page map's class cache (upstream's PackedCache).
inline constexpr int kCachedClassBits = kNodeClassShift + kCpuNodeBits;

inline constexpr uint32_t NodeClass(int node, uint32_t cl) {
  return (static_cast<uint32_t>(node) << kNodeClassShift) | cl;
}
inline constexpr uint32_t BaseClass(uint32_t node_class) {
  return node_class & ((1u << kNodeClassShift) - 1);
}
inline constexpr int ClassNode(uint32_t node_class) {
  return static_cast<int>(node_class >> kNodeClassShift);
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NODE_CLASS_H_
