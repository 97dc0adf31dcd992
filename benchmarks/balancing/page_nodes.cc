#include "benchmarks/balancing/page_nodes.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace balancing {
namespace {

constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kPresent = 1ull << 63;
constexpr uint64_t kPfnMask = (1ull << 55) - 1;

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "balancing_patterns: %s\n", what);
  std::exit(2);
}

struct ZoneSpan {
  uint64_t start_pfn;
  uint64_t end_pfn;  // exclusive
  int node;
};

// Every zone's span of frame numbers, from "Node N, zone NAME" blocks with
// their "spanned" and "start_pfn" lines.
std::vector<ZoneSpan> ReadZoneSpans() {
  std::ifstream in("/proc/zoneinfo");
  std::vector<ZoneSpan> spans;
  std::string line;
  int node = -1;
  uint64_t spanned = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "Node") {
      std::string id;
      words >> id;  // "0,"
      node = std::atoi(id.c_str());
      spanned = 0;
    } else if (first == "spanned") {
      words >> spanned;
    } else if (first == "start_pfn:" && node >= 0 && spanned > 0) {
      uint64_t start = 0;
      words >> start;
      spans.push_back({start, start + spanned, node});
    }
  }
  if (spans.empty()) Die("cannot read the zones' spans from /proc/zoneinfo");
  return spans;
}

int NodeOfPfn(const std::vector<ZoneSpan>& spans, uint64_t pfn) {
  for (const ZoneSpan& s : spans) {
    if (pfn >= s.start_pfn && pfn < s.end_pfn) return s.node;
  }
  return -1;
}

}  // namespace

PageCount CountPagesOnNode(const std::vector<char*>& blocks, size_t size,
                           int node) {
  std::vector<uint64_t> pages;
  for (const char* b : blocks) {
    const uint64_t first = reinterpret_cast<uint64_t>(b) / kPageSize;
    const uint64_t last =
        (reinterpret_cast<uint64_t>(b) + size - 1) / kPageSize;
    for (uint64_t p = first; p <= last; ++p) pages.push_back(p);
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());

  const std::vector<ZoneSpan> spans = ReadZoneSpans();
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) Die("cannot open /proc/self/pagemap");
  PageCount count;
  for (uint64_t page : pages) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof(entry), page * sizeof(entry)) !=
        sizeof(entry)) {
      Die("cannot read /proc/self/pagemap");
    }
    ++count.pages;
    if ((entry & kPresent) == 0) {
      ++count.absent;
      continue;
    }
    const uint64_t pfn = entry & kPfnMask;
    // Without CAP_SYS_ADMIN the kernel reports frame 0 for every page.
    if (pfn == 0) Die("/proc/self/pagemap hides frame numbers (run as root)");
    if (NodeOfPfn(spans, pfn) == node) ++count.on_node;
  }
  close(fd);
  return count;
}

}  // namespace balancing
