// A long-lived thread pinned to one NUMA node that runs jobs on request, so
// that workloads can say "now the thread on node B allocates" while allocator
// thread caches stay warm between phases, as in a server's thread pool.
#ifndef BENCHMARKS_LOCALITY_WORKER_H_
#define BENCHMARKS_LOCALITY_WORKER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "benchmarks/locality/page_log.h"
#include "benchmarks/locality/topology.h"

namespace locality {

class Worker {
 public:
  Worker(const Topology& topology, int node);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts `job` on the worker's thread; Wait() blocks until it is done.
  void Start(std::function<void()> job);
  void Wait();
  void Run(std::function<void()> job) {
    Start(std::move(job));
    Wait();
  }

  // Moves the worker's thread to another node (between jobs).
  void MoveTo(int node);

  int node() const { return node_; }
  PageLog& log() { return log_; }

 private:
  void Loop();

  const Topology& topology_;
  int node_;
  PageLog log_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_WORKER_H_
