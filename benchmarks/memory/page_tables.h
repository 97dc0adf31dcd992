// Resident memory counted from the page tables (/proc/self/pagemap), for
// probes that must not trust /proc/self/smaps.
//
// With NUMA balancing on, the kernel makes a sample of a process's page table
// entries PROT_NONE to catch the next access (a hinting fault). On the lab's
// 6.1 kernel, smaps skips a huge page whose PMD is in that state (its walk
// asks follow_trans_huge_pmd, which refuses PROT_NONE entries unless forced),
// so Rss and AnonHugePages both miss whole 2 MiB pages that are present and
// written. 4 KiB pages in the same state are counted, so the error falls on
// whichever allocator has more huge pages. pagemap reports every present
// page, whatever its protection.
#ifndef BENCHMARKS_MEMORY_PAGE_TABLES_H_
#define BENCHMARKS_MEMORY_PAGE_TABLES_H_

namespace memory_probe {

struct PageTableCount {
  // Present pages of every mapping but the kernel's [vvar] and [vsyscall]
  // (not in Rss either), KiB.
  long present_kib = -1;
  // Of them, the 2 MiB-aligned stretches that one huge page backs whole
  // (512 consecutive page frames from a 2 MiB-aligned one that
  // /proc/kpageflags marks THP), KiB. -1 when the page frame numbers are
  // hidden (they are shown to root only), as in an unprivileged process.
  long huge_kib = -1;
};

// Walks /proc/self/maps and pagemap; allocates a few KiB (stdio).
PageTableCount CountFromPageTables();

}  // namespace memory_probe

#endif  // BENCHMARKS_MEMORY_PAGE_TABLES_H_
