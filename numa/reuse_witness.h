// What the heap notes about a large block it hands out on a first-touch
// node, so that the reuse check can judge it on its way back without
// move_pages (docs/design.md, "Without move_pages"). The notes' leaf lock is
// taken with no other lock held and guards no system call. Raw syscalls only.
#ifndef NUMA_TCMALLOC_NUMA_REUSE_WITNESS_H_
#define NUMA_TCMALLOC_NUMA_REUSE_WITNESS_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/policy.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// A block as it was handed out.
struct HandOut {
  uintptr_t start;
  int tid;                  // the thread that took it
  int node;                 // that thread's node then
  uint64_t thread_faults;   // its page faults then (minor + major)
  uint64_t process_faults;  // the process's then
  uint64_t present_pages;   // the block's pages the kernel held then
};

// Reads what a HandOut holds for [start, start + bytes), taken by the
// calling thread on `node`. False when at most 1 in 20 of its pages are
// absent: whoever faults those in, the block passes the reuse check's bar,
// so it needs no note. Call it without the page heap lock (mincore).
bool ObserveHandOut(uintptr_t start, size_t bytes, int node, HandOut* out);

// True when ObserveHandOut last found the block of `bytes` at `start` whole
// and the witness has not released it since: unless the heap decommitted it
// (counted as a commit), it is whole still, and needs no look.
bool SeenWhole(uintptr_t start, size_t bytes);

// Keeps `h` until the block returns. False if the table is full: the block
// goes unnoted, and is judged on return as one that gained nothing
// (counted: UnnotedBlocks).
bool NoteHandOut(const HandOut& h);
uint64_t UnnotedBlocks();

// The block at `start`, judged by its note, is being released: remembered
// (numa/balancing.h, ReleasedSpans), so that its next note says so
// (ReuseWitness::released_before) and takes it back.
void NoteRelease(uintptr_t start);

// A span of `bytes` at `start` comes back to the heap of `node`: takes its
// note and fills *w. False if it has none (a block wholly present when
// handed out, a piece of a free span, fresh growth): then *w says nothing
// was gained. Call it without the page heap lock (mincore).
bool TakeWitness(uintptr_t start, size_t bytes, int node, ReuseWitness* w);

// The most pages one page fault brings into the heap's regions: a PMD huge
// page's worth under transparent huge pages `always`
// (/sys/kernel/mm/transparent_hugepage/enabled, hpage_pmd_size), else 1.
// Read once, by Init, when the witness will be used.
uint64_t ReadPagesPerFault();
void SetPagesPerFault(uint64_t pages);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_REUSE_WITNESS_H_
