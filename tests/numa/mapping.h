// Test helpers for what the kernel holds for a range: an anonymous mapping
// that unmaps itself, and the memory policy of a range (get_mempolicy).
#ifndef TESTS_NUMA_MAPPING_H_
#define TESTS_NUMA_MAPPING_H_

#include <errno.h>
#include <linux/mempolicy.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace numa_test {

class Mapping {
 public:
  // PROT_NONE maps a range as the page heap reserves its regions.
  explicit Mapping(size_t len, int prot = PROT_READ | PROT_WRITE)
      : p_(mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)),
        len_(len) {}
  ~Mapping() { munmap(p_, len_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  void* get() const { return p_; }
  size_t size() const { return len_; }

 private:
  void* p_;
  size_t len_;
};

// The policy the kernel holds for the range at `addr`, and its node mask.
inline int PolicyAt(void* addr, uint64_t* nodes) {
  int mode = -1;
  unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {};
  long r = syscall(SYS_get_mempolicy, &mode, mask, 1025, addr, MPOL_F_ADDR);
  EXPECT_EQ(r, 0) << errno;
  *nodes = mask[0];
  return mode;
}

}  // namespace numa_test

#endif  // TESTS_NUMA_MAPPING_H_
