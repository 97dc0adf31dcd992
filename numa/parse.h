// Parsers for the kernel's text formats and for knob values. Pure functions
// over a ByteStream or a C string: no allocation, no syscalls of their own.
#ifndef NUMA_TCMALLOC_NUMA_PARSE_H_
#define NUMA_TCMALLOC_NUMA_PARSE_H_

#include <stdint.h>

#include "numa/byte_stream.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

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

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_PARSE_H_
