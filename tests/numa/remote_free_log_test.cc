// The inboxes and block pools of logged remote frees: what an inbox takes,
// what it refuses (its caps keep an idle owner from collecting frees for
// good), that concurrent offers all come out once, where new blocks go, and
// what borrowing takes out of a log.
#include "numa/remote_free_log.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "numa/small_objects.h"

namespace tcmalloc {
namespace numa {
namespace {

std::unique_ptr<LogBlock> FullBlock(uint64_t bytes) {
  auto block = std::make_unique<LogBlock>();
  block->next = nullptr;
  block->placed_on = 1;
  block->filled_by = kNoFiller;
  block->count = 0;
  block->bytes = 0;
  static char object;
  while (!LogIsFull(block.get())) LogObject(block.get(), &object, 3, 8);
  block->bytes = bytes;
  return block;
}

int Length(const LogBlock* b) {
  int n = 0;
  for (; b != nullptr; b = b->next) ++n;
  return n;
}

TEST(RemoteFreeLog, ABlockIsFullAtItsSlotsOrItsBytes) {
  LogBlock block = {};
  static char object;
  for (uint32_t i = 0; i + 1 < kLogSlots; ++i)
    LogObject(&block, &object, 5, 16);
  EXPECT_FALSE(LogIsFull(&block));
  LogObject(&block, &object, 5, 16);
  EXPECT_TRUE(LogIsFull(&block));
  EXPECT_EQ(LoggedClass(&block, 0), 5u);

  LogBlock big = {};
  LogObject(&big, &object, 60, kLogMaxBytes);
  EXPECT_TRUE(LogIsFull(&big)) << "one object of kLogMaxBytes fills a block";
}

// Entries keep an object's place in its owner's window: every 8-byte
// aligned address of the window comes back whole, with its class, also past
// the first 32 GiB (the 5 bits above the 32 of `offsets`).
TEST(RemoteFreeLog, AnEntryGivesBackTheObjectAndItsClass) {
  LogBlock block = {};
  // (Sanitizer builds' windows are 4 GiB: places past them are left out.)
  const uintptr_t all_places[] = {0,
                                  8,
                                  uintptr_t{1} << 30,
                                  (uintptr_t{32} << 30) - 8,
                                  uintptr_t{32} << 30,
                                  (uintptr_t{777} << 30) + 4096 + 48,
                                  kWindowSize - 8};
  std::vector<uintptr_t> places;
  for (uintptr_t place : all_places) {
    if (place < kWindowSize) places.push_back(place);
  }
  const int nodes[] = {0, 1, 5, 63};
  uint32_t i = 0;
  for (int node : nodes) {
    for (uintptr_t place : places) {
      const uintptr_t address = WindowStart(node) + place;
      void* object = reinterpret_cast<void*>(address);
      ASSERT_TRUE(Loggable(object, node)) << std::hex << address;
      const uint32_t cl = (i * 37) % 128;
      block.count = 0;
      LogObject(&block, object, cl, 16);
      EXPECT_EQ(LoggedObject(&block, 0, node), object) << std::hex << address;
      EXPECT_EQ(LoggedClass(&block, 0), cl) << std::hex << address;
      ++i;
    }
  }
}

TEST(RemoteFreeLog, OnlyAlignedObjectsOfTheNodesWindowAreLoggable) {
  const uintptr_t window1 = WindowStart(1);
  auto at = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  EXPECT_TRUE(Loggable(at(window1 + 64), 1));
  EXPECT_FALSE(Loggable(at(window1 + 64), 0)) << "another node's window";
  EXPECT_FALSE(Loggable(at(window1 + 64), 2));
  EXPECT_FALSE(Loggable(at(window1 + 68), 1)) << "not 8-byte aligned";
  EXPECT_FALSE(Loggable(at(window1 - 8), 1)) << "just below the window";
  EXPECT_FALSE(Loggable(at(WindowStart(2)), 1)) << "just past the window";
  // Memory from outside every window (a user SysAllocator, an mmap high up)
  // that node 0's heap holds.
  EXPECT_FALSE(Loggable(at(uintptr_t{0x7f12} << 32), 0));
}

TEST(RemoteFreeLog, AnInboxGivesBackWhatItTookNewestFirst) {
  NodeInbox inbox;
  EXPECT_FALSE(inbox.HasBlocks());
  auto a = FullBlock(100), b = FullBlock(200);
  ASSERT_TRUE(inbox.Offer(a.get()));
  ASSERT_TRUE(inbox.Offer(b.get()));
  EXPECT_TRUE(inbox.HasBlocks());
  EXPECT_EQ(inbox.bytes(), 300u);
  LogBlock* taken = inbox.TakeAll();
  EXPECT_EQ(taken, b.get());
  EXPECT_EQ(taken->next, a.get());
  EXPECT_EQ(Length(taken), 2);
  EXPECT_EQ(inbox.bytes(), 0u);
  EXPECT_FALSE(inbox.HasBlocks());
  EXPECT_EQ(inbox.TakeAll(), nullptr);
}

TEST(RemoteFreeLog, AnInboxRefusesPastItsBlockCap) {
  NodeInbox inbox;
  std::vector<std::unique_ptr<LogBlock>> blocks;
  for (uint32_t i = 0; i < kInboxMaxBlocks; ++i) {
    blocks.push_back(FullBlock(8));
    ASSERT_TRUE(inbox.Offer(blocks.back().get())) << i;
  }
  auto one_more = FullBlock(8);
  EXPECT_FALSE(inbox.Offer(one_more.get()));
  EXPECT_EQ(Length(inbox.TakeAll()), static_cast<int>(kInboxMaxBlocks));
  EXPECT_TRUE(inbox.Offer(one_more.get())) << "taking makes room";
}

TEST(RemoteFreeLog, AnInboxRefusesPastItsByteCap) {
  NodeInbox inbox;
  auto half = FullBlock(kInboxMaxBytes / 2),
       other = FullBlock(kInboxMaxBytes / 2);
  auto more = FullBlock(1);
  ASSERT_TRUE(inbox.Offer(half.get()));
  ASSERT_TRUE(inbox.Offer(other.get()));
  EXPECT_FALSE(inbox.Offer(more.get()));
  EXPECT_EQ(inbox.bytes(), kInboxMaxBytes);
  inbox.TakeAll();
  // An empty inbox takes one block whatever its size: the freeing thread
  // must be able to hand over a log of one big object.
  auto huge = FullBlock(2 * kInboxMaxBytes);
  EXPECT_TRUE(inbox.Offer(huge.get()));
}

constexpr int kNodes = 8;

// A drained block last filled by `filler`'s threads, lying on node 0.
std::unique_ptr<LogBlock> FilledBy(int16_t filler) {
  auto block = FullBlock(64);
  block->placed_on = 0;
  block->filled_by = filler;
  return block;
}

TEST(RemoteFreeLog, ThePoolHandsBackEmptiedBlocks) {
  NodeInbox inbox;
  EXPECT_EQ(inbox.TakeEmpty(2, kNodes), nullptr);
  auto a = FilledBy(kNoFiller), b = FilledBy(kNoFiller);
  inbox.GiveEmpty(a.get());
  inbox.GiveEmpty(b.get());
  EXPECT_EQ(inbox.shared_blocks(), 2u);
  LogBlock* first = inbox.TakeEmpty(2, kNodes);
  EXPECT_EQ(first, b.get());
  EXPECT_EQ(first->count, 0u) << "emptied by the taker";
  EXPECT_EQ(first->bytes, 0u);
  EXPECT_EQ(first->filled_by, 2) << "the taker's node fills it now";
  EXPECT_EQ(inbox.TakeEmpty(3, kNodes), a.get());
  EXPECT_EQ(inbox.TakeEmpty(2, kNodes), nullptr);
  EXPECT_EQ(inbox.shared_blocks(), 0u);
}

// A node gets back the block it filled last, whose lines its cache may still
// hold, before the shared list and before blocks other nodes filled; and
// the owner writes nothing into a block it keeps for a node.
TEST(RemoteFreeLog, ThePoolKeepsABlockForTheNodeThatFilledIt) {
  NodeInbox inbox;
  auto fresh = FilledBy(kNoFiller), by1 = FilledBy(1), by3 = FilledBy(3);
  inbox.GiveEmpty(fresh.get());
  by1->next = by3->next = nullptr;
  inbox.GiveEmpty(by1.get());
  inbox.GiveEmpty(by3.get());
  EXPECT_EQ(inbox.shared_blocks(), 1u) << "kept blocks are not shared";
  EXPECT_EQ(by1->count, kLogSlots) << "a kept block is not written";
  EXPECT_EQ(by1->next, nullptr);
  EXPECT_EQ(inbox.TakeEmpty(3, kNodes), by3.get());
  EXPECT_EQ(inbox.TakeEmpty(1, kNodes), by1.get());
  EXPECT_EQ(inbox.TakeEmpty(1, kNodes), fresh.get()) << "then the shared list";
  EXPECT_EQ(inbox.TakeEmpty(1, kNodes), nullptr);
}

TEST(RemoteFreeLog, ANodeTakesAnotherNodesBlockOnlyWhenNothingElseIsLeft) {
  NodeInbox inbox;
  auto by1 = FilledBy(1), fresh = FilledBy(kNoFiller);
  inbox.GiveEmpty(by1.get());
  inbox.GiveEmpty(fresh.get());
  EXPECT_EQ(inbox.TakeEmpty(2, kNodes), fresh.get());
  EXPECT_EQ(inbox.TakeEmpty(2, 1), nullptr)
      << "node 1 is not among the nodes asked for";
  EXPECT_EQ(inbox.TakeEmpty(2, kNodes), by1.get()) << "rather than a new one";
  EXPECT_EQ(by1->filled_by, 2);
}

TEST(RemoteFreeLog, ANodesBlocksPastItsLineGoToTheSharedList) {
  NodeInbox inbox;
  std::vector<std::unique_ptr<LogBlock>> blocks;
  for (int i = 0; i < NodeInbox::kKeptPerFiller + 2; ++i) {
    blocks.push_back(FilledBy(5));
    inbox.GiveEmpty(blocks.back().get());
  }
  EXPECT_EQ(inbox.shared_blocks(), 2u);
  // Another node takes the two that did not fit (the shared list) first.
  EXPECT_EQ(inbox.TakeEmpty(7, kNodes),
            blocks[NodeInbox::kKeptPerFiller + 1].get());
  EXPECT_EQ(inbox.TakeEmpty(7, kNodes),
            blocks[NodeInbox::kKeptPerFiller].get());
  for (int i = NodeInbox::kKeptPerFiller; i-- > 0;) {
    EXPECT_EQ(inbox.TakeEmpty(5, kNodes), blocks[i].get()) << "newest first";
  }
  EXPECT_EQ(inbox.TakeEmpty(5, kNodes), nullptr);
}

// A block made on its filler's node, when the owner's pool ran dry, goes
// back to that node's pool, where it logs other nodes' objects: it is
// shared, not kept for the node it lies on.
TEST(RemoteFreeLog, ABlockOnItsFillersNodeIsShared) {
  NodeInbox inbox;
  auto made = FilledBy(4);
  made->placed_on = 4;
  inbox.GiveEmpty(made.get());
  EXPECT_EQ(inbox.shared_blocks(), 1u);
  EXPECT_EQ(inbox.TakeEmpty(2, 1), made.get());
}

// Fillers take and give back blocks while another thread gives back more:
// no block is ever held twice, and every block ends in the pool.
TEST(RemoteFreeLog, ConcurrentTakersNeverShareABlock) {
  constexpr int kFillers = 4, kRounds = 20000, kBlocks = 16;
  NodeInbox inbox;
  std::vector<std::unique_ptr<LogBlock>> blocks;
  std::vector<std::atomic<int>> holders(kBlocks);
  for (int i = 0; i < kBlocks; ++i) {
    blocks.push_back(
        FilledBy(i % (kFillers + 1) == kFillers ? kNoFiller : i % kFillers));
    inbox.GiveEmpty(blocks.back().get());
  }
  auto index = [&](LogBlock* b) {
    for (int i = 0; i < kBlocks; ++i) {
      if (blocks[i].get() == b) return i;
    }
    return -1;
  };
  std::atomic<int> shared_use{0};
  std::vector<std::thread> fillers;
  for (int f = 0; f < kFillers; ++f) {
    fillers.emplace_back([&, f] {
      for (int r = 0; r < kRounds; ++r) {
        LogBlock* b = inbox.TakeEmpty(f, kFillers);
        if (b == nullptr) continue;
        const int i = index(b);
        ASSERT_GE(i, 0);
        if (holders[i].fetch_add(1) != 0) shared_use.fetch_add(1);
        holders[i].fetch_sub(1);
        inbox.GiveEmpty(b);
      }
    });
  }
  for (auto& t : fillers) t.join();
  EXPECT_EQ(shared_use.load(), 0);
  int back = 0;
  for (int f = 0; f < kFillers; ++f) {
    while (inbox.TakeEmpty(f, kFillers) != nullptr) ++back;
  }
  EXPECT_EQ(back, kBlocks);
}

// Four threads offer while one takes: every block accepted comes out of the
// inbox exactly once, and the counts end at zero.
TEST(RemoteFreeLog, ConcurrentOffersComeOutOnce) {
  constexpr int kThreads = 4, kPerThread = 2000;
  NodeInbox inbox;
  std::vector<std::unique_ptr<LogBlock>> blocks;
  for (int i = 0; i < kThreads * kPerThread; ++i)
    blocks.push_back(FullBlock(1));
  std::atomic<int> accepted{0}, producers_left{kThreads};
  std::vector<int> seen(blocks.size(), 0);
  std::thread taker([&] {
    for (;;) {
      const bool last = producers_left.load() == 0;
      for (LogBlock* b = inbox.TakeAll(); b != nullptr; b = b->next) {
        for (size_t i = 0; i < blocks.size(); ++i) {
          if (blocks[i].get() == b) ++seen[i];
        }
      }
      if (last) return;
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        while (!inbox.Offer(blocks[t * kPerThread + i].get())) {
          std::this_thread::yield();  // the taker makes room
        }
        accepted.fetch_add(1);
      }
      producers_left.fetch_sub(1);
    });
  }
  for (auto& p : producers) p.join();
  taker.join();
  EXPECT_EQ(accepted.load(), kThreads * kPerThread);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << i;
  EXPECT_EQ(inbox.bytes(), 0u);
  EXPECT_FALSE(inbox.HasBlocks());
}

// Borrowing takes an object of the class asked for out of a log: the
// newest such entry, the last entry taking its place.
TEST(RemoteFreeLog, TakeFromLogTakesTheNewestEntryOfTheClass) {
  LogBlock block = {};
  auto at = [](uintptr_t place) {
    return reinterpret_cast<void*>(WindowStart(1) + place);
  };
  LogObject(&block, at(8), 3, 32);
  LogObject(&block, at(16), 5, 64);
  LogObject(&block, at(24), 3, 32);
  EXPECT_EQ(TakeFromLog(&block, 1, 3, 32), at(24));
  EXPECT_EQ(TakeFromLog(&block, 1, 3, 32), at(8));
  EXPECT_EQ(TakeFromLog(&block, 1, 3, 32), nullptr);
  ASSERT_EQ(block.count, 1u);
  EXPECT_EQ(LoggedObject(&block, 0, 1), at(16));
  EXPECT_EQ(block.bytes, 64u);
  EXPECT_EQ(TakeFromLog(nullptr, 1, 3, 32), nullptr);
}

// A block made when the owner's pool is dry lies on the maker's node, and
// goes back to that node's pool, shared (the node's threads log other
// nodes' objects in it); a node tops its pool up with blocks of its own.
TEST(RemoteFreeLog, ANewBlockGoesBackToThePoolOfTheNodeItLiesOn) {
  const int here = ThisThreadsListNode();
  LogBlock* block = NewBlock(here + 1, kNodes);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->placed_on, here);
  EXPECT_EQ(block->filled_by, here);
  EXPECT_EQ(block->count, 0u);
  EXPECT_EQ(block->bytes, 0u);
  EXPECT_EQ(block->offsets[kLogSlots - 1], 0u) << "a new block is zero";
  ReturnBlock(block);
  EXPECT_EQ(InboxOf(here).shared_blocks(), 1u);
  EXPECT_EQ(NewBlock(here, kNodes), block);
  TopUpPool(here);
  EXPECT_EQ(InboxOf(here).shared_blocks(), kPoolTarget);
  ReturnBlock(block);
  EXPECT_EQ(InboxOf(here).shared_blocks(), kPoolTarget + 1);
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
