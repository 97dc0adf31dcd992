// Runs each workload in a process of its own, so that one workload's leftover
// heap (whose shape depends on thread interleaving) cannot change the next
// one's placement. The process is a fresh copy of the probe (fork, then exec
// of /proc/self/exe), not a bare fork: a forked child shares its parent's heap
// pages copy-on-write, and under first-touch placement the copy a child's
// write makes lands on the writing thread's node, whoever's heap the page is
// in. That would measure the probe's own start-up heap, not the workload.
#ifndef BENCHMARKS_LOCALITY_ISOLATE_H_
#define BENCHMARKS_LOCALITY_ISOLATE_H_

#include "benchmarks/locality/topology.h"
#include "benchmarks/locality/workloads.h"

namespace locality {

// Starts the probe again as `locality_probe --run-isolated NAME ...`, which
// runs `workload` alone, and returns its result. Exits the program with a
// message if the child fails.
Result RunIsolated(const Workload& workload, const Options& options);

// True when argv asks for the child's part (--run-isolated as the first
// argument); RunIsolatedChild then runs it and returns the exit status.
bool IsIsolatedChild(int argc, char** argv);
int RunIsolatedChild(int argc, char** argv);

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_ISOLATE_H_
