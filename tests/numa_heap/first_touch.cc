// Where a large block's pages land when the program places them itself by
// writing them first (issue 27), measured as a user would see it. One worker
// thread per CPU node, pinned and created before any block, runs each step:
//
//   parallel  node A's worker allocates a block; every worker writes its
//             equal share: the share of pages on their writer's node.
//   reuse     node A's worker frees it; the last node's worker allocates a
//             block of the same size and writes it all: share on that node.
//   cross     the last node's worker allocates, writes and frees a block;
//             node A's worker allocates one and writes it: share on node A.
//   faults    node A's worker allocates, writes and frees a block once, then
//             10 times more: the minor page faults of those 10 rounds.
//
// Node A is the first CPU node. The steps run in this order in one process,
// so that each starts from the heap the one before left, as in a program.
//
//   first_touch --mib M [--rounds R]
// prints "parallel: share S (P of T pages)", likewise reuse and cross,
// "faults: F", and "first_touch: OK" at the end; exit 1 when something could
// not be measured (no NUMA, a pin or malloc failed, move_pages failed).
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/numa_heap/cpu_nodes.h"
#include "tests/numa_heap/page_nodes.h"
#include "tests/numa_heap/region_props.h"

namespace {

constexpr size_t kPage = 4096;

// A thread pinned to one node that runs one task at a time, on request.
class NodeWorker {
 public:
  explicit NodeWorker(int node) : node_(node), thread_([this] { Loop(); }) {}
  ~NodeWorker() {
    Post(nullptr);
    thread_.join();
  }
  int node() const { return node_; }
  bool pinned() {
    Wait();
    return pinned_;
  }

  // Starts `task` on this worker; a null task ends the worker.
  void Post(std::function<void()> task) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
    task_ = std::move(task);
    busy_ = true;
    stop_ = task_ == nullptr;
    cv_.notify_all();
  }
  // Waits for the posted task to finish.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
  }
  void Run(std::function<void()> task) {
    Post(std::move(task));
    Wait();
  }

 private:
  void Loop() {
    {
      std::unique_lock<std::mutex> lock(mu_);
      pinned_ = region_lab::PinToNode(node_);
      busy_ = false;
      cv_.notify_all();
    }
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return busy_; });
        if (stop_) return;
        task = task_;
      }
      task();
      std::unique_lock<std::mutex> lock(mu_);
      busy_ = false;
      cv_.notify_all();
    }
  }

  const int node_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool busy_ = true;  // until pinned
  bool stop_ = false;
  bool pinned_ = false;
  std::thread thread_;
};

void WriteRange(char* p, size_t len) {
  for (size_t off = 0; off < len; off += kPage) p[off] = 1;
}

// Pages of [p, p + len) on `node`, and pages present anywhere.
struct Count {
  long on_node = 0;
  long present = 0;
};
bool CountOn(const char* p, size_t len, int node, Count* out) {
  std::vector<void*> pages;
  for (size_t off = 0; off < len; off += kPage) {
    pages.push_back(const_cast<char*>(p) + off);
  }
  std::map<int, long> by_node;
  if (!region_lab::CountPageNodes(pages, &by_node)) return false;
  for (const auto& [n, count] : by_node) {
    if (n == node) out->on_node += count;
    if (n >= 0) out->present += count;
  }
  return true;
}

void PrintShare(const char* name, const Count& c, long pages) {
  std::printf("%s: share %.3f (%ld of %ld pages; %ld present)\n", name,
              pages > 0 ? static_cast<double>(c.on_node) / pages : 0.0,
              c.on_node, pages, c.present);
}

long MinorFaultsOfThisThread() {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "first_touch: %s\n", what);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  long mib = 0;
  int rounds = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
      mib = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: first_touch --mib M [--rounds R]\n");
      return 2;
    }
  }
  if (mib <= 0 || rounds <= 0) {
    std::fprintf(stderr, "first_touch: --mib and --rounds must be positive\n");
    return 2;
  }
  const size_t size = static_cast<size_t>(mib) << 20;
  const long pages = static_cast<long>(size / kPage);

  const std::vector<int> nodes = region_lab::CpuNodes();
  if (nodes.size() < 2) Fail("needs two CPU nodes or more");
  // The workers exist before any block, as a thread pool would.
  std::vector<std::unique_ptr<NodeWorker>> workers;
  for (int node : nodes) workers.push_back(std::make_unique<NodeWorker>(node));
  for (auto& w : workers) {
    if (!w->pinned()) Fail("could not pin a worker to its node");
  }
  NodeWorker& first = *workers.front();
  NodeWorker& last = *workers.back();
  const size_t n = workers.size();

  // parallel
  char* block = nullptr;
  first.Run([&] { block = static_cast<char*>(std::malloc(size)); });
  if (block == nullptr) Fail("malloc failed");
  const size_t share = (pages / n) * kPage;
  for (size_t i = 0; i < n; ++i) {
    const size_t len = i + 1 == n ? size - i * share : share;
    workers[i]->Post([=] { WriteRange(block + i * share, len); });
  }
  for (auto& w : workers) w->Wait();
  Count parallel;
  for (size_t i = 0; i < n; ++i) {
    const size_t len = i + 1 == n ? size - i * share : share;
    if (!CountOn(block + i * share, len, workers[i]->node(), &parallel)) {
      Fail("move_pages failed");
    }
  }
  PrintShare("parallel", parallel, pages);

  // reuse
  first.Run([&] { std::free(block); });
  Count reuse;
  last.Run([&] {
    block = static_cast<char*>(std::malloc(size));
    if (block != nullptr) WriteRange(block, size);
  });
  if (block == nullptr) Fail("malloc failed");
  if (!CountOn(block, size, last.node(), &reuse)) Fail("move_pages failed");
  PrintShare("reuse", reuse, pages);
  last.Run([&] { std::free(block); });

  // cross
  last.Run([&] {
    char* p = static_cast<char*>(std::malloc(size));
    if (p != nullptr) WriteRange(p, size);
    std::free(p);
  });
  block = nullptr;
  first.Run([&] {
    block = static_cast<char*>(std::malloc(size));
    if (block != nullptr) WriteRange(block, size);
  });
  if (block == nullptr) Fail("malloc failed");
  Count cross;
  if (!CountOn(block, size, first.node(), &cross)) Fail("move_pages failed");
  PrintShare("cross", cross, pages);
  first.Run([&] { std::free(block); });

  // faults
  long faults = -1;
  bool ok = true;
  first.Run([&] {
    char* p = static_cast<char*>(std::malloc(size));
    if (p == nullptr) {
      ok = false;
      return;
    }
    WriteRange(p, size);
    std::free(p);
    const long before = MinorFaultsOfThisThread();
    for (int r = 0; r < rounds && ok; ++r) {
      p = static_cast<char*>(std::malloc(size));
      if (p == nullptr) {
        ok = false;
        break;
      }
      WriteRange(p, size);
      std::free(p);
    }
    faults = MinorFaultsOfThisThread() - before;
  });
  if (!ok) Fail("malloc failed");
  std::printf("faults: %ld (%d rounds of %ld MiB on node %d)\n", faults, rounds,
              mib, first.node());

  const region_lab::Property released = region_lab::Numa("released_for_reuse");
  if (released.known) {
    std::printf("released_for_reuse: %llu\n",
                static_cast<unsigned long long>(released.value));
  }
  std::printf("first_touch: OK\n");
  return 0;
}
