// Applies a Binding (numa/mempolicy.h) to a range: mbind(2), then
// set_mempolicy_home_node(2), counted and never fatal.
#include "numa/bind.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>

#include "numa/syscall.h"

// Linux 5.17; the same number on x86-64 and arm64 (the unified syscall table).
// Older C library headers lack the name.
#if !defined(SYS_set_mempolicy_home_node) && \
    (defined(__x86_64__) || defined(__aarch64__))
#define SYS_set_mempolicy_home_node 450
#endif

namespace tcmalloc {
namespace numa {
namespace {

long SetHomeNode(void* start, size_t len, int node) {
#ifdef SYS_set_mempolicy_home_node
  return RawSyscall(SYS_set_mempolicy_home_node, reinterpret_cast<long>(start),
                    static_cast<long>(len), node, 0);
#else
  (void)start, (void)len, (void)node;
  return -ENOSYS;
#endif
}

}  // namespace

bool ApplyBinding(void* start, size_t len, const Binding& b, KernelCaps* caps,
                  BindCounters* c) {
  if (!b.apply) return true;
  BumpCounter(&c->calls);
  long r = -EINVAL;
  if (b.nodes != 0) {
    unsigned long mask[kMaxNodes / (8 * sizeof(unsigned long))] = {};
    for (int i = 0; i < kMaxNodes; i += 8 * sizeof(unsigned long)) {
      mask[i / (8 * sizeof(unsigned long))] =
          static_cast<unsigned long>(b.nodes >> i);
    }
    // maxnode is one more than the bits in the mask: the kernel's get_nodes()
    // reads maxnode - 1 bits.
    r = RawSyscall(SYS_mbind, reinterpret_cast<long>(start),
                   static_cast<long>(len), b.mode, reinterpret_cast<long>(mask),
                   kMaxNodes + 1, 0);
  }
  if (r != 0) {
    BumpCounter(&c->failures);
    __atomic_store_n(&c->last_errno, static_cast<int>(-r), __ATOMIC_RELAXED);
    return false;
  }
  // After mbind: the kernel sets a home node only on ranges that already have
  // an MPOL_BIND (or MPOL_PREFERRED_MANY) policy.
  if (b.home_node >= 0 && __atomic_load_n(&caps->home_node, __ATOMIC_RELAXED)) {
    const long h = SetHomeNode(start, len, b.home_node);
    // ENOSYS (kernel before 5.17) or EPERM (a seccomp profile that does not
    // know the call): ask no more. Anything else concerns this range only.
    if (h == -ENOSYS || h == -EPERM) {
      __atomic_store_n(&caps->home_node, false, __ATOMIC_RELAXED);
      if (h == -EPERM) {
        __atomic_store_n(&c->home_node_refused, EPERM, __ATOMIC_RELAXED);
      }
    }
  }
  return true;
}

bool ProbeHomeNode(int node, int* err) {
  const long r = SetHomeNode(nullptr, 0, node);
  if (r != 0 && err != nullptr) *err = static_cast<int>(-r);
  return r == 0;
}

}  // namespace numa
}  // namespace tcmalloc
