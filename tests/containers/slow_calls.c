/* slow_calls: runs a command whose calls of the named system calls each take
 * at least --delay-us microseconds longer, then run as asked. The control of
 * the reuse witness's lab gate (tests/containers/witness_lab_run): the
 * witness makes its calls (mincore, getrusage) as raw system calls
 * (numa/syscall.h), which no LD_PRELOAD wrapper sees, so the delay is planted
 * in the kernel's path instead: a seccomp filter hands each such call to this
 * program (SECCOMP_RET_USER_NOTIF), whose handler threads sleep, then let the
 * call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5). Every other call
 * runs untouched. A test tool, not a sandbox: CONTINUE is unsafe against a
 * hostile program (seccomp_unotify(2)), harmless for a delay.
 *
 *   slow_calls --delay-us N [--calls NAME,...] [--handlers K] -- CMD [ARG]...
 *
 * --calls: of mincore and getrusage (default: mincore). --handlers: calls
 * delayed at once (default 8): more waiting calls wait their turn, as they
 * would for a CPU. The filter is inherited across exec and fork. Exit
 * status: CMD's (128 + signal if killed), 126 if the filter could not be
 * installed, 127 if CMD could not run. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_AARCH64
#else
#error "slow_calls knows x86-64 and arm64 only"
#endif

struct call {
  const char* name;
  long nr;
};
static const struct call kCalls[] = {
    {"mincore", SYS_mincore},
    {"getrusage", SYS_getrusage},
};
enum { kNumCalls = sizeof(kCalls) / sizeof(kCalls[0]) };

static int g_listener = -1;
static long g_delay_us;
static struct seccomp_notif_sizes g_sizes;

static void usage(void) {
  fprintf(stderr,
          "usage: slow_calls --delay-us N [--calls NAME,...] [--handlers K] "
          "-- CMD [ARG]...\n");
  exit(2);
}

/* Marks the calls named in the comma-separated `list` in `slow`. */
static void parse_calls(char* list, int slow[kNumCalls]) {
  for (int i = 0; i < kNumCalls; ++i) slow[i] = 0;
  for (char* name = strtok(list, ","); name != NULL; name = strtok(NULL, ",")) {
    int found = 0;
    for (int i = 0; i < kNumCalls; ++i) {
      if (strcmp(name, kCalls[i].name) == 0) slow[i] = found = 1;
    }
    if (!found) {
      fprintf(stderr, "slow_calls: --calls: unknown call '%s'\n", name);
      exit(2);
    }
  }
}

static long parse_long(const char* s, long min, long max) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) usage();
  return v;
}

/* Takes a notified call, sleeps, lets it run; forever (the process ends
 * when CMD has). */
static void* handle(void* arg) {
  (void)arg;
  /* The kernel's structs may outgrow these headers' (GET_NOTIF_SIZES). */
  struct seccomp_notif* req = calloc(1, g_sizes.seccomp_notif);
  struct seccomp_notif_resp* resp = calloc(1, g_sizes.seccomp_notif_resp);
  if (req == NULL || resp == NULL) abort();
  const struct timespec delay = {g_delay_us / 1000000,
                                 (g_delay_us % 1000000) * 1000};
  for (;;) {
    memset(req, 0, g_sizes.seccomp_notif);
    if (ioctl(g_listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;
      perror("slow_calls: SECCOMP_IOCTL_NOTIF_RECV");
      return NULL;
    }
    struct timespec left = delay;
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    memset(resp, 0, g_sizes.seccomp_notif_resp);
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    /* ENOENT: the caller died or was interrupted meanwhile. */
    ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  }
}

int main(int argc, char** argv) {
  int slow[kNumCalls] = {1, 0};
  long handlers = 8;
  g_delay_us = -1;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "--delay-us") == 0 && i + 1 < argc) {
      g_delay_us = parse_long(argv[++i], 0, 10000000);
    } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      parse_calls(argv[++i], slow);
    } else if (strcmp(argv[i], "--handlers") == 0 && i + 1 < argc) {
      handlers = parse_long(argv[++i], 1, 256);
    } else {
      usage();
    }
  }
  if (g_delay_us < 0 || i + 1 >= argc) usage();
  char** cmd = argv + i + 1;

  struct sock_filter f[3 + 2 * kNumCalls + 1];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, arch));
  /* A foreign-arch call has other numbers: let it run. */
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                        AUDIT_ARCH_SELF, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, nr));
  for (int c = 0; c < kNumCalls; ++c) {
    if (!slow[c]) continue;
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned)kCalls[c].nr, 0, 1);
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)n, f};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &g_sizes) != 0) {
    perror("slow_calls: SECCOMP_GET_NOTIF_SIZES");
    return 126;
  }
  /* This process is filtered too: its handlers make none of these calls. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("slow_calls: PR_SET_NO_NEW_PRIVS");
    return 126;
  }
  g_listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (g_listener < 0) {
    perror("slow_calls: seccomp");
    return 126;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("slow_calls: fork");
    return 126;
  }
  if (child == 0) {
    close(g_listener);
    execvp(cmd[0], cmd);
    fprintf(stderr, "slow_calls: %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  for (long h = 0; h < handlers; ++h) {
    pthread_t t;
    if (pthread_create(&t, NULL, handle, NULL) != 0) {
      fprintf(stderr, "slow_calls: pthread_create failed\n");
      kill(child, SIGKILL);
      return 126;
    }
  }
  int status;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("slow_calls: waitpid");
      return 126;
    }
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
