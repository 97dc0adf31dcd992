// bound_access: the known answer for the lab's access plugin. Pins itself to
// the CPUs of one node, binds a fresh buffer to a node with mbind, writes it,
// then, inside a counting window (tools/lab-plugin/window.h), writes it once
// more and reads it PASSES times. Every access in the window is to the buffer
// (the loop keeps its state in registers), so the plugin must attribute
// (cpu node, buffer node) to all of them: 0% remote when the two nodes are the
// same, 100% when they differ.
//   bound_access CPU_NODE MEM_NODE [MIB [PASSES]]   (default 8 MiB, 2 passes)
#define _GNU_SOURCE
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "window.h"

static void die(const char* what) {
  perror(what);
  exit(1);
}

// Pins to the CPUs listed in /sys for `node` ("0-1,4" form).
static void pin_to_node(int node) {
  char path[96], list[256];
  snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
  FILE* f = fopen(path, "r");
  if (!f || !fgets(list, sizeof(list), f) || list[0] == '\n') {
    fprintf(stderr, "bound_access: node %d has no CPUs\n", node);
    exit(1);
  }
  fclose(f);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (char* item = strtok(list, ",\n"); item; item = strtok(NULL, ",\n")) {
    int lo = 0, hi = 0;
    if (sscanf(item, "%d-%d", &lo, &hi) < 2) hi = lo;
    for (int cpu = lo; cpu <= hi; ++cpu) CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) die("sched_setaffinity");
  sched_yield();
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: bound_access CPU_NODE MEM_NODE [MIB [PASSES]]\n");
    return 2;
  }
  const int cpu_node = atoi(argv[1]), mem_node = atoi(argv[2]);
  const size_t bytes = (size_t)(argc > 3 ? atoi(argv[3]) : 8) << 20;
  const int passes = argc > 4 ? atoi(argv[4]) : 2;
  pin_to_node(cpu_node);
  uint64_t* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  unsigned long mask[16] = {0};
  mask[mem_node / 64] = 1ul << (mem_node % 64);
  if (syscall(SYS_mbind, p, bytes, MPOL_BIND, mask, 1024, 0) != 0) {
    die("mbind");
  }
  const size_t n = bytes / sizeof(uint64_t);
  memset(p, 1, bytes);  // fault every page in before the window
  uint64_t sum = 0;
  LAB_WINDOW_OPEN();
  for (size_t i = 0; i < n; ++i) ((volatile uint64_t*)p)[i] = i;
  for (int r = 0; r < passes; ++r) {
    for (size_t i = 0; i < n; ++i) sum += ((volatile uint64_t*)p)[i];
  }
  LAB_WINDOW_CLOSE();
  printf("cpu_node=%d mem_node=%d bytes=%zu sum=%llu\n", cpu_node, mem_node,
         bytes, (unsigned long long)sum);
  return 0;
}
