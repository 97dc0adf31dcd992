// The guest's nodes that have CPUs, and pinning a thread to one of them, for
// the lab programs (one thread per CPU node). Memory-only nodes have no
// CPU to run a thread on, so they get none.
#ifndef TESTS_NUMA_HEAP_CPU_NODES_H_
#define TESTS_NUMA_HEAP_CPU_NODES_H_

#include <vector>

namespace region_lab {

// Node ids with at least one CPU, ascending. Empty when libnuma finds no NUMA
// support.
std::vector<int> CpuNodes();

// Pins the calling thread to `node`'s CPUs and waits until it runs there, so
// that its first allocation already sees the right node. False on failure.
bool PinToNode(int node);

// The node of the CPU the calling thread runs on, -1 if unknown.
int CurrentNode();

}  // namespace region_lab

#endif  // TESTS_NUMA_HEAP_CPU_NODES_H_
