// A QEMU TCG plugin for the NUMA lab (tools/numa-vm --accesses, docs/lab.md):
// counts the user-space data accesses (loads and stores, not instruction
// fetches, not the kernel's) made between the window markers of window.h, and
// attributes each to (node of the vCPU that made it, node of the guest page it
// touched). It also runs every access through a model of a last-level cache
// per CPU node (llc.c) and attributes the misses the same way: that share is
// what crosses the interconnect on a real machine.
// Per vCPU it also counts, for the time model of tools/compare (--model), the
// instructions executed in user space and in the kernel, the kernel's data
// accesses and LLC misses by page node (page zeroing, copy-on-write, page
// tables, copies to and from user space, through a cache model of the same
// shape of their own: see g.kllc),
// and the page faults (entries into the kernel's fault handler, whose address
// lab-window sends; see window.h): "vcpu" lines after each window line.
//
// Arguments (QEMU's -plugin FILE,key=value,...; lists use ':'):
//   out=PATH           where the window lines go (required)
//   vcpu_nodes=0:0:1   the node of each vCPU, by QEMU's vCPU index (required)
//   node_mib=512:512   each node's RAM in MiB, in node order (required)
//   layout=ramblock    how a physical address from the API maps to a node:
//                      ramblock (QEMU < 8.2) or guest (guest-physical)
//   llc_size=2M llc_ways=16 llc_line=64 llc_repl=lru|plru   the cache model
//   dump=on            per window, also accesses per 16 MiB of physical
//                      address (to find the layout of another QEMU)
//   hot=N              per window, the N user instructions (addresses) that
//                      made the most remote LLC misses ("hot" lines)
//   verify=on          also count each access the slow way (no cached
//                      translation, no shortcut in the cache model) and
//                      report the accesses where the two disagree
// Attribution: ranges the program reports from inside the window
// (lab_window_range() of window.h: the allocator's code, stacks, TLS, static
// data) split every window's counts by code (the allocator's instructions or
// the program's) and by memory (heap, stack, TLS, static, read-only): "split"
// lines (see print_split), printed when a window received any range.
// Output: one "window N ..." line per closed window (see print_window), then
// "end windows=N open=0|1" when QEMU exits. The vCPUs must run in one host
// thread (-accel tcg,thread=single): the counters are not atomic, and one
// thread gives the shared caches the same order of accesses on every run.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llc.h"
#include "qemu_plugin_api.h"
#include "window.h"

LAB_PLUGIN_EXPORT int qemu_plugin_version = LAB_PLUGIN_API_VERSION;

enum {
  kMaxNodes = 16,
  kMaxVcpus = 256,
  kDumpBuckets = 4096,
  kTlbEntries = 256,
  kHotSlots = 1 << 16,
  kMaxRanges = 1 << 14,
  kMessageLoads = 10
};
// The memory classes of the split, by the kind of range an address lies in
// (window.h's lab_range_kind); an address in no range is heap.
enum { kMemHeap, kMemStack, kMemTls, kMemStatic, kMemReadonly, kMemClasses };
static const char* const kMemNames[kMemClasses] = {"heap", "stack", "tls",
                                                   "static", "readonly"};
enum { kCodeProgram, kCodeAlloc, kCodeClasses };
static const char* const kCodeNames[kCodeClasses] = {"program", "alloc"};
// x86-64 user space lies below the canonical hole; the kernel above it.
static const uint64_t kUserTop = 0x0000800000000000ull;
static const uint64_t kDumpShift = 24;  // 16 MiB buckets

struct range {
  uint64_t begin, end;  // [begin, end) in the API's physical addresses
};

struct hot_slot {
  uint64_t pc, accesses, misses;
  int cpu_node, page_node;
};

struct tlb_entry {
  uint64_t page;       // virtual page number
  uint64_t epoch;      // g.kernel_epoch when it was looked up
  uint64_t phys_page;  // the API's physical address of the page
  uint64_t ranges;     // g.range_epoch when mem was found
  int mem;             // the page's memory class, or -1: it holds a boundary
};

struct addr_range {
  uint64_t begin, end;
  int kind;  // lab_range_kind
};

// A message of lab_window_range() being received on one vCPU.
struct message {
  bool active;
  int loads;
  uint64_t page;
  uint64_t chunk[kMessageLoads];
};

static struct {
  FILE* out;
  int nodes;
  int vcpus;
  int vcpu_node[kMaxVcpus];
  struct range node_range[kMaxNodes];
  struct llc llc[kMaxNodes];  // one per node; only CPU nodes' are used
  // The kernel's accesses go through caches of their own: interrupts and the
  // scheduler make them vary from run to run, and sharing the user caches
  // would carry that into the user-space counts, which repeat within 1%.
  struct llc kllc[kMaxNodes];
  bool has_cpus[kMaxNodes];
  bool dump;
  int hot;  // hot=N: the N instructions with most remote misses
  struct hot_slot hot_table[kHotSlots];
  uint64_t hot_dropped;
  bool verify;                   // check the shortcuts (verify=on)
  struct llc shadow[kMaxNodes];  // verify=on: caches without shortcuts
  uint64_t mismatches;           // verify=on: accesses the shortcuts got wrong
  uint64_t kernel_epoch;         // kernel blocks run so far (see translate())
  struct tlb_entry tlb[kMaxVcpus][kTlbEntries];
  // The last access (see count()): its node, line, and whether no other
  // node's cache can hold that line.
  int last_node;
  uint64_t last_line;
  bool last_clean;
  // The current window.
  bool open;
  uint64_t window;
  uint64_t accesses[kMaxNodes][kMaxNodes];  // [vCPU's node][page's node]
  uint64_t misses[kMaxNodes][kMaxNodes];
  uint64_t loads, stores;
  uint64_t kernel;   // kernel addresses (interrupt frames), not counted
  uint64_t io;       // device memory, not RAM
  uint64_t unknown;  // RAM outside every node's range (or no translation)
  uint64_t buckets[kDumpBuckets];
  // Attribution: the ranges reported in the open window, sorted by begin
  // (memory kinds) and the allocator's code ranges apart; the counts split
  // by [code class][memory class][vCPU's node][page's node].
  struct addr_range mem_ranges[kMaxRanges];
  int n_mem_ranges;
  struct addr_range code_ranges[64];
  int n_code_ranges;
  uint64_t range_epoch;
  uint64_t messages, bad_messages, dropped_ranges;
  struct message rx[kMaxVcpus];
  uint64_t split_accesses[kCodeClasses][kMemClasses][kMaxNodes][kMaxNodes];
  uint64_t split_misses[kCodeClasses][kMemClasses][kMaxNodes][kMaxNodes];
  // The time model's counts, per vCPU: [0] user space, [1] the kernel.
  struct {
    uint64_t insns[2];
    uint64_t faults;
    uint64_t accesses[2][kMaxNodes];  // by the page's node
    uint64_t misses[2][kMaxNodes];
    uint64_t store_misses[2][kMaxNodes];  // of misses, those of stores
  } vc[kMaxVcpus];
  // User instructions: counted inline into one counter (a call per block
  // would cost too much), settled on a vCPU whenever a callback shows
  // another vCPU running (settle()).
  uint64_t user_insns, user_mark;
  int cur_vcpu;
  // The kernel's last access (see on_kernel_access).
  struct {
    int vcpu, node;
    uint64_t vline;
    bool clean;
  } klast;
  uint64_t fault_entry;     // the kernel's page-fault entry, 0 until told
  uint64_t kernel_unknown;  // kernel accesses to no node's RAM (device memory)
} g;

// The index of the first memory range that begins after addr.
static int first_after(uint64_t addr) {
  int lo = 0, hi = g.n_mem_ranges;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (g.mem_ranges[mid].begin <= addr) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The memory class of an address: the kind of the range holding it. Memory
// ranges do not overlap but may nest (a thread's TLS lies inside its stack
// mapping): the innermost one, the last that starts at or before addr and
// contains it, wins.
static int mem_class(uint64_t addr) {
  const int lo = first_after(addr);
  for (int i = lo - 1; i >= 0 && lo - i <= 8; --i) {
    const struct addr_range* r = &g.mem_ranges[i];
    if (addr < r->end) {
      switch (r->kind) {
        case LAB_RANGE_STACK:
          return kMemStack;
        case LAB_RANGE_TLS:
          return kMemTls;
        case LAB_RANGE_STATIC:
          return kMemStatic;
        case LAB_RANGE_READONLY:
          return kMemReadonly;
      }
    }
  }
  return kMemHeap;
}

// The class of a whole page, or -1 when a range boundary cuts it.
static int page_class(uint64_t page) {
  const uint64_t begin = page << 12, end = begin + 4096;
  const int lo = first_after(begin);
  if (lo < g.n_mem_ranges && g.mem_ranges[lo].begin < end) return -1;
  for (int i = lo - 1; i >= 0 && lo - i <= 8; --i) {
    if (g.mem_ranges[i].end > begin && g.mem_ranges[i].end < end) return -1;
  }
  return mem_class(begin);
}

static int code_class(uint64_t pc) {
  for (int i = 0; i < g.n_code_ranges; ++i) {
    if (pc >= g.code_ranges[i].begin && pc < g.code_ranges[i].end) {
      return kCodeAlloc;
    }
  }
  return kCodeProgram;
}

// A received range: memory kinds go into the sorted table (the same range
// reported again, a reused thread stack, is kept once), code apart.
static void add_range(int kind, uint64_t begin, uint64_t end) {
  if (kind == LAB_RANGE_FAULT_ENTRY) {
    // Kernel addresses are sign-extended from bit 47.
    g.fault_entry = begin | ((begin >> 47) & 1 ? ~((1ull << 48) - 1) : 0);
    return;
  }
  if (end <= begin || kind < LAB_RANGE_ALLOC_CODE ||
      kind > LAB_RANGE_READONLY) {
    ++g.bad_messages;
    return;
  }
  if (kind == LAB_RANGE_ALLOC_CODE) {
    if (g.n_code_ranges ==
        (int)(sizeof(g.code_ranges) / sizeof(g.code_ranges[0]))) {
      ++g.dropped_ranges;
      return;
    }
    g.code_ranges[g.n_code_ranges++] = (struct addr_range){begin, end, kind};
    return;
  }
  int i = g.n_mem_ranges;
  while (i > 0 && g.mem_ranges[i - 1].begin > begin) --i;
  for (int j = i - 1; j >= 0 && g.mem_ranges[j].begin == begin; --j) {
    if (g.mem_ranges[j].end == end && g.mem_ranges[j].kind == kind) return;
  }
  if (g.n_mem_ranges == kMaxRanges) {
    ++g.dropped_ranges;
    return;
  }
  memmove(&g.mem_ranges[i + 1], &g.mem_ranges[i],
          (size_t)(g.n_mem_ranges - i) * sizeof(g.mem_ranges[0]));
  g.mem_ranges[i] = (struct addr_range){begin, end, kind};
  ++g.n_mem_ranges;
  ++g.range_epoch;
}

// One load of a message being received on vcpu; decodes the message after
// the last one.
static void receive(struct message* m, uint64_t vaddr) {
  if (m->loads == 0) {
    m->page = vaddr >> 12;
  } else if ((vaddr >> 12) != m->page) {
    m->active = false;  // something else ran between the marker and the loads
    ++g.bad_messages;
    return;
  }
  m->chunk[m->loads++] = vaddr & 0xfff;
  if (m->loads < kMessageLoads) return;
  m->active = false;
  uint64_t x = 0, begin = 0, end = 0;
  for (int i = 0; i < kMessageLoads - 1; ++i) x ^= m->chunk[i];
  if (x != m->chunk[kMessageLoads - 1]) {
    ++g.bad_messages;
    return;
  }
  for (int i = 0; i < 4; ++i) {
    begin |= m->chunk[1 + i] << (12 * i);
    end |= m->chunk[5 + i] << (12 * i);
  }
  // The fault entry is lab-window's, not a range of the program's: it
  // alone does not make a split.
  if (m->chunk[0] != LAB_RANGE_FAULT_ENTRY) ++g.messages;
  add_range((int)m->chunk[0], begin, end);
}

// hot=N: remote accesses and remote misses per (instruction address, vCPU
// node, page node), in an open-addressing table (what does not fit is counted
// in hot_dropped), so that a window can name the code that goes remote.
static void hot_count(uint64_t pc, int cpu_node, int page_node, bool miss) {
  for (uint64_t
           i = ((pc ^ (uint64_t)page_node << 56) * 0x9e3779b97f4a7c15ull) >> 48,
           n = 0;
       n < kHotSlots; i = (i + 1) % kHotSlots, ++n) {
    struct hot_slot* h = &g.hot_table[i];
    if (h->accesses == 0) {
      h->pc = pc;
      h->cpu_node = cpu_node;
      h->page_node = page_node;
    } else if (h->pc != pc || h->cpu_node != cpu_node ||
               h->page_node != page_node) {
      continue;
    }
    ++h->accesses;
    h->misses += miss;
    return;
  }
  ++g.hot_dropped;
}

static int by_misses(const void* a, const void* b) {
  const struct hot_slot *x = a, *y = b;
  if (x->misses != y->misses) return x->misses < y->misses ? 1 : -1;
  return x->accesses < y->accesses ? 1 : (x->accesses > y->accesses ? -1 : 0);
}

// "hot W pc=0x... cpu_node=C page_node=P remote_misses=M remote_accesses=A"
// for the top N.
static void print_hot(void) {
  qsort(g.hot_table, kHotSlots, sizeof(g.hot_table[0]), by_misses);
  for (int i = 0; i < g.hot && g.hot_table[i].accesses != 0; ++i) {
    const struct hot_slot* h = &g.hot_table[i];
    fprintf(g.out,
            "hot %" PRIu64 " pc=0x%" PRIx64
            " cpu_node=%d page_node=%d"
            " remote_misses=%" PRIu64 " remote_accesses=%" PRIu64 "\n",
            g.window, h->pc, h->cpu_node, h->page_node, h->misses, h->accesses);
  }
  if (g.hot_dropped) {
    fprintf(g.out, "hot %" PRIu64 " dropped=%" PRIu64 "\n", g.window,
            g.hot_dropped);
  }
}

static int node_of(uint64_t phys) {
  for (int n = 0; n < g.nodes; ++n) {
    if (phys >= g.node_range[n].begin && phys < g.node_range[n].end) return n;
  }
  return -1;
}

static void reset_window(void) {
  memset(g.accesses, 0, sizeof(g.accesses));
  memset(g.misses, 0, sizeof(g.misses));
  memset(g.buckets, 0, sizeof(g.buckets));
  if (g.hot) memset(g.hot_table, 0, sizeof(g.hot_table));
  g.hot_dropped = 0;
  g.loads = g.stores = g.kernel = g.io = g.unknown = g.mismatches = 0;
  // Ranges describe the process the window runs.
  g.n_mem_ranges = g.n_code_ranges = 0;
  ++g.range_epoch;
  g.messages = g.bad_messages = g.dropped_ranges = 0;
  memset(g.rx, 0, sizeof(g.rx));
  memset(g.split_accesses, 0, sizeof(g.split_accesses));
  memset(g.split_misses, 0, sizeof(g.split_misses));
  memset(g.vc, 0, sizeof(g.vc));
  g.klast.vcpu = -1;
  g.fault_entry = 0;
  g.kernel_unknown = 0;
  // Every window starts cold, so that runs do not depend on earlier ones.
  for (int n = 0; n < g.nodes; ++n) {
    if (g.has_cpus[n]) llc_clear(&g.llc[n]);
    if (g.has_cpus[n]) llc_clear(&g.kllc[n]);
    if (g.has_cpus[n] && g.verify) llc_clear(&g.shadow[n]);
  }
  g.last_node = -1;
}

static void print_row(const char* name, const uint64_t* row) {
  fprintf(g.out, " %s=", name);
  for (int j = 0; j < g.nodes; ++j) {
    fprintf(g.out, "%s%" PRIu64, j ? ":" : "", row[j]);
  }
}

// "vcpu N V node=C insns=U:K faults=F accesses=... misses=... kaccesses=...
// kmisses=... smisses=... ksmisses=..." per vCPU V of node C, rows by the
// page's node (user space, then the kernel's k-rows; s: the misses of
// stores, included in the misses), then "faults N entry=known|unknown
// kernel_unknown=X".
static void print_vcpus(void) {
  for (int v = 0; v < g.vcpus; ++v) {
    fprintf(g.out,
            "vcpu %" PRIu64 " %d node=%d insns=%" PRIu64 ":%" PRIu64
            " faults=%" PRIu64,
            g.window, v, g.vcpu_node[v], g.vc[v].insns[0], g.vc[v].insns[1],
            g.vc[v].faults);
    print_row("accesses", g.vc[v].accesses[0]);
    print_row("misses", g.vc[v].misses[0]);
    print_row("kaccesses", g.vc[v].accesses[1]);
    print_row("kmisses", g.vc[v].misses[1]);
    print_row("smisses", g.vc[v].store_misses[0]);
    print_row("ksmisses", g.vc[v].store_misses[1]);
    fprintf(g.out, "\n");
  }
  fprintf(g.out, "faults %" PRIu64 " entry=%s kernel_unknown=%" PRIu64 "\n",
          g.window, g.fault_entry ? "known" : "unknown", g.kernel_unknown);
}

static void print_matrix(const char* name, uint64_t m[kMaxNodes][kMaxNodes]) {
  fprintf(g.out, " %s=", name);
  for (int i = 0; i < g.nodes; ++i) {
    for (int j = 0; j < g.nodes; ++j) {
      fprintf(g.out, "%s%" PRIu64, (i || j) ? ":" : "", m[i][j]);
    }
  }
}

// "split N code=C mem=M accesses=... misses=..." (matrices as in the window
// line) for every code class C (program, alloc) and memory class M (heap,
// stack, tls, static, readonly) with an access, after "ranges N messages=R
// bad=B dropped=D alloc_code=A stack=S ..." (how many ranges of each kind).
static void print_split(void) {
  int count[LAB_RANGE_READONLY + 1] = {0};
  for (int i = 0; i < g.n_mem_ranges; ++i) ++count[g.mem_ranges[i].kind];
  fprintf(g.out,
          "ranges %" PRIu64 " messages=%" PRIu64 " bad=%" PRIu64
          " dropped=%" PRIu64
          " alloc_code=%d stack=%d tls=%d static=%d"
          " readonly=%d\n",
          g.window, g.messages, g.bad_messages, g.dropped_ranges,
          g.n_code_ranges, count[LAB_RANGE_STACK], count[LAB_RANGE_TLS],
          count[LAB_RANGE_STATIC], count[LAB_RANGE_READONLY]);
  for (int c = 0; c < kCodeClasses; ++c) {
    for (int m = 0; m < kMemClasses; ++m) {
      uint64_t any = 0;
      for (int i = 0; i < g.nodes; ++i) {
        for (int j = 0; j < g.nodes; ++j) any |= g.split_accesses[c][m][i][j];
      }
      if (!any) continue;
      fprintf(g.out, "split %" PRIu64 " code=%s mem=%s", g.window,
              kCodeNames[c], kMemNames[m]);
      print_matrix("accesses", g.split_accesses[c][m]);
      print_matrix("misses", g.split_misses[c][m]);
      fprintf(g.out, "\n");
    }
  }
}

// "window N accesses=A00:A01:... misses=... loads=L stores=S kernel=K io=I
// unknown=U", matrices row-major: row = the vCPU's node, column = the page's
// node. loads and stores count the user-space accesses (RAM, device memory
// and unknown alike); kernel, io and unknown are not in the matrices.
static void print_window(void) {
  fprintf(g.out, "window %" PRIu64, g.window);
  print_matrix("accesses", g.accesses);
  print_matrix("misses", g.misses);
  fprintf(g.out,
          " loads=%" PRIu64 " stores=%" PRIu64 " kernel=%" PRIu64 " io=%" PRIu64
          " unknown=%" PRIu64 "\n",
          g.loads, g.stores, g.kernel, g.io, g.unknown);
  if (g.verify) {
    fprintf(g.out, "verify %" PRIu64 " mismatches=%" PRIu64 "\n", g.window,
            g.mismatches);
  }
  print_vcpus();
  if (g.hot) print_hot();
  if (g.messages || g.bad_messages) print_split();
  if (g.dump) {
    for (int b = 0; b < kDumpBuckets; ++b) {
      if (g.buckets[b] == 0) continue;
      fprintf(g.out, "dump %" PRIu64 " 0x%" PRIx64 " %" PRIu64 "\n", g.window,
              (uint64_t)b << kDumpShift, g.buckets[b]);
    }
  }
  fflush(g.out);
}

// The user instructions counted since the last callback were run by the
// vCPU that ran then: the vCPUs take turns in one host thread, and a turn
// ends at a block boundary, so only the few instructions a new turn runs
// before its first callback can land on the vCPU before it.
static void end_turn(void) {
  if (g.open && g.cur_vcpu >= 0 && g.cur_vcpu < g.vcpus) {
    g.vc[g.cur_vcpu].insns[0] += g.user_insns - g.user_mark;
  }
  g.user_mark = g.user_insns;
}

static void settle(unsigned int vcpu) {
  if ((int)vcpu == g.cur_vcpu) return;
  end_turn();
  g.cur_vcpu = (int)vcpu;
}

static void on_marker(unsigned int vcpu, void* userdata) {
  if (userdata == (void*)3) {
    // A range follows, in the addresses of this vCPU's next loads.
    if (g.open && vcpu < (unsigned)g.vcpus) {
      g.rx[vcpu] = (struct message){.active = true};
    }
    return;
  }
  settle(vcpu);
  if (userdata == (void*)1) {
    // An open inside an open window restarts it: the last one counts.
    g.open = true;
    ++g.window;
    reset_window();
    g.user_mark = g.user_insns;
  } else if (g.open) {
    end_turn();  // the last turn's: in a one-vCPU guest, all of them
    g.cur_vcpu = -1;
    g.open = false;
    print_window();
  }
}

// One access through the caches of every node, without shortcuts: true when
// it misses the cache of `cpu_node`.
static bool model(struct llc* caches, int cpu_node, uint64_t phys,
                  unsigned size, bool straddles, bool store) {
  // An access that straddles two lines misses if either line does.
  bool miss = llc_access(&caches[cpu_node], phys);
  if (straddles) miss = llc_access(&caches[cpu_node], phys + size - 1) || miss;
  if (store) {
    // Write-invalidate: a store drops the line from the other nodes' caches,
    // so their next read of it misses, as on a coherent machine.
    for (int n = 0; n < g.nodes; ++n) {
      if (n != cpu_node && g.has_cpus[n]) {
        llc_invalidate(&caches[n], phys);
        if (straddles) llc_invalidate(&caches[n], phys + size - 1);
      }
    }
  }
  return miss;
}

// Whether an access misses its node's cache, with a shortcut: most accesses
// touch the line the last access touched (the next word of an array, another
// field of the same object). When the same node touched it last, it is a hit
// that changes no replacement state (the line is already its set's most
// recent), and once it has been stored to, no other cache holds it. The
// answer is the model's (verify=on checks that on every access) at about a
// third of the cost.
static bool llc_miss(int cpu_node, uint64_t phys, unsigned size, bool store) {
  const unsigned shift = g.llc[cpu_node].line_shift;
  const uint64_t line = phys >> shift;
  const bool straddles = ((phys + size - 1) >> shift) != line;
  if (!straddles && cpu_node == g.last_node && line == g.last_line) {
    if (store && !g.last_clean) {
      for (int n = 0; n < g.nodes; ++n) {
        if (n != cpu_node && g.has_cpus[n]) llc_invalidate(&g.llc[n], phys);
      }
      g.last_clean = true;
    }
    return false;
  }
  const bool miss = model(g.llc, cpu_node, phys, size, straddles, store);
  g.last_node = straddles ? -1 : cpu_node;
  g.last_line = line;
  g.last_clean = store;
  return miss;
}

// The guest-physical page behind a virtual page, remembered per vCPU until
// the kernel next runs: a mapping changes only through kernel code (a fault,
// munmap, a TLB-shootdown interrupt), and every kernel block adds 1 to
// g.kernel_epoch as it starts. With all vCPUs in one host thread no user
// access can fall between a kernel block and the change it makes.
static bool translate(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                      uint64_t* phys, int* mem) {
  const uint64_t page = vaddr >> 12;
  struct tlb_entry* e = &g.tlb[vcpu][page & (kTlbEntries - 1)];
  if (e->page == page && e->epoch == g.kernel_epoch) {
    *phys = e->phys_page | (vaddr & 0xfff);
    if (e->ranges != g.range_epoch) {
      e->ranges = g.range_epoch;
      e->mem = page_class(page);
    }
    *mem = e->mem >= 0 ? e->mem : mem_class(vaddr);
    return true;
  }
  struct qemu_plugin_hwaddr* hw = qemu_plugin_get_hwaddr(info, vaddr);
  if (hw == NULL) {
    ++g.unknown;
    return false;
  }
  if (qemu_plugin_hwaddr_is_io(hw)) {
    ++g.io;
    return false;
  }
  *phys = qemu_plugin_hwaddr_phys_addr(hw);
  e->page = page;
  e->epoch = g.kernel_epoch;
  e->phys_page = *phys & ~(uint64_t)0xfff;
  e->ranges = g.range_epoch;
  e->mem = page_class(page);
  *mem = e->mem >= 0 ? e->mem : mem_class(vaddr);
  return true;
}

static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
                      uint64_t vaddr, void* userdata) {
  if (!g.open) return;
  if (vaddr >= kUserTop) {
    // Kernel data touched while a user instruction was current: the frame an
    // interrupt or exception pushes on the kernel's stack. Not the program's.
    ++g.kernel;
    return;
  }
  if (vcpu >= (unsigned)g.vcpus) {
    ++g.unknown;
    return;
  }
  settle(vcpu);
  if (g.rx[vcpu].active) {
    // A range message's loads are the harness talking, not the program.
    receive(&g.rx[vcpu], vaddr);
    return;
  }
  const bool store = qemu_plugin_mem_is_store(info);
  if (store) {
    ++g.stores;
  } else {
    ++g.loads;
  }
  uint64_t phys;
  int mem;
  if (!translate(vcpu, info, vaddr, &phys, &mem)) return;
  if (g.dump && (phys >> kDumpShift) < kDumpBuckets) {
    ++g.buckets[phys >> kDumpShift];
  }
  const int page_node = node_of(phys);
  if (page_node < 0) {
    ++g.unknown;
    return;
  }
  const int cpu_node = g.vcpu_node[vcpu];
  const unsigned size = 1u << qemu_plugin_mem_size_shift(info);
  const bool miss = llc_miss(cpu_node, phys, size, store);
  ++g.accesses[cpu_node][page_node];
  if (miss) ++g.misses[cpu_node][page_node];
  ++g.vc[vcpu].accesses[0][page_node];
  if (miss) ++g.vc[vcpu].misses[0][page_node];
  if (miss && store) ++g.vc[vcpu].store_misses[0][page_node];
  const int code = code_class((uint64_t)(uintptr_t)userdata);
  ++g.split_accesses[code][mem][cpu_node][page_node];
  if (miss) ++g.split_misses[code][mem][cpu_node][page_node];
  if (g.hot && page_node != cpu_node) {
    hot_count((uint64_t)(uintptr_t)userdata, cpu_node, page_node, miss);
  }
  if (g.verify) {
    // The same access the slow way: the API's translation, and a second set
    // of caches that sees every access.
    struct qemu_plugin_hwaddr* hw = qemu_plugin_get_hwaddr(info, vaddr);
    const unsigned shift = g.llc[cpu_node].line_shift;
    const bool straddles = ((phys + size - 1) >> shift) != (phys >> shift);
    if (hw == NULL || qemu_plugin_hwaddr_phys_addr(hw) != phys ||
        model(g.shadow, cpu_node, phys, size, straddles, store) != miss) {
      ++g.mismatches;
    }
  }
}

// A data access of kernel code (any address: its own data, page tables, the
// user memory it zeroes or copies): through the kernel's caches (g.kllc),
// counted per vCPU apart from the user's. No cached translation: every
// kernel block changes the epoch that would validate it.
static void on_kernel_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
                             uint64_t vaddr, void* userdata) {
  (void)userdata;
  if (!g.open || vcpu >= (unsigned)g.vcpus) return;
  settle(vcpu);
  const int cpu_node = g.vcpu_node[vcpu];
  const bool store = qemu_plugin_mem_is_store(info);
  const unsigned size = 1u << qemu_plugin_mem_size_shift(info);
  const unsigned shift = g.kllc[cpu_node].line_shift;
  const uint64_t vline = vaddr >> shift;
  const bool straddles = ((vaddr + size - 1) >> shift) != vline;
  // The line the kernel touched last, again (a `rep stosb` zeroing a page
  // touches each line 64 times): a hit that changes no replacement state, as
  // in llc_miss(); the same virtual line is taken to be the same physical one
  // (no mapping changes between two accesses of one copy or fill).
  if (!straddles && (int)vcpu == g.klast.vcpu && vline == g.klast.vline) {
    if (store && !g.klast.clean) {
      struct qemu_plugin_hwaddr* h = qemu_plugin_get_hwaddr(info, vaddr);
      for (int n = 0; h && n < g.nodes; ++n) {
        if (n != cpu_node && g.has_cpus[n]) {
          llc_invalidate(&g.kllc[n], qemu_plugin_hwaddr_phys_addr(h));
        }
      }
      g.klast.clean = true;
    }
    ++g.vc[vcpu].accesses[1][g.klast.node];
    return;
  }
  g.klast.vcpu = -1;
  struct qemu_plugin_hwaddr* hw = qemu_plugin_get_hwaddr(info, vaddr);
  const int page_node = (hw == NULL || qemu_plugin_hwaddr_is_io(hw))
                            ? -1
                            : node_of(qemu_plugin_hwaddr_phys_addr(hw));
  if (page_node < 0) {
    ++g.kernel_unknown;
    return;
  }
  const uint64_t phys = qemu_plugin_hwaddr_phys_addr(hw);
  const bool miss =
      model(g.kllc, cpu_node, phys, size,
            ((phys + size - 1) >> shift) != (phys >> shift), store);
  if (!straddles) {
    g.klast.vcpu = (int)vcpu;
    g.klast.node = page_node;
    g.klast.vline = vline;
    g.klast.clean = store;
  }
  ++g.vc[vcpu].accesses[1][page_node];
  if (miss) ++g.vc[vcpu].misses[1][page_node];
  if (miss && store) ++g.vc[vcpu].store_misses[1][page_node];
}

// Every kernel block as it starts: its instructions on its vCPU (userdata:
// the block's address shifted left by 10, or'ed with its count, at most
// 512), the epoch of translate(), and the fault handler's first block counts
// a page fault.
static void on_block(unsigned int vcpu, void* userdata) {
  const int64_t packed = (int64_t)(uintptr_t)userdata;
  const uint64_t vaddr = (uint64_t)(packed >> 10);
  ++g.kernel_epoch;
  if (!g.open || vcpu >= (unsigned)g.vcpus) return;
  settle(vcpu);
  g.vc[vcpu].insns[1] += (uint64_t)packed & 0x3ff;
  if (vaddr == g.fault_entry) ++g.vc[vcpu].faults;
}

// A REP-prefixed string instruction (movs, stos, lods, cmps, scas): TCG runs
// its block once per iteration, so it would count as many instructions as it
// moves elements (4096 for the kernel's `rep stosb` of a page); a core runs
// it as one instruction at the speed of its memory accesses, which the
// model charges. Its iterations are left out of the instruction counts.
static bool is_rep_string(const struct qemu_plugin_insn* insn) {
  const unsigned char* b = qemu_plugin_insn_data(insn);
  const size_t n = qemu_plugin_insn_size(insn);
  bool rep = false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = b[i];
    if (c == 0xf3 || c == 0xf2) {
      rep = true;
    } else if (c == 0x66 || c == 0x67 || c == 0x2e || c == 0x3e || c == 0x26 ||
               c == 0x64 || c == 0x65 || c == 0x36 || (c & 0xf0) == 0x40) {
      continue;  // operand/address size, segment, REX prefixes
    } else {
      return rep &&
             (c == 0xa4 || c == 0xa5 || c == 0xaa || c == 0xab || c == 0xac ||
              c == 0xad || c == 0xa6 || c == 0xa7 || c == 0xae || c == 0xaf);
    }
  }
  return false;
}

static bool is_marker(const struct qemu_plugin_insn* insn, uint32_t disp) {
  if (qemu_plugin_insn_size(insn) != 8) return false;
  const unsigned char* b = qemu_plugin_insn_data(insn);
  const uint32_t d = (uint32_t)b[4] | (uint32_t)b[5] << 8 |
                     (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
  return b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x84 && b[3] == 0x00 &&
         d == disp;
}

// At translation: every block counts its instructions (user blocks inline,
// kernel blocks with a callback); user-space instructions get one on each of
// their data accesses, and the markers one that opens or closes the window;
// kernel instructions one on each data access (on_kernel_access).
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
  size_t counted = 0;
  for (size_t i = 0; i < n; ++i) {
    counted += !is_rep_string(qemu_plugin_tb_get_insn(tb, i));
  }
  if (vaddr < kUserTop) {
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                             &g.user_insns, counted);
  } else {
    qemu_plugin_register_vcpu_tb_exec_cb(
        tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
        (void*)(uintptr_t)((vaddr << 10) | (counted & 0x3ff)));
  }
  if (vaddr >= kUserTop) {
    for (size_t i = 0; i < n; ++i) {
      qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i),
                                       on_kernel_access, QEMU_PLUGIN_CB_NO_REGS,
                                       QEMU_PLUGIN_MEM_RW, NULL);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    if (is_marker(insn, LAB_WINDOW_OPEN_DISP)) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
                                             QEMU_PLUGIN_CB_NO_REGS, (void*)1);
    } else if (is_marker(insn, LAB_WINDOW_CLOSE_DISP)) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
                                             QEMU_PLUGIN_CB_NO_REGS, (void*)2);
    } else if (is_marker(insn, LAB_WINDOW_RANGE_DISP)) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
                                             QEMU_PLUGIN_CB_NO_REGS, (void*)3);
    }
    // The instruction's address travels with each access, for hot=N.
    qemu_plugin_register_vcpu_mem_cb(
        insn, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
        (void*)(uintptr_t)qemu_plugin_insn_vaddr(insn));
  }
}

static void on_exit_(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  fprintf(g.out, "end windows=%" PRIu64 " open=%d\n", g.window, g.open);
  fclose(g.out);
}

// --- Arguments. ---

static int fail(const char* what, const char* value) {
  fprintf(stderr, "numa_accesses: %s%s%s\n", what, value ? ": " : "",
          value ? value : "");
  return 1;
}

// "512:512" -> values; returns the count, or -1 on a malformed list.
static int parse_list(const char* s, uint64_t* values, int max) {
  int n = 0;
  while (*s) {
    char* end;
    if (n == max || *s < '0' || *s > '9') return -1;
    values[n++] = strtoull(s, &end, 10);
    if (*end == ':') {
      ++end;
    } else if (*end != '\0') {
      return -1;
    }
    s = end;
  }
  return n;
}

// "2M", "2097152", "512K" -> bytes; false when malformed.
static bool parse_size(const char* s, uint64_t* bytes) {
  char* end;
  if (*s < '0' || *s > '9') return false;
  uint64_t v = strtoull(s, &end, 10);
  if (*end == 'K') {
    v <<= 10, ++end;
  } else if (*end == 'M') {
    v <<= 20, ++end;
  } else if (*end == 'G') {
    v <<= 30, ++end;
  }
  *bytes = v;
  return *end == '\0';
}

// QEMU before 8.2 reports, for RAM, the RAM block's offset in its own RAM
// address space plus the offset inside the block plus the base of the block's
// memory region in its container. With one memory-backend-ram per node,
// created in node order, block i starts at the sum of the earlier nodes'
// sizes and its region sits at the same offset inside the machine's RAM
// container, so node i's pages come back in [2 * before, 2 * before + size).
// "guest" is the guest-physical layout (QEMU 8.2 and later, below the PCI
// hole): node i at [before, before + size).
static bool set_layout(const char* layout, const uint64_t* mib, int n) {
  const bool ramblock = strcmp(layout, "ramblock") == 0;
  if (!ramblock && strcmp(layout, "guest") != 0) return false;
  uint64_t before = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t size = mib[i] << 20;
    g.node_range[i].begin = ramblock ? 2 * before : before;
    g.node_range[i].end = g.node_range[i].begin + size;
    before += size;
  }
  return true;
}

LAB_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                          const qemu_info_t* info, int argc,
                                          char** argv) {
  const char* out = NULL;
  const char* layout = "ramblock";
  uint64_t vcpu_nodes[kMaxVcpus], mib[kMaxNodes];
  int vcpus = -1;
  g.nodes = -1;
  struct llc_config llc = {2u << 20, 16, 64, LLC_LRU};
  uint64_t v;
  for (int i = 0; i < argc; ++i) {
    const char* eq = strchr(argv[i], '=');
    if (!eq) return fail("argument is not key=value", argv[i]);
    const size_t klen = (size_t)(eq - argv[i]);
    const char* val = eq + 1;
#define KEY(k) (klen == strlen(k) && strncmp(argv[i], k, klen) == 0)
    if (KEY("out")) {
      out = val;
    } else if (KEY("vcpu_nodes")) {
      vcpus = parse_list(val, vcpu_nodes, kMaxVcpus);
      if (vcpus <= 0) return fail("bad vcpu_nodes", val);
    } else if (KEY("node_mib")) {
      g.nodes = parse_list(val, mib, kMaxNodes);
      if (g.nodes <= 0) return fail("bad node_mib", val);
    } else if (KEY("layout")) {
      layout = val;
    } else if (KEY("llc_size")) {
      if (!parse_size(val, &llc.size)) return fail("bad llc_size", val);
    } else if (KEY("llc_ways")) {
      if (!parse_size(val, &v) || v > 1024) return fail("bad llc_ways", val);
      llc.ways = (unsigned)v;
    } else if (KEY("llc_line")) {
      if (!parse_size(val, &v) || v > 4096) return fail("bad llc_line", val);
      llc.line = (unsigned)v;
    } else if (KEY("llc_repl")) {
      if (strcmp(val, "lru") == 0) {
        llc.replacement = LLC_LRU;
      } else if (strcmp(val, "plru") == 0) {
        llc.replacement = LLC_PLRU;
      } else {
        return fail("llc_repl must be lru or plru", val);
      }
    } else if (KEY("dump")) {
      g.dump = strcmp(val, "on") == 0;
    } else if (KEY("hot")) {
      if (!parse_size(val, &v) || v > 1000)
        return fail("bad hot (0-1000)", val);
      g.hot = (int)v;
    } else if (KEY("verify")) {
      g.verify = strcmp(val, "on") == 0;
    } else {
      return fail("unknown argument", argv[i]);
    }
#undef KEY
  }
  if (!info->system_emulation) return fail("needs system emulation", NULL);
  if (!out) return fail("out=PATH is required", NULL);
  if (vcpus < 0 || g.nodes < 0) {
    return fail("vcpu_nodes= and node_mib= are required", NULL);
  }
  if (vcpus < info->system.smp_vcpus) {
    return fail("vcpu_nodes lists fewer vCPUs than the machine has", NULL);
  }
  if (!set_layout(layout, mib, g.nodes)) {
    return fail("layout must be ramblock or guest", layout);
  }
  const char* why = llc_check(&llc);
  if (why) return fail(why, NULL);
  g.vcpus = vcpus;
  for (int c = 0; c < vcpus; ++c) {
    if (vcpu_nodes[c] >= (uint64_t)g.nodes) {
      return fail("vcpu_nodes names a node beyond node_mib", NULL);
    }
    g.vcpu_node[c] = (int)vcpu_nodes[c];
    g.has_cpus[vcpu_nodes[c]] = true;
  }
  for (int n = 0; n < g.nodes; ++n) {
    if (g.has_cpus[n] &&
        (!llc_init(&g.llc[n], &llc) || !llc_init(&g.kllc[n], &llc) ||
         (g.verify && !llc_init(&g.shadow[n], &llc)))) {
      return fail("out of memory for the cache model", NULL);
    }
  }
  // No cached translation is valid before its first lookup.
  memset(g.tlb, 0xff, sizeof(g.tlb));
  g.cur_vcpu = -1;
  g.out = fopen(out, "w");
  if (!g.out) return fail("cannot write", out);
  fprintf(g.out,
          "config nodes=%d vcpus=%d layout=%s llc=%" PRIu64 "/%u/%u/%s\n",
          g.nodes, vcpus, layout, llc.size, llc.ways, llc.line,
          llc.replacement == LLC_PLRU ? "plru" : "lru");
  fflush(g.out);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
  return 0;
}
