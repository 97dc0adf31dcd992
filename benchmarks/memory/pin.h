// Pinning the calling thread to one CPU, for the memory probes. With a fake
// topology (TCMALLOC_NUMA_FAKE_NODES=N) CPU c is node c % N, and in the lab
// a CPU's node comes from sysfs: pinning is how a probe chooses the node it
// allocates on.
#ifndef BENCHMARKS_MEMORY_PIN_H_
#define BENCHMARKS_MEMORY_PIN_H_

#include <string>
#include <vector>

namespace memory_probe {

// Parses a comma-separated list of CPU numbers such as "0,1,0" (0 allowed,
// repeats allowed); dies naming `flag` on bad input.
std::vector<int> ParseCpuList(const char* text, const char* flag);

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> AllowedCpus();

// "0,1,4": for messages.
std::string JoinCpus(const std::vector<int>& cpus);

// Dies, naming `flag` and the allowed CPUs, unless `cpu` is one of them.
void CheckCpuAllowed(int cpu, const char* flag);

// Pins the calling thread to `cpu` and waits until it runs there, so that
// its next allocation already sees that CPU's node. Dies on failure.
void PinToCpu(int cpu);

}  // namespace memory_probe

#endif  // BENCHMARKS_MEMORY_PIN_H_
