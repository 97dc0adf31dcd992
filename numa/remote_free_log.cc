// Log blocks and node inboxes for remote frees (numa/remote_free_log.h).
#include "numa/remote_free_log.h"

#include "numa/node_pages.h"

namespace tcmalloc {
namespace numa {
namespace {
// The owner reads its inbox on every refill and takes its blocks and pool
// there; other nodes' threads write it once per block (numa/node_pages.h).
NodePages<NodeInbox> g_inboxes;
}  // namespace

NodeInbox& InboxOf(int node) { return g_inboxes[node]; }

void PlaceInboxesOnNodePages() { g_inboxes.Place(); }

void BlockStack::Push(LogBlock* first, LogBlock* last) {
  LogBlock* head = head_.load(std::memory_order_relaxed);
  do {
    last->next = head;
  } while (!head_.compare_exchange_weak(head, first, std::memory_order_release,
                                        std::memory_order_relaxed));
}

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
  full_.Push(block, block);
  return true;
}

LogBlock* NodeInbox::TakeAll() {
  LogBlock* taken = full_.TakeAll();
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

LogBlock* NodeInbox::TakeEmpty() {
  LockPool();
  LogBlock* block = pool_;
  if (block != nullptr) {
    pool_ = block->next;
    pool_size_.fetch_sub(1, std::memory_order_relaxed);
  }
  UnlockPool();
  return block;
}

void NodeInbox::GiveEmpty(LogBlock* block) {
  block->count = 0;
  block->bytes = 0;
  LockPool();
  block->next = pool_;
  pool_ = block;
  pool_size_.fetch_add(1, std::memory_order_relaxed);
  UnlockPool();
}

}  // namespace numa
}  // namespace tcmalloc
