// Runs each workload in a child process of its own, so that one workload's
// leftover heap (whose shape depends on thread interleaving) cannot change the
// next one's placement.
#ifndef BENCHMARKS_LOCALITY_ISOLATE_H_
#define BENCHMARKS_LOCALITY_ISOLATE_H_

#include "benchmarks/locality/topology.h"
#include "benchmarks/locality/workloads.h"

namespace locality {

// Forks, runs `workload` in the child and returns the child's result. Exits the
// program with a message if the child fails.
Result RunIsolated(const Workload& workload, const Topology& topology,
                   const Options& options);

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_ISOLATE_H_
