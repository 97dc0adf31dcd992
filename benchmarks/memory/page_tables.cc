#include "benchmarks/memory/page_tables.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace memory_probe {
namespace {

constexpr uintptr_t kPage = 4096;
constexpr uintptr_t kHuge = uintptr_t{2} << 20;
constexpr size_t kPagesPerHuge = kHuge / kPage;
constexpr uint64_t kPresent = uint64_t{1} << 63;
constexpr uint64_t kFrameMask = (uint64_t{1} << 55) - 1;
constexpr uint64_t kFlagThp = uint64_t{1} << 22;  // KPF_THP

// True when 512 present entries map consecutive frames from a 2 MiB-aligned
// one that kpageflags marks as part of a transparent huge page.
bool BackedByOneHugePage(const uint64_t* entries, int kpageflags) {
  const uint64_t first = entries[0] & kFrameMask;
  if (first % kPagesPerHuge != 0) return false;
  for (size_t i = 0; i < kPagesPerHuge; ++i) {
    if ((entries[i] & kPresent) == 0 || (entries[i] & kFrameMask) != first + i)
      return false;
  }
  uint64_t flags = 0;
  const off_t at = static_cast<off_t>(first * sizeof(flags));
  return pread(kpageflags, &flags, sizeof(flags), at) ==
             static_cast<ssize_t>(sizeof(flags)) &&
         (flags & kFlagThp) != 0;
}

}  // namespace

PageTableCount CountFromPageTables() {
  PageTableCount count;
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  const int pagemap = open("/proc/self/pagemap", O_RDONLY);
  const int kpageflags = open("/proc/kpageflags", O_RDONLY);
  if (maps == nullptr || pagemap < 0) {
    if (maps != nullptr) std::fclose(maps);
    if (pagemap >= 0) close(pagemap);
    if (kpageflags >= 0) close(kpageflags);
    return count;
  }
  long present = 0, huge = 0;
  bool frames_shown = kpageflags >= 0;
  static uint64_t entries[kPagesPerHuge];
  char line[4096];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long begin, end;
    if (std::sscanf(line, "%lx-%lx", &begin, &end) != 2) continue;
    // The kernel's own pages: counted as present, but not in Rss.
    if (std::strstr(line, "[vsyscall]") != nullptr ||
        std::strstr(line, "[vvar") != nullptr) {
      continue;
    }
    // 2 MiB-aligned pieces, so that a huge page is seen in one read.
    for (uintptr_t from = begin; from < end;) {
      const uintptr_t to =
          std::min<uintptr_t>((from & ~(kHuge - 1)) + kHuge, end);
      const size_t pages = (to - from) / kPage;
      const ssize_t want = static_cast<ssize_t>(pages * sizeof(uint64_t));
      if (pread(pagemap, entries, want,
                static_cast<off_t>(from / kPage * sizeof(uint64_t))) != want) {
        break;
      }
      long here = 0;
      for (size_t i = 0; i < pages; ++i) {
        if ((entries[i] & kPresent) == 0) continue;
        ++here;
        if ((entries[i] & kFrameMask) == 0) frames_shown = false;
      }
      present += here;
      if (frames_shown && pages == kPagesPerHuge &&
          here == static_cast<long>(kPagesPerHuge) &&
          BackedByOneHugePage(entries, kpageflags)) {
        huge += kPagesPerHuge;
      }
      from = to;
    }
  }
  std::fclose(maps);
  close(pagemap);
  if (kpageflags >= 0) close(kpageflags);
  count.present_kib = present * static_cast<long>(kPage / 1024);
  if (frames_shown) count.huge_kib = huge * static_cast<long>(kPage / 1024);
  return count;
}

}  // namespace memory_probe
