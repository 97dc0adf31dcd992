// The task's memory policy as the kernel reports it, the decisions of a
// range's policy, and applying them (numa/mempolicy.h).
#include "numa/mempolicy.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>
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

// Room for every node the kernel may have: get_mempolicy wants maxnode >=
// nr_node_ids (up to MAX_NUMNODES = 1024). Only the first 64 are used.
constexpr int kMaskLongs = 1024 / (8 * sizeof(unsigned long));

uint64_t Low64(const unsigned long* mask) {
  uint64_t m = 0;
  for (size_t bit = 0; bit < 64; bit += 8 * sizeof(unsigned long)) {
    m |= static_cast<uint64_t>(mask[bit / (8 * sizeof(unsigned long))]) << bit;
  }
  return m;
}

long SetHomeNode(void* start, size_t len, int node) {
#ifdef SYS_set_mempolicy_home_node
  return RawSyscall(SYS_set_mempolicy_home_node, reinterpret_cast<long>(start),
                    static_cast<long>(len), node, 0);
#else
  (void)start, (void)len, (void)node;
  return -ENOSYS;
#endif
}

// get_mempolicy(2) into *mode (if given) and mask[kMaskLongs]; false, with
// *err (if given) its errno, if the kernel refused.
bool GetMempolicy(int* mode, unsigned long* mask, int flags, int* err) {
  constexpr size_t kMaskBytes = kMaskLongs * sizeof(unsigned long);
  memset(mask, 0, kMaskBytes);
  // maxnode is one more than the bits provided: the kernel copies maxnode - 1.
  const long r =
      RawSyscall(SYS_get_mempolicy, reinterpret_cast<long>(mode),
                 reinterpret_cast<long>(mask), 8 * kMaskBytes + 1, 0, flags);
  if (r != 0 && err != nullptr) *err = static_cast<int>(-r);
  return r == 0;
}

}  // namespace

bool QueryAllowedMems(uint64_t* allowed, int* err) {
  unsigned long mask[kMaskLongs];
  if (!GetMempolicy(nullptr, mask, MPOL_F_MEMS_ALLOWED, err)) return false;
  *allowed = Low64(mask);
  return true;
}

bool QueryTaskPolicy(int* mode, uint64_t* nodes, int* err) {
  unsigned long mask[kMaskLongs];
  int m = -1;
  if (!GetMempolicy(&m, mask, 0, err)) return false;
  bool no_nodes = true;
  for (unsigned long word : mask) no_nodes = no_nodes && word == 0;
  *mode = NormalizeTaskMode(m & ~MPOL_MODE_FLAGS, no_nodes);
  *nodes = Low64(mask);
  return true;
}

bool IsRefusal(int err) {
  return err == EPERM || err == EACCES || err == ENOSYS;
}

const char* RefusalName(int err) {
  switch (err) {
    case EPERM:
      return "EPERM";
    case EACCES:
      return "EACCES";
    case ENOSYS:
      return "ENOSYS";
    default:
      return "refused";
  }
}

int NormalizeTaskMode(int mode, bool no_nodes) {
  return mode == MPOL_PREFERRED && no_nodes ? MPOL_LOCAL : mode;
}

uint64_t ApplyTaskPolicy(Mode mode, int policy, uint64_t policy_nodes,
                         uint64_t allowed, bool* stay_off) {
  *stay_off = false;
  if (policy == MPOL_DEFAULT || policy == MPOL_LOCAL) return allowed;
  if (policy == MPOL_BIND) return allowed & policy_nodes;
  if (mode == Mode::kAuto) *stay_off = true;
  return allowed;
}

Binding DecideBinding(TaskPolicy task, BindPolicy policy, int node,
                      KernelCaps caps) {
  Binding b = {false, MPOL_DEFAULT, 0, -1};
  if (policy == BindPolicy::kLocal) return b;
  b.apply = true;
  if (node < 0 || node >= kMaxNodes) return b;  // nodes 0: refused, counted
  const uint64_t self = uint64_t{1} << node;

  if (task.mode != MPOL_BIND || task.nodes == 0) {
    // No set to keep: one node, and the kernel's cpuset check bounds the
    // fallback of MPOL_PREFERRED.
    b.mode = policy == BindPolicy::kBind ? MPOL_BIND : MPOL_PREFERRED;
    b.nodes = self;
    return b;
  }

  // Under membind only MPOL_BIND keeps pages in the set: MPOL_PREFERRED and
  // MPOL_PREFERRED_MANY both fall back to any node of the cpuset when their
  // nodes are full, which is the bug this function exists for.
  b.mode = MPOL_BIND;
  if ((task.nodes & self) == 0) {
    b.nodes = task.nodes;
    return b;
  }
  if (policy == BindPolicy::kBind || task.nodes == self) {
    b.nodes = self;
    return b;
  }
  b.nodes = task.nodes;
  if (caps.home_node) b.home_node = node;
  return b;
}

Binding DecidePlacedBinding(int kernel_id, uint64_t usable, KernelCaps caps) {
  if (kernel_id >= 0) {
    const uint64_t node =
        HasNode(usable, kernel_id) ? uint64_t{1} << kernel_id : 0;
    return Binding{true, MPOL_BIND, node, -1};
  }
  return Binding{
      true,
      caps.weighted_interleave ? kMpolWeightedInterleave : MPOL_INTERLEAVE,
      usable, -1};
}

Binding DecideMetadataBinding(TaskPolicy task, uint64_t usable) {
  if (task.mode == MPOL_BIND) return Binding{true, MPOL_BIND, task.nodes, -1};
  if (task.mode != MPOL_DEFAULT && task.mode != MPOL_LOCAL) {
    return Binding{false, MPOL_DEFAULT, 0, -1};
  }
  return Binding{true, MPOL_BIND, usable, -1};
}

bool ProbeWeightedInterleave(int* err) {
  const long r = RawSyscall(SYS_mbind, 0, 0, kMpolWeightedInterleave, 0, 0, 0);
  if (r != 0 && err != nullptr) *err = static_cast<int>(-r);
  return r == 0;
}

int ProbeMbind() {
  return static_cast<int>(-RawSyscall(SYS_mbind, 0, 0, MPOL_DEFAULT, 0, 0, 0));
}

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
