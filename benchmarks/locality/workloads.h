// The named workloads. Each runs on fresh worker threads pinned to NUMA nodes,
// allocates with plain malloc/free (so whichever allocator is linked or
// preloaded serves it), writes what it allocates, and records the pages of the
// blocks it measures while they are live.
#ifndef BENCHMARKS_LOCALITY_WORKLOADS_H_
#define BENCHMARKS_LOCALITY_WORKLOADS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/locality/page_log.h"
#include "benchmarks/locality/topology.h"

namespace locality {

struct Options {
  uint64_t seed = 1;
  int scale = 1;  // multiplies iteration counts
};

struct Result {
  bool ran = false;  // false: not meaningful on this machine (reason says why)
  std::string reason;
  Summary summary;
};

struct Workload {
  const char* name;
  const char* description;
  Result (*run)(const Topology&, const Options&);
};

// Every workload, in report order.
const std::vector<Workload>& AllWorkloads();

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_WORKLOADS_H_
