// Drop-in probe: built against Debian's stock libtcmalloc.so.4, it reports
// which libtcmalloc answers at run time, so tests/dropin/dropin_test.sh can
// tell Debian's library from ours when ours is swapped in with LD_LIBRARY_PATH
// or LD_PRELOAD.
//
// Prints, one "key: value" a line:
//   version: <tc_version() string>
//   current_allocated_bytes: <MallocExtension property while 4 MiB are held>
//   held_bytes: <bytes this program holds at that moment>
//   mapped: <path of each libtcmalloc file in /proc/self/maps>
// Exits non-zero if the allocator does not account for the memory held.
#include <gperftools/malloc_extension.h>
#include <gperftools/tcmalloc.h>

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

// The distinct libtcmalloc files mapped into this process: the loader's own
// word on which library was chosen, independent of what the library claims
// about itself.
std::set<std::string> MappedTcmallocFiles() {
  std::set<std::string> files;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (path.find("libtcmalloc") != std::string::npos) files.insert(path);
  }
  return files;
}

}  // namespace

int main() {
  // Hold enough memory that the property has to count it, whatever the thread
  // cache has.
  constexpr std::size_t kBlocks = 64;
  constexpr std::size_t kBlockSize = 64 << 10;
  std::vector<std::unique_ptr<char[]>> held;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    held.emplace_back(new char[kBlockSize]);
    held.back()[0] =
        static_cast<char>(i);  // Touch it so it is not optimised away.
  }

  int major = 0, minor = 0;
  const char* patch = nullptr;
  std::printf("version: %s\n", tc_version(&major, &minor, &patch));

  std::size_t allocated = 0;
  if (!MallocExtension::instance()->GetNumericProperty(
          "generic.current_allocated_bytes", &allocated)) {
    std::fprintf(stderr, "generic.current_allocated_bytes is not supported\n");
    return 1;
  }
  const std::size_t held_bytes = kBlocks * kBlockSize;
  std::printf("current_allocated_bytes: %zu\n", allocated);
  std::printf("held_bytes: %zu\n", held_bytes);
  for (const std::string& file : MappedTcmallocFiles()) {
    std::printf("mapped: %s\n", file.c_str());
  }
  if (allocated < held_bytes) {
    std::fprintf(stderr, "allocator reports %zu bytes but %zu are held\n",
                 allocated, held_bytes);
    return 1;
  }
  return 0;
}
