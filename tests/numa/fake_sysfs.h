// Writes fake /sys/devices/system/node trees for the topology tests.
#ifndef NUMA_TCMALLOC_TESTS_NUMA_FAKE_SYSFS_H_
#define NUMA_TCMALLOC_TESTS_NUMA_FAKE_SYSFS_H_

#include <string>
#include <vector>

namespace numa_test {

struct FakeNode {
  int id;
  std::string cpulist;   // "" for a memory-only node
  std::string distance;  // the row as the kernel prints it, e.g. "10 20"
  long mem_total_kb;     // 0 for a CPU-only node
};

struct FakeSysfsOptions {
  bool write_has_memory = true;  // false: the layer must read meminfo
  std::string online;            // "" = derived from the nodes
};

// Creates a fresh directory under $TEST_TMPDIR named `name` holding the tree
// and returns its path.
std::string WriteFakeSysfs(const std::string& name,
                           const std::vector<FakeNode>& nodes,
                           const FakeSysfsOptions& options = {});

// Writes `contents` to `path`, creating parent directories.
void WriteFile(const std::string& path, const std::string& contents);

// Lets a test read knobs from a table instead of the process environment.
// FakeGetenv is a plain function, as Init requires.
void SetFakeEnv(std::vector<std::pair<std::string, std::string>> env);
const char* FakeGetenv(const char* name);

}  // namespace numa_test

#endif  // NUMA_TCMALLOC_TESTS_NUMA_FAKE_SYSFS_H_
