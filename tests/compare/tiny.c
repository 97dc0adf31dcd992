// A tiny allocating program for tests/compare/run.
//   tiny [ROUNDS]   ROUNDS x (1000 mallocs of 16..1015 bytes, then their frees)
// Prints "METRIC blocks N" and, when TINY_SCORE is set, "METRIC score
// $TINY_SCORE points higher". Exits with $TINY_EXIT, but only when a tcmalloc
// is loaded (tc_malloc is defined): a command that fails under the library.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  static void *blocks[1000];
  long n = 0;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < 1000; i++) {
      blocks[i] = malloc(16 + i);
      memset(blocks[i], r, 16);
    }
    for (int i = 0; i < 1000; i++) free(blocks[i]);
    n += 1000;
  }
  printf("METRIC blocks %ld\n", n);
  const char *score = getenv("TINY_SCORE");
  if (score) printf("METRIC score %s points higher\n", score);
  const char *code = getenv("TINY_EXIT");
  if (code && dlsym(RTLD_DEFAULT, "tc_malloc")) {
    fprintf(stderr, "tiny: exiting with %s under tcmalloc, as asked\n", code);
    return atoi(code);
  }
  return 0;
}
