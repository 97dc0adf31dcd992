// Thread caches that know nodes (numa/thread_cache_nodes.h): their node
// lists, what a thread does when it moves, and where it turns when its node
// has nothing left.
#include "numa/thread_cache_nodes.h"

#include <string.h>

#include "common.h"
#include "numa/central_lists.h"
#include "numa/idle_nodes.h"
#include "numa/numa.h"
#include "numa/sized_metadata_allocator.h"
#include "static_vars.h"

namespace tcmalloc {
namespace numa {
namespace {

static_assert(kClassSizesMax == (1 << kNodeClassShift),
              "a node class is the node above a whole size class");
// Node classes go into the page map's class cache once thread caches sort
// by owner (this file's patch widens the cache's values).
static_assert(NodeClass(kMaxCpuNodes, 0) <=
                  (1u << PackedCache<kAddressBits - kPageShift>::kValuebits),
              "the page map's class cache holds every node class");

// The node lists of every cache that has them: NodesWithCentralLists()
// nodes' lists each.
SizedMetadataAllocator g_storage;

int NodesWithLists() { return NodeClasses() ? NodesWithCentralLists() : 1; }

// The thread's node, as far as its cache goes: a node with lists.
int ThisThreadsNode() {
  const int node = CurrentNode();
  return node < NodesWithCentralLists() ? node : 0;
}

bool NodeInUse(uint64_t in_use, int node) { return (in_use >> node) & 1; }

}  // namespace

void ThreadCacheNodes::InitModule() {
  SetNodeClasses(NodesWithCentralLists() > 1 &&
                 RemoteFreePolicy() == RemoteFree::kOwner);
  if (NodeClasses()) g_storage.Init(NodesWithLists() * kNodeListsBytes);
}

void ThreadCacheNodes::SetUpNode(ThreadCache* cache, int node) {
  ThreadCache::FreeList* lists = &cache->node_lists_[NodeClass(node, 0)];
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    lists[cl].Init(Static::sizemap()->class_to_size(cl));
  }
  cache->node_lists_in_use_ |= uint64_t{1} << node;
}

void ThreadCacheNodes::RefreshLocalRange(ThreadCache* cache) {
  cache->local_begin_ = 0;
  cache->local_size_ = 0;
  // Node n's region lies in window n (numa/region.h).
  if (NodeClasses()) {
    OwnedPart(cache->node_, &cache->local_begin_, &cache->local_size_);
  }
}

void ThreadCacheNodes::Init(ThreadCache* cache) {
  cache->node_lists_in_use_ = 0;
  cache->node_ = ThisThreadsNode();
  RefreshLocalRange(cache);
  if (!NodeClasses()) {
    cache->node_lists_ = cache->alloc_lists_ = cache->list_;
    SetUpNode(cache, 0);
    return;
  }
  // Other nodes' lists must read as zero until they are set up: a fresh
  // array is, and a reused one but for the lists its last cache used, which
  // that cache cleared (Release). Clearing it here would make every node's
  // page resident.
  void* storage = g_storage.New();
  cache->node_lists_ = static_cast<ThreadCache::FreeList*>(storage);
  SetUpNode(cache, cache->node_);
  cache->alloc_lists_ = &cache->node_lists_[NodeClass(cache->node_, 0)];
}

void ThreadCacheNodes::Release(ThreadCache* cache) {
  for (int node = 0; node < NodesWithLists(); ++node) {
    if (!NodeInUse(cache->node_lists_in_use_, node)) continue;
    ThreadCache::FreeList* lists = &cache->node_lists_[NodeClass(node, 0)];
    for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
      if (lists[cl].length() > 0) {
        cache->ReleaseToCentralCache(&lists[cl], NodeClass(node, cl),
                                     lists[cl].length());
      }
    }
    if (NodeClasses()) memset(lists, 0, kNodeListsBytes);
  }
}

void ThreadCacheNodes::Free(ThreadCache* cache) {
  if (cache->node_lists_ != cache->list_) g_storage.Delete(cache->node_lists_);
}

void ThreadCacheNodes::Flush(ThreadCache* cache, int node) {
  ThreadCache::FreeList* lists = &cache->node_lists_[NodeClass(node, 0)];
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    const int length = lists[cl].length();
    if (length > 0) {
      cache->ReleaseToCentralCache(&lists[cl], NodeClass(node, cl), length);
      AddToCounter(Counter::kFlushedObjects, length);
    }
  }
}

void ThreadCacheNodes::Refresh(ThreadCache* cache) {
  if (NodesWithCentralLists() == 1) return;
  const int node = ThisThreadsNode();
  const int old_node = cache->node_;
  const OnMigration action =
      DecideMigration(old_node, node, MigrationPolicy(), NodeClasses());
  if (action == OnMigration::kStay) return;
  AddToCounter(Counter::kThreadMigrations, 1);
  // The old node's objects go back while they are still this cache's own,
  // so that they do not count as remote frees.
  if (action == OnMigration::kSwitchAndFlush) Flush(cache, old_node);
  cache->node_ = node;
  RefreshLocalRange(cache);
  if (!NodeClasses()) return;  // one node-blind set of lists: nothing to move
  if (!NodeInUse(cache->node_lists_in_use_, node)) {
    SetUpNode(cache, node);
  }
  cache->alloc_lists_ = &cache->node_lists_[NodeClass(node, 0)];
}

void ThreadCacheNodes::DrainIdleNodes(int self) {
  uint64_t idle = TakeIdleNodes(self, NodesWithCentralLists());
  for (; idle != 0; idle &= idle - 1) {
    const int node = __builtin_ctzll(idle);
    CentralFreeList* lists = CentralListsOf(node);
    int objects = 0;
    for (uint32_t cl = 1; cl < Static::num_size_classes(); ++cl) {
      objects += lists[cl].DrainTransferCache();
    }
    AddToCounter(Counter::kIdleDrainedObjects, objects);
  }
}

void* ThreadCacheNodes::BeforeRefill(ThreadCache* cache, uint32_t cl,
                                     int32_t byte_size) {
  if (NodesWithCentralLists() == 1) return nullptr;
  Refresh(cache);
  if (NoteRefill(cache->node_)) DrainIdleNodes(cache->node_);
  ThreadCache::FreeList* list = &cache->alloc_lists_[cl];
  if (list->empty()) return nullptr;
  cache->size_ -= byte_size;
  return list->Pop();
}

void* ThreadCacheNodes::Borrow(ThreadCache* cache, uint32_t cl) {
  int order[kMaxNodes];
  const int count = BorrowFrom(cache->node_, numa::Borrow::kObjects, order);
  // This cache's own lists of other nodes first: no lock, and the objects a
  // new_handler just freed are there.
  for (int i = 0; i < count && NodeClasses(); ++i) {
    if (!NodeInUse(cache->node_lists_in_use_, order[i])) continue;
    ThreadCache::FreeList* list = &cache->node_lists_[NodeClass(order[i], cl)];
    if (list->empty()) continue;
    cache->size_ -= Static::sizemap()->ByteSizeForClass(cl);
    AddToCounter(Counter::kBorrowedObjects, 1);
    return list->Pop();
  }
  for (int i = 0; i < count; ++i) {
    void *start, *end;
    if (CentralListsOf(order[i])[cl].RemoveRange(&start, &end, 1) == 1) {
      AddToCounter(Counter::kBorrowedObjects, 1);
      return start;
    }
  }
  return nullptr;
}

bool ThreadCacheNodes::FirstFreeToNode(ThreadCache* cache,
                                       ThreadCache::FreeList* list,
                                       uint32_t cl) {
  const int node = ClassNode(cl);
  if (NodeInUse(cache->node_lists_in_use_, node)) return false;
  void* object = list->Pop();
  SetUpNode(cache, node);
  list->Push(object);
  cache->size_ += list->object_size();
  if (PREDICT_FALSE(cache->size_ > cache->max_size_)) cache->Scavenge();
  return true;
}

CentralFreeList* ThreadCacheNodes::CentralList(ThreadCache* cache, uint32_t cl,
                                               int n) {
  // A node-blind cache returns everything to its node's lists, which hand
  // strays on to their owners (numa/central_lists.h).
  if (!NodeClasses()) return &CentralListsOf(cache->node_)[cl];
  if (ClassNode(cl) != cache->node_) {
    AddToCounter(Counter::kRemoteFreeObjects, n);
  }
  return &Static::central_cache()[cl];
}

uint32_t ThreadCacheNodes::ListsEnd() {
  return NodesWithLists() * kClassSizesMax;
}

bool ThreadCacheNodes::InUse(const ThreadCache* cache, uint32_t cl) {
  return BaseClass(cl) < Static::num_size_classes() &&
         NodeInUse(cache->node_lists_in_use_, ClassNode(cl));
}

}  // namespace numa
}  // namespace tcmalloc
