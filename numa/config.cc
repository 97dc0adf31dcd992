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

// The knob's value, or null when unset, empty or not to be read.
const char* Get(GetenvFn getenv_fn, const char* name) {
  const char* v = getenv_fn != nullptr ? getenv_fn(name) : nullptr;
  return (v != nullptr && v[0] != '\0') ? v : nullptr;
}

// The index of the knob's value among the '|'-separated `choices`; 0 (the
// first, its default) when unset or not one of them.
int Choice(GetenvFn getenv_fn, const char* knob, const char* choices) {
  const char* v = Get(getenv_fn, knob);
  char first[16] = "";
  char name[16];
  const char* c = choices;
  for (int i = 0; v != nullptr; ++i) {
    int len = 0;
    for (; *c != '|' && *c != '\0'; ++c) {
      if (len + 1 < static_cast<int>(sizeof(name))) name[len++] = *c;
    }
    name[len] = '\0';
    if (StrEq(v, name)) return i;
    if (i == 0) StrCopy(first, sizeof(first), name);
    if (*c++ == '\0') {
      Warn(knob, v, choices, first);
      break;
    }
  }
  return 0;
}

// A number (a size such as "64M" if `size`) no larger than `max`, and 0 or at
// least `min`; `fallback` when unset or not so.
uint64_t Number(GetenvFn getenv_fn, const char* knob, bool size, uint64_t min,
                uint64_t max, uint64_t fallback, const char* expected,
                const char* fallback_name) {
  const char* v = Get(getenv_fn, knob);
  if (v == nullptr) return fallback;
  uint64_t n;
  if ((size ? ParseSize(v, max, &n) : ParseUint(v, max, &n)) &&
      (n == 0 || n >= min)) {
    return n;
  }
  Warn(knob, v, expected, fallback_name);
  return fallback;
}

}  // namespace

Config ParseConfig(GetenvFn getenv_fn) {
  Config c;
  c.mode = static_cast<Mode>(Choice(getenv_fn, "TCMALLOC_NUMA", "auto|0|1"));
  // Off is vanilla: no other knob is read, not even to warn about it.
  if (c.mode == Mode::kOff) getenv_fn = nullptr;
  // Smaller blocks are small objects, which stay with their node's lists.
  c.interleave_above = Number(getenv_fn, "TCMALLOC_NUMA_INTERLEAVE_ABOVE", true,
                              uint64_t{256} << 10, uint64_t{1} << 50, 0,
                              "a size of 256K or more, e.g. 64M", "off");
  c.policy = static_cast<BindPolicy>(
      Choice(getenv_fn, "TCMALLOC_NUMA_POLICY", "local|preferred|bind"));
  c.fake_nodes =
      static_cast<int>(Number(getenv_fn, "TCMALLOC_NUMA_FAKE_NODES", false, 2,
                              kMaxNodes, 0, "2..64, or 0 for none", "none"));
  c.stats = Choice(getenv_fn, "TCMALLOC_NUMA_STATS", "0|1") == 1;
  c.remote_free = static_cast<RemoteFree>(Choice(
      getenv_fn, "TCMALLOC_NUMA_REMOTE_FREE", "owner|owner-lists|local"));
  c.migration = static_cast<Migration>(
      Choice(getenv_fn, "TCMALLOC_NUMA_MIGRATION", "flush|drain"));
  c.balancing = static_cast<Balancing>(
      Choice(getenv_fn, "TCMALLOC_NUMA_BALANCING", "cooperate|ignore"));
  // What the other nodes may keep free while a node's heap grows: 16 MiB, at
  // most 1 TiB.
  c.max_stranded_mb = static_cast<uint32_t>(
      Number(getenv_fn, "TCMALLOC_NUMA_MAX_STRANDED_MB", false, 0,
             uint64_t{1} << 20, 16, "0..1048576", "16"));
  // How long a node's threads take nothing from its heap before its free
  // pages count as stranded (0: at every growth elsewhere); at most an hour.
  c.stranded_idle_ms = static_cast<uint32_t>(
      Number(getenv_fn, "TCMALLOC_NUMA_STRANDED_IDLE_MS", false, 0, 3600 * 1000,
             100, "0..3600000", "100"));
  return c;
}

}  // namespace numa
}  // namespace tcmalloc
