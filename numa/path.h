// A fixed-size path builder for sysfs file names (no allocation).
#ifndef NUMA_TCMALLOC_NUMA_PATH_H_
#define NUMA_TCMALLOC_NUMA_PATH_H_

#include <stddef.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

class Path {
 public:
  Path() : len_(0), overflow_(false) { buf_[0] = '\0'; }

  Path& Add(const char* s) {
    while (*s != '\0') Put(*s++);
    return *this;
  }
  Path& AddUint(unsigned v) {
    char digits[12];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) Put(digits[--n]);
    return *this;
  }
  // False if the path did not fit; then it must not be used.
  bool ok() const { return !overflow_; }
  const char* c_str() const { return buf_; }
  size_t size() const { return len_; }
  // Keeps the first `n` characters (n <= size()).
  void Truncate(size_t n) {
    if (n < len_) {
      len_ = n;
      buf_[n] = '\0';
    }
  }

 private:
  void Put(char c) {
    if (len_ + 1 >= sizeof(buf_)) {
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

#endif  // NUMA_TCMALLOC_NUMA_PATH_H_
