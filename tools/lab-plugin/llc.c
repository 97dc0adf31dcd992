// The last-level cache model of the lab's access plugin (see llc.h).
#include "llc.h"

#include <stdlib.h>
#include <string.h>

static bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

const char* llc_check(const struct llc_config* c) {
  if (!is_power_of_two(c->line) || c->line < 8 || c->line > 4096) {
    return "the line size must be a power of two from 8 to 4096 bytes";
  }
  if (c->ways < 1 || c->ways > 1024) return "ways must be 1-1024";
  if (c->replacement == LLC_PLRU &&
      (!is_power_of_two(c->ways) || c->ways > 64)) {
    return "tree-PLRU needs a power-of-two number of ways, at most 64";
  }
  const uint64_t set_bytes = (uint64_t)c->ways * c->line;
  if (c->size < set_bytes || c->size % set_bytes != 0) {
    return "the size must be a whole number of sets (ways x line bytes)";
  }
  if (c->size > (1ull << 32)) return "the size must be at most 4 GiB";
  return NULL;
}

bool llc_init(struct llc* cache, const struct llc_config* config) {
  memset(cache, 0, sizeof(*cache));
  cache->config = *config;
  cache->sets = config->size / ((uint64_t)config->ways * config->line);
  while ((1u << cache->line_shift) < config->line) cache->line_shift++;
  const uint64_t n = cache->sets * config->ways;
  cache->tags = calloc(n, sizeof(uint64_t));
  cache->stamps = calloc(n, sizeof(uint64_t));
  cache->plru = calloc(cache->sets, sizeof(uint64_t));
  return cache->tags && cache->stamps && cache->plru;
}

void llc_clear(struct llc* cache) {
  const uint64_t n = cache->sets * cache->config.ways;
  memset(cache->tags, 0, n * sizeof(uint64_t));
  memset(cache->stamps, 0, n * sizeof(uint64_t));
  memset(cache->plru, 0, cache->sets * sizeof(uint64_t));
  cache->clock = 0;
}

// Tree-PLRU: the ways are the leaves of a binary tree whose ways - 1 inner
// nodes (numbered from 1, children of i at 2i and 2i + 1) each hold one bit
// saying which half holds the pseudo-least-recently used way.
static void plru_touch(uint64_t* bits, unsigned ways, unsigned way) {
  unsigned node = 1;
  for (unsigned half = ways / 2; half >= 1; half /= 2) {
    const unsigned right = (way & half) ? 1 : 0;
    // Point away from the way just used.
    if (right) {
      *bits &= ~(1ull << node);
    } else {
      *bits |= 1ull << node;
    }
    node = 2 * node + right;
  }
}

static unsigned plru_victim(uint64_t bits, unsigned ways) {
  unsigned node = 1;
  unsigned way = 0;
  for (unsigned half = ways / 2; half >= 1; half /= 2) {
    const unsigned right = (bits >> node) & 1;
    way |= right ? half : 0;
    node = 2 * node + right;
  }
  return way;
}

static uint64_t set_of(const struct llc* cache, uint64_t line) {
  return is_power_of_two(cache->sets) ? (line & (cache->sets - 1))
                                      : line % cache->sets;
}

bool llc_access(struct llc* cache, uint64_t addr) {
  const unsigned ways = cache->config.ways;
  const uint64_t line = addr >> cache->line_shift;
  const uint64_t set = set_of(cache, line);
  uint64_t* tags = cache->tags + set * ways;
  uint64_t* stamps = cache->stamps + set * ways;
  const uint64_t tag = line + 1;
  ++cache->clock;
  unsigned way = ways;
  for (unsigned w = 0; w < ways; ++w) {
    if (tags[w] == tag) {
      way = w;
      break;
    }
  }
  const bool miss = way == ways;
  if (miss) {
    // An empty way first, as hardware does; otherwise the replacement's victim.
    for (unsigned w = 0; w < ways && way == ways; ++w) {
      if (tags[w] == 0) way = w;
    }
    if (way == ways) {
      if (cache->config.replacement == LLC_PLRU) {
        way = plru_victim(cache->plru[set], ways);
      } else {
        way = 0;
        for (unsigned w = 1; w < ways; ++w) {
          if (stamps[w] < stamps[way]) way = w;
        }
      }
    }
    tags[way] = tag;
  }
  if (cache->config.replacement == LLC_PLRU) {
    plru_touch(&cache->plru[set], ways, way);
  } else {
    stamps[way] = cache->clock;
  }
  return miss;
}

void llc_invalidate(struct llc* cache, uint64_t addr) {
  const unsigned ways = cache->config.ways;
  const uint64_t line = addr >> cache->line_shift;
  uint64_t* tags = cache->tags + set_of(cache, line) * ways;
  for (unsigned w = 0; w < ways; ++w) {
    if (tags[w] == line + 1) {
      tags[w] = 0;
      return;
    }
  }
}
