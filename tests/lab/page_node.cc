// page_node: places 64 fresh pages in a known way and prints where the kernel
// put them, as one "nodeN=COUNT" word per node seen (and "absent=COUNT" for
// pages move_pages could not find). Independent of the locality probe, so the
// lab tests can check the lab itself and then the probe against it.
//   page_node mbind NODE       mbind(MPOL_BIND, NODE), then write
//   page_node firsttouch NODE  pin this thread to NODE's CPUs, then write (no
//   policy)
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

namespace {

constexpr size_t kPages = 64;
constexpr size_t kPageSize = 4096;

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

// Pins the calling thread to the CPUs listed in /sys for `node` ("0-1,4" form).
void PinToNode(int node) {
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) +
                   "/cpulist");
  std::string list;
  if (!std::getline(in, list) || list.empty()) {
    std::fprintf(stderr, "page_node: node %d has no CPUs\n", node);
    std::exit(1);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (char* item = std::strtok(list.data(), ","); item != nullptr;
       item = std::strtok(nullptr, ",")) {
    int lo = 0, hi = 0;
    const int n = std::sscanf(item, "%d-%d", &lo, &hi);
    if (n < 2) hi = lo;
    for (int cpu = lo; cpu <= hi; ++cpu) CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) Fail("sched_setaffinity");
  sched_yield();  // let the kernel move us before the first touch
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "mbind") != 0 &&
                    std::strcmp(argv[1], "firsttouch") != 0)) {
    std::fprintf(stderr, "usage: page_node mbind|firsttouch NODE\n");
    return 2;
  }
  const int node = std::atoi(argv[2]);
  const size_t bytes = kPages * kPageSize;
  if (std::strcmp(argv[1], "firsttouch") == 0) PinToNode(node);
  char* p = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) Fail("mmap");
  // Debian's THP is "always": a huge page could be faulted elsewhere; keep 4
  // KiB pages.
  madvise(p, bytes, MADV_NOHUGEPAGE);
  if (std::strcmp(argv[1], "mbind") == 0) {
    unsigned long mask[16] = {};
    mask[node / 64] = 1ul << (node % 64);
    if (syscall(SYS_mbind, p, bytes, MPOL_BIND, mask, 1024, 0) != 0)
      Fail("mbind");
  }
  std::memset(p, 1, bytes);  // move_pages only finds written pages
  void* pages[kPages];
  int status[kPages];
  for (size_t i = 0; i < kPages; ++i) pages[i] = p + i * kPageSize;
  if (syscall(SYS_move_pages, 0, kPages, pages, nullptr, status, 0) != 0) {
    Fail("move_pages");
  }
  std::map<int, int> count;
  for (int s : status) ++count[s];
  const char* sep = "";
  for (const auto& [n, c] : count) {
    if (n < 0) {
      std::printf("%sabsent=%d", sep, c);
    } else {
      std::printf("%snode%d=%d", sep, n, c);
    }
    sep = " ";
  }
  std::printf("\n");
  return 0;
}
