// numa-tcmalloc's NUMA layer: its core interface (Init, nodes, the thread's
// node, regions, knobs, counters), which the allocator's glue and the tests
// call. Start here; docs/design.md has the glossary and the map of the hooks.
//
// It is not the only header the patches include: the hooks in upstream
// files call this one for the layer's answers, and the glue header of their
// concern (node_heaps.h, central_lists.h, thread_cache_nodes.h,
// introspection.h, sized_delete.h, placed.h, placement_offered.h) for what
// needs upstream's types; packed-cache-inl.h takes node_class.h alone.
//
// Everything here runs inside malloc: no malloc, no stdio, no libnuma, no C++
// runtime containers, no exceptions. Topology comes from raw syscalls
// (get_mempolicy, getcpu) and malloc-free reads of /sys/devices/system/node.
// All symbols are hidden so the library's exported ABI stays vanilla's.
//
// Nodes: the allocator indexes its per-node state (page heaps, small-object
// lists, address regions) by *node*, a dense index over the nodes the
// process may use: CPU nodes first (0 .. NumCpuNodes()-1), then memory-only
// nodes. A process confined to kernel nodes {6,7} has nodes 0 and 1.
// KernelId() names the kernel's node, for syscalls and for users. Memory the
// program places itself has regions of its own beyond the nodes'
// (numa/region.h): a *region* id names either kind.
//
// Inside the gperftools tree this file lives at src/numa/numa.h
// (see tcmalloc/new_files.txt).
#ifndef NUMA_TCMALLOC_NUMA_NUMA_H_
#define NUMA_TCMALLOC_NUMA_NUMA_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/config.h"
#include "numa/node_class.h"
#include "numa/nodes.h"
#include "numa/owner.h"
#include "numa/policy.h"
#include "numa/region.h"

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

// The CPU nodes, which have small-object lists of their own: 1 when off, or
// when there are more than kMaxCpuNodes of them (then small objects share
// one set of lists; Init says so once).
NUMA_TCMALLOC_HIDDEN int NumCpuNodes();

// The kernel's id of `node` (0 when off).
NUMA_TCMALLOC_HIDDEN int KernelId(int node);

// The node of the kernel's node `kernel_id`, or -1 if the process may not
// use it. 0 for kernel node 0 when off.
NUMA_TCMALLOC_HIDDEN int NodeOfKernelId(int kernel_id);

// The calling thread's node: the node of the CPU it runs on (for a CPU-only
// kernel node, the nearest node with memory). 0 when off.
NUMA_TCMALLOC_HIDDEN int CurrentNode();

// The node that serves CPU `cpu` (CurrentNode's table). 0 when off.
NUMA_TCMALLOC_HIDDEN int NodeOfCpu(int cpu);

// The nodes `node` borrows `what` from when it cannot serve a request,
// nearest first (BorrowOrder in numa/policy.h); returns how many.
NUMA_TCMALLOC_HIDDEN int BorrowFrom(int node, Borrow what, int out[kMaxNodes]);

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
  kCooperating =
      1,         // freed small-object spans are checked, moved ones released
  kIgnored = 2,  // the kernel moves pages; TCMALLOC_NUMA_BALANCING=ignore
  kBlind = 3,    // the kernel moves pages; move_pages, which would see them,
                 // is refused
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

// The knobs' policies.
NUMA_TCMALLOC_HIDDEN BindPolicy Policy();
NUMA_TCMALLOC_HIDDEN RemoteFree RemoteFreePolicy();
NUMA_TCMALLOC_HIDDEN Migration MigrationPolicy();
NUMA_TCMALLOC_HIDDEN bool FakeTopology();  // TCMALLOC_NUMA_FAKE_NODES in force
NUMA_TCMALLOC_HIDDEN bool StatsAtExit();   // TCMALLOC_NUMA_STATS=1

namespace internal {
// What the allocator built for small objects; read on its slow paths and in
// free()'s page map cache miss, so read inline. Set once, during Init, but
// for lists_made, which grows as nodes' first thread caches appear.
struct SmallObjects {
  int nodes_with_central_lists;
  bool node_classes;
  bool strays;  // several sets of lists, and caches that do not sort by owner
  bool sized_free_by_owner;  // node classes, or placed memory may exist
  uint64_t lists_made;       // bit n: node n's lists are made
};
NUMA_TCMALLOC_HIDDEN extern SmallObjects g_small_objects;
// Set once StartPlacement succeeded; never cleared but by tests.
NUMA_TCMALLOC_HIDDEN extern bool g_placement_started;
}  // namespace internal

// The CPU nodes whose central lists the allocator has actually built: 1
// until it builds them per node and records it here (which marks none of
// them made yet when there are several). Introspection reads
// this, not NumCpuNodes(), so that it indexes only lists that exist (and
// builds without them: it comes before the per-node lists in the series).
NUMA_TCMALLOC_HIDDEN void SetNodesWithCentralLists(int n);
inline int NodesWithCentralLists() {
  return internal::g_small_objects.nodes_with_central_lists;
}

// The CPU node whose central lists serve the calling thread: its node, or
// node 0 with one set of lists.
inline int ThisThreadsListNode() {
  const int node = CurrentNode();
  return node < NodesWithCentralLists() ? node : 0;
}

// True once CPU node `node`'s central lists are made. With one set of lists
// (vanilla's) they are from the start; with several, a node's are made by
// its first thread cache (numa/central_lists.h). Objects of a node exist
// only after its lists are made (they come from them), so only paths that
// visit every node's lists (stats, fork handlers, the idle drain) ask.
inline bool NodeListsMade(int node) {
  return (__atomic_load_n(&internal::g_small_objects.lists_made,
                          __ATOMIC_ACQUIRE) >>
          node) &
         1;
}
NUMA_TCMALLOC_HIDDEN void MarkNodeListsMade(int node);

// Node classes: the page map's class cache stores NodeClass(owner, class)
// and thread caches file objects under their owner's lists. On from the
// moment the thread caches can do it (they set it up) when several CPU
// nodes have lists and TCMALLOC_NUMA_REMOTE_FREE=owner.
NUMA_TCMALLOC_HIDDEN void SetNodeClasses(bool on);
inline bool NodeClasses() { return internal::g_small_objects.node_classes; }

// True when an object can reach a central list other than its owner's:
// there are several sets of lists and thread caches do not sort by owner
// (TCMALLOC_NUMA_REMOTE_FREE=local), or a thread without a cache frees
// through the plain class. With node classes every object goes straight to
// its owner's list, and the lists need not look.
inline bool StraysPossible() { return internal::g_small_objects.strays; }

// --- Memory the program places itself (numa/placed.h has the API). ---

// Starts placement: finds the kernel nodes the process may place memory on
// (the layer's usable nodes, or, with the layer off, the cpuset's nodes that
// have memory, narrowed by a membind task policy, read now), probes weighted
// interleave and gives the placed regions (numa/region.h) their binder. The
// first call decides; later ones return its answer. False if no node could
// be found, or if there are two or more and the kernel refuses mbind (no
// placement could be kept): PlacementError() says which.
NUMA_TCMALLOC_HIDDEN bool StartPlacement();
// Why StartPlacement failed: ENOMEM (no node), EPERM (mbind refused); 0
// before it was tried or when it succeeded.
NUMA_TCMALLOC_HIDDEN int PlacementError();
// True once StartPlacement succeeded: placed memory may exist.
inline bool PlacementStarted() {
  return __atomic_load_n(&internal::g_placement_started, __ATOMIC_ACQUIRE);
}
// The kernel node ids placement may use, bit k for node k (0 before
// StartPlacement was tried; the nodes it found even if it failed for EPERM).
NUMA_TCMALLOC_HIDDEN uint64_t PlacementNodes();
// TCMALLOC_NUMA_INTERLEAVE_ABOVE in bytes; 0 when off.
NUMA_TCMALLOC_HIDDEN uint64_t InterleaveAbove();
// True when region `id` (numa/region.h) may grow: a node region while the
// layer is active, a placed region once placement started.
NUMA_TCMALLOC_HIDDEN bool HasRegion(int id);
// The region of placed memory owned as `o` (IsPlaced(o)).
inline int PlacedRegionOf(Owner o) {
  return o.kind == MemoryKind::kInterleaved ? kInterleavedRegion
                                            : NamedRegion(o.node);
}

// The region whose central lists take `object` (numa/central_lists.h): its
// owner's, a node's or placed memory's (numa/region.h), or node 0's when
// all nodes share one set of lists.
inline int ListRegionOf(const void* object) {
  if (NodesWithCentralLists() == 1 && !PlacementStarted()) return 0;
  const Owner o = OwnerOf(object);
  if (__builtin_expect(IsPlaced(o), 0)) return PlacedRegionOf(o);
  return NodesWithCentralLists() == 1 ? 0 : o.node;
}

// The value the page map caches for an object of class cl of node `node`'s
// lists: the node class with node classes, else the plain class.
inline uint32_t CachedClass(int node, uint32_t cl) {
  return NodeClasses() ? NodeClass(node, cl) : cl;
}

// The same for `object`, a node's memory (not placed memory, whose class is
// never cached): with node classes there are lists per node, so its owner
// node's lists take it.
inline uint32_t CachedClassOf(const void* object, uint32_t cl) {
  return NodeClasses() ? NodeClass(OwnerOf(object).node, cl) : cl;
}

// True when `cached`, the page map's cached value for `object`, is what
// Populate or free() would have written for it: class cl and, with node
// classes, the object's owner (Debug builds check every cache hit).
inline bool CachedClassIs(uint32_t cached, const void* object, uint32_t cl) {
  return BaseClass(cached) == cl && cached == CachedClassOf(object, cl);
}

// True when a sized delete cannot trust the size alone and must look at the
// address: the size names the class but not the owner (node classes), or
// the object may be placed memory, which thread caches never hold
// (numa/sized_delete.h).
inline bool SizedFreeNeedsOwner() {
  // A plain load, one compare with memory: on every sized delete. Set once
  // (Init, the first placement), before any object it concerns exists.
  return internal::g_small_objects.sized_free_by_owner;
}

// Counters for introspection (MallocExtension properties, stats).
NUMA_TCMALLOC_HIDDEN uint64_t MbindCalls();
NUMA_TCMALLOC_HIDDEN uint64_t MbindFailures();

// Event counters, bumped on slow paths only (relaxed atomics).
enum class Counter : int {
  kRemoteFreeObjects,    // objects a thread cache returned to another node
  kThreadMigrations,     // thread caches that found their thread on a new node
  kFlushedObjects,       // objects returned by the flush migration policy
  kReroutedObjects,      // objects a central list handed on to their owner's
  kIdleDrainedObjects,   // objects idle nodes' transfer caches gave back
  kBorrowedObjects,      // objects a thread took from another node's list
  kReleasedForReuse,     // large blocks released on their way back to their
                         // heap, their pages lying on another node
  kWitnessedReturns,     // large blocks judged by ReuseWitness on their way
                         // back (move_pages refused)
  kMovedSpansChecked,    // small-object spans whose page nodes were sampled,
                         // coming back or going to a list
                         // (CooperatesWithBalancing)
  kMovedSpansReleased,   // of those, released: the kernel had moved pages away
  kMovedSpansKept,       // of those, kept: moved away again after a release
  kInboxFullObjects,     // remote frees the freeing thread linked in itself:
                         // their owner's inbox was full
  kRefillsMoved,         // refills whose thread the scheduler moved to another
                         // node before it wrote a new span: the span went
                         // back, and the thread's new node served it
  kUnstrandingByOwner,   // releases and retirements a growing node asked of
                         // another, done by that node's own thread
  kUnstrandingByGrower,  // done on another node's heap by a growing node
                         // (beyond the stranded bound, a memory-only node,
                         // an owner that had not done it by the next growth)
  kNumCounters,
};
NUMA_TCMALLOC_HIDDEN void AddToCounter(Counter c, uint64_t n);
NUMA_TCMALLOC_HIDDEN uint64_t CounterValue(Counter c);
// Puts each CPU node's counters on a page of its own (numa/node_pages.h):
// AddToCounter writes the row of the calling thread's node.
NUMA_TCMALLOC_HIDDEN void PlaceCountersOnNodePages();
// Node `node`'s row of counters (tests ask where it lies).
NUMA_TCMALLOC_HIDDEN const void* CountersOf(int node);

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NUMA_H_
