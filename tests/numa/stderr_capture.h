// Captures what a piece of code writes to file descriptor 2.
#ifndef NUMA_TCMALLOC_TESTS_NUMA_STDERR_CAPTURE_H_
#define NUMA_TCMALLOC_TESTS_NUMA_STDERR_CAPTURE_H_

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace numa_test {

// Runs fn() with fd 2 redirected to a temporary file; returns the bytes
// written to it.
template <typename Fn>
std::string CaptureStderr(Fn fn) {
  std::string path = std::string(getenv("TEST_TMPDIR")) + "/stderr.XXXXXX";
  int fd = mkstemp(&path[0]);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  fn();
  dup2(saved, 2);
  close(saved);
  std::string out;
  lseek(fd, 0, SEEK_SET);
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(fd);
  unlink(path.c_str());
  return out;
}

}  // namespace numa_test

#endif  // NUMA_TCMALLOC_TESTS_NUMA_STDERR_CAPTURE_H_
