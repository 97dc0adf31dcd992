#include "benchmarks/memory/pin.h"

#include <errno.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>

#include "benchmarks/workloads/common.h"

namespace memory_probe {

std::vector<int> ParseCpuList(const char* text, const char* flag) {
  std::vector<int> cpus;
  const std::string all(text);
  size_t start = 0;
  while (true) {
    const size_t comma = all.find(',', start);
    const std::string item = all.substr(start, comma - start);
    char* end = nullptr;
    errno = 0;
    const long cpu = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || errno != 0 || *end != '\0' || cpu < 0 ||
        cpu >= CPU_SETSIZE) {
      workloads::Die(
          "%s wants CPU numbers (0-%d) separated by commas, got '%s'", flag,
          CPU_SETSIZE - 1, text);
    }
    cpus.push_back(static_cast<int>(cpu));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cpus;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    workloads::Die("sched_getaffinity: %s", std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string JoinCpus(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) {
    if (!text.empty()) text += ',';
    text += std::to_string(cpu);
  }
  return text;
}

void CheckCpuAllowed(int cpu, const char* flag) {
  const std::vector<int> allowed = AllowedCpus();
  for (int c : allowed) {
    if (c == cpu) return;
  }
  workloads::Die("%s: CPU %d is not available to this process (allowed: %s)",
                 flag, cpu, JoinCpus(allowed).c_str());
}

void PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    workloads::Die("cannot pin to CPU %d: sched_setaffinity: %s", cpu,
                   std::strerror(errno));
  }
  // The kernel moves the caller before sched_setaffinity returns; the loop
  // only guards against a kernel that defers it to the next schedule.
  for (int i = 0; i < 1000 && sched_getcpu() != cpu; ++i) sched_yield();
  if (sched_getcpu() != cpu) {
    workloads::Die("pinned to CPU %d but running on CPU %d", cpu,
                   sched_getcpu());
  }
}

}  // namespace memory_probe
