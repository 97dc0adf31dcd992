// weighted_interleave: what the guest kernel does with an interleave policy.
// Maps an anonymous buffer, mbinds it with MPOL_WEIGHTED_INTERLEAVE (Linux
// 6.9 and later) or MPOL_INTERLEAVE over nodes 0..NODES-1, writes it, and
// counts its pages per node with move_pages (nodes = NULL only reports).
//   weighted_interleave weighted|interleave NODES [MIB]   (default 256 MiB)
// Prints one line. On success, e.g. for weights 3:1:2 (wrapped here):
//   pages=65536 absent=0 node0=32768 node1=10923 node2=21845
//     share=50.00:16.67:33.33
// When mbind refuses the mode (a kernel before 6.9 answers EINVAL, so a
// caller can fall back to MPOL_INTERLEAVE), prints "mbind: errno=22 EINVAL"
// and exits 3, so the lab test can tell a refusal from a crash.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

// Debian 12's kernel headers (6.1) predate the mode; its value is the uapi
// enum's next entry after MPOL_PREFERRED_MANY (5).
#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE 6
#endif

#define MAX_NODES 64
#define PAGE 4096
// move_pages takes arrays of page pointers; asking in chunks keeps them small.
#define CHUNK 4096

static void die(const char* what) {
  perror(what);
  exit(1);
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 ||
      (strcmp(argv[1], "weighted") != 0 &&
       strcmp(argv[1], "interleave") != 0)) {
    fprintf(stderr,
            "usage: weighted_interleave weighted|interleave NODES [MIB]\n");
    return 2;
  }
  const int mode = strcmp(argv[1], "weighted") == 0 ? MPOL_WEIGHTED_INTERLEAVE
                                                    : MPOL_INTERLEAVE;
  const int nodes = atoi(argv[2]);
  const size_t bytes = (size_t)(argc > 3 ? atoi(argv[3]) : 256) << 20;
  if (nodes < 1 || nodes > MAX_NODES || bytes == 0) {
    fprintf(stderr, "weighted_interleave: NODES must be 1-%d, MIB > 0\n",
            MAX_NODES);
    return 2;
  }
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  // Debian's THP is "always", and a huge page goes to one node whole: keep
  // 4 KiB pages so that the counts show the policy page by page.
  if (madvise(p, bytes, MADV_NOHUGEPAGE) != 0) die("madvise");
  unsigned long mask = nodes == 64 ? ~0ul : (1ul << nodes) - 1;
  if (syscall(SYS_mbind, p, bytes, mode, &mask, MAX_NODES + 1, 0) != 0) {
    const int err = errno;
    printf("mbind: errno=%d %s\n", err, strerrorname_np(err));
    return 3;
  }
  memset(p, 1, bytes);  // move_pages finds only pages that exist

  const size_t pages = bytes / PAGE;
  long count[MAX_NODES] = {0};
  long absent = 0;
  void* addrs[CHUNK];
  int status[CHUNK];
  for (size_t first = 0; first < pages; first += CHUNK) {
    const size_t n = pages - first < CHUNK ? pages - first : CHUNK;
    for (size_t i = 0; i < n; ++i) addrs[i] = p + (first + i) * PAGE;
    if (syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0) != 0) {
      die("move_pages");
    }
    for (size_t i = 0; i < n; ++i) {
      if (status[i] >= 0 && status[i] < MAX_NODES) {
        ++count[status[i]];
      } else {
        ++absent;  // -ENOENT and the like: not on any node we can name
      }
    }
  }
  printf("pages=%zu absent=%ld", pages, absent);
  for (int node = 0; node < MAX_NODES; ++node) {
    if (count[node] > 0 || node < nodes) {
      printf(" node%d=%ld", node, count[node]);
    }
  }
  printf(" share=");
  for (int node = 0; node < nodes; ++node) {
    printf("%s%.2f", node ? ":" : "", 100.0 * count[node] / pages);
  }
  printf("\n");
  return 0;
}
