#include "benchmarks/locality/allocator_name.h"

#include <fstream>
#include <string>

// Defined by gperftools (shared or linked in statically); null otherwise.
extern "C" void* tc_malloc(size_t size) __attribute__((weak));

namespace locality {

std::string DetectAllocator() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const char* known[] = {"libtcmalloc_minimal", "libtcmalloc", "libjemalloc",
                         "libmimalloc"};
  while (std::getline(maps, line)) {
    for (const char* name : known) {
      if (line.find(std::string("/") + name) != std::string::npos) {
        return std::string(name).substr(3);
      }
    }
  }
  return tc_malloc != nullptr ? "tcmalloc-static" : "glibc";
}

}  // namespace locality
