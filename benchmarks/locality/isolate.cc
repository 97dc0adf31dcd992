#include "benchmarks/locality/isolate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/locality/page_log.h"
#include "benchmarks/locality/window_marks.h"

namespace locality {
namespace {

// What crosses the pipe: plain data only.
struct Wire {
  bool ran;
  char reason[120];
  Summary summary;
};

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = write(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = read(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

[[noreturn]] void Die(const char* workload, const char* what) {
  std::fprintf(stderr, "locality_probe: workload %s: %s\n", workload, what);
  std::exit(2);
}

constexpr char kChildFlag[] = "--run-isolated";

}  // namespace

Result RunIsolated(const Workload& workload, const Options& options) {
  int fds[2];
  if (pipe(fds) != 0) Die(workload.name, "pipe failed");
  // Everything the child needs, formatted before fork: the child only execs.
  const std::string fd = std::to_string(fds[1]);
  const std::string seed = std::to_string(options.seed);
  const std::string scale = std::to_string(options.scale);
  const std::string explain = std::to_string(ExplainedPages());
  std::vector<char*> args = {const_cast<char*>("locality_probe"),
                             const_cast<char*>(kChildFlag),
                             const_cast<char*>(workload.name),
                             const_cast<char*>(fd.c_str()),
                             const_cast<char*>(seed.c_str()),
                             const_cast<char*>(scale.c_str()),
                             const_cast<char*>(WindowsEnabled() ? "1" : "0"),
                             const_cast<char*>(explain.c_str()),
                             nullptr};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) Die(workload.name, "fork failed");
  if (pid == 0) {
    close(fds[0]);
    execv("/proc/self/exe", args.data());
    _exit(127);
  }
  close(fds[1]);
  Wire wire;
  const bool ok = ReadAll(fds[0], &wire, sizeof(wire));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(workload.name, "the child process failed");
  }
  Result r;
  r.ran = wire.ran;
  r.reason = wire.reason;
  r.summary = wire.summary;
  return r;
}

bool IsIsolatedChild(int argc, char** argv) {
  return argc > 1 && std::strcmp(argv[1], kChildFlag) == 0;
}

int RunIsolatedChild(int argc, char** argv) {
  // argv: probe --run-isolated NAME FD SEED SCALE WINDOWS EXPLAIN
  if (argc != 8) return 1;
  const Workload* workload = nullptr;
  for (const Workload& w : AllWorkloads()) {
    if (std::strcmp(w.name, argv[2]) == 0) workload = &w;
  }
  if (workload == nullptr) return 1;
  const int fd = std::atoi(argv[3]);
  Options options;
  options.seed = std::strtoull(argv[4], nullptr, 10);
  options.scale = std::atoi(argv[5]);
  EnableWindows(std::strcmp(argv[6], "1") == 0);
  ExplainPages(std::atoi(argv[7]));
  const Topology topology = ReadTopology();
  OpenWindow();
  const Result r = workload->run(topology, options);
  CloseWindow();  // if the workload returned without Done()
  Wire wire = {};
  wire.ran = r.ran;
  std::snprintf(wire.reason, sizeof(wire.reason), "%s", r.reason.c_str());
  wire.summary = r.summary;
  return WriteAll(fd, &wire, sizeof(wire)) ? 0 : 1;
}

}  // namespace locality
