#include "benchmarks/locality/isolate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

}  // namespace

Result RunIsolated(const Workload& workload, const Topology& topology,
                   const Options& options) {
  int fds[2];
  if (pipe(fds) != 0) Die(workload.name, "pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) Die(workload.name, "fork failed");
  if (pid == 0) {
    close(fds[0]);
    OpenWindow();
    const Result r = workload.run(topology, options);
    CloseWindow();  // if the workload returned without Done()
    Wire wire = {};
    wire.ran = r.ran;
    std::snprintf(wire.reason, sizeof(wire.reason), "%s", r.reason.c_str());
    wire.summary = r.summary;
    _exit(WriteAll(fds[1], &wire, sizeof(wire)) ? 0 : 1);
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

}  // namespace locality
