// A model of one last-level cache: set-associative, physically indexed, with
// LRU or tree-PLRU replacement. numa_accesses.c keeps one per CPU node and
// counts the accesses that miss it, because those, not the hits, travel to a
// node's memory on a real machine.
#ifndef TOOLS_LAB_PLUGIN_LLC_H_
#define TOOLS_LAB_PLUGIN_LLC_H_

#include <stdbool.h>
#include <stdint.h>

enum llc_replacement { LLC_LRU, LLC_PLRU };

struct llc_config {
  uint64_t size;  // bytes
  unsigned ways;
  unsigned line;  // bytes, a power of two
  enum llc_replacement replacement;
};

struct llc {
  struct llc_config config;
  uint64_t sets;
  unsigned line_shift;
  uint64_t* tags;    // sets * ways; line number + 1, 0 = invalid
  uint64_t* stamps;  // LRU: last use per way
  uint64_t* plru;    // tree-PLRU: ways - 1 direction bits per set
  uint64_t clock;
};

// Checks a configuration; returns NULL or a one-line reason it is refused.
const char* llc_check(const struct llc_config* config);
// Allocates an empty cache (config must have passed llc_check); false on OOM.
bool llc_init(struct llc* cache, const struct llc_config* config);
// Empties the cache (every line invalid, replacement state reset).
void llc_clear(struct llc* cache);
// Looks up the line holding physical address `addr`, filling it on a miss.
// Returns true on a miss.
bool llc_access(struct llc* cache, uint64_t addr);
// Drops the line holding `addr` if present (another node wrote it).
void llc_invalidate(struct llc* cache, uint64_t addr);

#endif  // TOOLS_LAB_PLUGIN_LLC_H_
