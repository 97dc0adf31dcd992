// Touches N fresh 4 KiB pages (one byte each, huge pages off for the
// mapping), for the lab's check that the kernel's side of a page fault is
// counted: N faults, and about N x 4096 / 64 kernel line writes (the
// zeroing) to those pages, on the faulting vCPU's node.
//   fault_pages N
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 0;
  if (n <= 0) {
    fprintf(stderr, "usage: fault_pages N (N > 0)\n");
    return 1;
  }
  const size_t bytes = (size_t)n * 4096;
  volatile char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("fault_pages: mmap");
    return 1;
  }
  madvise((void*)p, bytes, MADV_NOHUGEPAGE);
  for (long i = 0; i < n; ++i) p[i * 4096] = 1;
  return 0;
}
