// The NUMA topology from sysfs, or a fake one, and the process's cpuset from
// /proc and cgroup v2 files (numa/topology.h).
#include "numa/topology.h"

#include <string.h>

#include "numa/parse.h"

namespace tcmalloc {
namespace numa {
namespace {

// Longest line of /proc/self/status, /proc/self/cgroup or mountinfo that is
// looked at; longer ones are not the lines wanted (or are malformed).
constexpr int kLineBytes = 1024;

// The value of the "key" line of the file at `path` (after the key and any
// blanks) into buf, its length into *len. kMissing if the file cannot be
// opened or has no such line, kMalformed if the line is too long.
FileRead ReadKeyLine(const char* path, const char* key, char* buf, int size,
                     int* len) {
  ByteStream in(path);
  if (!in.ok()) return FileRead::kMissing;
  bool fits;
  int line_len;
  while (ReadLine(&in, buf, size, &fits, &line_len)) {
    const char* value = AfterPrefix(buf, key);
    if (value == nullptr) continue;
    if (!fits) return FileRead::kMalformed;
    while (*value == ' ' || *value == '\t') ++value;
    *len = line_len - static_cast<int>(value - buf);
    memmove(buf, value, *len + 1);
    return FileRead::kFound;
  }
  return in.ok() ? FileRead::kMissing : FileRead::kMalformed;
}

// Undoes mountinfo's octal escapes (a space is "\040") in place.
void Unescape(char* s) {
  char* out = s;
  for (const char* in = s; *in != '\0';) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' &&
        in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
      *out++ = static_cast<char>((in[1] - '0') * 64 + (in[2] - '0') * 8 +
                                 (in[3] - '0'));
      in += 4;
    } else {
      *out++ = *in++;
    }
  }
  *out = '\0';
}

// The cgroup2 mount of root/proc/self/mountinfo: its root inside the
// hierarchy and its mount point, copied into the caller's buffers (each
// kLineBytes). Fields: id parent dev root mountpoint options... - fstype ...
bool FindCgroup2Mount(const char* root, char* mount_root, char* mount_point) {
  Line p;
  p.Add(root).Add("/proc/self/mountinfo");
  if (!p.ok()) return false;
  ByteStream in(p.c_str());
  char line[kLineBytes];
  bool fits;
  while (in.ok() && ReadLine(&in, line, sizeof(line), &fits)) {
    if (!fits) continue;
    char* fields[32];
    int n = 0;
    for (char* s = line; *s != '\0' && n < 32;) {
      while (*s == ' ') *s++ = '\0';
      if (*s == '\0') break;
      fields[n++] = s;
      while (*s != '\0' && *s != ' ') ++s;
    }
    for (int i = 6; i + 1 < n; ++i) {
      if (!StrEq(fields[i], "-")) continue;
      if (!StrEq(fields[i + 1], "cgroup2")) break;
      Unescape(fields[3]);
      Unescape(fields[4]);
      StrCopy(mount_root, kLineBytes, fields[3]);
      StrCopy(mount_point, kLineBytes, fields[4]);
      return true;
    }
  }
  return false;
}

// The process's cgroup v2 directory into *dir; its first *mount_len bytes
// are the mount point, where the walk up stops.
FileRead FindCgroupDir(const char* root, Line* dir, size_t* mount_len) {
  char mount_root[kLineBytes];
  char mount_point[kLineBytes];
  if (!FindCgroup2Mount(root, mount_root, mount_point)) {
    return FileRead::kMissing;
  }
  Line p;
  p.Add(root).Add("/proc/self/cgroup");
  if (!p.ok()) return FileRead::kMissing;
  char cgroup[kLineBytes];
  int len;
  // The unified hierarchy's line: id 0, no controllers.
  const FileRead r =
      ReadKeyLine(p.c_str(), "0::", cgroup, sizeof(cgroup), &len);
  if (r != FileRead::kFound) return r;
  if (cgroup[0] != '/') return FileRead::kMalformed;
  // Below a mount of a subtree (no cgroup namespace) the cgroup's path
  // starts with the subtree's; a cgroup outside it cannot be seen.
  const char* rest = cgroup;
  if (!StrEq(mount_root, "/")) {
    rest = AfterPrefix(cgroup, mount_root);
    if (rest == nullptr || (*rest != '\0' && *rest != '/')) {
      return FileRead::kMissing;
    }
  }
  dir->Add(root).Add(mount_point);
  *mount_len = dir->size();
  if (!StrEq(rest, "/")) dir->Add(rest);
  return dir->ok() ? FileRead::kFound : FileRead::kMissing;
}

using LineParser = bool (*)(const char* line, int len, void* out);

// `file` of the process's cgroup directory or its nearest ancestor that has
// it, parsed by `parse`.
FileRead ReadCgroupFile(const char* root, const char* file, LineParser parse,
                        void* out, Line* where) {
  Line dir;
  size_t mount_len = 0;
  const FileRead r = FindCgroupDir(root, &dir, &mount_len);
  if (r != FileRead::kFound) return r;
  for (;;) {
    Line path;
    path.Add(dir.c_str()).Add("/").Add(file);
    if (!path.ok()) return FileRead::kMissing;
    ByteStream in(path.c_str());
    if (in.ok()) {
      *where = Line();
      where->Add(path.c_str());
      char line[kLineBytes];
      bool fits;
      int len;
      if (!ReadLine(&in, line, sizeof(line), &fits, &len) || !fits ||
          !in.ok()) {
        return FileRead::kMalformed;
      }
      return parse(line, len, out) ? FileRead::kFound : FileRead::kMalformed;
    }
    // Up one directory, but not above the mount point.
    size_t cut = dir.size();
    while (cut > mount_len && dir.c_str()[cut - 1] != '/') --cut;
    if (cut <= mount_len) return FileRead::kMissing;
    dir.Truncate(cut - 1 > mount_len ? cut - 1 : mount_len);
  }
}

bool AddCpuRange(void* ctx, uint32_t lo, uint32_t hi) {
  CpuMask* m = static_cast<CpuMask*>(ctx);
  for (uint64_t cpu = lo; cpu <= hi && cpu < kMaxCpus; ++cpu) {
    m->words[cpu / 64] |= uint64_t{1} << (cpu % 64);
  }
  return true;
}

// An effective cpuset is never empty: an empty list is malformed.
bool ParseCpuLine(const char* line, int len, void* out) {
  CpuMask* cpus = static_cast<CpuMask*>(out);
  memset(cpus, 0, sizeof(*cpus));
  ByteStream in(line, len);
  if (!ParseRanges(&in, AddCpuRange, cpus)) return false;
  for (uint64_t w : cpus->words) {
    if (w != 0) return true;
  }
  return false;
}

bool ParseMemsLine(const char* line, int len, void* out) {
  uint64_t* mems = static_cast<uint64_t*>(out);
  ByteStream in(line, len);
  return ParseNodeMask(&in, mems, nullptr) && *mems != 0;
}

// Parses the node list in file `root`/`name` into *mask. With `missing`, a
// file that cannot be opened sets *missing instead of failing.
bool ReadMaskFile(const char* root, const char* name, uint64_t* mask,
                  int* beyond, bool* missing = nullptr) {
  Line p;
  p.Add(root).Add("/").Add(name);
  if (!p.ok()) return false;
  ByteStream in(p.c_str());
  if (!in.ok() && missing != nullptr) {
    *missing = true;
    return true;
  }
  return in.ok() && ParseNodeMask(&in, mask, beyond);
}

// Parses `root`/nodeN/`file` with parse(ByteStream*).
template <typename Parse>
bool ParseNodeFile(const char* root, int node, const char* file, Parse parse) {
  Line p;
  p.Add(root).Add("/node").AddUint(node).Add("/").Add(file);
  if (!p.ok()) return false;
  ByteStream in(p.c_str());
  return in.ok() && parse(&in);
}

struct CpuCtx {
  Topology* t;
  uint8_t node;
  bool any;
  const CpuMask* allowed;  // null: every CPU
};

bool AddCpus(void* ctx, uint32_t lo, uint32_t hi) {
  CpuCtx* c = static_cast<CpuCtx*>(ctx);
  for (uint64_t cpu = lo; cpu <= hi && cpu < kMaxCpus; ++cpu) {
    // A CPU listed under two nodes means sysfs is inconsistent: give up.
    if (c->t->cpu_node[cpu] != kNoNode) return false;
    if (c->allowed != nullptr && !c->allowed->Has(static_cast<int>(cpu))) {
      c->t->cpus_left_out++;
      continue;
    }
    c->t->cpu_node[cpu] = c->node;
    c->any = true;
  }
  return true;
}

struct RowCtx {
  Topology* t;
  int from;
  int column;        // index among online nodes, ascending
  uint64_t columns;  // online nodes < kMaxNodes not yet given a distance
};

// The kernel prints one distance per online node, in ascending node id order
// (drivers/base/node.c, for_each_online_node), so with sparse ids the k-th
// column is the k-th online node, not node k.
bool AddDistance(void* ctx, uint32_t lo, uint32_t hi) {
  RowCtx* r = static_cast<RowCtx*>(ctx);
  if (lo != hi || lo == 0 || lo > 255) return false;
  if (r->columns != 0) {
    int to = __builtin_ctzll(r->columns);
    r->columns &= r->columns - 1;
    r->t->distance[r->from][to] = static_cast<uint8_t>(lo);
  }
  // Columns of online nodes >= kMaxNodes come last and are ignored.
  r->column++;
  return true;
}

bool ReadNode(const char* root, int node, bool need_meminfo, int online_count,
              const CpuMask* cpus, Topology* t) {
  CpuCtx cpu = {t, static_cast<uint8_t>(node), false, cpus};
  RowCtx row = {t, node, 0, t->online};
  if (!ParseNodeFile(
          root, node, "cpulist",
          [&](ByteStream* in) { return ParseRanges(in, AddCpus, &cpu); }) ||
      !ParseNodeFile(
          root, node, "distance",
          [&](ByteStream* in) { return ParseRanges(in, AddDistance, &row); }) ||
      row.column != online_count) {
    return false;
  }
  if (cpu.any) t->with_cpus |= uint64_t{1} << node;
  uint64_t kb = 0;
  if (need_meminfo &&
      !ParseNodeFile(root, node, "meminfo",
                     [&](ByteStream* in) { return ParseMemTotal(in, &kb); })) {
    return false;
  }
  if (kb > 0) t->memory |= uint64_t{1} << node;
  return true;
}

// Nearest node to `from` among `candidates` (ties by lowest id), or -1.
int Nearest(const Topology& t, int from, uint64_t candidates) {
  int best = -1;
  for (uint64_t m = candidates; m != 0; m &= m - 1) {
    int to = __builtin_ctzll(m);
    if (best < 0 || t.distance[from][to] < t.distance[from][best]) best = to;
  }
  return best;
}

}  // namespace

void ClearTopology(Topology* t) {
  memset(t, 0, sizeof(*t));
  memset(t->cpu_node, kNoNode, sizeof(t->cpu_node));
}

bool ReadSysfsTopology(const char* root, uint64_t allowed, Topology* t,
                       const CpuMask* cpus) {
  ClearTopology(t);
  t->allowed = allowed;
  int beyond = 0;
  if (!ReadMaskFile(root, "online", &t->online, &beyond)) return false;
  if (t->online == 0) return false;
  const int online_count = PopCount(t->online) + beyond;
  // has_memory (N_MEMORY) is there since Linux 2.6.35; meminfo is the
  // fallback for trees without it.
  bool need_meminfo = false;
  if (!ReadMaskFile(root, "has_memory", &t->memory, nullptr, &need_meminfo)) {
    return false;
  }
  for (uint64_t m = t->online; m != 0; m &= m - 1) {
    if (!ReadNode(root, __builtin_ctzll(m), need_meminfo, online_count, cpus,
                  t)) {
      return false;
    }
  }
  t->memory &= t->online;
  return true;
}

void BuildFakeTopology(int nodes, Topology* t) {
  ClearTopology(t);
  const uint64_t all = nodes >= 64 ? ~uint64_t{0} : (uint64_t{1} << nodes) - 1;
  t->online = t->memory = t->with_cpus = t->allowed = all;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    t->cpu_node[cpu] = static_cast<uint8_t>(cpu % nodes);
  }
  for (int i = 0; i < nodes; ++i) {
    for (int j = 0; j < nodes; ++j) {
      int d = 10 + 10 * (i > j ? i - j : j - i);
      t->distance[i][j] = static_cast<uint8_t>(d > 254 ? 254 : d);
    }
  }
}

bool FinishTopology(Topology* t) {
  t->usable = t->memory & t->allowed & t->online;
  if (t->usable == 0) return false;
  // A thread's node should be a node with CPUs: a memory-only (CXL/HBM-like)
  // node only serves as a fallback, unless it is all the process may use.
  uint64_t cpu_nodes = t->usable & t->with_cpus;
  if (cpu_nodes == 0) cpu_nodes = t->usable;
  t->cpu_nodes = cpu_nodes;

  uint8_t serving[kMaxNodes];
  for (int n = 0; n < kMaxNodes; ++n) {
    int h = HasNode(cpu_nodes, n) ? n : Nearest(*t, n, cpu_nodes);
    serving[n] = static_cast<uint8_t>(h);
  }
  t->default_node = static_cast<uint8_t>(__builtin_ctzll(cpu_nodes));
  t->proxies = 0;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    uint8_t n = t->cpu_node[cpu];
    t->cpu_node[cpu] = (n == kNoNode) ? t->default_node : serving[n];
    if (n != kNoNode && serving[n] != n) {
      t->proxies |= uint64_t{1} << serving[n];
    }
  }

  // Fallback order: insertion sort of the other usable nodes by distance;
  // only a strictly smaller distance moves a node forward, so ties stay by id.
  for (int n = 0; n < kMaxNodes; ++n) {
    int len = 0;
    for (uint64_t m = t->usable & ~(uint64_t{1} << n); m != 0; m &= m - 1) {
      int to = __builtin_ctzll(m);
      int i = len++;
      while (i > 0 &&
             t->distance[n][to] < t->distance[n][t->fallback[n][i - 1]]) {
        t->fallback[n][i] = t->fallback[n][i - 1];
        --i;
      }
      t->fallback[n][i] = static_cast<uint8_t>(to);
    }
    t->fallback_len[n] = static_cast<uint8_t>(len);
  }
  return true;
}

FileRead ReadStatusMems(const char* root, uint64_t* mems, Line* where) {
  *where = Line();
  where->Add(root).Add("/proc/self/status");
  if (!where->ok()) return FileRead::kMissing;
  char value[kLineBytes];
  int len;
  const FileRead r = ReadKeyLine(where->c_str(), "Mems_allowed_list:", value,
                                 sizeof(value), &len);
  if (r != FileRead::kFound) return r;
  return ParseMemsLine(value, len, mems) ? FileRead::kFound
                                         : FileRead::kMalformed;
}

FileRead ReadCgroupCpus(const char* root, CpuMask* cpus, Line* where) {
  return ReadCgroupFile(root, "cpuset.cpus.effective", ParseCpuLine, cpus,
                        where);
}

FileRead ReadCgroupMems(const char* root, uint64_t* mems, Line* where) {
  return ReadCgroupFile(root, "cpuset.mems.effective", ParseMemsLine, mems,
                        where);
}

}  // namespace numa
}  // namespace tcmalloc
