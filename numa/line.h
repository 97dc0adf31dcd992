// A line of text built in a fixed buffer, without allocating: sysfs file
// names, and the warning lines the layer writes to stderr.
#ifndef NUMA_TCMALLOC_NUMA_LINE_H_
#define NUMA_TCMALLOC_NUMA_LINE_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "numa/syscall.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

class Line {
 public:
  Line() : len_(0), overflow_(false) { buf_[0] = '\0'; }

  Line& Add(const char* s) {
    while (*s != '\0') Put(*s++);
    return *this;
  }
  Line& AddUint(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) Put(digits[--n]);
    return *this;
  }
  // At most `max` bytes of `s`, which came from outside (an environment
  // variable, a file): a control byte becomes '?', so that it cannot break
  // the line, and a longer `s` ends in "...".
  Line& AddPrintable(const char* s, size_t max) {
    size_t i = 0;
    for (; s[i] != '\0' && i < max; ++i) {
      const char c = s[i];
      Put((c >= 0 && c < 0x20) || c == 0x7f ? '?' : c);
    }
    if (s[i] != '\0') Add("...");
    return *this;
  }

  // False if the text did not fit: a path must not be used then (a warning
  // still goes out, cut short).
  bool ok() const { return !overflow_; }
  const char* c_str() const { return buf_; }
  size_t size() const { return len_; }
  // Keeps the first `n` characters (n <= size()): a path's parent.
  void Truncate(size_t n) {
    if (n < len_) {
      len_ = n;
      buf_[n] = '\0';
    }
  }

  // The line and a newline on stderr, in one write(2) so that concurrent
  // writers cannot split it.
  void WriteToStderr() {
    buf_[len_] = '\n';
    RawSyscall(SYS_write, 2, reinterpret_cast<long>(buf_),
               static_cast<long>(len_ + 1));
    buf_[len_] = '\0';
  }

 private:
  void Put(char c) {
    if (len_ + 2 > sizeof(buf_)) {  // room for '\0' (or the newline)
      overflow_ = true;
      return;
    }
    buf_[len_++] = c;
    buf_[len_] = '\0';
  }

  char buf_[512];
  size_t len_;
  bool overflow_;
};

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_LINE_H_
