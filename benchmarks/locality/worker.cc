#include "benchmarks/locality/worker.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace locality {

Worker::Worker(const Topology& topology, int node)
    : topology_(topology), node_(node), thread_([this] { Loop(); }) {
  MoveTo(node);
}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Worker::Start(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  job_ = std::move(job);
  busy_ = true;
  cv_.notify_all();
}

void Worker::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !busy_; });
}

void Worker::MoveTo(int node) {
  Run([this, node] {
    if (!PinToNode(topology_, node)) {
      std::fprintf(stderr, "locality_probe: cannot run a thread on node %d\n",
                   node);
      std::exit(2);
    }
  });
  node_ = node;
}

void Worker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return busy_ || stop_; });
    if (stop_) return;
    std::function<void()> job = std::move(job_);
    lock.unlock();
    job();
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace locality
