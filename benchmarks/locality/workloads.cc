#include "benchmarks/locality/workloads.h"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "benchmarks/locality/window_marks.h"
#include "benchmarks/locality/worker.h"

namespace locality {
namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

using Rng = std::mt19937_64;
using Workers = std::vector<std::unique_ptr<Worker>>;

// A seed per (workload, thread): runs are repeatable and threads differ.
Rng MakeRng(const Options& o, const char* workload, int thread) {
  uint64_t h = o.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(thread);
  for (const char* c = workload; *c; ++c) h = (h ^ *c) * 0x100000001b3ull;
  return Rng(h);
}

// One worker per CPU (per_cpu) or one per node with CPUs, each pinned to its
// node.
Workers MakeWorkers(const Topology& t, bool per_cpu) {
  Workers w;
  for (int node : t.cpu_nodes) {
    const size_t n = per_cpu ? t.cpus[node].size() : 1;
    for (size_t i = 0; i < n; ++i)
      w.push_back(std::make_unique<Worker>(t, node));
  }
  return w;
}

Summary Summarize(const Workers& workers) {
  std::vector<const PageLog*> logs;
  for (const auto& w : workers) logs.push_back(&w->log());
  return locality::Summarize(logs);
}

Result Done(const Workers& workers) {
  CloseWindow();  // the work is done; what follows is the probe's bookkeeping
  Result r;
  r.ran = true;
  r.summary = Summarize(workers);
  return r;
}

void* Allocate(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) {
    std::fprintf(stderr, "locality_probe: malloc(%zu) failed\n", bytes);
    std::exit(2);
  }
  return p;
}

// Writes every 64th byte and the last one, so every page of the block is
// written (move_pages reports unwritten pages as absent).
void Touch(void* block, size_t bytes, char value) {
  volatile char* p = static_cast<volatile char*>(block);
  for (size_t i = 0; i < bytes; i += 64) p[i] = value;
  p[bytes - 1] = value;
}

void TouchAndRecord(Worker& w, void* block, size_t bytes) {
  Touch(block, bytes, 1);
  w.log().Record(block, bytes, w.node());
}

// Sizes for the handoff family: uniform in [lo, hi] until `budget` bytes.
std::vector<size_t> SizeList(Rng& rng, size_t lo, size_t hi, size_t budget) {
  std::vector<size_t> sizes;
  for (size_t total = 0; total < budget;) {
    const size_t s = lo + rng() % (hi - lo + 1);
    sizes.push_back(s);
    total += s;
  }
  return sizes;
}

// Mixed sizes, 16 B - 64 MiB: mostly small objects, one in 16 a page-heap
// block.
size_t MixedSize(Rng& rng) {
  if (rng() % 16 != 0) {
    const size_t top = 16 << (rng() % 15);  // 16 B .. 256 KiB
    return 16 + rng() % (top - 15);
  }
  const size_t base = 256 * kKiB << (rng() % 8);  // 256 KiB .. 32 MiB
  return std::min<size_t>(base + rng() % base, 64 * kMiB);
}

// Per-node threads (one per CPU) churn a ring of 16 live blocks of mixed sizes.
Result RunMixed(const Topology& t, const Options& o) {
  Workers workers = MakeWorkers(t, true);
  for (size_t i = 0; i < workers.size(); ++i) {
    Worker& w = *workers[i];
    w.Start([&w, &o, i] {
      Rng rng = MakeRng(o, "mixed", static_cast<int>(i));
      void* ring[16] = {};
      const int iterations = 1200 * o.scale;
      for (int k = 0; k < iterations; ++k) {
        const int slot = k % 16;
        std::free(ring[slot]);
        const size_t bytes = MixedSize(rng);
        ring[slot] = Allocate(bytes);
        TouchAndRecord(w, ring[slot], bytes);
      }
      for (void* p : ring) std::free(p);
    });
  }
  for (auto& w : workers) w->Wait();
  return Done(workers);
}

// AMD's NUMA-aware TCMalloc study: threads pinned across nodes; each loop
// allocates 2^(6 + rand % 19) bytes, writes every 64th byte 10 times, and
// frees. Placement is read while the block is live.
Result RunAmd(const Topology& t, const Options& o) {
  Workers workers = MakeWorkers(t, true);
  for (size_t i = 0; i < workers.size(); ++i) {
    Worker& w = *workers[i];
    w.Start([&w, &o, i] {
      Rng rng = MakeRng(o, "amd", static_cast<int>(i));
      const int iterations = 240 * o.scale;
      for (int k = 0; k < iterations; ++k) {
        const size_t bytes = size_t{1} << (6 + rng() % 19);
        char* p = static_cast<char*>(Allocate(bytes));
        for (int rep = 0; rep < 10; ++rep)
          Touch(p, bytes, static_cast<char>(rep));
        w.log().Record(p, bytes, w.node());
        std::free(p);
      }
    });
  }
  for (auto& w : workers) w->Wait();
  return Done(workers);
}

// Node A allocates, writes and frees a batch; then node B allocates the same
// sizes. Only B's blocks are measured. Pairs go round the ring of nodes (A ->
// A+1).
Result RunHandoff(const Topology& t, const Options& o, const char* name,
                  size_t lo, size_t hi, size_t budget) {
  Workers workers = MakeWorkers(t, false);
  const size_t n = workers.size();
  for (int round = 0; round < o.scale; ++round) {
    for (size_t a = 0; a < n; ++a) {
      Worker& from = *workers[a];
      Worker& to = *workers[(a + 1) % n];
      Rng rng = MakeRng(o, name, static_cast<int>(round * n + a));
      const std::vector<size_t> sizes = SizeList(rng, lo, hi, budget);
      std::vector<void*> blocks(sizes.size());
      from.Run([&] {
        for (size_t i = 0; i < sizes.size(); ++i) {
          blocks[i] = Allocate(sizes[i]);
          Touch(blocks[i], sizes[i], 2);
        }
        for (void* p : blocks) std::free(p);
      });
      to.Run([&] {
        for (size_t i = 0; i < sizes.size(); ++i) {
          blocks[i] = Allocate(sizes[i]);
          TouchAndRecord(to, blocks[i], sizes[i]);
        }
        for (void* p : blocks) std::free(p);
      });
    }
  }
  return Done(workers);
}

// Together tiny, small, mid and medium cover every small-object size, 16 B -
// 256 KiB (tiny and mid were added for that; the others keep their ranges so
// earlier figures stay comparable).
Result RunHandoffTiny(const Topology& t, const Options& o) {
  return RunHandoff(t, o, "handoff-tiny", 16, 256, 8 * kMiB);
}
Result RunHandoffSmall(const Topology& t, const Options& o) {
  return RunHandoff(t, o, "handoff-small", 64, 4 * kKiB, 8 * kMiB);
}
Result RunHandoffMid(const Topology& t, const Options& o) {
  return RunHandoff(t, o, "handoff-mid", 4 * kKiB, 32 * kKiB, 16 * kMiB);
}
Result RunHandoffMedium(const Topology& t, const Options& o) {
  return RunHandoff(t, o, "handoff-medium", 32 * kKiB, 256 * kKiB, 16 * kMiB);
}
Result RunHandoffLarge(const Topology& t, const Options& o) {
  return RunHandoff(t, o, "handoff-large", 1 * kMiB, 8 * kMiB, 32 * kMiB);
}

// Node A allocates and writes; a thread on node B frees those blocks, then
// allocates the same sizes itself. B's new blocks are measured.
Result RunRemoteFree(const Topology& t, const Options& o) {
  Workers workers = MakeWorkers(t, false);
  const size_t n = workers.size();
  for (int round = 0; round < o.scale; ++round) {
    for (size_t a = 0; a < n; ++a) {
      Worker& from = *workers[a];
      Worker& to = *workers[(a + 1) % n];
      Rng rng = MakeRng(o, "remote-free", static_cast<int>(round * n + a));
      std::vector<size_t> sizes;
      for (size_t total = 0; total < 16 * kMiB;) {
        sizes.push_back(size_t{64} << (rng() % 17));  // 64 B .. 4 MiB
        total += sizes.back();
      }
      std::vector<void*> blocks(sizes.size());
      from.Run([&] {
        for (size_t i = 0; i < sizes.size(); ++i) {
          blocks[i] = Allocate(sizes[i]);
          Touch(blocks[i], sizes[i], 3);
        }
      });
      to.Run([&] {
        for (void* p : blocks) std::free(p);
        for (size_t i = 0; i < sizes.size(); ++i) {
          blocks[i] = Allocate(sizes[i]);
          TouchAndRecord(to, blocks[i], sizes[i]);
        }
        for (void* p : blocks) std::free(p);
      });
    }
  }
  return Done(workers);
}

// Each thread allocates, writes and frees a batch on its node, then moves to
// the next node and does it again; every batch is measured against the node it
// ran on.
Result RunMigration(const Topology& t, const Options& o) {
  Workers workers = MakeWorkers(t, false);
  const size_t n = t.cpu_nodes.size();
  for (size_t step = 0; step <= n * o.scale; ++step) {
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = *workers[i];
      if (step > 0) w.MoveTo(t.cpu_nodes[(i + step) % n]);
      // One thread at a time, so that the result does not depend on
      // interleaving.
      w.Run([&w, &o, i, step] {
        Rng rng = MakeRng(o, "migration", static_cast<int>(step * 64 + i));
        std::vector<void*> blocks;
        for (size_t total = 0; total < 8 * kMiB;) {
          const size_t bytes = size_t{16} << (rng() % 17);  // 16 B .. 1 MiB
          blocks.push_back(Allocate(bytes));
          TouchAndRecord(w, blocks.back(), bytes);
          total += bytes;
        }
        for (void* p : blocks) std::free(p);
      });
    }
  }
  return Done(workers);
}

// Large blocks of the same sizes are freed and reallocated by each node in
// turn, so an allocator that reuses them hands one node's pages to the next.
Result RunLargeReuse(const Topology& t, const Options& o) {
  Workers workers = MakeWorkers(t, false);
  const size_t n = workers.size();
  const size_t sizes[] = {1 * kMiB, 1536 * kKiB, 2 * kMiB,
                          3 * kMiB, 4 * kMiB,    8 * kMiB};
  // Round 0 only places the blocks (first touch); later rounds measure reuse.
  for (size_t round = 0; round <= 3 * n * o.scale; ++round) {
    Worker& w = *workers[round % n];
    w.Run([&w, &sizes, round] {
      void* blocks[sizeof(sizes) / sizeof(sizes[0])];
      for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        blocks[i] = Allocate(sizes[i]);
        if (round == 0) {
          Touch(blocks[i], sizes[i], 4);
        } else {
          TouchAndRecord(w, blocks[i], sizes[i]);
        }
      }
      for (void* p : blocks) std::free(p);
    });
  }
  return Done(workers);
}

// Calibration: pages placed with mbind on a chosen node, bypassing malloc.
// `far` picks a memory node other than the thread's, so the answer is known: 0%
// local; otherwise the thread's own node: 100% local.
Result RunCalibrate(const Topology& t, const Options&, bool far) {
  Result r;
  if (far && t.memory_nodes.size() < 2) {
    r.reason = "needs two nodes with memory";
    return r;
  }
  Workers workers = MakeWorkers(t, false);
  for (auto& wp : workers) {
    Worker& w = *wp;
    int target = w.node();
    if (far) {
      for (int m : t.memory_nodes) {
        if (m != w.node()) target = m;  // any node but the thread's
      }
    }
    w.Run([&w, target] {
      const size_t bytes = 64 * 4096;
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        std::perror("locality_probe: mmap");
        std::exit(2);
      }
      madvise(p, bytes, MADV_NOHUGEPAGE);
      unsigned long mask[16] = {};
      mask[target / 64] = 1ul << (target % 64);
      if (syscall(SYS_mbind, p, bytes, MPOL_BIND, mask, 1024, 0) != 0) {
        std::perror("locality_probe: mbind");
        std::exit(2);
      }
      TouchAndRecord(w, p, bytes);
      munmap(p, bytes);
    });
  }
  return Done(workers);
}

Result RunCalibrateLocal(const Topology& t, const Options& o) {
  return RunCalibrate(t, o, false);
}
Result RunCalibrateRemote(const Topology& t, const Options& o) {
  return RunCalibrate(t, o, true);
}

}  // namespace

const std::vector<Workload>& AllWorkloads() {
  static const std::vector<Workload> kAll = {
      {"mixed", "per-node threads churn mixed sizes 16 B - 64 MiB", RunMixed},
      {"amd", "AMD study: 2^(6+rand%19) B, every 64th byte written 10x",
       RunAmd},
      {"handoff-tiny", "node A frees 16 - 256 B, node B allocates",
       RunHandoffTiny},
      {"handoff-small", "node A frees 64 B - 4 KiB, node B allocates",
       RunHandoffSmall},
      {"handoff-mid", "node A frees 4 - 32 KiB, node B allocates",
       RunHandoffMid},
      {"handoff-medium", "node A frees 32 - 256 KiB, node B allocates",
       RunHandoffMedium},
      {"handoff-large", "node A frees 1 - 8 MiB, node B allocates",
       RunHandoffLarge},
      {"remote-free", "A allocates, B frees, B allocates (64 B - 4 MiB)",
       RunRemoteFree},
      {"migration", "a thread moves to the next node between batches",
       RunMigration},
      {"large-reuse", "1 - 8 MiB blocks freed and reallocated by each node",
       RunLargeReuse},
      {"calibrate-local", "mbind to the thread's node (known: 100% local)",
       RunCalibrateLocal},
      {"calibrate-remote", "mbind to another node (known: 0% local)",
       RunCalibrateRemote},
  };
  return kAll;
}

}  // namespace locality
