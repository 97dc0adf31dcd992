// Preloaded by `tools/compare --cmd ... --lab N` next to the allocator under test:
// as the process exits, it sums /proc/self/numa_maps over the anonymous mappings
// (heap, stacks, anonymous mmap: where an allocator's memory lives; libraries
// and other files are left out) and appends one line to the file named by
// COMPARE_NUMA_MAPS:  pid=P N0=KiB N1=KiB ...
// It allocates nothing (static buffers, raw read/write), so it cannot disturb
// the allocator it reports on.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NODES 64

static unsigned long long node_kib[MAX_NODES];
static char buf[1 << 16];

// One numa_maps line: "ADDR POLICY [file=PATH | heap | stack | anon=..] ... N0=5 kernelpagesize_kB=4".
static void add_line(char *line) {
  unsigned long long pages[MAX_NODES] = {0};
  unsigned long long page_kib = 4;
  char *save = NULL;
  for (char *w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    if (strncmp(w, "file=", 5) == 0) return;
    if (strncmp(w, "kernelpagesize_kB=", 18) == 0) page_kib = strtoull(w + 18, NULL, 10);
    if (w[0] == 'N' && w[1] >= '0' && w[1] <= '9') {
      char *eq = NULL;
      unsigned long node = strtoul(w + 1, &eq, 10);
      if (eq && *eq == '=' && node < MAX_NODES) pages[node] += strtoull(eq + 1, NULL, 10);
    }
  }
  for (int n = 0; n < MAX_NODES; n++) node_kib[n] += pages[n] * page_kib;
}

__attribute__((destructor)) static void report(void) {
  const char *path = getenv("COMPARE_NUMA_MAPS");
  if (!path || !*path) return;
  int fd = open("/proc/self/numa_maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t used = 0;
  for (;;) {
    ssize_t got = read(fd, buf + used, sizeof(buf) - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
    buf[used] = 0;
    char *start = buf, *nl;
    while ((nl = strchr(start, '\n')) != NULL) {
      *nl = 0;
      add_line(start);
      start = nl + 1;
    }
    used = (size_t)(buf + used - start);
    memmove(buf, start, used);
    if (used == sizeof(buf) - 1) used = 0;  // a line longer than the buffer: drop it
  }
  close(fd);
  char line[64 + MAX_NODES * 32];
  int len = snprintf(line, sizeof(line), "pid=%d", (int)getpid());
  for (int n = 0; n < MAX_NODES; n++)
    if (node_kib[n]) len += snprintf(line + len, sizeof(line) - len, " N%d=%llu", n, node_kib[n]);
  line[len++] = '\n';
  int out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return;
  ssize_t ignored = write(out, line, (size_t)len);
  (void)ignored;
  close(out);
}
