// numa-tcmalloc's NUMA layer: its core interface (Init, nodes, the thread's
// node, regions, knobs). Start here; docs/design.md has the
// glossary (node, CPU node, region, kernel id) and the map of the hooks,
// whose glue headers (node_heaps.h, central_lists.h, ...) hold what needs
// upstream's types.
//
// Everything here runs inside malloc: no malloc, no stdio, no libnuma, no C++
// runtime containers, no exceptions; topology comes from raw syscalls and
// malloc-free file reads. All symbols are hidden so the library's exported
// ABI stays vanilla's.
//
// Inside the gperftools tree this file lives at src/numa/numa.h
// (see tcmalloc/new_files.txt).
#ifndef NUMA_TCMALLOC_NUMA_NUMA_H_
#define NUMA_TCMALLOC_NUMA_NUMA_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/config.h"
#include "numa/nodes.h"
#include "numa/policy.h"

namespace tcmalloc {
namespace numa {

// Reads the TCMALLOC_NUMA* knobs through `getenv_fn` (upstream passes
// TCMallocGetenvSafe) and the topology, once. Unknown knob values print one
// warning line on stderr and take the documented default. Never fails: any
// error leaves the layer off (one node), which is vanilla behaviour. Call it
// once, from one thread, before any other thread uses the layer (the
// functions below read its state without locks). Knobs: docs/tuning.md.
NUMA_TCMALLOC_HIDDEN void Init(const char* (*getenv_fn)(const char*));

// True when the layer is on: more than one node, each with its address
// region. When false, every other call below is a constant (node 0), makes
// no syscall, and the allocator is vanilla.
NUMA_TCMALLOC_HIDDEN bool Active();

// Number of nodes: 1 when off, else the number of usable nodes.
NUMA_TCMALLOC_HIDDEN int NumNodes();

// The calling thread's node: the node of the CPU it runs on (for a CPU-only
// kernel node, the nearest node with memory). 0 when off.
NUMA_TCMALLOC_HIDDEN int CurrentNode();

// The CPU nodes, which have small-object lists of their own: 1 when off, or
// when there are more than kMaxCpuNodes of them (then small objects share
// one set of lists; Init says so once).
NUMA_TCMALLOC_HIDDEN int NumCpuNodes();

// The kernel's id of `node` (0 when off).
NUMA_TCMALLOC_HIDDEN int KernelId(int node);

// The node of the kernel's node `kernel_id`, or -1 if the process may not
// use it. 0 for kernel node 0 when off.
NUMA_TCMALLOC_HIDDEN int NodeOfKernelId(int kernel_id);

// The nodes `node` borrows `what` from when it cannot serve a request,
// nearest first (LenderOrder in numa/policy.h); returns how many.
NUMA_TCMALLOC_HIDDEN int LendersOf(int node, Borrowed what, int out[kMaxNodes]);

// Binds [start, start+len) to `node` with the configured policy, within the
// task's membind set (DecideBinding, numa/mempolicy.h), before the first
// touch; a PROT_NONE reservation made usable later is fine. Returns false if
// the kernel refused (counted, never fatal). No-op returning true when off,
// for a node left to first touch (FirstTouchNode), or with a fake topology.
NUMA_TCMALLOC_HIDDEN bool BindRange(void* start, size_t len, int node);

// True when `node`'s fresh memory is left to first touch: policy `local`, a
// CPU node whose heap serves only its own CPUs (not a proxy for CPUs of a
// node the process may not use) or any CPU node when the kernel refuses
// mbind, and a real topology. False when off.
NUMA_TCMALLOC_HIDDEN bool FirstTouchNode(int node);

// True when `node`'s memory lies on its kernel node as far as the layer
// placed it: bound there, or first-touched by its own CPUs' threads. False
// for a proxy whose memory the kernel would not bind (mbind refused): the
// CPUs it serves fault it in on nodes of their own choosing.
NUMA_TCMALLOC_HIDDEN bool NodeHoldsItsMemory(int node);

// --- What the kernel refused. ---

// The system calls the layer wanted and the kernel refused (IsRefusal), by
// errno; 0 when allowed or never asked. A default Docker or Kubernetes
// seccomp profile refuses all four (docs/tuning.md, "Containers").
struct Refusals {
  int get_mempolicy;  // the cpuset's nodes came from files, the task policy
                      // was taken as the default
  int mbind;          // no binding: memory-only nodes left out, proxies and
                      // TCMALLOC_NUMA_POLICY=preferred|bind left to first
                      // touch, placement calls fail with EPERM
  int home_node;      // set_mempolicy_home_node: membind sets fill nearest
                      // first without a home node
  int move_pages;     // the reuse check judges by ReuseWitness instead
};
NUMA_TCMALLOC_HIDDEN Refusals RefusedCalls();

// True when large blocks coming back are judged by what the heap noted when
// it handed them out (numa/reuse_witness.h), move_pages being refused.
NUMA_TCMALLOC_HIDDEN bool ReuseByWitness();

// --- The kernel's automatic NUMA balancing (numa/balancing.h). ---

// What the heaps do about pages the kernel's NUMA balancing moves, decided
// at Init from kernel.numa_balancing (read then: a later change is not seen),
// TCMALLOC_NUMA_BALANCING and move_pages.
enum class Cooperation : uint8_t {
  kNone = 0,  // the kernel moves no page of ours (balancing off, the layer
              // off, a fake topology, no node left to first touch)
  kCooperating = 1,  // freed small-object spans are checked, moved ones
                     // released
  kUnchecked = 2,    // the kernel moves pages and the heaps do not look:
                     // TCMALLOC_NUMA_BALANCING=ignore, or move_pages, which
                     // would see them, is refused (RefusedCalls says which)
};
NUMA_TCMALLOC_HIDDEN Cooperation BalancingCooperation();
// BalancingCooperation() == kCooperating, for hot paths.
NUMA_TCMALLOC_HIDDEN bool CooperatesWithBalancing();
// True when the allocator's metadata mappings (numa/sparse_memory.h) are
// bound as they are made (DecideMetadataBinding, numa/mempolicy.h), so that
// the kernel's NUMA balancing leaves them where their first writer put them:
// the kernel moves pages, mbind is allowed, and TCMALLOC_NUMA_BALANCING is
// not `ignore`. Those binds, and the ones the kernel refused.
NUMA_TCMALLOC_HIDDEN bool MetadataStaysPut();
NUMA_TCMALLOC_HIDDEN uint64_t MetadataBinds();
NUMA_TCMALLOC_HIDDEN uint64_t MetadataBindFailures();

// The files Init read the cpuset's memory nodes and CPUs from, or null
// (memory nodes from get_mempolicy; CPUs: no cgroup file left a CPU of the
// machine's nodes out).
NUMA_TCMALLOC_HIDDEN const char* MemsSource();
NUMA_TCMALLOC_HIDDEN const char* CpusSource();

// Commits at least `bytes` more of region `id` (a node's, or a placed one:
// numa/region.h); see RegionGrow. nullptr when it has no region (HasRegion)
// or the region cannot grow.
NUMA_TCMALLOC_HIDDEN void* GrowRegion(int id, size_t bytes, size_t* actual);

// Gives a released range of `node`'s region back to it (RegionReturn in
// numa/region.h), so it leaves the heap's size. False if it cannot; the range
// then stays the caller's.
NUMA_TCMALLOC_HIDDEN bool ShrinkRegion(int node, void* start, size_t bytes);

// TCMALLOC_NUMA_MAX_STRANDED_MB in bytes: the free memory all other nodes
// together may keep while a node's heap grows; beyond it they release free
// pages to the kernel, whatever TCMALLOC_RELEASE_RATE says.
NUMA_TCMALLOC_HIDDEN uint64_t MaxStrandedBytes();
// How long a CPU node's heap serves nothing before its free pages count as
// stranded (TCMALLOC_NUMA_STRANDED_IDLE_MS); 0: always.
NUMA_TCMALLOC_HIDDEN uint64_t StrandedAfterNs();

// The knobs' policies.
NUMA_TCMALLOC_HIDDEN BindPolicy Policy();
NUMA_TCMALLOC_HIDDEN RemoteFree RemoteFreePolicy();
NUMA_TCMALLOC_HIDDEN Migration MigrationPolicy();
NUMA_TCMALLOC_HIDDEN bool FakeTopology();  // TCMALLOC_NUMA_FAKE_NODES in force
NUMA_TCMALLOC_HIDDEN bool StatsAtExit();   // TCMALLOC_NUMA_STATS=1

// The binds the layer made and the ones the kernel refused; the event
// counters are in numa/counters.h.
NUMA_TCMALLOC_HIDDEN uint64_t MbindCalls();
NUMA_TCMALLOC_HIDDEN uint64_t MbindFailures();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NUMA_H_
