// The owner table behind OwnerOf (numa/owner.h), kept by the region code as
// it reserves address space.
#include "numa/owner.h"

namespace tcmalloc {
namespace numa {

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

}  // namespace numa
}  // namespace tcmalloc
