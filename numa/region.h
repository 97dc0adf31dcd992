// Regions: while the layer is active, each node's page heap grows only
// inside its own window of the address space (numa/owner.h), so an
// address's owner follows from the address. Memory the program places
// itself (a named node, interleaved) has regions of its own, with or without
// the layer, made when first used.
//
// A region is reserved PROT_NONE in chunks that follow each other (so the
// kernel merges them into one mapping), each bound to its node once, when it
// is reserved; growing the heap commits the next part with mprotect, which
// makes no mbind call and leaves one read-write mapping per node. Pages move
// between nodes only through the kernel: a node releases free pages
// (madvise), another commits fresh ones in its own region. So that the heap's
// size (what it took from the system) follows what it uses, not the sum of
// every node's peak, released ranges can also go back to their region
// (RegionReturn): PROT_NONE again, a hole the region's next growth fills
// first.
//
// Everything here runs inside malloc, under the page heap lock (growth) or
// during Init: raw syscalls only, no locks of its own.
//
// Inside the gperftools tree this file lives at src/numa/region.h.
#ifndef NUMA_TCMALLOC_NUMA_REGION_H_
#define NUMA_TCMALLOC_NUMA_REGION_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/owner.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Region ids: node n's region (n < kMaxNodes) lies in window n; the region
// of memory placed on kernel node k is NamedRegion(k); interleaved memory has
// kInterleavedRegion (numa/owner.h has the layout).
static_assert(kWindows >= kMaxNodes, "a window for every node");
inline constexpr int kFirstNamedRegion = kMaxNodes;
inline constexpr int kInterleavedRegion = 2 * kMaxNodes;
inline constexpr int kRegions = kInterleavedRegion + 1;
inline constexpr int NamedRegion(int kernel_id) {
  return kFirstNamedRegion + kernel_id;
}
inline constexpr bool IsPlacedRegion(int id) {
  return id >= kFirstNamedRegion && id < kRegions;
}
// The kernel node id of placed region `id`; -1 for interleaved memory.
inline constexpr int PlacedKernelId(int id) {
  return id == kInterleavedRegion ? -1 : id - kFirstNamedRegion;
}
static_assert(kNamedBase + kMaxNodes * kNamedPartSize <= kInterleavedBase,
              "a named part for every kernel node id");
// Node 0's window starts at address 0, where non-PIE executables and their
// brk heap live; its region starts higher up, 1 GiB past a 2 GiB boundary
// like every other region (kRegionGuard), so that the page before the region,
// which the page heap's page map must cover too, falls in the same page map
// leaf (2 MiB, zeroed, for 2 GiB of addresses on x86-64) as the region's
// start instead of costing a leaf of its own.
// (Sanitizer layouts start higher: node 0's window holds no executable.)
inline constexpr uintptr_t kNode0RegionStart =
    kLayoutBase == 0 ? (uintptr_t{1} << 38) + (uintptr_t{1} << 30)  // 257 GiB
                     : kLayoutBase + (uintptr_t{1} << 30);
// A region starts this far into its window, so two nodes' memory is never
// adjacent (the page heap must never see neighbours of different nodes).
inline constexpr uintptr_t kRegionGuard = uintptr_t{1} << 30;  // 1 GiB
// Upstream's page-map class cache (PackedCache, which free() reads first) is
// direct-mapped by page number: 2^16 entries of 8 KiB pages repeat every
// 512 MiB of address space. Regions that started at the same offset into
// their windows would put node n's k-th page and node m's k-th page in the
// same entry, and nodes that grow in step would evict each other's entries
// on every free (larson, docs/benchmarks.md). So node n's region starts
// PageMapCacheStagger(n) further in: a fraction of that period, whole
// commit granules (8 MiB steps), less than 512 MiB, so the page before the
// region still falls in the same page-map leaf. TCMALLOC_SMALL_BUT_SLOW
// builds (2^12 entries, a 32 MiB period) and other page sizes are not
// staggered apart by it.
inline constexpr uintptr_t kPageMapCachePeriod = uintptr_t{512} << 20;
inline constexpr int kStaggerBits = 6;
uintptr_t PageMapCacheStagger(int node);

// Commits are whole transparent huge pages, and multiples of every kernel
// page size up to 2 MiB (4, 16 and 64 KiB kernels).
inline constexpr size_t kCommitGranule = size_t{2} << 20;
// Reservations start small (so `ulimit -v` and many nodes cost little address
// space) and double up to kReserveMax (so a big heap needs few mbind calls).
inline constexpr size_t kFirstReserve = size_t{64} << 20;
inline constexpr size_t kReserveMax = size_t{64} << 30;
// Holes a region keeps track of. Each one splits the read-write mapping, so
// this bounds the extra mappings at two per hole; a range that would need
// another hole stays committed (released, so it costs no memory).
inline constexpr int kMaxHoles = 16;

// The part of the address space region `id` may use: [*begin, *end).
void RegionWindow(int id, uintptr_t* begin, uintptr_t* end);

// `bytes` rounded up to whole commit granules and whole kernel pages of
// `page_size` (a power of two; getpagesize() in the allocator).
inline size_t CommitBytes(size_t bytes, size_t page_size) {
  const size_t unit = page_size > kCommitGranule ? page_size : kCommitGranule;
  if (bytes > ~size_t{0} - unit) return 0;
  return (bytes + unit - 1) & ~(unit - 1);
}

// How much to reserve when a region needs `need` more bytes (a multiple of
// the granule): the next reservation size, or more if `need` is larger,
// never beyond `room`. 0 if `need` does not fit in `room`.
inline size_t ReserveBytes(size_t need, size_t next_reserve, size_t room) {
  if (need > room) return 0;
  const size_t bytes = need > next_reserve ? need : next_reserve;
  return bytes > room ? room : bytes;
}

// Binds [start, start + len), freshly reserved for region `id`, as the
// region's memory is to be placed; false if the kernel refused (the memory
// is still the region's, first-touch placed).
using BindFn = bool (*)(void* start, size_t len, int id);

// Reserves the first chunk of nodes 0..nodes-1's regions, and every later
// chunk, bound with `bind`, and records them as their node's memory
// (SetOwner); kernel_ids[n] names node n in messages. Returns false, with one
// line on stderr, if any cannot be reserved (address space limit, a window
// already in use, a kernel without room above 1 TiB); nothing stays reserved
// then, and the layer must stay off. Nodes that already have a region keep it
// (tests initialise the layer repeatedly).
bool ReserveRegions(int nodes, const uint8_t* kernel_ids, BindFn bind);

// The binder of placed regions (named nodes, interleaved), which reserve
// their first chunk at their first growth, with or without the layer.
void SetPlacedBinder(BindFn bind);

// Commits at least `bytes` more of region `id` and returns its start:
// the lowest hole big enough, else the space after the committed part
// (reserving and binding more address space first when needed). *actual is
// the size committed, a multiple of kCommitGranule. A placed region with a
// binder reserves its first chunk now. nullptr if the region cannot grow
// (window full, address-space limit, strict overcommit refused the commit):
// counted, and said once on stderr. Call with the page heap lock.
void* RegionGrow(int id, size_t bytes, size_t* actual);

// Gives [start, start + bytes) back to region `id`: it turns PROT_NONE and
// becomes a hole. The caller has released the pages (madvise) and no longer
// uses the range. False, with nothing changed, if the range is not committed
// memory of node's region, is not aligned to the kernel's page size, would
// need a hole beyond kMaxHoles, or the kernel refused. Call with the page
// heap lock.
bool RegionReturn(int id, uintptr_t start, size_t bytes);

struct RegionStats {
  uintptr_t begin;  // the window part the region may use
  uintptr_t end;
  size_t reserved;   // bytes reserved (and bound) so far
  size_t committed;  // bytes read-write now: grown, less the holes
  int holes;         // ranges given back and not yet committed again
};
// False if region `id` has reserved nothing.
bool GetRegionStats(int id, RegionStats* out);

// Reservations or commits the kernel refused.
uint64_t RegionFailures();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_REGION_H_
