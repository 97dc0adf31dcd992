// place_threads.so: preloaded by tools/compare in the NUMA lab (--pin,
// --attribute; docs/compare.md) beside the allocator under test. Two jobs:
//
// Placement (PLACE_THREADS=round-robin, the default; none leaves threads to
// the guest's scheduler): the main thread runs on node 0 and the k-th thread
// it creates (k = 1, 2, ...) on node k mod N, N the nodes with CPUs; a thread
// created by another thread runs on its creator's node (larson's threads
// each start their successor, which takes over their blocks: a successor on
// a random node would make every run a different benchmark). Each is pinned
// to all CPUs of its node (sysfs cpulist) by the new thread itself before
// its start routine runs. The pages the process touched before
// main (wherever it was exec'd) move to node 0 with migrate_pages(2), but the
// dynamic loader's accesses before this constructor count where they ran: the
// caller execs the program on node 0 (tools/compare: taskset -c 0). A new
// thread's stack mapping holds, at its top, the thread's descriptor and
// static TLS (where allocators keep their thread-cache pointers), written by
// the creating thread before the new one runs, so under first touch they lie
// on the creator's node, huge page and all: with PLACE_THREADS_STACKS=node
// (the default) the new thread moves that mapping to its own node and binds
// it there (mbind MPOL_PREFERRED, MPOL_MF_MOVE), as a thread started on its
// node by a NUMA-aware runtime would have it; PLACE_THREADS_STACKS=creator
// leaves it where glibc put it (the harness artefact of issue 32).
//
// Attribution: tells the lab's access plugin (window.h, lab_window_range)
// where the allocator's code is (PLACE_ALLOC_CODE=NAME: the executable
// segments of the loaded object whose file name is NAME; NAME@B-E: hex
// offsets B-E from its load address, for an allocator inside a bigger
// library, glibc's malloc.c in libc.so.6), every loaded object's writable
// (static) and read-only segments, the main stack, the vDSO, and each
// thread's stack and TLS (descriptor and static TLS block).
//
// PLACE_THREADS_LOG=FILE: at exit, one line per thread created, "thread K
// node=N cpu=C stack=B-E tls=B-E" (cpu: where it started its routine, -1
// unpinned), "main node=0 cpu=C" (tests/compare/place_threads_run), and
// "object PATH base=B" per loaded object, to symbolise the instruction
// addresses of the plugin's hot=N lines.
//
// No malloc: the allocator under test sees the program's calls only.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lab-plugin/window.h"

enum { kMaxNodes = 64, kSlots = 256, kMaxLog = 4096 };
enum { kMpolPreferred = 1, kMpolMfMove = 1 << 1 };

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*),
                         void*);

struct slot {
  atomic_int busy;
  void* (*start)(void*);
  void* arg;
  int k, node;
  size_t stack_size;
};

struct record {
  int k, node, cpu;
  uintptr_t stack_begin, tls_begin, top;
};

static create_fn real_create;
static int placing = 1, stacks_to_node = 1;
static int cpu_nodes[kMaxNodes], n_cpu_nodes;
static cpu_set_t node_cpus[kMaxNodes];
static size_t sizeof_pthread = 2304, static_tls_size = 4096;
static size_t default_stack_size = 8 << 20;
static atomic_int created, created_by_main;
static __thread int my_node = -1;  // this thread's node index, once placed
static struct slot slots[kSlots];
static struct record records[kMaxLog];
static atomic_int n_records;
static int main_cpu = -1;
static const char* alloc_name;
static uintptr_t alloc_begin, alloc_end;  // offsets, when NAME@B-E
static unsigned char range_page[4096] __attribute__((aligned(4096)));

static void report(int kind, uintptr_t begin, uintptr_t end) {
  if (end > begin) lab_window_range(range_page, kind, begin, end);
}

// "0-3,8" -> set; false when malformed or empty.
static int parse_cpulist(const char* s, cpu_set_t* set) {
  CPU_ZERO(set);
  int any = 0;
  while (*s && *s != '\n') {
    char* end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return 0;
    if (*end == '-') {
      s = end + 1;
      b = strtol(s, &end, 10);
      if (end == s) return 0;
    }
    for (long c = a; c <= b && c < CPU_SETSIZE; ++c) CPU_SET(c, set), any = 1;
    s = *end == ',' ? end + 1 : end;
  }
  return any;
}

static ssize_t read_file(const char* path, char* buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t got = 0;
  ssize_t n;
  while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0) {
    got += (size_t)n;
  }
  close(fd);
  buf[got] = '\0';
  return (ssize_t)got;
}

// The nodes with CPUs, in node order, and their CPUs.
static void read_topology(void) {
  char path[96], buf[1024];
  for (int n = 0; n < kMaxNodes && n_cpu_nodes < kMaxNodes; ++n) {
    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
    if (read_file(path, buf, sizeof(buf)) <= 0) continue;
    if (parse_cpulist(buf, &node_cpus[n_cpu_nodes])) {
      cpu_nodes[n_cpu_nodes++] = n;
    }
  }
}

static void pin(int index) {
  if (index < n_cpu_nodes) {
    sched_setaffinity(0, sizeof(cpu_set_t), &node_cpus[index]);
  }
}

static int this_cpu(void) {
  unsigned cpu = 0;
  return syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 ? (int)cpu : -1;
}

static int on_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = strrchr(name, '/');
  base = base ? base + 1 : name;
  const int is_alloc = alloc_name && *name && strcmp(base, alloc_name) == 0;
  if (is_alloc && alloc_end > alloc_begin) {
    report(LAB_RANGE_ALLOC_CODE, info->dlpi_addr + alloc_begin,
           info->dlpi_addr + alloc_end);
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD) continue;
    const uintptr_t begin = (info->dlpi_addr + p->p_vaddr) & ~(uintptr_t)4095;
    const uintptr_t end =
        (info->dlpi_addr + p->p_vaddr + p->p_memsz + 4095) & ~(uintptr_t)4095;
    report((p->p_flags & PF_W) ? LAB_RANGE_STATIC : LAB_RANGE_READONLY, begin,
           end);
    if (is_alloc && alloc_end <= alloc_begin && (p->p_flags & PF_X)) {
      report(LAB_RANGE_ALLOC_CODE, begin, end);
    }
  }
  return 0;
}

// The main stack and the vDSO, from /proc/self/maps (read once, at start).
static void report_special_mappings(void) {
  static char maps[1 << 16];
  if (read_file("/proc/self/maps", maps, sizeof(maps)) <= 0) return;
  for (char* line = maps; *line;) {
    char* nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    char* end;
    uintptr_t b = strtoul(line, &end, 16), e = strtoul(end + 1, NULL, 16);
    if (strstr(line, "[stack]")) report(LAB_RANGE_STACK, b, e);
    if (strstr(line, "[vdso]") || strstr(line, "[vvar]")) {
      report(LAB_RANGE_READONLY, b, e);
    }
    if (!nl) break;
    line = nl + 1;
  }
}

// A thread's descriptor and static TLS: glibc keeps both at the top of its
// stack mapping (x86-64: the descriptor at the thread pointer, the TLS block
// just below it).
static uintptr_t tls_begin_of(uintptr_t pd) {
  return (pd + sizeof_pthread - static_tls_size) & ~(uintptr_t)63;
}

static void* trampoline(void* p) {
  struct slot* s = p;
  void* (*start)(void*) = s->start;
  void* arg = s->arg;
  const int k = s->k, node = s->node;
  const size_t stack_size = s->stack_size;
  atomic_store(&s->busy, 0);
  my_node = node;
  if (placing) pin(node);
  const uintptr_t pd = (uintptr_t)pthread_self();
  const uintptr_t top = (pd + sizeof_pthread + 4095) & ~(uintptr_t)4095;
  const uintptr_t bottom = top > stack_size ? top - stack_size : 0;
  const uintptr_t tls = tls_begin_of(pd);
  if (placing && stacks_to_node) {
    unsigned long mask[kMaxNodes / 64 + 1] = {0};
    mask[cpu_nodes[node] / 64] = 1ul << (cpu_nodes[node] % 64);
    syscall(SYS_mbind, bottom, top - bottom, kMpolPreferred, mask,
            (unsigned long)kMaxNodes + 1, kMpolMfMove);
  }
  report(LAB_RANGE_STACK, bottom, top);
  report(LAB_RANGE_TLS, tls, top);
  const int r = atomic_fetch_add(&n_records, 1);
  if (r < kMaxLog) {
    records[r] = (struct record){k, placing ? cpu_nodes[node] : -1,
                                 this_cpu(), bottom, tls, top};
  }
  return start(arg);
}

// The counting window ends where the program does: at exit(), before the
// allocators' exit-time work (ELF destructors; numa-tcmalloc's
// TCMALLOC_NUMA_STATS printout, which visits every node's lists and would
// count against numa only). lab-window's own close after waitpid then finds
// the window closed, which the plugin ignores. Registered at the first
// pthread_create, when every library's constructors and static destructors
// are registered already, so that exit() runs it before them.
static void close_window_at_exit(void) { LAB_WINDOW_CLOSE(); }
static atomic_flag exit_close_registered = ATOMIC_FLAG_INIT;

int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                   void* (*start)(void*), void* arg) {
  if (!atomic_flag_test_and_set(&exit_close_registered)) {
    atexit(close_window_at_exit);
  }
  if (!real_create) {
    real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real_create) return 11;  // EAGAIN: no pthread_create to call
  }
  const int k = atomic_fetch_add(&created, 1) + 1;
  size_t stack_size = default_stack_size;
  if (attr) pthread_attr_getstacksize(attr, &stack_size);
  struct slot* s = NULL;
  for (int i = k;; ++i) {
    int idle = 0;
    if (atomic_compare_exchange_strong(&slots[i % kSlots].busy, &idle, 1)) {
      s = &slots[i % kSlots];
      break;
    }
    if (i - k >= kSlots) sched_yield();
  }
  s->start = start;
  s->arg = arg;
  s->k = k;
  if (my_node >= 0 && getpid() != (pid_t)syscall(SYS_gettid)) {
    s->node = my_node;  // a thread's own thread: on its node
  } else {
    const int m = atomic_fetch_add(&created_by_main, 1) + 1;
    s->node = n_cpu_nodes ? m % n_cpu_nodes : 0;
  }
  s->stack_size = stack_size;
  const int rc = real_create(thread, attr, trampoline, s);
  if (rc != 0) atomic_store(&s->busy, 0);
  return rc;
}

__attribute__((constructor)) static void place_threads_init(void) {
  real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  const char* v = getenv("PLACE_THREADS");
  placing = !(v && strcmp(v, "none") == 0);
  v = getenv("PLACE_THREADS_STACKS");
  stacks_to_node = !(v && strcmp(v, "creator") == 0);
  const uint32_t* sz = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
  if (sz) sizeof_pthread = *sz;
  void (*tls_info)(size_t*, size_t*) =
      (void (*)(size_t*, size_t*))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
  if (tls_info) {
    size_t align;
    tls_info(&static_tls_size, &align);
  }
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &default_stack_size);
    pthread_attr_destroy(&attr);
  }
  read_topology();
  if (placing && n_cpu_nodes > 0) {
    pin(0);
    my_node = 0;
    unsigned long from[kMaxNodes / 64 + 1] = {0}, to[kMaxNodes / 64 + 1] = {0};
    for (int i = 1; i < n_cpu_nodes; ++i) {
      from[cpu_nodes[i] / 64] |= 1ul << (cpu_nodes[i] % 64);
    }
    to[cpu_nodes[0] / 64] = 1ul << (cpu_nodes[0] % 64);
    syscall(SYS_migrate_pages, 0, (unsigned long)kMaxNodes + 1, from, to);
    main_cpu = this_cpu();
  }
  // The allocator: NAME or NAME@BEGIN-END (hex offsets).
  static char name[256];
  v = getenv("PLACE_ALLOC_CODE");
  if (v && *v) {
    snprintf(name, sizeof(name), "%s", v);
    char* at = strchr(name, '@');
    if (at) {
      *at = '\0';
      char* end;
      alloc_begin = strtoul(at + 1, &end, 16);
      alloc_end = *end == '-' ? strtoul(end + 1, NULL, 16) : 0;
    }
    alloc_name = name;
  }
  dl_iterate_phdr(on_object, NULL);
  report_special_mappings();
  const uintptr_t pd = (uintptr_t)pthread_self();
  report(LAB_RANGE_TLS, tls_begin_of(pd), pd + sizeof_pthread);
}

// "object PATH base=HEX" per loaded object, the program's own (which the
// loader lists without a name) by its /proc/self/exe path: what
// tools/compare --hot needs to name instruction addresses.
static int log_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  char line[512], exe[400];
  const char* name = info->dlpi_name;
  if (!name || !*name) {
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[len > 0 ? len : 0] = '\0';
    name = len > 0 ? exe : "-";
  }
  const int n = snprintf(line, sizeof(line), "object %s base=%lx\n", name,
                         (unsigned long)info->dlpi_addr);
  if (n > 0 && write(*(int*)data, line, (size_t)n) < 0) return 1;
  return 0;
}

__attribute__((destructor)) static void place_threads_log(void) {
  const char* path = getenv("PLACE_THREADS_LOG");
  if (!path || !*path) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[256];
  int n = snprintf(line, sizeof(line), "main node=%d cpu=%d\n",
                   placing && n_cpu_nodes ? cpu_nodes[0] : -1, main_cpu);
  if (write(fd, line, (size_t)n) < 0) n = 0;
  const int count = atomic_load(&n_records);
  for (int i = 0; i < count && i < kMaxLog; ++i) {
    const struct record* r = &records[i];
    n = snprintf(line, sizeof(line),
                 "thread %d node=%d cpu=%d stack=%lx-%lx tls=%lx-%lx\n", r->k,
                 r->node, r->cpu, (unsigned long)r->stack_begin,
                 (unsigned long)r->top, (unsigned long)r->tls_begin,
                 (unsigned long)r->top);
    if (write(fd, line, (size_t)n) < 0) break;
  }
  dl_iterate_phdr(log_object, &fd);
  close(fd);
}
