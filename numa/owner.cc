// The owner table behind OwnerOf (numa/owner.h), kept by the region code as
// it reserves address space.
#include "numa/owner.h"

namespace tcmalloc {
namespace numa {

internal::Slot internal::g_slots[kSlots];

void SetOwner(uintptr_t begin, size_t size, MemoryKind kind, int node) {
  if (size == 0) return;
  const uintptr_t end = begin + size;
  for (uintptr_t s = begin >> kSlotShift;
       s < static_cast<uintptr_t>(kSlots) && (s << kSlotShift) < end; ++s) {
    internal::Slot& slot = internal::g_slots[s];
    if (slot.size == 0) {
      slot.begin = begin;
      slot.kind = kind;
      slot.node = static_cast<uint8_t>(node);
    }
    // The start, kind and node are visible before the size that uses them.
    __atomic_store_n(&slot.size, end - slot.begin, __ATOMIC_RELEASE);
  }
}

void ClearOwners() {
  for (internal::Slot& slot : internal::g_slots) {
    __atomic_store_n(&slot.size, uintptr_t{0}, __ATOMIC_RELEASE);
    slot = internal::Slot{};
  }
}

}  // namespace numa
}  // namespace tcmalloc
