/* refuse_numa_calls: runs a command under the seccomp filter of a default
 * Docker or Kubernetes (RuntimeDefault) container, as far as NUMA goes: the
 * memory-policy calls (get_mempolicy, mbind, set_mempolicy,
 * set_mempolicy_home_node), which those profiles allow only with
 * CAP_SYS_NICE, and the page-moving calls (move_pages, migrate_pages), which
 * they never allow, fail with EPERM. Every other call runs.
 *
 *   refuse_numa_calls [--errno ENOSYS] [--only NAME,...] -- CMD [ARG]...
 *
 * --errno: the refusal's errno, EPERM (default) or ENOSYS (some runtimes'
 * default action). --only: refuse these of the six alone (e.g. move_pages
 * for --cap-add SYS_NICE, which allows the first four). The filter is
 * inherited across exec and fork, as a container's is. Exit status: CMD's,
 * or 126 if the filter could not be installed, 127 if CMD could not run. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450 /* Linux 5.17, x86-64 and arm64 */
#endif

#if defined(__x86_64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_AARCH64
#else
#error "refuse_numa_calls knows x86-64 and arm64 only"
#endif

struct call {
  const char* name;
  long nr;
};
static const struct call kCalls[] = {
    {"get_mempolicy", SYS_get_mempolicy},
    {"mbind", SYS_mbind},
    {"set_mempolicy", SYS_set_mempolicy},
    {"set_mempolicy_home_node", SYS_set_mempolicy_home_node},
    {"move_pages", SYS_move_pages},
    {"migrate_pages", SYS_migrate_pages},
};
enum { kNumCalls = sizeof(kCalls) / sizeof(kCalls[0]) };

static void usage(void) {
  fprintf(stderr,
          "usage: refuse_numa_calls [--errno EPERM|ENOSYS] [--only NAME,...] "
          "-- CMD [ARG]...\n");
  exit(2);
}

/* Marks the calls named in the comma-separated `list` in `refuse`. */
static void parse_only(char* list, int refuse[kNumCalls]) {
  for (int i = 0; i < kNumCalls; ++i) refuse[i] = 0;
  for (char* name = strtok(list, ","); name != NULL; name = strtok(NULL, ",")) {
    int found = 0;
    for (int i = 0; i < kNumCalls; ++i) {
      if (strcmp(name, kCalls[i].name) == 0) refuse[i] = found = 1;
    }
    if (!found) {
      fprintf(stderr, "refuse_numa_calls: --only: unknown call '%s'\n", name);
      exit(2);
    }
  }
}

int main(int argc, char** argv) {
  int err = EPERM;
  int refuse[kNumCalls];
  for (int i = 0; i < kNumCalls; ++i) refuse[i] = 1;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "--errno") == 0 && i + 1 < argc) {
      ++i;
      if (strcmp(argv[i], "EPERM") == 0) {
        err = EPERM;
      } else if (strcmp(argv[i], "ENOSYS") == 0) {
        err = ENOSYS;
      } else {
        usage();
      }
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      parse_only(argv[++i], refuse);
    } else {
      usage();
    }
  }
  if (i + 1 >= argc) usage();
  char** cmd = argv + i + 1;

  /* Load the arch (a foreign-arch call is refused too), then the number. */
  struct sock_filter f[4 + 2 * kNumCalls + 1];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, arch));
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                        AUDIT_ARCH_SELF, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                        SECCOMP_RET_ERRNO | (err & 0xffff));
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, nr));
  for (int c = 0; c < kNumCalls; ++c) {
    if (!refuse[c]) continue;
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned)kCalls[c].nr, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                          SECCOMP_RET_ERRNO | (err & 0xffff));
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)n, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("refuse_numa_calls: seccomp");
    return 126;
  }
  execvp(cmd[0], cmd);
  fprintf(stderr, "refuse_numa_calls: %s: %s\n", cmd[0], strerror(errno));
  return 127;
}
