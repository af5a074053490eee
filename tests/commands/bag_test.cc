// The bag module (BAG.*) against the in-process vessel server. Bags are not a Redis family, so
// the tables run on vessel only (RunVesselTable), in RESP2 and RESP3; where a BAG command has a
// Redis twin its replies and errors are compared with it on redis-server: BAG.RANGE and BAG.RANK
// against a sorted set of the same members with equal scores (ZRANGEBYLEX, ZRANK), BAG.INCRBY's
// errors against HINCRBY's, BAG.REM's count against LPOP's. A randomized model test replays
// seeded command sequences against a std::map of counts, BAG.TOP included, on bags small and
// large (the most frequent members come from a walk, then from the count index).
#include <algorithm>
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
#include "tests/commands/messaging_util.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/family.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kBadRange[] = "ERR min or max not valid string range item";
constexpr char kNegative[] = "ERR count would become negative";
constexpr char kOverflow[] = "ERR increment or decrement would overflow";

// Member, count pairs: a map (RESP3) or a flat array (RESP2), the counts integers.
Expect Counts(std::vector<std::pair<std::string, int64_t>> pairs) {
  std::string text;
  for (const auto& [m, n] : pairs) text += " " + m + ":" + Str(n);
  return Expect{"counts" + text, [pairs](const Reply& r) {
                  if (r.type != Reply::Type::kMap && r.type != Reply::Type::kArray) return false;
                  if (r.elems.size() != 2 * pairs.size()) return false;
                  for (size_t i = 0; i < pairs.size(); ++i) {
                    if (r.elems[2 * i].str != pairs[i].first ||
                        r.elems[2 * i + 1].type != Reply::Type::kInt ||
                        r.elems[2 * i + 1].integer != pairs[i].second)
                      return false;
                  }
                  return true;
                }};
}

const std::vector<CommandInfo> kCommands = {
    {"bag.add", -3, {"write", "denyoom", "fast"}, {"RW", "insert"}},
    {"bag.incrby", 4, {"write", "denyoom", "fast"}, {"RW", "update", "delete"}},
    {"bag.rem", -3, {"write", "fast"}, {"RW", "delete"}},
    {"bag.count", 3, {"readonly", "fast"}, {"RO"}},
    {"bag.len", 2, {"readonly", "fast"}, {"RO"}},
    {"bag.card", 2, {"readonly", "fast"}, {"RO"}},
    {"bag.range", -4, {"readonly"}, {"RO", "access"}},
    {"bag.rank", 3, {"readonly", "fast"}, {"RO"}},
    {"bag.top", 3, {"readonly"}, {"RO", "access"}},
};

class BagTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- one command at a time ----

TEST_F(BagTest, AddIncrRemAndCounts) {
  RunBothProtocols({
      {{"BAG.ADD", "b", "x", "y", "x"}, Int(3)},
      {{"TYPE", "b"}, Simple("bag")},
      {{"BAG.COUNT", "b", "x"}, Int(2)},
      {{"BAG.COUNT", "b", "z"}, Int(0)},
      {{"BAG.COUNT", "nokey", "x"}, Int(0)},
      {{"BAG.LEN", "b"}, Int(3)},
      {{"BAG.CARD", "b"}, Int(2)},
      {{"BAG.LEN", "nokey"}, Int(0)},
      {{"BAG.CARD", "nokey"}, Int(0)},
      {{"BAG.INCRBY", "b", "z", "10"}, Int(10)},
      {{"BAG.INCRBY", "b", "z", "-4"}, Int(6)},
      {{"BAG.INCRBY", "b", "z", "-7"}, Error(kNegative)},
      {{"BAG.INCRBY", "b", "none", "-1"}, Error(kNegative)},
      {{"BAG.INCRBY", "b", "z", "0"}, Int(6)},
      {{"BAG.INCRBY", "b", "none", "0"}, Int(0)},
      {{"BAG.INCRBY", "b", "z", "x"}, Error(kNotInt)},
      {{"BAG.INCRBY", "b", "z", "1.5"}, Error(kNotInt)},
      {{"BAG.INCRBY", "b", "z", "9223372036854775807"}, Error(kOverflow)},
      {{"BAG.INCRBY", "b", "z", "-9223372036854775808"}, Error(kNegative)},
      {{"BAG.INCRBY", "b", "z", "-6"}, Int(0)},  // reaching 0 removes it
      {{"BAG.CARD", "b"}, Int(2)},
      {{"BAG.REM", "b", "x"}, Int(1)},
      {{"BAG.REM", "b", "x", "5"}, Int(1)},
      {{"BAG.REM", "b", "x"}, Int(0)},
      {{"BAG.REM", "b", "y", "0"}, Int(0)},
      {{"BAG.REM", "b", "y", "-1"}, Error(kNotPositive)},
      {{"BAG.REM", "b", "y", "x"}, Error(kNotInt)},
      {{"BAG.REM", "b", "y", "1", "2"}, Arity("bag.rem")},
      {{"BAG.REM", "nokey", "y"}, Int(0)},
      {{"BAG.REM", "b", "y", "9223372036854775807"}, Int(1)},
      {{"EXISTS", "b"}, Int(0)},  // emptied: the key is gone
      {{"BAG.INCRBY", "nokey", "a", "0"}, Int(0)},
      {{"EXISTS", "nokey"}, Int(0)},  // nothing was added
      {{"BAG.INCRBY", "b", "a", "9223372036854775807"}, Int(INT64_MAX)},
      {{"BAG.ADD", "b", "c"}, Error(kOverflow)},  // the total would pass 2^63 - 1
      {{"BAG.LEN", "b"}, Int(INT64_MAX)},
      {{"BAG.ADD", "b2", "", "\0"s, std::string(300, 'm')}, Int(3)},
      {{"BAG.COUNT", "b2", std::string(300, 'm')}, Int(1)},
  });
}

TEST_F(BagTest, RangeRankTop) {
  RunBothProtocols({
      {{"BAG.ADD", "b", "a", "b", "b", "c", "c", "c", "d", "d", "d", "e"}, Int(10)},
      {{"BAG.RANGE", "b", "-", "+"}, Counts({{"a", 1}, {"b", 2}, {"c", 3}, {"d", 3}, {"e", 1}})},
      {{"BAG.RANGE", "b", "(a", "[c"}, Counts({{"b", 2}, {"c", 3}})},
      {{"BAG.RANGE", "b", "[c", "(a", "REV"}, Counts({{"c", 3}, {"b", 2}})},
      {{"BAG.RANGE", "b", "-", "+", "LIMIT", "1", "2"}, Counts({{"b", 2}, {"c", 3}})},
      {{"BAG.RANGE", "b", "x", "+"}, Error(kBadRange)},
      {{"BAG.RANGE", "b", "-", "+", "LIMIT"}, Error(kSyntax)},
      {{"BAG.RANGE", "nokey", "-", "+"}, Counts({})},
      {{"BAG.RANK", "b", "a"}, Int(0)},
      {{"BAG.RANK", "b", "e"}, Int(4)},
      {{"BAG.RANK", "b", "bb"}, Nil()},
      {{"BAG.RANK", "nokey", "a"}, Nil()},
      {{"BAG.TOP", "b", "3"}, Counts({{"c", 3}, {"d", 3}, {"b", 2}})},  // ties in member order
      {{"BAG.TOP", "b", "10"}, Counts({{"c", 3}, {"d", 3}, {"b", 2}, {"a", 1}, {"e", 1}})},
      {{"BAG.TOP", "b", "0"}, Counts({})},
      {{"BAG.TOP", "b", "-1"}, Error(kNotPositive)},
      {{"BAG.TOP", "b", "x"}, Error(kNotInt)},
      {{"BAG.TOP", "nokey", "x"}, Error(kNotInt)},
      {{"BAG.TOP", "nokey", "3"}, Counts({})},
  });
}

// Member, count pairs are a map in RESP3 and a flat array in RESP2 (the tables above accept
// either shape), the counts integers in both.
TEST_F(BagTest, CountsAreMapsInResp3) {
  for (const int proto : {2, 3}) {
    RespClient c = Servers::Get().Vessel();
    c("HELLO", Str(proto));
    c("BAG.ADD", "b", "a", "b", "b", "c");
    const Reply::Type want = proto == 3 ? Reply::Type::kMap : Reply::Type::kArray;
    for (const Strings& cmd : std::vector<Strings>{{"BAG.RANGE", "b", "-", "+"},
                                                   {"BAG.TOP", "b", "3"},
                                                   {"BAG.RANGE", "nokey", "-", "+"}}) {
      const Reply r = c.Cmd(cmd);
      EXPECT_EQ(r.type, want) << "RESP" << proto << " " << cmd[0] << ": " << r.ToString();
      for (size_t i = 1; i < r.elems.size(); i += 2)
        EXPECT_EQ(r.elems[i].type, Reply::Type::kInt) << r.ToString();
    }
    c("DEL", "b");
  }
}

TEST_F(BagTest, WrongTypeBothWays) {
  std::vector<Row> rows = {
      {{"SET", "str", "v"}, Ok()},
      {{"ZADD", "zset", "1", "m"}, Int(1)},
      {{"BAG.ADD", "b", "m"}, Int(1)},
  };
  for (const std::string k : {"str", "zset"}) {
    const std::vector<Row> each = {
        {{"BAG.ADD", k, "m"}, WrongType()},
        {{"BAG.INCRBY", k, "m", "1"}, WrongType()},
        {{"BAG.REM", k, "m"}, WrongType()},
        {{"BAG.COUNT", k, "m"}, WrongType()},
        {{"BAG.LEN", k}, WrongType()},
        {{"BAG.CARD", k}, WrongType()},
        {{"BAG.RANGE", k, "-", "+"}, WrongType()},
        {{"BAG.RANK", k, "m"}, WrongType()},
        {{"BAG.TOP", k, "1"}, WrongType()},
        {{"BAG.TOP", k, "-1"}, Error(kNotPositive)},
    };
    rows.insert(rows.end(), each.begin(), each.end());
  }
  rows.push_back({{"ZSCORE", "b", "m"}, WrongType()});
  rows.push_back({{"BAG.COUNT", "b", "m"}, Int(1)});
  RunBothProtocols(rows);
}

TEST_F(BagTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"BAG.ADD", "k"},
                                                 {"BAG.INCRBY", "k", "m"},
                                                 {"BAG.INCRBY", "k", "m", "1", "2"},
                                                 {"BAG.REM", "k"},
                                                 {"BAG.COUNT", "k"},
                                                 {"BAG.LEN"},
                                                 {"BAG.CARD", "k", "x"},
                                                 {"BAG.RANGE", "k", "-"},
                                                 {"BAG.RANK", "k"},
                                                 {"BAG.TOP", "k"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Arity(lower)});
  }
  RunBothProtocols(rows);
}

// ---- against Redis ----

TEST_F(BagTest, AgreesWithRedis) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const Strings members = {"", "a", "aa", "ab", "b", "c", "\xff", "\x01", "m1", "m10", "m2"};
  for (size_t i = 0; i < members.size(); ++i) {
    v("BAG.INCRBY", "k", members[i], Str(static_cast<int64_t>(i + 1)));
    r("ZADD", "z", "0", members[i]);
  }
  const Strings bounds = {"-", "+", "[a", "(a", "[", "(", "[b", "(ab", "[m1", "[zzz", "a", "+a"};
  for (const std::string& lo : bounds) {
    for (const std::string& hi : bounds) {
      Twin(v, r, {"BAG.RANGE", "k", lo, hi}, {"ZRANGEBYLEX", "z", lo, hi}, true);
      Twin(v, r, {"BAG.RANGE", "k", hi, lo, "REV", "LIMIT", "1", "3"},
           {"ZREVRANGEBYLEX", "z", hi, lo, "LIMIT", "1", "3"}, true);
    }
  }
  for (const std::string& m : Cat(members, {"none", "m"}))
    Twin(v, r, {"BAG.RANK", "k", m}, {"ZRANK", "z", m});
  r("HSET", "h", "f", "5");
  for (const char* n : {"x", "1.5", "", " 1", "9223372036854775808"})
    Twin(v, r, {"BAG.INCRBY", "k", "a", n}, {"HINCRBY", "h", "f", n});
  r("HSET", "h", "g", "9223372036854775807");
  v("BAG.INCRBY", "k2", "g", "9223372036854775807");
  Twin(v, r, {"BAG.INCRBY", "k2", "g", "1"}, {"HINCRBY", "h", "g", "1"});
  r("RPUSH", "l", "x");
  for (const char* n : {"-1", "-100"}) Twin(v, r, {"BAG.REM", "k", "a", n}, {"LPOP", "l", n});
}

// ---- COMMAND, ACL ----

TEST_F(BagTest, CommandInfoDocsAndAcl) { ExpectCommandTable("bag", "bag", kCommands); }

// ---- the host's side of the type ----

TEST_F(BagTest, ExpiresAsAnyKey) {
  RespClient c = Servers::Get().Vessel();
  ExpectExpires(c, {"BAG.ADD", "ttl", "a", "a"});
}

TEST_F(BagTest, KeyspaceCommandsAndEncodings) {
  Strings many = {"BAG.ADD", "big"};
  for (int i = 0; i < 300; ++i) many.push_back("m" + Str(1000 + i % 200));
  RunBothProtocols({
      {{"BAG.ADD", "b", "a", "a", "b"}, Int(3)},
      {{"OBJECT", "ENCODING", "b"}, Bulk("packed")},
      {many, Int(300)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("btree")},
      {{"BAG.TOP", "big", "2"}, Counts({{"m1000", 2}, {"m1001", 2}})},
      {{"MEMORY", "USAGE", "b"}, IntRange(30, 400)},
      {{"COPY", "b", "b2"}, Int(1)},
      {{"BAG.ADD", "b2", "c"}, Int(1)},  // the copy is deep
      {{"BAG.CARD", "b"}, Int(2)},
      {{"COPY", "big", "big2"}, Int(1)},
      {{"BAG.TOP", "big2", "1"}, Counts({{"m1000", 2}})},
      {{"RENAME", "b2", "b3"}, Ok()},
      {{"EXPIRE", "b3", "100"}, Int(1)},
      {{"BAG.INCRBY", "b3", "c", "5"}, Int(6)},
      {{"TTL", "b3"}, Int(100)},
      {{"MOVE", "b3", "3"}, Int(1)},
      {{"SELECT", "3"}, Ok()},
      {{"BAG.RANGE", "b3", "-", "+"}, Counts({{"a", 2}, {"b", 1}, {"c", 6}})},
      {{"SELECT", "0"}, Ok()},
  });
}

TEST_F(BagTest, TransactionsAndScripts) {
  RunBothProtocols({
      {{"MULTI"}, Ok()},
      {{"BAG.ADD", "b", "x", "x", "y"}, Queued()},
      {{"BAG.INCRBY", "b", "y", "-5"}, Queued()},
      {{"BAG.TOP", "b", "1"}, Queued()},
      {{"EXEC"}, Arr({Int(3), Error(kNegative), Counts({{"x", 2}})})},
      {{"EVAL", "redis.call('BAG.ADD', KEYS[1], 'z'); return redis.call('BAG.TOP', KEYS[1], 5)",
        "1", "b"},
       Arr({Bulk("x"), Int(2), Bulk("y"), Int(1), Bulk("z"), Int(1)})},
  });
}

TEST_F(BagTest, KeyspaceEvents) {
  const Strings got = KeyeventsOf({{"BAG.ADD", "b", "x", "y"},
                                   {"BAG.INCRBY", "b", "x", "2"},
                                   {"BAG.INCRBY", "b", "x", "0"},
                                   {"BAG.INCRBY", "b", "x", "-9"},
                                   {"BAG.REM", "b", "zz"},
                                   {"BAG.REM", "b", "y"},
                                   {"BAG.INCRBY", "b", "x", "-3"},
                                   {"BAG.INCRBY", "c", "q", "0"}});
  EXPECT_EQ(got,
            (Strings{"new b", "bag.add b", "bag.incrby b", "bag.rem b", "bag.incrby b", "del b"}));
}

// ---- memory ----

TEST_F(BagTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "bag");
  std::vector<Strings> creates;
  for (const int n : {1, 50, 128, 129, 3000}) {
    Strings cmd = {"BAG.ADD", "k" + Str(n % 10000)};
    for (int i = 0; i < n; ++i) cmd.push_back("member:" + Str(i * 7919 % 2000));
    creates.push_back(cmd);
  }
  ExpectMemoryUsageMatches(c, "bag", creates);
  ExpectFlushFreesAll(c, "bag", base);
}

// A bag costs no more than a Redis sorted set of its members scored by their counts (MEMORY USAGE
// ... SAMPLES 0 on redis-server): small ones against a listpack, large ones against a skiplist.
// From 100 members on: below that the key's own costs (the host's entry here, robj, key and
// dictEntry there) and the size class of one block decide more than the family does, and this
// test binary's allocator is not redis-server's (both are printed).
TEST_F(BagTest, MemoryAtMostARedisSortedSet) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (const int n : {10, 100, 128, 1000, 100000}) {
    for (int i = 0; i < n; i += 1000) {
      Strings vcmd = {"BAG.ADD", "b"}, rcmd = {"ZADD", "b"};
      for (int j = i; j < std::min(n, i + 1000); ++j) {
        const std::string m = "member:" + Str(1000000 + j);
        const int count = 1 + j % 7;
        for (int k = 0; k < count; ++k) vcmd.push_back(m);
        rcmd.push_back(Str(count));
        rcmd.push_back(m);
      }
      v.Cmd(vcmd);
      r.Cmd(rcmd);
    }
    const int64_t bag = v("MEMORY", "USAGE", "b", "SAMPLES", "0").integer;
    const int64_t zset = r("MEMORY", "USAGE", "b", "SAMPLES", "0").integer;
    if (n >= 100) {
      EXPECT_LE(bag, zset) << n << " members: bag " << bag << " zset " << zset;
    }
    std::printf("[ memory   ] %d members: bag %.1f B/member, Redis sorted set %.1f\n", n,
                static_cast<double>(bag) / n, static_cast<double>(zset) / n);
    v("DEL", "b");
    r("DEL", "b");
  }
}

// ---- serialization and persistence ----

std::string Encoded(const std::vector<std::pair<std::string, uint64_t>>& pairs) {
  std::string s = U64(pairs.size());
  for (const auto& [m, n] : pairs) s += U64(m.size()) + m + U64(n);
  return s;
}

TEST_F(BagTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("bag");
  ASSERT_TRUE(type.found());
  std::vector<std::pair<std::string, uint64_t>> big;
  for (int i = 0; i < 5000; ++i)
    big.push_back({"m" + Str(100000 + i), 1 + static_cast<uint64_t>(i % 9)});
  const std::vector<std::vector<std::pair<std::string, uint64_t>>> good = {
      {{"", 1}}, {{"a", 9223372036854775806ull}, {std::string(300, 'x'), 1}}, big};
  for (const auto& pairs : good) ExpectRoundTrip(type, Encoded(pairs));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no members", Encoded({})},
      {"a zero count", Encoded({{"a", 0}})},
      {"out of order", Encoded({{"b", 1}, {"a", 2}})},
      {"repeated", Encoded({{"a", 1}, {"a", 2}})},
      {"total beyond int64", Encoded({{"a", 9223372036854775807ull}, {"b", 1}})},
      {"truncated", Encoded({{"a", 1}, {"b", 2}}).substr(0, 30)},
  };
  ExpectRefused(type, bad);
}

TEST_F(BagTest, DumpAndRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  for (int i = 0; i < 2000; ++i) c("BAG.ADD", "b", "m" + Str(i * i % 777));
  const Reply dump = c("DUMP", "b");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  EXPECT_EQ(c("RESTORE", "b2", "0", dump.str).str, "OK");
  EXPECT_EQ(c("TYPE", "b2").str, "bag");
  EXPECT_EQ(c("BAG.TOP", "b2", "20"), c("BAG.TOP", "b", "20"));
  EXPECT_EQ(c("BAG.RANGE", "b2", "-", "+"), c("BAG.RANGE", "b", "-", "+"));
  EXPECT_EQ(c("BAG.LEN", "b2"), c("BAG.LEN", "b"));
}

// ---- the model-based test ----

Reply R(Reply::Type t, std::string s = "", int64_t i = 0) { return Reply{t, std::move(s), i, {}}; }
Reply RInt(int64_t v) { return R(Reply::Type::kInt, "", v); }
Reply RBulk(const std::string& s) { return R(Reply::Type::kBulk, s); }
Reply RArr(std::vector<Reply> e) { return Reply{Reply::Type::kArray, "", 0, std::move(e)}; }

using Counts_ = std::map<std::string, int64_t>;

// A std::map of counts per key and the commands' rules, written independently.
class Model {
 public:
  Reply Apply(const Strings& cmd) {
    const std::string& op = cmd[0];
    Counts_& b = keys_[cmd[1]];
    auto done = [&](Reply r) {
      if (b.empty()) keys_.erase(cmd[1]);
      return r;
    };
    int64_t total = 0;
    for (const auto& [m, n] : b) total += n;
    if (op == "BAG.ADD") {
      for (size_t i = 2; i < cmd.size(); ++i) ++b[cmd[i]];
      return RInt(static_cast<int64_t>(cmd.size() - 2));
    }
    if (op == "BAG.INCRBY") {
      const int64_t n = std::stoll(cmd[3]);
      auto it = b.find(cmd[2]);
      const int64_t now = (it == b.end() ? 0 : it->second) + n;
      if (now < 0) return done(R(Reply::Type::kError, kNegative));
      if (now == 0) {
        b.erase(cmd[2]);
      } else {
        b[cmd[2]] = now;
      }
      return done(RInt(now));
    }
    if (op == "BAG.REM") {
      auto it = b.find(cmd[2]);
      if (it == b.end()) return done(RInt(0));
      const int64_t n = std::min<int64_t>(it->second, cmd.size() > 3 ? std::stoll(cmd[3]) : 1);
      if ((it->second -= n) == 0) b.erase(it);
      return done(RInt(n));
    }
    if (op == "BAG.COUNT") {
      auto it = b.find(cmd[2]);
      return done(RInt(it == b.end() ? 0 : it->second));
    }
    if (op == "BAG.LEN") return done(RInt(total));
    if (op == "BAG.CARD") return done(RInt(static_cast<int64_t>(b.size())));
    if (op == "BAG.RANK") {
      auto it = b.find(cmd[2]);
      return done(it == b.end() ? R(Reply::Type::kNil) : RInt(std::distance(b.begin(), it)));
    }
    if (op == "BAG.TOP") {
      std::vector<std::pair<std::string, int64_t>> all(b.begin(), b.end());
      std::stable_sort(all.begin(), all.end(),
                       [](const auto& x, const auto& y) { return x.second > y.second; });
      std::vector<Reply> out;
      for (size_t i = 0; i < all.size() && i < std::stoull(cmd[2]); ++i) {
        out.push_back(RBulk(all[i].first));
        out.push_back(RInt(all[i].second));
      }
      return done(RArr(out));
    }
    if (op == "BAG.RANGE") {  // key - + LIMIT offset count
      std::vector<Reply> out;
      int64_t i = 0;
      const int64_t offset = std::stoll(cmd[5]), count = std::stoll(cmd[6]);
      for (const auto& [m, n] : b) {
        if (i >= offset && (count < 0 || i < offset + count)) {
          out.push_back(RBulk(m));
          out.push_back(RInt(n));
        }
        ++i;
      }
      return done(RArr(out));
    }
    return done(R(Reply::Type::kError, "unknown " + op));
  }
  const std::map<std::string, Counts_>& keys() const { return keys_; }

 private:
  std::map<std::string, Counts_> keys_;
};

Strings RandomCommand(std::mt19937_64& rng, int space) {
  const std::string k = "k" + Str(static_cast<int64_t>(rng() % 2));
  auto member = [&] {
    const uint64_t m = rng() % static_cast<uint64_t>(space);
    return m % 5 == 0 ? std::string(210, 'L') + Str(static_cast<int64_t>(m))
                      : "m" + Str(static_cast<int64_t>(m));
  };
  switch (rng() % 12) {
    case 0:
    case 1:
    case 2: {
      Strings c = {"BAG.ADD", k};
      const size_t n = rng() % 6 == 0 ? 40 + rng() % 100 : 1 + rng() % 3;
      for (size_t i = 0; i < n; ++i) c.push_back(member());
      return c;
    }
    case 3:
    case 4:
      return {"BAG.INCRBY", k, member(), Str(static_cast<int64_t>(rng() % 11) - 6)};
    case 5:
      return {"BAG.REM", k, member(), Str(static_cast<int64_t>(rng() % 4))};
    case 6:
      return {"BAG.COUNT", k, member()};
    case 7:
      return {rng() % 2 ? "BAG.LEN" : "BAG.CARD", k};
    case 8:
      return {"BAG.RANK", k, member()};
    case 9:
    case 10:
      return {"BAG.TOP", k, Str(static_cast<int64_t>(rng() % 12))};
    default:
      return {"BAG.RANGE",
              k,
              "-",
              "+",
              "LIMIT",
              Str(static_cast<int64_t>(rng() % 10)),
              Str(static_cast<int64_t>(rng() % 12) - 2)};
  }
}

TEST_F(BagTest, RandomCommandsAgreeWithTheModel) {
  const uint64_t seed = SeedFromEnv("BAG_SEED", 20261203);
  // A small member space keeps bags under the count index's threshold; a large one crosses it
  // both ways.
  for (const int space : {40, 600}) {
    std::mt19937_64 rng(seed + static_cast<uint64_t>(space));
    Servers::Get().Reset();
    Model model;
    RunModelTest(
        "seed " + std::to_string(seed) + " space " + Str(space), 6000, 500,
        [&] { return RandomCommand(rng, space); },
        [&](const Strings& cmd) { return model.Apply(cmd); },
        [&](RespClient& c) {
          for (int k = 0; k < 2; ++k) {
            const std::string key = "k" + Str(k);
            ASSERT_EQ(c("BAG.TOP", key, "1000000"), model.Apply({"BAG.TOP", key, "1000000"}));
            ASSERT_EQ(c("EXISTS", key).integer, model.keys().contains(key) ? 1 : 0);
          }
        });
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace vessel::test
