/* numa-tcmalloc: memory placed where the program says, on a named NUMA node
 * or interleaved over the nodes, from the same allocator as malloc.
 *
 * Every call works in every process: with the NUMA layer on or off
 * (TCMALLOC_NUMA=0 turns off automatic placement, not the program's own),
 * and on a machine with one node, where everything is on node 0. Memory
 * from these calls is freed with free() (or delete, for memory an object was
 * placed in), resized with realloc() (which keeps its node or interleaving)
 * and measured with malloc_usable_size(); it is aligned as malloc's is. It is
 * never handed out again as another kind of memory. docs/tuning.md, "Placing
 * memory yourself", says what each call costs and what the kernel does.
 *
 * Node numbers are the kernel's (as numactl and /sys/devices/system/node
 * show them), and may be sparse.
 *
 * The debug libraries (libtcmalloc_debug, libtcmalloc_minimal_debug) do not
 * place memory: there tc_numa_malloc_onnode and tc_numa_malloc_interleaved
 * return NULL with errno ENOSYS.
 *
 * Where the kernel refuses mbind (the default seccomp profile of Docker and
 * of Kubernetes' RuntimeDefault, without CAP_SYS_NICE) and the process may
 * use two nodes or more, no placement could be kept: tc_numa_malloc_onnode
 * and tc_numa_malloc_interleaved return NULL with errno EPERM, every time.
 *
 * Inside the gperftools tree this file lives at src/gperftools/numa.h.
 */
#ifndef GPERFTOOLS_NUMA_H_
#define GPERFTOOLS_NUMA_H_

#include <stddef.h>

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* `size` bytes on kernel node `node`, bound strictly: no page of it ever
 * lands on another node. When the node runs out of memory the kernel
 * reclaims, then OOM-kills the process, as under numactl --membind=node; it
 * does not fall back. NULL with errno EINVAL if the process may not use
 * `node` (no such node, no memory there, outside its cpuset or its
 * numactl --membind set); NULL with errno ENOMEM if the size cannot be
 * served. Small blocks come from per-node free lists, reused after free(). */
PERFTOOLS_DLL_DECL void* tc_numa_malloc_onnode(size_t size, int node);

/* `size` bytes spread page by page over the nodes the process may use: by
 * the kernel's weighted interleave where it has one (Linux 6.9 and later,
 * weights in /sys/kernel/mm/mempolicy/weighted_interleave/, equal unless
 * set), else round robin. Small blocks come from one interleaved set of free
 * lists. NULL with errno ENOMEM if the size cannot be served. */
PERFTOOLS_DLL_DECL void* tc_numa_malloc_interleaved(size_t size);

/* The kernel node whose memory holds `ptr` as the allocator placed it:
 *  - memory from tc_numa_malloc_onnode: its node;
 *  - other memory of a node's heap while the NUMA layer is on: that node.
 *    Small objects are written by that node's threads; a block of 256 KiB
 *    or more lies where the program first wrote it (TCMALLOC_NUMA_POLICY=
 *    local, the default), which is that node unless other nodes' threads
 *    wrote it first;
 *  - -1 for interleaved memory, for memory the allocator did not place (any
 *    memory while the layer is off, but named-node memory), for memory of a
 *    node whose pages the kernel would not bind where they had to be (mbind
 *    refused), and for pointers that are not the allocator's. */
PERFTOOLS_DLL_DECL int tc_numa_node_of(const void* ptr);

/* How many nodes the process may place memory on (at least 1). */
PERFTOOLS_DLL_DECL int tc_numa_num_nodes(void);

/* Writes the kernel ids of those nodes, ascending, to ids[0..max_ids-1] and
 * returns how many there are (which may be more than max_ids). */
PERFTOOLS_DLL_DECL int tc_numa_node_ids(int* ids, int max_ids);

#ifdef __cplusplus
} /* extern "C" */

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace tcmalloc {
namespace numa {

namespace internal {

[[noreturn]] inline void BadAlloc() {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  throw std::bad_alloc();
#else
  std::abort();
#endif
}

/* Memory for n objects of T from `alloc` (a placement call bound to its
 * node or to interleaving), aligned for T even beyond malloc's alignment:
 * an over-aligned T gets a larger block, and the block's start is kept
 * just before the aligned pointer for deallocate(). */
template <typename T, typename Alloc>
T* Allocate(std::size_t n, Alloc alloc) {
  if (n > static_cast<std::size_t>(-1) / sizeof(T)) BadAlloc();
  const std::size_t bytes = n * sizeof(T);
  if (alignof(T) <= alignof(std::max_align_t)) {
    void* p = alloc(bytes);
    if (p == nullptr) BadAlloc();
    return static_cast<T*>(p);
  }
  const std::size_t extra = alignof(T) + sizeof(void*);
  if (bytes > static_cast<std::size_t>(-1) - extra) BadAlloc();
  void* block = alloc(bytes + extra);
  if (block == nullptr) BadAlloc();
  const std::uintptr_t start =
      reinterpret_cast<std::uintptr_t>(block) + sizeof(void*);
  const std::uintptr_t aligned =
      (start + alignof(T) - 1) & ~(std::uintptr_t{alignof(T)} - 1);
  reinterpret_cast<void**>(aligned)[-1] = block;
  return reinterpret_cast<T*>(aligned);
}

template <typename T>
void Deallocate(T* p) {
  if (alignof(T) <= alignof(std::max_align_t)) {
    std::free(p);
  } else {
    std::free(reinterpret_cast<void**>(p)[-1]);
  }
}

}  // namespace internal

/* A std::allocator-compatible allocator that places its memory on one node:
 *   std::vector<int, tcmalloc::numa::NodeAllocator<int>> v(
 *       tcmalloc::numa::NodeAllocator<int>(1));
 * Throws std::bad_alloc where tc_numa_malloc_onnode returns NULL (a node the
 * process may not use, or no memory); aborts instead without exceptions. */
template <typename T>
class NodeAllocator {
 public:
  using value_type = T;

  explicit NodeAllocator(int node) noexcept : node_(node) {}
  template <typename U>
  NodeAllocator(const NodeAllocator<U>& other) noexcept
      : node_(other.node()) {}

  T* allocate(std::size_t n) {
    const int node = node_;
    return internal::Allocate<T>(
        n, [node](std::size_t bytes) { return tc_numa_malloc_onnode(bytes, node); });
  }
  void deallocate(T* p, std::size_t) noexcept { internal::Deallocate(p); }

  int node() const noexcept { return node_; }

 private:
  int node_;
};

template <typename T, typename U>
bool operator==(const NodeAllocator<T>& a, const NodeAllocator<U>& b) noexcept {
  return a.node() == b.node();
}
template <typename T, typename U>
bool operator!=(const NodeAllocator<T>& a, const NodeAllocator<U>& b) noexcept {
  return !(a == b);
}

/* A std::allocator-compatible allocator of interleaved memory:
 *   std::vector<float, tcmalloc::numa::InterleavedAllocator<float>> weights;
 */
template <typename T>
class InterleavedAllocator {
 public:
  using value_type = T;

  InterleavedAllocator() noexcept = default;
  template <typename U>
  InterleavedAllocator(const InterleavedAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    return internal::Allocate<T>(
        n, [](std::size_t bytes) { return tc_numa_malloc_interleaved(bytes); });
  }
  void deallocate(T* p, std::size_t) noexcept { internal::Deallocate(p); }
};

template <typename T, typename U>
bool operator==(const InterleavedAllocator<T>&,
                const InterleavedAllocator<U>&) noexcept {
  return true;
}
template <typename T, typename U>
bool operator!=(const InterleavedAllocator<T>&,
                const InterleavedAllocator<U>&) noexcept {
  return false;
}

}  // namespace numa
}  // namespace tcmalloc

#endif /* __cplusplus */

#endif /* GPERFTOOLS_NUMA_H_ */
