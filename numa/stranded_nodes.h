// Which CPU nodes' free pages are stranded: their heaps served nothing for
// their learned idle time, so a growing node may have the kernel move that
// memory to it (release here, fault in there). Why and how: docs/design.md,
// "Release". Everything but NoteServe runs under the page-heap lock; the
// clock is the caller's (a vDSO read, no system call).
#ifndef NUMA_TCMALLOC_NUMA_STRANDED_NODES_H_
#define NUMA_TCMALLOC_NUMA_STRANDED_NODES_H_

#include <stdint.h>

#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// At most 2^7 times the base idle time: 12.8 s with the default 100 ms.
inline constexpr int kMaxIdleDoublings = 7;

// Counts a page-heap serve for `node` (relaxed; a lost count only delays).
void NoteServe(int node);

// The CPU nodes below `cpu_nodes` (a bit each) whose heaps served nothing
// for at least their idle time at `now_ns`, or while the other nodes grew by
// `base_grown_bytes` (scaled as the idle time is; 0: no such limit); every
// node when `base_idle_ns` is 0. `grower` is about to grow or recommit
// `grown_bytes`. The growth limit keeps what a node holds for threads that
// may come back from depending on how fast the others fault memory in.
uint64_t StrandedNodes(int cpu_nodes, uint64_t base_idle_ns, uint64_t now_ns,
                       int grower = -1, uint64_t grown_bytes = 0,
                       uint64_t base_grown_bytes = 0);

// `node`'s free pages are being released at `now_ns`.
void NoteUnstranded(int node, uint64_t now_ns);

// `node` grows or recommits released pages at `now_ns`: back within the
// longest idle time of a release, its idle time doubles until it outlasts
// that absence; back later, it halves.
void NoteRegrowth(int node, uint64_t base_idle_ns, uint64_t now_ns);

// `node`'s current idle time.
uint64_t IdleNsOf(int node, uint64_t base_idle_ns);

// Forgets everything (tests).
void ResetStrandedNodesForTest();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_STRANDED_NODES_H_
