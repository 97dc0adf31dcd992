// numa-tcmalloc's NUMA layer: the one interface the upstream patches call.
//
// Everything here runs inside malloc: no malloc, no stdio, no libnuma, no C++
// runtime containers, no exceptions. Topology comes from raw syscalls
// (get_mempolicy, getcpu) and malloc-free reads of /sys/devices/system/node.
// All symbols are hidden so the library's exported ABI stays vanilla's.
//
// Inside the gperftools tree this file lives at src/numa/numa.h
// (see tcmalloc/new_files.txt).
#ifndef NUMA_TCMALLOC_NUMA_NUMA_H_
#define NUMA_TCMALLOC_NUMA_NUMA_H_

#include <stddef.h>
#include <stdint.h>

#define NUMA_TCMALLOC_HIDDEN __attribute__((visibility("hidden")))

namespace tcmalloc {
namespace numa {

// The allocator indexes its per-node state (page heaps, small-object lists,
// address regions) by *node slot*: a dense index over the nodes the process
// may use, nodes that serve CPUs first (slots 0 .. ListNodes()-1), then
// memory-only nodes. A process confined to nodes {6,7} has slots 0 and 1.
// Every `node` parameter and result below is a slot; NodeId() names the
// kernel's node. Kernel node ids, and slots, are below kMaxNodes.
inline constexpr int kMaxNodes = 64;

// How fresh memory is bound to its heap's node (TCMALLOC_NUMA_POLICY).
enum class BindPolicy : uint8_t {
  kPreferred,  // the node first, then the kernel falls back (inside a
               // membind set, nearest first); never OOM-kills before the
               // set is full.
  kBind,       // MPOL_BIND to the node: the kernel OOM-kills rather than spill.
  kLocal,      // no mbind at all; first touch (and the task policy) decides.
};

// Where a small object freed by a thread on another node goes
// (TCMALLOC_NUMA_REMOTE_FREE).
enum class RemoteFree : uint8_t {
  kOwner,  // back to its owner node's central lists, in batches
  kLocal,  // into the freeing thread's cache, for reuse there (vanilla speed)
};

// What a thread cache does with its old node's objects when it finds its
// thread on a new node (TCMALLOC_NUMA_MIGRATION).
enum class Migration : uint8_t {
  kFlush,  // return them to their node's central lists at once
  kDrain,  // keep them parked; they go back on overflow or scavenge
};

// Per-node small-object lists (central free lists and thread-cache lists)
// exist for every slot that serves CPUs, up to this many; the slot rides in
// the size class cached in the page map (numa/node_class.h), whose value bits
// depend on the page map cache's hash bits: 6 bits normally, 3 in
// TCMALLOC_SMALL_BUT_SLOW builds (12 hash bits). With more CPU nodes, small
// objects share one set of lists (page-level memory stays per node); Init
// warns once.
#ifdef TCMALLOC_SMALL_BUT_SLOW
inline constexpr int kMaxListNodes = 8;
#else
inline constexpr int kMaxListNodes = 64;
#endif

// Reads the TCMALLOC_NUMA* knobs through `getenv_fn` (upstream passes
// TCMallocGetenvSafe) and the topology, once. Unknown knob values print one
// warning line on stderr and take the documented default. Never fails: any
// error leaves the layer inactive (one node), which is vanilla behaviour.
// Call it once, from one thread, before any other thread uses the layer (the
// functions below read its state without locks). Knobs: docs/tuning.md.
NUMA_TCMALLOC_HIDDEN void Init(const char* (*getenv_fn)(const char*));

// True when more than one node heap is in use. When false, every other call
// below is a constant (node 0) and makes no syscall.
NUMA_TCMALLOC_HIDDEN bool Active();

// Number of node slots: 1 when inactive, else the number of usable nodes.
NUMA_TCMALLOC_HIDDEN int NumNodes();

// The kernel's id of the node in `slot` (0 when inactive).
NUMA_TCMALLOC_HIDDEN int NodeId(int slot);

// The slot of the kernel's node `node_id`, or -1 if it has none. 0 for node 0
// when inactive.
NUMA_TCMALLOC_HIDDEN int SlotOfNode(int node_id);

// True if the kernel's node `node_id` has memory the process may use (it has
// a slot).
NUMA_TCMALLOC_HIDDEN bool NodeUsable(int node_id);

// The slot of the memory node that serves the calling thread: the node of the
// CPU it runs on, or, for a CPU-only node, the nearest memory node. 0 when
// inactive.
NUMA_TCMALLOC_HIDDEN int CurrentNode();

// Writes the slots other than `slot`, nearest first (SLIT distance, ties by
// node id), to `out`; returns how many. Memory-only nodes are included.
NUMA_TCMALLOC_HIDDEN int FallbackOrder(int slot, int out[kMaxNodes]);

// Binds [start, start+len) to the kernel's node `node_id` with the configured
// policy, within the task's membind set (DecideBinding, numa/mempolicy.h),
// before the first touch; a PROT_NONE reservation made usable later is fine.
// Returns false if the kernel refused (counted, never fatal). No-op returning
// true when inactive, with kLocal, or with a fake topology.
NUMA_TCMALLOC_HIDDEN bool BindRange(void* start, size_t len, int node_id);

// True when the active layer has its node address regions (numa/region.h):
// page heaps then grow with GrowRegion, and an address's owner slot is
// RegionOwner (numa/region.h). False when inactive.
NUMA_TCMALLOC_HIDDEN bool RegionsOn();

// Commits at least `bytes` more of `slot`'s region; see RegionGrow in
// numa/region.h. nullptr when regions are off or the region cannot grow.
NUMA_TCMALLOC_HIDDEN void* GrowRegion(int slot, size_t bytes, size_t* actual);

// Gives a released range of `slot`'s region back to it (RegionReturn in
// numa/region.h), so it leaves the heap's size. False if it cannot; the range
// then stays the caller's.
NUMA_TCMALLOC_HIDDEN bool ShrinkRegion(int slot, void* start, size_t bytes);

// TCMALLOC_NUMA_MAX_STRANDED_MB in bytes: the free memory all other nodes
// together may keep while a node's heap grows; beyond it they release free
// pages to the kernel, whatever TCMALLOC_RELEASE_RATE says.
NUMA_TCMALLOC_HIDDEN uint64_t MaxStrandedBytes();

namespace internal {
NUMA_TCMALLOC_HIDDEN extern uintptr_t owner_from_address_mask;
}  // namespace internal

// `ptr` while every page-heap address lies in a node region (so an object's
// owner follows from its address, RegionOwner in numa/region.h), else 0:
// sized delete folds the question into the test it makes of the pointer
// anyway, for one instruction.
inline uintptr_t AddressIfOwnerKnown(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr) &
         __atomic_load_n(&internal::owner_from_address_mask, __ATOMIC_RELAXED);
}

// The page heap took memory from outside the regions (a user SysAllocator):
// AddressIfOwnerKnown() is 0 from now on. Call with the page heap lock.
NUMA_TCMALLOC_HIDDEN void NoteMemoryOutsideRegions();

// Counters for introspection (MallocExtension properties, stats).
NUMA_TCMALLOC_HIDDEN uint64_t MbindCalls();
NUMA_TCMALLOC_HIDDEN uint64_t MbindFailures();
// BindRange calls a fake topology turned into no-ops (never mbind there).
NUMA_TCMALLOC_HIDDEN uint64_t BindSkipped();
// errno of the latest refused bind (EINVAL, EPERM, ...), 0 if none.
NUMA_TCMALLOC_HIDDEN int MbindLastErrno();

NUMA_TCMALLOC_HIDDEN BindPolicy Policy();
NUMA_TCMALLOC_HIDDEN RemoteFree RemoteFreePolicy();
NUMA_TCMALLOC_HIDDEN Migration MigrationPolicy();

// Slots with their own small-object lists: the slots that serve CPUs, when
// active and at most kMaxListNodes, else 1.
NUMA_TCMALLOC_HIDDEN int ListNodes();

// The small-object lists the allocator has actually built, per node: 1 until
// the central lists are set up per node, which records it here. Introspection
// reads this, not ListNodes(), so that it indexes only lists that exist (and
// builds without them: it comes before the per-node lists in the series).
NUMA_TCMALLOC_HIDDEN void SetListNodesBuilt(int n);
NUMA_TCMALLOC_HIDDEN int ListNodesBuilt();

// Small-object counters, bumped on slow paths only (relaxed atomics).
enum class ListCounter : int {
  kRemoteFreeObjects,  // objects a thread cache returned to another node
  kThreadMigrations,   // thread caches that found their thread on a new node
  kFlushedObjects,     // objects returned by the flush migration policy
  kReroutedObjects,    // objects a central list handed on to their owner's list
  kIdleDrainedObjects,  // objects idle nodes' transfer caches gave back
  kNumCounters,
};
NUMA_TCMALLOC_HIDDEN void AddToCounter(ListCounter c, uint64_t n);
NUMA_TCMALLOC_HIDDEN uint64_t CounterValue(ListCounter c);
NUMA_TCMALLOC_HIDDEN bool FakeTopology();  // TCMALLOC_NUMA_FAKE_NODES in force
NUMA_TCMALLOC_HIDDEN bool StatsAtExit();   // TCMALLOC_NUMA_STATS=1

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_NUMA_H_
