// Text without malloc: ByteStream reads a small file (sysfs, /proc) or a
// string, the parsers read the kernel's formats and knob values from it or
// from a C string, and Line builds a line in a fixed buffer (sysfs paths,
// the warning lines the layer writes to stderr). No allocation, and no
// syscalls but ByteStream's and Line's own.
#ifndef NUMA_TCMALLOC_NUMA_PARSE_H_
#define NUMA_TCMALLOC_NUMA_PARSE_H_

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// A file read in chunks through a buffer of its own, or a string in memory
// (for tests). Parsers pull bytes from it one at a time, so a file of any
// length needs only this fixed buffer.
class ByteStream {
 public:
  // Reads `len` bytes at `data` (not copied; must outlive the stream).
  ByteStream(const char* data, size_t len);
  // Opens `path` read-only; ok() is false if it could not be opened.
  explicit ByteStream(const char* path);
  ~ByteStream();

  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // False once an open or read error happened.
  bool ok() const { return !error_; }
  // The next byte (0..255), or -1 at the end or after an error.
  int Next();
  // The next byte without consuming it, or -1.
  int Peek();

 private:
  bool Fill();

  int fd_;  // -1 for a memory stream
  bool error_;
  const char* data_;
  size_t len_;
  size_t pos_;
  char buf_[256];
};

// Called once per element of a list; returning false stops the parse (which
// then fails).
using RangeFn = bool (*)(void* ctx, uint32_t lo, uint32_t hi);

// Parses a kernel list: elements "N" or "N-M" (N <= M) separated by commas
// and/or whitespace, as in cpulist ("0-3,8-11\n"), online ("0,2") and
// distance rows ("10 21\n"). An empty list is valid. Calls fn(ctx, lo, hi) for
// each element, in order. False on malformed input or a read error.
bool ParseRanges(ByteStream* in, RangeFn fn, void* ctx);

// Parses a node list into a bit mask; ids >= 64 are counted in *beyond (may
// be null) and left out of the mask.
bool ParseNodeMask(ByteStream* in, uint64_t* mask, int* beyond);

// Finds "MemTotal:" in a node's meminfo ("Node 0 MemTotal:  123 kB") and
// stores its value. False if absent or malformed.
bool ParseMemTotal(ByteStream* in, uint64_t* kb);

// Parses a whole string of decimal digits no larger than `max`.
bool ParseUint(const char* s, uint64_t max, uint64_t* out);

// Parses a size such as "65536", "64K", "64M", "1G", "2T" (binary multiples,
// also written "64MiB" or "64MB"), at most `max` bytes.
bool ParseSize(const char* s, uint64_t max, uint64_t* out);

// C string equality (no libc dependency, usable before anything else).
bool StrEq(const char* a, const char* b);

// A bounded copy (NUL-terminated, cut to fit `size`), without libc: the
// layer's objects may call only a short list of its functions.
void StrCopy(char* dst, int size, const char* src);

// The string after `prefix` if `s` starts with it, else null.
const char* AfterPrefix(const char* s, const char* prefix);

// Reads the next line into buf (NUL-terminated, without its newline; its
// length in *len if given). False at the end of the input. A line that does
// not fit is consumed whole and *fits set false (buf then holds its start).
bool ReadLine(ByteStream* in, char* buf, int size, bool* fits,
              int* len = nullptr);

// A line of text built in a fixed buffer.
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
  void WriteToStderr();

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

#endif  // NUMA_TCMALLOC_NUMA_PARSE_H_
