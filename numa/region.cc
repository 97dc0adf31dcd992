// Regions (numa/region.h): reservation, commits, holes, and the owner table
// behind OwnerOf (numa/owner.h), kept as regions reserve address space.
#include "numa/region.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa/parse.h"
#include "numa/syscall.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000  // Linux 4.17
#endif

namespace tcmalloc {
namespace numa {
namespace {

struct Hole {
  uintptr_t begin;
  uintptr_t end;
};

// Zero-initialized, touched only during Init and under the page heap lock.
struct Region {
  uintptr_t begin;          // first address the region may use
  uintptr_t end;            // end of the window
  uintptr_t reserved_end;   // [begin, reserved_end) is reserved and bound
  uintptr_t committed_end;  // [begin, committed_end) is read-write but holes
  size_t next_reserve;
  // PROT_NONE ranges inside [begin, committed_end), sorted, never touching
  // one another or committed_end.
  int num_holes;
  Hole holes[kMaxHoles];
  int kernel_id;  // the node's, for messages; -1 for interleaved memory
  // g_gives at the region's last failed extension: until some region gives
  // address space back, growing again fails at once, without a system call.
  uint64_t failed_at_gives;
  bool extension_failed;
};

Region g_regions[kRegions];
bool g_reserved;
BindFn g_bind;
BindFn g_placed_bind;
uint64_t g_failures;
uint64_t g_gives;  // address space given back by any region, in events
// RLIMIT_AS at Init, 0 for none: reservations ahead of use stay small under
// it, so that the allocator's other mappings still fit.
uint64_t g_limit;
bool g_warned;
bool g_warned_placed;

// "tcmalloc: <what> node <kernel id> (errno <err>)<tail>\n" on stderr, once
// for node regions and once for placed ones.
void WarnOnce(const char* what, int id, int err, const char* tail) {
  bool* warned = IsPlacedRegion(id) ? &g_warned_placed : &g_warned;
  if (*warned) return;
  *warned = true;
  const int kernel_id = g_regions[id].kernel_id;
  Line line;
  line.Add("tcmalloc: ").Add(what);
  if (id == kInterleavedRegion) {
    line.Add(" interleaved memory");
  } else {
    line.Add(IsPlacedRegion(id) ? " named node " : " node ").AddUint(kernel_id);
  }
  line.Add(" (errno ").AddUint(err).Add(")").Add(tail).WriteToStderr();
}

void CountFailure() { __atomic_fetch_add(&g_failures, 1, __ATOMIC_RELAXED); }

// Gives back the reserved, never-committed tail of every node region but
// `id`, keeping one page of each: under RLIMIT_AS that room is what a node
// that cannot grow needs. True if any was given back.
bool TrimOtherReserves(int id) {
  bool trimmed = false;
  for (int i = 0; i < kMaxNodes; ++i) {
    Region* o = &g_regions[i];
    if (i == id || o->reserved_end == o->begin) continue;
    const uintptr_t page = static_cast<uintptr_t>(getpagesize());
    uintptr_t keep = o->committed_end;
    if (keep < o->begin + page) keep = o->begin + page;
    if (keep >= o->reserved_end) continue;
    RawSyscall(SYS_munmap, static_cast<long>(keep),
               static_cast<long>(o->reserved_end - keep));
    o->reserved_end = keep;
    o->next_reserve = kCommitGranule;
    trimmed = true;
  }
  if (trimmed) ++g_gives;
  return trimmed;
}

void WarnLimit(int id) {
  if (g_warned) return;
  g_warned = true;
  Line line;
  line.Add("tcmalloc: the address-space limit (ulimit -v, ")
      .AddUint(AddressSpaceLimit() >> 20)
      .Add(" MiB) stops node ")
      .AddUint(g_regions[id].kernel_id)
      .Add(
          "'s heap from growing; its threads use other nodes' memory, "
          "then allocations fail as without NUMA")
      .WriteToStderr();
}

const char* Tail(int id) {
  return IsPlacedRegion(id) ? "; allocations placed there fail"
                            : "; its heap borrows the nearest nodes' memory";
}

MemoryKind KindOf(int id) {
  if (id == kInterleavedRegion) return MemoryKind::kInterleaved;
  return IsPlacedRegion(id) ? MemoryKind::kNamed : MemoryKind::kNode;
}

int OwnerNode(int id) {
  if (id == kInterleavedRegion) return 0;
  return IsPlacedRegion(id) ? PlacedKernelId(id) : id;
}

// Reserves [r->reserved_end, +bytes) PROT_NONE, binds it and records it as
// region id's. Returns 0 or the kernel's errno.
int Reserve(Region* r, int id, size_t bytes) {
  const uintptr_t hint = r->reserved_end;
  long p = RawSyscall(SYS_mmap, static_cast<long>(hint),
                      static_cast<long>(bytes), PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p < 0 && p > -4096) return static_cast<int>(-p);
  if (static_cast<uintptr_t>(p) != hint) {
    // A kernel before 4.17 took the flag as a hint: the window is in use.
    RawSyscall(SYS_munmap, p, static_cast<long>(bytes));
    return EEXIST;
  }
  const BindFn bind = IsPlacedRegion(id) ? g_placed_bind : g_bind;
  if (bind != nullptr) bind(reinterpret_cast<void*>(hint), bytes, id);
  r->reserved_end += bytes;
  SetOwner(r->begin, r->reserved_end - r->begin, KindOf(id), OwnerNode(id));
  return 0;
}

void Unreserve(Region* r) {
  if (r->reserved_end > r->begin) {
    RawSyscall(SYS_munmap, static_cast<long>(r->begin),
               static_cast<long>(r->reserved_end - r->begin));
  }
  *r = Region{};
}

int Protect(uintptr_t start, size_t bytes, int prot) {
  long rc = RawSyscall(SYS_mprotect, static_cast<long>(start),
                       static_cast<long>(bytes), prot);
  return rc == 0 ? 0 : static_cast<int>(-rc);
}

void RemoveHole(Region* r, int i) {
  for (int j = i; j + 1 < r->num_holes; ++j) r->holes[j] = r->holes[j + 1];
  --r->num_holes;
}

// Where [start, end) goes: i is the first hole after start.
struct HolePlace {
  int i;
  bool at_end;  // ends at committed_end: the committed part just shrinks
  bool joins_prev;
  bool joins_next;
  bool needs_entry() const { return !at_end && !joins_prev && !joins_next; }
};

HolePlace PlaceHole(const Region& r, uintptr_t start, uintptr_t end) {
  HolePlace p{0, end == r.committed_end, false, false};
  while (p.i < r.num_holes && r.holes[p.i].begin < start) ++p.i;
  p.joins_prev = p.i > 0 && r.holes[p.i - 1].end == start;
  p.joins_next = p.i < r.num_holes && r.holes[p.i].begin == end;
  return p;
}

// Records [start, end) as PROT_NONE: the new committed end, or merged into
// the holes it touches, or a hole of its own (the caller checked for room).
void AddHole(Region* r, const HolePlace& p, uintptr_t start, uintptr_t end) {
  if (p.at_end) {
    r->committed_end = start;
  } else if (p.joins_prev && p.joins_next) {
    r->holes[p.i - 1].end = r->holes[p.i].end;
    RemoveHole(r, p.i);
  } else if (p.joins_prev) {
    r->holes[p.i - 1].end = end;
  } else if (p.joins_next) {
    r->holes[p.i].begin = start;
  } else {
    for (int j = r->num_holes; j > p.i; --j) r->holes[j] = r->holes[j - 1];
    r->holes[p.i] = Hole{start, end};
    ++r->num_holes;
  }
  // A hole that now reaches the committed end is just uncommitted space.
  const int last = r->num_holes - 1;
  if (last >= 0 && r->holes[last].end == r->committed_end) {
    r->committed_end = r->holes[last].begin;
    RemoveHole(r, last);
  }
}

}  // namespace

uint64_t AddressSpaceLimit() {
  struct rlimit lim;
  if (RawSyscall(SYS_prlimit64, 0, RLIMIT_AS, 0,
                 reinterpret_cast<long>(&lim)) != 0 ||
      lim.rlim_cur == RLIM_INFINITY) {
    return 0;
  }
  return lim.rlim_cur;
}

internal::Sector internal::g_sectors[kSectors];

void SetOwner(uintptr_t begin, size_t size, MemoryKind kind, int node) {
  if (size == 0) return;
  const uintptr_t end = begin + size;
  for (uintptr_t s = (begin - kLayoutBase) >> kSectorShift;
       s < static_cast<uintptr_t>(kSectors) &&
       kLayoutBase + (s << kSectorShift) < end;
       ++s) {
    internal::Sector& sector = internal::g_sectors[s];
    if (sector.size == 0) {
      sector.begin = begin;
      sector.kind = kind;
      sector.node = static_cast<uint8_t>(node);
    }
    // The start, kind and node are visible before the size that uses them.
    __atomic_store_n(&sector.size, end - sector.begin, __ATOMIC_RELEASE);
  }
}

void ClearOwners() {
  for (internal::Sector& sector : internal::g_sectors) {
    __atomic_store_n(&sector.size, uintptr_t{0}, __ATOMIC_RELEASE);
    sector = internal::Sector{};
  }
}

uintptr_t PageMapCacheStagger(int node) {
  // The node's low bits reversed: 1 -> 1/2 of the period, 2 -> 1/4, 3 ->
  // 3/4, ...: any first n nodes lie as far apart as n starts can.
  uintptr_t reversed = 0;
  for (int bit = 0; bit < kStaggerBits; ++bit) {
    if ((node >> bit) & 1) reversed |= uintptr_t{1} << (kStaggerBits - 1 - bit);
  }
  return reversed * (kPageMapCachePeriod >> kStaggerBits);
}

void RegionWindow(int id, uintptr_t* begin, uintptr_t* end) {
  if (id == kInterleavedRegion) {
    *begin = kInterleavedBase + kRegionGuard;
    *end = kInterleavedBase + kWindowSize;
  } else if (IsPlacedRegion(id)) {
    const uintptr_t part =
        kNamedBase +
        static_cast<uintptr_t>(id - kFirstNamedRegion) * kNamedPartSize;
    *begin = part + kRegionGuard;
    *end = part + kNamedPartSize;
  } else {
    const uintptr_t window = WindowStart(id);
    *begin = id == 0 ? kNode0RegionStart
                     : window + kRegionGuard + PageMapCacheStagger(id);
    *end = window + kWindowSize;
  }
}

// The first reservation of each of `nodes` regions: under an address-space
// limit at most a quarter of it shared among them, so that 16 nodes under
// `ulimit -v 256M` still start.
static size_t FirstReserve(int nodes, uint64_t limit) {
  if (limit == 0) return kFirstReserve;
  size_t share = static_cast<size_t>(limit / 4 / static_cast<uint64_t>(nodes));
  share &= ~(kCommitGranule - 1);
  if (share < kCommitGranule) share = kCommitGranule;
  return share < kFirstReserve ? share : kFirstReserve;
}

// An empty region `id` at the start of its window.
static void StartRegion(int id, size_t first_reserve) {
  Region* r = &g_regions[id];
  RegionWindow(id, &r->begin, &r->end);
  r->reserved_end = r->committed_end = r->begin;
  r->next_reserve = first_reserve;
}

bool ReserveRegions(int nodes, const uint8_t* kernel_ids, BindFn bind) {
  g_bind = bind;
  g_limit = AddressSpaceLimit();
  const size_t first = FirstReserve(nodes, g_limit);
  for (int node = 0; node < nodes; ++node) {
    Region* r = &g_regions[node];
    r->kernel_id = kernel_ids[node];
    if (r->reserved_end > r->begin) {
      SetOwner(r->begin, r->reserved_end - r->begin, MemoryKind::kNode, node);
      continue;
    }
    StartRegion(node, first);
    const int err = Reserve(r, node, first);
    if (err != 0) {
      CountFailure();
      WarnOnce("cannot reserve the NUMA address region of", node, err,
               "; the NUMA layer stays off");
      for (int i = 0; i < kMaxNodes; ++i) Unreserve(&g_regions[i]);
      ClearOwners();
      g_reserved = false;
      return false;
    }
    r->next_reserve = 2 * first;
  }
  g_reserved = true;
  return true;
}

void SetPlacedBinder(BindFn bind) { g_placed_bind = bind; }

// A placed region's start, made at its first growth.
static bool StartPlacedRegion(int id) {
  if (g_regions[id].begin != 0) return true;
  if (g_placed_bind == nullptr) return false;
  StartRegion(id, kFirstReserve);
  g_regions[id].kernel_id = PlacedKernelId(id);
  return true;
}

void* RegionGrow(int id, size_t bytes, size_t* actual) {
  if (id < 0 || id >= kRegions) return nullptr;
  if (IsPlacedRegion(id) ? !StartPlacedRegion(id) : !g_reserved) {
    return nullptr;
  }
  Region* r = &g_regions[id];
  if (r->begin == 0) return nullptr;
  if (r->reserved_end == r->begin && !IsPlacedRegion(id)) return nullptr;
  const size_t size = CommitBytes(bytes, getpagesize());
  int hole = -1;  // the lowest hole big enough
  for (int i = 0; size != 0 && hole < 0 && i < r->num_holes; ++i) {
    if (r->holes[i].end - r->holes[i].begin >= size) hole = i;
  }
  if (hole < 0 && (size == 0 || size > r->end - r->committed_end)) {
    // A request no window could hold fails as it would in vanilla; one that
    // only needs more than is left means the node's window is full.
    if (size != 0 && size <= r->end - r->begin) {
      CountFailure();
      WarnOnce("the NUMA address region is full on", id, ENOMEM, Tail(id));
    }
    return nullptr;
  }
  if (hole < 0 && r->committed_end + size > r->reserved_end) {
    if (r->extension_failed && r->failed_at_gives == g_gives) return nullptr;
    const size_t need = r->committed_end + size - r->reserved_end;
    const size_t room = r->end - r->reserved_end;
    size_t ahead = r->next_reserve;
    if (g_limit != 0 && ahead > g_limit / 16) ahead = g_limit / 16;
    size_t chunk = ReserveBytes(need, ahead, room);
    int err = Reserve(r, id, chunk);
    if (err == ENOMEM) {
      // An address-space limit (ulimit -v): ask for no more than needed,
      // then take the room the other nodes reserved and never used.
      if (chunk > need) err = Reserve(r, id, need);
      if (err == ENOMEM && TrimOtherReserves(id)) err = Reserve(r, id, need);
    }
    if (err != 0) {
      CountFailure();
      r->extension_failed = true;
      r->failed_at_gives = g_gives;
      if (err == ENOMEM && AddressSpaceLimit() != 0) {
        WarnLimit(id);
      } else {
        WarnOnce("cannot extend the NUMA address region of", id, err, Tail(id));
      }
      return nullptr;
    }
    r->extension_failed = false;
    if (r->next_reserve < kReserveMax) r->next_reserve *= 2;
  }
  const uintptr_t start = hole >= 0 ? r->holes[hole].begin : r->committed_end;
  const int err = Protect(start, size, PROT_READ | PROT_WRITE);
  if (err != 0) {
    // Strict overcommit (vm.overcommit_memory=2) refuses the commit charge.
    CountFailure();
    WarnOnce("cannot commit memory in the NUMA address region of", id, err,
             Tail(id));
    return nullptr;
  }
  if (hole < 0) {
    r->committed_end += size;
  } else {
    r->holes[hole].begin += size;
    if (r->holes[hole].begin == r->holes[hole].end) RemoveHole(r, hole);
  }
  *actual = size;
  return reinterpret_cast<void*>(start);
}

bool RegionReturn(int id, uintptr_t start, size_t bytes) {
  if (id < 0 || id >= kRegions || bytes == 0) return false;
  Region* r = &g_regions[id];
  if (r->reserved_end == r->begin) return false;
  const uintptr_t end = start + bytes;
  const uintptr_t page_mask = static_cast<uintptr_t>(getpagesize()) - 1;
  if (start < r->begin || end > r->committed_end || end < start ||
      ((start | bytes) & page_mask) != 0) {
    return false;
  }
  for (int i = 0; i < r->num_holes; ++i) {
    if (start < r->holes[i].end && r->holes[i].begin < end) return false;
  }
  // Check the table before the syscall, so a refusal changes nothing.
  const HolePlace place = PlaceHole(*r, start, end);
  if (place.needs_entry() && r->num_holes == kMaxHoles) return false;
  const int err = Protect(start, bytes, PROT_NONE);
  if (err != 0) {
    CountFailure();
    return false;
  }
  AddHole(r, place, start, end);
  ++g_gives;
  return true;
}

bool GetRegionStats(int id, RegionStats* out) {
  if (id < 0 || id >= kRegions) return false;
  const Region& r = g_regions[id];
  if (r.reserved_end == r.begin) return false;
  out->begin = r.begin;
  out->end = r.end;
  out->reserved = r.reserved_end - r.begin;
  out->committed = r.committed_end - r.begin;
  for (int i = 0; i < r.num_holes; ++i) {
    out->committed -= r.holes[i].end - r.holes[i].begin;
  }
  out->holes = r.num_holes;
  return true;
}

uint64_t RegionFailures() {
  return __atomic_load_n(&g_failures, __ATOMIC_RELAXED);
}

}  // namespace numa
}  // namespace tcmalloc
