#include "benchmarks/balancing/patterns.h"

#include <sched.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "benchmarks/balancing/phase.h"
#include "benchmarks/locality/worker.h"

namespace balancing {
namespace {

using Clock = std::chrono::steady_clock;
using locality::Topology;
using locality::Worker;

// Read results land here, so the compiler cannot drop the reads.
std::atomic<uint64_t> sink{0};

char* AllocateOrDie(size_t size) {
  char* p = static_cast<char*>(std::malloc(size));
  if (p == nullptr) {
    std::fprintf(stderr, "balancing_patterns: malloc(%zu) failed\n", size);
    std::exit(2);
  }
  return p;
}

std::vector<char*> AllocateAndWrite(size_t count, size_t size, int fill) {
  std::vector<char*> objects;
  objects.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    char* p = AllocateOrDie(size);
    std::memset(p, fill, size);
    objects.push_back(p);
  }
  return objects;
}

void FreeAll(std::vector<char*>* objects) {
  for (char* p : *objects) std::free(p);
  objects->clear();
}

uint64_t Sum(const char* p, size_t size) {
  uint64_t sum = 0;
  for (size_t off = 0; off + sizeof(uint64_t) <= size;
       off += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, p + off, sizeof(word));
    sum += word;
  }
  return sum;
}

// Whole passes over every object until `seconds` have gone by.
void ReadFor(const std::vector<char*>& objects, size_t size, double seconds) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  uint64_t sum = 0;
  do {
    for (const char* p : objects) sum += Sum(p, size);
  } while (Clock::now() < end);
  sink += sum;
}

// As ReadFor, but every word is also written back (incremented).
void WorkFor(const std::vector<char*>& objects, size_t size, double seconds) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  do {
    for (char* p : objects) {
      for (size_t off = 0; off + sizeof(uint64_t) <= size;
           off += sizeof(uint64_t)) {
        uint64_t word;
        std::memcpy(&word, p + off, sizeof(word));
        ++word;
        std::memcpy(p + off, &word, sizeof(word));
      }
    }
  } while (Clock::now() < end);
}

void RequireTwoNodes(const Topology& topology) {
  if (topology.cpu_nodes.size() < 2) {
    std::fprintf(stderr,
                 "balancing_patterns: needs two nodes with CPUs (run it in "
                 "the NUMA lab: tools/numa-vm --nodes 2)\n");
    std::exit(2);
  }
}

// A single-producer, single-consumer ring of message pointers. Its slots come
// from mmap, not from the allocator under test.
class Ring {
 public:
  explicit Ring(size_t capacity) : capacity_(capacity) {
    void* p = mmap(nullptr, capacity * sizeof(char*), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("balancing_patterns: mmap for the ring");
      std::exit(2);
    }
    slots_ = static_cast<char**>(p);
  }
  ~Ring() { munmap(slots_, capacity_ * sizeof(char*)); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  bool Push(char* message) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == capacity_) return false;
    slots_[tail % capacity_] = message;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  char* Pop() {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return nullptr;
    char* message = slots_[head % capacity_];
    head_.store(head + 1, std::memory_order_release);
    return message;
  }

 private:
  const size_t capacity_;
  char** slots_;
  std::atomic<size_t> head_{0};
  std::atomic<size_t> tail_{0};
};

// Runs `work` as phase NAME of PATTERN, whose using thread is `user`, then
// reports where the pages of the objects in `*objects` lie, as `user` reads
// them (Phase::Count).
void MeasuredPhase(const char* pattern, const char* name, Worker* user,
                   const std::vector<char*>* objects, size_t size,
                   const std::function<void()>& work) {
  Phase phase(pattern, name, user->node());
  work();
  phase.End();
  PageCount pages;
  user->Run([&] { pages = phase.Count(*objects, size); });
  phase.Report(pages, objects->size());
}

}  // namespace

void Handoff(const Topology& topology, const Options& options) {
  RequireTwoNodes(topology);
  const int home = topology.cpu_nodes[0], away = topology.cpu_nodes[1];
  Worker writer(topology, home), reader(topology, away);
  std::vector<char*> batch;
  MeasuredPhase("handoff", "first-batch", &writer, &batch, options.size, [&] {
    writer.Run(
        [&] { batch = AllocateAndWrite(options.objects, options.size, 1); });
  });
  MeasuredPhase("handoff", "remote-read", &reader, &batch, options.size, [&] {
    reader.Run([&] {
      // The reader's own copy of the list, on its own node.
      const std::vector<char*> mine(batch);
      ReadFor(mine, options.size, options.seconds);
    });
  });
  MeasuredPhase("handoff", "second-batch", &writer, &batch, options.size, [&] {
    reader.Run([&] { FreeAll(&batch); });
    writer.Run(
        [&] { batch = AllocateAndWrite(options.objects, options.size, 2); });
  });
  writer.Run([&] { FreeAll(&batch); });
}

void Migration(const Topology& topology, const Options& options) {
  RequireTwoNodes(topology);
  const int home = topology.cpu_nodes[0], away = topology.cpu_nodes[1];
  Worker worker(topology, home);
  std::vector<char*> batch;
  MeasuredPhase("migration", "home", &worker, &batch, options.size, [&] {
    worker.Run([&] {
      batch = AllocateAndWrite(options.objects, options.size, 1);
      WorkFor(batch, options.size, options.seconds);
    });
  });
  worker.MoveTo(away);
  MeasuredPhase("migration", "moved", &worker, &batch, options.size, [&] {
    worker.Run([&] { WorkFor(batch, options.size, options.seconds); });
  });
  MeasuredPhase("migration", "fresh", &worker, &batch, options.size, [&] {
    worker.Run([&] {
      FreeAll(&batch);
      batch = AllocateAndWrite(options.objects, options.size, 2);
    });
  });
  worker.Run([&] { FreeAll(&batch); });
}

void ProducerConsumer(const Topology& topology, const Options& options) {
  RequireTwoNodes(topology);
  const int home = topology.cpu_nodes[0], away = topology.cpu_nodes[1];
  Worker producer(topology, home), consumer(topology, away);
  Ring ring(options.queue);
  std::atomic<bool> stop{false};
  uint64_t messages = 0;
  const auto produce = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      char* m = AllocateOrDie(options.size);
      std::memset(m, 3, options.size);
      while (!ring.Push(m)) {
        if (stop.load(std::memory_order_relaxed)) {
          std::free(m);
          return;
        }
        sched_yield();
      }
      ++messages;
    }
  };
  const auto consume = [&] {
    uint64_t sum = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      char* m = ring.Pop();
      if (m == nullptr) {
        sched_yield();
        continue;
      }
      sum += Sum(m, options.size);
      std::free(m);
    }
    sink += sum;
  };
  const auto drain = [&] {
    while (char* m = ring.Pop()) std::free(m);
  };
  for (const char* name : {"start", "steady"}) {
    // Where the allocator's metadata lay when the phase began, to count what
    // the kernel moved of it while both threads used it (numa-tcmalloc binds
    // it so that balancing leaves it where its first writer put it).
    const PageNodes metadata_before = NoHugePageNodes();
    Phase phase("prodcons", name, home);
    stop = false;
    producer.Start(produce);
    consumer.Start(consume);
    std::this_thread::sleep_for(
        std::chrono::duration<double>(options.seconds / 2));
    stop = true;
    producer.Wait();
    consumer.Wait();
    phase.End();
    const Moves metadata = CountMoves(metadata_before, NoHugePageNodes());
    const NoHugePageMappings mappings = CountNoHugePageMappings();
    std::printf(
        "metadata prodcons %s pages=%llu moved=%llu mappings=%llu "
        "with_policy=%llu\n",
        name, static_cast<unsigned long long>(metadata.pages),
        static_cast<unsigned long long>(metadata.moved),
        static_cast<unsigned long long>(mappings.mappings),
        static_cast<unsigned long long>(mappings.with_policy));
    // What home's next allocations get, once the ring is empty again.
    consumer.Run(drain);
    std::vector<char*> fresh;
    PageCount pages;
    producer.Run([&] {
      fresh = AllocateAndWrite(options.queue, options.size, 4);
      pages = phase.Count(fresh, options.size);
    });
    phase.Report(pages, fresh.size());
    std::printf("prodcons %s messages=%llu\n", name,
                static_cast<unsigned long long>(messages));
    producer.Run([&] {
      for (char* m : fresh) ring.Push(m);
    });
    messages = 0;
  }
  consumer.Run(drain);
}

}  // namespace balancing
