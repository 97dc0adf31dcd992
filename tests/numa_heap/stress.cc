// Stress test of the allocator: N threads each run --ops random operations
// (allocate with every entry point, free, realloc, or hand a block to another
// thread, which checks and frees it), and move between CPUs every
// --migrate-every operations, which moves them between (fake or real) nodes.
//
// Every byte of every live block holds a pattern derived from the block's id
// and the byte's offset. The whole block is checked before it is freed, so an
// allocator that hands out overlapping or recycled-while-live memory, or that
// corrupts a block's contents, is caught at the next check of either block.
// At the end the heap's allocated bytes must equal their value before the
// threads started, exactly.
//
// Each thread draws its operations from its own generator seeded by (--seed,
// thread index), so a thread's sequence of choices and sizes is reproducible.
// Which blocks arrive in a mailbox, and when, depends on scheduling.
//
// Works linked statically with the allocator (//:tcmalloc_minimal) or with it
// LD_PRELOADed (stress_dynamic): the property query is a weak symbol.
#include <getopt.h>
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "gperftools/malloc_extension_c.h"

// Weak, so that stress_dynamic links without the allocator and finds it at
// run time in the LD_PRELOADed library.
extern "C" int MallocExtension_GetNumericProperty(const char* property,
                                                  size_t* value)
    __attribute__((weak));

namespace {

constexpr size_t kSlotsPerThread = 2048;   // live blocks a thread may hold
constexpr size_t kMailboxCapacity = 1024;  // blocks waiting for a receiver

struct Options {
  int threads = 2;
  uint64_t ops = 10000000;
  uint64_t seed = 1;
  uint64_t migrate_every = 1000;  // 0: never
  int expect_nodes = 0;           // 0: do not check the NUMA layer
  bool corrupt_for_test = false;  // flip one byte to show that checks fail
};

// SplitMix64: small, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix(state_ += 0x9e3779b97f4a7c15ULL); }
  uint64_t Below(uint64_t n) { return Next() % n; }
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// How a block was allocated, which decides how it must be freed.
enum class Kind : uint8_t {
  kMalloc,         // malloc or realloc; free
  kCalloc,         // calloc; free (checked to be zero first)
  kMemalign,       // memalign; free
  kPosixMemalign,  // posix_memalign; free
  kAlignedAlloc,   // aligned_alloc; free
  kNewArray,       // new char[]; delete[]
  kNewSized,       // operator new; sized operator delete
  kNewAligned,     // aligned operator new; sized aligned operator delete
  kCount,
};

const char* KindName(Kind kind) {
  static const char* const kNames[] = {
      "malloc",        "calloc", "memalign",         "posix_memalign",
      "aligned_alloc", "new[]",  "new/sized delete", "aligned new",
  };
  return kNames[static_cast<int>(kind)];
}

struct Block {
  unsigned char* ptr = nullptr;
  size_t size = 0;
  uint64_t id = 0;  // pattern seed: unique per block
  size_t align = 0;
  Kind kind = Kind::kMalloc;
};

// The pattern: word w of a block is Mix(id) + w * step, little-endian, and a
// byte's value is that byte of its word. Consecutive words differ, and so do
// blocks, so a block shifted, swapped or overlapping with another is caught.
constexpr uint64_t kStep = 0x9e3779b97f4a7c15ULL;

// Writes the pattern of `id` to bytes [from, to) of p. It starts at the word
// holding `from`: bytes before `from` in that word get the values they
// already have.
void Fill(unsigned char* p, size_t from, size_t to, uint64_t id) {
  size_t w = from / 8;
  uint64_t word = Rng::Mix(id) + w * kStep;
  for (; (w + 1) * 8 <= to; ++w, word += kStep) {
    std::memcpy(p + w * 8, &word, 8);
  }
  if (w * 8 < to) std::memcpy(p + w * 8, &word, to - w * 8);
}

unsigned char Expected(uint64_t id, size_t offset) {
  const uint64_t word = Rng::Mix(id) + (offset / 8) * kStep;
  return static_cast<unsigned char>(word >> (offset % 8 * 8));
}

// First offset in [0, size) where p differs from the pattern of `id`, or
// `size`. Differences are OR-ed over chunks so the loop vectorizes; only a
// bad chunk is searched byte by byte.
size_t FindMismatch(const unsigned char* p, size_t size, uint64_t id) {
  const size_t words = size / 8;
  const uint64_t base = Rng::Mix(id);
  constexpr size_t kChunk = 64;
  size_t w = 0;
  for (; w < words; w += kChunk) {
    const size_t end = w + kChunk < words ? w + kChunk : words;
    uint64_t diff = 0;
    for (size_t i = w; i < end; ++i) {
      uint64_t got;
      std::memcpy(&got, p + i * 8, 8);
      diff |= got ^ (base + i * kStep);
    }
    if (diff != 0) break;
  }
  for (size_t offset = (w < words ? w : words) * 8; offset < size; ++offset) {
    if (p[offset] != Expected(id, offset)) return offset;
  }
  return size;
}

// Sizes: log-uniform within three bands, so every size class gets traffic
// but small blocks (cheap to fill and check) dominate. 90%: 1 B..1 KiB;
// 9.9%: 1 KiB..256 KiB (the largest size class, kMaxSize); 0.1%: page-level
// blocks above kMaxSize, up to 4 MiB.
size_t SampleSize(Rng& rng) {
  const uint64_t band = rng.Below(1000);
  if (band == 0) {
    const int e = 18 + static_cast<int>(rng.Below(4));
    return (size_t{1} << e) + 1 + rng.Below(size_t{1} << e);
  }
  const int e = band < 100 ? 10 + static_cast<int>(rng.Below(8))
                           : static_cast<int>(rng.Below(10));
  return (size_t{1} << e) + rng.Below((size_t{1} << e) + 1);
}

// 8 B..4 KiB, and now and then 8 KiB..64 KiB (above the 8 KiB page).
size_t SampleAlign(Rng& rng) {
  if (rng.Below(64) == 0) return size_t{8192} << rng.Below(4);
  return size_t{8} << rng.Below(10);
}

class Barrier {
 public:
  explicit Barrier(int parties) : parties_(parties) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int parties_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

struct Counters {
  uint64_t allocs = 0;
  uint64_t reallocs = 0;
  uint64_t frees = 0;
  uint64_t cross_thread_frees = 0;
  uint64_t migrations = 0;
  uint64_t bytes_checked = 0;
};

class Worker;

struct Shared {
  Options options;
  std::vector<int> cpus;  // the CPUs the process may run on
  std::vector<std::unique_ptr<Worker>> workers;
  Barrier barrier;
  explicit Shared(const Options& o) : options(o), barrier(o.threads + 1) {}
};

class Worker {
 public:
  Worker(Shared* shared, int index)
      : shared_(shared),
        opts_(shared->options),
        index_(index),
        rng_(Rng::Mix(opts_.seed) ^ Rng::Mix(index + 1)),
        slots_(kSlotsPerThread),
        corrupt_pending_(opts_.corrupt_for_test && index == 0) {
    // Everything the run needs is allocated here, before the baseline.
    mailbox_.reserve(kMailboxCapacity);
    scratch_.reserve(kMailboxCapacity);
  }

  // The thread's body. The barriers let main() read the heap while every
  // worker is idle: before any operation, and after every block is freed.
  void Run() {
    Barrier& barrier = shared_->barrier;
    barrier.Wait();  // started: main() records the baseline
    barrier.Wait();  // go
    const uint64_t tenth = opts_.ops / 10;
    const auto start = std::chrono::steady_clock::now();
    for (op_ = 0; op_ < opts_.ops; ++op_) {
      if (opts_.migrate_every != 0 && (op_ + 1) % opts_.migrate_every == 0) {
        Migrate();
      }
      Step();
      if (opts_.ops >= 1000000 && (op_ + 1) % tenth == 0) {
        const std::chrono::duration<double> s =
            std::chrono::steady_clock::now() - start;
        std::fprintf(stderr, "stress: thread %d: %d%% (%.1f s)\n", index_,
                     static_cast<int>((op_ + 1) / tenth * 10), s.count());
      }
    }
    for (Block& b : slots_) {
      if (b.ptr != nullptr) Release(b);
    }
    barrier.Wait();  // nobody sends any more
    DrainMailbox();
    barrier.Wait();  // all blocks freed: main() reads the heap
    barrier.Wait();  // may exit
  }

  const Counters& counters() const { return counters_; }

 private:
  // One random operation.
  void Step() {
    const uint64_t r = rng_.Next();
    if (r % 32 == 0) {  // now and then, free what other threads sent
      DrainMailbox();
      return;
    }
    Block& b = slots_[(r >> 8) % slots_.size()];
    if (b.ptr == nullptr) {
      Allocate(b);
      return;
    }
    const uint64_t choice = (r >> 40) % 10;
    if (choice < 2 && Reallocatable(b.kind)) {
      Realloc(b);
    } else if (choice < 4 && opts_.threads > 1) {
      HandOff(b);
    } else {
      Release(b);
    }
  }

  static bool Reallocatable(Kind kind) { return kind < Kind::kNewArray; }

  void Allocate(Block& b) {
    b.size = SampleSize(rng_);
    b.kind = static_cast<Kind>(rng_.Below(static_cast<int>(Kind::kCount)));
    b.align = 0;
    b.id = (uint64_t{static_cast<uint32_t>(index_)} << 48) ^ next_id_++;
    void* p = nullptr;
    switch (b.kind) {
      case Kind::kMalloc:
        p = malloc(b.size);
        break;
      case Kind::kCalloc:
        p = calloc(1, b.size);
        break;
      case Kind::kMemalign:
        b.align = SampleAlign(rng_);
        p = memalign(b.align, b.size);
        break;
      case Kind::kPosixMemalign:
        b.align = SampleAlign(rng_);
        if (posix_memalign(&p, b.align, b.size) != 0) p = nullptr;
        break;
      case Kind::kAlignedAlloc:
        b.align = SampleAlign(rng_);
        p = aligned_alloc(b.align, b.size);
        break;
      case Kind::kNewArray:
        p = new unsigned char[b.size];
        break;
      case Kind::kNewSized:
        p = ::operator new(b.size);
        break;
      case Kind::kNewAligned:
        b.align = SampleAlign(rng_);
        p = ::operator new(b.size, std::align_val_t(b.align));
        break;
      case Kind::kCount:
        break;
    }
    if (p == nullptr) Fail(b, "allocation failed");
    b.ptr = static_cast<unsigned char*>(p);
    if (b.align != 0 && reinterpret_cast<uintptr_t>(p) % b.align != 0) {
      Fail(b, "misaligned block");
    }
    if (b.kind == Kind::kCalloc) CheckZero(b);
    Fill(b.ptr, 0, b.size, b.id);
    ++counters_.allocs;
  }

  void Realloc(Block& b) {
    Check(b, b.size);
    const size_t old_size = b.size;
    b.size = SampleSize(rng_);
    void* p = realloc(b.ptr, b.size);
    if (p == nullptr) Fail(b, "realloc failed");
    b.ptr = static_cast<unsigned char*>(p);
    b.kind = Kind::kMalloc;  // realloc need not keep the alignment
    b.align = 0;
    // The common prefix must have moved with the block; the id is kept, so
    // the pattern continues past it.
    const size_t kept = old_size < b.size ? old_size : b.size;
    Check(b, kept);
    if (b.size > old_size) Fill(b.ptr, old_size, b.size, b.id);
    ++counters_.reallocs;
  }

  void HandOff(Block& b) {
    const int offset = 1 + static_cast<int>(rng_.Below(opts_.threads - 1));
    Worker& to = *shared_->workers[(index_ + offset) % opts_.threads];
    {
      std::lock_guard<std::mutex> lock(to.mu_);
      if (to.mailbox_.size() < kMailboxCapacity) {
        to.mailbox_.push_back(b);
        b = Block();
        return;
      }
    }
    Release(b);  // the receiver is behind: free it here
  }

  void DrainMailbox() {
    {
      // Swap with an equally reserved vector: no allocation under the lock.
      std::lock_guard<std::mutex> lock(mu_);
      scratch_.swap(mailbox_);
    }
    for (Block& b : scratch_) {
      Release(b);
      ++counters_.cross_thread_frees;
    }
    scratch_.clear();
  }

  // Checks the whole block, then frees it the way it was allocated.
  void Release(Block& b) {
    if (corrupt_pending_ && op_ >= opts_.ops / 2) {
      b.ptr[b.size / 2] ^= 0xff;
      corrupt_pending_ = false;
    }
    Check(b, b.size);
    switch (b.kind) {
      case Kind::kMalloc:
      case Kind::kCalloc:
      case Kind::kMemalign:
      case Kind::kPosixMemalign:
      case Kind::kAlignedAlloc:
        free(b.ptr);
        break;
      case Kind::kNewArray:
        delete[] b.ptr;
        break;
      case Kind::kNewSized:
        ::operator delete(b.ptr, b.size);
        break;
      case Kind::kNewAligned:
        ::operator delete(b.ptr, b.size, std::align_val_t(b.align));
        break;
      case Kind::kCount:
        break;
    }
    b = Block();
    ++counters_.frees;
  }

  void Check(const Block& b, size_t size) {
    const size_t offset = FindMismatch(b.ptr, size, b.id);
    if (offset != size) {
      char what[96];
      std::snprintf(what, sizeof(what),
                    "MISMATCH at offset %zu: expected 0x%02x, found 0x%02x",
                    offset, Expected(b.id, offset), b.ptr[offset]);
      Fail(b, what);
    }
    counters_.bytes_checked += size;
  }

  void CheckZero(const Block& b) {
    for (size_t offset = 0; offset < b.size; ++offset) {
      if (b.ptr[offset] != 0) {
        char what[64];
        std::snprintf(what, sizeof(what), "calloc: byte at offset %zu not zero",
                      offset);
        Fail(b, what);
      }
    }
    counters_.bytes_checked += b.size;
  }

  // One line, then exit at once: other threads may still be running.
  [[noreturn]] void Fail(const Block& b, const char* what) {
    std::fprintf(stderr,
                 "stress: FAILED: thread %d op %llu: %s (block %p size %zu, "
                 "%s, align %zu, id %#llx)\n",
                 index_, static_cast<unsigned long long>(op_), what,
                 static_cast<void*>(b.ptr), b.size, KindName(b.kind), b.align,
                 static_cast<unsigned long long>(b.id));
    _exit(1);
  }

  // Pins the thread to a random allowed CPU. With a fake topology (node =
  // CPU % nodes) or in a lab guest, this moves it between nodes.
  void Migrate() {
    const std::vector<int>& cpus = shared_->cpus;
    const int before = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[rng_.Below(cpus.size())], &set);
    if (sched_setaffinity(0, sizeof(set), &set) == 0 &&
        sched_getcpu() != before) {
      ++counters_.migrations;
    }
  }

  Shared* const shared_;
  const Options& opts_;
  const int index_;
  Rng rng_;
  uint64_t op_ = 0;
  uint64_t next_id_ = 0;
  std::vector<Block> slots_;
  bool corrupt_pending_;
  Counters counters_;
  // Blocks other threads handed to this one; it checks and frees them.
  std::mutex mu_;
  std::vector<Block> mailbox_;  // guarded by mu_
  std::vector<Block> scratch_;  // mailbox contents being freed
};

bool Property(const char* name, size_t* value) {
  return MallocExtension_GetNumericProperty != nullptr &&
         MallocExtension_GetNumericProperty(name, value) != 0;
}

[[noreturn]] void Usage(const char* error) {
  if (error != nullptr) {
    std::fprintf(stderr, "stress: %s (see --help)\n", error);
    std::exit(2);
  }
  std::printf(
      "usage: stress [--threads N] [--ops N] [--seed N] [--migrate-every N]\n"
      "              [--expect-nodes N]\n"
      "  --threads N        worker threads, 1-256 (default 2)\n"
      "  --ops N            random operations per thread (default 10000000)\n"
      "  --seed N           seed of every thread's generator (default 1)\n"
      "  --migrate-every N  move to a random CPU every N ops; 0: never "
      "(default 1000)\n"
      "  --expect-nodes N   fail unless the NUMA layer is active with N node "
      "slots\n");
  std::exit(0);
}

// Parses an integer option in [lo, hi], or exits with one line.
uint64_t ParseNumber(const char* name, const char* text, uint64_t lo,
                     uint64_t hi) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < lo ||
      v > hi) {
    char error[160];
    std::snprintf(error, sizeof(error),
                  "--%s wants an integer from %llu to %llu, got '%.40s'", name,
                  static_cast<unsigned long long>(lo),
                  static_cast<unsigned long long>(hi), text);
    Usage(error);
  }
  return v;
}

Options ParseOptions(int argc, char** argv) {
  static const option kLong[] = {
      {"threads", required_argument, nullptr, 't'},
      {"ops", required_argument, nullptr, 'o'},
      {"seed", required_argument, nullptr, 's'},
      {"migrate-every", required_argument, nullptr, 'm'},
      {"expect-nodes", required_argument, nullptr, 'n'},
      {"corrupt-for-test", no_argument, nullptr, 'c'},  // not in --help
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Options o;
  opterr = 0;  // our own one-line errors
  int c;
  while ((c = getopt_long(argc, argv, ":", kLong, nullptr)) != -1) {
    switch (c) {
      case 't':
        o.threads = static_cast<int>(ParseNumber("threads", optarg, 1, 256));
        break;
      case 'o':
        o.ops = ParseNumber("ops", optarg, 1, uint64_t{1} << 40);
        break;
      case 's':
        o.seed = ParseNumber("seed", optarg, 0, UINT64_MAX);
        break;
      case 'm':
        o.migrate_every = ParseNumber("migrate-every", optarg, 0, UINT64_MAX);
        break;
      case 'n':
        o.expect_nodes =
            static_cast<int>(ParseNumber("expect-nodes", optarg, 1, 64));
        break;
      case 'c':
        o.corrupt_for_test = true;
        break;
      case 'h':
        Usage(nullptr);
      case ':': {
        char error[96];
        std::snprintf(error, sizeof(error), "option '%.40s' needs a value",
                      argv[optind - 1]);
        Usage(error);
      }
      default: {
        char error[96];
        std::snprintf(error, sizeof(error), "bad option '%.40s'",
                      argv[optind - 1]);
        Usage(error);
      }
    }
  }
  if (optind < argc) {
    char error[96];
    std::snprintf(error, sizeof(error), "unexpected argument '%.40s'",
                  argv[optind]);
    Usage(error);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opts = ParseOptions(argc, argv);
  size_t baseline;
  if (!Property("generic.current_allocated_bytes", &baseline)) {
    std::fprintf(stderr,
                 "stress: not running on tcmalloc (no "
                 "generic.current_allocated_bytes)\n");
    return 1;
  }

  Shared shared(opts);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    std::perror("stress: sched_getaffinity");
    return 1;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) shared.cpus.push_back(cpu);
  }
  // Printing now also allocates stdout's buffer before the baseline.
  std::printf(
      "stress: %d threads x %llu ops, seed %llu, migrate every %llu, "
      "%zu allowed CPUs\n",
      opts.threads, static_cast<unsigned long long>(opts.ops),
      static_cast<unsigned long long>(opts.seed),
      static_cast<unsigned long long>(opts.migrate_every), shared.cpus.size());
  std::fflush(stdout);

  shared.workers.reserve(opts.threads);
  for (int i = 0; i < opts.threads; ++i) {
    shared.workers.push_back(std::make_unique<Worker>(&shared, i));
  }
  std::vector<std::thread> threads;
  threads.reserve(opts.threads);
  for (int i = 0; i < opts.threads; ++i) {
    threads.emplace_back(&Worker::Run, shared.workers[i].get());
  }

  // Every worker has started and is idle. Starting a thread allocates (at
  // least std::thread's state, which lives until Run() returns), so the
  // baseline is taken now; the test allocates nothing of its own from here
  // until the final reading, so the heap must come back to exactly this
  // figure.
  shared.barrier.Wait();
  Property("generic.current_allocated_bytes", &baseline);
  const auto start = std::chrono::steady_clock::now();
  shared.barrier.Wait();  // go
  shared.barrier.Wait();  // all own blocks freed
  shared.barrier.Wait();  // all mailboxes drained
  const std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  size_t after = 0;
  Property("generic.current_allocated_bytes", &after);
  shared.barrier.Wait();  // let the workers exit
  for (std::thread& t : threads) t.join();

  Counters total;
  for (const auto& w : shared.workers) {
    const Counters& c = w->counters();
    total.allocs += c.allocs;
    total.reallocs += c.reallocs;
    total.frees += c.frees;
    total.cross_thread_frees += c.cross_thread_frees;
    total.migrations += c.migrations;
    total.bytes_checked += c.bytes_checked;
  }

  static const char* const kNumaProperties[] = {
      "tcmalloc.numa.active",
      "tcmalloc.numa.num_nodes",
      "tcmalloc.numa.remote_free_objects",
      "tcmalloc.numa.thread_migrations",
      "tcmalloc.numa.misrouted_objects",
  };
  for (const char* name : kNumaProperties) {
    size_t value;
    if (Property(name, &value)) std::printf("stress: %s %zu\n", name, value);
  }
  std::printf("stress: heap allocated bytes: before %zu, after %zu\n", baseline,
              after);

  bool ok = true;
  if (after != baseline) {
    std::printf(
        "stress: FAILED: the heap did not return to its baseline "
        "(%+lld bytes)\n",
        static_cast<long long>(after) - static_cast<long long>(baseline));
    ok = false;
  }
  if (total.frees != total.allocs) {
    std::printf("stress: FAILED: %llu allocations but %llu frees\n",
                static_cast<unsigned long long>(total.allocs),
                static_cast<unsigned long long>(total.frees));
    ok = false;
  }
  if (opts.expect_nodes != 0) {
    size_t active = 0, nodes = 0;
    if (!Property("tcmalloc.numa.active", &active) || active != 1 ||
        !Property("tcmalloc.numa.num_nodes", &nodes) ||
        nodes != static_cast<size_t>(opts.expect_nodes)) {
      std::printf(
          "stress: FAILED: expected the NUMA layer active with %d "
          "nodes (active %zu, nodes %zu)\n",
          opts.expect_nodes, active, nodes);
      ok = false;
    }
  }
  std::printf(
      "stress: %llu ops, %llu allocs, %llu reallocs, %llu cross-thread "
      "frees, %llu migrations, %.1f MiB checked, %.1f s\n",
      static_cast<unsigned long long>(opts.ops * opts.threads),
      static_cast<unsigned long long>(total.allocs),
      static_cast<unsigned long long>(total.reallocs),
      static_cast<unsigned long long>(total.cross_thread_frees),
      static_cast<unsigned long long>(total.migrations),
      total.bytes_checked / 1048576.0, seconds.count());
  std::printf("stress: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
