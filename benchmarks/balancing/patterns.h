// The long-running patterns of issue 34, under whichever allocator serves
// malloc: what the kernel's automatic NUMA balancing does to an allocator's
// heap over tens of seconds, phase by phase (benchmarks/balancing/phase.h).
// Each runs between the first two nodes with CPUs, "home" and "away".
#ifndef BENCHMARKS_BALANCING_PATTERNS_H_
#define BENCHMARKS_BALANCING_PATTERNS_H_

#include <cstddef>

#include "benchmarks/locality/topology.h"

namespace balancing {

struct Options {
  double seconds = 30;     // each timed stretch (the 30 s)
  size_t objects = 40000;  // per batch
  size_t size = 256;       // bytes per object
  size_t queue = 4096;     // producer/consumer ring, in messages
};

// Hand-off with heavy remote reading, then free and reuse. A thread on home
// allocates and writes a batch (first-batch); a thread on away reads it over
// and over for `seconds` (remote-read); away frees it all and home allocates
// and writes a batch again (second-batch): an allocator that hands home the
// pages the kernel moved to away gives home remote memory.
void Handoff(const locality::Topology& topology, const Options& options);

// Thread migration. One thread allocates a batch on home and works on it
// (reads and rewrites it) for `seconds` (home); moves to away and works on the
// same batch for `seconds` (moved: the kernel may follow it); frees it and
// allocates and writes a batch again on away (fresh).
void Migration(const locality::Topology& topology, const Options& options);

// A steady producer on home and consumer on away: home allocates and writes
// messages into a ring, away reads and frees them, for `seconds` in two
// halves (start, steady). At the end of each half both stop, away drains the
// ring, and home fills it once more: the phase's figure is where those fresh
// messages lie, against home.
void ProducerConsumer(const locality::Topology& topology,
                      const Options& options);

}  // namespace balancing

#endif  // BENCHMARKS_BALANCING_PATTERNS_H_
