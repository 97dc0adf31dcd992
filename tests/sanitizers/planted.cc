// Bugs planted in the layer's use, so that tests/sanitizers/run can show the
// sanitizer builds catch them (a suite that cannot fail proves nothing):
//   planted race       two threads record owners with no lock, which SetOwner
//                      forbids (numa/owner.h): TSan must report a data race;
//   planted locked     the same under a lock: clean (the control);
//   planted overflow   one entry past a full remote-free log block
//                      (numa/remote_free_log.h): UBSan's bounds check must
//                      stop it;
//   planted in-bounds  a full block and no more: clean (the control).
// Exits 0 when nothing was caught, 2 on bad input.
#include <stdio.h>
#include <string.h>

#include <memory>
#include <mutex>
#include <thread>

#include "numa/owner.h"
#include "numa/remote_free_log.h"

namespace {

using tcmalloc::numa::ClearOwners;
using tcmalloc::numa::kLogSlots;
using tcmalloc::numa::LogBlock;
using tcmalloc::numa::LogObject;
using tcmalloc::numa::MemoryKind;
using tcmalloc::numa::OwnerOf;
using tcmalloc::numa::SetOwner;
using tcmalloc::numa::WindowStart;

int Owners(bool locked) {
  std::mutex mu;
  auto record = [&](int node) {
    for (int i = 0; i < 1000; ++i) {
      std::unique_lock<std::mutex> lock(mu, std::defer_lock);
      if (locked) lock.lock();
      SetOwner(WindowStart(node) + (uintptr_t{1} << 30), (i + 1) << 21,
               MemoryKind::kNode, node);
      // Node 1's thread also grows node 0's part: both write its sector.
      SetOwner(WindowStart(0) + (uintptr_t{1} << 30), (i + 1) << 21,
               MemoryKind::kNode, 0);
    }
  };
  std::thread a(record, 0), b(record, 1);
  a.join();
  b.join();
  const bool ok =
      OwnerOf(WindowStart(1) + (uintptr_t{1} << 30)).node == 1 &&
      OwnerOf(WindowStart(0) + (uintptr_t{1} << 30)).kind == MemoryKind::kNode;
  ClearOwners();
  printf("owners recorded%s\n", ok ? "" : " WRONG");
  return ok ? 0 : 1;
}

int Log(uint32_t entries) {
  auto block = std::make_unique<LogBlock>();
  memset(block.get(), 0, sizeof(LogBlock));
  for (uint32_t i = 0; i < entries; ++i) {
    LogObject(block.get(), reinterpret_cast<void*>(WindowStart(1) + 8 * i), 1,
              8);
  }
  printf("%u entries logged\n", block->count);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc == 2 ? argv[1] : "";
  if (strcmp(what, "race") == 0) return Owners(false);
  if (strcmp(what, "locked") == 0) return Owners(true);
  if (strcmp(what, "overflow") == 0) return Log(kLogSlots + 1);
  if (strcmp(what, "in-bounds") == 0) return Log(kLogSlots);
  fprintf(stderr, "usage: planted race|locked|overflow|in-bounds\n");
  return 2;
}
