// The hashes module (HSET ... HSCAN) against vessel and redis-server: table rows run on both and
// must meet their expectation on both with identical replies (a hashtable's order is Redis's
// own, so those rows compare field-value pairs); HRANDFIELD and HSCAN are checked by their
// properties on both servers; a seeded model-based test checks every step against a std::map.
// Field expiry (Redis 7.4+, absent from redis-server 7.0) is in hashes_ttl_test.cc.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <functional>
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

using namespace std::string_literals;
using Pairs = std::map<std::string, std::string>;

constexpr char kInvalidCursor[] = "ERR invalid cursor";
constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kOverflow[] = "ERR increment or decrement would overflow";
constexpr char kHashNotInt[] = "ERR hash value is not an integer";
constexpr char kHashNotFloat[] = "ERR hash value is not a float";
constexpr char kOutOfRange[] = "ERR value is out of range";

// A reply of field-value pairs (a flat array in RESP2, a map in RESP3) holding exactly `want`,
// in any order.
Pairs PairsOf(const Reply& r) {
  Pairs out;
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) out[r.elems[i].str] = r.elems[i + 1].str;
  return out;
}
Expect PairsAre(Pairs want) {
  return {"pairs (" + std::to_string(want.size()) + ")", [want](const Reply& r) {
            if (r.type != Reply::Type::kArray && r.type != Reply::Type::kMap) return false;
            return r.elems.size() == want.size() * 2 && PairsOf(r) == want;
          }};
}
Pairs Zip(const Strings& fields, const Strings& values) {
  Pairs out;
  for (size_t i = 0; i < fields.size(); ++i) out[fields[i]] = values[i];
  return out;
}
Strings Flat(const Pairs& p) {
  Strings out;
  for (const auto& [f, v] : p) out.insert(out.end(), {f, v});
  return out;
}
std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

class HashesTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- every command in both representations ----

// The same rows for a compact hash (no filler) and a hashtable (600 filler fields, or one value
// longer than 64 bytes). Field f1..f3 are the ones the rows work on.
std::vector<Row> CommandRows(const Pairs& filler, const std::string& long_value) {
  const int64_t n = static_cast<int64_t>(filler.size());
  const bool table = !filler.empty() || !long_value.empty();
  const std::string v3 = long_value.empty() ? "three" : long_value;
  std::vector<Row> rows;
  if (!filler.empty()) rows.push_back({Cat({"HSET", "h"}, Flat(filler)), Int(n)});
  Pairs all = filler;
  all.insert({{"f1", "1"}, {"f2", "two"}, {"f3", v3}});
  const std::vector<Row> body = {
      {{"HSET", "h", "f1", "1", "f2", "two"}, Int(2)},
      {{"HSET", "h", "f1", "1", "f3", v3}, Int(1)},
      {{"HSETNX", "h", "f1", "other"}, Int(0)},
      {{"HMSET", "h", "f2", "two"}, Ok()},
      {{"OBJECT", "ENCODING", "h"}, Bulk(table ? "hashtable" : "listpack")},
      {{"TYPE", "h"}, Simple("hash")},
      {{"HLEN", "h"}, Int(n + 3)},
      {{"HGET", "h", "f1"}, Bulk("1")},
      {{"HGET", "h", "f3"}, Bulk(v3)},
      {{"HGET", "h", "nope"}, Nil()},
      {{"HMGET", "h", "f1", "nope", "f2", "f1"}, Arr({Bulk("1"), Nil(), Bulk("two"), Bulk("1")})},
      {{"HEXISTS", "h", "f2"}, Int(1)},
      {{"HEXISTS", "h", "nope"}, Int(0)},
      {{"HSTRLEN", "h", "f3"}, Int(static_cast<int64_t>(v3.size()))},
      {{"HSTRLEN", "h", "nope"}, Int(0)},
      {{"HINCRBY", "h", "f1", "41"}, Int(42)},
      {{"HINCRBY", "h", "f1", "-50"}, Int(-8)},
      {{"HINCRBY", "h", "f2", "1"}, Error(kHashNotInt)},
      {{"HINCRBYFLOAT", "h", "f1", "0.5"}, Bulk("-7.5")},
      {{"HINCRBYFLOAT", "h", "f2", "1"}, Error(kHashNotFloat)},
      {{"HINCRBY", "h", "f1", "1"}, Error(kHashNotInt)},  // "-7.5" is no integer
      {{"HSET", "h", "f1", "1"}, Int(0)},
      {{"HGETALL", "h"}, PairsAre(all), table ? Diff::kSkip : Diff::kExact, "hashtable order"},
      {{"HDEL", "h", "f2", "nope", "f2"}, Int(1)},
      {{"HEXISTS", "h", "f2"}, Int(0)},
      {{"HLEN", "h"}, Int(n + 2)},
      {{"HSETNX", "h", "f2", "again"}, Int(1)},
      {{"HGET", "h", "f2"}, Bulk("again")},
      {{"HDEL", "h", "f2"}, Int(1)},
  };
  rows.insert(rows.end(), body.begin(), body.end());
  all.erase("f2");
  if (!table) {
    rows.push_back({{"HKEYS", "h"}, BulkArr({"f1", "f3"})});
    rows.push_back({{"HVALS", "h"}, BulkArr({"1", v3})});
    rows.push_back({{"HGETALL", "h"}, BulkArr({"f1", "1", "f3", v3})});
  } else {
    Strings keys, vals;
    for (const auto& [f, v] : all) keys.push_back(f), vals.push_back(v);
    rows.push_back({{"HKEYS", "h"}, UnorderedBulkArr(keys), Diff::kSkip, "hashtable order"});
    rows.push_back({{"HVALS", "h"}, UnorderedBulkArr(vals), Diff::kSkip, "hashtable order"});
    rows.push_back({{"HGETALL", "h"}, PairsAre(all), Diff::kSkip, "hashtable order"});
  }
  Strings fields;
  for (const auto& [f, v] : all) fields.push_back(f);
  rows.push_back({Cat({"HDEL", "h"}, fields), Int(n + 2)});
  rows.push_back({{"EXISTS", "h"}, Int(0)});  // an emptied hash is deleted
  rows.push_back({{"HGETALL", "h"}, Arr({})});
  rows.push_back({{"HKEYS", "h"}, Arr({})});
  rows.push_back({{"HLEN", "h"}, Int(0)});
  rows.push_back({{"HDEL", "h", "f1"}, Int(0)});
  return rows;
}

TEST_F(HashesTest, EveryCommandInBothRepresentations) {
  for (int protocol : {2, 3}) {
    SCOPED_TRACE("RESP" + std::to_string(protocol));
    RunTable(CommandRows({}, ""), protocol);                                       // listpack
    RunTable(CommandRows(Zip(Seq("k", 0, 600), Seq("v", 0, 600)), ""), protocol);  // entries
    RunTable(CommandRows({}, std::string(65, 'L')), protocol);                     // value length
  }
}

TEST_F(HashesTest, BinarySafeFieldsAndValues) {
  const std::string bin = "a\0b\r\n"s;
  RunTable({
      {{"HSET", "h", bin, bin, "", ""}, Int(2)},
      {{"HGET", "h", bin}, Bulk(bin)},
      {{"HGET", "h", "a"}, Nil()},
      {{"HGET", "h", ""}, Bulk("")},
      {{"HSTRLEN", "h", bin}, Int(5)},
      {{"HEXISTS", "h", ""}, Int(1)},
      {{"HGETALL", "h"}, BulkArr({bin, bin, "", ""})},
      {{"HSET", "h", "n", "007", "m", "-0", "big", "18446744073709551616"}, Int(3)},
      {{"HGET", "h", "n"}, Bulk("007")},
      {{"HGET", "h", "m"}, Bulk("-0")},
      {{"HINCRBY", "h", "n", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "m", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "big", "1"}, Error(kHashNotInt)},
      {{"HINCRBYFLOAT", "h", "n", "1"}, Bulk("8")},
      {{"OBJECT", "ENCODING", "h"}, Bulk("listpack")},
  });
}

// ---- representations ----

TEST_F(HashesTest, ConversionThresholds) {
  const std::string v64(64, 'x'), v65(65, 'x');
  RunTable({
      // 512 entries (Redis 7.0's default hash-max-listpack-entries) stay compact; the 513th
      // converts; removing fields never converts back.
      {Cat({"HSET", "e"}, Flat(Zip(Seq("f", 0, 512), Seq("v", 0, 512)))), Int(512)},
      {{"OBJECT", "ENCODING", "e"}, Bulk("listpack")},
      {{"HSET", "e", "f0", "again"}, Int(0)},
      {{"OBJECT", "ENCODING", "e"}, Bulk("listpack")},
      {{"HSET", "e", "f512", "v"}, Int(1)},
      {{"OBJECT", "ENCODING", "e"}, Bulk("hashtable")},
      {Cat({"HDEL", "e"}, Seq("f", 0, 512)), Int(512)},
      {{"HLEN", "e"}, Int(1)},
      {{"OBJECT", "ENCODING", "e"}, Bulk("hashtable")},
      // One HSET of 800 pairs, 400 of them repeated: 400 fields, compact.
      {Cat({"HSET", "d"}, Cat(Flat(Zip(Seq("f", 0, 400), Seq("v", 0, 400))),
                              Flat(Zip(Seq("f", 0, 400), Seq("w", 0, 400))))),
       Int(400)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("listpack")},
      // Values and fields of 64 bytes stay compact; 65 converts, also for an existing field.
      {{"HSET", "v", "a", v64, v64, "b"}, Int(2)},
      {{"OBJECT", "ENCODING", "v"}, Bulk("listpack")},
      {{"HSET", "v", "a", v65}, Int(0)},
      {{"OBJECT", "ENCODING", "v"}, Bulk("hashtable")},
      {{"HSET", "w", v65, "1"}, Int(1)},
      {{"OBJECT", "ENCODING", "w"}, Bulk("hashtable")},
      // HSETNX converts only when it sets.
      {{"HSET", "nx", "a", "1"}, Int(1)},
      {{"HSETNX", "nx", "a", v65}, Int(0)},
      {{"OBJECT", "ENCODING", "nx"}, Bulk("listpack")},
      {{"HSETNX", "nx", "b", v65}, Int(1)},
      {{"OBJECT", "ENCODING", "nx"}, Bulk("hashtable")},
      // HINCRBY with a long field; HINCRBYFLOAT whose result is longer than 64 bytes.
      {{"HINCRBY", "i", v65, "1"}, Int(1)},
      {{"OBJECT", "ENCODING", "i"}, Bulk("hashtable")},
      {{"HINCRBYFLOAT", "g", "f", "1e40"}, Bulk("9999999999999999999783686092270256259072")},
      {{"OBJECT", "ENCODING", "g"}, Bulk("listpack")},
      {{"HINCRBYFLOAT", "g", "f", "1e70"}, Any()},
      {{"OBJECT", "ENCODING", "g"}, Bulk("hashtable")},
      // A failed HSET argument check happens before anything is stored.
      {{"HSET", "z", "a", "1", "b"}, Error("ERR wrong number of arguments for 'hset' command")},
      {{"EXISTS", "z"}, Int(0)},
  });
}

TEST_F(HashesTest, LargeHashes) {
  const Strings fields = Seq("field:", 0, 20000), values = Seq("value:", 0, 20000);
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (RespClient* c : {&v, &r}) {
    for (size_t i = 0; i < fields.size(); i += 1000) {
      Strings cmd = {"HSET", "big"};
      for (size_t j = i; j < i + 1000; ++j) cmd.insert(cmd.end(), {fields[j], values[j]});
      ASSERT_EQ(c->Cmd(cmd).integer, 1000);
    }
  }
  Pairs rest = Zip(Seq("field:", 19990, 20000), Seq("value:", 19990, 20000));
  rest["counter"] = "5";
  RunTable({
      {{"HLEN", "big"}, Int(20000)},
      {{"HGET", "big", "field:19999"}, Bulk("value:19999")},
      {{"HGET", "big", "field:20000"}, Nil()},
      {{"HINCRBY", "big", "counter", "5"}, Int(5)},
      {Cat({"HDEL", "big"}, Seq("field:", 0, 19990)), Int(19990)},
      {{"HLEN", "big"}, Int(11)},
      {{"HGETALL", "big"}, PairsAre(rest), Diff::kSkip, "hashtable order"},
      {{"OBJECT", "ENCODING", "big"}, Bulk("hashtable")},
  });
}

// ---- numbers ----

TEST_F(HashesTest, HIncrByEdges) {
  RunTable({
      {{"HINCRBY", "h", "n", "9223372036854775807"}, Int(INT64_MAX)},
      {{"HINCRBY", "h", "n", "1"}, Error(kOverflow)},
      {{"HINCRBY", "h", "n", "0"}, Int(INT64_MAX)},
      {{"HINCRBY", "h", "n", "-9223372036854775807"}, Int(0)},
      {{"HINCRBY", "h", "n", "-9223372036854775808"}, Int(INT64_MIN)},
      {{"HINCRBY", "h", "n", "-1"}, Error(kOverflow)},
      {{"HGET", "h", "n"}, Bulk("-9223372036854775808")},
      {{"HINCRBY", "h", "n", "x"}, Error(kNotInt)},
      {{"HINCRBY", "h", "n", "1.5"}, Error(kNotInt)},
      {{"HINCRBY", "h", "n", "9223372036854775808"}, Error(kNotInt)},
      {{"HINCRBY", "h", "n", " 1"}, Error(kNotInt)},
      {{"HINCRBY", "h", "n", ""}, Error(kNotInt)},
      {{"HINCRBY", "nokey", "n", "x"}, Error(kNotInt)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"HSET", "h", "s", " 1", "t", "1 ", "u", "+1", "w", "01"}, Int(4)},
      {{"HINCRBY", "h", "s", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "t", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "u", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "w", "1"}, Error(kHashNotInt)},
      {{"HINCRBY", "h", "new", "-3"}, Int(-3)},
  });
}

TEST_F(HashesTest, HIncrByFloatFormatsLikeRedis) {
  std::vector<Row> rows;
  int field = 0;
  // A start value (or none), an increment: the stored and replied text must be Redis's.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "1"},
      {"", "1.5"},
      {"", "-1.5"},
      {"", "0.1"},
      {"10.5", "0.1"},
      {"1", "0.2"},
      {"3", "-3"},
      {"", "1e3"},
      {"", "1E-5"},
      {"", "5.0e3"},
      {"", "-0.0"},
      {"", "0"},
      {"", "3.0000000000000000001"},
      {"", "1e308"},
      {"1e308", "1e308"},
      {"", "-1e308"},
      {"", "1.7976931348623157e308"},
      {"", "1e-320"},
      {"", "123456789012345678901234567890"},
      {"0.1", "0.2"},
      {"1.1", "2.2"},
      {"", ".5"},
      {"", "5."},
      {"", "0x10"},
      {"", "+5"},
      {"-5", "2.5"},
      {"9223372036854775807", "1"},
      {"inf", "1"},
      {"-inf", "1"},
      {"1e4000", "1"},
      {"", "1e4000"},
      {"", "inf"},
      {"", "-inf"},
      {"", "nan"},
      {"", "NaN"},
      {"", "abc"},
      {"", " 1"},
      {"", "1 "},
      {"", ""},
      {"", "1\0"s},
      {"1\0x"s, "1"},
      {"abc", "1"},
      {"", "1e"},
      {"", "e1"},
      {"", "-"},
      {"", "1.7976931348623157e309"},
      {"", "0.00000000000000001"},
      {"", "99999999999999999"},
      {"", "-0.000000000000000001"},
  };
  for (const auto& [start, incr] : cases) {
    const std::string f = "f" + std::to_string(field++);
    if (!start.empty()) rows.push_back({{"HSET", "h", f, start}, Int(1)});
    rows.push_back({{"HINCRBYFLOAT", "h", f, incr}, Any()});
    rows.push_back({{"HGET", "h", f}, Any()});
  }
  rows.push_back({{"HINCRBYFLOAT", "nokey", "f", "inf"}, Error("ERR value is NaN or Infinity")});
  rows.push_back({{"HINCRBYFLOAT", "nokey", "f", "x"}, Error(kNotFloat)});
  rows.push_back({{"EXISTS", "nokey"}, Int(0)});
  rows.push_back({{"HSET", "h", "top", "1.18e4932"}, Int(1)});
  rows.push_back({{"HINCRBYFLOAT", "h", "top", "1.18e4932"},
                  Error("ERR increment would produce NaN or Infinity")});
  rows.push_back({{"HGET", "h", "top"}, Bulk("1.18e4932")});
  RunTable(rows);
}

// ---- HRANDFIELD ----

TEST_F(HashesTest, HRandFieldErrorsAndEdges) {
  RunTable({
      {{"HRANDFIELD", "nokey"}, Nil()},
      {{"HRANDFIELD", "nokey", "0"}, Arr({})},
      {{"HRANDFIELD", "nokey", "5"}, Arr({})},
      {{"HRANDFIELD", "nokey", "-5", "WITHVALUES"}, Arr({})},
      {{"HRANDFIELD", "nokey", "x"}, Error(kNotInt)},
      {{"HRANDFIELD", "nokey", "1", "x"}, Error(kSyntax)},
      {{"HRANDFIELD", "nokey", "1", "WITHVALUES", "x"}, Error(kSyntax)},
      {{"HSET", "h", "a", "1", "b", "2", "c", "3"}, Int(3)},
      {{"HRANDFIELD", "h", "0"}, Arr({})},
      {{"HRANDFIELD", "h", "0", "WITHVALUES"}, Arr({})},
      {{"HRANDFIELD", "h", "x", "WITHVALUES"}, Error(kNotInt)},
      {{"HRANDFIELD", "h", "1.5"}, Error(kNotInt)},
      {{"HRANDFIELD", "h", "99999999999999999999"}, Error(kNotInt)},
      {{"HRANDFIELD", "h", "-9223372036854775808"},
       Error("ERR value is out of range, value must between -9223372036854775807 and "
             "9223372036854775807")},
      {{"HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"}, Error(kOutOfRange)},
      {{"HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"}, Error(kOutOfRange)},
      {{"HRANDFIELD", "h", "4611686018427387903", "withvalues"},
       BulkArr({"a", "1", "b", "2", "c", "3"})},
      {{"HRANDFIELD", "h", "9223372036854775807"}, BulkArr({"a", "b", "c"})},
      {{"HRANDFIELD", "h", "3"}, BulkArr({"a", "b", "c"})},
      {{"HSET", "one", "x", "y"}, Int(1)},
      {{"HRANDFIELD", "one"}, Bulk("x")},
      {{"HRANDFIELD", "one", "-3"}, BulkArr({"x", "x", "x"})},
      {{"HRANDFIELD", "one", "-2", "WITHVALUES"}, BulkArr({"x", "y", "x", "y"})},
      {{"HRANDFIELD", "one", "1", "WITHVALUES"}, BulkArr({"x", "y"})},
  });
  RunTable(
      {
          {{"HSET", "one3", "x", "y"}, Int(1)},
          {{"HRANDFIELD", "one3", "-2", "WITHVALUES"},
           Arr({BulkArr({"x", "y"}), BulkArr({"x", "y"})})},
          {{"HRANDFIELD", "one3", "5", "WITHVALUES"}, Arr({BulkArr({"x", "y"})})},
          {{"HRANDFIELD", "one3", "-2"}, BulkArr({"x", "x"})},
          {{"HRANDFIELD", "nokey", "2", "WITHVALUES"}, Arr({})},
      },
      3);
  // Redis 7.0 tries to build this reply and runs out of memory: vessel refuses it.
  RunVesselTable({
      {{"HSET", "hv", "a", "1"}, Int(1)},
      {{"HRANDFIELD", "hv", "-9223372036854775807"},
       Error("ERR value is out of range, the reply would be too large")},
      {{"HRANDFIELD", "hv", "-100000", "WITHVALUES"}, Any()},
  });
}

// Hashes of both representations, named by it.
struct Population {
  std::string key;
  Pairs pairs;
};
std::vector<Population> Populations() {
  return {{"small", Zip(Seq("f", 0, 30), Seq("v", 0, 30))},
          {"table", Zip(Seq("field-", 0, 2000), Seq("value-", 0, 2000))}};
}
void Populate(RespClient& c, const Population& p) {
  c.Cmd({"DEL", p.key});
  ASSERT_EQ(c.Cmd(Cat({"HSET", p.key}, Flat(p.pairs))).integer,
            static_cast<int64_t>(p.pairs.size()));
}

TEST_F(HashesTest, HRandFieldProperties) {
  OnBoth([](RespClient& c) {
    for (int protocol : {2, 3}) {
      c("HELLO", std::to_string(protocol));
      for (const Population& p : Populations()) {
        SCOPED_TRACE(p.key + " RESP" + std::to_string(protocol));
        Populate(c, p);
        const size_t n = p.pairs.size();
        EXPECT_TRUE(p.pairs.contains(c("HRANDFIELD", p.key).str));
        for (size_t count : {size_t{1}, size_t{5}, n / 3, n / 3 + 1, n / 2, n - 1, n, n + 7}) {
          const Reply r = c("HRANDFIELD", p.key, std::to_string(count));
          ASSERT_EQ(r.type, Reply::Type::kArray);
          std::set<std::string> got;
          for (const Reply& e : r.elems) got.insert(e.str);
          EXPECT_EQ(r.elems.size(), std::min(count, n)) << count;
          EXPECT_EQ(got.size(), r.elems.size()) << count << ": fields repeat";
          for (const std::string& f : got) EXPECT_TRUE(p.pairs.contains(f)) << f;
          // WITHVALUES: pairs, flat in RESP2 and nested in RESP3, each a real field and value.
          const Reply w = c("HRANDFIELD", p.key, std::to_string(count), "WITHVALUES");
          Pairs pairs;
          if (protocol == 2) {
            ASSERT_EQ(w.elems.size(), 2 * std::min(count, n));
            pairs = PairsOf(w);
          } else {
            ASSERT_EQ(w.elems.size(), std::min(count, n));
            for (const Reply& e : w.elems) {
              ASSERT_EQ(e.elems.size(), 2u);
              pairs[e.elems[0].str] = e.elems[1].str;
            }
          }
          EXPECT_EQ(pairs.size(), std::min(count, n));
          for (const auto& [f, v] : pairs) EXPECT_EQ(p.pairs.at(f), v);
        }
        const Reply rep = c("HRANDFIELD", p.key, "-" + std::to_string(3 * n), "WITHVALUES");
        ASSERT_EQ(rep.elems.size(), protocol == 2 ? 6 * n : 3 * n);
        for (size_t i = 0; i < rep.elems.size(); i += protocol == 2 ? 2 : 1) {
          const std::string f = protocol == 2 ? rep.elems[i].str : rep.elems[i].elems[0].str;
          const std::string v = protocol == 2 ? rep.elems[i + 1].str : rep.elems[i].elems[1].str;
          EXPECT_EQ(p.pairs.at(f), v);
        }
        EXPECT_EQ(c("HLEN", p.key).integer, static_cast<int64_t>(n));  // nothing removed
      }
    }
  });
}

TEST_F(HashesTest, RandomFieldsAreSpreadEvenly) {
  RespClient c = Servers::Get().Vessel();
  for (const Population& p : Populations()) {
    SCOPED_TRACE(p.key);
    Populate(c, p);
    const size_t n = p.pairs.size(), per = 300;
    std::map<std::string, int> seen;
    for (const Reply& e : c("HRANDFIELD", p.key, "-" + std::to_string(n * per)).elems)
      ++seen[e.str];
    EXPECT_EQ(seen.size(), n);
    for (const auto& [f, k] : seen) {
      EXPECT_GT(k, static_cast<int>(per) / 2) << f;
      EXPECT_LT(k, static_cast<int>(per) * 2) << f;
    }
    // Distinct picks of a few fields: each field about equally often.
    std::map<std::string, int> distinct;
    for (int round = 0; round < 3000; ++round) {
      for (const Reply& e : c("HRANDFIELD", p.key, "3").elems) ++distinct[e.str];
    }
    const double mean = 3.0 * 3000 / static_cast<double>(n);
    if (mean >= 50) {
      for (const auto& [f, k] : distinct) EXPECT_GT(k, mean / 2) << f;
    }
  }
}

// ---- HSCAN ----

TEST_F(HashesTest, HScanArgumentsAndSmallHashes) {
  RunTable({
      {{"HSCAN", "nokey", "0"}, Arr({Bulk("0"), Arr({})})},
      {{"HSCAN", "nokey", "abc"}, Error(kInvalidCursor)},
      {{"HSCAN", "nokey", "0", "COUNT", "0"}, Arr({Bulk("0"), Arr({})})},  // options unchecked
      {{"HSET", "h", "a1", "x", "b2", "y", "a3", "z"}, Int(3)},
      {{"HSCAN", "h", "0"}, Arr({Bulk("0"), BulkArr({"a1", "x", "b2", "y", "a3", "z"})})},
      {{"HSCAN", "h", "0", "MATCH", "a*"}, Arr({Bulk("0"), BulkArr({"a1", "x", "a3", "z"})})},
      {{"HSCAN", "h", "0", "match", "?2", "count", "1"}, Arr({Bulk("0"), BulkArr({"b2", "y"})})},
      {{"HSCAN", "h", "0", "MATCH", "x"}, Arr({Bulk("0"), Arr({})})},
      {{"HSCAN", "h", "0", "MATCH", "a*", "MATCH", "b*"}, Arr({Bulk("0"), BulkArr({"b2", "y"})})},
      {{"HSCAN", "h", "7"}, Arr({Bulk("0"), BulkArr({"a1", "x", "b2", "y", "a3", "z"})})},
      {{"HSCAN", "h", ""}, Arr({Bulk("0"), BulkArr({"a1", "x", "b2", "y", "a3", "z"})})},
      {{"HSCAN", "h", "-1"}, Arr({Bulk("0"), BulkArr({"a1", "x", "b2", "y", "a3", "z"})})},
      {{"HSCAN", "h", "18446744073709551616"}, Error(kInvalidCursor)},
      {{"HSCAN", "h", " 1"}, Error(kInvalidCursor)},
      {{"HSCAN", "h", "1x"}, Error(kInvalidCursor)},
      {{"HSCAN", "h", "0", "COUNT", "0"}, Error(kSyntax)},
      {{"HSCAN", "h", "0", "COUNT", "-1"}, Error(kSyntax)},
      {{"HSCAN", "h", "0", "COUNT", "x"}, Error(kNotInt)},
      {{"HSCAN", "h", "0", "COUNT"}, Error(kSyntax)},
      {{"HSCAN", "h", "0", "MATCH"}, Error(kSyntax)},
      {{"HSCAN", "h", "0", "TYPE", "hash"}, Error(kSyntax)},
      {{"HSCAN", "h", "0", "NOVALUES"}, Error(kSyntax)},
      {{"HSCAN", "h", "x", "COUNT", "0"}, Error(kInvalidCursor)},
  });
  RunTable({{{"HSET", "h3", "a", "1"}, Int(1)},
            {{"HSCAN", "h3", "0"}, Arr({Bulk("0"), BulkArr({"a", "1"})})}},
           3);
}

// Iterates key with HSCAN to the end; calls between(step) after each call. Returns every pair
// returned (fields with repetitions) and checks the cursor protocol and the pairs' values.
std::multiset<std::string> ScanAll(RespClient& c, const std::string& key, Strings options,
                                   const std::function<void(int)>& between = nullptr) {
  std::multiset<std::string> seen;
  std::string cursor = "0";
  for (int step = 0; step < 100000; ++step) {
    const Reply r = c.Cmd(Cat({"HSCAN", key, cursor}, options));
    if (r.type != Reply::Type::kArray || r.elems.size() != 2 || r.elems[1].elems.size() % 2) {
      ADD_FAILURE() << r.ToString();
      break;
    }
    for (size_t i = 0; i < r.elems[1].elems.size(); i += 2) seen.insert(r.elems[1].elems[i].str);
    cursor = r.elems[0].str;
    if (cursor == "0") return seen;
    if (between) between(step);
  }
  ADD_FAILURE() << "HSCAN did not finish";
  return seen;
}

TEST_F(HashesTest, HScanFullIterationsWithMatchAndCount) {
  OnBoth([](RespClient& c) {
    for (const Population& p : Populations()) {
      SCOPED_TRACE(p.key);
      Populate(c, p);
      for (const Strings& options : std::vector<Strings>{{},
                                                         {"COUNT", "1"},
                                                         {"COUNT", "7"},
                                                         {"COUNT", "1000000"},
                                                         {"MATCH", "*1*", "COUNT", "13"},
                                                         {"MATCH", "nothing*"}}) {
        SCOPED_TRACE(Show(options));
        const std::multiset<std::string> seen = ScanAll(c, p.key, options);
        std::set<std::string> want;
        for (const auto& [f, v] : p.pairs) {
          const bool match = options.empty() || options[0] != "MATCH" ||
                             (options[1] == "*1*" && f.find('1') != std::string::npos);
          if (match) want.insert(f);
        }
        EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), want);
      }
    }
  });
}

// Redis's guarantee: a field present from the start to the end of an iteration is returned,
// whatever happens to the hash meanwhile: growth through conversion and resizes, removals,
// shrinking. Checked on both servers, with the stable fields first, last or interleaved.
TEST_F(HashesTest, HScanReturnsEveryFieldPresentThroughout) {
  for (const std::string layout : {"stable-first", "stable-last", "interleaved"}) {
    SCOPED_TRACE(layout);
    OnBoth([&](RespClient& c) {
      c.Cmd({"DEL", "h"});
      const Strings stable = Seq("stable-", 0, 400), doomed = Seq("doomed-", 0, 2000);
      Strings order;
      if (layout == "stable-first") order = Cat(stable, doomed);
      if (layout == "stable-last") order = Cat(doomed, stable);
      for (size_t i = 0; layout == "interleaved" && i < doomed.size(); ++i) {
        order.push_back(doomed[i]);
        if (i % 5 == 0) order.push_back(stable[i / 5]);
      }
      for (size_t i = 0; i < order.size(); i += 500) {
        Strings cmd = {"HSET", "h"};
        for (size_t j = i; j < std::min(i + 500, order.size()); ++j) {
          cmd.insert(cmd.end(), {order[j], "v"});
        }
        c.Cmd(cmd);
      }
      Strings victims = doomed;
      std::shuffle(victims.begin(), victims.end(), std::mt19937(7));
      size_t next_victim = 0;
      const std::multiset<std::string> seen = ScanAll(c, "h", {"COUNT", "20"}, [&](int step) {
        const std::string batch = "new-" + std::to_string(step) + "-";
        switch (step % 3) {
          case 0: {  // grow, through resizes
            Strings cmd = {"HSET", "h"};
            for (const std::string& f : Seq(batch, 0, 150)) cmd.insert(cmd.end(), {f, "n"});
            c.Cmd(cmd);
            break;
          }
          case 1:  // remove fields present at the start, anywhere
            if (next_victim < victims.size()) {
              const size_t end = std::min(next_victim + 120, victims.size());
              c.Cmd(Cat({"HDEL", "h"},
                        Strings(victims.begin() + next_victim, victims.begin() + end)));
              next_victim = end;
            }
            break;
          default:  // remove what was added: the table shrinks
            c.Cmd(Cat({"HDEL", "h"}, Seq("new-" + std::to_string(step - 2) + "-", 0, 150)));
            break;
        }
      });
      for (const std::string& f : stable) EXPECT_TRUE(seen.contains(f)) << "missed " << f;
    });
  }
  // A compact hash is returned whole in one call (cursor 0), so it can only convert between
  // iterations: one that converts and keeps growing while the next iteration runs loses nothing.
  OnBoth([](RespClient& c) {
    c.Cmd({"DEL", "g"});
    c.Cmd(Cat({"HSET", "g"}, Flat(Zip(Seq("s", 0, 300), Seq("v", 0, 300)))));
    const Reply whole = c("HSCAN", "g", "0", "COUNT", "5");
    EXPECT_EQ(whole.elems.at(0).str, "0");
    EXPECT_EQ(whole.elems.at(1).elems.size(), 600u);
    c.Cmd(Cat({"HSET", "g"}, Flat(Zip(Seq("t", 0, 300), Seq("v", 0, 300)))));
    EXPECT_EQ(c("OBJECT", "ENCODING", "g").str, "hashtable");
    int added = 0;
    const std::multiset<std::string> seen = ScanAll(c, "g", {"COUNT", "3"}, [&](int step) {
      if (step > 300) return;
      Strings cmd = {"HSET", "g"};
      for (int i = 0; i < 20; ++i) cmd.insert(cmd.end(), {"x" + std::to_string(added++), "v"});
      c.Cmd(cmd);
    });
    for (const std::string& f : Cat(Seq("s", 0, 300), Seq("t", 0, 300))) {
      EXPECT_TRUE(seen.contains(f)) << "missed " << f;
    }
  });
}

// ---- types, protocol, keyspace ----

TEST_F(HashesTest, WrongTypeBothWays) {
  RunTable({
      {{"SET", "str", "v"}, Ok()},
      {{"RPUSH", "list", "a"}, Int(1)},
      {{"SADD", "set", "a"}, Int(1)},
      {{"HSET", "h", "f", "1"}, Int(1)},
  });
  std::vector<Row> rows;
  for (const char* other : {"str", "list", "set"}) {
    for (const Strings& cmd : std::vector<Strings>{{"HSET", other, "f", "v"},
                                                   {"HSETNX", other, "f", "v"},
                                                   {"HMSET", other, "f", "v"},
                                                   {"HGET", other, "f"},
                                                   {"HMGET", other, "f"},
                                                   {"HDEL", other, "f"},
                                                   {"HLEN", other},
                                                   {"HSTRLEN", other, "f"},
                                                   {"HEXISTS", other, "f"},
                                                   {"HKEYS", other},
                                                   {"HVALS", other},
                                                   {"HGETALL", other},
                                                   {"HINCRBY", other, "f", "1"},
                                                   {"HINCRBYFLOAT", other, "f", "1"},
                                                   {"HRANDFIELD", other},
                                                   {"HRANDFIELD", other, "2"},
                                                   {"HRANDFIELD", other, "-2", "WITHVALUES"},
                                                   {"HSCAN", other, "0"},
                                                   {"HSCAN", other, "0", "COUNT", "0"}}) {
      rows.push_back({cmd, WrongType()});
    }
  }
  for (const Strings& cmd : std::vector<Strings>{{"GET", "h"},
                                                 {"APPEND", "h", "x"},
                                                 {"INCR", "h"},
                                                 {"LPUSH", "h", "x"},
                                                 {"LRANGE", "h", "0", "-1"},
                                                 {"SADD", "h", "x"},
                                                 {"SMEMBERS", "h"},
                                                 {"SINTER", "set", "h"}}) {
    rows.push_back({cmd, WrongType()});
  }
  rows.push_back({{"HINCRBY", "str", "f", "x"}, Error(kNotInt)});  // the argument comes first
  rows.push_back({{"HINCRBYFLOAT", "str", "f", "x"}, Error(kNotFloat)});
  rows.push_back({{"HRANDFIELD", "str", "x"}, Error(kNotInt)});
  rows.push_back({{"HSCAN", "str", "x"}, Error(kInvalidCursor)});
  rows.push_back({{"MGET", "h", "str"}, Arr({Nil(), Bulk("v")})});
  rows.push_back({{"SET", "h", "now a string"}, Ok()});
  rows.push_back({{"TYPE", "h"}, Simple("string")});
  RunTable(rows);
}

TEST_F(HashesTest, Resp3ReplyTypes) {
  RunTable(
      {
          {{"HGETALL", "nokey"}, Arr({})},
          {{"HSET", "h", "a", "1", "b", "2"}, Int(2)},
          {{"HGETALL", "h"}, BulkArr({"a", "1", "b", "2"})},
          {{"HKEYS", "h"}, BulkArr({"a", "b"})},
          {{"HMGET", "h", "a", "x"}, Arr({Bulk("1"), Nil()})},
          {{"HGET", "h", "x"}, Nil()},
          {{"HINCRBYFLOAT", "h", "a", "1.5"}, Bulk("2.5")},
          {{"HRANDFIELD", "nokey"}, Nil()},
      },
      3);
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (RespClient* c : {&v, &r}) {
    c->Cmd({"HELLO", "3"});
    c->Cmd({"HSET", "t", "x", "y"});
  }
  for (const Strings& cmd : std::vector<Strings>{{"HGETALL", "t"},
                                                 {"HGETALL", "nokey"},
                                                 {"HKEYS", "t"},
                                                 {"HVALS", "nokey"},
                                                 {"HRANDFIELD", "t", "1", "WITHVALUES"},
                                                 {"HRANDFIELD", "t", "-1", "WITHVALUES"},
                                                 {"HSCAN", "t", "0"},
                                                 {"HINCRBYFLOAT", "t", "n", "1"}}) {
    const Reply got = v.Cmd(cmd), want = r.Cmd(cmd);
    EXPECT_EQ(got, want) << Show(cmd) << "\n  vessel: " << got.ToString()
                         << "\n  redis:  " << want.ToString();
  }
  EXPECT_EQ(v("HGETALL", "t").type, Reply::Type::kMap);
  EXPECT_EQ(v("HGETALL", "nokey").type, Reply::Type::kMap);
  EXPECT_EQ(v("HRANDFIELD", "t", "1", "WITHVALUES").elems.at(0).type, Reply::Type::kArray);
}

TEST_F(HashesTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"HSET", "k", "f"},
                                                 {"HSET", "k", "f", "v", "g"},
                                                 {"HMSET", "k", "f"},
                                                 {"HMSET", "k", "f", "v", "g"},
                                                 {"HSETNX", "k", "f"},
                                                 {"HSETNX", "k", "f", "v", "x"},
                                                 {"HGET", "k"},
                                                 {"HGET", "k", "f", "x"},
                                                 {"HMGET", "k"},
                                                 {"HDEL", "k"},
                                                 {"HLEN"},
                                                 {"HLEN", "k", "x"},
                                                 {"HSTRLEN", "k"},
                                                 {"HEXISTS", "k"},
                                                 {"HKEYS"},
                                                 {"HVALS", "k", "x"},
                                                 {"HGETALL"},
                                                 {"HINCRBY", "k", "f"},
                                                 {"HINCRBYFLOAT", "k", "f", "1", "x"},
                                                 {"HRANDFIELD"},
                                                 {"HSCAN", "k"}}) {
    rows.push_back(
        {cmd, Error("ERR wrong number of arguments for '" + Lower(cmd[0]) + "' command")});
  }
  RunTable(rows);
}

// COMMAND INFO as Redis's, but for the "module" flag the host adds to module commands.
Reply WithoutModuleFlag(Reply r) {
  if (r.elems.size() == 1 && r.elems[0].elems.size() > 2) {
    std::erase_if(r.elems[0].elems[2].elems, [](const Reply& f) { return f.str == "module"; });
  }
  return r;
}

TEST_F(HashesTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name :
       {"hset", "hsetnx", "hmset", "hget", "hmget", "hdel", "hlen", "hstrlen", "hexists", "hkeys",
        "hvals", "hgetall", "hincrby", "hincrbyfloat", "hrandfield", "hscan"}) {
    const Reply v = WithoutModuleFlag(vessel("COMMAND", "INFO", name));
    const Reply r = WithoutModuleFlag(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
  for (const Strings& cmd : std::vector<Strings>{{"HSET", "k", "f", "v"},
                                                 {"HGETALL", "k"},
                                                 {"HSCAN", "k", "0", "MATCH", "k*"},
                                                 {"HRANDFIELD", "k", "1", "WITHVALUES"},
                                                 {"HMGET", "k", "a", "b"}}) {
    for (const char* sub : {"GETKEYS", "GETKEYSANDFLAGS"}) {
      const Reply v = vessel.Cmd(Cat({"COMMAND", sub}, cmd));
      const Reply r = redis.Cmd(Cat({"COMMAND", sub}, cmd));
      EXPECT_EQ(v, r) << sub << " " << Show(cmd) << "\n  vessel: " << v.ToString()
                      << "\n  redis:  " << r.ToString();
    }
  }
}

TEST_F(HashesTest, KeyspaceCommands) {
  const Pairs big = Zip(Seq("f", 0, 600), Seq("v", 0, 600));
  RunTable({
      {{"HSET", "s", "a", "1", "b", "2"}, Int(2)},
      {Cat({"HSET", "t"}, Flat(big)), Int(600)},
      {{"COPY", "s", "s2"}, Int(1)},
      {{"COPY", "t", "t2"}, Int(1)},
      {{"HSET", "s2", "a", "changed"}, Int(0)},
      {{"HDEL", "t2", "f0"}, Int(1)},
      {{"HGET", "s", "a"}, Bulk("1")},
      {{"HGETALL", "s2"}, BulkArr({"a", "changed", "b", "2"})},
      {{"HLEN", "t"}, Int(600)},
      {{"HLEN", "t2"}, Int(599)},
      {{"OBJECT", "ENCODING", "t2"}, Bulk("hashtable")},
      {{"OBJECT", "ENCODING", "s2"}, Bulk("listpack")},
      {{"RENAME", "s2", "s3"}, Ok()},
      {{"HGET", "s3", "b"}, Bulk("2")},
      {{"MOVE", "s3", "1"}, Int(1)},
      {{"EXISTS", "s3"}, Int(0)},
      {{"SELECT", "1"}, Ok()},
      {{"HGETALL", "s3"}, BulkArr({"a", "changed", "b", "2"})},
      {{"SELECT", "0"}, Ok()},
      {{"SET", "str", "x"}, Ok()},
      {{"SCAN", "0", "TYPE", "hash", "COUNT", "1000"},
       Arr({Bulk("0"), UnorderedBulkArr({"s", "t", "t2"})}),
       Diff::kUnordered},
      {{"EXPIRE", "s", "100"}, Int(1)},
      {{"TTL", "s"}, IntRange(99, 100)},
      {{"HSET", "s", "c", "3"}, Int(1)},  // a write keeps the key's TTL
      {{"TTL", "s"}, IntRange(99, 100)},
      {{"HDEL", "s", "a", "b", "c"}, Int(3)},
      {{"TTL", "s"}, Int(-2)},
      {{"HSET", "s", "a", "1"}, Int(1)},
      {{"TTL", "s"}, Int(-1)},
      {{"PEXPIRE", "s", "0"}, Int(1)},
      {{"EXISTS", "s"}, Int(0)},
  });
  // DUMP / RESTORE round trips on each server (payloads differ between them).
  OnBoth([&](RespClient& c) {
    for (const char* key : {"t", "t2"}) {
      const Reply dump = c("DUMP", key);
      ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
      const Reply before = c("HGETALL", key);
      EXPECT_EQ(c("RESTORE", std::string(key) + "r", "0", dump.str).str, "OK");
      EXPECT_EQ(PairsOf(c("HGETALL", std::string(key) + "r")), PairsOf(before));
      EXPECT_EQ(c("OBJECT", "ENCODING", std::string(key) + "r").str, "hashtable");
    }
    c("HSET", "small", "x", "1", "y", "2");
    EXPECT_EQ(c("RESTORE", "smallr", "0", c("DUMP", "small").str).str, "OK");
    EXPECT_EQ(c("HGETALL", "smallr").ToString(), c("HGETALL", "small").ToString());
    EXPECT_EQ(c("OBJECT", "ENCODING", "smallr").str, "listpack");
    EXPECT_EQ(c("RESTORE", "smallr", "0", c("DUMP", "small").str).str.substr(0, 8), "BUSYKEY ");
  });
}

// What MEMORY USAGE reports beyond the value is the host's entry (the same for keys of equal
// length, see ExpectEntryOverheads): so USAGE minus the module's allocation growth must agree
// for both representations, and deleting the keys must give every byte back.
TEST_F(HashesTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  for (int i = 0; i < 500; ++i) {  // large values of earlier tests may still be freed off-thread
    if (c("INFO", "memory").str.find("lazyfree_pending_objects:0\r\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int64_t base = ModuleAllocated(c, "hashes");
  std::vector<int64_t> overheads;
  const std::vector<Pairs> contents = {
      Zip(Seq("f", 0, 10), Seq("v", 0, 10)), Zip(Seq("field:", 0, 500), Seq("value:", 0, 500)),
      Zip(Seq("f", 0, 600), Seq("v", 0, 600)), Zip(Seq("field:", 0, 20000), Seq("", 0, 20000)),
      Pairs{{"a", std::string(100, 'x')}, {std::string(3000, 'y'), "b"}}};
  for (size_t i = 0; i < contents.size(); ++i) {
    const std::string key = "key" + std::to_string(i);
    const int64_t before = ModuleAllocated(c, "hashes");
    c.Cmd(Cat({"HSET", key}, Flat(contents[i])));
    const int64_t grown = ModuleAllocated(c, "hashes") - before;
    const int64_t usage = c("MEMORY", "USAGE", key).integer;
    overheads.push_back(usage - grown);
    EXPECT_GT(grown, 0);
  }
  ExpectEntryOverheads(overheads);
  // Churn through every path that allocates, then give everything back.
  c.Cmd(Cat({"HDEL", "key3"}, Seq("field:", 0, 19000)));
  c("HINCRBY", "key0", "n", "12345678901");
  c("HINCRBYFLOAT", "key1", "field:1", "0.25");
  c("HSET", "key1", "field:2", std::string(200, 'z'));
  c("HSET", "key2", "f1", std::string(30, 'z'));
  c("COPY", "key3", "key5");
  c("RESTORE", "key6", "0", c("DUMP", "key1").str);
  c("FLUSHALL");
  for (int i = 0; i < 200 && ModuleAllocated(c, "hashes") != base; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // lazy frees finish
  }
  EXPECT_EQ(ModuleAllocated(c, "hashes"), base) << "leaked bytes";
}

// A small hash costs its one block: 10 short pairs take less than Redis's listpack does.
TEST_F(HashesTest, SmallHashesArePacked) {
  RespClient v = Servers::Get().Vessel();
  const int64_t before = ModuleAllocated(v, "hashes");
  v.Cmd(Cat({"HSET", "p"}, Flat(Zip(Seq("f", 0, 10), Seq("v", 0, 10)))));
  const int64_t grown = ModuleAllocated(v, "hashes") - before;
  // 8 header bytes + 10 * (2 length bytes + 2 + 2): 68, one 80-byte allocation.
  EXPECT_LE(grown, 80);
}

// The hash type's callbacks, called directly: serialize and deserialize round trips, refusals of
// malformed input, copy, encoding.
std::string Bytes(const std::string& b) { return U64(b.size()) + b; }
std::string Encoded(uint64_t head, const std::vector<std::array<std::string, 3>>& entries) {
  std::string s = U64(head) + U64(entries.size());
  for (const auto& [f, v, expire] : entries) s += Bytes(f) + Bytes(v) + U64(std::stoull(expire));
  return s;
}
// The entries of a serialized hash, sorted: the head word, then "field=value@expiry" each.
std::vector<std::string> Decoded(const std::string& b) {
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b.at(at + i));
    return v;
  };
  std::vector<std::string> out;
  size_t at = 16;
  for (uint64_t i = 0, n = u64(8); i < n; ++i) {
    const size_t flen = u64(at), vlen = u64(at + 8 + flen);
    const std::string f = b.substr(at + 8, flen), v = b.substr(at + 16 + flen, vlen);
    at += 16 + flen + vlen;
    out.push_back(f + "=" + v + "@" + std::to_string(u64(at)));
    at += 8;
  }
  std::sort(out.begin(), out.end());
  out.insert(out.begin(), std::to_string(u64(0)));
  return out;
}
std::vector<std::array<std::string, 3>> Entries(int n, const std::string& prefix) {
  std::vector<std::array<std::string, 3>> out;
  for (int i = 0; i < n; ++i) out.push_back({prefix + std::to_string(i), "v", "0"});
  return out;
}

TEST_F(HashesTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("hash");
  ASSERT_TRUE(type.found());
  ASSERT_NE(type.desc().copy, nullptr);
  const std::vector<std::pair<std::string, std::string>> good = {
      {"listpack", Encoded(0, {{"b", "1", "0"}, {"a", "", "0"}, {"", std::string(64, 'z'), "0"}})},
      {"listpackex", Encoded(0x200, {{"a", "1", "0"}, {"b", "2", "4102444800000"}})},
      {"listpack", Encoded(0, {{"a", "1", "4102444800000"}})},
      {"hashtable", Encoded(1, Entries(5000, "m"))},
      {"hashtable", Encoded(1, {{"x", std::string(1000, 'q'), "1"}, {"y", "", "0"}})},
  };
  for (const auto& [encoding, bytes] : good) {
    void* v = type.Load(bytes);
    ASSERT_NE(v, nullptr) << encoding;
    EXPECT_STREQ(type.desc().encoding(nullptr, v), encoding.c_str());
    void* copy = type.desc().copy(nullptr, v);
    ASSERT_NE(copy, nullptr);
    EXPECT_TRUE(type.Save(copy) == type.Save(v)) << encoding;
    // A block saves its entries in order; a table in its slot order.
    if (encoding != "hashtable") {
      EXPECT_TRUE(type.Save(v) == bytes) << encoding;
    }
    EXPECT_EQ(Decoded(type.Save(v)), Decoded(bytes)) << encoding;
    EXPECT_EQ(type.desc().free_effort(nullptr, v),
              type.desc().free_effort(nullptr, copy));
    EXPECT_GT(type.desc().mem_usage(nullptr, copy), 0u);
    type.Free(copy);
    type.Free(v);
  }
  // More entries than a restored block holds (512) come back as a table.
  void* many = type.Load(Encoded(0, Entries(600, "f")));
  ASSERT_NE(many, nullptr);
  EXPECT_STREQ(type.desc().encoding(nullptr, many), "hashtable");
  type.Free(many);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no entries", Encoded(0, {})},
      {"unknown representation", Encoded(2, {{"a", "1", "0"}})},
      {"unknown flags", Encoded(0x400, {{"a", "1", "0"}})},
      {"flags on a table", Encoded(0x201, {{"a", "1", "0"}})},
      {"negative expiry", Encoded(0, {{"a", "1", "18446744073709551615"}})},
      {"duplicate in a block", Encoded(0, {{"a", "1", "0"}, {"b", "2", "0"}, {"a", "3", "0"}})},
      {"duplicate in a table", Encoded(1, {{"a", "1", "0"}, {"b", "2", "0"}, {"a", "3", "0"}})},
      {"truncated", Encoded(1, {{"a", "1", "0"}}).substr(0, 40)},
      {"count beyond the input", U64(1) + U64(1000000) + Bytes("a") + Bytes("b") + U64(0)},
  };
  for (const auto& [why, bytes] : bad) {
    void* v = type.Load(bytes);
    EXPECT_EQ(v, nullptr) << why;
    if (v != nullptr) type.Free(v);
  }
  EXPECT_EQ(type.Load(Encoded(0, {{"a", "1", "0"}}), 2), nullptr) << "unknown encoding version";
}

// Random operations on a few keys, on both servers, every reply compared between them and the
// content of every key compared with a std::map model after each step. Conversions are forced
// both by the number of fields (a pool of 700 fields) and by the length of values and fields.
// HASHES_SEED=n replays one seed.
TEST_F(HashesTest, ModelBasedRandomOperations) {
  const char* env = std::getenv("HASHES_SEED");
  const uint32_t seed = env != nullptr ? static_cast<uint32_t>(std::atoi(env)) : 20261123;
  SCOPED_TRACE("HASHES_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  const Strings keys = {"k0", "k1", "k2"};
  Strings fields = Seq("f", 0, 700);
  fields.push_back(std::string(70, 'F'));
  fields.push_back("");
  const Strings values = {"",
                          "0",
                          "1",
                          "-7",
                          "42",
                          "3.5",
                          "x",
                          "hello world",
                          std::string(64, 'v'),
                          std::string(65, 'w'),
                          "9223372036854775807"};
  std::map<std::string, Pairs> model;
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  auto key = [&] { return keys[rng() % keys.size()]; };
  for (int step = 0; step < 2500; ++step) {
    // Small hashes first; then fields from the whole pool, so hashes pass 512 fields.
    const size_t range = step < 800 ? 40 : fields.size();
    auto field = [&] {
      if (rng() % 200 == 0) return fields[fields.size() - 2 + rng() % 2];  // long or empty
      return fields[rng() % range];
    };
    auto value = [&] { return rng() % 50 == 0 ? values[8 + rng() % 2] : values[rng() % 8]; };
    const std::string k = key();
    Pairs& m = model[k];
    Strings cmd;
    switch (rng() % 10) {
      case 0:
      case 1:
      case 2: {
        cmd = {rng() % 4 == 0 ? "HMSET" : "HSET", k};
        for (int j = 0, n = 1 + static_cast<int>(rng() % (step < 800 ? 8 : 60)); j < n; ++j) {
          const std::string f = field(), val = value();
          cmd.insert(cmd.end(), {f, val});
          m[f] = val;
        }
        break;
      }
      case 3: {
        const std::string f = field(), val = value();
        cmd = {"HSETNX", k, f, val};
        m.emplace(f, val);
        break;
      }
      case 4:
      case 5: {
        cmd = {"HDEL", k};
        for (int j = 0, n = 1 + static_cast<int>(rng() % 12); j < n; ++j) {
          cmd.push_back(field());
          m.erase(cmd.back());
        }
        break;
      }
      case 6: {
        const std::string f = field();
        const int64_t by = static_cast<int64_t>(rng() % 200) - 100;
        cmd = {"HINCRBY", k, f, std::to_string(by)};
        const auto it = m.find(f);
        char* end = nullptr;
        const long long old = it == m.end() ? 0 : std::strtoll(it->second.c_str(), &end, 10);
        const bool numeric = it == m.end() || (!it->second.empty() && *end == '\0' &&
                                               std::to_string(old) == it->second);
        if (numeric && !((by > 0 && old > INT64_MAX - by) || (by < 0 && old < INT64_MIN - by))) {
          m[f] = std::to_string(old + by);
        }
        break;
      }
      case 7: {
        const std::string f = field();
        cmd = {"HINCRBYFLOAT", k, f, rng() % 2 ? "1.5" : "-0.25"};
        break;  // the model takes the stored text from the reply below
      }
      case 8:
        cmd = {"HMGET", k, field(), field(), field()};
        break;
      default:
        cmd = {rng() % 2 ? "HLEN" : "HSTRLEN", k, field()};
        if (cmd[0] == "HLEN") cmd.pop_back();
        break;
    }
    const Reply got = v.Cmd(cmd), want = r.Cmd(cmd);
    ASSERT_EQ(got, want) << "step " << step << ": " << Show(cmd) << "\n  vessel: " << got.ToString()
                         << "\n  redis:  " << want.ToString();
    if (cmd[0] == "HINCRBYFLOAT" && got.type == Reply::Type::kBulk) m[cmd[2]] = got.str;
    if (m.empty()) model.erase(k);
    // Every key against the model, on both servers, with the same representation.
    for (const std::string& each : keys) {
      const auto it = model.find(each);
      const Pairs want_pairs = it == model.end() ? Pairs{} : it->second;
      const Reply vall = v.Cmd({"HGETALL", each});
      ASSERT_EQ(PairsOf(vall), want_pairs)
          << "step " << step << " key " << each << " after " << Show(cmd);
      ASSERT_EQ(vall.elems.size(), want_pairs.size() * 2) << "step " << step;
      if (step % 10 == 0) {
        ASSERT_EQ(PairsOf(r.Cmd({"HGETALL", each})), want_pairs) << "redis, step " << step;
        ASSERT_EQ(v("OBJECT", "ENCODING", each), r("OBJECT", "ENCODING", each))
            << "step " << step << " key " << each;
      }
    }
  }
}

}  // namespace
}  // namespace vessel::test
