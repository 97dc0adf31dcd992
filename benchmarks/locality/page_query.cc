#include "benchmarks/locality/page_query.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace locality {
namespace {

constexpr uint64_t kPageShift = 12;
constexpr uint64_t kPresent = uint64_t{1} << 63;
constexpr uint64_t kFrameMask = (uint64_t{1} << 55) - 1;
constexpr int kMaxNodes = 64;
// Memory blocks are 128 MiB or more on x86-64: this covers 8 TiB of frames.
constexpr size_t kMaxBlocks = 1 << 16;

constexpr const char* kMovePages = "move_pages";
constexpr const char* kPagemap = "pagemap";
const char* g_method;
bool g_force_pagemap;
int g_pagemap_fd = -1;
uint64_t g_block_bytes;
// Node of each memory block + 1 (0: not looked up yet; -1: no node).
int8_t g_block_node[kMaxBlocks];

// Reads a whole small file into buf (NUL-terminated); false if it cannot.
bool ReadSmallFile(const char* path, char* buf, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

bool ReadBlockSize() {
  if (__atomic_load_n(&g_block_bytes, __ATOMIC_RELAXED) != 0) return true;
  char buf[64];
  if (!ReadSmallFile("/sys/devices/system/memory/block_size_bytes", buf,
                     sizeof(buf))) {
    return false;
  }
  const uint64_t bytes = std::strtoull(buf, nullptr, 16);
  __atomic_store_n(&g_block_bytes, bytes, __ATOMIC_RELAXED);
  return bytes != 0;
}

// The node of memory block `block`, or -1.
int BlockNode(uint64_t block) {
  if (block >= kMaxBlocks) return -1;
  if (__atomic_load_n(&g_block_node[block], __ATOMIC_RELAXED) == 0) {
    int node = -1;
    for (int n = 0; n < kMaxNodes && node < 0; ++n) {
      char path[96];
      std::snprintf(path, sizeof(path),
                    "/sys/devices/system/memory/memory%llu/node%d",
                    static_cast<unsigned long long>(block), n);
      if (access(path, F_OK) == 0) node = n;
    }
    __atomic_store_n(&g_block_node[block], static_cast<int8_t>(node + 1),
                     __ATOMIC_RELAXED);
  }
  return __atomic_load_n(&g_block_node[block], __ATOMIC_RELAXED) - 1;
}

bool FromPagemap(size_t n, void* const* pages, int* status) {
  if (!ReadBlockSize()) return false;
  if (__atomic_load_n(&g_pagemap_fd, __ATOMIC_ACQUIRE) < 0) {
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    int none = -1;  // several threads may race here: one fd wins
    if (!__atomic_compare_exchange_n(&g_pagemap_fd, &none, fd, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      close(fd);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t vpn = reinterpret_cast<uintptr_t>(pages[i]) >> kPageShift;
    uint64_t entry;
    if (pread(g_pagemap_fd, &entry, sizeof(entry), vpn * sizeof(entry)) !=
        sizeof(entry)) {
      return false;
    }
    if ((entry & kPresent) == 0) {
      status[i] = -ENOENT;
      continue;
    }
    const uint64_t frame = entry & kFrameMask;
    if (frame == 0) {  // frame numbers hidden: not CAP_SYS_ADMIN
      errno = EPERM;
      return false;
    }
    const int node =
        BlockNode((frame << kPageShift) /
                  __atomic_load_n(&g_block_bytes, __ATOMIC_RELAXED));
    status[i] = node >= 0 ? node : -ENODEV;
  }
  return true;
}

}  // namespace

bool QueryPageNodes(size_t n, void* const* pages, int* status) {
  if (!g_force_pagemap) {
    // nodes == NULL: a query, not a migration.
    if (syscall(SYS_move_pages, 0, n, pages, nullptr, status, 0) == 0) {
      __atomic_store_n(&g_method, kMovePages, __ATOMIC_RELAXED);
      return true;
    }
    if (errno != EPERM && errno != ENOSYS) return false;
  }
  if (!FromPagemap(n, pages, status)) return false;
  __atomic_store_n(&g_method, kPagemap, __ATOMIC_RELAXED);
  return true;
}

const char* PageQueryMethod() {
  return __atomic_load_n(&g_method, __ATOMIC_RELAXED);
}

void ForcePagemapForTest(bool on) { g_force_pagemap = on; }

}  // namespace locality
