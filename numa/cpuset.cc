// The process's cpuset from /proc and cgroup v2 files (numa/cpuset.h).
#include "numa/cpuset.h"

#include <string.h>

#include "numa/byte_stream.h"
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

}  // namespace

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
