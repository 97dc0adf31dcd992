// One set of central free lists per CPU node (numa/central_lists.h).
#include "numa/central_lists.h"

#include <new>

#include "base/spinlock.h"
#include "common.h"
#include "linked_list.h"
#include "numa/counters.h"
#include "numa/numa.h"
#include "numa/region.h"
#include "numa/small_objects.h"
#include "numa/sparse_memory.h"
#include "page_heap.h"
#include "static_vars.h"

namespace tcmalloc {
namespace numa {
namespace {

CentralFreeList* g_lists;

// One node's lists: a whole number of pages, so that no two nodes' lists
// share one.
constexpr size_t kCentralListsBytes = kClassSizesMax * sizeof(CentralFreeList);
static_assert(kCentralListsBytes % 4096 == 0,
              "a node's central lists must fill whole pages");

// The small cache in front of a placed list.
struct PlacedCache {
  SpinLock lock;
  void* head;
  int32_t count;
};

struct PlacedSet {
  CentralFreeList lists[kClassSizesMax];
  PlacedCache caches[kClassSizesMax];
};

PlacedSet* g_placed[kRegions - kFirstNamedRegion];
SpinLock g_placed_lock;

// Set while this thread links in logged remote frees (LinkingRemoteFrees).
__attribute__((tls_model(
    "initial-exec"))) thread_local bool t_linking_remote_frees = false;

PlacedSet* ExistingPlaced(int id) {
  if (!IsPlacedRegion(id)) return nullptr;
  return __atomic_load_n(&g_placed[id - kFirstNamedRegion], __ATOMIC_ACQUIRE);
}

PlacedSet* MakePlaced(int id) {
  PlacedSet* set = ExistingPlaced(id);
  if (set != nullptr || !IsPlacedRegion(id)) return set;
  SpinLockHolder h(&g_placed_lock);
  set = g_placed[id - kFirstNamedRegion];
  if (set != nullptr) return set;
  const uintptr_t align = alignof(PlacedSet);
  const uintptr_t p =
      reinterpret_cast<uintptr_t>(MetaDataAlloc(sizeof(PlacedSet) + align));
  if (p == 0) return nullptr;
  set =
      new (reinterpret_cast<void*>((p + align - 1) & ~(align - 1))) PlacedSet();
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    set->lists[cl].Init(cl, id);
  }
  __atomic_store_n(&g_placed[id - kFirstNamedRegion], set, __ATOMIC_RELEASE);
  return set;
}

template <typename Fn>
void ForEachPlaced(Fn fn) {
  for (PlacedSet*& slot : g_placed) {
    if (PlacedSet* set = __atomic_load_n(&slot, __ATOMIC_ACQUIRE)) fn(set);
  }
}

}  // namespace

CentralFreeList* MakeCentralLists(CentralFreeList* one_node) {
  // The layer's first metadata: under an address-space limit it shares
  // vanilla's arena (numa/sparse_memory.h).
  if (Active() && AddressSpaceLimit() != 0) SetSparseArena(MetaDataAlloc);
  const int nodes = NumCpuNodes();
  if (nodes > 1) {
    // Each node's lists start a page and stay untouched until that node's
    // first thread cache makes them (MakeNodeLists), so that their pages land
    // on the node whose threads use them. Fresh pages are zero.
    void* p = SparseAlloc(nodes * kCentralListsBytes);
    if (p != nullptr) {
      g_lists = static_cast<CentralFreeList*>(p);
      SetNodesWithCentralLists(nodes);
      return g_lists;
    }
    // No metadata left: small objects share vanilla's lists.
  }
  g_lists = one_node;
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    g_lists[cl].Init(cl, 0);
  }
  SetNodesWithCentralLists(1);
  return g_lists;
}

void MakeNodeLists(int node) {
  if (NodeListsMade(node)) return;
  CentralFreeList* lists = &g_lists[NodeClass(node, 0)];
  for (uint32_t cl = 0; cl < kClassSizesMax; ++cl) {
    new (&lists[cl]) CentralFreeList();
    if (cl < Static::num_size_classes()) lists[cl].Init(cl, node);
  }
  MarkNodeListsMade(node);
}

void EnsureNodeLists(int node) {
  if (NodeListsMade(node)) return;
  SpinLockHolder h(Static::pageheap_lock());
  MakeNodeLists(node);
}

// In node-class order.
template <typename Fn>
static void ForEachMadeList(Fn fn) {
  for (int node = 0; node < NodesWithCentralLists(); ++node) {
    if (!NodeListsMade(node)) continue;
    for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
      fn(g_lists[NodeClass(node, cl)]);
    }
  }
}

void LockCentralLists() NO_THREAD_SAFETY_ANALYSIS {
  ForEachMadeList([](CentralFreeList& list)
                      NO_THREAD_SAFETY_ANALYSIS { list.Lock(); });
}

void UnlockCentralLists() NO_THREAD_SAFETY_ANALYSIS {
  ForEachMadeList([](CentralFreeList& list)
                      NO_THREAD_SAFETY_ANALYSIS { list.Unlock(); });
}

CentralFreeList* CentralListsOf(int region) {
  if (IsPlacedRegion(region)) return ExistingPlaced(region)->lists;
  return &g_lists[NodeClass(region, 0)];
}

void* PopPlaced(int id, uint32_t cl) {
  PlacedSet* set = MakePlaced(id);
  if (set == nullptr) return nullptr;
  PlacedCache& cache = set->caches[cl];
  {
    SpinLockHolder h(&cache.lock);
    if (cache.head != nullptr) {
      --cache.count;
      return SLL_Pop(&cache.head);
    }
  }
  // Refill with a batch, outside the cache's lock: the central list may go
  // to the page heap, and no path holds two of these locks.
  void *start, *end;
  const int got = set->lists[cl].RemoveRange(
      &start, &end, Static::sizemap()->num_objects_to_move(cl));
  if (got == 0) return nullptr;
  void* object = SLL_Pop(&start);
  if (got > 1) {
    SpinLockHolder h(&cache.lock);
    SLL_PushRange(&cache.head, start, end);
    cache.count += got - 1;
  }
  return object;
}

void PushPlaced(int id, uint32_t cl, void* object) {
  PlacedSet* set = ExistingPlaced(id);
  ASSERT(set != nullptr);
  PlacedCache& cache = set->caches[cl];
  const int batch = Static::sizemap()->num_objects_to_move(cl);
  void *start = nullptr, *end = nullptr;
  {
    SpinLockHolder h(&cache.lock);
    SLL_Push(&cache.head, object);
    if (++cache.count < 2 * batch) return;
    // Two batches cached: one goes back, whole, to the transfer cache.
    SLL_PopRange(&cache.head, batch, &start, &end);
    cache.count -= batch;
  }
  set->lists[cl].InsertRange(start, end, batch);
}

size_t PlacedCentralLength(unsigned cl) {
  size_t n = 0;
  ForEachPlaced([&](PlacedSet* set) {
    n += set->lists[cl].length() +
         __atomic_load_n(&set->caches[cl].count, __ATOMIC_RELAXED);
  });
  return n;
}

size_t PlacedTransferLength(unsigned cl) {
  size_t n = 0;
  ForEachPlaced([&](PlacedSet* set) { n += set->lists[cl].tc_length(); });
  return n;
}

size_t PlacedOverheadBytes(unsigned cl) {
  size_t n = 0;
  ForEachPlaced([&](PlacedSet* set) { n += set->lists[cl].OverheadBytes(); });
  return n;
}

size_t PlacedFreeBytes(int id) {
  PlacedSet* set = ExistingPlaced(id);
  if (set == nullptr) return 0;
  size_t bytes = 0;
  for (unsigned cl = 1; cl < Static::num_size_classes(); ++cl) {
    const size_t objects =
        set->lists[cl].length() + set->lists[cl].tc_length() +
        __atomic_load_n(&set->caches[cl].count, __ATOMIC_RELAXED);
    bytes += objects * Static::sizemap()->ByteSizeForClass(cl);
  }
  return bytes;
}

void LockPlacedLists() NO_THREAD_SAFETY_ANALYSIS {
  g_placed_lock.Lock();
  ForEachPlaced([](PlacedSet* set) {
    for (unsigned cl = 0; cl < Static::num_size_classes(); ++cl) {
      set->lists[cl].Lock();
      set->caches[cl].lock.Lock();
    }
  });
}

void UnlockPlacedLists() NO_THREAD_SAFETY_ANALYSIS {
  ForEachPlaced([](PlacedSet* set) {
    for (unsigned cl = 0; cl < Static::num_size_classes(); ++cl) {
      set->caches[cl].lock.Unlock();
      set->lists[cl].Unlock();
    }
  });
  g_placed_lock.Unlock();
}

void LinkingRemoteFrees(bool linking) { t_linking_remote_frees = linking; }

bool TransferCacheTakes(int region, void* start, int n) {
  if (CooperatesWithBalancing() && region < kMaxNodes &&
      (CurrentNode() != region || t_linking_remote_frees)) {
    return false;
  }
  if (!StraysPossible()) return true;
  for (void* object = start; n > 0 && object != nullptr; --n) {
    if (ListRegionOf(object) != region) return false;
    object = SLL_Next(object);
  }
  return true;
}

}  // namespace numa

bool CentralFreeList::SetAsideIfStray(void* object) {
  if (numa::ListRegionOf(object) == region_) return false;
  SLL_Push(&stray_, object);
  return true;
}

void CentralFreeList::ReturnStrays() {
  void* strays = stray_;
  stray_ = nullptr;
  lock_.Unlock();
  int count = 0;
  while (strays != nullptr) {
    void* object = SLL_Pop(&strays);
    SLL_SetNext(object, nullptr);
    numa::CentralListsOf(numa::ListRegionOf(object))[size_class_].InsertRange(
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
