// The figures both memory probes report, read the same way under any malloc:
// the allocator's own heap size through MallocExtension's C entry point, and
// the kernel's resident-set figures. The probes link plain libc malloc and
// are run with the allocator under test LD_PRELOADed (tools/compare,
// tests/numa_heap/stranded_run), so one binary measures every allocator.
#ifndef BENCHMARKS_MEMORY_FIGURES_H_
#define BENCHMARKS_MEMORY_FIGURES_H_

#include <string>

namespace memory_probe {

// A numeric MallocExtension property, or -1 when the running allocator does
// not answer it (glibc, jemalloc, or a name this build does not know).
long long Property(const char* name);

// generic.heap_size: bytes the allocator took from the system, released
// ones included. -1 when not answered.
long long HeapBytes();

// HeapBytes(), also remembered: PrintResult reports the largest value
// sampled. Vanilla's heap size never shrinks, but the patched one's does
// (a node's released address space goes back to its region when another
// node grows), so its value at the end can hide a peak; the probes sample
// where theirs is highest, with every phase's blocks allocated.
long long SampleHeap();

// The process's peak resident set so far, in KiB (getrusage ru_maxrss).
long PeakRssKib();

// The current resident set, in KiB (VmRSS in /proc/self/status); -1 if the
// file cannot be read.
long CurrentRssKib();

// Bytes in MiB with one decimal ("1025.0"), or "-" when negative (unknown).
std::string Mib(long long bytes);

// Samples the heap once more, then prints the result: one line of
// key=value fields (heap_mib and heap_bytes: the largest heap size sampled;
// heap_end_mib: the last; peak_rss_mib, rss_mib, peak_rss_kib, numa_active,
// numa_nodes; "-" for what the allocator does not answer), then METRIC lines
// for `tools/compare --cmd` (docs/compare.md).
void PrintResult();

}  // namespace memory_probe

#endif  // BENCHMARKS_MEMORY_FIGURES_H_
