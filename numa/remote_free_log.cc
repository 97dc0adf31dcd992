// Log blocks and node inboxes for remote frees (numa/remote_free_log.h).
#include "numa/remote_free_log.h"

#include <string.h>

#include "numa/node_pages.h"
#include "numa/small_objects.h"
#include "numa/sparse_memory.h"

namespace tcmalloc {
namespace numa {
namespace {
// The owner reads its inbox on every refill and takes its blocks and pool
// there; other nodes' threads write it once per block (numa/node_pages.h).
NodePages<NodeInbox> g_inboxes;

// A new block, on this thread's node: two pages of their own from
// SparseAlloc, which land on the node that first writes them; or nullptr.
LogBlock* AllocateBlock() {
  LogBlock* block = static_cast<LogBlock*>(SparseAlloc(sizeof(LogBlock)));
  if (block == nullptr) return nullptr;
  memset(block, 0, sizeof(LogBlock));  // the first touch places the pages
  block->placed_on = static_cast<int16_t>(ThisThreadsListNode());
  block->filled_by = kNoFiller;
  return block;
}
}  // namespace

NodeInbox& InboxOf(int node) { return g_inboxes[node]; }

void PlaceInboxesOnNodePages() { g_inboxes.Place(); }

bool NodeInbox::Offer(LogBlock* block) {
  // Counted before the push, so that TakeAll never subtracts what was not
  // yet added.
  if (blocks_.fetch_add(1, std::memory_order_relaxed) >= kInboxMaxBlocks) {
    blocks_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  const uint64_t before =
      bytes_.fetch_add(block->bytes, std::memory_order_relaxed);
  if (before + block->bytes > kInboxMaxBytes && before > 0) {
    bytes_.fetch_sub(block->bytes, std::memory_order_relaxed);
    blocks_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  LogBlock* head = full_.load(std::memory_order_relaxed);
  do {
    block->next = head;
  } while (!full_.compare_exchange_weak(head, block, std::memory_order_release,
                                        std::memory_order_relaxed));
  return true;
}

LogBlock* NodeInbox::TakeAll() {
  LogBlock* taken = full_.exchange(nullptr, std::memory_order_acquire);
  uint32_t blocks = 0;
  uint64_t bytes = 0;
  for (LogBlock* b = taken; b != nullptr; b = b->next) {
    blocks++;
    bytes += b->bytes;
  }
  blocks_.fetch_sub(blocks, std::memory_order_relaxed);
  bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  return taken;
}

LogBlock* NodeInbox::TakeKept(int filler) {
  Kept& kept = kept_[filler];
  // Read without the lock first: a node that keeps nothing here is not
  // worth writing the line for.
  if (kept.used.load(std::memory_order_relaxed) == 0) return nullptr;
  kept.lock.Lock();
  LogBlock* block = nullptr;
  const uint8_t used = kept.used.load(std::memory_order_relaxed);
  if (used > 0) {
    block = kept.blocks[used - 1];
    kept.used.store(static_cast<uint8_t>(used - 1), std::memory_order_relaxed);
  }
  kept.lock.Unlock();
  return block;
}

LogBlock* NodeInbox::TakeEmpty(int filler, int nodes) {
  LogBlock* block = TakeKept(filler);
  if (block == nullptr && shared_blocks() > 0) {
    shared_lock_.Lock();
    block = shared_;
    if (block != nullptr) {
      shared_ = block->next;
      shared_blocks_.fetch_sub(1, std::memory_order_relaxed);
    }
    shared_lock_.Unlock();
  }
  for (int other = 0; block == nullptr && other < nodes; ++other) {
    if (other != filler) block = TakeKept(other);
  }
  if (block == nullptr) return nullptr;
  // Written by the taker, not by the owner that gave it back: the filler's
  // cached copy of this line stays valid while the owner only reads it.
  block->count = 0;
  block->bytes = 0;
  block->filled_by = static_cast<int16_t>(filler);
  return block;
}

void NodeInbox::GiveEmpty(LogBlock* block) {
  // A block on its filler's node (made when this pool ran dry) logs other
  // nodes' objects from now on: whoever takes it first.
  const int filler = block->filled_by;
  if (filler >= 0 && filler != block->placed_on) {
    Kept& kept = kept_[filler];
    kept.lock.Lock();
    const uint8_t used = kept.used.load(std::memory_order_relaxed);
    const bool room = used < kKeptPerFiller;
    if (room) {
      kept.blocks[used] = block;
      kept.used.store(static_cast<uint8_t>(used + 1),
                      std::memory_order_relaxed);
    }
    kept.lock.Unlock();
    if (room) return;
  }
  shared_lock_.Lock();
  block->next = shared_;
  shared_ = block;
  shared_blocks_.fetch_add(1, std::memory_order_relaxed);
  shared_lock_.Unlock();
}

void NodeInbox::LockPool() {
  shared_lock_.Lock();
  for (Kept& kept : kept_) kept.lock.Lock();
}

void NodeInbox::UnlockPool() {
  for (Kept& kept : kept_) kept.lock.Unlock();
  shared_lock_.Unlock();
}

LogBlock* NewBlock(int owner, int nodes) {
  const int filler = ThisThreadsListNode();
  LogBlock* block = InboxOf(owner).TakeEmpty(filler, nodes);
  if (block == nullptr && (block = AllocateBlock()) != nullptr) {
    block->filled_by = static_cast<int16_t>(filler);
  }
  return block;
}

void TopUpPool(int node) {
  for (uint32_t n = InboxOf(node).shared_blocks(); n < kPoolTarget; ++n) {
    LogBlock* block = AllocateBlock();
    if (block == nullptr) return;
    ReturnBlock(block);  // to `node`'s pool, unless the thread just moved
  }
}

void* TakeFromLog(LogBlock* log, int node, uint32_t cl, uint64_t size) {
  if (log == nullptr) return nullptr;
  for (uint32_t i = log->count; i-- > 0;) {
    if (LoggedClass(log, i) != cl) continue;
    void* object = LoggedObject(log, i, node);
    log->count--;
    log->offsets[i] = log->offsets[log->count];
    log->tags[i] = log->tags[log->count];
    log->bytes -= size;
    return object;
  }
  return nullptr;
}

}  // namespace numa
}  // namespace tcmalloc
