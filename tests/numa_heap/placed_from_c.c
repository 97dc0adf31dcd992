/* gperftools/numa.h from a C program: the header compiles as C (C99), and
 * each call links and answers on this machine (the layer off: everything on
 * node 0's memory). Exits non-zero, saying what failed, on any failure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gperftools/numa.h"

static int failures;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "placed_from_c: FAILED: %s\n", what);
    ++failures;
  }
}

int main(void) {
  int ids[64];
  const int n = tc_numa_num_nodes();
  expect(n >= 1, "tc_numa_num_nodes() >= 1");
  expect(tc_numa_node_ids(ids, 64) == n, "tc_numa_node_ids() lists them all");

  char* p = tc_numa_malloc_onnode(64, ids[0]);
  expect(p != NULL, "tc_numa_malloc_onnode(64, first node)");
  if (p != NULL) {
    memset(p, 1, 64);
    expect(tc_numa_node_of(p) == ids[0], "tc_numa_node_of() is that node");
    p = realloc(p, 1 << 20);
    expect(p != NULL && tc_numa_node_of(p) == ids[0], "realloc keeps the node");
    free(p);
  }
  char* q = tc_numa_malloc_interleaved(1 << 20);
  expect(q != NULL, "tc_numa_malloc_interleaved(1 MiB)");
  expect(tc_numa_node_of(q) == -1, "interleaved memory has no one node");
  free(q);

  errno = 0;
  expect(tc_numa_malloc_onnode(64, -1) == NULL && errno == EINVAL,
         "node -1 gives NULL and EINVAL");
  if (failures == 0) printf("placed_from_c: OK (%d node(s))\n", n);
  return failures == 0 ? 0 : 1;
}
