// Field expiry of the hashes module: Redis 7.4's HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HPERSIST
// HTTL HPTTL HEXPIRETIME HPEXPIRETIME and Redis 8.0's HSETEX HGETEX HGETDEL. redis-server 7.0
// has none of them, so these tables run on vessel only; their expectations come from Redis's
// documented behaviour and its t_hash.c (reply codes, error texts, the order of checks). Times
// are absolute, far in the future or in the past; the few tests that need a field to expire
// while it stays stored wait a few milliseconds for the server clock to pass its expiry.
#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using Pairs = std::map<std::string, std::string>;

constexpr char kFieldsMissing[] =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
constexpr char kNumFieldsMismatch[] =
    "ERR The `numfields` parameter must match the number of arguments";
constexpr char kNumFieldsPositive[] = "ERR Number of fields must be a positive integer";
constexpr char kNumFieldsExpire[] = "ERR Parameter `numFields` should be greater than 0";
constexpr char kNegativeTime[] = "ERR invalid expire time, must be >= 0";
constexpr char kOneTime[] =
    "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";

// Far in the future (2100-01-01) and its seconds; in the past.
constexpr int64_t kFutureMs = 4102444800000;
constexpr int64_t kFutureS = kFutureMs / 1000;
const std::string kFuture = std::to_string(kFutureMs);
const std::string kPast = "1";

int64_t ServerMs(RespClient& c) {
  const Reply t = c("TIME");
  return std::stoll(t.elems.at(0).str) * 1000 + std::stoll(t.elems.at(1).str) / 1000;
}
// Waits until the server's clock is past `ms`.
void WaitPast(RespClient& c, int64_t ms) {
  while (ServerMs(c) <= ms + 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
std::string Arity(const std::string& cmd) {
  return "ERR wrong number of arguments for '" + cmd + "' command";
}
Pairs PairsOf(const Reply& r) {
  Pairs out;
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) out[r.elems[i].str] = r.elems[i + 1].str;
  return out;
}
Expect Ints(std::vector<int64_t> v) {
  std::vector<Expect> e;
  for (int64_t x : v) e.push_back(Int(x));
  return Arr(std::move(e));
}

class HashesTtlTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// The same rows on a compact hash and a hashtable (600 filler fields).
std::vector<Row> ExpireRows(bool table) {
  std::vector<Row> rows;
  if (table) {
    Strings cmd = {"HSET", "h"};
    for (const std::string& f : Seq("filler", 0, 600)) cmd.insert(cmd.end(), {f, "x"});
    rows.push_back({cmd, Int(600)});
  }
  const std::vector<Row> body = {
      {{"HSET", "h", "a", "1", "b", "2", "c", "3"}, Int(3)},
      {{"HEXPIRE", "h", "100", "FIELDS", "2", "a", "nope"}, Ints({1, -2})},
      {{"OBJECT", "ENCODING", "h"}, Bulk(table ? "hashtable" : "listpackex")},
      {{"HTTL", "h", "FIELDS", "3", "a", "b", "nope"}, Arr({IntRange(99, 100), Int(-1), Int(-2)})},
      {{"HPTTL", "h", "FIELDS", "1", "a"}, Arr({ClockReading(98000, 100000)})},
      {{"HEXPIRETIME", "h", "FIELDS", "1", "b"}, Ints({-1})},
      // Conditions: no expiry counts as infinite (GT never holds, LT always does).
      {{"HEXPIRE", "h", "200", "NX", "FIELDS", "2", "a", "b"}, Ints({0, 1})},
      {{"HEXPIRE", "h", "300", "XX", "FIELDS", "2", "a", "c"}, Ints({1, 0})},
      {{"HEXPIRE", "h", "100", "GT", "FIELDS", "3", "a", "b", "c"}, Ints({0, 0, 0})},
      {{"HEXPIRE", "h", "400", "GT", "FIELDS", "1", "a"}, Ints({1})},
      {{"HEXPIRE", "h", "50", "LT", "FIELDS", "3", "a", "b", "c"}, Ints({1, 1, 1})},
      {{"HEXPIRE", "h", "50", "LT", "FIELDS", "1", "a"}, Ints({0})},  // not strictly less
      {{"HTTL", "h", "FIELDS", "3", "a", "b", "c"},
       Arr({IntRange(49, 50), IntRange(49, 50), IntRange(49, 50)})},
      // Absolute forms; HEXPIRETIME rounds milliseconds up to seconds, as Redis does.
      {{"HPEXPIREAT", "h", std::to_string(kFutureMs + 1), "FIELDS", "1", "a"}, Ints({1})},
      {{"HPEXPIRETIME", "h", "FIELDS", "1", "a"}, Ints({kFutureMs + 1})},
      {{"HEXPIRETIME", "h", "FIELDS", "1", "a"}, Ints({kFutureS + 1})},
      {{"HEXPIREAT", "h", std::to_string(kFutureS), "FIELDS", "1", "a"}, Ints({1})},
      {{"HPEXPIRETIME", "h", "FIELDS", "1", "a"}, Ints({kFutureMs})},
      {{"HPEXPIRE", "h", "100000", "FIELDS", "1", "b"}, Ints({1})},
      {{"HPTTL", "h", "FIELDS", "1", "b"}, Arr({ClockReading(99000, 100000)})},
      // HPERSIST: 1 removed, -1 none, -2 no field.
      {{"HPERSIST", "h", "FIELDS", "3", "a", "a", "nope"}, Ints({1, -1, -2})},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Ints({-1})},
      // A time not after now deletes at once (2); the field is gone for every read.
      {{"HPEXPIREAT", "h", kPast, "FIELDS", "2", "c", "c"}, Ints({2, -2})},
      {{"HEXISTS", "h", "c"}, Int(0)},
      {{"HLEN", "h"}, Int(table ? 602 : 2)},
      {{"HEXPIRE", "h", "0", "FIELDS", "1", "b"}, Ints({2})},
      {{"HGET", "h", "a"}, Bulk("1")},
      // HSET clears a field's expiry; HINCRBY and HINCRBYFLOAT keep it.
      {{"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, Ints({1})},
      {{"HINCRBY", "h", "a", "5"}, Int(6)},
      {{"HINCRBYFLOAT", "h", "a", "0.5"}, Bulk("6.5")},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Arr({IntRange(99, 100)})},
      {{"HSET", "h", "a", "7"}, Int(0)},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Ints({-1})},
      // Keys that do not exist: every field is missing.
      {{"HEXPIRE", "nokey", "100", "FIELDS", "2", "a", "b"}, Ints({-2, -2})},
      {{"HTTL", "nokey", "FIELDS", "1", "a"}, Ints({-2})},
      {{"HPERSIST", "nokey", "FIELDS", "1", "a"}, Ints({-2})},
      {{"EXISTS", "nokey"}, Int(0)},
  };
  rows.insert(rows.end(), body.begin(), body.end());
  return rows;
}

TEST_F(HashesTtlTest, ExpireCommandsInBothRepresentations) {
  RunVesselTable(ExpireRows(false));
  Servers::Get().Reset();
  RunVesselTable(ExpireRows(true), 3);
}

TEST_F(HashesTtlTest, TheLastFieldTakesTheHashWithIt) {
  RunVesselTable({
      {{"HSET", "h", "a", "1", "b", "2"}, Int(2)},
      {{"EXPIRE", "h", "100"}, Int(1)},
      {{"HPEXPIREAT", "h", kPast, "FIELDS", "3", "a", "b", "a"}, Ints({2, 2, -2})},
      {{"EXISTS", "h"}, Int(0)},
      {{"HSET", "h", "a", "1"}, Int(1)},
      {{"TTL", "h"}, Int(-1)},
      {{"HSETEX", "h", "PX", "0", "FIELDS", "1", "a", "2"}, Int(1)},
      {{"EXISTS", "h"}, Int(0)},
      {{"HSET", "h", "a", "1"}, Int(1)},
      {{"HGETEX", "h", "EXAT", "1", "FIELDS", "2", "a", "a"}, Arr({Bulk("1"), Nil()})},
      {{"EXISTS", "h"}, Int(0)},
  });
}

// With the active expiry cycle off (DEBUG SET-ACTIVE-EXPIRE 0), expired fields stay stored.
TEST_F(HashesTtlTest, ExpiredFieldsAreInvisibleUntilAWriteRemovesThem) {
  for (const bool table : {false, true}) {
    SCOPED_TRACE(table ? "hashtable" : "listpack");
    Servers::Get().Reset();
    RespClient c = Servers::Get().Vessel();
    c("DEBUG", "SET-ACTIVE-EXPIRE", "0");
    if (table) {
      Strings cmd = {"HSET", "h"};
      for (const std::string& f : Seq("filler", 0, 600)) cmd.insert(cmd.end(), {f, "x"});
      c.Cmd(cmd);
    }
    c("HSET", "h", "gone", "1", "stays", "2", "also", "3");
    c("HSET", "all", "x", "1", "y", "2");
    // Far enough ahead that both HPEXPIREATs arrive before it, even on a loaded machine under
    // a sanitizer (a time already past would delete the fields at once).
    const int64_t soon = ServerMs(c) + 1000;
    const Reply set = c("HPEXPIREAT", "h", std::to_string(soon), "FIELDS", "2", "gone", "also");
    ASSERT_EQ(set.elems.size(), 2u);
    ASSERT_EQ(set.elems[0].integer, 1);
    ASSERT_EQ(set.elems[1].integer, 1);
    ASSERT_EQ(c("HPEXPIREAT", "all", std::to_string(soon), "FIELDS", "2", "x", "y").elems.size(),
              2u);
    WaitPast(c, soon);
    const int64_t n = table ? 601 : 1;
    RunVesselTable({
        {{"HGET", "h", "gone"}, Nil()},
        {{"HMGET", "h", "gone", "stays"}, Arr({Nil(), Bulk("2")})},
        {{"HEXISTS", "h", "gone"}, Int(0)},
        {{"HSTRLEN", "h", "gone"}, Int(0)},
        {{"HLEN", "h"}, Int(n)},
        {{"HTTL", "h", "FIELDS", "2", "gone", "stays"}, Ints({-2, -1})},
        {{"HPERSIST", "h", "FIELDS", "1", "gone"}, Ints({-2})},
        {{"HEXPIRE", "h", "100", "FIELDS", "1", "also"}, Ints({-2})},
        {{"HGETDEL", "h", "FIELDS", "1", "gone"}, Arr({Nil()})},
        {{"HSETNX", "h", "gone", "new"}, Int(1)},
        {{"HGET", "h", "gone"}, Bulk("new")},
        {{"HLEN", "h"}, Int(n + 1)},
        // Every field of "all" expired: reads see nothing, the key goes at the next write.
        {{"HGETALL", "all"}, Arr({})},
        {{"HLEN", "all"}, Int(0)},
        {{"HKEYS", "all"}, Arr({})},
        {{"HRANDFIELD", "all"}, Nil()},
        {{"HRANDFIELD", "all", "-3"}, Arr({})},
        {{"HSCAN", "all", "0"}, Arr({Bulk("0"), Arr({})})},
        {{"EXISTS", "all"}, Int(1)},  // Redis 7.4 deletes it on the read already
        {{"HDEL", "all", "nope"}, Int(0)},
        {{"EXISTS", "all"}, Int(0)},
    });
    const Reply all = c("HGETALL", "h");
    const Pairs pairs = PairsOf(all);
    EXPECT_EQ(pairs.size(), static_cast<size_t>(n + 1));
    EXPECT_FALSE(pairs.contains("also"));
    EXPECT_EQ(pairs.at("stays"), "2");
    std::set<std::string> scanned;
    std::string cursor = "0";
    do {
      const Reply r = c("HSCAN", "h", cursor);
      for (size_t i = 0; i < r.elems.at(1).elems.size(); i += 2) {
        scanned.insert(r.elems[1].elems[i].str);
      }
      cursor = r.elems.at(0).str;
    } while (cursor != "0");
    EXPECT_FALSE(scanned.contains("also"));
    EXPECT_EQ(scanned.size(), pairs.size());
    for (int i = 0; i < 50; ++i) EXPECT_NE(c("HRANDFIELD", "h").str, "also");
    c("DEBUG", "SET-ACTIVE-EXPIRE", "1");
  }
}

int64_t InfoStat(RespClient& c, const std::string& field) {
  const std::string info = c("INFO", "stats").str;
  const size_t at = info.find(field + ":");
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size() + 1));
}

// The background cycle removes due fields nobody reads (INFO expired_subkeys counts them) and
// deletes a hash whose last field expired, in both representations, also after RENAME.
TEST_F(HashesTtlTest, ActiveExpiryRemovesDueFieldsInTheBackground) {
  for (const bool table : {false, true}) {
    SCOPED_TRACE(table ? "hashtable" : "listpack");
    Servers::Get().Reset();
    RespClient c = Servers::Get().Vessel();
    c("CONFIG", "RESETSTAT");
    Strings fill = {"HSET", "h", "stays", "1", "goes", "2"};
    if (table)
      for (const std::string& f : Seq("filler", 0, 600)) fill.insert(fill.end(), {f, "x"});
    c.Cmd(fill);
    c("HSET", "lonely", "only", "1");
    c("HSET", "moved", "only", "1");
    const int64_t soon = ServerMs(c) + 30;
    c("HPEXPIREAT", "h", std::to_string(soon), "FIELDS", "1", "goes");
    c("HPEXPIREAT", "lonely", std::to_string(soon), "FIELDS", "1", "only");
    c("HPEXPIREAT", "moved", std::to_string(soon), "FIELDS", "1", "only");
    c("RENAME", "moved", "renamed");
    const auto start = std::chrono::steady_clock::now();
    while ((c("EXISTS", "lonely").integer != 0 || c("EXISTS", "renamed").integer != 0 ||
            InfoStat(c, "expired_subkeys") < 3) &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(c("EXISTS", "lonely").integer, 0);
    EXPECT_EQ(c("EXISTS", "renamed").integer, 0);
    EXPECT_EQ(c("EXISTS", "h").integer, 1);
    EXPECT_EQ(InfoStat(c, "expired_subkeys"), 3);
    EXPECT_EQ(InfoStat(c, "expired_keys"), 2);
    EXPECT_EQ(c("HLEN", "h").integer, table ? 601 : 1);
    EXPECT_EQ(c("HEXISTS", "h", "goes").integer, 0);
  }
}

TEST_F(HashesTtlTest, HSetEx) {
  RunVesselTable({
      {{"HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2"}, Int(1)},
      {{"HTTL", "h", "FIELDS", "2", "a", "b"}, Ints({-1, -1})},
      {{"HSETEX", "h", "EX", "100", "FIELDS", "1", "a", "10"}, Int(1)},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Arr({IntRange(99, 100)})},
      {{"OBJECT", "ENCODING", "h"}, Bulk("listpackex")},
      {{"HSETEX", "h", "KEEPTTL", "FIELDS", "1", "a", "11"}, Int(1)},
      {{"HGET", "h", "a"}, Bulk("11")},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Arr({IntRange(99, 100)})},
      {{"HSETEX", "h", "FIELDS", "1", "a", "12"}, Int(1)},  // without KEEPTTL the TTL goes
      {{"HTTL", "h", "FIELDS", "1", "a"}, Ints({-1})},
      {{"HSETEX", "h", "PXAT", kFuture, "FIELDS", "2", "a", "1", "c", "3"}, Int(1)},
      {{"HPEXPIRETIME", "h", "FIELDS", "2", "a", "c"}, Ints({kFutureMs, kFutureMs})},
      {{"HSETEX", "h", "EXAT", std::to_string(kFutureS), "FIELDS", "1", "b", "2"}, Int(1)},
      {{"HPEXPIRETIME", "h", "FIELDS", "1", "b"}, Ints({kFutureMs})},
      // FNX: only when no field exists; FXX: only when all exist.
      {{"HSETEX", "h", "FNX", "FIELDS", "2", "new", "1", "a", "2"}, Int(0)},
      {{"HEXISTS", "h", "new"}, Int(0)},
      {{"HSETEX", "h", "FNX", "FIELDS", "1", "new", "1"}, Int(1)},
      {{"HSETEX", "h", "FXX", "FIELDS", "2", "a", "5", "zz", "1"}, Int(0)},
      {{"HSETEX", "h", "FXX", "PX", "100000", "FIELDS", "2", "a", "5", "b", "6"}, Int(1)},
      {{"HMGET", "h", "a", "b"}, Arr({Bulk("5"), Bulk("6")})},
      {{"HPTTL", "h", "FIELDS", "2", "a", "b"},
       Arr({ClockReading(99000, 100000), ClockReading(99000, 100000)})},
      {{"HSETEX", "nokey", "FXX", "FIELDS", "1", "a", "1"}, Int(0)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"HSETEX", "nokey", "FNX", "EX", "100", "FIELDS", "1", "a", "1"}, Int(1)},
      {{"HTTL", "nokey", "FIELDS", "1", "a"}, Arr({IntRange(99, 100)})},
      {{"HSETEX", "h", "PX", "0", "FIELDS", "1", "a", "1"}, Int(1)},  // set, then expired
      {{"HEXISTS", "h", "a"}, Int(0)},
      {{"HSETEX", "big", "FIELDS", "1", "f", std::string(65, 'x')}, Int(1)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("hashtable")},
      // Errors, checked before the key is looked at.
      {{"HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"},
       Error("ERR Only one of FXX or FNX arguments can be specified")},
      {{"HSETEX", "h", "EX", "1", "PX", "1", "FIELDS", "1", "a", "1"}, Error(kOneTime)},
      {{"HSETEX", "h", "KEEPTTL", "EX", "1", "FIELDS", "1", "a", "1"}, Error(kOneTime)},
      {{"HSETEX", "h", "EX", "x", "FIELDS", "1", "a", "1"}, Error(kNotInt)},
      {{"HSETEX", "h", "EX", "-1", "FIELDS", "1", "a", "1"}, Error(kNegativeTime)},
      {{"HSETEX", "h", "EX", "70368744178", "FIELDS", "1", "a", "1"},
       Error("ERR invalid expire time in 'hsetex' command")},
      {{"HSETEX", "h", "PXAT", "70368744177664", "FIELDS", "1", "a", "1"},
       Error("ERR invalid expire time in 'hsetex' command")},
      {{"HSETEX", "h", "FIELDS", "2", "a", "1"}, Error(Arity("hsetex"))},
      {{"HSETEX", "h", "FIELDS", "1", "a", "1", "b"}, Error(Arity("hsetex"))},
      {{"HSETEX", "h", "FIELDS", "0", "a", "1"}, Error("ERR invalid number of fields")},
      {{"HSETEX", "h", "FIELDS", "x", "a", "1"}, Error("ERR invalid number of fields")},
      {{"HSETEX", "h", "BAD", "FIELDS", "1", "a", "1"}, Error("ERR unknown argument: BAD")},
      {{"HSETEX", "h", "FIELDS", "1", "a"}, Error(Arity("hsetex"))},
      {{"SET", "str", "v"}, Ok()},
      {{"HSETEX", "str", "FIELDS", "1", "a", "1"}, WrongType()},
      {{"HSETEX", "str", "EX", "x", "FIELDS", "1", "a", "1"}, Error(kNotInt)},
  });
}

TEST_F(HashesTtlTest, HGetExAndHGetDel) {
  RunVesselTable({
      {{"HSET", "h", "a", "1", "b", "2", "c", "3"}, Int(3)},
      {{"HGETEX", "h", "FIELDS", "2", "a", "nope"}, Arr({Bulk("1"), Nil()})},
      {{"OBJECT", "ENCODING", "h"}, Bulk("listpack")},  // no option: a plain read
      {{"HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "nope"}, Arr({Bulk("1"), Nil()})},
      {{"HTTL", "h", "FIELDS", "2", "a", "b"}, Arr({IntRange(99, 100), Int(-1)})},
      {{"OBJECT", "ENCODING", "h"}, Bulk("listpackex")},
      {{"HGETEX", "h", "PX", "50000", "FIELDS", "1", "b"}, Arr({Bulk("2")})},
      {{"HGETEX", "h", "PXAT", kFuture, "FIELDS", "1", "c"}, Arr({Bulk("3")})},
      {{"HGETEX", "h", "EXAT", std::to_string(kFutureS + 1), "FIELDS", "1", "c"}, Arr({Bulk("3")})},
      {{"HPEXPIRETIME", "h", "FIELDS", "1", "c"}, Ints({kFutureMs + 1000})},
      {{"HGETEX", "h", "PERSIST", "FIELDS", "2", "a", "nope"}, Arr({Bulk("1"), Nil()})},
      {{"HTTL", "h", "FIELDS", "1", "a"}, Ints({-1})},
      {{"HGETEX", "h", "PX", "0", "FIELDS", "2", "a", "a"}, Arr({Bulk("1"), Nil()})},
      {{"HEXISTS", "h", "a"}, Int(0)},
      {{"HGETEX", "nokey", "EX", "10", "FIELDS", "2", "a", "b"}, Arr({Nil(), Nil()})},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"HGETEX", "h", "EX", "-1", "FIELDS", "1", "a"}, Error(kNegativeTime)},
      {{"HGETEX", "h", "EX", "x", "FIELDS", "1", "a"}, Error(kNotInt)},
      {{"HGETEX", "h", "EX", "70368744178", "FIELDS", "1", "a"},
       Error("ERR invalid expire time in 'hgetex' command")},
      {{"HGETEX", "h", "EX", "10", "FIELD", "1", "a"}, Error(kFieldsMissing)},
      {{"HGETEX", "h", "BAD", "FIELDS", "1", "a"}, Error(kFieldsMissing)},
      {{"HGETEX", "h", "PERSIST", "FIELDS", "0", "a"}, Error(kNumFieldsPositive)},
      {{"HGETEX", "h", "FIELDS", "2", "a"}, Error(kNumFieldsMismatch)},
      {{"HGETEX", "h", "EX", "10", "FIELDS"}, Error(Arity("hgetex"))},
      {{"HGETEX", "h", "FIELDS", "1"}, Error(Arity("hgetex"))},
      // HGETDEL returns the values and deletes the fields; the hash goes with its last one.
      {{"HSET", "g", "a", "1", "b", "2"}, Int(2)},
      {{"HGETDEL", "g", "FIELDS", "2", "a", "nope"}, Arr({Bulk("1"), Nil()})},
      {{"HGETDEL", "g", "FIELDS", "2", "b", "b"}, Arr({Bulk("2"), Nil()})},
      {{"EXISTS", "g"}, Int(0)},
      {{"HGETDEL", "g", "FIELDS", "1", "a"}, Arr({Nil()})},
      {{"HGETDEL", "g", "FIELDS", "2", "a"}, Error(kNumFieldsMismatch)},
      {{"HGETDEL", "g", "FIELD", "1", "a"}, Error(kFieldsMissing)},
      {{"HGETDEL", "g", "FIELDS", "-1", "a"}, Error(kNumFieldsPositive)},
      {{"HGETDEL", "g", "FIELDS", "1"}, Error(Arity("hgetdel"))},
  });
}

TEST_F(HashesTtlTest, ErrorsAndWrongType) {
  std::vector<Row> rows = {
      {{"HSET", "h", "a", "1"}, Int(1)},
      {{"SET", "str", "v"}, Ok()},
      {{"HEXPIRE", "h", "-1", "FIELDS", "1", "a"}, Error(kNegativeTime)},
      {{"HEXPIRE", "h", "x", "FIELDS", "1", "a"}, Error(kNotInt)},
      {{"HEXPIRE", "h", "70368744178", "FIELDS", "1", "a"},
       Error("ERR invalid expire time in 'hexpire' command")},
      {{"HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a"},
       Error("ERR invalid expire time in 'hpexpireat' command")},
      {{"HPEXPIREAT", "h", "70368744177663", "FIELDS", "1", "a"}, Ints({1})},
      {{"HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a"},
       Error("ERR invalid expire time in 'hpexpire' command")},
      {{"HEXPIREAT", "h", "70368744177", "FIELDS", "1", "a"}, Ints({1})},
      {{"HEXPIRE", "h", "10", "FIELDS", "0", "a"}, Error(kNumFieldsExpire)},
      {{"HEXPIRE", "h", "10", "FIELDS", "x", "a"}, Error(kNumFieldsExpire)},
      {{"HEXPIRE", "h", "10", "FIELDS", "2", "a"}, Error(kNumFieldsMismatch)},
      {{"HEXPIRE", "h", "10", "NX", "FIELDS", "1"}, Error(kNumFieldsMismatch)},
      {{"HEXPIRE", "h", "10", "XX", "FIELD", "1", "a"}, Error(kFieldsMissing)},
      {{"HEXPIRE", "h", "10", "BAD", "FIELDS", "1", "a"}, Error(kFieldsMissing)},
      {{"HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1", "a"}, Error(kFieldsMissing)},
      {{"HTTL", "h", "FIELD", "1", "a"}, Error(kFieldsMissing)},
      {{"HTTL", "h", "FIELDS", "0", "a"}, Error(kNumFieldsPositive)},
      {{"HPTTL", "h", "FIELDS", "2", "a"}, Error(kNumFieldsMismatch)},
      {{"HPERSIST", "h", "FIELDS", "x", "a"}, Error(kNumFieldsPositive)},
      // The key's type is checked before the arguments, as Redis does for these commands.
      {{"HEXPIRE", "str", "-1", "FIELDS", "1", "a"}, WrongType()},
      {{"HPEXPIRE", "str", "10", "FIELDS", "1", "a"}, WrongType()},
      {{"HEXPIREAT", "str", "10", "FIELDS", "1", "a"}, WrongType()},
      {{"HPEXPIREAT", "str", "10", "FIELDS", "1", "a"}, WrongType()},
      {{"HTTL", "str", "FIELD", "1", "a"}, WrongType()},
      {{"HPTTL", "str", "FIELDS", "1", "a"}, WrongType()},
      {{"HEXPIRETIME", "str", "FIELDS", "1", "a"}, WrongType()},
      {{"HPEXPIRETIME", "str", "FIELDS", "1", "a"}, WrongType()},
      {{"HPERSIST", "str", "FIELDS", "1", "a"}, WrongType()},
      {{"HGETEX", "str", "BAD", "FIELDS", "1", "a"}, WrongType()},
      {{"HGETDEL", "str", "FIELDS", "x", "a"}, WrongType()},
      {{"GET", "h"}, WrongType()},
  };
  for (const Strings& cmd : std::vector<Strings>{{"HEXPIRE", "h", "1", "FIELDS", "1"},
                                                 {"HPEXPIRE", "h", "1", "FIELDS"},
                                                 {"HEXPIREAT", "h"},
                                                 {"HPEXPIREAT", "h", "1", "FIELDS", "1"},
                                                 {"HTTL", "h", "FIELDS", "1"},
                                                 {"HPTTL", "h"},
                                                 {"HEXPIRETIME", "h", "FIELDS"},
                                                 {"HPEXPIRETIME", "h", "FIELDS", "1"},
                                                 {"HPERSIST", "h", "FIELDS", "1"},
                                                 {"HSETEX", "h", "FIELDS", "1", "a"},
                                                 {"HGETEX", "h", "FIELDS", "1"},
                                                 {"HGETDEL", "h", "FIELDS", "1"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Error(Arity(lower))});
  }
  RunVesselTable(rows);
}

TEST_F(HashesTtlTest, KeyspaceCommandsKeepFieldExpiries) {
  RespClient c = Servers::Get().Vessel();
  for (const bool table : {false, true}) {
    SCOPED_TRACE(table ? "hashtable" : "listpack");
    c("FLUSHALL");
    if (table) {
      Strings cmd = {"HSET", "h"};
      for (const std::string& f : Seq("filler", 0, 600)) cmd.insert(cmd.end(), {f, "x"});
      c.Cmd(cmd);
    }
    c("HSET", "h", "a", "1", "b", "2");
    c("HPEXPIREAT", "h", kFuture, "FIELDS", "1", "a");
    const std::string enc = table ? "hashtable" : "listpackex";
    RunVesselTable({
        {{"COPY", "h", "copy"}, Int(1)},
        {{"HPEXPIRETIME", "copy", "FIELDS", "2", "a", "b"}, Ints({kFutureMs, -1})},
        {{"OBJECT", "ENCODING", "copy"}, Bulk(enc)},
        {{"HPERSIST", "copy", "FIELDS", "1", "a"}, Ints({1})},
        {{"HPEXPIRETIME", "h", "FIELDS", "1", "a"}, Ints({kFutureMs})},  // deep copy
        {{"RENAME", "copy", "renamed"}, Ok()},
        {{"HGET", "renamed", "a"}, Bulk("1")},
        {{"RENAME", "h", "h2"}, Ok()},
        {{"HPEXPIRETIME", "h2", "FIELDS", "1", "a"}, Ints({kFutureMs})},
        {{"MOVE", "h2", "1"}, Int(1)},
        {{"SELECT", "1"}, Ok()},
        {{"HPEXPIRETIME", "h2", "FIELDS", "1", "a"}, Ints({kFutureMs})},
        {{"MOVE", "h2", "0"}, Int(1)},
        {{"SELECT", "0"}, Ok()},
        {{"EXPIRE", "h2", "1000"}, Int(1)},  // the key's own TTL is separate
        {{"HPEXPIRETIME", "h2", "FIELDS", "1", "a"}, Ints({kFutureMs})},
        {{"TTL", "h2"}, IntRange(999, 1000)},
        {{"HEXPIRE", "h2", "10", "FIELDS", "1", "b"}, Ints({1})},
        {{"TTL", "h2"}, IntRange(999, 1000)},
    });
    const Reply dump = c("DUMP", "h2");
    ASSERT_EQ(dump.type, Reply::Type::kBulk);
    EXPECT_EQ(c("RESTORE", "restored", "0", dump.str).str, "OK");
    EXPECT_EQ(c("HPEXPIRETIME", "restored", "FIELDS", "2", "a", "b").elems.at(0).integer,
              kFutureMs);
    EXPECT_GT(c("HPEXPIRETIME", "restored", "FIELDS", "1", "b").elems.at(0).integer, 0);
    EXPECT_EQ(c("OBJECT", "ENCODING", "restored").str, enc);
    EXPECT_EQ(PairsOf(c("HGETALL", "restored")), PairsOf(c("HGETALL", "h2")));
  }
}

// A TTL costs the field 8 bytes; a hash that never used one pays nothing per field for the
// feature, and a copy of a hash whose TTLs were removed is as small as it was before.
TEST_F(HashesTtlTest, ExpiryCostsOnlyTheFieldsThatHaveOne) {
  RespClient c = Servers::Get().Vessel();
  for (const bool table : {false, true}) {
    SCOPED_TRACE(table ? "hashtable" : "listpack");
    c("FLUSHALL");
    const int n = table ? 2000 : 100;
    Strings set = {"HSET", "h"}, fields = {"HPEXPIREAT", "h", kFuture, "FIELDS", std::to_string(n)};
    for (const std::string& f : Seq("field", 0, n)) {
      set.insert(set.end(), {f, "value"});
      fields.push_back(f);
    }
    c.Cmd(set);
    const int64_t plain = c("MEMORY", "USAGE", "h").integer;
    c.Cmd(fields);
    const int64_t with = c("MEMORY", "USAGE", "h").integer;
    // A block grows by exactly 8 bytes a field. A record is reallocated, and this test binary
    // runs on the system allocator, whose chunks may hold slack either way: only a bound.
    if (!table) {
      EXPECT_GE(with - plain, 8 * n - 64);
    }
    EXPECT_LE(with - plain, 24 * n + 128);
    fields[0] = "HPERSIST";
    fields.erase(fields.begin() + 2);
    c.Cmd(fields);
    // A fresh copy holds no expiry block; the system allocator's chunk rounding of its records
    // (this test binary does not use jemalloc) may differ from the original's by a few words.
    c.Cmd({"COPY", "h", "copy"});
    EXPECT_LE(c("MEMORY", "USAGE", "copy").integer, plain + 64);
  }
}

// Random field-expiry operations against a model (fields, values, absolute expiries) on both
// representations, every reply checked against the model and every key compared after each step.
TEST_F(HashesTtlTest, ModelBasedRandomOperations) {
  std::mt19937 rng(20261124);
  struct Field {
    std::string value;
    int64_t expire = -1;
  };
  std::map<std::string, std::map<std::string, Field>> model;
  RespClient c = Servers::Get().Vessel();
  const Strings keys = {"k0", "k1"};
  for (int step = 0; step < 3000; ++step) {
    const size_t range = step < 1000 ? 30 : 700;
    auto field = [&] { return "f" + std::to_string(rng() % range); };
    const std::string k = keys[rng() % keys.size()];
    auto& m = model[k];
    const bool past = rng() % 6 == 0;
    const int64_t at = past ? 1 : kFutureMs + static_cast<int64_t>(rng() % 1000) * 1000;
    Strings cmd;
    std::vector<int64_t> want;
    switch (rng() % 7) {
      case 0:
      case 1: {
        cmd = {"HSET", k};
        for (int j = 0, n = 1 + static_cast<int>(rng() % (step < 1000 ? 5 : 80)); j < n; ++j) {
          const std::string f = field(), v = rng() % 40 ? "v" + f : std::string(70, 'L');
          cmd.insert(cmd.end(), {f, v});
          m[f] = {v, -1};
        }
        break;
      }
      case 2: {
        cmd = {"HPEXPIREAT", k, std::to_string(at), "FIELDS", "3"};
        for (int j = 0; j < 3; ++j) {
          const std::string f = field();
          cmd.push_back(f);
          if (!m.contains(f)) {
            want.push_back(-2);
          } else if (past) {
            m.erase(f);
            want.push_back(2);
          } else {
            m[f].expire = at;
            want.push_back(1);
          }
        }
        break;
      }
      case 3: {
        cmd = {"HPERSIST", k, "FIELDS", "2"};
        for (int j = 0; j < 2; ++j) {
          const std::string f = field();
          cmd.push_back(f);
          const auto it = m.find(f);
          want.push_back(it == m.end() ? -2 : it->second.expire < 0 ? -1 : 1);
          if (it != m.end()) it->second.expire = -1;
        }
        break;
      }
      case 4: {
        const std::string f = field();
        cmd = {"HGETDEL", k, "FIELDS", "1", f};
        m.erase(f);
        break;
      }
      case 5: {
        const std::string f = field(), v = "x" + f;
        cmd = {"HSETEX", k, "PXAT", std::to_string(at), "FIELDS", "1", f, v};
        if (past) {
          m.erase(f);
        } else {
          m[f] = {v, at};
        }
        break;
      }
      default: {
        const std::string f = field();
        cmd = {"HINCRBY", k, f, "1"};  // keeps the expiry
        if (m.contains(f) && m[f].value.find_first_not_of("0123456789") == std::string::npos &&
            m[f].value.size() < 18) {
          m[f].value = std::to_string(std::stoll(m[f].value) + 1);
        } else if (!m.contains(f)) {
          m[f] = {"1", -1};
        }
        break;
      }
    }
    const Reply r = c.Cmd(cmd);
    if (!want.empty()) {
      ASSERT_EQ(r.elems.size(), want.size()) << "step " << step << ": " << Show(cmd);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(r.elems[i].integer, want[i]) << "step " << step << ": " << Show(cmd);
      }
    }
    if (m.empty()) model.erase(k);
    for (const std::string& each : keys) {
      const auto it = model.find(each);
      const Reply all = c("HGETALL", each);
      const Pairs got = PairsOf(all);
      ASSERT_EQ(got.size(), it == model.end() ? 0u : it->second.size())
          << "step " << step << " key " << each << " after " << Show(cmd);
      if (it == model.end()) {
        ASSERT_EQ(c("EXISTS", each).integer, 0) << "step " << step;
        continue;
      }
      Strings query = {"HPEXPIRETIME", each, "FIELDS", std::to_string(it->second.size())};
      for (const auto& [f, fv] : it->second) {
        ASSERT_EQ(got.at(f), fv.value) << "step " << step << " key " << each << " field " << f;
        query.push_back(f);
      }
      const Reply times = c.Cmd(query);
      size_t i = 0;
      for (const auto& [f, fv] : it->second) {
        ASSERT_EQ(times.elems.at(i++).integer, fv.expire) << "step " << step << " field " << f;
      }
    }
  }
}

// COMMAND INFO of the field-expiry commands, as Redis 7.4 / 8.0 declare them.
TEST_F(HashesTtlTest, CommandInfo) {
  RespClient c = Servers::Get().Vessel();
  struct Want {
    const char* name;
    int64_t arity;
    Strings flags;
    Strings key_flags;
  };
  const std::vector<Want> wants = {
      {"hexpire", -6, {"write", "denyoom", "fast"}, {"RW", "update"}},
      {"hpexpire", -6, {"write", "denyoom", "fast"}, {"RW", "update"}},
      {"hexpireat", -6, {"write", "denyoom", "fast"}, {"RW", "update"}},
      {"hpexpireat", -6, {"write", "denyoom", "fast"}, {"RW", "update"}},
      {"hpersist", -5, {"write", "fast"}, {"RW", "update"}},
      {"httl", -5, {"readonly", "fast"}, {"RO", "access"}},
      {"hpttl", -5, {"readonly", "fast"}, {"RO", "access"}},
      {"hexpiretime", -5, {"readonly", "fast"}, {"RO", "access"}},
      {"hpexpiretime", -5, {"readonly", "fast"}, {"RO", "access"}},
      {"hsetex", -6, {"write", "denyoom", "fast"}, {"RW", "update"}},
      {"hgetex", -5, {"write", "fast"}, {"RW", "access", "update"}},
      {"hgetdel", -5, {"write", "fast"}, {"RW", "access", "delete"}},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.name);
    const Reply info = c("COMMAND", "INFO", w.name);
    ASSERT_EQ(info.elems.size(), 1u);
    const Reply& i = info.elems[0];
    ASSERT_GE(i.elems.size(), 10u) << i.ToString();
    EXPECT_EQ(i.elems[0].str, w.name);
    EXPECT_EQ(i.elems[1].integer, w.arity);
    Strings flags;
    for (const Reply& f : i.elems[2].elems) {
      if (f.str != "module") flags.push_back(f.str);
    }
    EXPECT_EQ(flags, w.flags);
    EXPECT_EQ(i.elems[3].integer, 1);  // first key
    EXPECT_EQ(i.elems[4].integer, 1);  // last key
    const Reply& spec = i.elems[8].elems.at(0);
    Strings key_flags;
    for (size_t j = 0; j + 1 < spec.elems.size(); j += 2) {
      if (spec.elems[j].str != "flags") continue;
      for (const Reply& f : spec.elems[j + 1].elems) key_flags.push_back(f.str);
    }
    EXPECT_EQ(key_flags, w.key_flags);
    EXPECT_EQ(c("COMMAND", "GETKEYS", w.name, "key", "1", "FIELDS", "1", "f", "v").ToString(),
              c("COMMAND", "GETKEYS", "HGET", "key", "f").ToString());
  }
}

}  // namespace
}  // namespace vessel::test
