// The thread-cache side of the remote-free logs (numa/remote_free_log.h),
// compiled as the end of numa/thread_cache_nodes.cc, whose helpers it uses.

namespace tcmalloc {
namespace numa {
namespace {

// The log one node's threads without a cache share for one owner node.
struct alignas(64) SharedLog {
  LeafLock lock;
  LogBlock* block = nullptr;  // guarded by lock
};
// [freeing node][owner node]; untouched but for the pairs that free.
SharedLog g_shared_logs[kMaxCpuNodes][kMaxCpuNodes];

template <typename Fn>
void ForEachSharedLog(Fn fn) {
  for (int here = 0; here < NodesWithLists(); ++here) {
    for (int owner = 0; owner < NodesWithLists(); ++owner) {
      fn(g_shared_logs[here][owner]);
    }
  }
}

// Appends `object` of node class `cl` to `log`, which has room; true when
// that filled it. Inlined, so that DeallocateSlow's common case makes no
// call (and no stack frame).
ALWAYS_INLINE bool AppendRemoteFree(LogBlock* log, void* object, uint32_t cl) {
  const uint32_t base = BaseClass(cl);
  LogObject(log, object, base, Static::sizemap()->ByteSizeForClass(base));
  return LogIsFull(log);
}

// Links a block's objects into `node`'s central lists, class by class, in
// batches a transfer cache takes whole. The writes into the objects happen
// here: on the owner's node when it drains its inbox.
void LinkIntoCentralLists(const LogBlock* block, int node) {
  LinkingRemoteFrees(true);
  struct Chain {
    void* head;
    void* tail;
    int length;
  };
  Chain chains[kClassSizesMax];
  uint64_t started[kClassSizesMax / 64] = {};
  auto insert = [&](uint32_t cl) {
    Static::central_cache()[NodeClass(node, cl)].InsertRange(
        chains[cl].head, chains[cl].tail, chains[cl].length);
  };
  for (uint32_t i = 0; i < block->count; ++i) {
    const uint32_t cl = LoggedClass(block, i);
    void* object = LoggedObject(block, i, node);
    Chain& chain = chains[cl];
    const uint64_t bit = uint64_t{1} << (cl % 64);
    if ((started[cl / 64] & bit) == 0) {
      started[cl / 64] |= bit;
      chain = Chain{nullptr, object, 0};
    }
    SLL_Push(&chain.head, object);
    if (++chain.length == Static::sizemap()->num_objects_to_move(cl)) {
      insert(cl);
      started[cl / 64] &= ~bit;
    }
  }
  for (uint32_t word = 0; word < kClassSizesMax / 64; ++word) {
    for (uint64_t left = started[word]; left != 0; left &= left - 1) {
      insert(word * 64 + __builtin_ctzll(left));
    }
  }
  LinkingRemoteFrees(false);
}

// A drained or shared log's block: linked in from here, back to its pool.
void LinkAndReturn(LogBlock* block, int node) {
  LinkIntoCentralLists(block, node);
  ReturnBlock(block);
}

// A full block to `node`'s inbox: true if taken, else its objects were
// linked in from here and it is empty.
bool HandOverBlock(LogBlock* block, int node) {
  AddToCounter(Counter::kRemoteFreeObjects, block->count);
  if (InboxOf(node).Offer(block)) return true;
  // The owner's inbox is full (no thread of it has refilled for a while):
  // the objects go in from here, remote writes as without logs.
  AddToCounter(Counter::kInboxFullObjects, block->count);
  LinkIntoCentralLists(block, node);
  block->count = 0;
  block->bytes = 0;
  return false;
}

// True when a free without a thread cache was logged as a remote free.
bool TookCachelessFree(void* ptr, uint32_t cl) {
  if (!g_logs) return false;
  const int owner = ClassNode(cl);
  const int here = ThisThreadsListNode();
  if (owner == here || !Loggable(ptr, owner)) return false;
  SharedLog& log = g_shared_logs[here][owner];
  // A new block is taken with the log's lock dropped: the pool and
  // SparseAlloc have leaf locks of their own, and a leaf lock holds no other.
  LogBlock* spare = nullptr;
  log.lock.Lock();
  if (log.block == nullptr) {
    log.lock.Unlock();
    if ((spare = NewBlock(owner, NodesWithLists())) == nullptr) return false;
    log.lock.Lock();
    if (log.block == nullptr) {
      log.block = spare;
      spare = nullptr;
    }
  }
  LogBlock* full = nullptr;
  if (AppendRemoteFree(log.block, ptr, cl)) {
    full = log.block;
    log.block = nullptr;
  }
  log.lock.Unlock();
  if (spare != nullptr) ReturnBlock(spare);  // another thread made one first
  if (full != nullptr && !HandOverBlock(full, owner)) {
    ReturnBlock(full);
  }
  return true;
}

void FlushSharedLogsTo(int owner) {
  for (int here = 0; here < NodesWithLists(); ++here) {
    SharedLog& log = g_shared_logs[here][owner];
    log.lock.Lock();
    LogBlock* block = log.block;
    log.block = nullptr;
    log.lock.Unlock();
    if (block == nullptr) continue;
    AddToCounter(Counter::kRemoteFreeObjects, block->count);
    LinkAndReturn(block, owner);
  }
}

void DrainInbox(int node) {
  for (LogBlock* block = InboxOf(node).TakeAll(); block != nullptr;) {
    LogBlock* next = block->next;
    LinkAndReturn(block, node);
    block = next;
  }
}

}  // namespace
}  // namespace numa

// Declared in thread_cache.h, whose inline Deallocate calls it.
void ThreadCache::DeallocateSlow(void* ptr, uint32_t cl) {
  numa::ThreadCacheNodes::DeallocateSlow(this, ptr, cl);
}

namespace numa {

// The common case, a remote free into a log that has room, runs without a
// call (so without a stack frame); everything else is a tail call. A node
// whose lists are set up keeps taking its objects on them.
void ThreadCacheNodes::DeallocateSlow(ThreadCache* cache, void* ptr,
                                      uint32_t cl) {
  if (PREDICT_FALSE(cl == 0)) return FreeInvalid(ptr);
  const int node = ClassNode(cl);
  if (g_logs && !NodeInUse(cache->node_lists_in_use_, node) &&
      Loggable(ptr, node)) {
    LogBlock* log = LogsOf(cache)[node];
    if (PREDICT_FALSE(log == nullptr)) return LogIntoNewBlock(cache, ptr, cl);
    if (PREDICT_FALSE(AppendRemoteFree(log, ptr, cl))) {
      return HandOver(cache, node);
    }
    return;
  }
  return PushOntoList(cache, ptr, cl);
}

void ThreadCacheNodes::LogIntoNewBlock(ThreadCache* cache, void* ptr,
                                       uint32_t cl) {
  const int node = ClassNode(cl);
  LogBlock* log = NewBlock(node, NodesWithLists());
  if (log == nullptr) return PushOntoList(cache, ptr, cl);
  LogsOf(cache)[node] = log;
  if (PREDICT_FALSE(AppendRemoteFree(log, ptr, cl))) HandOver(cache, node);
}

void ThreadCacheNodes::HandOver(ThreadCache* cache, int node) {
  LogBlock** log = &LogsOf(cache)[node];
  // A block that was not taken stays, emptied, as the log.
  if (HandOverBlock(*log, node)) *log = nullptr;
}

void ThreadCacheNodes::FreeWithoutCacheOnNodes(void* ptr, uint32_t cl) {
  if (PREDICT_FALSE(cl == 0)) return FreeInvalid(ptr);
  if (TookCachelessFree(ptr, cl)) return;
  SLL_SetNext(ptr, nullptr);
  Static::central_cache()[cl].InsertRange(ptr, ptr, 1);
}

void ThreadCacheNodes::HandOverAll(ThreadCache* cache) {
  LogBlock** logs = LogsOf(cache);
  for (int node = 0; node < NodesWithLists(); ++node) {
    if (logs[node] == nullptr) continue;
    if (logs[node]->count > 0) HandOver(cache, node);
    if (logs[node] != nullptr) {  // emptied, not handed over
      ReturnBlock(logs[node]);
      logs[node] = nullptr;
    }
  }
}

uint64_t ThreadCacheNodes::ThreadLogBytes() {
  if (!g_logs) return 0;
  uint64_t bytes = 0;
  // Their threads fill them as this reads (a block is never freed, so a
  // stale pointer still reads a block).
  for (ThreadCache* h = ThreadCache::thread_heaps_; h != nullptr;
       h = h->next_) {
    LogBlock** logs = LogsOf(h);
    for (int node = 0; node < NodesWithLists(); ++node) {
      const LogBlock* log = logs[node];
      if (log != nullptr) bytes += log->bytes;
    }
  }
  return bytes;
}

uint64_t ThreadCacheNodes::HandedOverBytes() {
  if (!g_logs) return 0;
  uint64_t bytes = 0;
  for (int node = 0; node < NodesWithLists(); ++node) {
    bytes += InboxOf(node).bytes();
  }
  ForEachSharedLog([&](const SharedLog& log) {
    if (log.block != nullptr) bytes += log.block->bytes;
  });
  return bytes;
}

// Shared logs, then pools, then (innermost) the sparse memory new blocks
// come from.
void ThreadCacheNodes::LockLogPools() NO_THREAD_SAFETY_ANALYSIS {
  ForEachSharedLog([](SharedLog& log) { log.lock.Lock(); });
  for (int node = 0; node < NodesWithLists(); ++node) {
    InboxOf(node).LockPool();
  }
  LockSparseMemory();
}

void ThreadCacheNodes::UnlockLogPools() NO_THREAD_SAFETY_ANALYSIS {
  UnlockSparseMemory();
  for (int node = 0; node < NodesWithLists(); ++node) {
    InboxOf(node).UnlockPool();
  }
  ForEachSharedLog([](SharedLog& log) { log.lock.Unlock(); });
}

}  // namespace numa
}  // namespace tcmalloc
