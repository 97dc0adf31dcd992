// The notes behind the reuse check without move_pages (numa/reuse_witness.h).
#include "numa/reuse_witness.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa/byte_stream.h"
#include "numa/numa.h"
#include "numa/parse.h"
#include "numa/path.h"
#include "numa/sparse_memory.h"
#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {
namespace {

struct Note {
  uintptr_t start;  // 0: free slot
  int32_t tid;
  int16_t node;
  uint64_t thread_faults;
  uint64_t process_faults;
  uint64_t present_pages;
};

// Blocks of 2 MiB or more out at once; more than this (8 GiB of them at
// least) are judged unknown. A power of two.
constexpr size_t kNotes = 4096;
Note* g_notes;
uint64_t g_pages_per_fault = 1;
// Set once a block went out without a note (the table was full).
bool g_unnoted;

size_t Slot(uintptr_t start) {
  return static_cast<size_t>(((start >> 21) * 0x9e3779b97f4a7c15ull) >> 52) &
         (kNotes - 1);
}

uint64_t Faults(int who) {
  struct rusage ru;
  memset(&ru, 0, sizeof(ru));
  if (RawSyscall(SYS_getrusage, who, reinterpret_cast<long>(&ru)) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(ru.ru_minflt) +
         static_cast<uint64_t>(ru.ru_majflt);
}

// Pages of [start, start + bytes) the kernel holds (mincore).
uint64_t PresentPages(uintptr_t start, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  unsigned char vec[1024];
  uint64_t present = 0;
  const uintptr_t end = (start + bytes + page - 1) & ~(page - 1);
  for (uintptr_t at = start & ~(page - 1); at < end;) {
    const uintptr_t len =
        end - at < sizeof(vec) * page ? end - at : sizeof(vec) * page;
    if (RawSyscall(SYS_mincore, static_cast<long>(at), static_cast<long>(len),
                   reinterpret_cast<long>(vec)) != 0) {
      return present;
    }
    for (uintptr_t i = 0; i < len / page; ++i) present += vec[i] & 1;
    at += len;
  }
  return present;
}

// Thread `tid`'s page faults and the CPU it last ran on, from
// /proc/self/task/<tid>/stat (fields 10 and 12, and 39). False if it is gone.
bool OtherThread(int tid, uint64_t* faults, int* cpu) {
  Path p;
  p.Add("/proc/self/task/").AddUint(static_cast<unsigned>(tid)).Add("/stat");
  if (!p.ok()) return false;
  ByteStream in(p.c_str());
  char line[1024];
  bool fits;
  if (!in.ok() || !ReadLine(&in, line, sizeof(line), &fits) || !fits) {
    return false;
  }
  // The command name, in parentheses, may hold anything: count from the
  // last ')'. Field 3 is the first after it.
  const char* s = nullptr;
  for (const char* c = line; *c != '\0'; ++c) {
    if (*c == ')') s = c;
  }
  if (s == nullptr) return false;
  uint64_t minflt = 0, majflt = 0, last_cpu = 0;
  int field = 2;
  for (++s; *s != '\0';) {
    while (*s == ' ') ++s;
    if (*s == '\0') break;
    ++field;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + (*s - '0');
    while (*s != '\0' && *s != ' ') ++s;
    if (field == 10) minflt = v;
    if (field == 12) majflt = v;
    if (field == 39) {
      last_cpu = v;
      break;
    }
  }
  if (field != 39) return false;
  *faults = minflt + majflt;
  *cpu = static_cast<int>(last_cpu);
  return true;
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

void ObserveHandOut(uintptr_t start, size_t bytes, int node, HandOut* out) {
  out->start = start;
  out->bytes = bytes;
  out->tid = static_cast<int>(RawSyscall(SYS_gettid));
  out->node = node;
  out->present_pages = PresentPages(start, bytes);
  // The process's count after the thread's: a fault in between counts as
  // another thread's, never the other way round.
  out->thread_faults = Faults(RUSAGE_THREAD);
  out->process_faults = Faults(RUSAGE_SELF);
}

bool NoteHandOut(const HandOut& h) {
  if (g_notes == nullptr) {
    g_notes = static_cast<Note*>(SparseAlloc(kNotes * sizeof(Note)));
  }
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
    return true;
  }
  g_unnoted = true;
  return false;
}

bool TakeWitness(uintptr_t start, size_t bytes, int node, ReuseWitness* w) {
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  *w = ReuseWitness{(bytes + page - 1) / page, 0,    0, 0,
                    g_pages_per_fault,         false};
  Note note;
  if (!TakeNote(start, &note)) {
    // A piece of a free span (NewAligned's leftovers, a span's remainder),
    // whose pages are the heap's own, or fresh growth: no page gained.
    // Unless some block went out unnoted: then any present page may be a
    // stranger's.
    if (g_unnoted) w->gained_pages = PresentPages(start, bytes);
    return false;
  }
  const uint64_t present = PresentPages(start, bytes);
  w->gained_pages =
      present > note.present_pages ? present - note.present_pages : 0;
  uint64_t thread_faults = 0;
  int now_node = -1;
  if (note.tid == static_cast<int>(RawSyscall(SYS_gettid))) {
    thread_faults = Faults(RUSAGE_THREAD);
    now_node = CurrentNode();
  } else {
    int cpu = -1;
    if (!OtherThread(note.tid, &thread_faults, &cpu)) {
      // Gone: its faults are among the process's, and its node unknown.
      thread_faults = note.thread_faults;
      cpu = -1;
    }
    now_node = cpu >= 0 ? NodeOfCpu(cpu) : -1;
  }
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
  return true;
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

void ResetWitnessForTest() {
  if (g_notes != nullptr) memset(g_notes, 0, kNotes * sizeof(Note));
  g_unnoted = false;
}

}  // namespace numa
}  // namespace tcmalloc
