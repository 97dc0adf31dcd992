#include "benchmarks/workloads/common.h"

#include <errno.h>
#include <time.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <thread>

extern const char* __progname;  // glibc: basename of argv[0].

namespace workloads {

void Die(const char* format, ...) {
  std::fprintf(stderr, "%s: error: ", __progname);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::exit(2);
}

long ParsePositive(const char* text, const char* flag) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value <= 0) {
    Die("%s wants a positive integer, got '%s'", flag, text);
  }
  return value;
}

std::vector<int> ParseIntList(const char* text, const char* flag) {
  std::vector<int> values;
  std::string all(text);
  size_t start = 0;
  while (true) {
    size_t comma = all.find(',', start);
    std::string item = all.substr(start, comma - start);
    values.push_back(static_cast<int>(ParsePositive(item.c_str(), flag)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double RunThreads(int threads, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(i);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  double start = NowSeconds();
  go.store(true, std::memory_order_release);
  for (std::thread& t : pool) t.join();
  return NowSeconds() - start;
}

void PrintMetric(const std::string& name, double value, const char* unit) {
  std::printf("metric=%s value=%.6g unit=%s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}

}  // namespace workloads
