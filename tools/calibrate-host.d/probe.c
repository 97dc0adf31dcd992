// The measurements behind the time model's host profile (tools/calibrate-host):
//   ghz        a chain of dependent adds, one cycle each
//   latency    a pointer chase through a random cycle of 64 B lines in a
//              buffer 4 x the LLC (256 MiB-1 GiB) (prefetchers cannot guess the
//              next line)
//   store      ns per 64 B line of memset over the same buffer, cold
//   fault      ns per first touch of a 4 KiB page given back with
//              MADV_DONTNEED (huge pages off)
// Prints "key=value" lines. Medians of 5 runs of each (the chase and the
// stores: of 3).
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median5(double* v) {
  qsort(v, 5, sizeof *v, cmp);
  return v[2];
}

static double ghz(void) {
  const long n = 50000000;
  long x = 0;
  const double t0 = now();
  // 4 dependent adds per iteration, the loop's own add and branch overlap.
  for (long i = 0; i < n; ++i) {
    __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                     : "+r"(x));
  }
  return 4.0 * n / (now() - t0) / 1e9;
}

static double chase(size_t bytes) {
  const size_t lines = bytes / 64;
  char* buf = aligned_alloc(2 << 20, bytes);
  // Huge pages where the kernel gives them: a chase measures memory, not
  // page walks (as Intel MLC does with its large pages).
  madvise(buf, bytes, MADV_HUGEPAGE);
  size_t* order = malloc(lines * sizeof *order);
  if (!buf || !order) exit(1);
  for (size_t i = 0; i < lines; ++i) order[i] = i;
  srand(1);
  for (size_t i = lines - 1; i > 0; --i) {
    const size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1);
    const size_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < lines; ++i) {
    *(char**)(buf + order[i] * 64) = buf + order[(i + 1) % lines] * 64;
  }
  free(order);
  const long steps = 5000000;
  char* p = buf;
  for (long i = 0; i < (long)lines / 4; ++i) p = *(char**)p;  // warm up
  const double t0 = now();
  for (long i = 0; i < steps; ++i) p = *(char**)p;
  const double ns = (now() - t0) / steps * 1e9;
  if (p == NULL) puts("");
  free(buf);
  return ns;
}

static double store_line(size_t bytes) {
  char* buf = aligned_alloc(4096, bytes);
  memset(buf, 1, bytes);  // faulted in
  char* other = aligned_alloc(4096, bytes);
  memset(other, 1, bytes);  // evicts buf from the caches
  const double t0 = now();
  memset(buf, 2, bytes);
  __asm__ volatile("" : : "r"(buf) : "memory");  // the stores are kept
  const double ns = (now() - t0) / (bytes / 64) * 1e9;
  free(buf);
  free(other);
  return ns;
}

static double fault(void) {
  const size_t pages = 16384, bytes = pages * 4096;
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(1);
  madvise(p, bytes, MADV_NOHUGEPAGE);
  // Touched once and given back first: the faults measured are of memory a
  // process returned and takes again, an allocator's steady state. Under a
  // hypervisor the very first touch of guest memory also pays its fault
  // (10.6 us here against the steady state's few).
  for (size_t i = 0; i < pages; ++i) p[i * 4096] = 1;
  madvise(p, bytes, MADV_DONTNEED);
  const double t0 = now();
  for (size_t i = 0; i < pages; ++i) p[i * 4096] = 1;
  const double ns = (now() - t0) / pages * 1e9;
  munmap(p, bytes);
  return ns;
}

int main(int argc, char** argv) {
  const size_t llc = argc > 1 ? strtoull(argv[1], NULL, 10) : (32u << 20);
  // 4 x the LLC, at least 256 MiB and at most 1 GiB.
  size_t bytes = llc * 4 < (256u << 20) ? (256u << 20) : llc * 4;
  if (bytes > (1u << 30)) bytes = 1u << 30;
  double v[5];
  for (int i = 0; i < 5; ++i) v[i] = ghz();
  printf("ghz=%.3f\n", median5(v));
  for (int i = 0; i < 3; ++i) v[i] = chase(bytes);
  qsort(v, 3, sizeof *v, cmp);
  printf("latency_ns=%.1f\n", v[1]);
  for (int i = 0; i < 3; ++i) v[i] = store_line(bytes);
  qsort(v, 3, sizeof *v, cmp);
  printf("store_line_ns=%.2f\n", v[1]);
  for (int i = 0; i < 5; ++i) v[i] = fault();
  printf("fault_total_ns=%.0f\n", median5(v));
  return 0;
}
