// The placement shim's probe (tests/compare/place_threads_run): the main
// thread creates --threads T threads, one after another; each reports, once
// it runs, the node of its CPU (getcpu), and the nodes of the pages that hold
// its stack frame and its thread descriptor (move_pages(2), a query), and
// creates one thread of its own, which reports the same. Lines on stdout:
// "thread K cpu_node=N stack_node=S tls_node=D" (K: creation order by the
// main thread, from 1), "child K cpu_node=N stack_node=S tls_node=D" (the
// thread K's own), then "main cpu_node=N". Built by the test, run under
// place_threads.so in the lab.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int cpu_node(void) {
  unsigned cpu = 0, node = 0;
  return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int)node : -1;
}

static int page_node(const void* p) {
  void* page = (void*)((unsigned long)p & ~4095ul);
  int status = -1;
  if (syscall(SYS_move_pages, 0, 1ul, &page, NULL, &status, 0) != 0) return -1;
  return status;
}

struct report {
  int k, cpu, stack, tls;
  struct report* child;
};

static void* worker(void* arg) {
  struct report* r = arg;
  volatile char frame[64];
  frame[0] = 1;
  r->cpu = cpu_node();
  r->stack = page_node((const void*)frame);
  r->tls = page_node((const void*)pthread_self());
  if (r->child) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, r->child) != 0) exit(1);
    pthread_join(t, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int threads = 4;
  if (argc == 3 && strcmp(argv[1], "--threads") == 0) threads = atoi(argv[2]);
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "usage: placement_probe [--threads 1-64]\n");
    return 2;
  }
  struct report reports[64], children[64];
  for (int k = 0; k < threads; ++k) {
    pthread_t t;
    reports[k].k = children[k].k = k + 1;
    reports[k].child = &children[k];
    children[k].child = NULL;
    if (pthread_create(&t, NULL, worker, &reports[k]) != 0) return 1;
    pthread_join(t, NULL);
  }
  for (int k = 0; k < threads; ++k) {
    printf("thread %d cpu_node=%d stack_node=%d tls_node=%d\n", reports[k].k,
           reports[k].cpu, reports[k].stack, reports[k].tls);
    printf("child %d cpu_node=%d stack_node=%d tls_node=%d\n", children[k].k,
           children[k].cpu, children[k].stack, children[k].tls);
  }
  printf("main cpu_node=%d\n", cpu_node());
  return 0;
}
