#include "numa/config.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/numa/fake_sysfs.h"
#include "tests/numa/stderr_capture.h"

namespace tcmalloc {
namespace numa {
namespace {

using numa_test::CaptureStderr;
using numa_test::FakeGetenv;
using numa_test::SetFakeEnv;

// Parses with the given environment; *warnings gets what went to stderr.
Config ParseWith(std::vector<std::pair<std::string, std::string>> env,
                 std::string* warnings) {
  SetFakeEnv(std::move(env));
  Config c;
  *warnings = CaptureStderr([&] { c = ParseConfig(FakeGetenv); });
  return c;
}

int Lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

void ExpectDefault(const Config& c) {
  EXPECT_EQ(c.mode, Mode::kAuto);
  EXPECT_EQ(c.policy, BindPolicy::kLocal);
  EXPECT_EQ(c.fake_nodes, 0);
  EXPECT_FALSE(c.stats);
  EXPECT_EQ(c.remote_free, RemoteFree::kOwner);
  EXPECT_EQ(c.migration, Migration::kFlush);
  EXPECT_EQ(c.balancing, Balancing::kCooperate);
  EXPECT_EQ(c.max_stranded_mb, 16u);
  EXPECT_EQ(c.stranded_idle_ms, 100u);
}

TEST(Config, DefaultsWhenUnset) {
  std::string w;
  ExpectDefault(ParseWith({}, &w));
  EXPECT_EQ(w, "");
  ExpectDefault(ParseConfig(nullptr));
}

TEST(Config, EmptyValuesMeanUnset) {
  std::string w;
  ExpectDefault(ParseWith({{"TCMALLOC_NUMA", ""},
                           {"TCMALLOC_NUMA_POLICY", ""},
                           {"TCMALLOC_NUMA_FAKE_NODES", ""},
                           {"TCMALLOC_NUMA_STATS", ""},
                           {"TCMALLOC_NUMA_REMOTE_FREE", ""},
                           {"TCMALLOC_NUMA_MIGRATION", ""},
                           {"TCMALLOC_NUMA_BALANCING", ""},
                           {"TCMALLOC_NUMA_MAX_STRANDED_MB", ""}},
                          &w));
  EXPECT_EQ(w, "");
}

TEST(Config, AcceptsEveryDocumentedValue) {
  std::string w;
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA", "auto"}}, &w).mode, Mode::kAuto);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA", "0"}}, &w).mode, Mode::kOff);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA", "1"}}, &w).mode, Mode::kOn);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_POLICY", "preferred"}}, &w).policy,
            BindPolicy::kPreferred);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_POLICY", "bind"}}, &w).policy,
            BindPolicy::kBind);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_POLICY", "local"}}, &w).policy,
            BindPolicy::kLocal);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_FAKE_NODES", "2"}}, &w).fake_nodes, 2);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_FAKE_NODES", "64"}}, &w).fake_nodes, 64);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_FAKE_NODES", "0"}}, &w).fake_nodes, 0);
  EXPECT_TRUE(ParseWith({{"TCMALLOC_NUMA_STATS", "1"}}, &w).stats);
  EXPECT_FALSE(ParseWith({{"TCMALLOC_NUMA_STATS", "0"}}, &w).stats);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_REMOTE_FREE", "owner"}}, &w).remote_free,
            RemoteFree::kOwner);
  EXPECT_EQ(
      ParseWith({{"TCMALLOC_NUMA_REMOTE_FREE", "owner-lists"}}, &w).remote_free,
      RemoteFree::kOwnerLists);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_REMOTE_FREE", "local"}}, &w).remote_free,
            RemoteFree::kLocal);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_MIGRATION", "flush"}}, &w).migration,
            Migration::kFlush);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_MIGRATION", "drain"}}, &w).migration,
            Migration::kDrain);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_BALANCING", "cooperate"}}, &w).balancing,
            Balancing::kCooperate);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_BALANCING", "ignore"}}, &w).balancing,
            Balancing::kIgnore);
  EXPECT_EQ(
      ParseWith({{"TCMALLOC_NUMA_MAX_STRANDED_MB", "0"}}, &w).max_stranded_mb,
      0u);
  EXPECT_EQ(
      ParseWith({{"TCMALLOC_NUMA_MAX_STRANDED_MB", "512"}}, &w).max_stranded_mb,
      512u);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_MAX_STRANDED_MB", "1048576"}}, &w)
                .max_stranded_mb,
            1048576u);
  EXPECT_EQ(
      ParseWith({{"TCMALLOC_NUMA_STRANDED_IDLE_MS", "0"}}, &w).stranded_idle_ms,
      0u);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_STRANDED_IDLE_MS", "250"}}, &w)
                .stranded_idle_ms,
            250u);
  EXPECT_EQ(w, "");
}

struct BadValue {
  const char* name;
  const char* value;
  const char* warning;
};

TEST(Config, BadValueWarnsOnceAndUsesDefault) {
  const BadValue cases[] = {
      {"TCMALLOC_NUMA", "yes",
       "tcmalloc: ignoring TCMALLOC_NUMA=yes (expected auto|0|1); using "
       "auto\n"},
      {"TCMALLOC_NUMA_POLICY", "foo",
       "tcmalloc: ignoring TCMALLOC_NUMA_POLICY=foo (expected "
       "local|preferred|bind); using local\n"},
      {"TCMALLOC_NUMA_POLICY", "BIND",
       "tcmalloc: ignoring TCMALLOC_NUMA_POLICY=BIND (expected "
       "local|preferred|bind); using local\n"},
      {"TCMALLOC_NUMA_FAKE_NODES", "1",
       "tcmalloc: ignoring TCMALLOC_NUMA_FAKE_NODES=1 (expected 2..64, or 0 "
       "for none); using none\n"},
      {"TCMALLOC_NUMA_FAKE_NODES", "65",
       "tcmalloc: ignoring TCMALLOC_NUMA_FAKE_NODES=65 (expected 2..64, or 0 "
       "for none); using none\n"},
      {"TCMALLOC_NUMA_FAKE_NODES", "4x",
       "tcmalloc: ignoring TCMALLOC_NUMA_FAKE_NODES=4x (expected 2..64, or 0 "
       "for none); using none\n"},
      {"TCMALLOC_NUMA_STRANDED_IDLE_MS", "-1",
       "tcmalloc: ignoring TCMALLOC_NUMA_STRANDED_IDLE_MS=-1 (expected "
       "0..3600000); using 100\n"},
      {"TCMALLOC_NUMA_STATS", "true",
       "tcmalloc: ignoring TCMALLOC_NUMA_STATS=true (expected 0|1); using "
       "0\n"},
      {"TCMALLOC_NUMA_REMOTE_FREE", "remote",
       "tcmalloc: ignoring TCMALLOC_NUMA_REMOTE_FREE=remote (expected "
       "owner|owner-lists|local); using owner\n"},
      {"TCMALLOC_NUMA_MIGRATION", "never",
       "tcmalloc: ignoring TCMALLOC_NUMA_MIGRATION=never (expected "
       "flush|drain); using flush\n"},
      {"TCMALLOC_NUMA_BALANCING", "off",
       "tcmalloc: ignoring TCMALLOC_NUMA_BALANCING=off (expected "
       "cooperate|ignore); using cooperate\n"},
      {"TCMALLOC_NUMA_MAX_STRANDED_MB", "-1",
       "tcmalloc: ignoring TCMALLOC_NUMA_MAX_STRANDED_MB=-1 (expected "
       "0..1048576); using 16\n"},
      {"TCMALLOC_NUMA_MAX_STRANDED_MB", "1048577",
       "tcmalloc: ignoring TCMALLOC_NUMA_MAX_STRANDED_MB=1048577 (expected "
       "0..1048576); using 16\n"},
      {"TCMALLOC_NUMA_MAX_STRANDED_MB", "16M",
       "tcmalloc: ignoring TCMALLOC_NUMA_MAX_STRANDED_MB=16M (expected "
       "0..1048576); using 16\n"},
  };
  for (const BadValue& bad : cases) {
    SCOPED_TRACE(std::string(bad.name) + "=" + bad.value);
    std::string w;
    ExpectDefault(ParseWith({{bad.name, bad.value}}, &w));
    EXPECT_EQ(w, bad.warning);
    EXPECT_EQ(Lines(w), 1);
  }
}

TEST(Config, OneLinePerBadKnob) {
  std::string w;
  Config c = ParseWith({{"TCMALLOC_NUMA_POLICY", "x"},
                        {"TCMALLOC_NUMA_STATS", "y"},
                        {"TCMALLOC_NUMA_FAKE_NODES", "3"}},
                       &w);
  EXPECT_EQ(Lines(w), 2);
  EXPECT_EQ(c.fake_nodes, 3);  // good knobs still apply
}

TEST(Config, LongOrControlValuesStayOneShortLine) {
  std::string w;
  ParseWith({{"TCMALLOC_NUMA_POLICY", "a\nb" + std::string(100, 'z')}}, &w);
  EXPECT_EQ(Lines(w), 1);
  EXPECT_EQ(w.back(), '\n');
  EXPECT_NE(w.find("=a?bzzz"), std::string::npos) << w;
  EXPECT_NE(w.find("z... (expected"), std::string::npos) << w;
  EXPECT_LT(w.size(), 160u);
}

// TCMALLOC_NUMA=0 is vanilla: other knobs are not even read, so a bad one
// prints nothing and a good one has no effect.
TEST(Config, OffIgnoresOtherKnobs) {
  std::string w;
  Config c = ParseWith({{"TCMALLOC_NUMA", "0"},
                        {"TCMALLOC_NUMA_POLICY", "bogus"},
                        {"TCMALLOC_NUMA_FAKE_NODES", "4"},
                        {"TCMALLOC_NUMA_STATS", "1"}},
                       &w);
  EXPECT_EQ(c.mode, Mode::kOff);
  EXPECT_EQ(c.fake_nodes, 0);
  EXPECT_FALSE(c.stats);
  EXPECT_EQ(w, "");
}

TEST(Config, InterleaveAboveTakesSizes) {
  std::string w;
  EXPECT_EQ(ParseWith({}, &w).interleave_above, 0u) << "off by default";
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_INTERLEAVE_ABOVE", "64M"}}, &w)
                .interleave_above,
            uint64_t{64} << 20);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_INTERLEAVE_ABOVE", "1GiB"}}, &w)
                .interleave_above,
            uint64_t{1} << 30);
  EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_INTERLEAVE_ABOVE", "1048576"}}, &w)
                .interleave_above,
            uint64_t{1} << 20);
  EXPECT_EQ(
      ParseWith({{"TCMALLOC_NUMA_INTERLEAVE_ABOVE", "0"}}, &w).interleave_above,
      0u);
  EXPECT_EQ(w, "");
}

TEST(Config, InterleaveAboveBadValuesWarnAndStayOff) {
  for (const char* bad : {"64Q", "-1", "M", "100", "99999999999999999999G"}) {
    std::string w;
    EXPECT_EQ(ParseWith({{"TCMALLOC_NUMA_INTERLEAVE_ABOVE", bad}}, &w)
                  .interleave_above,
              0u)
        << bad;
    EXPECT_EQ(
        w, std::string("tcmalloc: ignoring TCMALLOC_NUMA_INTERLEAVE_ABOVE=") +
               bad +
               " (expected a size of 256K or more, e.g. 64M); using off\n")
        << bad;
  }
}

std::vector<std::string>* g_names_read;

const char* RecordingGetenv(const char* name) {
  g_names_read->push_back(name);
  if (std::string(name) == "TCMALLOC_NUMA") return "0";
  return "64M";
}

// TCMALLOC_NUMA=0 is vanilla: no other variable is even looked up, so
// TCMALLOC_NUMA_INTERLEAVE_ABOVE (automatic placement) stays off too.
TEST(Config, OffReadsOnlyItsOwnVariable) {
  std::vector<std::string> names;
  g_names_read = &names;
  const Config c = ParseConfig(RecordingGetenv);
  EXPECT_EQ(c.mode, Mode::kOff);
  EXPECT_EQ(c.interleave_above, 0u);
  EXPECT_EQ(names, std::vector<std::string>{"TCMALLOC_NUMA"});
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
