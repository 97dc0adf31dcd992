// Parsers for the kernel's text formats and for knob values (numa/parse.h).
#include "numa/parse.h"

namespace tcmalloc {
namespace numa {
namespace {

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsSeparator(int c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

// Reads a decimal number of at most 32 bits; the first byte must be a digit.
bool ReadNumber(ByteStream* in, uint32_t* out) {
  if (!IsDigit(in->Peek())) return false;
  uint64_t v = 0;
  while (IsDigit(in->Peek())) {
    v = v * 10 + (in->Next() - '0');
    if (v > 0xffffffffu) return false;
  }
  *out = static_cast<uint32_t>(v);
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

}  // namespace

bool ParseRanges(ByteStream* in, RangeFn fn, void* ctx) {
  for (;;) {
    while (IsSeparator(in->Peek())) in->Next();
    if (in->Peek() < 0) return in->ok();
    uint32_t lo, hi;
    if (!ReadNumber(in, &lo)) return false;
    hi = lo;
    if (in->Peek() == '-') {
      in->Next();
      if (!ReadNumber(in, &hi) || hi < lo) return false;
    }
    // An element must end at a separator or at the end of the input.
    int c = in->Peek();
    if (c >= 0 && !IsSeparator(c)) return false;
    if (!fn(ctx, lo, hi)) return false;
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
  if (!IsDigit(in->Peek())) return false;
  uint64_t v = 0;
  while (IsDigit(in->Peek())) {
    if (v > (~uint64_t{0} - 9) / 10) return false;
    v = v * 10 + (in->Next() - '0');
  }
  *kb = v;
  return in->ok();
}

bool ParseUint(const char* s, uint64_t max, uint64_t* out) {
  if (s == nullptr || !IsDigit(*s)) return false;
  uint64_t v = 0;
  for (; *s != '\0'; ++s) {
    if (!IsDigit(*s)) return false;
    v = v * 10 + (*s - '0');
    if (v > max) return false;
  }
  *out = v;
  return true;
}

bool StrEq(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

}  // namespace numa
}  // namespace tcmalloc
