// The malloc-free byte source the sysfs parsers read from (numa/byte_stream.h).
#include "numa/byte_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "numa/syscall.h"

namespace tcmalloc {
namespace numa {

ByteStream::ByteStream(const char* data, size_t len)
    : fd_(-1), error_(false), data_(data), len_(len), pos_(0) {}

ByteStream::ByteStream(const char* path)
    : fd_(-1), error_(false), data_(buf_), len_(0), pos_(0) {
  // openat rather than open: SYS_open does not exist on aarch64.
  long fd = RawSyscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path),
                       O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error_ = true;
  } else {
    fd_ = static_cast<int>(fd);
  }
}

ByteStream::~ByteStream() {
  if (fd_ >= 0) RawSyscall(SYS_close, fd_);
}

bool ByteStream::Fill() {
  if (pos_ < len_) return true;
  if (fd_ < 0 || error_) return false;
  for (;;) {
    long n =
        RawSyscall(SYS_read, fd_, reinterpret_cast<long>(buf_), sizeof(buf_));
    if (n == -EINTR) continue;
    if (n < 0) error_ = true;
    if (n <= 0) {
      // End of file (or error): release the descriptor now.
      RawSyscall(SYS_close, fd_);
      fd_ = -1;
      return false;
    }
    len_ = static_cast<size_t>(n);
    pos_ = 0;
    return true;
  }
}

int ByteStream::Peek() {
  if (!Fill()) return -1;
  return static_cast<unsigned char>(data_[pos_]);
}

int ByteStream::Next() {
  int c = Peek();
  if (c >= 0) ++pos_;
  return c;
}

}  // namespace numa
}  // namespace tcmalloc
