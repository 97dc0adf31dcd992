// Memory the program places itself (numa/placed.h): gperftools/numa.h's
// calls, and what free() and realloc() do with placed memory.
#include "numa/placed.h"

#include <errno.h>

#include "gperftools/numa.h"
#include "gperftools/tcmalloc.h"
#include "internal_logging.h"
#include "malloc_hook-inl.h"
#include "numa/central_lists.h"
#include "numa/introspection.h"
#include "numa/node_heaps.h"
#include "static_vars.h"

namespace tcmalloc {
namespace numa {
namespace {

// What introspection reads of placed memory (numa/introspection.h).
constexpr PlacedMemoryReader kReader = {PlacedCentralLength,
                                        PlacedTransferLength,
                                        PlacedOverheadBytes, PlacedFreeBytes};

// Placement, readied once (StartPlacement, and introspection told where to
// read). 0 when ready, else the errno placement fails with: ENOSYS in the
// debug libraries, else StartPlacement's (PlacementError).
int Ready() {
  static int ready;  // 0: not yet; 1: ready; < 0: -errno for good
  const int r = __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
  if (r == 1) return 0;
  if (r < 0) return -r;
  // A first call before any malloc: the allocator sets itself up first.
  if (!Static::IsInited()) tc_free(tc_malloc(1));
  if (!PlacementOffered()) {
    __atomic_store_n(&ready, -ENOSYS, __ATOMIC_RELEASE);
    return ENOSYS;
  }
  if (!StartPlacement()) {
    const int err = PlacementError();
    if (err == EPERM) __atomic_store_n(&ready, -EPERM, __ATOMIC_RELEASE);
    return err;
  }
  SetPlacedMemoryReader(&kReader);
  __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  return 0;
}

// `size` bytes of placed region `id`.
void* AllocPlaced(int id, size_t size) {
  void* result = nullptr;
  if (size <= kMaxSize) {
    uint32_t cl;
    if (Static::sizemap()->GetSizeClass(size, &cl)) result = PopPlaced(id, cl);
  } else if (Length pages = tcmalloc::pages(size); pages != 0) {
    Span* span = NodeHeaps::NewPlaced(id, pages);
    if (span != nullptr)
      result = reinterpret_cast<void*>(span->start << kPageShift);
  }
  if (result == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  InvokeNewHook(result, size);
  return result;
}

// `size` bytes placed on kernel node `node`, or interleaved for -1.
void* Place(int node, size_t size) {
  int err = Ready();
  if (err == 0 && node >= 0 && !HasNode(PlacementNodes(), node)) err = EINVAL;
  if (err != 0) {
    errno = err;
    return nullptr;
  }
  return AllocPlaced(node < 0 ? kInterleavedRegion : NamedRegion(node), size);
}

}  // namespace

bool internal::g_placed_apart = true;

void SetPlacedSeparationForTest(bool on) { internal::g_placed_apart = on; }

void FreePlaced(void* ptr, uint32_t cl) {
  const Owner o = OwnerOf(ptr);
  // Only placed regions hold page heap spans in that part of the space.
  CHECK_CONDITION(IsPlaced(o));
  PushPlaced(PlacedRegionOf(o), cl, ptr);
}

void* AllocLike(const void* old_ptr, size_t size) {
  return AllocPlaced(PlacedRegionOf(OwnerOf(old_ptr)), size);
}

}  // namespace numa
}  // namespace tcmalloc

using tcmalloc::numa::PlacementNodes;

extern "C" PERFTOOLS_DLL_DECL __attribute__((visibility("default"))) void*
tc_numa_malloc_onnode(size_t size, int node) {
  if (node < 0 || node >= tcmalloc::numa::kMaxNodes) {
    errno = EINVAL;
    return nullptr;
  }
  return tcmalloc::numa::Place(node, size);
}

extern "C" PERFTOOLS_DLL_DECL __attribute__((visibility("default"))) void*
tc_numa_malloc_interleaved(size_t size) {
  return tcmalloc::numa::Place(-1, size);
}

extern "C" PERFTOOLS_DLL_DECL __attribute__((visibility("default"))) int
tc_numa_node_of(const void* ptr) {
  using tcmalloc::numa::MemoryKind;
  const tcmalloc::numa::Owner o = tcmalloc::numa::OwnerOf(ptr);
  switch (o.kind) {
    case MemoryKind::kNamed:
      return o.node;
    case MemoryKind::kNode:
      // A proxy the kernel would not bind holds pages wherever the CPUs it
      // serves faulted them: no node can be named.
      return tcmalloc::numa::NodeHoldsItsMemory(o.node)
                 ? tcmalloc::numa::KernelId(o.node)
                 : -1;
    default:
      return -1;
  }
}

extern "C" PERFTOOLS_DLL_DECL __attribute__((visibility("default"))) int
tc_numa_node_ids(int* ids, int max_ids) {
  // The nodes need no placed free(): the debug libraries list them too.
  if (!tcmalloc::Static::IsInited()) tc_free(tc_malloc(1));
  // Found even where placement itself is refused (EPERM): they are still
  // the nodes the process's memory comes from.
  tcmalloc::numa::StartPlacement();
  const uint64_t nodes = PlacementNodes() != 0 ? PlacementNodes() : uint64_t{1};
  int n = 0;
  for (uint64_t m = nodes; m != 0; m &= m - 1, ++n) {
    if (ids != nullptr && n < max_ids) ids[n] = __builtin_ctzll(m);
  }
  return n;
}

extern "C" PERFTOOLS_DLL_DECL __attribute__((visibility("default"))) int
tc_numa_num_nodes(void) {
  return tc_numa_node_ids(nullptr, 0);
}
