#include "tests/numa/layer_testing.h"

#include "numa/mempolicy.h"
#include "numa/placed_start.h"
#include "numa/region.h"
#include "numa/small_objects.h"
#include "numa/state.h"

namespace tcmalloc {
namespace numa {

void InitForTest(const char* sysfs_root, uint64_t allowed,
                 const char* (*getenv_fn)(const char*), int task_policy,
                 uint64_t task_policy_nodes, bool home_node) {
  // No cgroup under a sysfs tree: the CPUs are not narrowed.
  InitFrom(getenv_fn, sysfs_root,
           KernelView{false, allowed, task_policy, task_policy_nodes, home_node,
                      sysfs_root, 0, 0, 0});
}

void InitWithKernelForTest(const FakeKernel& k,
                           const char* (*getenv_fn)(const char*)) {
  InitFrom(getenv_fn, k.sysfs_root,
           KernelView{false, k.allowed, k.task_policy, k.task_policy_nodes,
                      k.home_node, k.proc_root, k.get_mempolicy_errno,
                      k.mbind_errno, k.move_pages_errno});
}

void ResetForTest() {
  ResetState();
  ResetPlacementForTest();
}

uint64_t BindSkipped() { return LoadCounter(&g_state.counters.skipped); }

int MbindLastErrno() {
  return __atomic_load_n(&g_state.counters.last_errno, __ATOMIC_RELAXED);
}

void ResetPlacementForTest() {
  __atomic_store_n(&internal::g_placement_started, false, __ATOMIC_RELEASE);
  g_placement = Placement{};
  SetPlacedBinder(nullptr);
  UpdateSmallObjects();
}

}  // namespace numa
}  // namespace tcmalloc
