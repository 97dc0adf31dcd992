// How many NUMA nodes and CPUs the layer represents, and node masks: the
// ground floor of the layer, included by every file that counts nodes.
//
// Inside the gperftools tree this file lives at src/numa/nodes.h.
#ifndef NUMA_TCMALLOC_NUMA_NODES_H_
#define NUMA_TCMALLOC_NUMA_NODES_H_

#include <stdint.h>

#define NUMA_TCMALLOC_HIDDEN __attribute__((visibility("hidden")))

namespace tcmalloc {
namespace numa {

// Kernel node ids, and the layer's own node indexes, are below kMaxNodes:
// a node mask is one uint64_t with bit i for node i.
inline constexpr int kMaxNodes = 64;
// CPUs with higher ids are served by the default node (Topology).
inline constexpr int kMaxCpus = 4096;
inline constexpr uint8_t kNoNode = 0xff;

inline int PopCount(uint64_t mask) { return __builtin_popcountll(mask); }
inline bool HasNode(uint64_t mask, int node) {
  return node >= 0 && node < kMaxNodes && ((mask >> node) & 1) != 0;
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NODES_H_
