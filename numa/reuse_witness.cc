// The notes behind the reuse check without move_pages (numa/reuse_witness.h).
#include "numa/reuse_witness.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa/balancing.h"
#include "numa/leaf_lock.h"
#include "numa/numa.h"
#include "numa/parse.h"
#include "numa/sparse_memory.h"
#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {
namespace {

struct Note {
  uintptr_t start;  // 0: free slot
  int32_t tid;
  int16_t node;
  bool released_before;
  uint64_t thread_faults;
  uint64_t process_faults;
  uint64_t present_pages;
};

// Blocks of 2 MiB or more out at once that were not wholly present when
// handed out; beyond this many (32 GiB at least) a block goes unnoted. A
// power of two; resident only where notes were written.
constexpr size_t kNotes = 16384;
// Guards the notes and the blocks seen whole: a probe or a copy at a time, no
// system call under it.
LeafLock g_notes_lock;
Note* g_notes;
uint64_t g_pages_per_fault = 1;
// Blocks that went out without a note: the table was full (UnnotedBlocks).
uint64_t g_unnoted;
// The home slot of the block at `start` in a table of `entries`, a power of
// two (the hash has 12 bits; a larger table probes on from them).
size_t Slot(uintptr_t start, size_t entries = kNotes) {
  return static_cast<size_t>(((start >> 21) * 0x9e3779b97f4a7c15ull) >> 52) &
         (entries - 1);
}

// Blocks seen whole at a hand-out, direct-mapped, SparseAlloc'd at the first
// entry; a collision forgets one (that block is looked at again).
struct Whole {
  uintptr_t start;
  size_t bytes;
};
constexpr size_t kWholeEntries = 4096;
Whole* g_whole;

// Records whether the block at `start` was whole (under g_notes_lock).
void SetWhole(uintptr_t start, size_t bytes, bool whole) {
  if (g_whole == nullptr) return;
  Whole& w = g_whole[Slot(start, kWholeEntries)];
  if (whole) {
    w = Whole{start, bytes};
  } else if (w.start == start) {
    w = Whole{};
  }
}

uint64_t Faults(int who) {
  struct rusage ru = {};
  if (RawSyscall(SYS_getrusage, who, reinterpret_cast<long>(&ru)) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(ru.ru_minflt) +
         static_cast<uint64_t>(ru.ru_majflt);
}

// Pages of [start, start + bytes) the kernel holds (mincore), one call per
// 1024 pages. Called with no lock held, so the vector is on the stack.
uint64_t PresentPages(uintptr_t start, size_t bytes) {
  unsigned char vec[1024];
  constexpr size_t vec_bytes = sizeof(vec);
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  uint64_t present = 0;
  const uintptr_t end = (start + bytes + page - 1) & ~(page - 1);
  for (uintptr_t at = start & ~(page - 1); at < end;) {
    const uintptr_t len =
        end - at < vec_bytes * page ? end - at : vec_bytes * page;
    if (RawSyscall(SYS_mincore, static_cast<long>(at), static_cast<long>(len),
                   reinterpret_cast<long>(vec)) != 0) {
      return present;
    }
    for (uintptr_t i = 0; i < len / page; ++i) present += vec[i] & 1;
    at += len;
  }
  return present;
}

// Finds and removes the note of the block at `start` into *note.
bool TakeNote(uintptr_t start, Note* note) {
  if (g_notes == nullptr) return false;
  size_t i = Slot(start);
  size_t probes = 0;
  for (; probes < kNotes && g_notes[i].start != start; ++probes) {
    if (g_notes[i].start == 0) return false;
    i = (i + 1) & (kNotes - 1);
  }
  if (probes == kNotes) return false;
  *note = g_notes[i];
  // Backward-shift deletion keeps every later note reachable from its slot.
  for (size_t hole = i, j = (i + 1) & (kNotes - 1);;
       j = (j + 1) & (kNotes - 1)) {
    if (g_notes[j].start == 0) {
      g_notes[hole].start = 0;
      break;
    }
    const size_t home = Slot(g_notes[j].start);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool stays =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stays) {
      g_notes[hole] = g_notes[j];
      hole = j;
    }
  }
  return true;
}

}  // namespace

bool SeenWhole(uintptr_t start, size_t bytes) {
  if (__atomic_load_n(&g_whole, __ATOMIC_ACQUIRE) == nullptr) return false;
  g_notes_lock.Lock();
  const Whole w = g_whole[Slot(start, kWholeEntries)];
  g_notes_lock.Unlock();
  return w.start == start && w.bytes == bytes;
}

bool ObserveHandOut(uintptr_t start, size_t bytes, int node, HandOut* out) {
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  out->start = start;
  out->present_pages = PresentPages(start, bytes);
  const uint64_t pages = (bytes + page - 1) / page;
  if (out->present_pages == pages) {
    SparseTable(&g_whole, kWholeEntries);
    g_notes_lock.Lock();
    SetWhole(start, bytes, true);
    g_notes_lock.Unlock();
  }
  // Its present pages are the node's: at most 1 in 20 absent passes the bar
  // of TooManyPagesElsewhere, whoever faults them in.
  if ((pages - out->present_pages) * 20 <= pages) return false;
  out->tid = static_cast<int>(RawSyscall(SYS_gettid));
  out->node = node;
  // The process's count after the thread's: a fault in between counts as
  // another thread's, never the other way round.
  out->thread_faults = Faults(RUSAGE_THREAD);
  out->process_faults = Faults(RUSAGE_SELF);
  return true;
}

bool NoteHandOut(const HandOut& h) {
  SparseTable(&g_notes, kNotes);
  g_notes_lock.Lock();
  for (size_t i = Slot(h.start), probes = 0;
       g_notes != nullptr && probes < kNotes;
       i = (i + 1) & (kNotes - 1), ++probes) {
    Note& n = g_notes[i];
    if (n.start != 0 && n.start != h.start) continue;
    n.start = h.start;
    n.tid = h.tid;
    n.node = static_cast<int16_t>(h.node);
    n.thread_faults = h.thread_faults;
    n.process_faults = h.process_faults;
    n.present_pages = h.present_pages;
    n.released_before = g_released_spans.Take(h.start);
    g_notes_lock.Unlock();
    return true;
  }
  g_notes_lock.Unlock();
  __atomic_fetch_add(&g_unnoted, 1, __ATOMIC_RELAXED);
  return false;
}

bool TakeWitness(uintptr_t start, size_t bytes, int node, ReuseWitness* w) {
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  *w = ReuseWitness{};
  w->block_pages = (bytes + page - 1) / page;
  w->pages_per_fault = g_pages_per_fault;
  Note note;
  g_notes_lock.Lock();
  const bool noted = TakeNote(start, &note);
  g_notes_lock.Unlock();
  if (!noted) return false;  // no page gained, as far as the heap can tell
  const uint64_t present = PresentPages(start, bytes);
  w->gained_pages =
      present > note.present_pages ? present - note.present_pages : 0;
  w->allocator_on_node = true;
  // Too few gained pages to matter (WitnessSaysRelease keeps the block on
  // its other threads' faults alone): no counter need be read.
  if (w->gained_pages * 20 <= w->block_pages) return true;
  // Another thread's fault count could only come from /proc, a file read
  // inside free: a block its taker does not return is judged as one whose
  // taker is gone (nobody can say who faulted its pages).
  const bool taker_returns =
      note.tid == static_cast<int>(RawSyscall(SYS_gettid));
  const uint64_t thread_faults =
      taker_returns ? Faults(RUSAGE_THREAD) : note.thread_faults;
  const int now_node = taker_returns ? CurrentNode() : -1;
  const uint64_t process_faults = Faults(RUSAGE_SELF);
  const uint64_t mine = thread_faults >= note.thread_faults
                            ? thread_faults - note.thread_faults
                            : 0;
  const uint64_t all = process_faults >= note.process_faults
                           ? process_faults - note.process_faults
                           : 0;
  w->allocator_faults = mine;
  w->other_faults = all > mine ? all - mine : 0;
  w->allocator_on_node = note.node == node && now_node == node;
  w->released_before = note.released_before;
  return true;
}

void NoteRelease(uintptr_t start) {
  g_notes_lock.Lock();
  SetWhole(start, 0, false);
  g_notes_lock.Unlock();
  g_released_spans.Note(start);
}

uint64_t ReadPagesPerFault() {
  char line[128];
  bool fits;
  {
    ByteStream in("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!in.ok() || !ReadLine(&in, line, sizeof(line), &fits)) return 1;
    bool always = false;
    for (const char* s = line; *s != '\0' && !always; ++s) {
      always = AfterPrefix(s, "[always]") != nullptr;
    }
    if (!always) return 1;
  }
  uint64_t pmd = uint64_t{2} << 20;
  ByteStream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  if (in.ok() && ReadLine(&in, line, sizeof(line), &fits) && fits) {
    uint64_t v;
    if (ParseUint(line, uint64_t{1} << 40, &v) && v != 0) pmd = v;
  }
  const uint64_t page = static_cast<uint64_t>(getpagesize());
  return pmd > page ? pmd / page : 1;
}

void SetPagesPerFault(uint64_t pages) {
  g_pages_per_fault = pages > 0 ? pages : 1;
}

uint64_t UnnotedBlocks() {
  return __atomic_load_n(&g_unnoted, __ATOMIC_RELAXED);
}

}  // namespace numa
}  // namespace tcmalloc
