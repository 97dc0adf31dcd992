#include "numa/parse.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/numa/fake_sysfs.h"

namespace tcmalloc {
namespace numa {
namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

bool Collect(void* ctx, uint32_t lo, uint32_t hi) {
  static_cast<Ranges*>(ctx)->emplace_back(lo, hi);
  return true;
}

// Parses `text`; returns false on a parse error.
bool Parse(const std::string& text, Ranges* out) {
  ByteStream in(text.data(), text.size());
  out->clear();
  return ParseRanges(&in, Collect, out);
}

TEST(ParseRanges, CpulistRanges) {
  Ranges r;
  ASSERT_TRUE(Parse("0-3,8-11\n", &r));
  EXPECT_EQ(r, (Ranges{{0, 3}, {8, 11}}));
  ASSERT_TRUE(Parse("5", &r));
  EXPECT_EQ(r, (Ranges{{5, 5}}));
  ASSERT_TRUE(Parse("0,2-2,4095\n", &r));
  EXPECT_EQ(r, (Ranges{{0, 0}, {2, 2}, {4095, 4095}}));
}

TEST(ParseRanges, DistanceRow) {
  Ranges r;
  // The kernel's row for a sparse node set may start with a space.
  ASSERT_TRUE(Parse(" 10 21  31\n", &r));
  EXPECT_EQ(r, (Ranges{{10, 10}, {21, 21}, {31, 31}}));
}

TEST(ParseRanges, EmptyListIsValid) {
  Ranges r;
  EXPECT_TRUE(Parse("", &r));
  EXPECT_TRUE(Parse("\n", &r));
  EXPECT_TRUE(r.empty());
}

TEST(ParseRanges, RejectsMalformed) {
  Ranges r;
  for (const char* bad : {"1-", "-1", "3-1", "a", "1a", "1-2-3", "0x10", "1;2",
                          "4294967296", "1-4294967296"}) {
    EXPECT_FALSE(Parse(bad, &r)) << bad;
  }
}

TEST(ParseRanges, CallbackCanStopTheParse) {
  std::string text = "1,2";
  ByteStream in(text.data(), text.size());
  EXPECT_FALSE(ParseRanges(
      &in, [](void*, uint32_t, uint32_t) { return false; }, nullptr));
}

TEST(ParseNodeMask, SetsBitsAndCountsIdsBeyond64) {
  std::string text = "0-2,5,63-65\n";
  ByteStream in(text.data(), text.size());
  uint64_t mask = 0;
  int beyond = -1;
  ASSERT_TRUE(ParseNodeMask(&in, &mask, &beyond));
  EXPECT_EQ(mask, 0x8000000000000027ull);
  EXPECT_EQ(beyond, 2);
}

TEST(ParseMemTotal, FindsTheValue) {
  std::string text =
      "Node 3 MemTotal:       24542340 kB\nNode 3 MemFree: 1 kB\n";
  ByteStream in(text.data(), text.size());
  uint64_t kb = 0;
  ASSERT_TRUE(ParseMemTotal(&in, &kb));
  EXPECT_EQ(kb, 24542340u);
}

TEST(ParseMemTotal, ZeroAndAbsent) {
  uint64_t kb = 7;
  std::string zero = "Node 1 MemTotal: 0 kB\n";
  ByteStream in0(zero.data(), zero.size());
  ASSERT_TRUE(ParseMemTotal(&in0, &kb));
  EXPECT_EQ(kb, 0u);
  std::string absent = "Node 1 MemFree: 5 kB\nNode 1 MemMemTotal kB\n";
  ByteStream in1(absent.data(), absent.size());
  EXPECT_FALSE(ParseMemTotal(&in1, &kb));
}

// A file longer than ByteStream's 256-byte buffer, with the key split across
// the chunk boundary, read through the real open/read path.
TEST(ByteStreamFile, ReadsAcrossChunks) {
  std::string text(250, 'x');
  text += "\nNode 0 MemTotal: 4242 kB\n";
  text += std::string(700, 'y');
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/meminfo";
  numa_test::WriteFile(path, text);
  {
    ByteStream in(path.c_str());
    ASSERT_TRUE(in.ok());
    std::string back;
    for (int c; (c = in.Next()) >= 0;) back += static_cast<char>(c);
    EXPECT_TRUE(in.ok());
    EXPECT_EQ(back, text);
  }
  ByteStream in(path.c_str());
  uint64_t kb = 0;
  ASSERT_TRUE(ParseMemTotal(&in, &kb));
  EXPECT_EQ(kb, 4242u);
}

TEST(ByteStreamFile, MissingFileIsAnError) {
  ByteStream in("/nonexistent/numa/file");
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(in.Next(), -1);
}

TEST(ParseUint, WholeStringWithinMax) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint("64", 64, &v));
  EXPECT_EQ(v, 64u);
  EXPECT_TRUE(ParseUint("007", 64, &v));
  EXPECT_EQ(v, 7u);
  EXPECT_FALSE(ParseUint("65", 64, &v));
  EXPECT_FALSE(ParseUint("5", 3, &v)) << "a digit above a small max";
  EXPECT_FALSE(ParseUint("", 64, &v));
  EXPECT_FALSE(ParseUint("4 ", 64, &v));
  EXPECT_FALSE(ParseUint("-4", 64, &v));
  EXPECT_FALSE(ParseUint("99999999999999999999999", 64, &v));
}

TEST(StrEq, Basics) {
  EXPECT_TRUE(StrEq("bind", "bind"));
  EXPECT_FALSE(StrEq("bind", "binder"));
  EXPECT_FALSE(StrEq("binder", "bind"));
  EXPECT_TRUE(StrEq("", ""));
}

TEST(ParseSize, UnitsAndLimits) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseSize("4k", 1 << 20, &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(ParseSize("2T", uint64_t{1} << 50, &v));
  EXPECT_EQ(v, uint64_t{2} << 40);
  EXPECT_TRUE(ParseSize("3MB", uint64_t{1} << 50, &v));
  EXPECT_EQ(v, uint64_t{3} << 20);
  EXPECT_FALSE(ParseSize("2M", 1 << 20, &v)) << "above the limit";
  EXPECT_FALSE(ParseSize("", 100, &v));
  EXPECT_FALSE(ParseSize("1 M", 1 << 30, &v));
  EXPECT_FALSE(ParseSize("1Mi", 1 << 30, &v));
}

}  // namespace
}  // namespace numa
}  // namespace tcmalloc
