// Node and placed regions: reserve, bind once, commit, holes. Why and how:
// docs/design.md, "Where a node's memory lives: regions". Everything here
// runs inside malloc, under the page heap lock (growth) or during Init: raw
// syscalls only, no locks of its own.
#ifndef NUMA_TCMALLOC_NUMA_REGION_H_
#define NUMA_TCMALLOC_NUMA_REGION_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/owner.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Region ids: node n's region is n; memory placed on kernel node k has
// NamedRegion(k), interleaved memory kInterleavedRegion.
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
// like every other region, so that the page before the region, which the
// page map must cover too, falls in the same page map leaf (2 GiB of
// addresses on x86-64) as the region's start.
inline constexpr uintptr_t kNode0RegionStart =
    kLayoutBase == 0 ? (uintptr_t{1} << 38) + (uintptr_t{1} << 30)  // 257 GiB
                     : kLayoutBase + (uintptr_t{1} << 30);
// A region starts this far into its window, so two nodes' memory is never
// adjacent (the page heap must never see neighbours of different nodes).
inline constexpr uintptr_t kRegionGuard = uintptr_t{1} << 30;  // 1 GiB
// Node n's region starts PageMapCacheStagger(n) further in, so that nodes
// growing in step do not evict each other's PackedCache entries
// (docs/design.md, as above): whole 8 MiB steps below kPageMapCachePeriod, so
// the page before the region stays in the same page-map leaf.
inline constexpr uintptr_t kPageMapCachePeriod = uintptr_t{512} << 20;
inline constexpr int kStaggerBits = 6;
uintptr_t PageMapCacheStagger(int node);

// Commits are whole transparent huge pages, and multiples of every kernel
// page size up to 2 MiB (4, 16 and 64 KiB kernels).
inline constexpr size_t kCommitGranule = size_t{2} << 20;
// Reservations start small (for `ulimit -v` and many nodes) and double up to
// kReserveMax (so a big heap needs few mbind calls).
inline constexpr size_t kFirstReserve = size_t{64} << 20;
inline constexpr size_t kReserveMax = size_t{64} << 30;
// Holes a region keeps track of: each splits the read-write mapping. A range
// that would need another hole stays committed (released: it costs nothing).
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

// How much to reserve when a region needs `need` more bytes: the next
// reservation size, or `need` if larger, never beyond `room`; 0 if `need`
// does not fit.
inline size_t ReserveBytes(size_t need, size_t next_reserve, size_t room) {
  if (need > room) return 0;
  const size_t bytes = need > next_reserve ? need : next_reserve;
  return bytes > room ? room : bytes;
}

// Binds [start, start + len), freshly reserved for region `id`; false if the
// kernel refused (the memory stays the region's, first-touch placed).
using BindFn = bool (*)(void* start, size_t len, int id);

// Reserves the first chunk of nodes 0..nodes-1's regions; this and every
// later chunk are bound with `bind` and recorded as their node's (SetOwner);
// kernel_ids[n] names node n in messages. False, with one line on stderr, if
// any cannot be reserved; nothing stays reserved then, and the layer must
// stay off. Nodes that already have a region keep it (tests re-initialise).
bool ReserveRegions(int nodes, const uint8_t* kernel_ids, BindFn bind);

// The binder of placed regions, which reserve at their first growth.
void SetPlacedBinder(BindFn bind);

// Commits at least `bytes` more of region `id` and returns its start: the
// lowest hole big enough, else the space after the committed part (reserving
// more first when needed). *actual is the size committed, whole granules.
// nullptr if the region cannot grow: counted, and said once on stderr. Call
// with the page heap lock.
void* RegionGrow(int id, size_t bytes, size_t* actual);

// Gives [start, start + bytes), released and unused, back to region `id` as
// a PROT_NONE hole. False, with nothing changed, if the range is not the
// region's committed memory, not page-aligned, would need a hole beyond
// kMaxHoles, or the kernel refused. Call with the page heap lock.
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

// The address-space limit (RLIMIT_AS) in bytes, or 0 when there is none.
uint64_t AddressSpaceLimit();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_REGION_H_
