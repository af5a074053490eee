// The multimap module (MMAP.*) against the in-process vessel server. Multimaps are not a Redis
// family, so the tables run on vessel only (RunVesselTable), in RESP2 and RESP3; MMAP.RANGE's
// bounds, options and errors are compared with ZRANGEBYLEX's on redis-server (the distinct fields
// of a multimap against a sorted set of them with equal scores), MMAP.ADD's odd arguments with
// HSET's. A randomized model test replays seeded command sequences against a std::multimap.
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
#include "tests/support/family.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kBadRange[] = "ERR min or max not valid string range item";

const std::vector<CommandInfo> kCommands = {
    {"mmap.add", -4, {"write", "denyoom", "fast"}, {"RW", "insert"}},
    {"mmap.get", 3, {"readonly"}, {"RO", "access"}},
    {"mmap.count", 3, {"readonly", "fast"}, {"RO"}},
    {"mmap.del", -3, {"write"}, {"RW", "delete"}},
    {"mmap.len", 2, {"readonly", "fast"}, {"RO"}},
    {"mmap.card", 2, {"readonly", "fast"}, {"RO"}},
    {"mmap.range", -4, {"readonly"}, {"RO", "access"}},
};

class MultimapTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- one command at a time ----

TEST_F(MultimapTest, AddGetCountDel) {
  RunBothProtocols({
      {{"MMAP.ADD", "m", "b", "1", "a", "x", "b", "2"}, Int(3)},
      {{"MMAP.ADD", "m", "b", "1"}, Int(1)},  // a pair may repeat
      {{"MMAP.ADD", "m", "c"}, Arity("mmap.add")},
      {{"MMAP.ADD", "m", "c", "1", "d"}, Arity("mmap.add")},
      {{"TYPE", "m"}, Simple("multimap")},
      {{"MMAP.GET", "m", "b"}, BulkArr({"1", "2", "1"})},  // insertion order
      {{"MMAP.GET", "m", "a"}, BulkArr({"x"})},
      {{"MMAP.GET", "m", "z"}, BulkArr({})},
      {{"MMAP.GET", "nokey", "a"}, BulkArr({})},
      {{"MMAP.COUNT", "m", "b"}, Int(3)},
      {{"MMAP.COUNT", "m", "z"}, Int(0)},
      {{"MMAP.COUNT", "nokey", "z"}, Int(0)},
      {{"MMAP.LEN", "m"}, Int(4)},
      {{"MMAP.CARD", "m"}, Int(2)},
      {{"MMAP.LEN", "nokey"}, Int(0)},
      {{"MMAP.CARD", "nokey"}, Int(0)},
      {{"MMAP.DEL", "m", "b", "1"}, Int(1)},  // the first occurrence
      {{"MMAP.GET", "m", "b"}, BulkArr({"2", "1"})},
      {{"MMAP.DEL", "m", "b", "9"}, Int(0)},
      {{"MMAP.DEL", "m", "z"}, Int(0)},
      {{"MMAP.DEL", "m", "b", "1", "x"}, Arity("mmap.del")},
      {{"MMAP.DEL", "m", "b"}, Int(2)},
      {{"MMAP.CARD", "m"}, Int(1)},
      {{"MMAP.DEL", "m", "a", "x"}, Int(1)},
      {{"EXISTS", "m"}, Int(0)},  // emptied: the key is gone
      {{"MMAP.DEL", "nokey", "a"}, Int(0)},
      {{"MMAP.ADD", "m", "", "", std::string(300, 'f'), std::string(300, 'v'), "", "-5"}, Int(3)},
      {{"MMAP.GET", "m", ""}, BulkArr({"", "-5"})},
      {{"MMAP.GET", "m", std::string(300, 'f')}, BulkArr({std::string(300, 'v')})},
  });
}

TEST_F(MultimapTest, Range) {
  RunBothProtocols({
      {{"MMAP.ADD", "m", "b", "1", "a", "1", "b", "2", "c", "1", "a", "2"}, Int(5)},
      {{"MMAP.RANGE", "m", "-", "+"}, BulkArr({"a", "1", "a", "2", "b", "1", "b", "2", "c", "1"})},
      {{"MMAP.RANGE", "m", "[b", "+"}, BulkArr({"b", "1", "b", "2", "c", "1"})},
      {{"MMAP.RANGE", "m", "(a", "(c"}, BulkArr({"b", "1", "b", "2"})},
      {{"MMAP.RANGE", "m", "[b", "[a", "REV"}, BulkArr({"b", "2", "b", "1", "a", "2", "a", "1"})},
      {{"MMAP.RANGE", "m", "-", "+", "LIMIT", "1", "3"}, BulkArr({"a", "2", "b", "1", "b", "2"})},
      {{"MMAP.RANGE", "m", "+", "-", "REV", "LIMIT", "0", "1"}, BulkArr({"c", "1"})},
      {{"MMAP.RANGE", "m", "-", "+", "LIMIT", "-1", "3"}, BulkArr({})},
      {{"MMAP.RANGE", "m", "+", "-"}, BulkArr({})},
      {{"MMAP.RANGE", "m", "a", "+"}, Error(kBadRange)},
      {{"MMAP.RANGE", "m", "-", "+", "LIMIT", "1"}, Error(kSyntax)},
      {{"MMAP.RANGE", "m", "-", "+", "LIMIT", "x", "1"}, Error(kNotInt)},
      {{"MMAP.RANGE", "nokey", "-", "+"}, BulkArr({})},
  });
}

TEST_F(MultimapTest, Resp3KeepsFlatPairs) {
  RespClient c = Servers::Get().Vessel();
  c("HELLO", "3");
  c("MMAP.ADD", "m", "a", "1", "a", "2");
  const Reply r = c("MMAP.RANGE", "m", "-", "+");
  EXPECT_EQ(r.type, Reply::Type::kArray) << r.ToString();  // a map could not repeat "a"
  EXPECT_EQ(Elements(r), (Strings{"a", "1", "a", "2"}));
}

TEST_F(MultimapTest, WrongTypeBothWays) {
  std::vector<Row> rows = {
      {{"SET", "str", "v"}, Ok()},
      {{"HSET", "hash", "f", "v"}, Int(1)},
      {{"MMAP.ADD", "m", "f", "v"}, Int(1)},
  };
  for (const std::string k : {"str", "hash"}) {
    const std::vector<Row> each = {
        {{"MMAP.ADD", k, "f", "v"}, WrongType()},
        {{"MMAP.GET", k, "f"}, WrongType()},
        {{"MMAP.COUNT", k, "f"}, WrongType()},
        {{"MMAP.DEL", k, "f"}, WrongType()},
        {{"MMAP.LEN", k}, WrongType()},
        {{"MMAP.CARD", k}, WrongType()},
        {{"MMAP.RANGE", k, "-", "+"}, WrongType()},
        {{"MMAP.RANGE", k, "x", "+"}, Error(kBadRange)},
    };
    rows.insert(rows.end(), each.begin(), each.end());
  }
  rows.push_back({{"HGET", "m", "f"}, WrongType()});
  rows.push_back({{"MMAP.GET", "m", "f"}, BulkArr({"v"})});
  RunBothProtocols(rows);
}

TEST_F(MultimapTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"MMAP.ADD", "k", "f"},
                                                 {"MMAP.GET", "k"},
                                                 {"MMAP.GET", "k", "f", "x"},
                                                 {"MMAP.COUNT", "k"},
                                                 {"MMAP.DEL", "k"},
                                                 {"MMAP.LEN"},
                                                 {"MMAP.CARD", "k", "x"},
                                                 {"MMAP.RANGE", "k", "-"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Arity(lower)});
  }
  RunBothProtocols(rows);
}

// ---- against Redis ----

// MMAP.RANGE on a multimap with one value per field selects the fields ZRANGEBYLEX selects from
// a sorted set of them; errors are the same, as are MMAP.ADD's and HSET's for odd arguments.
TEST_F(MultimapTest, AgreesWithRedis) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const Strings fields = {"", "a", "aa", "ab", "b", "c", "\xff", "\x01", "m1", "m10"};
  for (const std::string& f : fields) {
    v("MMAP.ADD", "k", f, "v");
    r("ZADD", "z", "0", f);
  }
  auto fields_of = [](Reply x) {
    if (x.is_error()) return x;
    Reply out{Reply::Type::kArray, "", 0, {}};
    for (size_t i = 0; i < x.elems.size(); i += 2) out.elems.push_back(x.elems[i]);
    return out;
  };
  const Strings bounds = {"-", "+", "[a", "(a", "[", "(", "[b", "(ab", "[m1", "a", "+a"};
  for (const std::string& lo : bounds) {
    for (const std::string& hi : bounds) {
      EXPECT_EQ(fields_of(v("MMAP.RANGE", "k", lo, hi)), r("ZRANGEBYLEX", "z", lo, hi))
          << lo << " " << hi;
      EXPECT_EQ(fields_of(v("MMAP.RANGE", "k", hi, lo, "REV", "LIMIT", "1", "2")),
                r("ZREVRANGEBYLEX", "z", hi, lo, "LIMIT", "1", "2"))
          << lo << " " << hi;
    }
  }
  for (const Strings& opts : std::vector<Strings>{{"LIMIT", "1"}, {"FOO"}, {"LIMIT", "x", "1"}}) {
    EXPECT_EQ(v.Cmd(Cat({"MMAP.RANGE", "k", "-", "+"}, opts)),
              r.Cmd(Cat({"ZRANGEBYLEX", "z", "-", "+"}, opts)));
  }
  Twin(v, r, {"MMAP.ADD", "k", "f"}, {"HSET", "h", "f"});
}

// ---- COMMAND, ACL ----

TEST_F(MultimapTest, CommandInfoDocsAndAcl) {
  ExpectCommandTable("multimap", "multimap", kCommands);
}

// ---- the host's side of the type ----

TEST_F(MultimapTest, ExpiresAsAnyKey) {
  RespClient c = Servers::Get().Vessel();
  ExpectExpires(c, {"MMAP.ADD", "ttl", "f", "v"});
}

TEST_F(MultimapTest, KeyspaceCommandsAndEncodings) {
  Strings many = {"MMAP.ADD", "big"};
  for (int i = 0; i < 300; ++i) {
    many.push_back("f" + Str(i % 50));
    many.push_back(Str(i));
  }
  RunBothProtocols({
      {{"MMAP.ADD", "m", "a", "1", "a", std::string(300, 'x')}, Int(2)},
      {{"OBJECT", "ENCODING", "m"}, Bulk("packed")},
      {many, Int(300)},
      {{"OBJECT", "ENCODING", "big"}, Bulk("btree")},
      {{"MMAP.GET", "big", "f7"}, BulkArr({"7", "57", "107", "157", "207", "257"})},
      {{"MMAP.CARD", "big"}, Int(50)},
      {{"MEMORY", "USAGE", "m"}, IntRange(300, 1000)},
      {{"COPY", "m", "m2"}, Int(1)},
      {{"MMAP.ADD", "m2", "a", "2"}, Int(1)},  // the copy is deep
      {{"MMAP.COUNT", "m", "a"}, Int(2)},
      {{"COPY", "big", "big2"}, Int(1)},
      {{"MMAP.GET", "big2", "f49"}, BulkArr({"49", "99", "149", "199", "249", "299"})},
      {{"RENAME", "m2", "m3"}, Ok()},
      {{"EXPIRE", "m3", "100"}, Int(1)},
      {{"MMAP.DEL", "m3", "a", "1"}, Int(1)},
      {{"TTL", "m3"}, Int(100)},
      {{"MOVE", "m3", "4"}, Int(1)},
      {{"SELECT", "4"}, Ok()},
      {{"MMAP.RANGE", "m3", "-", "+"}, BulkArr({"a", std::string(300, 'x'), "a", "2"})},
      {{"SELECT", "0"}, Ok()},
  });
}

TEST_F(MultimapTest, TransactionsAndScripts) {
  RunBothProtocols({
      {{"MULTI"}, Ok()},
      {{"MMAP.ADD", "m", "a", "1", "a", "2"}, Queued()},
      {{"MMAP.ADD", "m", "a"}, Arity("mmap.add")},
      {{"EXEC"}, Error("EXECABORT Transaction discarded because of previous errors.")},
      {{"MULTI"}, Ok()},
      {{"MMAP.ADD", "m", "a", "1", "a", "2"}, Queued()},
      {{"MMAP.RANGE", "m", "x", "+"}, Queued()},
      {{"MMAP.GET", "m", "a"}, Queued()},
      {{"EXEC"}, Arr({Int(2), Error(kBadRange), BulkArr({"1", "2"})})},
      {{"EVAL",
        "redis.call('MMAP.ADD', KEYS[1], 'b', '3'); return redis.call('MMAP.CARD', KEYS[1])", "1",
        "m"},
       Int(2)},
  });
}

TEST_F(MultimapTest, KeyspaceEvents) {
  const Strings got = KeyeventsOf({{"MMAP.ADD", "m", "a", "1", "a", "2"},
                                   {"MMAP.DEL", "m", "a", "9"},
                                   {"MMAP.DEL", "m", "a", "1"},
                                   {"MMAP.GET", "m", "a"},
                                   {"MMAP.DEL", "m", "a"}});
  EXPECT_EQ(got, (Strings{"new m", "mmap.add m", "mmap.del m", "mmap.del m", "del m"}));
}

TEST_F(MultimapTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "multimap");
  std::vector<Strings> creates;
  for (const int n : {1, 50, 128, 129, 3000}) {
    Strings cmd = {"MMAP.ADD", "k" + Str(n % 10000)};
    for (int i = 0; i < n; ++i) {
      cmd.push_back("field:" + Str(i % 97));
      cmd.push_back(i % 3 == 0 ? Str(i) : std::string(i % 250, 'v'));
    }
    creates.push_back(cmd);
  }
  ExpectMemoryUsageMatches(c, "multimap", creates);
  ExpectFlushFreesAll(c, "multimap", base);
}

// ---- serialization ----

TEST_F(MultimapTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("multimap");
  ASSERT_TRUE(type.found());
  std::vector<std::pair<std::string, std::string>> big;
  for (int i = 0; i < 5000; ++i) big.push_back({"f" + Str(1000 + i / 7), Str(i)});
  const std::vector<std::vector<std::pair<std::string, std::string>>> good = {
      {{"", ""}},
      {{"a", "2"}, {"a", "1"}, {"a", "2"}, {std::string(250, 'k'), std::string(300, 'v')}},
      big};
  for (const auto& pairs : good) ExpectRoundTrip(type, EncodedPairs(pairs));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no pairs", EncodedPairs({})},
      {"out of order", EncodedPairs({{"b", "1"}, {"a", "2"}})},
      {"truncated", EncodedPairs({{"a", "1"}, {"b", "2"}}).substr(0, 40)},
  };
  ExpectRefused(type, bad);
}

TEST_F(MultimapTest, DumpAndRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  for (int i = 0; i < 500; ++i) c("MMAP.ADD", "m", "f" + Str(i % 23), "v" + Str(i));
  const Reply dump = c("DUMP", "m");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  EXPECT_EQ(c("RESTORE", "m2", "0", dump.str).str, "OK");
  EXPECT_EQ(c("TYPE", "m2").str, "multimap");
  EXPECT_EQ(c("MMAP.RANGE", "m2", "-", "+"), c("MMAP.RANGE", "m", "-", "+"));
  EXPECT_EQ(c("MMAP.CARD", "m2").integer, 23);
}

// ---- the model-based test ----

Reply R(Reply::Type t, std::string s = "", int64_t i = 0) { return Reply{t, std::move(s), i, {}}; }
Reply RInt(int64_t v) { return R(Reply::Type::kInt, "", v); }
Reply RBulk(const std::string& s) { return R(Reply::Type::kBulk, s); }
Reply RArr(std::vector<Reply> e) { return Reply{Reply::Type::kArray, "", 0, std::move(e)}; }

using MM = std::multimap<std::string, std::string>;

// A std::multimap per key (insert puts a pair after its equals) and the commands' rules.
class Model {
 public:
  Reply Apply(const Strings& cmd) {
    const std::string& op = cmd[0];
    MM& m = keys_[cmd[1]];
    auto done = [&](Reply r) {
      if (m.empty()) keys_.erase(cmd[1]);
      return r;
    };
    if (op == "MMAP.ADD") {
      for (size_t i = 2; i + 1 < cmd.size(); i += 2) m.emplace(cmd[i], cmd[i + 1]);
      return done(RInt(static_cast<int64_t>(cmd.size() - 2) / 2));
    }
    if (op == "MMAP.GET") {
      std::vector<Reply> out;
      for (auto [a, b] = m.equal_range(cmd[2]); a != b; ++a) out.push_back(RBulk(a->second));
      return done(RArr(out));
    }
    if (op == "MMAP.COUNT") return done(RInt(static_cast<int64_t>(m.count(cmd[2]))));
    if (op == "MMAP.LEN") return done(RInt(static_cast<int64_t>(m.size())));
    if (op == "MMAP.CARD") {
      std::set<std::string> fields;
      for (const auto& [f, v] : m) fields.insert(f);
      return done(RInt(static_cast<int64_t>(fields.size())));
    }
    if (op == "MMAP.DEL") {
      auto [a, b] = m.equal_range(cmd[2]);
      if (cmd.size() == 3) {
        const int64_t n = std::distance(a, b);
        m.erase(a, b);
        return done(RInt(n));
      }
      for (; a != b; ++a) {
        if (a->second == cmd[3]) {
          m.erase(a);
          return done(RInt(1));
        }
      }
      return done(RInt(0));
    }
    if (op == "MMAP.RANGE") {  // key min max [REV]: bounds inclusive "[x" or "-"/"+"
      const bool rev = cmd.size() > 4 && cmd[4] == "REV";
      const std::string& lo = rev ? cmd[3] : cmd[2];
      const std::string& hi = rev ? cmd[2] : cmd[3];
      std::vector<std::pair<std::string, std::string>> in;
      for (const auto& [f, v] : m) {
        const bool above = lo == "-" || (lo[0] == '[' ? f >= lo.substr(1) : f > lo.substr(1));
        const bool below = hi == "+" || (hi[0] == '[' ? f <= hi.substr(1) : f < hi.substr(1));
        if (lo != "+" && hi != "-" && above && below) in.push_back({f, v});
      }
      if (rev) std::reverse(in.begin(), in.end());
      std::vector<Reply> out;
      for (const auto& [f, v] : in) {
        out.push_back(RBulk(f));
        out.push_back(RBulk(v));
      }
      return done(RArr(out));
    }
    return done(R(Reply::Type::kError, "unknown " + op));
  }
  const std::map<std::string, MM>& keys() const { return keys_; }

 private:
  std::map<std::string, MM> keys_;
};

Strings RandomCommand(std::mt19937_64& rng) {
  const std::string k = "k" + Str(static_cast<int64_t>(rng() % 2));
  auto field = [&] {
    const uint64_t f = rng() % 60;
    return f % 7 == 0 ? std::string(205, 'F') + Str(static_cast<int64_t>(f))
                      : "f" + Str(static_cast<int64_t>(f));
  };
  auto value = [&] {
    const uint64_t v = rng() % 20;
    return v % 9 == 0 ? std::string(250, 'v') : Str(static_cast<int64_t>(v));
  };
  auto bound = [&]() -> std::string {
    switch (rng() % 5) {
      case 0:
        return "-";
      case 1:
        return "+";
      case 2:
        return "(" + field();
      default:
        return "[" + field();
    }
  };
  switch (rng() % 10) {
    case 0:
    case 1:
    case 2: {
      Strings c = {"MMAP.ADD", k};
      const size_t n = rng() % 6 == 0 ? 30 + rng() % 80 : 1 + rng() % 3;
      for (size_t i = 0; i < n; ++i) {
        c.push_back(field());
        c.push_back(value());
      }
      return c;
    }
    case 3:
      return {"MMAP.GET", k, field()};
    case 4:
      return {"MMAP.COUNT", k, field()};
    case 5:
      return {rng() % 2 ? "MMAP.LEN" : "MMAP.CARD", k};
    case 6:
      return {"MMAP.DEL", k, field()};
    case 7:
      return {"MMAP.DEL", k, field(), value()};
    case 8:
      return {"MMAP.RANGE", k, bound(), bound()};
    default:
      return {"MMAP.RANGE", k, bound(), bound(), "REV"};
  }
}

TEST_F(MultimapTest, RandomCommandsAgreeWithTheModel) {
  const uint64_t seed = SeedFromEnv("MULTIMAP_SEED", 20261204);
  std::mt19937_64 rng(seed);
  Model model;
  RunModelTest(
      "seed " + std::to_string(seed), 8000, 500, [&] { return RandomCommand(rng); },
      [&](const Strings& cmd) { return model.Apply(cmd); },
      [&](RespClient& c) {
        for (int k = 0; k < 2; ++k) {
          const std::string key = "k" + Str(k);
          ASSERT_EQ(c("MMAP.RANGE", key, "-", "+"), model.Apply({"MMAP.RANGE", key, "-", "+"}));
          ASSERT_EQ(c("EXISTS", key).integer, model.keys().contains(key) ? 1 : 0);
        }
      });
}

}  // namespace
}  // namespace vessel::test
