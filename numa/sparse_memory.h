// Memory for metadata that is written sparsely: page map leaves (2 MiB, of
// which a heap writes the entries of the pages it uses) and thread caches'
// node lists (a page per node, of which a thread writes its own nodes').
//
// Under transparent huge pages set to `always`, the first write to any 2
// MiB-aligned stretch of an ordinary anonymous mapping makes the whole
// stretch resident, so this memory comes from mappings of its own marked
// MADV_NOHUGEPAGE: only the 4 KiB pages written are resident. They are mapped
// in steps of several MiB and carved in order, so that all sparse metadata
// lies in one or a few mappings (each counts against vm.max_map_count); the
// unused rest of a step is untouched. Fresh memory is zero. Never freed.
//
// Raw syscalls only: called inside malloc, with the page heap lock or no
// lock, so it takes a leaf lock of its own.
#ifndef NUMA_TCMALLOC_NUMA_SPARSE_MEMORY_H_
#define NUMA_TCMALLOC_NUMA_SPARSE_MEMORY_H_

#include <stddef.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// `bytes` of zeroed memory, page aligned, without huge pages; nullptr if the
// kernel refuses the mapping. A refused madvise is ignored (the memory is
// still usable, only denser in RAM). Thread-safe.
void* SparseAlloc(size_t bytes);

// The metadata bump allocator: `len` bytes carved off [*next, *next + *left).
// When they do not fit, the rest stays unused (and untouched) for a fresh
// area of `area_len` >= len bytes from `map`; nullptr, the area unchanged,
// if `map` fails. The caller serializes.
inline void* BumpCarve(char** next, size_t* left, size_t len, size_t area_len,
                       void* (*map)(size_t)) {
  if (len > *left) {
    char* area = static_cast<char*>(map(area_len));
    if (area == nullptr) return nullptr;
    *next = area;
    *left = area_len;
  }
  void* result = *next;
  *next += len;
  *left -= len;
  return result;
}

// `*table`, `entries` zeroed T's, SparseAlloc'd at its first use: of two
// threads that race here, one mapping stays untouched address space. nullptr
// if the kernel refuses the mapping.
template <typename T>
T* SparseTable(T** table, size_t entries) {
  T* t = __atomic_load_n(table, __ATOMIC_ACQUIRE);
  if (t != nullptr) return t;
  T* fresh = static_cast<T*>(SparseAlloc(entries * sizeof(T)));
  if (fresh == nullptr) return nullptr;
  if (!__atomic_compare_exchange_n(table, &t, fresh, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    return t;
  }
  return fresh;
}

// Called on each fresh mapping before any of it is written, under
// SparseAlloc's lock (raw syscalls only, no allocation). Init sets it where
// the kernel's NUMA balancing would otherwise move the metadata away from
// its first writer's node (numa.cc); nullptr, the default, does nothing.
void SetSparseMappingHook(void (*hook)(void* start, size_t len));

// Under an address-space limit, `arena` (the allocator's metadata arena)
// serves SparseAlloc instead of mappings of its own (docs/design.md, "Where
// a node's memory lives: regions"); its pages are then neither kept from huge
// pages nor passed to the mapping hook. nullptr, the default: mappings. What
// `arena` returns is zeroed (a program's SysAllocator may recycle memory); it
// is called with no lock of the layer's but the page heap lock.
void SetSparseArena(void* (*arena)(size_t bytes));

// The leaf lock SparseAlloc takes, held across fork() (innermost of the
// fork handlers' locks) so that the child's carving state is whole.
void LockSparseMemory();
void UnlockSparseMemory();

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_SPARSE_MEMORY_H_
