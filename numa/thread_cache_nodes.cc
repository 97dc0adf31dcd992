// Thread caches that know nodes (numa/thread_cache_nodes.h).
#include "numa/thread_cache_nodes.h"

#include <string.h>

#include "common.h"
#include "numa/central_lists.h"
#include "numa/counters.h"
#include "numa/idle_nodes.h"
#include "numa/introspection.h"
#include "numa/node_heaps.h"
#include "numa/node_pages.h"
#include "numa/numa.h"
#include "numa/region.h"
#include "numa/remote_free_log.h"
#include "numa/sized_metadata_allocator.h"
#include "numa/sparse_memory.h"
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
#if !defined(TCMALLOC_SMALL_BUT_SLOW) && !defined(TCMALLOC_PAGE_SIZE_SHIFT)
// Node regions are staggered over the class cache's period (numa/region.h).
static_assert(kPageMapCachePeriod ==
                  uintptr_t{1}
                      << (PackedCache<kAddressBits - kPageShift>::kHashbits +
                          kPageShift),
              "the region stagger follows the page map's class cache");
#endif

// The node lists of every cache that has them. One allocator per CPU node,
// each on a page of its node's own (numa/node_pages.h), so that a cache's
// storage is reused by its node's threads only and the pages of a node's
// lists are first written by a thread of that node.
NodePages<SizedMetadataAllocator> g_storage;

int NodesWithLists() { return NodeClasses() ? NodesWithCentralLists() : 1; }

bool g_logs = false;       // TCMALLOC_NUMA_REMOTE_FREE=owner, node classes
size_t g_logs_offset = 0;  // where a cache's logs start in its storage

// Node `node`'s storage of node lists and logs, under the page heap lock.
SizedMetadataAllocator& NodeListStorage(int node) {
  SizedMetadataAllocator& storage = g_storage[node];
  if (!storage.ready()) {
    storage.Init(g_logs_offset + NodesWithLists() * sizeof(LogBlock*));
  }
  return storage;
}

bool NodeInUse(uint64_t in_use, int node) { return (in_use >> node) & 1; }

// A free of class 0, which no object has: with several nodes the page map's
// class cache reads it for a pointer below 512 MiB that the allocator never
// handed out (numa/node_heaps.cc), reported as free() reports any.
void FreeInvalid(void* ptr) {
  Log(kCrash, __FILE__, __LINE__, "Attempt to free invalid pointer", ptr);
}

// Into `node`'s central lists (remote_free_handover.cc).
void DrainInbox(int node);
void FlushSharedLogsTo(int owner);

void* TakeOne(int node, uint32_t cl) {
  void *start, *end;
  return CentralListsOf(node)[cl].RemoveRange(&start, &end, 1) == 1 ? start
                                                                    : nullptr;
}

void DrainIdleNodes(int self) {
  uint64_t idle = TakeIdleNodes(self, NodesWithCentralLists());
  for (; idle != 0; idle &= idle - 1) {
    const int node = __builtin_ctzll(idle);
    if (!NodeListsMade(node)) continue;  // it never had a thread cache
    // Remote frees it never came for, linked in from here (before its
    // transfer caches go back, which they may have entered).
    if (g_logs) {
      DrainInbox(node);
      FlushSharedLogsTo(node);
    }
    CentralFreeList* lists = CentralListsOf(node);
    int objects = 0;
    for (uint32_t cl = 1; cl < Static::num_size_classes(); ++cl) {
      objects += lists[cl].DrainTransferCache();
    }
    AddToCounter(Counter::kIdleDrainedObjects, objects);
  }
}

}  // namespace

void ThreadCacheNodes::InitModule() {
  SetNodeClasses(NodesWithCentralLists() > 1 &&
                 RemoteFreePolicy() != RemoteFree::kLocal);
  g_logs = NodeClasses() && RemoteFreePolicy() == RemoteFree::kOwner;
  if (g_logs) SetHandedOverBytesReader(&ThreadCacheNodes::HandedOverBytes);
  g_logs_offset = NodesWithLists() * kNodeListsBytes;
  if (NodesWithCentralLists() > 1) {
    // Before any thread cache exists: nothing has used them yet.
    PlaceInboxesOnNodePages();
    PlaceRefillCountsOnNodePages();
    PlaceCountersOnNodePages();
    g_storage.Place();
  }
}

void ThreadCacheNodes::SetUpNode(ThreadCache* cache, int node) {
  ThreadCache::FreeList* lists = &cache->node_lists_[NodeClass(node, 0)];
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    lists[cl].Init(Static::sizemap()->class_to_size(cl));
  }
  // Class 0 must reach DeallocateSlow, not a list (FreeInvalid).
  if (NodesWithCentralLists() > 1) lists[0].set_max_length(0);
  cache->node_lists_in_use_ |= uint64_t{1} << node;
}

void ThreadCacheNodes::TearDownNode(ThreadCache* cache, int node) {
  memset(&cache->node_lists_[NodeClass(node, 0)], 0, kNodeListsBytes);
  cache->node_lists_in_use_ &= ~(uint64_t{1} << node);
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
  cache->node_ = ThisThreadsListNode();
  MakeNodeLists(cache->node_);  // by a thread of the node: on its pages
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
  void* storage = NodeListStorage(cache->node_).New();
  cache->node_lists_ = static_cast<ThreadCache::FreeList*>(storage);
  SetUpNode(cache, cache->node_);
  cache->alloc_lists_ = &cache->node_lists_[NodeClass(cache->node_, 0)];
}

void ThreadCacheNodes::Release(ThreadCache* cache) {
  if (g_logs) HandOverAll(cache);
  for (int node = 0; node < NodesWithLists(); ++node) {
    if (!NodeInUse(cache->node_lists_in_use_, node)) continue;
    Flush(cache, node, false);
    if (NodeClasses()) TearDownNode(cache, node);
  }
}

void ThreadCacheNodes::Free(ThreadCache* cache) {
  if (cache->node_lists_ != cache->list_) {
    NodeListStorage(cache->node_).Delete(cache->node_lists_);
  }
}

void ThreadCacheNodes::Flush(ThreadCache* cache, int node, bool flushed) {
  ThreadCache::FreeList* lists = &cache->node_lists_[NodeClass(node, 0)];
  for (uint32_t cl = 0; cl < Static::num_size_classes(); ++cl) {
    const int length = lists[cl].length();
    if (length > 0) {
      cache->ReleaseToCentralCache(&lists[cl], NodeClass(node, cl), length);
      if (flushed) AddToCounter(Counter::kFlushedObjects, length);
    }
  }
}

void ThreadCacheNodes::Refresh(ThreadCache* cache) {
  if (NodesWithCentralLists() == 1) return;
  const int node = ThisThreadsListNode();
  const int old_node = cache->node_;
  const OnMigration action =
      DecideMigration(old_node, node, MigrationPolicy(), NodeClasses());
  if (action == OnMigration::kStay) return;
  AddToCounter(Counter::kThreadMigrations, 1);
  // The old node's objects go back while they are still this cache's own,
  // so that they do not count as remote frees.
  if (action == OnMigration::kSwitchAndFlush) {
    Flush(cache, old_node, true);
    // With logs, the old node's lists go back to zero, so that its objects
    // freed from now on are logged like any other node's.
    if (g_logs) TearDownNode(cache, old_node);
  }
  cache->node_ = node;
  EnsureNodeLists(node);
  RefreshLocalRange(cache);
  if (!NodeClasses()) return;  // one node-blind set of lists: nothing to move
  if (!NodeInUse(cache->node_lists_in_use_, node)) {
    SetUpNode(cache, node);
  }
  cache->alloc_lists_ = &cache->node_lists_[NodeClass(node, 0)];
}

LogBlock** ThreadCacheNodes::LogsOf(ThreadCache* cache) {
  return reinterpret_cast<LogBlock**>(
      reinterpret_cast<char*>(cache->node_lists_) + g_logs_offset);
}

void ThreadCacheNodes::PushOntoList(ThreadCache* cache, void* ptr,
                                    uint32_t cl) {
  ThreadCache::FreeList* list = &cache->node_lists_[cl];
  list->Push(ptr);
  cache->ListTooLong(list, cl);
}

void* ThreadCacheNodes::BeforeRefill(ThreadCache* cache, uint32_t cl,
                                     int32_t byte_size) {
  if (NodesWithCentralLists() == 1) return nullptr;
  Refresh(cache);
  if (g_logs) {
    // One cache line, which other nodes' frees write only per block.
    const NodeInbox& inbox = InboxOf(cache->node_);
    if (inbox.HasBlocks()) DrainInbox(cache->node_);
    // Blocks ready before the first remote free, so that the freeing
    // threads' logs lie on this node from the start.
    if (inbox.shared_blocks() < kPoolTarget) TopUpPool(cache->node_);
  }
  if (NoteRefill(cache->node_)) DrainIdleNodes(cache->node_);
  ThreadCache::FreeList* list = &cache->alloc_lists_[cl];
  if (list->empty()) return nullptr;
  cache->size_ -= byte_size;
  return list->Pop();
}

void* ThreadCacheNodes::Borrow(ThreadCache* cache, uint32_t cl) {
  // The scheduler moved the thread inside its refill, and the new span went
  // back unwritten (NodeHeaps::NewForList): its new node serves, as its
  // next refill would have.
  if (NodesWithCentralLists() > 1 && ThisThreadsListNode() != cache->node_) {
    Refresh(cache);
    if (void* object = TakeOne(cache->node_, cl)) return object;
  }
  const uint64_t size = Static::sizemap()->ByteSizeForClass(cl);
  int order[kMaxNodes];
  const int count = LendersOf(cache->node_, numa::Borrowed::kObjects, order);
  void* object = nullptr;
  // This cache's own lists and logs of other nodes first: no lock, and the
  // objects a new_handler just freed are there.
  for (int i = 0; i < count && NodeClasses() && object == nullptr; ++i) {
    if (g_logs)
      object = TakeFromLog(LogsOf(cache)[order[i]], order[i], cl, size);
    ThreadCache::FreeList* list = &cache->node_lists_[NodeClass(order[i], cl)];
    if (object == nullptr && NodeInUse(cache->node_lists_in_use_, order[i]) &&
        !list->empty()) {
      cache->size_ -= size;
      object = list->Pop();
    }
  }
  for (int i = 0; i < count && object == nullptr; ++i) {
    // Remote frees handed to that node and not linked in yet.
    if (g_logs && InboxOf(order[i]).HasBlocks()) DrainInbox(order[i]);
    // A lender no thread has run on yet gets its lists from here: first
    // written on this node, a fallback's price.
    EnsureNodeLists(order[i]);
    NodeHeaps::SetBorrowing(true);
    object = TakeOne(order[i], cl);
    NodeHeaps::SetBorrowing(false);
  }
  if (object != nullptr) AddToCounter(Counter::kBorrowedObjects, 1);
  return object;
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

#include "numa/remote_free_handover.cc"
