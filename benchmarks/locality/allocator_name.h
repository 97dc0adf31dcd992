// Which allocator serves malloc in this process, for probes that run under
// LD_PRELOAD and must say so: a preload that did not take would silently
// measure glibc.
#ifndef BENCHMARKS_LOCALITY_ALLOCATOR_NAME_H_
#define BENCHMARKS_LOCALITY_ALLOCATOR_NAME_H_

#include <string>

namespace locality {

// "tcmalloc", "tcmalloc_minimal", "jemalloc" or "mimalloc" from the libraries
// mapped into the process, "tcmalloc-static" when TCMalloc is linked into the
// binary, else "glibc".
std::string DetectAllocator();

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_ALLOCATOR_NAME_H_
