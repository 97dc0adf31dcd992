// Parsing the TCMALLOC_NUMA* knobs (numa/config.h): one warning line for a
// value it cannot use, then the documented default.
#include "numa/config.h"

#include "numa/parse.h"

namespace tcmalloc {
namespace numa {
namespace {

// Longest part of a bad value echoed back; keeps the warning one short line.
constexpr int kMaxEcho = 40;

void Warn(const char* name, const char* value, const char* expected,
          const char* fallback) {
  Line()
      .Add("tcmalloc: ignoring ")
      .Add(name)
      .Add("=")
      .AddPrintable(value, kMaxEcho)
      .Add(" (expected ")
      .Add(expected)
      .Add("); using ")
      .Add(fallback)
      .WriteToStderr();
}

// The knob's value, or null when unset or empty.
const char* Get(GetenvFn getenv_fn, const char* name) {
  const char* v = getenv_fn(name);
  return (v != nullptr && v[0] != '\0') ? v : nullptr;
}

Mode ParseMode(const char* v) {
  if (v == nullptr || StrEq(v, "auto")) return Mode::kAuto;
  if (StrEq(v, "0")) return Mode::kOff;
  if (StrEq(v, "1")) return Mode::kOn;
  Warn("TCMALLOC_NUMA", v, "auto|0|1", "auto");
  return Mode::kAuto;
}

BindPolicy ParsePolicy(const char* v) {
  if (v == nullptr || StrEq(v, "local")) return BindPolicy::kLocal;
  if (StrEq(v, "preferred")) return BindPolicy::kPreferred;
  if (StrEq(v, "bind")) return BindPolicy::kBind;
  Warn("TCMALLOC_NUMA_POLICY", v, "local|preferred|bind", "local");
  return BindPolicy::kLocal;
}

int ParseFakeNodes(const char* v) {
  if (v == nullptr) return 0;
  uint64_t n;
  if (ParseUint(v, kMaxNodes, &n) && (n == 0 || n >= 2)) {
    return static_cast<int>(n);
  }
  Warn("TCMALLOC_NUMA_FAKE_NODES", v, "2..64, or 0 for none", "none");
  return 0;
}

bool ParseStats(const char* v) {
  if (v == nullptr || StrEq(v, "0")) return false;
  if (StrEq(v, "1")) return true;
  Warn("TCMALLOC_NUMA_STATS", v, "0|1", "0");
  return false;
}

RemoteFree ParseRemoteFree(const char* v) {
  if (v == nullptr || StrEq(v, "owner")) return RemoteFree::kOwner;
  if (StrEq(v, "owner-lists")) return RemoteFree::kOwnerLists;
  if (StrEq(v, "local")) return RemoteFree::kLocal;
  Warn("TCMALLOC_NUMA_REMOTE_FREE", v, "owner|owner-lists|local", "owner");
  return RemoteFree::kOwner;
}

Migration ParseMigration(const char* v) {
  if (v == nullptr || StrEq(v, "flush")) return Migration::kFlush;
  if (StrEq(v, "drain")) return Migration::kDrain;
  Warn("TCMALLOC_NUMA_MIGRATION", v, "flush|drain", "flush");
  return Migration::kFlush;
}

Balancing ParseBalancing(const char* v) {
  if (v == nullptr || StrEq(v, "cooperate")) return Balancing::kCooperate;
  if (StrEq(v, "ignore")) return Balancing::kIgnore;
  Warn("TCMALLOC_NUMA_BALANCING", v, "cooperate|ignore", "cooperate");
  return Balancing::kCooperate;
}

uint32_t ParseMaxStrandedMb(const char* v) {
  if (v == nullptr) return kDefaultMaxStrandedMb;
  uint64_t mb;
  if (ParseUint(v, kMaxStrandedMbLimit, &mb)) return static_cast<uint32_t>(mb);
  Warn("TCMALLOC_NUMA_MAX_STRANDED_MB", v, "0..1048576", "16");
  return kDefaultMaxStrandedMb;
}

uint32_t ParseStrandedIdleMs(const char* v) {
  if (v == nullptr) return kDefaultStrandedIdleMs;
  uint64_t ms;
  if (ParseUint(v, kStrandedIdleMsLimit, &ms)) return static_cast<uint32_t>(ms);
  Warn("TCMALLOC_NUMA_STRANDED_IDLE_MS", v, "0..3600000", "100");
  return kDefaultStrandedIdleMs;
}

// Blocks this large or more can be interleaved: smaller ones are small
// objects, which stay with their node's lists.
constexpr uint64_t kMinInterleaveAbove = uint64_t{256} << 10;

uint64_t ParseInterleaveAbove(const char* v) {
  if (v == nullptr) return 0;
  uint64_t bytes;
  if (ParseSize(v, uint64_t{1} << 50, &bytes) &&
      (bytes == 0 || bytes >= kMinInterleaveAbove)) {
    return bytes;
  }
  Warn("TCMALLOC_NUMA_INTERLEAVE_ABOVE", v, "a size of 256K or more, e.g. 64M",
       "off");
  return 0;
}

}  // namespace

Config ParseConfig(GetenvFn getenv_fn) {
  Config c = kDefaultConfig;
  if (getenv_fn == nullptr) return c;
  c.mode = ParseMode(Get(getenv_fn, "TCMALLOC_NUMA"));
  // Off is vanilla: no other knob is read, not even to warn about it.
  if (c.mode == Mode::kOff) return c;
  c.interleave_above =
      ParseInterleaveAbove(Get(getenv_fn, "TCMALLOC_NUMA_INTERLEAVE_ABOVE"));
  c.policy = ParsePolicy(Get(getenv_fn, "TCMALLOC_NUMA_POLICY"));
  c.fake_nodes = ParseFakeNodes(Get(getenv_fn, "TCMALLOC_NUMA_FAKE_NODES"));
  c.stats = ParseStats(Get(getenv_fn, "TCMALLOC_NUMA_STATS"));
  c.remote_free = ParseRemoteFree(Get(getenv_fn, "TCMALLOC_NUMA_REMOTE_FREE"));
  c.migration = ParseMigration(Get(getenv_fn, "TCMALLOC_NUMA_MIGRATION"));
  c.balancing = ParseBalancing(Get(getenv_fn, "TCMALLOC_NUMA_BALANCING"));
  c.max_stranded_mb =
      ParseMaxStrandedMb(Get(getenv_fn, "TCMALLOC_NUMA_MAX_STRANDED_MB"));
  c.stranded_idle_ms =
      ParseStrandedIdleMs(Get(getenv_fn, "TCMALLOC_NUMA_STRANDED_IDLE_MS"));
  return c;
}

}  // namespace numa
}  // namespace tcmalloc
