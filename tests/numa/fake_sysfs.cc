#include "tests/numa/fake_sysfs.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace numa_test {
namespace {

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      mkdir(path.substr(0, i).c_str(), 0755);
    }
  }
}

std::vector<std::pair<std::string, std::string>>& Env() {
  static auto* env = new std::vector<std::pair<std::string, std::string>>;
  return *env;
}

}  // namespace

void WriteFile(const std::string& path, const std::string& contents) {
  MakeDirs(path.substr(0, path.rfind('/')));
  std::ofstream out(path, std::ios::trunc);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string WriteFakeSysfs(const std::string& name,
                           const std::vector<FakeNode>& nodes,
                           const FakeSysfsOptions& options) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string root = std::string(tmp ? tmp : "/tmp") + "/sysfs-" + name;
  std::string online, has_memory;
  for (const FakeNode& n : nodes) {
    std::string dir = root + "/node" + std::to_string(n.id);
    WriteFile(dir + "/cpulist", n.cpulist + "\n");
    WriteFile(dir + "/distance", n.distance + "\n");
    WriteFile(dir + "/meminfo",
              "Node " + std::to_string(n.id) + " MemTotal:       " +
                  std::to_string(n.mem_total_kb) + " kB\nNode " +
                  std::to_string(n.id) + " MemFree:        1 kB\n");
    online += (online.empty() ? "" : ",") + std::to_string(n.id);
    if (n.mem_total_kb > 0) {
      has_memory += (has_memory.empty() ? "" : ",") + std::to_string(n.id);
    }
  }
  WriteFile(root + "/online",
            (options.online.empty() ? online : options.online) + "\n");
  if (options.write_has_memory) {
    WriteFile(root + "/has_memory", has_memory + "\n");
  } else {
    unlink((root + "/has_memory").c_str());
  }
  return root;
}

void SetFakeEnv(std::vector<std::pair<std::string, std::string>> env) {
  Env() = std::move(env);
}

const char* FakeGetenv(const char* name) {
  for (const auto& kv : Env()) {
    if (kv.first == name) return kv.second.c_str();
  }
  return nullptr;
}

}  // namespace numa_test
