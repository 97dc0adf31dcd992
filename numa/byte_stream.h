// A malloc-free byte source: a small file (sysfs) read in chunks through a
// stack buffer, or a string in memory (for tests). Parsers pull bytes from it
// one at a time, so a file of any length needs only this fixed buffer.
#ifndef NUMA_TCMALLOC_NUMA_BYTE_STREAM_H_
#define NUMA_TCMALLOC_NUMA_BYTE_STREAM_H_

#include <stddef.h>

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

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

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_BYTE_STREAM_H_
