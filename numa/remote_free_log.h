// Log blocks, inboxes and block pools (docs/design.md, "Remote frees: logged,
// not linked"); the thread-cache side is numa/remote_free_handover.cc. Blocks
// are never freed.
#ifndef NUMA_TCMALLOC_NUMA_REMOTE_FREE_LOG_H_
#define NUMA_TCMALLOC_NUMA_REMOTE_FREE_LOG_H_

#include <stdint.h>

#include <atomic>

#include "numa/leaf_lock.h"
#include "numa/node_class.h"
#include "numa/owner.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Objects a block of two 4 KiB pages holds: its per-block costs (a few
// lines other nodes wrote) are spread over this many frees.
inline constexpr uint32_t kLogSlots = 1360;
// A log is handed over when it holds this many bytes of objects: what a
// thread may keep from their owner (plus one object).
inline constexpr uint64_t kLogMaxBytes = uint64_t{64} << 10;
// An inbox takes no more blocks and bytes of objects than this, or a node
// with no thread that refills would collect remote frees for good; past
// either, the freeing thread links the objects itself.
inline constexpr uint32_t kInboxMaxBlocks = 256;
inline constexpr uint64_t kInboxMaxBytes = uint64_t{8} << 20;

// A block's filled_by before any node filled it.
inline constexpr int16_t kNoFiller = -1;

struct LogBlock {
  LogBlock* next;
  int16_t placed_on;  // the node whose thread first wrote it: its pool's
  int16_t filled_by;  // the node whose threads filled it last, or kNoFiller
  uint32_t count;     // objects held
  uint64_t bytes;     // their bytes
  uint32_t offsets[kLogSlots];
  uint16_t tags[kLogSlots];
};
static_assert(sizeof(LogBlock) <= 8192, "a log block fits two pages");
static_assert(kWindowShift - 3 <= 32 + 8, "a window's 8-byte units fit");

// An entry is 6 bytes, since a block's lines are what a remote free costs in
// traffic between nodes: the object's place in its node's window
// (numa/owner.h) in 8-byte units (37 bits: 32 in `offsets`, 5 in the high
// byte of `tags`) and its plain size class (the low byte of `tags`).
//
// True when `object` can go into a log of `node`'s objects: it lies in the
// node's window (node 0's heap also holds memory outside the windows) and
// is 8-byte aligned (every size class is).
inline bool Loggable(const void* object, int node) {
  return (reinterpret_cast<uintptr_t>(object) & ~(kWindowSize - 8)) ==
         WindowStart(node);
}

// Adds `object` (Loggable for the block's node) of plain class `cl`, `size`
// bytes. Requires room.
inline void LogObject(LogBlock* block, const void* object, uint32_t cl,
                      uint64_t size) {
  const uintptr_t units =
      (reinterpret_cast<uintptr_t>(object) & (kWindowSize - 1)) >> 3;
  block->offsets[block->count] = static_cast<uint32_t>(units);
  block->tags[block->count] = static_cast<uint16_t>((units >> 32) << 8 | cl);
  block->count++;
  block->bytes += size;
}
// Entry `i` of a block of `node`'s objects: the object, and its class.
inline void* LoggedObject(const LogBlock* block, uint32_t i, int node) {
  const uintptr_t units =
      block->offsets[i] | static_cast<uintptr_t>(block->tags[i] >> 8) << 32;
  return reinterpret_cast<void*>(WindowStart(node) | units << 3);
}
inline uint32_t LoggedClass(const LogBlock* block, uint32_t i) {
  return block->tags[i] & 0xff;
}
inline bool LogIsFull(const LogBlock* block) {
  return block->count == kLogSlots || block->bytes >= kLogMaxBytes;
}

// One node's inbox of full blocks (objects it owns, freed on other nodes)
// and its pool of empty blocks. The pool keeps a drained block for the node
// that filled it, in a line per filling node with its own lock: from one
// shared stack a node would mostly take blocks another node filled last.
class alignas(64) NodeInbox {
 public:
  // Blocks the pool keeps for each filling node: a line's worth.
  static constexpr int kKeptPerFiller = 6;

  // Takes a full block unless the inbox is at kInboxMaxBlocks or
  // kInboxMaxBytes; false leaves the block with the caller.
  bool Offer(LogBlock* block);
  // Every block offered and not yet taken, newest first.
  LogBlock* TakeAll();
  // One relaxed load: the refill path asks this first.
  bool HasBlocks() const {
    return full_.load(std::memory_order_relaxed) != nullptr;
  }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

  // An empty block for a log that node `filler`'s threads fill: the one
  // that node gave back last, else one of the shared list, else one kept for
  // another of nodes 0..nodes-1; nullptr if there is none.
  LogBlock* TakeEmpty(int filler, int nodes);
  // A drained block back to the pool, kept for block->filled_by (else to
  // the shared list, the only case that writes into the block).
  void GiveEmpty(LogBlock* block);
  uint32_t shared_blocks() const {
    return shared_blocks_.load(std::memory_order_relaxed);
  }

  // Every lock of the pool, held across fork().
  void LockPool();
  void UnlockPool();

 private:
  // The blocks kept for one filling node: popped one at a time, so under a
  // lock (a lock-free stack popped by several threads has the ABA case).
  struct alignas(64) Kept {
    LeafLock lock;
    // Written under lock, as blocks[0..used-1]; read without it first.
    std::atomic<uint8_t> used{0};
    LogBlock* blocks[kKeptPerFiller] = {};
  };
  static_assert(sizeof(Kept) == 64, "a filling node's blocks fill a line");

  LogBlock* TakeKept(int filler);

  // Full blocks, through next: any thread pushes, TakeAll empties it in one
  // exchange. Without a pop of one block there is no ABA case and no lock.
  std::atomic<LogBlock*> full_{nullptr};
  std::atomic<uint32_t> blocks_{0};
  std::atomic<uint64_t> bytes_{0};
  alignas(64) LeafLock shared_lock_;
  LogBlock* shared_ = nullptr;  // guarded by shared_lock_, through next
  std::atomic<uint32_t> shared_blocks_{0};
  Kept kept_[kMaxCpuNodes];
};

NodeInbox& InboxOf(int node);  // node < kMaxCpuNodes
// Puts each node's inbox on a page of its own (numa/node_pages.h).
void PlaceInboxesOnNodePages();

// An emptied block back to the pool of the node it lies on, to log that
// node's objects next.
inline void ReturnBlock(LogBlock* block) {
  InboxOf(block->placed_on).GiveEmpty(block);
}

// Blocks a node keeps ready in its pool's shared list, made by its own
// threads on their refills so that they lie on its node (32: no better).
inline constexpr uint32_t kPoolTarget = 8;

// An empty block for a log of `owner`'s objects that this thread's node
// fills (nodes 0..nodes-1 have pools): from the owner's pool, else a new
// one; nullptr if there is none (the free then takes the list path).
LogBlock* NewBlock(int owner, int nodes);
void TopUpPool(int node);

// An object of plain class `cl`, `size` bytes, out of `log` (may be null), a
// log of `node`'s objects, or nullptr. Linear: only for borrowing.
void* TakeFromLog(LogBlock* log, int node, uint32_t cl, uint64_t size);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_REMOTE_FREE_LOG_H_
