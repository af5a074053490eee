// The sets module (SADD ... SSCAN) against vessel and redis-server: table rows run on both and
// must meet their expectation on both with identical replies (up to order where Redis gives
// none); random commands (SPOP, SRANDMEMBER) and SSCAN iterations are checked by their
// properties on both servers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
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

constexpr char kNotPositive[] = "ERR value is out of range, must be positive";
constexpr char kInvalidCursor[] = "ERR invalid cursor";

// An empty set reply: RESP3 '~0', RESP2 '*0'.
Expect EmptySet() { return Arr({}); }
// An array or set of `n` bulk strings.
Expect Members(size_t n) {
  return {"aggregate of " + std::to_string(n) + " bulks", [n](const Reply& r) {
            if (r.type != Reply::Type::kArray && r.type != Reply::Type::kSet) return false;
            if (r.elems.size() != n) return false;
            return std::all_of(r.elems.begin(), r.elems.end(),
                               [](const Reply& e) { return e.type == Reply::Type::kBulk; });
          }};
}
// A bulk with one of the given texts.
Expect OneOf(Strings texts) {
  return {"one of the texts", [texts](const Reply& r) {
            return r.type == Reply::Type::kBulk &&
                   std::find(texts.begin(), texts.end(), r.str) != texts.end();
          }};
}

std::multiset<std::string> Bag(const Reply& r) {
  std::multiset<std::string> out;
  for (const Reply& e : r.elems) out.insert(e.str);
  return out;
}
std::set<std::string> SetOf(const Strings& v) { return {v.begin(), v.end()}; }
std::set<std::string> SetOf(const Reply& r) {
  std::set<std::string> out;
  for (const Reply& e : r.elems) out.insert(e.str);
  return out;
}

class SetsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- membership ----

// The same rows for the three representations: members x, y, z in a set that already holds
// `filler` (none: a small set; 200 strings: a hashtable).
std::vector<Row> MembershipRows(const std::string& x, const std::string& y, const std::string& z,
                                const Strings& filler) {
  const int64_t f = static_cast<int64_t>(filler.size());
  std::vector<Row> rows;
  if (!filler.empty()) rows.push_back({Cat({"SADD", "s"}, filler), Int(f)});
  const std::vector<Row> body = {
      {{"SADD", "s", x}, Int(1)},
      {{"SADD", "s", x, y, x, z}, Int(2)},
      {{"SADD", "s", y}, Int(0)},
      {{"SCARD", "s"}, Int(f + 3)},
      {{"SISMEMBER", "s", x}, Int(1)},
      {{"SISMEMBER", "s", "nope"}, Int(0)},
      {{"SISMEMBER", "nokey", x}, Int(0)},
      {{"SMISMEMBER", "s", x, "nope", z, x}, Arr({Int(1), Int(0), Int(1), Int(1)})},
      {{"SMISMEMBER", "nokey", x, y}, Arr({Int(0), Int(0)})},
      {{"SREM", "s", x, "nope", x}, Int(1)},
      {{"SISMEMBER", "s", x}, Int(0)},
      {{"SREM", "s", "nope"}, Int(0)},
      {{"SREM", "nokey", x}, Int(0)},
      {{"SCARD", "s"}, Int(f + 2)},
      {{"SCARD", "nokey"}, Int(0)},
      {{"TYPE", "s"}, Simple("set")},
  };
  rows.insert(rows.end(), body.begin(), body.end());
  if (filler.empty()) {
    rows.push_back({{"SMEMBERS", "s"}, UnorderedBulkArr({y, z}), Diff::kUnordered});
    rows.push_back({{"SREM", "s", y, z, "more"}, Int(2)});
    rows.push_back({{"EXISTS", "s"}, Int(0)});
  } else {
    rows.push_back({{"SMEMBERS", "s"}, Members(filler.size() + 2), Diff::kUnordered});
    rows.push_back({Cat({"SREM", "s", y, z}, filler), Int(f + 2)});
    rows.push_back({{"EXISTS", "s"}, Int(0)});
  }
  rows.push_back({{"SMEMBERS", "s"}, EmptySet()});
  return rows;
}

TEST_F(SetsTest, MembershipInEveryRepresentation) {
  RunTable(MembershipRows("1", "-2", "9223372036854775807", {}));               // intset
  RunTable(MembershipRows("a", "", "with space", {}));                          // listpack
  RunTable(MembershipRows("a", "bb", std::string(70, 'z'), Seq("f", 0, 200)));  // hashtable
  RunTable(MembershipRows("7", "8", "9", Seq("", 1000, 1600)));  // hashtable of integers
}

TEST_F(SetsTest, BinaryAndIntegerLookalikeMembers) {
  const std::string bin = "a\0b\r\n"s;
  RunTable({
      {{"SADD", "i", "1", "2", "100"}, Int(3)},
      {{"SISMEMBER", "i", "01"}, Int(0)},
      {{"SISMEMBER", "i", "+1"}, Int(0)},
      {{"SISMEMBER", "i", " 1"}, Int(0)},
      {{"SISMEMBER", "i", "1.0"}, Int(0)},
      {{"SISMEMBER", "i", "1e2"}, Int(0)},
      {{"SREM", "i", "01", "-0"}, Int(0)},
      {{"SADD", "i", "0"}, Int(1)},
      {{"SISMEMBER", "i", "-0"}, Int(0)},
      {{"SADD", "i", "-0"}, Int(1)},
      {{"SISMEMBER", "i", "-0"}, Int(1)},
      {{"SISMEMBER", "i", "0"}, Int(1)},
      {{"SADD", "i", "01"}, Int(1)},
      {{"SCARD", "i"}, Int(6)},
      {{"SMEMBERS", "i"}, UnorderedBulkArr({"0", "-0", "1", "01", "2", "100"}), Diff::kUnordered},
      {{"SADD", "b", bin, ""}, Int(2)},
      {{"SISMEMBER", "b", bin}, Int(1)},
      {{"SISMEMBER", "b", "a"}, Int(0)},
      {{"SMEMBERS", "b"}, UnorderedBulkArr({bin, ""}), Diff::kUnordered},
      {{"SADD", "b", "18446744073709551616", "-9223372036854775809"}, Int(2)},
      {{"SCARD", "b"}, Int(4)},
  });
}

// ---- representations ----

TEST_F(SetsTest, IntsetKeepsSortedOrderAcrossWidths) {
  RunTable({
      {{"SADD", "i", "5", "-3", "7", "0"}, Int(4)},
      {{"OBJECT", "ENCODING", "i"}, Bulk("intset")},
      {{"SMEMBERS", "i"}, BulkArr({"-3", "0", "5", "7"})},
      {{"SADD", "i", "70000"}, Int(1)},  // 16 -> 32 bits
      {{"SADD", "i", "-70000"}, Int(1)},
      {{"SMEMBERS", "i"}, BulkArr({"-70000", "-3", "0", "5", "7", "70000"})},
      {{"SADD", "i", "-9223372036854775808", "9223372036854775807"}, Int(2)},  // -> 64 bits
      {{"SADD", "i", "4294967296", "-32768", "32767", "32768"}, Int(4)},
      {{"SMEMBERS", "i"},
       BulkArr({"-9223372036854775808", "-70000", "-32768", "-3", "0", "5", "7", "32767", "32768",
                "70000", "4294967296", "9223372036854775807"})},
      {{"OBJECT", "ENCODING", "i"}, Bulk("intset")},
      {{"SREM", "i", "-9223372036854775808", "7", "70000"}, Int(3)},
      {{"SMEMBERS", "i"},
       BulkArr({"-70000", "-32768", "-3", "0", "5", "32767", "32768", "4294967296",
                "9223372036854775807"})},
      {{"SISMEMBER", "i", "4294967296"}, Int(1)},
      {{"SISMEMBER", "i", "4294967297"}, Int(0)},
      {{"SSCAN", "i", "0"},
       Arr({Bulk("0"), BulkArr({"-70000", "-32768", "-3", "0", "5", "32767", "32768", "4294967296",
                                "9223372036854775807"})})},
  });
}

TEST_F(SetsTest, EncodingTransitions) {
  const Strings ints512 = Seq("", 0, 512);
  const Strings strs128 = Seq("s", 0, 128);
  // Small sets of strings: a listpack here, a hashtable in Redis 7.0 (7.2 has the listpack).
  const Row compact_strings = {{"OBJECT", "ENCODING", "l"},
                               OneOf({"listpack", "hashtable"}),
                               Diff::kSkip,
                               "Redis 7.0 has no listpack sets"};
  RunTable({
      {Cat({"SADD", "i"}, ints512), Int(512)},
      {{"OBJECT", "ENCODING", "i"}, Bulk("intset")},
      {{"SADD", "i", "0"}, Int(0)},
      {{"OBJECT", "ENCODING", "i"}, Bulk("intset")},
      {{"SADD", "i", "512"}, Int(1)},  // the 513th integer
      {{"OBJECT", "ENCODING", "i"}, Bulk("hashtable")},
      {{"SCARD", "i"}, Int(513)},
      {{"SISMEMBER", "i", "511"}, Int(1)},
      {{"SREM", "i", "512"}, Int(1)},
      {{"OBJECT", "ENCODING", "i"}, Bulk("hashtable")},  // never back
      // An intset meeting a non-integer: a listpack while small, a hashtable when it is not.
      {Cat({"SADD", "l"}, Seq("", 0, 100)), Int(100)},
      {{"SADD", "l", "x"}, Int(1)},
      compact_strings,
      {{"SCARD", "l"}, Int(101)},
      {{"SISMEMBER", "l", "99"}, Int(1)},
      {Cat({"SADD", "big"}, Seq("", 0, 200)), Int(200)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("intset")},
      {{"SADD", "big", "x"}, Int(1)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("hashtable")},
      {{"SISMEMBER", "big", "199"}, Int(1)},
      // A listpack: 128 members at most, of 64 bytes at most.
      {Cat({"SADD", "p"}, strs128), Int(128)},
      {{"SADD", "p", "s0"}, Int(0)},
      {{"SADD", "p", "x"}, Int(1)},  // the 129th
      {{"OBJECT", "ENCODING", "p"}, Bulk("hashtable")},
      {{"SCARD", "p"}, Int(129)},
      {{"SADD", "q", "a", std::string(64, 'b')}, Int(2)},
      {{"OBJECT", "ENCODING", "q"},
       OneOf({"listpack", "hashtable"}),
       Diff::kSkip,
       "Redis 7.0 has no listpack sets"},
      {{"SADD", "q", std::string(65, 'c')}, Int(1)},
      {{"OBJECT", "ENCODING", "q"}, Bulk("hashtable")},
      {{"SISMEMBER", "q", std::string(64, 'b')}, Int(1)},
      {{"SADD", "r", std::string(65, 'c')}, Int(1)},  // a new set with a long member
      {{"OBJECT", "ENCODING", "r"}, Bulk("hashtable")},
      {{"SADD", "n", "1", "x", "2"}, Int(3)},
      {{"SMEMBERS", "n"}, UnorderedBulkArr({"1", "x", "2"}), Diff::kUnordered},
  });
  RunVesselTable({
      {{"OBJECT", "ENCODING", "l"}, Bulk("listpack")},
      {{"OBJECT", "ENCODING", "q"}, Bulk("hashtable")},
      {Cat({"SADD", "lp"}, Seq("m", 0, 128)), Int(128)},
      {{"OBJECT", "ENCODING", "lp"}, Bulk("listpack")},
      {{"SADD", "lp", "m128"}, Int(1)},
      {{"OBJECT", "ENCODING", "lp"}, Bulk("hashtable")},
      {{"SADD", "lp2", "a", std::string(64, 'b')}, Int(2)},
      {{"OBJECT", "ENCODING", "lp2"}, Bulk("listpack")},
      {{"SMEMBERS", "lp2"}, BulkArr({"a", std::string(64, 'b')})},  // insertion order
  });
}

TEST_F(SetsTest, ResultsTakeTheEncodingOfTheirMembers) {
  RunTable({
      {Cat({"SADD", "h"}, Seq("", 0, 600)), Int(600)},
      {{"OBJECT", "ENCODING", "h"}, Bulk("hashtable")},
      {{"SADD", "a", "1", "2", "3", "x"}, Int(4)},
      {{"SINTERSTORE", "d", "h", "a"}, Int(3)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("intset")},
      {{"SUNIONSTORE", "d", "h", "a"}, Int(601)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("hashtable")},
      {{"SDIFFSTORE", "d", "a", "h"}, Int(1)},
      {{"SMEMBERS", "d"}, BulkArr({"x"})},
      {{"SDIFFSTORE", "d", "h", "a"}, Int(597)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("hashtable")},
      {Cat({"SADD", "small"}, Seq("", 0, 300)), Int(300)},
      {{"SUNIONSTORE", "d", "small", "small"}, Int(300)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("intset")},
      // SPOP of most of a set rebuilds it: a hashtable of integers becomes an intset again.
      {{"SPOP", "h", "590"}, Members(590), Diff::kSkip, "random members"},
      {{"SCARD", "h"}, Int(10)},
      {{"OBJECT", "ENCODING", "h"}, Bulk("intset")},
      {Cat({"SADD", "h2"}, Seq("", 0, 600)), Int(600)},
      {{"SPOP", "h2", "10"}, Members(10), Diff::kSkip, "random members"},
      {{"OBJECT", "ENCODING", "h2"}, Bulk("hashtable")},
      {Cat({"SREM", "h2"}, Seq("", 0, 580)), IntRange(570, 580), Diff::kSkip, "random members"},
      {{"OBJECT", "ENCODING", "h2"}, Bulk("hashtable")},
  });
}

TEST_F(SetsTest, LargeSets) {
  const Strings a = Seq("member:", 0, 10000), b = Seq("member:", 5000, 15000);
  const Strings ints = Seq("", 0, 10000);
  RunTable({
      {Cat({"SADD", "a"}, a), Int(10000)},
      {Cat({"SADD", "b"}, b), Int(10000)},
      {Cat({"SADD", "i"}, ints), Int(10000)},
      {Cat({"SADD", "a"}, a), Int(0)},
      {{"SCARD", "a"}, Int(10000)},
      {{"OBJECT", "ENCODING", "a"}, Bulk("hashtable")},
      {{"OBJECT", "ENCODING", "i"}, Bulk("hashtable")},
      {{"SISMEMBER", "a", "member:9999"}, Int(1)},
      {{"SISMEMBER", "a", "member:10000"}, Int(0)},
      {{"SINTERCARD", "2", "a", "b"}, Int(5000)},
      {{"SINTERCARD", "2", "a", "b", "LIMIT", "100"}, Int(100)},
      {{"SINTERSTORE", "ab", "a", "b"}, Int(5000)},
      {{"SUNIONSTORE", "u", "a", "b", "i"}, Int(25000)},
      {{"SDIFFSTORE", "d", "a", "b"}, Int(5000)},
      {{"SDIFFSTORE", "d2", "u", "a"}, Int(15000)},
      {{"SISMEMBER", "d2", "member:14999"}, Int(1)},
      {{"SISMEMBER", "d2", "9999"}, Int(1)},
      {Cat({"SREM", "a"}, Seq("member:", 0, 9990)), Int(9990)},
      {{"SCARD", "a"}, Int(10)},
      {{"SMEMBERS", "a"}, UnorderedBulkArr(Seq("member:", 9990, 10000)), Diff::kUnordered},
      {{"SINTER", "a", "b", "ab"}, UnorderedBulkArr(Seq("member:", 9990, 10000)), Diff::kUnordered},
      {{"MEMORY", "USAGE", "u"}, Any(), Diff::kSkip, "different layouts"},
  });
  // Big replies compared as sorted bags (the table's unordered compare is quadratic).
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (const Strings& cmd : std::vector<Strings>{{"SMEMBERS", "u"},
                                                 {"SINTER", "u", "b"},
                                                 {"SUNION", "ab", "d", "i"},
                                                 {"SDIFF", "u", "ab"},
                                                 {"SDIFF", "u", "a", "d"}}) {
    const Reply got = v.Cmd(cmd), want = r.Cmd(cmd);
    EXPECT_EQ(got.type, want.type) << Show(cmd);
    EXPECT_EQ(Bag(got), Bag(want)) << Show(cmd);
    EXPECT_EQ(Bag(got).size(), SetOf(got).size()) << Show(cmd) << ": duplicates";
  }
}

// ---- SPOP and SRANDMEMBER ----

TEST_F(SetsTest, SPopAndSRandMemberErrorsAndEdges) {
  RunTable({
      {{"SPOP", "nokey"}, Nil()},
      {{"SPOP", "nokey", "0"}, EmptySet()},
      {{"SPOP", "nokey", "3"}, EmptySet()},
      {{"SPOP", "nokey", "-1"}, Error(kNotPositive)},
      {{"SPOP", "nokey", "abc"}, Error(kNotPositive)},
      {{"SPOP", "nokey", "1", "2"}, Error(kSyntax)},
      {{"SRANDMEMBER", "nokey"}, Nil()},
      {{"SRANDMEMBER", "nokey", "0"}, Arr({})},
      {{"SRANDMEMBER", "nokey", "5"}, Arr({})},
      {{"SRANDMEMBER", "nokey", "-5"}, Arr({})},
      {{"SRANDMEMBER", "nokey", "abc"}, Error(kNotInt)},
      {{"SRANDMEMBER", "nokey", "1", "2"}, Error(kSyntax)},
      {{"SADD", "s", "a", "b", "c"}, Int(3)},
      {{"SPOP", "s", "0"}, EmptySet()},
      {{"SPOP", "s", "-1"}, Error(kNotPositive)},
      {{"SPOP", "s", "1.5"}, Error(kNotPositive)},
      {{"SPOP", "s", "99999999999999999999"}, Error(kNotPositive)},
      {{"SRANDMEMBER", "s", "0"}, Arr({})},
      {{"SRANDMEMBER", "s", "99999999999999999999"}, Error(kNotInt)},
      {{"SRANDMEMBER", "s", "-9223372036854775808"},
       Error("ERR value is out of range, value must between -9223372036854775807 and "
             "9223372036854775807")},
      {{"SRANDMEMBER", "s", "3"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
      {{"SRANDMEMBER", "s", "9223372036854775807"},
       UnorderedBulkArr({"a", "b", "c"}),
       Diff::kUnordered},
      {{"SCARD", "s"}, Int(3)},
      {{"SPOP", "s", "9223372036854775807"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
      {{"EXISTS", "s"}, Int(0)},
      {{"SADD", "one", "x"}, Int(1)},
      {{"SRANDMEMBER", "one"}, Bulk("x")},
      {{"SRANDMEMBER", "one", "-3"}, BulkArr({"x", "x", "x"})},
      {{"SPOP", "one"}, Bulk("x")},
      {{"EXISTS", "one"}, Int(0)},
      {{"SADD", "i", "1", "2"}, Int(2)},
      {{"SPOP", "i", "2"}, UnorderedBulkArr({"1", "2"}), Diff::kUnordered},
      {{"EXISTS", "i"}, Int(0)},
  });
  // Redis 7.0 tries to build this reply and runs out of memory: vessel refuses it.
  RunVesselTable({
      {{"SADD", "s", "a", "b", "c"}, Int(3)},
      {{"SRANDMEMBER", "s", "-9223372036854775807"},
       Error("ERR value is out of range, the reply would be too large")},
      {{"SRANDMEMBER", "s", "-100000"}, Members(100000)},
  });
}

// Sets of every representation, each `n` members, named by their representation.
struct Population {
  std::string key;
  Strings members;
};
std::vector<Population> Populations() {
  return {{"ints", Seq("", -20, 20)},
          {"strs", Seq("s", 0, 50)},
          {"table", Seq("member-", 0, 1000)},
          {"itable", Seq("", 0, 2000)}};
}
void Populate(RespClient& c, const Population& p) {
  c.Cmd({"DEL", p.key});
  ASSERT_EQ(c.Cmd(Cat({"SADD", p.key}, p.members)).integer, static_cast<int64_t>(p.members.size()));
}

TEST_F(SetsTest, SRandMemberProperties) {
  OnBoth([](RespClient& c) {
    for (const Population& p : Populations()) {
      SCOPED_TRACE(p.key);
      Populate(c, p);
      const std::set<std::string> all = SetOf(p.members);
      const size_t n = all.size();
      EXPECT_TRUE(all.contains(c("SRANDMEMBER", p.key).str));
      for (size_t count : {size_t{1}, size_t{5}, n / 3, n / 3 + 1, n / 2, n - 1, n, n + 7}) {
        const Reply r = c("SRANDMEMBER", p.key, std::to_string(count));
        ASSERT_EQ(r.type, Reply::Type::kArray);
        const std::set<std::string> got = SetOf(r);
        EXPECT_EQ(r.elems.size(), std::min(count, n)) << count;
        EXPECT_EQ(got.size(), r.elems.size()) << count << ": members repeat";
        EXPECT_TRUE(std::includes(all.begin(), all.end(), got.begin(), got.end())) << count;
      }
      const Reply rep = c("SRANDMEMBER", p.key, "-" + std::to_string(3 * n));
      EXPECT_EQ(rep.elems.size(), 3 * n);
      for (const Reply& e : rep.elems) EXPECT_TRUE(all.contains(e.str)) << e.str;
      EXPECT_EQ(c("SCARD", p.key).integer, static_cast<int64_t>(n));  // nothing removed
    }
  });
}

TEST_F(SetsTest, SPopProperties) {
  OnBoth([](RespClient& c) {
    for (const Population& p : Populations()) {
      SCOPED_TRACE(p.key);
      const size_t n = p.members.size();
      // count: 1 without argument, a few, most of the set (Redis's "case 3"), all of it.
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, n / 2, n - n / 10, n - 1, n}) {
        Populate(c, p);
        std::set<std::string> left = SetOf(p.members);
        std::vector<std::string> popped;
        if (count == 0) {
          const Reply r = c("SPOP", p.key);
          ASSERT_EQ(r.type, Reply::Type::kBulk);
          popped.push_back(r.str);
        } else {
          const Reply r = c("SPOP", p.key, std::to_string(count));
          ASSERT_EQ(r.elems.size(), count);
          for (const Reply& e : r.elems) popped.push_back(e.str);
        }
        for (const std::string& m : popped) EXPECT_EQ(left.erase(m), 1u) << "popped twice: " << m;
        const Reply rest = c("SMEMBERS", p.key);
        EXPECT_EQ(SetOf(rest), left);
        EXPECT_EQ(c("SCARD", p.key).integer, static_cast<int64_t>(left.size()));
        EXPECT_EQ(c("EXISTS", p.key).integer, left.empty() ? 0 : 1);
        if (!popped.empty()) {
          EXPECT_EQ(c("SISMEMBER", p.key, popped[0]).integer, 0);
        }
      }
    }
  });
}

TEST_F(SetsTest, RandomMembersAreSpreadEvenly) {
  RespClient c = Servers::Get().Vessel();
  for (const Population& p : Populations()) {
    SCOPED_TRACE(p.key);
    Populate(c, p);
    const size_t n = p.members.size(), per = 300;
    std::map<std::string, int> seen;
    for (const Reply& e : c("SRANDMEMBER", p.key, "-" + std::to_string(n * per)).elems) {
      ++seen[e.str];
    }
    EXPECT_EQ(seen.size(), n);
    for (const auto& [m, k] : seen) {
      EXPECT_GT(k, static_cast<int>(per) / 2) << m;
      EXPECT_LT(k, static_cast<int>(per) * 2) << m;
    }
  }
  // SPOP drains a set in a random order: every member is first about equally often.
  std::map<std::string, int> first;
  for (int round = 0; round < 600; ++round) {
    c("SADD", "three", "a", "b", "c");
    ++first[c("SPOP", "three").str];
    c("DEL", "three");
  }
  for (const char* m : {"a", "b", "c"}) EXPECT_GT(first[m], 120) << m;
}

// ---- SMOVE ----

TEST_F(SetsTest, SMove) {
  RunTable({
      {{"SADD", "a", "1", "2", "x"}, Int(3)},
      {{"SADD", "b", "3"}, Int(1)},
      {{"SMOVE", "a", "b", "1"}, Int(1)},
      {{"SMEMBERS", "a"}, UnorderedBulkArr({"2", "x"}), Diff::kUnordered},
      {{"SMEMBERS", "b"}, BulkArr({"1", "3"})},
      {{"SMOVE", "a", "b", "nope"}, Int(0)},
      {{"SMOVE", "nokey", "b", "1"}, Int(0)},
      {{"SMOVE", "a", "a", "2"}, Int(1)},
      {{"SMOVE", "a", "a", "nope"}, Int(0)},
      {{"SADD", "b", "2"}, Int(1)},
      {{"SMOVE", "a", "b", "2"}, Int(1)},  // already in the destination
      {{"SMEMBERS", "b"}, BulkArr({"1", "2", "3"})},
      {{"SMOVE", "a", "new", "x"}, Int(1)},  // the source empties, the destination is created
      {{"EXISTS", "a"}, Int(0)},
      {{"SMEMBERS", "new"}, BulkArr({"x"})},
      {{"OBJECT", "ENCODING", "new"},
       OneOf({"listpack", "hashtable"}),
       Diff::kSkip,
       "Redis 7.0 has no listpack sets"},
      {{"SMOVE", "b", "ni", "1"}, Int(1)},
      {{"OBJECT", "ENCODING", "ni"}, Bulk("intset")},
      {{"SET", "str", "v"}, Ok()},
      {{"SMOVE", "nokey", "str", "1"}, Int(0)},
      {{"SMOVE", "b", "str", "2"}, WrongType()},
      {{"SMOVE", "str", "b", "2"}, WrongType()},
      {{"SMOVE", "str", "nokey", "2"}, WrongType()},
      {{"SMOVE", "str", "str", "2"}, WrongType()},
      {{"SMEMBERS", "b"}, BulkArr({"2", "3"})},
      {{"SMOVE", "a", "b"}, Error("ERR wrong number of arguments for 'smove' command")},
  });
}

// ---- algebra ----

TEST_F(SetsTest, InterUnionDiff) {
  RunTable({
      {{"SADD", "a", "1", "2", "3", "4", "5"}, Int(5)},
      {{"SADD", "b", "4", "5", "6", "7"}, Int(4)},
      {{"SADD", "c", "x", "y", "5"}, Int(3)},
      {{"SINTER", "a", "b"}, UnorderedBulkArr({"4", "5"}), Diff::kUnordered},
      {{"SINTER", "a", "b", "c"}, BulkArr({"5"})},
      {{"SINTER", "c", "a"}, BulkArr({"5"})},
      {{"SINTER", "a"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SINTER", "a", "a", "a"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SINTER", "a", "nokey"}, EmptySet()},
      {{"SINTER", "nokey", "a"}, EmptySet()},
      {{"SINTER", "nokey"}, EmptySet()},
      {{"SUNION", "a", "b", "c"},
       UnorderedBulkArr({"1", "2", "3", "4", "5", "6", "7", "x", "y"}),
       Diff::kUnordered},
      {{"SUNION", "a", "nokey"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SUNION", "a", "a"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SUNION", "nokey", "nokey2"}, EmptySet()},
      {{"SUNION", "c"}, UnorderedBulkArr({"x", "y", "5"}), Diff::kUnordered},
      {{"SDIFF", "a", "b", "c"}, UnorderedBulkArr({"1", "2", "3"}), Diff::kUnordered},
      {{"SDIFF", "a", "nokey"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SDIFF", "nokey", "a"}, EmptySet()},
      {{"SDIFF", "a", "a"}, EmptySet()},
      {{"SDIFF", "a", "b", "a"}, EmptySet()},
      {{"SDIFF", "c", "a"}, UnorderedBulkArr({"x", "y"}), Diff::kUnordered},
      {{"SDIFF", "a"}, UnorderedBulkArr({"1", "2", "3", "4", "5"}), Diff::kUnordered},
      {{"SINTER"}, Error("ERR wrong number of arguments for 'sinter' command")},
      {{"SUNION"}, Error("ERR wrong number of arguments for 'sunion' command")},
      {{"SDIFF"}, Error("ERR wrong number of arguments for 'sdiff' command")},
  });
}

TEST_F(SetsTest, StoreCommands) {
  RunTable({
      {{"SADD", "a", "1", "2", "3", "4", "5"}, Int(5)},
      {{"SADD", "b", "4", "5", "6", "7"}, Int(4)},
      {{"SADD", "c", "x", "y", "5"}, Int(3)},
      {{"SINTERSTORE", "d", "a", "b"}, Int(2)},
      {{"SMEMBERS", "d"}, BulkArr({"4", "5"})},
      {{"SINTERSTORE", "d", "a", "nokey"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      {{"SINTERSTORE", "d", "a", "c"}, Int(1)},
      {{"SINTERSTORE", "d", "b", "c", "a", "nokey"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      {{"SUNIONSTORE", "d", "a", "c"}, Int(7)},
      {{"SUNIONSTORE", "d", "nokey"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      {{"SDIFFSTORE", "d", "a", "b"}, Int(3)},
      {{"SMEMBERS", "d"}, BulkArr({"1", "2", "3"})},
      {{"SDIFFSTORE", "d", "a", "a"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      // The destination is replaced whatever it holds, and loses its TTL.
      {{"SET", "d", "string"}, Ok()},
      {{"EXPIRE", "d", "100"}, Int(1)},
      {{"SUNIONSTORE", "d", "a", "b"}, Int(7)},
      {{"TYPE", "d"}, Simple("set")},
      {{"TTL", "d"}, Int(-1)},
      {{"EXPIRE", "d", "100"}, Int(1)},
      {{"SINTERSTORE", "d", "a", "b"}, Int(2)},
      {{"TTL", "d"}, Int(-1)},
      {{"EXPIRE", "d", "100"}, Int(1)},
      {{"SDIFFSTORE", "d", "a", "b"}, Int(3)},
      {{"TTL", "d"}, Int(-1)},
      {{"SET", "d", "string"}, Ok()},
      {{"SINTERSTORE", "d", "a", "nokey"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      // The destination may be a source.
      {{"SUNIONSTORE", "a", "a", "c"}, Int(7)},
      {{"SMEMBERS", "a"}, UnorderedBulkArr({"1", "2", "3", "4", "5", "x", "y"}), Diff::kUnordered},
      {{"SDIFFSTORE", "a", "a", "b"}, Int(5)},
      {{"SMEMBERS", "a"}, UnorderedBulkArr({"1", "2", "3", "x", "y"}), Diff::kUnordered},
      {{"SINTERSTORE", "a", "c", "a"}, Int(2)},
      {{"SMEMBERS", "a"}, UnorderedBulkArr({"x", "y"}), Diff::kUnordered},
      {{"SINTERSTORE", "a", "a", "b"}, Int(0)},
      {{"EXISTS", "a"}, Int(0)},
      {{"SINTERSTORE", "d"}, Error("ERR wrong number of arguments for 'sinterstore' command")},
      {{"SUNIONSTORE", "d"}, Error("ERR wrong number of arguments for 'sunionstore' command")},
      {{"SDIFFSTORE", "d"}, Error("ERR wrong number of arguments for 'sdiffstore' command")},
  });
}

// Hashtables: the store replaces a hashtable destination in place, and SDIFF's two algorithms.
TEST_F(SetsTest, AlgebraOnHashtables) {
  const Strings a = Seq("m", 0, 3000), b = Seq("m", 2000, 5000);
  RunTable({
      {Cat({"SADD", "a"}, a), Int(3000)},
      {Cat({"SADD", "b"}, b), Int(3000)},
      {{"SADD", "t1", "m1", "m2", "zz"}, Int(3)},
      {{"SADD", "t2", "m3", "1", "2"}, Int(3)},
      {{"SINTERCARD", "2", "a", "b"}, Int(1000)},
      {{"SDIFFSTORE", "d1", "a", "b"}, Int(2000)},                       // algorithm 1
      {{"SDIFFSTORE", "d2", "a", "t1", "t2"}, Int(2997)},                // algorithm 2
      {{"SDIFFSTORE", "d3", "a", "t1", "t2", "t1", "t2", "a"}, Int(0)},  // algorithm 2
      {{"SDIFFSTORE", "d4", "t1", "a", "b", "b"}, Int(1)},  // algorithm 1, small first set
      {{"SMEMBERS", "d4"}, BulkArr({"zz"})},
      {{"SISMEMBER", "d2", "m3"}, Int(0)},
      {{"SISMEMBER", "d2", "m4"}, Int(1)},
      {{"SUNIONSTORE", "d1", "d1", "t1"}, Int(2001)},  // in place over a hashtable
      {{"SINTERSTORE", "d1", "d1", "b"}, Int(0)},
      {{"SUNIONSTORE", "d2", "b", "t2"}, Int(3003)},
      {{"SINTERCARD", "2", "d2", "b"}, Int(3000)},
      {{"SISMEMBER", "d2", "m0"}, Int(0)},
      {{"SINTERSTORE", "d2", "a", "b", "d2"}, Int(1000)},
      {{"SINTERSTORE", "d2", "a", "t1"}, Int(2)},
      {{"OBJECT", "ENCODING", "d2"},
       OneOf({"listpack", "hashtable"}),
       Diff::kSkip,
       "Redis 7.0 has no listpack sets"},
      {{"SMEMBERS", "d2"}, UnorderedBulkArr({"m1", "m2"}), Diff::kUnordered},
  });
}

TEST_F(SetsTest, SInterCard) {
  RunTable({
      {{"SADD", "a", "1", "2", "3", "4", "5"}, Int(5)},
      {{"SADD", "b", "4", "5", "6", "x"}, Int(4)},
      {{"SINTERCARD", "1", "a"}, Int(5)},
      {{"SINTERCARD", "2", "a", "b"}, Int(2)},
      {{"SINTERCARD", "2", "a", "nokey"}, Int(0)},
      {{"SINTERCARD", "2", "a", "b", "LIMIT", "0"}, Int(2)},
      {{"SINTERCARD", "2", "a", "b", "LIMIT", "1"}, Int(1)},
      {{"SINTERCARD", "2", "a", "b", "limit", "5"}, Int(2)},
      {{"SINTERCARD", "1", "a", "LIMIT", "1", "LIMIT", "3"}, Int(3)},
      {{"SINTERCARD", "2", "a", "a"}, Int(5)},
      {{"SINTERCARD", "0", "a"}, Error("ERR numkeys should be greater than 0")},
      {{"SINTERCARD", "-1", "a"}, Error("ERR numkeys should be greater than 0")},
      {{"SINTERCARD", "abc", "a"}, Error("ERR numkeys should be greater than 0")},
      {{"SINTERCARD", "3", "a", "b"},
       Error("ERR Number of keys can't be greater than number of args")},
      {{"SINTERCARD", "99999999999999999999", "a"}, Error("ERR numkeys should be greater than 0")},
      {{"SINTERCARD", "2", "a", "b", "LIMIT", "-1"}, Error("ERR LIMIT can't be negative")},
      {{"SINTERCARD", "2", "a", "b", "LIMIT", "x"}, Error("ERR LIMIT can't be negative")},
      {{"SINTERCARD", "2", "a", "b", "LIMIT"}, Error(kSyntax)},
      {{"SINTERCARD", "2", "a", "b", "FOO", "1"}, Error(kSyntax)},
      {{"SINTERCARD", "1", "a", "b"}, Error(kSyntax)},
      {{"SINTERCARD", "1"}, Error("ERR wrong number of arguments for 'sintercard' command")},
      {{"COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1"}, BulkArr({"a", "b"})},
  });
}

// ---- SSCAN ----

TEST_F(SetsTest, SScanArgumentsAndSmallSets) {
  RunTable({
      {{"SSCAN", "nokey", "0"}, Arr({Bulk("0"), Arr({})})},
      {{"SSCAN", "nokey", "abc"}, Error(kInvalidCursor)},
      {{"SSCAN", "nokey", "0", "COUNT", "0"}, Arr({Bulk("0"), Arr({})})},  // options unchecked
      {{"SADD", "i", "1", "2", "3", "10", "11"}, Int(5)},
      {{"SSCAN", "i", "0"}, Arr({Bulk("0"), BulkArr({"1", "2", "3", "10", "11"})})},
      {{"SSCAN", "i", "0", "MATCH", "1*"}, Arr({Bulk("0"), BulkArr({"1", "10", "11"})})},
      {{"SSCAN", "i", "0", "match", "?", "count", "1"}, Arr({Bulk("0"), BulkArr({"1", "2", "3"})})},
      {{"SSCAN", "i", "0", "MATCH", "x*"}, Arr({Bulk("0"), Arr({})})},
      {{"SSCAN", "i", "0", "MATCH", ""}, Arr({Bulk("0"), Arr({})})},
      {{"SSCAN", "i", "0", "MATCH", "*"}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", "0", "COUNT", "1", "MATCH", "[12]"}, Arr({Bulk("0"), BulkArr({"1", "2"})})},
      {{"SSCAN", "i", "0", "MATCH", "a", "MATCH", "3"}, Arr({Bulk("0"), BulkArr({"3"})})},
      {{"SSCAN", "i", "7"}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", ""}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", "+3"}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", "-1"}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", "18446744073709551615"}, Arr({Bulk("0"), Members(5)})},
      {{"SSCAN", "i", "18446744073709551616"}, Error(kInvalidCursor)},
      {{"SSCAN", "i", " 1"}, Error(kInvalidCursor)},
      {{"SSCAN", "i", "1 "}, Error(kInvalidCursor)},
      {{"SSCAN", "i", "1x"}, Error(kInvalidCursor)},
      {{"SSCAN", "i", "-"}, Error(kInvalidCursor)},
      {{"SSCAN", "i", "0x10"}, Error(kInvalidCursor)},
      {{"SSCAN", "i", "0", "COUNT", "0"}, Error(kSyntax)},
      {{"SSCAN", "i", "0", "COUNT", "-1"}, Error(kSyntax)},
      {{"SSCAN", "i", "0", "COUNT", "x"}, Error(kNotInt)},
      {{"SSCAN", "i", "0", "COUNT"}, Error(kSyntax)},
      {{"SSCAN", "i", "0", "MATCH"}, Error(kSyntax)},
      {{"SSCAN", "i", "0", "TYPE", "string"}, Error(kSyntax)},
      {{"SSCAN", "i", "0", "NOVALUES"}, Error(kSyntax)},
      {{"SSCAN", "i", "x", "COUNT", "0"}, Error(kInvalidCursor)},
      {{"SADD", "s", "alpha", "beta", "gamma"}, Int(3)},
      {{"SSCAN", "s", "0"},
       Arr({Bulk("0"), UnorderedBulkArr({"alpha", "beta", "gamma"})}),
       Diff::kUnordered},
      {{"SSCAN", "s", "0", "MATCH", "*a"},
       Arr({Bulk("0"), UnorderedBulkArr({"alpha", "beta", "gamma"})}),
       Diff::kUnordered},
      {{"SSCAN", "s", "0", "MATCH", "?e*"}, Arr({Bulk("0"), BulkArr({"beta"})})},
      {{"SSCAN", "i"}, Error("ERR wrong number of arguments for 'sscan' command")},
  });
}

// Iterates key with SSCAN to the end; calls between(step) after each call. Returns every member
// returned (with repetitions) and checks the cursor protocol.
std::multiset<std::string> ScanAll(RespClient& c, const std::string& key, Strings options,
                                   const std::function<void(int)>& between = nullptr) {
  std::multiset<std::string> seen;
  std::string cursor = "0";
  for (int step = 0; step < 100000; ++step) {
    const Reply r = c.Cmd(Cat({"SSCAN", key, cursor}, options));
    EXPECT_EQ(r.type, Reply::Type::kArray);
    if (r.elems.size() != 2) {
      ADD_FAILURE() << r.ToString();
      break;
    }
    for (const Reply& e : r.elems[1].elems) seen.insert(e.str);
    cursor = r.elems[0].str;
    if (cursor == "0") return seen;
    if (between) between(step);
  }
  ADD_FAILURE() << "SSCAN did not finish";
  return seen;
}

TEST_F(SetsTest, SScanFullIterationsWithMatchAndCount) {
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
        for (const std::string& m : p.members) {
          const bool match = options.empty() || options[0] != "MATCH" ||
                             (options[1] == "*1*" && m.find('1') != std::string::npos);
          if (match) want.insert(m);
        }
        EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), want);
      }
    }
  });
}

// Redis's guarantee: a member present from the start to the end of an iteration is returned,
// whatever happens to the set meanwhile (growth and resizes, removals, shrinking, replacement).
TEST_F(SetsTest, SScanReturnsEveryMemberPresentThroughout) {
  // Where the stable members sit (first, last, interleaved) matters to position-based cursors.
  for (const std::string layout : {"stable-first", "stable-last", "interleaved"}) {
    SCOPED_TRACE(layout);
    OnBoth([&](RespClient& c) {
      c.Cmd({"DEL", "s", "other"});
      const Strings stable = Seq("stable-", 0, 400), doomed = Seq("doomed-", 0, 2000);
      Strings order;
      if (layout == "stable-first") order = Cat(stable, doomed);
      if (layout == "stable-last") order = Cat(doomed, stable);
      for (size_t i = 0; layout == "interleaved" && i < doomed.size(); ++i) {
        order.push_back(doomed[i]);
        if (i % 5 == 0) order.push_back(stable[i / 5]);
      }
      for (size_t i = 0; i < order.size(); i += 500) {
        c.Cmd(Cat({"SADD", "s"},
                  Strings(order.begin() + i, order.begin() + std::min(i + 500, order.size()))));
      }
      Strings victims = doomed;
      std::shuffle(victims.begin(), victims.end(), std::mt19937(7));
      size_t next_victim = 0;
      const std::multiset<std::string> seen = ScanAll(c, "s", {"COUNT", "20"}, [&](int step) {
        const std::string batch = "new-" + std::to_string(step) + "-";
        switch (step % 4) {
          case 0:  // grow, through resizes
            c.Cmd(Cat({"SADD", "s"}, Seq(batch, 0, 150)));
            break;
          case 1:  // remove members present at the start, anywhere
            if (next_victim < victims.size()) {
              const size_t end = std::min(next_victim + 120, victims.size());
              c.Cmd(Cat({"SREM", "s"},
                        Strings(victims.begin() + next_victim, victims.begin() + end)));
              next_victim = end;
            }
            break;
          case 2:  // remove what was added: the tables shrink
            c.Cmd(Cat({"SREM", "s"}, Seq("new-" + std::to_string(step - 2) + "-", 0, 150)));
            break;
          default:  // replace the value with a store into it
            c.Cmd({"SADD", "other", "o" + std::to_string(step)});
            c.Cmd({"SUNIONSTORE", "s", "s", "other"});
            break;
        }
      });
      for (const std::string& m : stable) EXPECT_TRUE(seen.contains(m)) << "missed " << m;
    });
  }
  // Stores that drop members from the scanned key (applied in place on vessel).
  RespClient c = Servers::Get().Vessel();
  c("DEL", "s");
  const Strings stable = Seq("stable-", 0, 1000);
  c.Cmd(Cat({"SADD", "s"}, Cat(stable, Seq("x-", 0, 2000))));
  c.Cmd(Cat({"SADD", "keep"}, Cat(stable, Seq("x-", 0, 1000))));
  const std::multiset<std::string> seen = ScanAll(c, "s", {"COUNT", "10"}, [&](int step) {
    if (step == 10) c("SINTERSTORE", "s", "s", "keep");
    if (step == 20) c("SDIFFSTORE", "s", "s", "nokey");
    if (step == 30) c.Cmd(Cat({"SADD", "s"}, Seq("y-", 0, 5000)));
    if (step == 40) c.Cmd(Cat({"SREM", "s"}, Seq("y-", 0, 5000)));
  });
  for (const std::string& m : stable) EXPECT_TRUE(seen.contains(m)) << "missed " << m;
}

// ---- types and protocol ----

TEST_F(SetsTest, WrongTypeBothWays) {
  RunTable({
      {{"SET", "str", "v"}, Ok()},
      {{"SADD", "s", "x", "1"}, Int(2)},
      {{"SADD", "str", "x"}, WrongType()},
      {{"SREM", "str", "x"}, WrongType()},
      {{"SCARD", "str"}, WrongType()},
      {{"SISMEMBER", "str", "x"}, WrongType()},
      {{"SMISMEMBER", "str", "x"}, WrongType()},
      {{"SMEMBERS", "str"}, WrongType()},
      {{"SPOP", "str"}, WrongType()},
      {{"SPOP", "str", "0"}, WrongType()},
      {{"SPOP", "str", "2"}, WrongType()},
      {{"SRANDMEMBER", "str"}, WrongType()},
      {{"SRANDMEMBER", "str", "0"}, WrongType()},
      {{"SRANDMEMBER", "str", "-2"}, WrongType()},
      {{"SMOVE", "str", "s", "x"}, WrongType()},
      {{"SMOVE", "s", "str", "x"}, WrongType()},
      {{"SINTER", "str"}, WrongType()},
      {{"SINTER", "s", "str"}, WrongType()},
      {{"SINTER", "nokey", "str"}, WrongType()},
      {{"SINTER", "str", "nokey"}, WrongType()},
      {{"SINTERSTORE", "d", "s", "str"}, WrongType()},
      {{"SINTERSTORE", "d", "nokey", "str"}, WrongType()},
      {{"SINTERCARD", "2", "nokey", "str"}, WrongType()},
      {{"SINTERCARD", "1", "str", "LIMIT", "1"}, WrongType()},
      {{"SUNION", "s", "str"}, WrongType()},
      {{"SUNION", "nokey", "str"}, WrongType()},
      {{"SUNIONSTORE", "d", "s", "str"}, WrongType()},
      {{"SDIFF", "s", "str"}, WrongType()},
      {{"SDIFF", "str", "s"}, WrongType()},
      {{"SDIFF", "nokey", "str"}, WrongType()},
      {{"SDIFFSTORE", "d", "s", "str"}, WrongType()},
      {{"SDIFFSTORE", "d", "nokey", "str"}, WrongType()},
      {{"SSCAN", "str", "0"}, WrongType()},
      {{"SSCAN", "str", "0", "COUNT", "0"}, WrongType()},
      {{"EXISTS", "d"}, Int(0)},
      {{"GET", "str"}, Bulk("v")},
      {{"GET", "s"}, WrongType()},
      {{"APPEND", "s", "x"}, WrongType()},
      {{"STRLEN", "s"}, WrongType()},
      {{"INCR", "s"}, WrongType()},
      {{"GETRANGE", "s", "0", "1"}, WrongType()},
      {{"SETRANGE", "s", "0", "x"}, WrongType()},
      {{"GETDEL", "s"}, WrongType()},
      {{"MGET", "s", "str"}, Arr({Nil(), Bulk("v")})},
      {{"SMEMBERS", "s"}, UnorderedBulkArr({"x", "1"}), Diff::kUnordered},
      {{"SET", "s", "now a string"}, Ok()},  // SET replaces any type
      {{"TYPE", "s"}, Simple("string")},
      {{"SINTERSTORE", "str", "nokey"}, Int(0)},  // a destination of another type is replaced
      {{"EXISTS", "str"}, Int(0)},
  });
}

TEST_F(SetsTest, WrongTypeAgainstLists) {
  RespClient v = Servers::Get().Vessel();
  if (v("COMMAND", "INFO", "lpush").elems.at(0).type != Reply::Type::kArray) {
    GTEST_SKIP() << "the lists module is not loaded";
  }
  RunTable({
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"SADD", "s", "a"}, Int(1)},
      {{"SADD", "l", "x"}, WrongType()},
      {{"SMEMBERS", "l"}, WrongType()},
      {{"SINTER", "s", "l"}, WrongType()},
      {{"SMOVE", "s", "l", "a"}, WrongType()},
      {{"SSCAN", "l", "0"}, WrongType()},
      {{"LPUSH", "s", "a"}, WrongType()},
      {{"LRANGE", "s", "0", "-1"}, WrongType()},
      {{"LLEN", "s"}, WrongType()},
      {{"SUNIONSTORE", "l", "s"}, Int(1)},
      {{"TYPE", "l"}, Simple("set")},
  });
}

TEST_F(SetsTest, Resp3) {
  RunTable(
      {
          {{"SMEMBERS", "nokey"}, EmptySet()},
          {{"SADD", "s", "a", "b", "c"}, Int(3)},
          {{"SADD", "i", "3", "1", "2"}, Int(3)},
          {{"SMEMBERS", "i"}, BulkArr({"1", "2", "3"})},
          {{"SMEMBERS", "s"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
          {{"SINTER", "s", "s"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
          {{"SINTER", "s", "nokey"}, EmptySet()},
          {{"SUNION", "i", "s"}, Members(6), Diff::kUnordered},
          {{"SDIFF", "i", "s"}, UnorderedBulkArr({"1", "2", "3"}), Diff::kUnordered},
          {{"SMISMEMBER", "s", "a", "z"}, Arr({Int(1), Int(0)})},
          {{"SISMEMBER", "s", "a"}, Int(1)},
          {{"SPOP", "nokey"}, Nil()},
          {{"SPOP", "nokey", "1"}, EmptySet()},
          {{"SPOP", "s", "0"}, EmptySet()},
          {{"SRANDMEMBER", "nokey"}, Nil()},
          {{"SRANDMEMBER", "nokey", "1"}, Arr({})},
          {{"SRANDMEMBER", "i", "5"}, UnorderedBulkArr({"1", "2", "3"}), Diff::kUnordered},
          {{"SRANDMEMBER", "i", "-2"}, Members(2), Diff::kSkip, "random members"},
          {{"SPOP", "i", "1"}, Members(1), Diff::kSkip, "a random member"},
          {{"SPOP", "i", "5"}, Members(2), Diff::kSkip, "random order"},
          {{"SSCAN", "nokey", "0"}, Arr({Bulk("0"), Arr({})})},
          {{"SSCAN", "s", "0"},
           Arr({Bulk("0"), UnorderedBulkArr({"a", "b", "c"})}),
           Diff::kUnordered},
          {{"SINTERCARD", "1", "s"}, Int(3)},
          {{"SPOP", "s", "3"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
      },
      3);
  // The reply types themselves: a RESP3 set where Redis sends one, an array elsewhere.
  RespClient v = Servers::Get().Vessel();
  v("HELLO", "3");
  v("SADD", "t", "x", "y");
  EXPECT_EQ(v("SMEMBERS", "t").type, Reply::Type::kSet);
  EXPECT_EQ(v("SINTER", "t").type, Reply::Type::kSet);
  EXPECT_EQ(v("SUNION", "t", "nokey").type, Reply::Type::kSet);
  EXPECT_EQ(v("SDIFF", "t").type, Reply::Type::kSet);
  EXPECT_EQ(v("SPOP", "nokey", "1").type, Reply::Type::kSet);
  EXPECT_EQ(v("SRANDMEMBER", "t", "1").type, Reply::Type::kArray);
  EXPECT_EQ(v("SRANDMEMBER", "t", "-5").type, Reply::Type::kArray);
  EXPECT_EQ(v("SMISMEMBER", "t", "x").type, Reply::Type::kArray);
  EXPECT_EQ(v("SSCAN", "t", "0").type, Reply::Type::kArray);
  EXPECT_EQ(v("SPOP", "t", "1").type, Reply::Type::kSet);
  EXPECT_EQ(v("SPOP", "nokey").type, Reply::Type::kNil);
}

TEST_F(SetsTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"SADD", "k"},
                                                 {"SREM", "k"},
                                                 {"SCARD"},
                                                 {"SCARD", "k", "x"},
                                                 {"SISMEMBER", "k"},
                                                 {"SISMEMBER", "k", "a", "b"},
                                                 {"SMISMEMBER", "k"},
                                                 {"SMEMBERS"},
                                                 {"SMEMBERS", "k", "x"},
                                                 {"SPOP"},
                                                 {"SRANDMEMBER"},
                                                 {"SMOVE", "a", "b", "c", "d"},
                                                 {"SINTERCARD", "1"},
                                                 {"SSCAN", "k"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Error("ERR wrong number of arguments for '" + lower + "' command")});
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

TEST_F(SetsTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name : {"sadd", "srem", "scard", "sismember", "smismember", "smembers", "spop",
                           "srandmember", "smove", "sinter", "sinterstore", "sintercard", "sunion",
                           "sunionstore", "sdiff", "sdiffstore", "sscan"}) {
    const Reply v = WithoutModuleFlag(vessel("COMMAND", "INFO", name));
    const Reply r = WithoutModuleFlag(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
  for (const Strings& cmd : std::vector<Strings>{{"SMOVE", "a", "b", "m"},
                                                 {"SINTERSTORE", "d", "a", "b"},
                                                 {"SUNIONSTORE", "d", "a"},
                                                 {"SINTERCARD", "2", "a", "b"}}) {
    const Reply v = vessel.Cmd(Cat({"COMMAND", "GETKEYSANDFLAGS"}, cmd));
    const Reply r = redis.Cmd(Cat({"COMMAND", "GETKEYSANDFLAGS"}, cmd));
    EXPECT_EQ(v, r) << Show(cmd) << "\n  vessel: " << v.ToString()
                    << "\n  redis:  " << r.ToString();
  }
}

// ---- values: COPY, memory accounting, serialization ----

TEST_F(SetsTest, CopyIsDeep) {
  RunTable({
      {{"SADD", "i", "1", "2"}, Int(2)},
      {{"SADD", "l", "a", "b"}, Int(2)},
      {Cat({"SADD", "h"}, Seq("m", 0, 300)), Int(300)},
      {{"COPY", "i", "i2"}, Int(1)},
      {{"COPY", "l", "l2"}, Int(1)},
      {{"COPY", "h", "h2"}, Int(1)},
      {{"SADD", "i2", "3"}, Int(1)},
      {{"SREM", "l2", "a"}, Int(1)},
      {Cat({"SREM", "h2"}, Seq("m", 0, 299)), Int(299)},
      {{"SMEMBERS", "i"}, BulkArr({"1", "2"})},
      {{"SMEMBERS", "i2"}, BulkArr({"1", "2", "3"})},
      {{"SMEMBERS", "l"}, UnorderedBulkArr({"a", "b"}), Diff::kUnordered},
      {{"SMEMBERS", "l2"}, BulkArr({"b"})},
      {{"SCARD", "h"}, Int(300)},
      {{"SMEMBERS", "h2"}, BulkArr({"m299"})},
      {{"OBJECT", "ENCODING", "h2"}, Bulk("hashtable")},
      {{"OBJECT", "ENCODING", "i2"}, Bulk("intset")},
  });
}

// What MEMORY USAGE reports beyond the value is the host's entry (the same for keys of equal
// length, see ExpectEntryOverheads): so USAGE minus the module's allocation growth must agree
// for every representation, and deleting the keys must give every byte back.
TEST_F(SetsTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  // Large values of earlier tests may still be freed off-thread; that would move the counters.
  for (int i = 0; i < 500; ++i) {
    if (c("INFO", "memory").str.find("lazyfree_pending_objects:0\r\n") != std::string::npos) break;
    usleep(10000);
  }
  const int64_t base = ModuleAllocated(c, "sets");
  std::vector<int64_t> overheads;
  const std::vector<Strings> contents = {
      Seq("", 0, 10),  Seq("", 0, 500),          Seq("s", 0, 100),
      Seq("", 0, 600), Seq("member:", 0, 20000), {std::string(100, 'x'), std::string(3000, 'y')}};
  for (size_t i = 0; i < contents.size(); ++i) {
    const std::string key = "key" + std::to_string(i);
    const int64_t before = ModuleAllocated(c, "sets");
    c.Cmd(Cat({"SADD", key}, contents[i]));
    const int64_t grown = ModuleAllocated(c, "sets") - before;
    const int64_t usage = c("MEMORY", "USAGE", key).integer;
    overheads.push_back(usage - grown);
    EXPECT_GT(grown, 0);
  }
  ExpectEntryOverheads(overheads);
  // Churn, then give everything back.
  c.Cmd(Cat({"SREM", "key4"}, Seq("member:", 0, 19000)));
  c("SPOP", "key3", "550");
  c("SINTERSTORE", "key6", "key4", "key1");
  c("SUNIONSTORE", "key7", "key4", "key1");
  c("SMOVE", "key2", "key8", "s1");
  c("COPY", "key7", "key9");
  c("FLUSHALL");
  for (int i = 0; i < 200 && ModuleAllocated(c, "sets") != base; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // lazy frees finish
  }
  EXPECT_EQ(ModuleAllocated(c, "sets"), base) << "leaked bytes";
}

// The set type's callbacks, called directly: serialize and deserialize round trips, refusals of
// malformed input, copy, encoding.
std::string Bytes(const std::string& b) { return U64(b.size()) + b; }
std::string Encoded(uint64_t rep, const Strings& members) {
  std::string s = U64(rep) + U64(members.size());
  for (const auto& m : members)
    s += rep == 0 ? U64(static_cast<uint64_t>(std::stoll(m))) : Bytes(m);
  return s;
}

TEST_F(SetsTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("set");
  ASSERT_TRUE(type.found());
  ASSERT_NE(type.desc().copy, nullptr);
  const std::vector<std::pair<std::string, std::string>> good = {
      {"intset", Encoded(0, {"-9223372036854775808", "-5", "0", "70000", "9223372036854775807"})},
      {"listpack", Encoded(1, {"b", "a", "", std::string(64, 'z')})},
      {"hashtable", Encoded(2, Cat(Seq("m", 0, 5000), {std::string(1000, 'q'), ""}))},
  };
  for (const auto& [encoding, bytes] : good) {
    void* v = type.Load(bytes);
    ASSERT_NE(v, nullptr) << encoding;
    EXPECT_STREQ(type.desc().encoding(nullptr, v), encoding.c_str());
    EXPECT_EQ(type.Save(v), bytes) << encoding;
    void* copy = type.desc().copy(nullptr, v);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(type.Save(copy), bytes) << encoding;
    EXPECT_EQ(type.desc().free_effort(nullptr, v),
              type.desc().free_effort(nullptr, copy));
    EXPECT_GT(type.desc().mem_usage(nullptr, copy), 0u);
    type.Free(copy);
    type.Free(v);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no members", Encoded(1, {})},
      {"unknown representation", Encoded(3, {"a"})},
      {"unsorted intset", Encoded(0, {"2", "1"})},
      {"duplicate in intset", Encoded(0, {"1", "1"})},
      {"intset too large", Encoded(0, Seq("", 0, 513))},
      {"listpack too large", Encoded(1, Seq("m", 0, 129))},
      {"listpack member too long", Encoded(1, {std::string(65, 'x')})},
      {"duplicate in listpack", Encoded(1, {"a", "b", "a"})},
      {"duplicate in hashtable", Encoded(2, {"a", "b", "a"})},
      {"truncated", Encoded(2, {"a", "bc"}).substr(0, 34)},  // one byte short
      {"count beyond the input", U64(2) + U64(1000000) + Bytes("a")},
  };
  for (const auto& [why, bytes] : bad) {
    void* v = type.Load(bytes);
    EXPECT_EQ(v, nullptr) << why;
    if (v != nullptr) type.Free(v);
  }
}

// Random commands on a few keys, both servers, every reply compared: the representations and
// their conversions against Redis's.
TEST_F(SetsTest, RandomCommandsAgreeWithRedis) {
  std::mt19937 rng(20240611);
  Strings pool = Cat(Seq("", -50, 650), Seq("m", 0, 300));
  pool.push_back(std::string(80, 'L'));
  pool.push_back("");
  auto pick = [&](size_t n) { return pool[rng() % std::min(n, pool.size())]; };
  const Strings keys = {"k0", "k1", "k2", "k3"};
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  auto key = [&] { return keys[rng() % keys.size()]; };
  std::vector<Row> rows;
  for (int i = 0; i < 3000; ++i) {
    const size_t range = i < 1000 ? 200 : pool.size();  // small sets first, then large ones
    Strings cmd;
    switch (rng() % 12) {
      case 0:
      case 1:
      case 2: {
        cmd = {"SADD", key()};
        for (int j = 0, n = 1 + rng() % 40; j < n; ++j) cmd.push_back(pick(range));
        break;
      }
      case 3:
      case 4: {
        cmd = {"SREM", key()};
        for (int j = 0, n = 1 + rng() % 20; j < n; ++j) cmd.push_back(pick(range));
        break;
      }
      case 5:
        cmd = {"SMOVE", key(), key(), pick(range)};
        break;
      case 6:
        cmd = {"SINTERSTORE", key(), key(), key()};
        break;
      case 7:
        cmd = {"SUNIONSTORE", key(), key(), key()};
        break;
      case 8:
        cmd = {"SDIFFSTORE", key(), key(), key(), key()};
        break;
      case 9:
        cmd = {"SMISMEMBER", key(), pick(range), pick(range), pick(range)};
        break;
      case 10:
        cmd = {"SINTERCARD", "2", key(), key(), "LIMIT", std::to_string(rng() % 50)};
        break;
      default:
        cmd = {"SCARD", key()};
        break;
    }
    rows.push_back({cmd, Any()});
    if (i % 50 == 49) {
      RunTable(rows);
      rows.clear();
      for (const std::string& k : keys) {  // compared as sorted bags: faster than the table's
        const Reply got = v.Cmd({"SMEMBERS", k}), want = r.Cmd({"SMEMBERS", k});
        ASSERT_EQ(Bag(got), Bag(want)) << "after command " << i << ", key " << k;
      }
    }
  }
}

}  // namespace
}  // namespace vessel::test
