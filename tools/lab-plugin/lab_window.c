// lab-window: runs one command inside a counting window of the lab's access
// plugin (tools/numa-vm --accesses): opens the window, forks and execs the
// command, waits for it, closes the window, and exits with its status (128+N
// when it was killed by signal N). Without a command it opens and closes an
// empty window, which shows what the rest of the guest adds to a count.
//   lab-window [CMD [ARG]...]
// Built static (tools/lab-plugin/build), so an LD_PRELOADed allocator is
// loaded into the command only, not into this wrapper, and the wrapper's own
// accesses inside the window are a few dozen: fork and waitpid.
// After opening the window it tells the plugin where the kernel's page-fault
// entry is (window.h, LAB_RANGE_FAULT_ENTRY), so that faults are counted.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "window.h"

// The message's loads read this page; touched first, so they do not fault.
static volatile unsigned char page[4096] __attribute__((aligned(4096)));

// The address of the kernel's page-fault entry from /proc/kallsyms (root
// reads real addresses), or 0.
static unsigned long fault_entry(void) {
  FILE* f = fopen("/proc/kallsyms", "r");
  if (!f) return 0;
  char line[256], name[200];
  unsigned long addr = 0, a;
  char type;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "%lx %c %199s", &a, &type, name) == 3 &&
        strcmp(name, "asm_exc_page_fault") == 0) {
      addr = a;
      break;
    }
  }
  fclose(f);
  return addr;
}

static void open_window(void) {
  const unsigned long entry = fault_entry();
  page[0] = page[0];
  LAB_WINDOW_OPEN();
  if (entry) {
    lab_window_range(page, LAB_RANGE_FAULT_ENTRY, entry & ((1ul << 48) - 1), 1);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    open_window();
    LAB_WINDOW_CLOSE();
    return 0;
  }
  open_window();
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
