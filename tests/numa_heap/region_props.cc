#include "tests/numa_heap/region_props.h"

#include <cstdio>
#include <cstring>

#include "gperftools/malloc_extension_c.h"

// Weak, so that the lab programs link without an allocator and find it at
// run time in the LD_PRELOADed library (as stress_dynamic does). This is the
// C entry point of MallocExtension::instance()->GetNumericProperty; the C++
// one would be a strong reference that only a linked allocator resolves.
extern "C" int MallocExtension_GetNumericProperty(const char* property,
                                                  size_t* value)
    __attribute__((weak));
extern "C" void MallocExtension_GetStats(char* buffer, int buffer_length)
    __attribute__((weak));

namespace region_lab {
namespace {

Property Get(const std::string& name) {
  Property p;
  size_t value = 0;
  if (MallocExtension_GetNumericProperty != nullptr &&
      MallocExtension_GetNumericProperty(name.c_str(), &value) != 0) {
    p.known = true;
    p.value = value;
  }
  return p;
}

}  // namespace

Property Numa(const std::string& name) { return Get("tcmalloc.numa." + name); }

std::string ValueText(const Property& p) {
  return p.known ? std::to_string(p.value) : "unknown";
}

void PrintNumaStatsLines() {
  if (MallocExtension_GetStats == nullptr) {
    std::printf("stats: unavailable (no allocator preloaded)\n");
    return;
  }
  static char buffer[1 << 16];
  MallocExtension_GetStats(buffer, sizeof(buffer));
  for (char* line = std::strtok(buffer, "\n"); line != nullptr;
       line = std::strtok(nullptr, "\n")) {
    if (std::strstr(line, "NUMA") != nullptr) std::printf("stats: %s\n", line);
  }
}

std::string RegionPropertyName(int node, const char* field) {
  return "tcmalloc.numa.node" + std::to_string(node) + ".region_" + field;
}

Region NodeRegion(int node) {
  Region r;
  r.begin = Get(RegionPropertyName(node, "begin"));
  r.end = Get(RegionPropertyName(node, "end"));
  r.reserved_bytes = Get(RegionPropertyName(node, "reserved_bytes"));
  r.committed_bytes = Get(RegionPropertyName(node, "committed_bytes"));
  return r;
}

bool Region::Complete() const {
  return begin.known && end.known && reserved_bytes.known &&
         committed_bytes.known;
}

bool Region::Contains(const void* p, size_t size) const {
  if (!Complete()) return false;
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a >= begin.value && a <= end.value && size <= end.value - a;
}

}  // namespace region_lab
