// The TCMALLOC_NUMA* knobs (documented in docs/tuning.md), the policies they
// choose, and their parsing.
#ifndef NUMA_TCMALLOC_NUMA_CONFIG_H_
#define NUMA_TCMALLOC_NUMA_CONFIG_H_

#include <stdint.h>

#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// Each enum lists its knob's values in the order ParseConfig (config.cc)
// names them, default first: the value's index there is the enumerator.

// How a node's fresh memory is placed (TCMALLOC_NUMA_POLICY).
enum class BindPolicy : uint8_t {
  kLocal,      // a CPU node's memory is bound to nothing: a page lands on the
               // node that first writes it (inside the task's policy); a
               // memory-only node's is bound as kPreferred. The default.
  kPreferred,  // the node first, then the kernel falls back (inside a
               // membind set, nearest first); never OOM-kills before the
               // set is full.
  kBind,       // MPOL_BIND to the node: the kernel OOM-kills rather than spill.
};

// Where a small object freed by a thread on another node goes
// (TCMALLOC_NUMA_REMOTE_FREE).
enum class RemoteFree : uint8_t {
  kOwner,       // logged without touching it; the owner's threads link it
                // into their central lists (numa/remote_free_log.h)
  kOwnerLists,  // as kOwner, but filed on a list of the freeing thread's
                // cache (a write into the object), back to the owner in
                // batches
  kLocal,  // into the freeing thread's cache, for reuse there (vanilla speed)
};

// What a thread cache does with its old node's objects when it finds its
// thread on a new node (TCMALLOC_NUMA_MIGRATION).
enum class Migration : uint8_t {
  kFlush,  // return them to their node's central lists at once
  kDrain,  // keep them parked; they go back on overflow or scavenge
};

// What the heaps do about pages the kernel's automatic NUMA balancing moved
// away from their node while in use (TCMALLOC_NUMA_BALANCING;
// numa/balancing.h).
enum class Balancing : uint8_t {
  kCooperate,  // freed spans whose pages moved are released before reuse
  kIgnore,     // freed memory is reused wherever its pages lie
};

// TCMALLOC_NUMA.
enum class Mode : uint8_t {
  kAuto,  // "auto" (default): on when the process may use > 1 memory node
  kOff,   // "0": vanilla; Init reads the environment and nothing else
  kOn,    // "1": on even with one node
};

struct Config {
  Mode mode;
  BindPolicy policy;       // TCMALLOC_NUMA_POLICY
  int fake_nodes;          // TCMALLOC_NUMA_FAKE_NODES: 0 (none) or 2..kMaxNodes
  bool stats;              // TCMALLOC_NUMA_STATS
  RemoteFree remote_free;  // TCMALLOC_NUMA_REMOTE_FREE
  Migration migration;     // TCMALLOC_NUMA_MIGRATION
  Balancing balancing;     // TCMALLOC_NUMA_BALANCING
  uint32_t max_stranded_mb;   // TCMALLOC_NUMA_MAX_STRANDED_MB
  uint32_t stranded_idle_ms;  // TCMALLOC_NUMA_STRANDED_IDLE_MS
  // TCMALLOC_NUMA_INTERLEAVE_ABOVE: page-level blocks of at least this many
  // bytes are interleaved; 0 = off.
  uint64_t interleave_above;
};

using GetenvFn = const char* (*)(const char*);

// Reads the knobs through `getenv_fn` (null: none set). An unset or empty
// knob takes its default silently; any other unknown value takes its default
// and writes exactly one warning line to stderr (fd 2), e.g.
//   tcmalloc: ignoring TCMALLOC_NUMA_POLICY=foo (expected
//   local|preferred|bind); using local
// With TCMALLOC_NUMA=0 no other knob is read at all (vanilla); the placement
// calls the program makes itself (numa/placed.h) still work.
Config ParseConfig(GetenvFn getenv_fn);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_CONFIG_H_
