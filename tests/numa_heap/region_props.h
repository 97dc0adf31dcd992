// What the allocator says about node-owned address regions (issue 13), read
// through MallocExtension's numeric properties. Shared by the region lab
// programs (lockstep_growth.cc, region_placement.cc), which run with the
// allocator LD_PRELOADed: vanilla answers none of these, and neither does a
// build without regions, so every field says whether it was answered.
#ifndef TESTS_NUMA_HEAP_REGION_PROPS_H_
#define TESTS_NUMA_HEAP_REGION_PROPS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace region_lab {

// A numeric property, or `known == false` when the allocator does not answer.
struct Property {
  bool known = false;
  uint64_t value = 0;
};

// tcmalloc.numa.<name>, e.g. Numa("active").
Property Numa(const std::string& name);

// The value as text, "unknown" when the allocator does not answer.
std::string ValueText(const Property& p);

// Prints "stats: <line>" for every line of the preloaded allocator's
// GetStats that mentions NUMA (none when the layer is inactive), or
// "stats: unavailable (no allocator preloaded)".
void PrintNumaStatsLines();

// tcmalloc.numa.node<N>.region_{begin,end,reserved_bytes,committed_bytes}.
struct Region {
  Property begin;
  Property end;
  Property reserved_bytes;
  Property committed_bytes;

  // All four answered.
  bool Complete() const;
  // Whether [p, p + size) lies inside [begin, end); false when incomplete.
  bool Contains(const void* p, size_t size) const;
};

Region NodeRegion(int node);

// "tcmalloc.numa.node<N>.region_begin" and so on, for messages.
std::string RegionPropertyName(int node, const char* field);

}  // namespace region_lab

#endif  // TESTS_NUMA_HEAP_REGION_PROPS_H_
