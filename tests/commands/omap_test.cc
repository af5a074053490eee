// The omap module (OMAP.*) against the in-process vessel server. Ordered maps are not a Redis
// family, so the tables run on vessel only (RunVesselTable), in RESP2 and RESP3; the commands with
// a Redis twin are compared with it on redis-server: OMAP.SET/GET/MGET/DEL/LEN against a hash
// (HSET, HGET, HMGET, HDEL, HLEN), OMAP.RANGE/COUNT/RANK/POPFIRST against a sorted set of the
// same members with equal scores (ZRANGEBYLEX, ZREVRANGEBYLEX, ZLEXCOUNT, ZRANK, ZPOPMIN), error
// texts included. A randomized model test replays seeded command sequences against a std::map.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/messaging_util.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/family.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kBadRange[] = "ERR min or max not valid string range item";

// A map reply (RESP3) or its flat RESP2 form, as field, value, ...
Expect Pairs(Strings flat) {
  std::string text;
  for (const auto& s : flat) text += " " + s;
  return Expect{"pairs" + text, [flat](const Reply& r) {
                  if (r.type != Reply::Type::kMap && r.type != Reply::Type::kArray) return false;
                  return Elements(r) == flat;
                }};
}

const std::vector<CommandInfo> kCommands = {
    {"omap.set", -4, {"write", "denyoom", "fast"}, {"RW", "update"}},
    {"omap.get", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.mget", -3, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.del", -3, {"write", "fast"}, {"RW", "delete"}},
    {"omap.len", 2, {"readonly", "fast"}, {"RO"}},
    {"omap.range", -4, {"readonly"}, {"RO", "access"}},
    {"omap.count", 4, {"readonly", "fast"}, {"RO"}},
    {"omap.floor", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.ceil", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.rank", 3, {"readonly", "fast"}, {"RO"}},
    {"omap.at", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.first", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.last", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"omap.popfirst", -2, {"write", "fast"}, {"RW", "access", "delete"}},
    {"omap.poplast", -2, {"write", "fast"}, {"RW", "access", "delete"}},
};

class OmapTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- one command at a time ----

TEST_F(OmapTest, SetGetDel) {
  RunBothProtocols({
      {{"OMAP.SET", "m", "b", "2", "a", "1"}, Int(2)},
      {{"OMAP.SET", "m", "a", "one", "c", "3", "c", "three"}, Int(1)},
      {{"OMAP.SET", "m", "x"}, Error("ERR wrong number of arguments for 'omap.set' command")},
      {{"OMAP.SET", "m", "x", "1", "y"}, Arity("omap.set")},
      {{"TYPE", "m"}, Simple("omap")},
      {{"OMAP.GET", "m", "a"}, Bulk("one")},
      {{"OMAP.GET", "m", "c"}, Bulk("three")},
      {{"OMAP.GET", "m", "zz"}, Nil()},
      {{"OMAP.GET", "nokey", "a"}, Nil()},
      {{"OMAP.MGET", "m", "a", "zz", "b"}, Arr({Bulk("one"), Nil(), Bulk("2")})},
      {{"OMAP.MGET", "nokey", "a", "b"}, Arr({Nil(), Nil()})},
      {{"OMAP.LEN", "m"}, Int(3)},
      {{"OMAP.LEN", "nokey"}, Int(0)},
      {{"OMAP.DEL", "m", "a", "zz", "a"}, Int(1)},
      {{"OMAP.DEL", "m", "zz"}, Int(0)},
      {{"OMAP.DEL", "nokey", "a"}, Int(0)},
      {{"OMAP.DEL", "m", "b", "c"}, Int(2)},
      {{"EXISTS", "m"}, Int(0)},  // emptied: the key is gone
      {{"OMAP.SET", "m", "", "", "\0x"s, std::string(300, 'v')}, Int(2)},
      {{"OMAP.GET", "m", ""}, Bulk("")},
      {{"OMAP.GET", "m", "\0x"s}, Bulk(std::string(300, 'v'))},
      {{"OMAP.SET", "m", std::string(500, 'k'), "-12"}, Int(1)},
      {{"OMAP.GET", "m", std::string(500, 'k')}, Bulk("-12")},
  });
}

TEST_F(OmapTest, RangeAndCount) {
  RunBothProtocols({
      {{"OMAP.SET", "m", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"}, Int(5)},
      {{"OMAP.RANGE", "m", "-", "+"}, Pairs({"a", "1", "b", "2", "c", "3", "d", "4", "e", "5"})},
      {{"OMAP.RANGE", "m", "[b", "(d"}, Pairs({"b", "2", "c", "3"})},
      {{"OMAP.RANGE", "m", "(b", "[d"}, Pairs({"c", "3", "d", "4"})},
      {{"OMAP.RANGE", "m", "[bb", "+"}, Pairs({"c", "3", "d", "4", "e", "5"})},
      {{"OMAP.RANGE", "m", "+", "-"}, Pairs({})},
      {{"OMAP.RANGE", "m", "[d", "[b"}, Pairs({})},
      {{"OMAP.RANGE", "m", "[d", "[b", "REV"}, Pairs({"d", "4", "c", "3", "b", "2"})},
      {{"OMAP.RANGE", "m", "+", "-", "REV", "LIMIT", "1", "2"}, Pairs({"d", "4", "c", "3"})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "1", "2"}, Pairs({"b", "2", "c", "3"})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "3", "-1"}, Pairs({"d", "4", "e", "5"})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "-1", "2"}, Pairs({})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "9", "2"}, Pairs({})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "0", "0"}, Pairs({})},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "0"}, Error(kSyntax)},
      {{"OMAP.RANGE", "m", "-", "+", "LIMIT", "x", "1"}, Error(kNotInt)},
      {{"OMAP.RANGE", "m", "-", "+", "REV", "REV"}, Error(kSyntax)},
      {{"OMAP.RANGE", "m", "-", "+", "WITHSCORES"}, Error(kSyntax)},
      {{"OMAP.RANGE", "m", "a", "+"}, Error(kBadRange)},
      {{"OMAP.RANGE", "m", "-x", "+"}, Error(kBadRange)},
      {{"OMAP.RANGE", "nokey", "a", "+"}, Error(kBadRange)},  // bounds before the key
      {{"OMAP.RANGE", "nokey", "-", "+"}, Pairs({})},
      {{"OMAP.COUNT", "m", "-", "+"}, Int(5)},
      {{"OMAP.COUNT", "m", "(a", "[c"}, Int(2)},
      {{"OMAP.COUNT", "m", "[c", "(a"}, Int(0)},
      {{"OMAP.COUNT", "m", "c", "+"}, Error(kBadRange)},
      {{"OMAP.COUNT", "nokey", "-", "+"}, Int(0)},
  });
}

TEST_F(OmapTest, FloorCeilRankAtFirstLast) {
  RunBothProtocols({
      {{"OMAP.SET", "m", "b", "2", "d", "4", "f", "6"}, Int(3)},
      {{"OMAP.FLOOR", "m", "c"}, Pairs({"b", "2"})},
      {{"OMAP.FLOOR", "m", "d"}, Pairs({"d", "4"})},
      {{"OMAP.FLOOR", "m", "a"}, Nil()},
      {{"OMAP.FLOOR", "m", "zzz"}, Pairs({"f", "6"})},
      {{"OMAP.CEIL", "m", "c"}, Pairs({"d", "4"})},
      {{"OMAP.CEIL", "m", "d"}, Pairs({"d", "4"})},
      {{"OMAP.CEIL", "m", "g"}, Nil()},
      {{"OMAP.CEIL", "m", ""}, Pairs({"b", "2"})},
      {{"OMAP.FLOOR", "nokey", "a"}, Nil()},
      {{"OMAP.CEIL", "nokey", "a"}, Nil()},
      {{"OMAP.RANK", "m", "b"}, Int(0)},
      {{"OMAP.RANK", "m", "f"}, Int(2)},
      {{"OMAP.RANK", "m", "c"}, Nil()},
      {{"OMAP.RANK", "nokey", "c"}, Nil()},
      {{"OMAP.AT", "m", "0"}, Pairs({"b", "2"})},
      {{"OMAP.AT", "m", "-1"}, Pairs({"f", "6"})},
      {{"OMAP.AT", "m", "-3"}, Pairs({"b", "2"})},
      {{"OMAP.AT", "m", "3"}, Nil()},
      {{"OMAP.AT", "m", "-4"}, Nil()},
      {{"OMAP.AT", "m", "x"}, Error(kNotInt)},
      {{"OMAP.AT", "nokey", "x"}, Error(kNotInt)},
      {{"OMAP.AT", "nokey", "0"}, Nil()},
      {{"OMAP.FIRST", "m"}, Pairs({"b", "2"})},
      {{"OMAP.LAST", "m"}, Pairs({"f", "6"})},
      {{"OMAP.FIRST", "nokey"}, Nil()},
      {{"OMAP.LAST", "nokey"}, Nil()},
  });
}

TEST_F(OmapTest, Pops) {
  RunBothProtocols({
      {{"OMAP.SET", "m", "a", "1", "b", "2", "c", "3", "d", "4"}, Int(4)},
      {{"OMAP.POPFIRST", "m"}, Pairs({"a", "1"})},
      {{"OMAP.POPLAST", "m"}, Pairs({"d", "4"})},
      {{"OMAP.POPFIRST", "m", "0"}, Pairs({})},
      {{"OMAP.POPFIRST", "m", "-1"}, Error(kNotPositive)},
      {{"OMAP.POPFIRST", "m", "x"}, Error(kNotPositive)},
      {{"OMAP.POPLAST", "m", "1", "2"}, Error(kSyntax)},  // as ZPOPMIN
      {{"OMAP.POPLAST", "m", "10"}, Pairs({"c", "3", "b", "2"})},
      {{"EXISTS", "m"}, Int(0)},
      {{"OMAP.POPFIRST", "m"}, Pairs({})},
      {{"OMAP.POPFIRST", "m", "3"}, Pairs({})},
  });
}

// Field, value pairs are a map in RESP3 and a flat array in RESP2 (the tables above accept
// either shape): RANGE, FLOOR, CEIL, AT, FIRST, LAST and the pops.
TEST_F(OmapTest, PairsAreMapsInResp3) {
  for (const int proto : {2, 3}) {
    RespClient c = Servers::Get().Vessel();
    c("HELLO", Str(proto));
    c("OMAP.SET", "m", "a", "1", "b", "2", "c", "3", "d", "4");
    const Reply::Type want = proto == 3 ? Reply::Type::kMap : Reply::Type::kArray;
    const std::vector<std::pair<Strings, Strings>> rows = {
        {{"OMAP.RANGE", "m", "[b", "+"}, {"b", "2", "c", "3", "d", "4"}},
        {{"OMAP.FLOOR", "m", "bb"}, {"b", "2"}},
        {{"OMAP.CEIL", "m", "bb"}, {"c", "3"}},
        {{"OMAP.AT", "m", "-1"}, {"d", "4"}},
        {{"OMAP.FIRST", "m"}, {"a", "1"}},
        {{"OMAP.LAST", "m"}, {"d", "4"}},
        {{"OMAP.POPFIRST", "m"}, {"a", "1"}},
        {{"OMAP.POPLAST", "m", "2"}, {"d", "4", "c", "3"}},
        {{"OMAP.POPLAST", "nokey", "2"}, {}},
    };
    for (const auto& [cmd, pairs] : rows) {
      const Reply r = c.Cmd(cmd);
      EXPECT_EQ(r.type, want) << "RESP" << proto << " " << cmd[0] << ": " << r.ToString();
      EXPECT_EQ(Elements(r), pairs) << "RESP" << proto << " " << cmd[0];
    }
    c("DEL", "m");
  }
}

TEST_F(OmapTest, WrongTypeBothWays) {
  std::vector<Row> rows = {
      {{"SET", "str", "v"}, Ok()},
      {{"HSET", "hash", "f", "v"}, Int(1)},
      {{"OMAP.SET", "m", "f", "v"}, Int(1)},
  };
  for (const std::string k : {"str", "hash"}) {
    const std::vector<Row> each = {
        {{"OMAP.SET", k, "f", "v"}, WrongType()},
        {{"OMAP.GET", k, "f"}, WrongType()},
        {{"OMAP.MGET", k, "f"}, WrongType()},
        {{"OMAP.DEL", k, "f"}, WrongType()},
        {{"OMAP.LEN", k}, WrongType()},
        {{"OMAP.RANGE", k, "-", "+"}, WrongType()},
        {{"OMAP.COUNT", k, "-", "+"}, WrongType()},
        {{"OMAP.FLOOR", k, "f"}, WrongType()},
        {{"OMAP.CEIL", k, "f"}, WrongType()},
        {{"OMAP.RANK", k, "f"}, WrongType()},
        {{"OMAP.AT", k, "0"}, WrongType()},
        {{"OMAP.FIRST", k}, WrongType()},
        {{"OMAP.LAST", k}, WrongType()},
        {{"OMAP.POPFIRST", k}, WrongType()},
        {{"OMAP.POPLAST", k, "2"}, WrongType()},
        {{"OMAP.RANGE", k, "x", "+"}, Error(kBadRange)},
    };
    rows.insert(rows.end(), each.begin(), each.end());
  }
  const std::vector<Row> tail = {
      {{"HGET", "m", "f"}, WrongType()},
      {{"ZRANGEBYLEX", "m", "-", "+"}, WrongType()},
      {{"GET", "m"}, WrongType()},
      {{"OMAP.GET", "m", "f"}, Bulk("v")},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  RunBothProtocols(rows);
}

TEST_F(OmapTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"OMAP.SET", "k", "f"},
                                                 {"OMAP.GET", "k"},
                                                 {"OMAP.GET", "k", "f", "g"},
                                                 {"OMAP.MGET", "k"},
                                                 {"OMAP.DEL", "k"},
                                                 {"OMAP.LEN"},
                                                 {"OMAP.RANGE", "k", "-"},
                                                 {"OMAP.COUNT", "k", "-", "+", "x"},
                                                 {"OMAP.FLOOR", "k"},
                                                 {"OMAP.CEIL", "k"},
                                                 {"OMAP.RANK", "k"},
                                                 {"OMAP.AT", "k"},
                                                 {"OMAP.FIRST"},
                                                 {"OMAP.LAST", "k", "x"},
                                                 {"OMAP.POPFIRST"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Arity(lower)});
  }
  RunBothProtocols(rows);
}

// ---- against Redis's hashes and sorted sets ----

TEST_F(OmapTest, AgreesWithRedisHashesAndLexRanges) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const Strings members = {"", "a", "aa", "ab", "b", "ba", "c", "\xff", "\x01", "m1", "m10", "m2"};
  for (const std::string& m : members) {
    Twin(v, r, {"OMAP.SET", "k", m, "v" + m}, {"HSET", "h", m, "v" + m});
    r("ZADD", "z", "0", m);
  }
  Twin(v, r, {"OMAP.SET", "k", "a", "x", "zz", "y"}, {"HSET", "h", "a", "x", "zz", "y"});
  r("ZADD", "z", "0", "zz");
  Twin(v, r, {"OMAP.SET", "k", "a"}, {"HSET", "h", "a"});
  Twin(v, r, {"OMAP.SET", "k", "a", "1", "b"}, {"HSET", "h", "a", "1", "b"});
  Twin(v, r, {"OMAP.GET", "k", "a"}, {"HGET", "h", "a"});
  Twin(v, r, {"OMAP.GET", "k", "none"}, {"HGET", "h", "none"});
  Twin(v, r, {"OMAP.MGET", "k", "a", "none", "zz"}, {"HMGET", "h", "a", "none", "zz"});
  Twin(v, r, {"OMAP.LEN", "k"}, {"HLEN", "h"});
  Twin(v, r, {"OMAP.LEN", "nokey"}, {"HLEN", "nokey"});
  Twin(v, r, {"OMAP.MGET", "nokey", "a"}, {"HMGET", "nokey", "a"});
  const Strings bounds = {"-",   "+",    "[a",    "(a",   "[", "(",  "[b", "(ab",
                          "[m1", "(m10", "[\xff", "[zzz", "a", "-a", "+a", "[c\x01"};
  for (const std::string& lo : bounds) {
    for (const std::string& hi : bounds) {
      Twin(v, r, {"OMAP.RANGE", "k", lo, hi}, {"ZRANGEBYLEX", "z", lo, hi}, true);
      Twin(v, r, {"OMAP.RANGE", "k", hi, lo, "REV"}, {"ZREVRANGEBYLEX", "z", hi, lo}, true);
      Twin(v, r, {"OMAP.COUNT", "k", lo, hi}, {"ZLEXCOUNT", "z", lo, hi});
    }
  }
  for (const char* off : {"0", "1", "5", "-1", "20", "x"}) {
    for (const char* cnt : {"0", "1", "3", "-1", "-5", "100"}) {
      Twin(v, r, {"OMAP.RANGE", "k", "-", "+", "LIMIT", off, cnt},
           {"ZRANGEBYLEX", "z", "-", "+", "LIMIT", off, cnt}, true);
      Twin(v, r, {"OMAP.RANGE", "k", "+", "[b", "REV", "LIMIT", off, cnt},
           {"ZREVRANGEBYLEX", "z", "+", "[b", "LIMIT", off, cnt}, true);
    }
  }
  Twin(v, r, {"OMAP.RANGE", "k", "-", "+", "LIMIT", "1"},
       {"ZRANGEBYLEX", "z", "-", "+", "LIMIT", "1"}, true);
  Twin(v, r, {"OMAP.RANGE", "k", "-", "+", "FOO"}, {"ZRANGEBYLEX", "z", "-", "+", "FOO"}, true);
  Twin(v, r, {"OMAP.RANGE", "nokey", "-", "+"}, {"ZRANGEBYLEX", "nokey", "-", "+"}, true);
  for (const std::string& m : Cat(members, {"zz", "none", "m"}))
    Twin(v, r, {"OMAP.RANK", "k", m}, {"ZRANK", "z", m});
  Twin(v, r, {"OMAP.DEL", "k", "a", "none", "a", "b"}, {"HDEL", "h", "a", "none", "a", "b"});
  Twin(v, r, {"OMAP.DEL", "nokey", "a"}, {"HDEL", "nokey", "a"});
  r("ZREM", "z", "a", "b");
  for (const char* n : {"1", "0", "2", "-1", "x", "1.5"})
    Twin(v, r, {"OMAP.POPFIRST", "k", n}, {"ZPOPMIN", "z", n}, true, true);
  for (const char* n : {"1", "2"})
    Twin(v, r, {"OMAP.POPLAST", "k", n}, {"ZPOPMAX", "z", n}, true, true);
  Twin(v, r, {"OMAP.POPFIRST", "k"}, {"ZPOPMIN", "z"}, true, true);
  Twin(v, r, {"OMAP.POPFIRST", "k", "1", "2"}, {"ZPOPMIN", "z", "1", "2"}, true, true);
  Twin(v, r, {"OMAP.POPFIRST", "nokey"}, {"ZPOPMIN", "nokey"}, true, true);
  Twin(v, r, {"OMAP.POPFIRST", "nokey", "3"}, {"ZPOPMIN", "nokey", "3"}, true, true);
  Twin(v, r, {"OMAP.POPFIRST", "k", "100"}, {"ZPOPMIN", "z", "100"}, true, true);
  Twin(v, r, {"EXISTS", "k"}, {"EXISTS", "z"});
}

// ---- COMMAND, ACL ----

TEST_F(OmapTest, CommandInfoDocsAndAcl) { ExpectCommandTable("omap", "omap", kCommands); }

// ---- the host's side of the type ----

TEST_F(OmapTest, ExpiresAsAnyKey) {
  RespClient c = Servers::Get().Vessel();
  ExpectExpires(c, {"OMAP.SET", "ttl", "f", "v"});
}

TEST_F(OmapTest, KeyspaceCommandsAndEncodings) {
  Strings many = {"OMAP.SET", "big"};
  for (int i = 0; i < 200; ++i) {
    many.push_back("f" + Str(1000 + i));
    many.push_back(Str(i));
  }
  RunBothProtocols({
      {{"OMAP.SET", "m", "a", "1", "b", std::string(300, 'x')}, Int(2)},
      {{"OBJECT", "ENCODING", "m"}, Bulk("packed")},
      {many, Int(200)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("btree")},
      {{"OMAP.AT", "big", "150"}, Pairs({"f1150", "150"})},
      {{"MEMORY", "USAGE", "m"}, IntRange(300, 1000)},
      {{"COPY", "m", "m2"}, Int(1)},
      {{"OMAP.SET", "m2", "a", "changed"}, Int(0)},  // the copy is deep
      {{"OMAP.GET", "m", "a"}, Bulk("1")},
      {{"COPY", "big", "big2"}, Int(1)},
      {{"OMAP.RANGE", "big2", "[f1198", "+"}, Pairs({"f1198", "198", "f1199", "199"})},
      {{"RENAME", "m2", "m3"}, Ok()},
      {{"EXPIRE", "m3", "100"}, Int(1)},
      {{"OMAP.SET", "m3", "c", "3"}, Int(1)},
      {{"TTL", "m3"}, Int(100)},
      {{"MOVE", "m3", "2"}, Int(1)},
      {{"SELECT", "2"}, Ok()},
      {{"OMAP.RANGE", "m3", "-", "+"},
       Pairs({"a", "changed", "b", std::string(300, 'x'), "c", "3"})},
      {{"SELECT", "0"}, Ok()},
      {{"OMAP.POPFIRST", "big", "200"}, Any()},
      {{"EXISTS", "big"}, Int(0)},
  });
}

TEST_F(OmapTest, TransactionsAndScripts) {
  RunBothProtocols({
      {{"MULTI"}, Ok()},
      {{"OMAP.SET", "m", "b", "2", "a", "1"}, Queued()},
      {{"OMAP.AT", "m", "0"}, Queued()},
      {{"OMAP.RANGE", "m", "x", "+"}, Queued()},
      {{"EXEC"}, Arr({Int(2), Pairs({"a", "1"}), Error(kBadRange)})},
      {{"EVAL",
        "redis.call('OMAP.SET', KEYS[1], 'c', '3'); return redis.call('OMAP.RANK', KEYS[1], 'c')",
        "1", "m"},
       Int(2)},
      {{"EVAL", "return redis.call('OMAP.RANGE', KEYS[1], '-', '+')", "1", "m"},
       BulkArr({"a", "1", "b", "2", "c", "3"})},
  });
}

TEST_F(OmapTest, KeyspaceEvents) {
  const Strings got = KeyeventsOf({{"OMAP.SET", "m", "a", "1", "b", "2", "c", "3"},
                                   {"OMAP.SET", "m", "a", "1"},
                                   {"OMAP.DEL", "m", "zz"},
                                   {"OMAP.DEL", "m", "a"},
                                   {"OMAP.POPFIRST", "m", "0"},
                                   {"OMAP.POPFIRST", "m"},
                                   {"OMAP.GET", "m", "c"},
                                   {"OMAP.POPLAST", "m", "3"}});
  EXPECT_EQ(got, (Strings{"new m", "omap.set m", "omap.set m", "omap.del m", "omap.popfirst m",
                          "omap.poplast m", "del m"}));
}

// ---- memory ----

TEST_F(OmapTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "omap");
  std::vector<Strings> creates;
  for (const int n : {1, 50, 128, 129, 3000}) {
    Strings cmd = {"OMAP.SET", "k" + Str(n)};
    for (int i = 0; i < n; ++i) {
      cmd.push_back("field:" + Str(i * 7919 % 100000));
      cmd.push_back(i % 3 == 0 ? Str(i) : std::string(i % 250, 'v'));
    }
    creates.push_back(cmd);
  }
  ExpectMemoryUsageMatches(c, "omap", creates);
  ExpectFlushFreesAll(c, "omap", base);
}

// An ordered map costs no more than a Redis hash of the same fields (MEMORY USAGE ... SAMPLES 0
// on redis-server): small ones against a listpack, large ones against a hashtable. (With 10 fields
// the key's own costs and one block's size class weigh as much as the fields, and this test
// binary's allocator is not redis-server's; the two come out equal.)
TEST_F(OmapTest, MemoryAtMostARedisHash) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  struct Case {
    std::string what;
    int fields;
    std::function<std::string(int)> field, value;
  };
  const std::vector<Case> cases = {
      {"10 short fields", 10, [](int i) { return "field" + Str(i); },
       [](int i) { return "value-" + Str(i * 10); }},
      {"10 fields, integer values", 10, [](int i) { return "field" + Str(i); },
       [](int i) { return Str(1000000 + i); }},
      {"100 fields", 100, [](int i) { return "field-" + Str(100000 + i); },
       [](int i) { return "value-" + Str(100000 + i); }},
      {"128 fields, 60-byte values", 128, [](int i) { return "f:" + Str(i * 7919); },
       [](int i) { return std::string(54, 'v') + Str(100000 + i); }},
      {"1000 fields", 1000, [](int i) { return "field-" + Str(100000 + i); },
       [](int i) { return "value-" + Str(100000 + i); }},
      {"100000 fields", 100000, [](int i) { return "field-" + Str(1000000 + i * 7); },
       [](int i) { return Str(i); }},
  };
  for (const Case& k : cases) {
    for (int i = 0; i < k.fields; i += 1000) {
      Strings vcmd = {"OMAP.SET", "m"}, rcmd = {"HSET", "m"};
      for (int j = i; j < std::min(k.fields, i + 1000); ++j) {
        for (Strings* cmd : {&vcmd, &rcmd}) {
          cmd->push_back(k.field(j));
          cmd->push_back(k.value(j));
        }
      }
      v.Cmd(vcmd);
      r.Cmd(rcmd);
    }
    const int64_t omap = v("MEMORY", "USAGE", "m", "SAMPLES", "0").integer;
    const int64_t hash = r("MEMORY", "USAGE", "m", "SAMPLES", "0").integer;
    // In-process, the omap's blocks come from glibc, whose usable size of a block moves by a
    // granule or two with the heap's history (the server's jemalloc classes do not): a small map,
    // one block, may show 16 bytes more than the same map in another run.
    EXPECT_LE(omap, hash + 16) << k.what << ": omap " << omap << " hash " << hash;
    std::printf("[ memory   ] %s: omap %.1f B/field, Redis hash %.1f\n", k.what.c_str(),
                static_cast<double>(omap) / k.fields, static_cast<double>(hash) / k.fields);
    v("DEL", "m");
    r("DEL", "m");
  }
}

// ---- serialization and persistence ----

TEST_F(OmapTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("omap");
  ASSERT_TRUE(type.found());
  std::vector<std::pair<std::string, std::string>> big;
  for (int i = 0; i < 5000; ++i) big.push_back({"f" + Str(100000 + i), i % 2 ? Str(i) : "v"});
  const std::vector<std::vector<std::pair<std::string, std::string>>> good = {
      {{"", ""}}, {{"a", "-1"}, {"b", std::string(300, 'x')}, {std::string(250, 'k'), "007"}}, big};
  for (const auto& pairs : good) ExpectRoundTrip(type, EncodedPairs(pairs));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no fields", EncodedPairs({})},
      {"out of order", EncodedPairs({{"b", "1"}, {"a", "2"}})},
      {"repeated", EncodedPairs({{"a", "1"}, {"a", "2"}})},
      {"truncated", EncodedPairs({{"a", "1"}, {"b", "2"}}).substr(0, 40)},
      {"count beyond the input", U64(1000000) + U64(1) + "a" + U64(1) + "b"},
  };
  ExpectRefused(type, bad);
  EXPECT_EQ(type.Load(EncodedPairs({{"a", "b"}}), 2), nullptr) << "an unknown encoding version";
}

TEST_F(OmapTest, DumpAndRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  Strings cmd = {"OMAP.SET", "m"};
  for (int i = 0; i < 300; ++i) {
    cmd.push_back("f" + Str(i));
    cmd.push_back(i % 2 ? Str(i) : std::string(i, 'x'));
  }
  c.Cmd(cmd);
  const Reply dump = c("DUMP", "m");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  EXPECT_EQ(c("RESTORE", "m2", "0", dump.str).str, "OK");
  EXPECT_EQ(c("TYPE", "m2").str, "omap");
  EXPECT_EQ(c("OMAP.RANGE", "m2", "-", "+"), c("OMAP.RANGE", "m", "-", "+"));
}

// ---- the model-based test ----

Reply R(Reply::Type t, std::string s = "", int64_t i = 0) { return Reply{t, std::move(s), i, {}}; }
Reply RInt(int64_t v) { return R(Reply::Type::kInt, "", v); }
Reply RBulk(const std::string& s) { return R(Reply::Type::kBulk, s); }
Reply RArr(std::vector<Reply> e) { return Reply{Reply::Type::kArray, "", 0, std::move(e)}; }
Reply RNil() { return R(Reply::Type::kNil); }

using Map = std::map<std::string, std::string>;

Reply PairsOf(Map::const_iterator first, size_t n, bool rev) {
  std::vector<Reply> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(RBulk(first->first));
    out.push_back(RBulk(first->second));
    rev ? --first : ++first;
  }
  return RArr(out);
}

// The reference: a std::map per key and the commands' rules, written independently.
class Model {
 public:
  Reply Apply(const Strings& cmd) {
    const std::string& op = cmd[0];
    auto it = keys_.find(cmd[1]);
    Map* m = it == keys_.end() ? nullptr : &it->second;
    Map empty;
    const Map& mm = m == nullptr ? empty : *m;
    auto done = [&](Reply r) {
      if (m != nullptr && m->empty()) keys_.erase(cmd[1]);
      return r;
    };
    if (op == "OMAP.SET") {
      Map& t = keys_[cmd[1]];
      int64_t added = 0;
      for (size_t i = 2; i + 1 < cmd.size(); i += 2)
        added += t.insert_or_assign(cmd[i], cmd[i + 1]).second;
      return RInt(added);
    }
    if (op == "OMAP.GET") {
      auto f = mm.find(cmd[2]);
      return f == mm.end() ? RNil() : RBulk(f->second);
    }
    if (op == "OMAP.DEL") {
      int64_t n = 0;
      for (size_t i = 2; i < cmd.size(); ++i) n += m != nullptr && m->erase(cmd[i]);
      return done(RInt(n));
    }
    if (op == "OMAP.LEN") return RInt(static_cast<int64_t>(mm.size()));
    if (op == "OMAP.RANK") {
      auto f = mm.find(cmd[2]);
      return f == mm.end() ? RNil() : RInt(std::distance(mm.begin(), f));
    }
    if (op == "OMAP.FLOOR") {
      auto f = mm.upper_bound(cmd[2]);
      if (f == mm.begin()) return RNil();
      return PairsOf(std::prev(f), 1, false);
    }
    if (op == "OMAP.CEIL") {
      auto f = mm.lower_bound(cmd[2]);
      return f == mm.end() ? RNil() : PairsOf(f, 1, false);
    }
    if (op == "OMAP.AT") {
      int64_t i = std::stoll(cmd[2]);
      const int64_t n = static_cast<int64_t>(mm.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return RNil();
      return PairsOf(std::next(mm.begin(), i), 1, false);
    }
    if (op == "OMAP.POPFIRST" || op == "OMAP.POPLAST") {
      const size_t n = std::min<size_t>(cmd.size() > 2 ? std::stoull(cmd[2]) : 1, mm.size());
      std::vector<Reply> out;
      for (size_t i = 0; i < n; ++i) {
        auto f = op == "OMAP.POPFIRST" ? m->begin() : std::prev(m->end());
        out.push_back(RBulk(f->first));
        out.push_back(RBulk(f->second));
        m->erase(f);
      }
      return done(RArr(out));
    }
    if (op == "OMAP.RANGE") {  // key min max LIMIT offset count, or key max min REV
      const bool rev = cmd.size() > 4 && cmd[4] == "REV";
      const std::string& lo = rev ? cmd[3] : cmd[2];
      const std::string& hi = rev ? cmd[2] : cmd[3];
      std::vector<Map::const_iterator> in;
      for (auto f = mm.begin(); f != mm.end(); ++f) {
        const bool above =
            lo == "-" || (lo[0] == '[' ? f->first >= lo.substr(1) : f->first > lo.substr(1));
        const bool below =
            hi == "+" || (hi[0] == '[' ? f->first <= hi.substr(1) : f->first < hi.substr(1));
        if (lo != "+" && hi != "-" && above && below) in.push_back(f);
      }
      if (rev) std::reverse(in.begin(), in.end());
      int64_t offset = 0, count = -1;
      if (cmd.size() > 6) offset = std::stoll(cmd[cmd.size() - 2]), count = std::stoll(cmd.back());
      std::vector<Reply> out;
      for (int64_t i = offset;
           offset >= 0 && i < static_cast<int64_t>(in.size()) && (count < 0 || i < offset + count);
           ++i) {
        out.push_back(RBulk(in[static_cast<size_t>(i)]->first));
        out.push_back(RBulk(in[static_cast<size_t>(i)]->second));
      }
      return RArr(out);
    }
    return R(Reply::Type::kError, "unknown " + op);
  }
  const std::map<std::string, Map>& keys() const { return keys_; }

 private:
  std::map<std::string, Map> keys_;
};

std::string RandomField(std::mt19937_64& rng) {
  const uint64_t k = rng() % 400;
  switch (k % 4) {
    case 0:
      return "f" + Str(static_cast<int64_t>(k));
    case 1:
      return std::string(k % 5, 'p') + Str(static_cast<int64_t>(k));
    case 2:
      return std::string(210, 'L') + Str(static_cast<int64_t>(k));
    default:
      return Str(static_cast<int64_t>(k * 7919));
  }
}

std::string RandomValue(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return Str(static_cast<int64_t>(rng() % 100000) - 50000);
    case 1:
      return std::string(rng() % 260, 'v');
    default:
      return "val" + Str(static_cast<int64_t>(rng() % 1000));
  }
}

std::string RandomBound(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "-";
    case 1:
      return "+";
    case 2:
      return "(" + RandomField(rng);
    default:
      return "[" + RandomField(rng);
  }
}

Strings RandomCommand(std::mt19937_64& rng) {
  const std::string k = "k" + Str(static_cast<int64_t>(rng() % 3));
  switch (rng() % 14) {
    case 0:
    case 1:
    case 2: {
      Strings c = {"OMAP.SET", k};
      const size_t n = rng() % 8 == 0 ? 50 + rng() % 100 : 1 + rng() % 3;
      for (size_t i = 0; i < n; ++i) {
        c.push_back(RandomField(rng));
        c.push_back(RandomValue(rng));
      }
      return c;
    }
    case 3:
      return {"OMAP.GET", k, RandomField(rng)};
    case 4:
      return {"OMAP.DEL", k, RandomField(rng), RandomField(rng)};
    case 5:
      return {"OMAP.LEN", k};
    case 6:
      return {"OMAP.RANK", k, RandomField(rng)};
    case 7:
      return {rng() % 2 ? "OMAP.FLOOR" : "OMAP.CEIL", k, RandomField(rng)};
    case 8:
      return {"OMAP.AT", k, Str(static_cast<int64_t>(rng() % 400) - 200)};
    case 9:
      return {rng() % 2 ? "OMAP.POPFIRST" : "OMAP.POPLAST", k,
              Str(static_cast<int64_t>(rng() % 4))};
    case 10:
      return {"OMAP.RANGE", k, RandomBound(rng), RandomBound(rng)};
    case 11:
      return {"OMAP.RANGE", k, RandomBound(rng), RandomBound(rng), "REV"};
    default:
      return {"OMAP.RANGE",
              k,
              RandomBound(rng),
              RandomBound(rng),
              "LIMIT",
              Str(static_cast<int64_t>(rng() % 20)),
              Str(static_cast<int64_t>(rng() % 30) - 5)};
  }
}

TEST_F(OmapTest, RandomCommandsAgreeWithTheModel) {
  const uint64_t seed = SeedFromEnv("OMAP_SEED", 20261202);
  std::mt19937_64 rng(seed);
  Model model;
  RunModelTest(
      "seed " + std::to_string(seed), 8000, 500, [&] { return RandomCommand(rng); },
      [&](const Strings& cmd) { return model.Apply(cmd); },
      [&](RespClient& c) {
        for (int k = 0; k < 3; ++k) {
          const std::string key = "k" + Str(k);
          ASSERT_EQ(c("OMAP.RANGE", key, "-", "+"), model.Apply({"OMAP.RANGE", key, "-", "+"}));
          ASSERT_EQ(c("EXISTS", key).integer, model.keys().contains(key) ? 1 : 0);
        }
      });
}

}  // namespace
}  // namespace vessel::test
