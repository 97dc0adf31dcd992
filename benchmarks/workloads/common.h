// Helpers shared by the workload programs: argument parsing, a start-together
// thread runner, and the one output format tools/compare reads.
//
// Output format: one result per line, `metric=<name> value=<number>
// unit=<unit>`. Lines that do not start with "metric=" are commentary for
// humans.
#ifndef BENCHMARKS_WORKLOADS_COMMON_H_
#define BENCHMARKS_WORKLOADS_COMMON_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace workloads {

// Prints "<program>: error: <message>" to stderr and exits with status 2.
[[noreturn]] void Die(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

// Parses a positive integer flag value; dies naming `flag` on bad input.
long ParsePositive(const char* text, const char* flag);

// Parses a comma-separated list of positive integers such as "1,2,4".
std::vector<int> ParseIntList(const char* text, const char* flag);

// Monotonic wall-clock time in seconds.
double NowSeconds();

// Runs body(thread_index) on `threads` threads that start together, and
// returns the wall time from the common start to the last thread's end.
// Thread creation is kept out of the measurement on purpose: we time the
// allocator, not pthread_create.
double RunThreads(int threads, const std::function<void(int)>& body);

// Prints one result line in the format described above.
void PrintMetric(const std::string& name, double value, const char* unit);

// Keeps the compiler from proving an allocation unused and deleting the
// malloc/free pair (GCC does that for plain malloc+free).
inline void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

}  // namespace workloads

#endif  // BENCHMARKS_WORKLOADS_COMMON_H_
