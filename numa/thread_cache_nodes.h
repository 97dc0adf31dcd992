// Thread caches that know nodes (docs/design.md, "Small objects",
// "Migration"). A free to another node's zero lists takes Deallocate's slow
// path, which logs it (TCMALLOC_NUMA_REMOTE_FREE=owner) or sets them up.
// Without node classes the cache uses vanilla's list_.
#ifndef NUMA_TCMALLOC_NUMA_THREAD_CACHE_NODES_H_
#define NUMA_TCMALLOC_NUMA_THREAD_CACHE_NODES_H_

#include <stdint.h>

#include "central_freelist.h"
#include "common.h"
#include "internal_logging.h"
#include "numa/numa.h"
#include "numa/remote_free_log.h"
#include "numa/small_objects.h"
#include "static_vars.h"
#include "thread_cache.h"

namespace tcmalloc {
namespace numa {

// Hidden here, with all its members: the visibility pragma other headers
// use does not reach a class that thread_cache.h declares first.
class ATTRIBUTE_VISIBILITY_HIDDEN ThreadCacheNodes {
 public:
  // Once, after the central lists exist (ThreadCache::InitModule).
  static void InitModule();

  // Init and Free require the page heap lock.
  static void Init(ThreadCache* cache);
  // A dying cache: every object back to its central list.
  static void Release(ThreadCache* cache);
  static void Free(ThreadCache* cache);

  // On a slow path: notices that the thread moved to another node.
  static void Refresh(ThreadCache* cache);
  // Before a refill of class cl: Refresh, inboxes, idle nodes. Returns an
  // object if the (new) node's list already holds one, else nullptr.
  static void* BeforeRefill(ThreadCache* cache, uint32_t cl, int32_t byte_size);
  // Sets the part of its node's region the cache knows (IsLocal).
  static void RefreshLocalRange(ThreadCache* cache);

  // True when `ptr` is an object of the cache's own node, which
  // DeallocateLocal may take without an owner lookup (sized delete).
  static bool IsLocal(const ThreadCache* cache, const void* ptr) {
    return reinterpret_cast<uintptr_t>(ptr) - cache->local_begin_ <
           cache->local_size_;
  }
  // ThreadCache::Deallocate for an IsLocal object of plain class cl.
  static void DeallocateLocal(ThreadCache* cache, void* ptr, uint32_t cl);

  // The thread's node has no object of class cl and cannot get one: one
  // object of another CPU node (Borrowed::kObjects, nearest first), from this
  // cache's lists or log of that node, else from its central list; nullptr
  // if none has one. One at a time, so that a borrowed object never sits in
  // the thread's own lists.
  static void* Borrow(ThreadCache* cache, uint32_t cl);

  // Deallocate's slow path (the list is at its length limit, or zero). cl
  // is a node class.
  static void DeallocateSlow(ThreadCache* cache, void* ptr, uint32_t cl);
  // free() of a thread without a cache; another node's object is logged in
  // a log the node's cacheless threads share. cl is a node class. The
  // several-node case is a tail call with its own copy of the push, so that
  // free() keeps nothing live across a call (one shared push cost every
  // gated pair 6 instructions of register saves).
  static void FreeWithoutCache(void* ptr, uint32_t cl) {
    if (PREDICT_FALSE(NodesWithCentralLists() > 1)) {
      return FreeWithoutCacheOnNodes(ptr, cl);
    }
    SLL_SetNext(ptr, nullptr);
    Static::central_cache()[cl].InsertRange(ptr, ptr, 1);
  }
  // Bytes in live caches' logs: the stats count them with the thread caches.
  static uint64_t ThreadLogBytes();
  // Bytes of remote frees no thread holds (inboxes, shared logs): the stats
  // count them with the central lists, where vanilla would have them.
  static uint64_t HandedOverBytes();
  // The logs' locks, held across fork().
  static void LockLogPools();
  static void UnlockLogPools();

  // ListTooLong's first question: true when it set up the lists of a node
  // this cache had not, the object staying on them.
  static bool FirstFreeToNode(ThreadCache* cache, ThreadCache::FreeList* list,
                              uint32_t cl);
  // The central list that list `cl` (a node class) returns n objects to.
  static CentralFreeList* CentralList(ThreadCache* cache, uint32_t cl, int n);

  // The cache's lists are 0..ListsEnd()-1 (node classes); InUse says which
  // hold a set-up list of a real size class.
  static uint32_t ListsEnd();
  static bool InUse(const ThreadCache* cache, uint32_t cl);

 private:
  // One node's lists: a page on the usual 64-bit build.
  static constexpr size_t kNodeListsBytes =
      kClassSizesMax * sizeof(ThreadCache::FreeList);

  static void SetUpNode(ThreadCache* cache, int node);
  // SetUpNode undone: `node`'s lists zero again (empty, not in use).
  static void TearDownNode(ThreadCache* cache, int node);
  // Every object of `node`'s lists back to its central list.
  static void Flush(ThreadCache* cache, int node, bool flushed);
  // DeallocateSlow's other cases: a remote free whose log has no block yet,
  // and an object that goes onto the thread's list.
  static void LogIntoNewBlock(ThreadCache* cache, void* ptr, uint32_t cl);
  static void PushOntoList(ThreadCache* cache, void* ptr, uint32_t cl);
  // FreeWithoutCache with several CPU nodes' lists.
  static void FreeWithoutCacheOnNodes(void* ptr, uint32_t cl);
  // The cache's logs of remote frees, by owner node: after its node lists
  // in their storage.
  static LogBlock** LogsOf(ThreadCache* cache);
  // A full log (or every log, at thread exit) to its owner.
  static void HandOver(ThreadCache* cache, int node);
  static void HandOverAll(ThreadCache* cache);
};

ALWAYS_INLINE void ThreadCacheNodes::DeallocateLocal(ThreadCache* cache,
                                                     void* ptr, uint32_t cl) {
  ASSERT(NodeClasses() && OwnerOf(ptr).node == cache->node_);
  ThreadCache::FreeList* list = &cache->alloc_lists_[cl];
  ASSERT(ptr != list->Next());  // a double free, as Deallocate checks
  if (PREDICT_FALSE(list->Push(ptr) > list->max_length())) {
    cache->ListTooLong(list, NodeClass(cache->node_, cl));
    return;
  }
  cache->size_ += list->object_size();
  if (PREDICT_FALSE(cache->size_ > cache->max_size_)) cache->Scavenge();
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_THREAD_CACHE_NODES_H_
