// lab-window: runs one command inside a counting window of the lab's access
// plugin (tools/numa-vm --accesses): opens the window, forks and execs the
// command, waits for it, closes the window, and exits with its status (128+N
// when it was killed by signal N). Without a command it opens and closes an
// empty window, which shows what the rest of the guest adds to a count.
//   lab-window [CMD [ARG]...]
// Built static (tools/lab-plugin/build), so an LD_PRELOADed allocator is
// loaded into the command only, not into this wrapper, and the wrapper's own
// accesses inside the window are a few dozen: fork and waitpid.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "window.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    LAB_WINDOW_OPEN();
    LAB_WINDOW_CLOSE();
    return 0;
  }
  LAB_WINDOW_OPEN();
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    fprintf(stderr, "lab-window: cannot run %s: %s\n", argv[1],
            strerror(errno));
    _exit(127);
  }
  int status = 0;
  pid_t got = -1;
  if (pid > 0) {
    do {
      got = waitpid(pid, &status, 0);
    } while (got < 0 && errno == EINTR);
  }
  LAB_WINDOW_CLOSE();
  if (pid < 0 || got < 0) {
    fprintf(stderr, "lab-window: %s failed: %s\n", pid < 0 ? "fork" : "waitpid",
            strerror(errno));
    return 126;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
