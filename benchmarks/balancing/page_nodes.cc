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

// The pagemap entry of virtual page `page` (fd: /proc/self/pagemap).
uint64_t PagemapEntry(int fd, uint64_t page) {
  uint64_t entry = 0;
  if (pread(fd, &entry, sizeof(entry), page * sizeof(entry)) != sizeof(entry)) {
    Die("cannot read /proc/self/pagemap");
  }
  return entry;
}

// [begin, end) of each mapping whose VmFlags say "nh".
std::vector<std::pair<uint64_t, uint64_t>> NoHugePageRanges() {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  std::ifstream smaps("/proc/self/smaps");
  uint64_t begin = 0, end = 0;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long b, e;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &b, &e) == 2) {
      begin = b;
      end = e;
    } else if (line.rfind("VmFlags:", 0) == 0 &&
               (line + " ").find(" nh ") != std::string::npos) {
      ranges.push_back({begin, end});
    }
  }
  return ranges;
}

}  // namespace

NoHugePageMappings CountNoHugePageMappings() {
  const auto ranges = NoHugePageRanges();
  NoHugePageMappings count;
  count.mappings = ranges.size();
  std::ifstream maps("/proc/self/numa_maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long long start;
    char policy[64];
    if (std::sscanf(line.c_str(), "%llx %63s", &start, policy) != 2) continue;
    for (const auto& [b, e] : ranges) {
      if (start == b && std::string(policy) != "default") ++count.with_policy;
    }
  }
  return count;
}

PageNodes NoHugePageNodes() {
  // The mappings first, then their pages: reading pagemap maps nothing.
  const auto ranges = NoHugePageRanges();
  const std::vector<ZoneSpan> spans = ReadZoneSpans();
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) Die("cannot open /proc/self/pagemap");
  PageNodes nodes;
  for (const auto& [b, e] : ranges) {
    for (uint64_t page = b / kPageSize; page < e / kPageSize; ++page) {
      const uint64_t entry = PagemapEntry(fd, page);
      if ((entry & kPresent) == 0) continue;
      const uint64_t pfn = entry & kPfnMask;
      if (pfn == 0) Die("/proc/self/pagemap hides frame numbers (run as root)");
      nodes.push_back({page, NodeOfPfn(spans, pfn)});
    }
  }
  close(fd);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

Moves CountMoves(const PageNodes& before, const PageNodes& after) {
  Moves m;
  auto a = after.begin();
  for (const auto& [page, node] : before) {
    while (a != after.end() && a->first < page) ++a;
    if (a == after.end() || a->first != page) continue;
    ++m.pages;
    if (a->second != node) ++m.moved;
  }
  return m;
}

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
    const uint64_t entry = PagemapEntry(fd, page);
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
