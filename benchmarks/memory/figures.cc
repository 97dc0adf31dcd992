#include "benchmarks/memory/figures.h"

#include <sys/resource.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Weak, so that the probes link without an allocator and find the
// LD_PRELOADed one's at run time; under glibc it stays null. The C entry
// point, because MallocExtension::instance() would be a strong reference.
extern "C" int MallocExtension_GetNumericProperty(const char* property,
                                                  size_t* value)
    __attribute__((weak));

namespace memory_probe {
namespace {

long long peak_heap = -1;  // the largest SampleHeap() value; one thread samples

}  // namespace

long long Property(const char* name) {
  size_t value = 0;
  if (MallocExtension_GetNumericProperty == nullptr ||
      MallocExtension_GetNumericProperty(name, &value) == 0) {
    return -1;
  }
  return static_cast<long long>(value);
}

std::string Mib(long long bytes) {
  if (bytes < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", bytes / (1024.0 * 1024.0));
  return text;
}

long long HeapBytes() { return Property("generic.heap_size"); }

long long SampleHeap() {
  const long long heap = HeapBytes();
  if (heap > peak_heap) peak_heap = heap;
  return heap;
}

long PeakRssKib() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
  return usage.ru_maxrss;  // KiB on Linux
}

long CurrentRssKib() {
  // fopen's FILE is one small block, freed at once: it moves no figure.
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      kib = std::strtol(line + 6, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

void PrintResult() {
  const long long end_heap = SampleHeap();
  const long long heap = peak_heap;
  const long peak_kib = PeakRssKib();
  const long rss_kib = CurrentRssKib();
  const long long active = Property("tcmalloc.numa.active");
  const long long nodes = Property("tcmalloc.numa.num_nodes");
  const std::string heap_mib = Mib(heap);
  const std::string end_mib = Mib(end_heap);
  const std::string peak_mib = Mib(peak_kib < 0 ? -1 : peak_kib * 1024LL);
  const std::string rss_mib = Mib(rss_kib < 0 ? -1 : rss_kib * 1024LL);
  char heap_bytes[32] = "-", active_text[32] = "-", nodes_text[32] = "-";
  if (heap >= 0) std::snprintf(heap_bytes, sizeof(heap_bytes), "%lld", heap);
  if (active >= 0)
    std::snprintf(active_text, sizeof(active_text), "%lld", active);
  if (nodes >= 0) std::snprintf(nodes_text, sizeof(nodes_text), "%lld", nodes);
  std::printf(
      "heap_mib=%s heap_end_mib=%s peak_rss_mib=%s rss_mib=%s heap_bytes=%s "
      "peak_rss_kib=%ld numa_active=%s numa_nodes=%s\n",
      heap_mib.c_str(), end_mib.c_str(), peak_mib.c_str(), rss_mib.c_str(),
      heap_bytes, peak_kib, active_text, nodes_text);
  if (heap >= 0)
    std::printf("METRIC heap_size %s MiB lower\n", heap_mib.c_str());
  std::printf("METRIC peak_rss %s MiB lower\n", peak_mib.c_str());
  std::fflush(stdout);
}

}  // namespace memory_probe
