// What the process may use, read from files: the memory nodes of its cpuset
// (/proc/self/status) and its cgroup v2 cpuset (cpuset.cpus.effective,
// cpuset.mems.effective). Files, because a container's default seccomp
// profile refuses get_mempolicy (docs/tuning.md, "Containers"), and because
// only a cpuset bounds where every thread may ever run (another thread may
// widen its own affinity).
//
// Malloc-free (ByteStream, Line): Init runs inside malloc. Every path is
// taken under `root`, "" on a real system; the unit tests pass a fake tree.
#ifndef NUMA_TCMALLOC_NUMA_CPUSET_H_
#define NUMA_TCMALLOC_NUMA_CPUSET_H_

#include <stdint.h>

#include "numa/line.h"
#include "numa/nodes.h"

#pragma GCC visibility push(hidden)

namespace tcmalloc {
namespace numa {

// How a read went. A missing file is normal (no cgroup v2, no cpuset
// controller there); a malformed one is not.
enum class FileRead : uint8_t { kFound, kMissing, kMalformed };

// CPUs 0..kMaxCpus-1, bit c for CPU c.
struct CpuMask {
  uint64_t words[kMaxCpus / 64];
  bool Has(int cpu) const {
    return cpu >= 0 && cpu < kMaxCpus && ((words[cpu / 64] >> (cpu % 64)) & 1);
  }
};

// Mems_allowed_list of root/proc/self/status, what
// get_mempolicy(MPOL_F_MEMS_ALLOWED) returns. *where names the file read.
FileRead ReadStatusMems(const char* root, uint64_t* mems, Line* where);

// cpuset.cpus.effective and cpuset.mems.effective of the process's cgroup
// v2 directory, or of its nearest ancestor that has the file, found from
// root/proc/self/cgroup and the cgroup2 mount of root/proc/self/mountinfo.
// kMissing when there is no cgroup2 mount, the cgroup lies outside it, or no
// directory up to the mount has the file. *where names the file read.
FileRead ReadCgroupCpus(const char* root, CpuMask* cpus, Line* where);
FileRead ReadCgroupMems(const char* root, uint64_t* mems, Line* where);

}  // namespace numa
}  // namespace tcmalloc

#pragma GCC visibility pop

#endif  // NUMA_TCMALLOC_NUMA_CPUSET_H_
