// An LD_PRELOAD shim for the THP experiments of issue 26 (docs/lab.md,
// "THP footprint"): it gives the allocator's brk heap and/or its anonymous
// mmaps MADV_NOHUGEPAGE (or MADV_HUGEPAGE) as they grow, before anything in
// them is touched, so that one kind of mapping at a time can be kept out of
// (or put into) transparent huge pages. tcmalloc takes its metadata (and
// vanilla its whole heap) from sbrk(), falling back to mmap(); both go
// through libc's exported symbols, which this library replaces. NUMA node
// regions are reserved with raw syscalls and are out of its reach: the probe
// advises them itself (thp_threads --nohuge=regions).
//
//   THP_SHIM=brk,mmap        which growth to advise (either or both)
//   THP_SHIM_ADVICE=nohuge   MADV_NOHUGEPAGE (default) or `huge`: MADV_HUGEPAGE
//
// Load it before the allocator: LD_PRELOAD=thp_shim.so:libtcmalloc_minimal.so.
// At exit it prints one line on stderr: what it advised.
//
// No libc allocation and no dlsym here: sbrk runs inside malloc, under the
// allocator's locks. sbrk is reimplemented on the brk syscall (libc's own
// break variable is then stale, which matters to nobody while tcmalloc is
// the malloc); mmap goes straight to the syscall.
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int g_parsed;
static int g_brk;
static int g_mmap;
static int g_advice = MADV_NOHUGEPAGE;
static uintptr_t g_brk_start;  // the break before the first sbrk
static uintptr_t g_brk_now;
static unsigned long g_brk_calls, g_mmap_calls, g_mmap_kib, g_failures;

// Reads the settings once; getenv allocates nothing.
static void Parse(void) {
  if (g_parsed) return;
  g_parsed = 1;
  const char* what = getenv("THP_SHIM");
  if (what != NULL) {
    g_brk = strstr(what, "brk") != NULL;
    g_mmap = strstr(what, "mmap") != NULL;
  }
  const char* advice = getenv("THP_SHIM_ADVICE");
  if (advice != NULL && strcmp(advice, "huge") == 0) g_advice = MADV_HUGEPAGE;
}

static void Advise(uintptr_t start, uintptr_t end) {
  const uintptr_t page = 4096;
  start &= ~(page - 1);
  end = (end + page - 1) & ~(page - 1);
  if (end > start &&
      syscall(SYS_madvise, start, (long)(end - start), g_advice) != 0) {
    ++g_failures;
  }
}

void* sbrk(intptr_t increment) {
  Parse();
  if (g_brk_now == 0) g_brk_now = g_brk_start = syscall(SYS_brk, 0L);
  const uintptr_t old = g_brk_now;
  if (increment == 0) return (void*)old;
  const uintptr_t want = old + increment;
  if ((increment > 0 && want < old) || (increment < 0 && want > old)) {
    errno = ENOMEM;
    return (void*)-1;
  }
  const uintptr_t got = syscall(SYS_brk, want);
  if (got != want) {
    errno = ENOMEM;
    return (void*)-1;
  }
  g_brk_now = got;
  if (g_brk && increment > 0) {
    // The whole heap, not just the new part, so that it stays one mapping.
    Advise(g_brk_start, got);
    ++g_brk_calls;
  }
  return (void*)old;
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd,
           off_t offset) {
  Parse();
  const long p = syscall(SYS_mmap, addr, length, (long)prot, (long)flags,
                         (long)fd, (long)offset);
  if (p < 0 && p > -4096) {
    errno = (int)-p;
    return MAP_FAILED;
  }
  if (g_mmap && (flags & MAP_ANONYMOUS) && (flags & MAP_PRIVATE)) {
    Advise((uintptr_t)p, (uintptr_t)p + length);
    ++g_mmap_calls;
    g_mmap_kib += length >> 10;
  }
  return (void*)p;
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd,
             off_t offset) __attribute__((alias("mmap")));

static void Put(char** at, const char* s) {
  while (*s != '\0') *(*at)++ = *s++;
}

static void PutNumber(char** at, unsigned long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0) *(*at)++ = digits[--n];
}

__attribute__((destructor)) static void Report(void) {
  Parse();
  char line[256];
  char* at = line;
  Put(&at, "thp_shim: ");
  Put(&at, g_advice == MADV_HUGEPAGE ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE");
  Put(&at, " on brk heap: ");
  if (g_brk) {
    PutNumber(&at, (g_brk_now - g_brk_start) >> 10);
    Put(&at, " KiB after ");
    PutNumber(&at, g_brk_calls);
    Put(&at, " sbrk calls");
  } else {
    Put(&at, "off");
  }
  Put(&at, "; anonymous mmaps: ");
  if (g_mmap) {
    PutNumber(&at, g_mmap_kib);
    Put(&at, " KiB in ");
    PutNumber(&at, g_mmap_calls);
    Put(&at, " calls");
  } else {
    Put(&at, "off");
  }
  Put(&at, "; failed madvise calls: ");
  PutNumber(&at, g_failures);
  Put(&at, "\n");
  syscall(SYS_write, 2L, line, (long)(at - line));
}
