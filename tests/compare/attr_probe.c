// The attribution probe (tests/compare/place_threads_run): known remote
// accesses, by the "allocator's" code and by the program's, to heap and to
// static memory. The main thread (node 0 under place_threads.so) maps two
// buffers of --lines N 64-byte lines bound to node 0 (anonymous: heap to the
// split) and writes them and a static array of N lines; then one thread (the
// first created: node 1) reads every line of the first buffer once through
// attr_touch (libattr_alloc.so: allocator code), then every line of the
// second buffer and of the static array once itself (program code). So,
// remote from node 1: N loads by the allocator to heap, N by the program to
// heap, N by the program to static data, each a line node 1's cache has
// never held: N remote LLC misses each.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

long attr_touch(const volatile long* p, size_t n);

enum { kMaxLines = 1 << 16 };
static long statics[kMaxLines * 8];
static volatile long* buffers[2];
static size_t lines = 1 << 14;
static long sink;

static void* reader(void* arg) {
  (void)arg;
  long sum = attr_touch(buffers[0], lines);
  for (size_t i = 0; i < lines; ++i) sum += buffers[1][i * 8];
  const volatile long* s = statics;
  for (size_t i = 0; i < lines; ++i) sum += s[i * 8];
  sink = sum;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--lines") == 0) lines = strtoul(argv[2], NULL, 10);
  if (lines < 1 || lines > kMaxLines) {
    fprintf(stderr, "usage: attr_probe [--lines 1-%d]\n", kMaxLines);
    return 2;
  }
  const size_t bytes = lines * 64;
  for (int b = 0; b < 2; ++b) {
    void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    unsigned long node0 = 1;
    if (syscall(SYS_mbind, p, bytes, 2 /* MPOL_BIND */, &node0, 65ul, 0) != 0) return 1;
    memset(p, 1, bytes);
    buffers[b] = p;
  }
  memset(statics, 1, sizeof(long) * 8 * lines);
  pthread_t t;
  if (pthread_create(&t, NULL, reader, NULL) != 0) return 1;
  pthread_join(t, NULL);
  printf("lines %zu sum %ld\n", lines, sink);
  return 0;
}
