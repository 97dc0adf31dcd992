// Malloc-free text reading and writing (numa/parse.h).
#include "numa/parse.h"

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

namespace {

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsSeparator(int c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

// Reads a decimal number no larger than `max`; the first byte must be a digit.
bool ReadNumber(ByteStream* in, uint64_t max, uint64_t* out) {
  if (!IsDigit(in->Peek())) return false;
  uint64_t v = 0;
  while (IsDigit(in->Peek())) {
    const uint64_t digit = static_cast<uint64_t>(in->Next() - '0');
    if (v > max / 10 || digit > max - v * 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

struct MaskCtx {
  uint64_t mask;
  int beyond;
};

bool AddToMask(void* ctx, uint32_t lo, uint32_t hi) {
  MaskCtx* m = static_cast<MaskCtx*>(ctx);
  for (uint64_t id = lo; id <= hi; ++id) {
    if (id < 64) {
      m->mask |= uint64_t{1} << id;
    } else {
      m->beyond++;
    }
  }
  return true;
}

// The decimal digits at *s, no larger than `max`; *s moves past them. False
// if there are none or they exceed `max`.
bool ParseDigits(const char** s, uint64_t max, uint64_t* out) {
  const char* p = *s;
  if (p == nullptr || !IsDigit(*p)) return false;
  uint64_t v = 0;
  for (; IsDigit(*p); ++p) {
    const uint64_t digit = static_cast<uint64_t>(*p - '0');
    if (v > max / 10 || digit > max - v * 10) return false;
    v = v * 10 + digit;
  }
  *s = p;
  *out = v;
  return true;
}

}  // namespace

bool ParseRanges(ByteStream* in, RangeFn fn, void* ctx) {
  for (;;) {
    while (IsSeparator(in->Peek())) in->Next();
    if (in->Peek() < 0) return in->ok();
    uint64_t lo, hi;
    if (!ReadNumber(in, 0xffffffffu, &lo)) return false;
    hi = lo;
    if (in->Peek() == '-') {
      in->Next();
      if (!ReadNumber(in, 0xffffffffu, &hi) || hi < lo) return false;
    }
    // An element must end at a separator or at the end of the input.
    int c = in->Peek();
    if (c >= 0 && !IsSeparator(c)) return false;
    if (!fn(ctx, static_cast<uint32_t>(lo), static_cast<uint32_t>(hi))) {
      return false;
    }
  }
}

bool ParseNodeMask(ByteStream* in, uint64_t* mask, int* beyond) {
  MaskCtx m = {0, 0};
  if (!ParseRanges(in, AddToMask, &m)) return false;
  *mask = m.mask;
  if (beyond != nullptr) *beyond = m.beyond;
  return true;
}

bool ParseMemTotal(ByteStream* in, uint64_t* kb) {
  static const char kKey[] = "MemTotal:";
  // Match the key anywhere (the line starts with "Node N "); a naive restart
  // is enough because the key has no repeated prefix.
  int matched = 0;
  while (kKey[matched] != '\0') {
    int c = in->Next();
    if (c < 0) return false;
    if (c == kKey[matched]) {
      ++matched;
    } else {
      matched = (c == kKey[0]) ? 1 : 0;
    }
  }
  while (in->Peek() == ' ' || in->Peek() == '\t') in->Next();
  return ReadNumber(in, ~uint64_t{0}, kb) && in->ok();
}

bool ParseUint(const char* s, uint64_t max, uint64_t* out) {
  uint64_t v;
  if (!ParseDigits(&s, max, &v) || *s != '\0') return false;
  *out = v;
  return true;
}

bool ParseSize(const char* s, uint64_t max, uint64_t* out) {
  uint64_t n;
  if (!ParseDigits(&s, max, &n)) return false;
  static constexpr char kUnits[] = "kmgt";  // binary multiples, either case
  int shift = 0;
  for (int i = 0; i < 4; ++i) {
    if ((*s | 0x20) == kUnits[i]) shift = 10 * (i + 1);
  }
  if (shift != 0) {
    ++s;
    if (*s == 'i' && s[1] == 'B') {
      s += 2;
    } else if (*s == 'B') {
      ++s;
    }
  }
  if (*s != '\0' || n > (max >> shift)) return false;
  *out = n << shift;
  return true;
}

bool StrEq(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

void StrCopy(char* dst, int size, const char* src) {
  if (size <= 0) return;
  int n = 0;
  for (; n + 1 < size && src[n] != '\0'; ++n) dst[n] = src[n];
  dst[n] = '\0';
}

const char* AfterPrefix(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return nullptr;
  }
  return s;
}

bool ReadLine(ByteStream* in, char* buf, int size, bool* fits, int* len_out) {
  if (in->Peek() < 0) return false;
  int len = 0;
  *fits = true;
  for (int c = in->Next(); c >= 0 && c != '\n'; c = in->Next()) {
    if (len + 1 < size) {
      buf[len++] = static_cast<char>(c);
    } else {
      *fits = false;
    }
  }
  buf[len] = '\0';
  if (len_out != nullptr) *len_out = len;
  return true;
}

void Line::WriteToStderr() {
  buf_[len_] = '\n';
  RawSyscall(SYS_write, 2, reinterpret_cast<long>(buf_),
             static_cast<long>(len_ + 1));
  buf_[len_] = '\0';
}

}  // namespace numa
}  // namespace tcmalloc
