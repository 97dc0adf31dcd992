// One set of central free lists per CPU node (numa/central_lists.h), and the
// two things a node's lists do that vanilla's do not: hand strays to their
// owner's list, and give a whole transfer cache back when their node goes
// idle.
#include "numa/central_lists.h"

#include <new>

#include "common.h"
#include "linked_list.h"
#include "numa/numa.h"
#include "page_heap.h"
#include "static_vars.h"

namespace tcmalloc {
namespace numa {
namespace {

CentralFreeList* g_lists;

}  // namespace

CentralFreeList* MakeCentralLists(CentralFreeList* one_node) {
  int nodes = NumCpuNodes();
  g_lists = one_node;
  if (nodes > 1) {
    const size_t bytes = nodes * kClassSizesMax * sizeof(CentralFreeList);
    const uintptr_t align = alignof(CentralFreeList);
    uintptr_t p = reinterpret_cast<uintptr_t>(MetaDataAlloc(bytes + align));
    if (p != 0) {
      g_lists =
          reinterpret_cast<CentralFreeList*>((p + align - 1) & ~(align - 1));
      for (int i = 0; i < nodes * kClassSizesMax; ++i) {
        new (&g_lists[i]) CentralFreeList();
      }
    } else {
      nodes = 1;  // no metadata left: small objects share vanilla's lists
    }
  }
  for (int node = 0; node < nodes; ++node) {
    for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
      g_lists[NodeClass(node, cl)].Init(cl, node);
    }
  }
  SetNodesWithCentralLists(nodes);
  return g_lists;
}

CentralFreeList* CentralListsOf(int node) {
  return &g_lists[NodeClass(node, 0)];
}

bool BatchBelongsTo(int node, void* start, int n) {
  if (!StraysPossible()) return true;
  for (void* object = start; n > 0 && object != nullptr; --n) {
    if (ListNodeOf(object) != node) return false;
    object = SLL_Next(object);
  }
  return true;
}

}  // namespace numa

void CentralFreeList::ReturnStrays() {
  void* strays = stray_;
  stray_ = nullptr;
  lock_.Unlock();
  int count = 0;
  while (strays != nullptr) {
    void* object = SLL_Pop(&strays);
    SLL_SetNext(object, nullptr);
    numa::CentralListsOf(numa::ListNodeOf(object))[size_class_].InsertRange(
        object, object, 1);
    ++count;
  }
  numa::AddToCounter(numa::Counter::kReroutedObjects, count);
  lock_.Lock();
}

int CentralFreeList::DrainTransferCache() {
  SpinLockHolder h(&lock_);
  int objects = 0;
  const int batch = Static::sizemap()->num_objects_to_move(size_class_);
  while (used_slots_ > 0) {
    // ReleaseListToSpans may drop the lock: take the entry first.
    const int slot = --used_slots_;
    ReleaseListToSpans(tc_slots_[slot].head);
    objects += batch;
  }
  return objects;
}

}  // namespace tcmalloc
