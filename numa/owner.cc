// The owner table behind OwnerOf (numa/owner.h), kept by the region code as
// it reserves address space.
#include "numa/owner.h"

namespace tcmalloc {
namespace numa {

internal::Window internal::g_windows[kWindows];

void SetOwner(uintptr_t begin, size_t size, MemoryKind kind, int node) {
  const uintptr_t w = begin >> kWindowShift;
  if (w >= kWindows) return;
  internal::Window& win = internal::g_windows[w];
  if (win.size == 0) {
    win.begin = begin;
    win.kind = kind;
    win.node = static_cast<uint8_t>(node);
  }
  // The start, kind and node are visible before the size that uses them.
  __atomic_store_n(&win.size, begin + size - win.begin, __ATOMIC_RELEASE);
}

void ClearOwners() {
  for (internal::Window& win : internal::g_windows) {
    __atomic_store_n(&win.size, uintptr_t{0}, __ATOMIC_RELEASE);
    win = internal::Window{};
  }
}

}  // namespace numa
}  // namespace tcmalloc
