// Which CPU nodes' free pages are stranded: their heaps have served nothing
// for a while, so their threads have moved elsewhere, and a growing node may
// have the kernel move that memory to it (release here, fault in there).
//
// "A while" is learned per node. It starts at TCMALLOC_NUMA_STRANDED_IDLE_MS.
// When a node whose pages were released grows or recommits again within its
// longest idle time, its threads came back and the release only cost faults:
// the idle time doubles as often as it takes to outlast their absence (up to
// kMaxIdleDoublings doublings). When they stay away longer, it halves. So a
// load that moves for good hands its memory over soon, while threads that
// move back and forth keep both nodes' pages after a round trip or two.
//
// Everything but NoteServe runs under the page-heap lock; the clock is the
// caller's (a vDSO read, no system call).
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

// `node`'s free pages are being released, or asked to be, at `now_ns`.
void NoteUnstranded(int node, uint64_t now_ns);

// `node` grows or recommits released pages at `now_ns` (adapts its idle
// time, as above).
void NoteRegrowth(int node, uint64_t base_idle_ns, uint64_t now_ns);

// `node`'s current idle time.
uint64_t IdleNsOf(int node, uint64_t base_idle_ns);

// Forgets everything (tests).
void ResetStrandedNodesForTest();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_STRANDED_NODES_H_
