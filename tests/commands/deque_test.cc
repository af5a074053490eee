// The deque module (DEQ.*) against the in-process vessel server. Deques are not a Redis family,
// so the tables run on vessel only (RunVesselTable), in RESP2 and RESP3; every DEQ command with a
// Redis list twin (PUSHFRONT/LPUSH, POPBACK/RPOP, INDEX/LINDEX, SET/LSET, RANGE/LRANGE, LEN/LLEN,
// BPOPFRONT/BLPOP) is compared with it on redis-server over a grid of arguments, errors included.
// A randomized model test replays seeded command sequences against a std::deque per key.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
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

constexpr char kNoSuchKey[] = "ERR no such key";
constexpr char kOutOfRange[] = "ERR index out of range";

::testing::AssertionResult Same(const Reply& got, const Reply& want) {
  if (got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\n  vessel: " << got.ToString() << "\n  redis:  " << want.ToString() << "\n  ";
}

const std::vector<CommandInfo> kCommands = {
    {"deq.pushfront", -3, {"write", "denyoom", "fast"}, {"RW", "insert"}},
    {"deq.pushback", -3, {"write", "denyoom", "fast"}, {"RW", "insert"}},
    {"deq.popfront", -2, {"write", "fast"}, {"RW", "access", "delete"}},
    {"deq.popback", -2, {"write", "fast"}, {"RW", "access", "delete"}},
    {"deq.front", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"deq.back", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"deq.index", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"deq.set", 4, {"write", "denyoom", "fast"}, {"RW", "update"}},
    {"deq.range", 4, {"readonly"}, {"RO", "access"}},
    {"deq.len", 2, {"readonly", "fast"}, {"RO"}},
    {"deq.insert", 4, {"write", "denyoom"}, {"RW", "insert"}},
    {"deq.erase", -3, {"write"}, {"RW", "delete"}},
    {"deq.bpopfront", -3, {"write", "blocking", "noscript"}, {"RW", "access", "delete"}},
    {"deq.bpopback", -3, {"write", "blocking", "noscript"}, {"RW", "access", "delete"}},
};

class DequeTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- one command at a time ----

TEST_F(DequeTest, PushAndPop) {
  RunBothProtocols({
      {{"DEQ.PUSHBACK", "d", "a"}, Int(1)},
      {{"DEQ.PUSHBACK", "d", "b", "c"}, Int(3)},
      {{"DEQ.PUSHFRONT", "d", "x", "y"}, Int(5)},  // one after the other, as LPUSH
      {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"y", "x", "a", "b", "c"})},
      {{"TYPE", "d"}, Simple("deque")},
      {{"DEQ.POPFRONT", "d"}, Bulk("y")},
      {{"DEQ.POPBACK", "d"}, Bulk("c")},
      {{"DEQ.POPFRONT", "d", "2"}, BulkArr({"x", "a"})},
      {{"DEQ.POPBACK", "d", "0"}, Arr({})},
      {{"DEQ.POPBACK", "d", "-1"}, Error(kNotPositive)},
      {{"DEQ.POPBACK", "d", "x"}, Error(kNotPositive)},
      {{"DEQ.POPFRONT", "d", "1", "2"}, Arity("deq.popfront")},
      {{"DEQ.LEN", "d"}, Int(1)},
      {{"DEQ.POPBACK", "d", "9223372036854775807"}, BulkArr({"b"})},
      {{"EXISTS", "d"}, Int(0)},  // emptied: the key is gone
      {{"DEQ.POPFRONT", "d"}, Nil()},
      {{"DEQ.POPFRONT", "d", "1"}, NilArray()},
      {{"DEQ.POPBACK", "d", "0"}, NilArray()},
      {{"DEQ.POPBACK", "d", "-1"}, Error(kNotPositive)},  // arguments before the key
      {{"DEQ.PUSHFRONT", "n", "-7", "12345678901", "0", "007", "-0", ""}, Int(6)},
      {{"DEQ.RANGE", "n", "0", "-1"}, BulkArr({"", "-0", "007", "0", "12345678901", "-7"})},
      {{"DEQ.PUSHBACK", "big", std::string(300, 'x'), std::string(100, 'y')}, Int(2)},
      {{"DEQ.POPFRONT", "big", "5"}, BulkArr({std::string(300, 'x'), std::string(100, 'y')})},
      {{"DEQ.FRONT", "n"}, Bulk("")},
      {{"DEQ.BACK", "n"}, Bulk("-7")},
      {{"DEQ.FRONT", "nokey"}, Nil()},
      {{"DEQ.BACK", "nokey"}, Nil()},
      {{"DEQ.LEN", "nokey"}, Int(0)},
  });
}

TEST_F(DequeTest, IndexAndSet) {
  RunBothProtocols({
      {{"DEQ.PUSHBACK", "d", "a", "b", "c"}, Int(3)},
      {{"DEQ.INDEX", "d", "0"}, Bulk("a")},
      {{"DEQ.INDEX", "d", "-1"}, Bulk("c")},
      {{"DEQ.INDEX", "d", "3"}, Nil()},
      {{"DEQ.INDEX", "d", "-4"}, Nil()},
      {{"DEQ.INDEX", "d", "x"}, Error(kNotInt)},
      {{"DEQ.INDEX", "nokey", "x"}, Nil()},  // the key first, as LINDEX
      {{"DEQ.SET", "d", "1", "B"}, Ok()},
      {{"DEQ.SET", "d", "-1", std::string(1000, 'C')}, Ok()},
      {{"DEQ.SET", "d", "-1", "12"}, Ok()},
      {{"DEQ.SET", "d", "3", "x"}, Error(kOutOfRange)},
      {{"DEQ.SET", "d", "-4", "x"}, Error(kOutOfRange)},
      {{"DEQ.SET", "d", "x", "x"}, Error(kNotInt)},
      {{"DEQ.SET", "nokey", "0", "x"}, Error(kNoSuchKey)},
      {{"DEQ.SET", "nokey", "x", "x"}, Error(kNoSuchKey)},  // the key first, as LSET
      {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"a", "B", "12"})},
      {{"EXISTS", "nokey"}, Int(0)},
  });
}

TEST_F(DequeTest, InsertAndErase) {
  RunBothProtocols({
      {{"DEQ.INSERT", "d", "1", "x"}, Error(kOutOfRange)},
      {{"DEQ.INSERT", "d", "-1", "x"}, Error(kOutOfRange)},
      {{"EXISTS", "d"}, Int(0)},
      {{"DEQ.INSERT", "d", "0", "b"}, Int(1)},  // index == length: creates the key
      {{"DEQ.INSERT", "d", "1", "d"}, Int(2)},
      {{"DEQ.INSERT", "d", "0", "a"}, Int(3)},
      {{"DEQ.INSERT", "d", "-1", "c"}, Int(4)},  // before the last
      {{"DEQ.INSERT", "d", "4", "e"}, Int(5)},
      {{"DEQ.INSERT", "d", "6", "x"}, Error(kOutOfRange)},
      {{"DEQ.INSERT", "d", "x", "x"}, Error(kNotInt)},
      {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"a", "b", "c", "d", "e"})},
      {{"DEQ.ERASE", "d", "1"}, Int(1)},
      {{"DEQ.ERASE", "d", "-2", "10"}, Int(2)},
      {{"DEQ.ERASE", "d", "0", "0"}, Int(0)},
      {{"DEQ.ERASE", "d", "2"}, Error(kOutOfRange)},
      {{"DEQ.ERASE", "d", "-3"}, Error(kOutOfRange)},
      {{"DEQ.ERASE", "d", "0", "-1"}, Error(kNotPositive)},
      {{"DEQ.ERASE", "d", "x"}, Error(kNotInt)},
      {{"DEQ.ERASE", "d", "0", "1", "2"}, Arity("deq.erase")},
      {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"a", "c"})},
      {{"DEQ.ERASE", "d", "0", "2"}, Int(2)},
      {{"EXISTS", "d"}, Int(0)},
      {{"DEQ.ERASE", "d", "5"}, Int(0)},
      {{"DEQ.ERASE", "d", "x"}, Error(kNotInt)},
  });
}

// Inserting and erasing across many chunks keeps the order, from both sides of the middle.
TEST_F(DequeTest, InsertAndEraseAcrossChunks) {
  RespClient c = Servers::Get().Vessel();
  std::deque<std::string> model;
  for (int i = 0; i < 1000; ++i) {
    model.push_back("e" + Str(i));
    c("DEQ.PUSHBACK", "d", model.back());
  }
  std::mt19937_64 rng(7);
  for (int step = 0; step < 300; ++step) {
    const size_t pos = rng() % (model.size() + 1);
    if (step % 3 != 0) {
      const std::string v = step % 2 ? Str(step) : std::string(step % 300, 'v');
      ASSERT_EQ(c("DEQ.INSERT", "d", Str(static_cast<int64_t>(pos)), v).integer,
                static_cast<int64_t>(model.size() + 1));
      model.insert(model.begin() + static_cast<long>(pos), v);
    } else if (pos < model.size()) {
      const size_t n = std::min<size_t>(rng() % 150, model.size() - pos);
      ASSERT_EQ(
          c("DEQ.ERASE", "d", Str(static_cast<int64_t>(pos)), Str(static_cast<int64_t>(n))).integer,
          static_cast<int64_t>(n));
      model.erase(model.begin() + static_cast<long>(pos),
                  model.begin() + static_cast<long>(pos + n));
    }
  }
  EXPECT_EQ(Elements(c("DEQ.RANGE", "d", "0", "-1")), Strings(model.begin(), model.end()));
  for (size_t i = 0; i < model.size(); i += 37)
    EXPECT_EQ(c("DEQ.INDEX", "d", Str(static_cast<int64_t>(i))).str, model[i]);
}

// Strings up to half a page long (3,573 bytes) are kept in their page; DEQ.SET can grow a page to
// twice a page and then splits it.
TEST_F(DequeTest, LongElementsAndPagesGrownBySet) {
  RespClient c = Servers::Get().Vessel();
  std::deque<std::string> model;
  for (int i = 0; i < 650; ++i) model.push_back("small-" + Str(1000 + i));  // 11-byte entries
  const std::string longest(3573, 'L');
  model.push_back(std::string(3000, 'm'));
  model.push_back(std::string(3574, 'b'));  // past the inline limit: a block of its own
  model.push_back(std::string(256, 'c'));
  c.Cmd(Cat({"DEQ.PUSHBACK", "d"}, Strings(model.begin(), model.end())));
  // The first page holds the small ones; sets of long elements grow it towards twice a page, then
  // split it; others replace inline elements by blocks and back.
  const std::vector<std::pair<int, std::string>> sets = {
      {649, longest}, {0, std::string(100, 'f')},    {1, longest}, {2, longest}, {651, "short"},
      {650, longest}, {652, std::string(9000, 'x')}, {3, longest}};
  for (const auto& [index, value] : sets) {
    ASSERT_EQ(c("DEQ.SET", "d", Str(index), value).str, "OK") << index;
    model[static_cast<size_t>(index)] = value;
    ASSERT_EQ(Elements(c("DEQ.RANGE", "d", "0", "-1")), Strings(model.begin(), model.end()))
        << index;
  }
  for (size_t i = 0; i < model.size(); i += 7)
    EXPECT_EQ(c("DEQ.INDEX", "d", Str(static_cast<int64_t>(i))).str, model[i]);
  c("DEQ.INSERT", "d", "1", longest);
  model.insert(model.begin() + 1, longest);
  c("DEQ.ERASE", "d", "640", "5");
  model.erase(model.begin() + 640, model.begin() + 645);
  EXPECT_EQ(Elements(c("DEQ.RANGE", "d", "0", "-1")), Strings(model.begin(), model.end()));
  while (!model.empty()) {
    ASSERT_EQ(c("DEQ.POPBACK", "d").str, model.back());
    model.pop_back();
    if (model.empty()) break;
    ASSERT_EQ(c("DEQ.POPFRONT", "d").str, model.front());
    model.pop_front();
  }
  EXPECT_EQ(c("EXISTS", "d").integer, 0);
}

TEST_F(DequeTest, WrongTypeBothWays) {
  std::vector<Row> rows = {
      {{"SET", "str", "v"}, Ok()},
      {{"RPUSH", "list", "a"}, Int(1)},
      {{"DEQ.PUSHBACK", "d", "a", "b"}, Int(2)},
  };
  for (const std::string k : {"str", "list"}) {
    const std::vector<Row> each = {
        {{"DEQ.PUSHFRONT", k, "x"}, WrongType()},
        {{"DEQ.PUSHBACK", k, "x"}, WrongType()},
        {{"DEQ.POPFRONT", k}, WrongType()},
        {{"DEQ.POPBACK", k, "1"}, WrongType()},
        {{"DEQ.FRONT", k}, WrongType()},
        {{"DEQ.BACK", k}, WrongType()},
        {{"DEQ.INDEX", k, "0"}, WrongType()},
        {{"DEQ.SET", k, "0", "x"}, WrongType()},
        {{"DEQ.RANGE", k, "0", "-1"}, WrongType()},
        {{"DEQ.LEN", k}, WrongType()},
        {{"DEQ.INSERT", k, "0", "x"}, WrongType()},
        {{"DEQ.ERASE", k, "0"}, WrongType()},
        {{"DEQ.BPOPFRONT", k, "0"}, WrongType()},
        {{"DEQ.BPOPBACK", "nokey", k, "0"}, WrongType()},
        {{"DEQ.INSERT", k, "x", "x"}, Error(kNotInt)},  // arguments first
    };
    rows.insert(rows.end(), each.begin(), each.end());
  }
  const std::vector<Row> tail = {
      {{"LPUSH", "d", "x"}, WrongType()}, {{"LRANGE", "d", "0", "-1"}, WrongType()},
      {{"GET", "d"}, WrongType()},        {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"a", "b"})},
      {{"SET", "d", "s"}, Ok()},  // SET replaces any type
      {{"TYPE", "d"}, Simple("string")},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  RunBothProtocols(rows);
}

TEST_F(DequeTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"DEQ.PUSHFRONT", "k"},
                                                 {"DEQ.PUSHBACK", "k"},
                                                 {"DEQ.POPFRONT"},
                                                 {"DEQ.POPBACK"},
                                                 {"DEQ.POPBACK", "k", "1", "2"},
                                                 {"DEQ.FRONT"},
                                                 {"DEQ.BACK", "k", "x"},
                                                 {"DEQ.INDEX", "k"},
                                                 {"DEQ.SET", "k", "0"},
                                                 {"DEQ.RANGE", "k", "0"},
                                                 {"DEQ.LEN"},
                                                 {"DEQ.INSERT", "k", "0"},
                                                 {"DEQ.INSERT", "k", "0", "a", "b"},
                                                 {"DEQ.ERASE", "k"},
                                                 {"DEQ.BPOPFRONT", "k"},
                                                 {"DEQ.BPOPBACK"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Arity(lower)});
  }
  RunBothProtocols(rows);
}

// ---- against Redis's list twins ----

// Runs each DEQ command on vessel and its list twin on redis-server (same arguments); replies
// must be the same, error texts included (with the command's name in place of the twin's).
void CompareWithLists(const std::vector<std::pair<Strings, Strings>>& pairs) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (const auto& [deq, list] : pairs) {
    Reply want = r.Cmd(list);
    std::string lower_list = list[0], lower_deq = deq[0];
    std::transform(lower_list.begin(), lower_list.end(), lower_list.begin(), ::tolower);
    std::transform(lower_deq.begin(), lower_deq.end(), lower_deq.begin(), ::tolower);
    const std::string named = "'" + lower_list + "'";
    if (want.is_error() && want.str.find(named) != std::string::npos)
      want.str.replace(want.str.find(named), named.size(), "'" + lower_deq + "'");
    EXPECT_TRUE(Same(v.Cmd(deq), want)) << Show(deq) << " / " << Show(list);
  }
}

TEST_F(DequeTest, AgreesWithRedisLists) {
  const Strings content = {"a", "12", "-3", std::string(70, 'x'), "", "b", "c"};
  std::vector<std::pair<Strings, Strings>> pairs = {
      {Cat({"DEQ.PUSHBACK", "k"}, content), Cat({"RPUSH", "k"}, content)},
      {{"DEQ.PUSHFRONT", "k", "f1", "f2"}, {"LPUSH", "k", "f1", "f2"}},
      {{"DEQ.LEN", "k"}, {"LLEN", "k"}},
      {{"DEQ.LEN", "nokey"}, {"LLEN", "nokey"}},
  };
  Strings args = {"-9223372036854775808", "9223372036854775807", "x", "1.5", "", "+1", "01"};
  for (int i = -12; i <= 12; ++i) args.push_back(Str(i));
  for (const std::string& a : args) {
    pairs.push_back({{"DEQ.INDEX", "k", a}, {"LINDEX", "k", a}});
    pairs.push_back({{"DEQ.SET", "k", a, "s" + a}, {"LSET", "k", a, "s" + a}});
    pairs.push_back({{"DEQ.SET", "nokey", a, "s"}, {"LSET", "nokey", a, "s"}});
    for (const std::string& b : args)
      pairs.push_back({{"DEQ.RANGE", "k", a, b}, {"LRANGE", "k", a, b}});
  }
  pairs.push_back({{"DEQ.RANGE", "nokey", "0", "-1"}, {"LRANGE", "nokey", "0", "-1"}});
  for (const char* n : {"0", "1", "2", "-1", "x", "1.5"}) {
    pairs.push_back({{"DEQ.POPFRONT", "k", n}, {"LPOP", "k", n}});
    pairs.push_back({{"DEQ.POPBACK", "k", n}, {"RPOP", "k", n}});
    pairs.push_back({{"DEQ.POPBACK", "nokey", n}, {"RPOP", "nokey", n}});
  }
  pairs.push_back({{"DEQ.POPFRONT", "k"}, {"LPOP", "k"}});
  pairs.push_back({{"DEQ.POPBACK", "k"}, {"RPOP", "k"}});
  pairs.push_back({{"DEQ.POPFRONT", "k", "1", "2"}, {"LPOP", "k", "1", "2"}});
  pairs.push_back({{"DEQ.POPBACK", "k", "100"}, {"RPOP", "k", "100"}});
  pairs.push_back({{"EXISTS", "k"}, {"EXISTS", "k"}});
  pairs.push_back({{"DEQ.POPFRONT", "k"}, {"LPOP", "k"}});
  pairs.push_back({{"DEQ.POPFRONT", "k", "3"}, {"LPOP", "k", "3"}});
  // Blocking pops: timeouts and their errors; data present is served at once.
  pairs.push_back({{"DEQ.PUSHBACK", "q", "v1", "v2"}, {"RPUSH", "q", "v1", "v2"}});
  for (const char* t : {"x", "-1", "-0.001", "inf", "nan", "1e400", "0"}) {
    pairs.push_back({{"DEQ.BPOPFRONT", "nokey", "q", t}, {"BLPOP", "nokey", "q", t}});
  }
  pairs.push_back({{"DEQ.BPOPBACK", "nokey", "0.01"}, {"BRPOP", "nokey", "0.01"}});
  CompareWithLists(pairs);
}

// ---- COMMAND, ACL ----

TEST_F(DequeTest, CommandInfoDocsAndAcl) {
  ExpectCommandTable("deque", "deque", kCommands);
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(Elements(c("COMMAND", "GETKEYS", "DEQ.BPOPFRONT", "a", "b", "0")), (Strings{"a", "b"}));
  RunVesselTable({
      {{"ACL", "SETUSER", "dq", "on", "nopass", "~*", "+@all", "-@deque"}, Ok()},
      {{"ACL", "DRYRUN", "dq", "DEQ.LEN", "k"}, Any()},
      {{"ACL", "DRYRUN", "dq", "LLEN", "k"}, Ok()},
      {{"ACL", "DELUSER", "dq"}, Int(1)},
  });
  EXPECT_NE(c("ACL", "DRYRUN", "default", "DEQ.LEN", "k").type, Reply::Type::kError);
}

// ---- the host's side of the type ----

TEST_F(DequeTest, ExpiresAsAnyKey) {
  RespClient c = Servers::Get().Vessel();
  ExpectExpires(c, {"DEQ.PUSHBACK", "ttl", "a", "b"});
}

TEST_F(DequeTest, KeyspaceCommandsOnDeques) {
  const std::string longer(300, 'L');
  RunBothProtocols({
      {{"DEQ.PUSHBACK", "d", "a", longer, "c"}, Int(3)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("chunkring")},
      {{"MEMORY", "USAGE", "d"}, IntRange(300, 1200)},
      {{"COPY", "d", "d2"}, Int(1)},
      {{"DEQ.POPBACK", "d"}, Bulk("c")},
      {{"DEQ.SET", "d2", "1", "changed"}, Ok()},  // the copy is deep
      {{"DEQ.RANGE", "d", "0", "-1"}, BulkArr({"a", longer})},
      {{"DEQ.RANGE", "d2", "0", "-1"}, BulkArr({"a", "changed", "c"})},
      {{"RENAME", "d2", "d3"}, Ok()},
      {{"EXPIRE", "d3", "100"}, Int(1)},
      {{"DEQ.PUSHFRONT", "d3", "z"}, Int(4)},
      {{"TTL", "d3"}, Int(100)},  // changing a deque keeps its TTL
      {{"MOVE", "d3", "1"}, Int(1)},
      {{"EXISTS", "d3"}, Int(0)},
      {{"SELECT", "1"}, Ok()},
      {{"DEQ.RANGE", "d3", "0", "-1"}, BulkArr({"z", "a", "changed", "c"})},
      {{"DEQ.POPFRONT", "d3", "10"}, BulkArr({"z", "a", "changed", "c"})},
      {{"EXISTS", "d3"}, Int(0)},
      {{"SELECT", "0"}, Ok()},
      {{"DEL", "d"}, Int(1)},
      {{"DBSIZE"}, Int(0)},
  });
}

TEST_F(DequeTest, TransactionsAndScripts) {
  RunBothProtocols({
      {{"MULTI"}, Ok()},
      {{"DEQ.PUSHBACK", "d", "a", "b"}, Queued()},
      {{"DEQ.SET", "d", "5", "x"}, Queued()},
      {{"DEQ.INDEX", "d", "1"}, Queued()},
      {{"DEQ.BPOPFRONT", "nokey", "0"}, Queued()},  // inside MULTI: no waiting, a null array
      {{"DEQ.BPOPBACK", "d", "0"}, Queued()},
      {{"EXEC"},
       Arr({Int(2), Error(kOutOfRange), Bulk("b"), NilArray(), Arr({Bulk("d"), Bulk("b")})})},
      {{"EVAL",
        "redis.call('DEQ.PUSHFRONT', KEYS[1], 'x'); return redis.call('DEQ.RANGE', "
        "KEYS[1], 0, -1)",
        "1", "d"},
       BulkArr({"x", "a"})},
      {{"EVAL", "return redis.call('DEQ.POPBACK', KEYS[1], 5)", "1", "d"}, BulkArr({"a", "x"})},
      {{"EXISTS", "d"}, Int(0)},
      {{"EVAL", "return redis.pcall('DEQ.BPOPFRONT', KEYS[1], 0)", "1", "d"}, Err("*script*")},
  });
}

// INFO's count of blocked clients.
int64_t Blocked(RespClient& c) {
  const std::string info = c("INFO", "clients").str;
  const size_t at = info.find("blocked_clients:");
  return at == std::string::npos ? -1 : std::atoll(info.c_str() + at + 16);
}

TEST_F(DequeTest, BlockingPopsWaitForPushes) {
  RespClient waiter = Servers::Get().Vessel(), pusher = Servers::Get().Vessel();
  waiter.Send({"DEQ.BPOPFRONT", "q1", "q2", "0"});
  // The client is parked: poll CLIENT LIST until it shows as blocked.
  ASSERT_TRUE(WaitFor([&] { return Blocked(pusher) == 1; }));
  EXPECT_EQ(pusher("DEQ.PUSHBACK", "q2", "a", "b").integer, 2);
  EXPECT_EQ(waiter.Read(),
            (Reply{Reply::Type::kArray,
                   "",
                   0,
                   {Reply{Reply::Type::kBulk, "q2"}, Reply{Reply::Type::kBulk, "a"}}}));
  EXPECT_EQ(Elements(pusher("DEQ.RANGE", "q2", "0", "-1")), Strings{"b"});
  // BPOPBACK served by an insertion too.
  waiter.Send({"DEQ.BPOPBACK", "q3", "0"});
  ASSERT_TRUE(WaitFor([&] { return Blocked(pusher) == 1; }));
  EXPECT_EQ(pusher("DEQ.INSERT", "q3", "0", "z").integer, 1);
  EXPECT_EQ(Elements(waiter.Read()), (Strings{"q3", "z"}));
  EXPECT_EQ(pusher("EXISTS", "q3").integer, 0);
  // A timeout gives the null array.
  EXPECT_EQ(waiter("DEQ.BPOPFRONT", "q4", "0.05").type, Reply::Type::kNilArray);
}

// Waiters parked on both workers are served in the order they parked, as BLPOP's are: one push
// of many elements gives the first waiter the first element, and so on.
TEST_F(DequeTest, WaitersAreServedInArrivalOrderAcrossWorkers) {
  constexpr int kWaiters = 8;
  RespClient pusher = Servers::Get().Vessel();
  std::vector<RespClient> waiters;
  std::set<int64_t> ids;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(Servers::Get().Vessel());
    ids.insert(waiters.back()("CLIENT", "ID").integer);
    waiters.back().Send({i % 2 ? "DEQ.BPOPBACK" : "DEQ.BPOPFRONT", "other", "q", "0"});
    ASSERT_TRUE(WaitFor([&] { return Blocked(pusher) == i + 1; }));
  }
  std::set<int> workers;
  Servers::Get().vessel().engine().ForEachSession([&](engine::Session* s) {
    if (ids.contains(static_cast<int64_t>(s->id()))) workers.insert(s->worker());
  });
  EXPECT_EQ(workers.size(), 2u) << "every waiter landed on one worker";
  Strings push = {"DEQ.PUSHBACK", "q"};
  for (int i = 0; i < kWaiters; ++i) push.push_back("e" + Str(i));
  EXPECT_EQ(pusher.Cmd(push).integer, kWaiters);
  // Waiter i pops from the front (even i) or the back (odd i) of what the ones before it left.
  int front = 0, back = kWaiters - 1;
  for (int i = 0; i < kWaiters; ++i) {
    const std::string want = "e" + Str(i % 2 ? back-- : front++);
    EXPECT_EQ(Elements(waiters[static_cast<size_t>(i)].Read()), (Strings{"q", want})) << i;
  }
  EXPECT_EQ(pusher("EXISTS", "q").integer, 0);
}

// The events of every command, class d (and g for del).
TEST_F(DequeTest, KeyspaceEvents) {
  const Strings got = KeyeventsOf({{"DEQ.PUSHBACK", "d", "a", "b", "c"},
                                   {"DEQ.PUSHFRONT", "d", "z"},
                                   {"DEQ.POPFRONT", "d"},
                                   {"DEQ.POPBACK", "d", "0"},
                                   {"DEQ.SET", "d", "0", "x"},
                                   {"DEQ.SET", "d", "9", "x"},
                                   {"DEQ.INSERT", "d", "1", "m"},
                                   {"DEQ.ERASE", "d", "0"},
                                   {"DEQ.ERASE", "d", "1", "0"},
                                   {"DEQ.LEN", "d"},
                                   {"DEQ.BPOPBACK", "d", "0"},
                                   {"DEQ.POPBACK", "d", "5"},
                                   {"DEQ.INSERT", "e", "0", "a"}});
  EXPECT_EQ(got, (Strings{"new d", "deq.pushback d", "deq.pushfront d", "deq.popfront d",
                          "deq.set d", "deq.insert d", "deq.erase d", "deq.popback d",
                          "deq.popback d", "del d", "new e", "deq.insert e"}));
}

// ---- memory ----

// MEMORY USAGE is exact: beyond the module's allocations for the value it reports the host's
// entry, the same for keys of equal length; deleting gives every byte back.
TEST_F(DequeTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "deque");
  const std::vector<Strings> contents = {{"a"},
                                         Seq("", 0, 100),
                                         Seq("a long element number ", 0, 1000),
                                         {std::string(3000, 'y'), "", std::string(16, 'z')},
                                         Cat(Seq("", 0, 5000), Seq("another element ", 0, 5000))};
  std::vector<Strings> creates;
  for (size_t i = 0; i < contents.size(); ++i)
    creates.push_back(Cat({"DEQ.PUSHBACK", "key" + Str(static_cast<int64_t>(i))}, contents[i]));
  const std::vector<int64_t> overheads = ExpectMemoryUsageMatches(c, "deque", creates);
  // Every kind of change keeps the count exact.
  c("DEQ.SET", "key4", "0", std::string(500, 'q'));
  c("DEQ.SET", "key4", "0", "inline");
  c("DEQ.ERASE", "key4", "10", "1000");
  c("DEQ.INSERT", "key4", "5", std::string(700, 'w'));
  c("DEQ.INSERT", "key4", "-5", "x");
  c("DEQ.POPFRONT", "key4", "70");
  c("DEQ.POPBACK", "key4", "70");
  c("DEQ.PUSHFRONT", "key4", std::string(270, 'f'), "1");
  for (const std::string key : {"key2", "key3", "key4"}) {
    const int64_t before = ModuleAllocated(c, "deque");
    const int64_t value_bytes = c("MEMORY", "USAGE", key).integer - overheads[0];
    EXPECT_EQ(c("DEL", key).integer, 1);
    auto freed = [&] { return before - ModuleAllocated(c, "deque"); };
    for (int i = 0; i < 200 && std::abs(freed() - value_bytes) > kEntryJitter; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a lazy free finishes
    EXPECT_NEAR(freed(), value_bytes, kEntryJitter) << key;
  }
  ExpectFlushFreesAll(c, "deque", base);
}

// An element costs no more than in a Redis list (MEMORY USAGE ... SAMPLES 0 on redis-server
// counts every quicklist node and listpack): small integers, short strings, and strings of 100
// to 5,000 bytes (a page keeps those up to half a page inline, as a listpack keeps them up to its
// node size).
TEST_F(DequeTest, MemoryPerElementAtMostARedisList) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const std::vector<std::pair<std::string, Strings>> cases = {
      {"14-byte strings", Seq("element-", 100000, 110000)},
      {"three-digit numbers", Seq("", 100, 1000)},
      {"40-byte strings", Seq(std::string(34, 's'), 100000, 110000)},
      {"100-byte strings", Seq(std::string(94, 's'), 100000, 110000)},
      {"300-byte strings", Seq(std::string(294, 's'), 100000, 110000)},
      {"1,000-byte strings", Seq(std::string(994, 's'), 100000, 110000)},
      {"5,000-byte strings", Seq(std::string(4994, 's'), 100000, 102000)},
  };
  for (const auto& [what, elems] : cases) {
    for (size_t i = 0; i < elems.size(); i += 500) {
      const auto first = elems.begin() + static_cast<long>(i);
      const Strings part(first, first + static_cast<long>(std::min<size_t>(500, elems.size() - i)));
      v.Cmd(Cat({"DEQ.PUSHBACK", "d"}, part));
      r.Cmd(Cat({"RPUSH", "d"}, part));
    }
    const int64_t deque = v("MEMORY", "USAGE", "d", "SAMPLES", "0").integer;
    const int64_t list = r("MEMORY", "USAGE", "d", "SAMPLES", "0").integer;
    EXPECT_LE(deque, list) << what << ": deque " << deque << " list " << list;
    std::printf("[ memory   ] %s: deque %.2f B/element, Redis list %.2f\n", what.c_str(),
                static_cast<double>(deque) / static_cast<double>(elems.size()),
                static_cast<double>(list) / static_cast<double>(elems.size()));
    v("DEL", "d");
    r("DEL", "d");
  }
}

// ---- serialization and persistence ----

std::string Encoded(const Strings& elems) {
  std::string s = U64(elems.size());
  for (const auto& e : elems) s += U64(e.size()) + e;
  return s;
}

TEST_F(DequeTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("deque");
  ASSERT_TRUE(type.found());
  const std::vector<Strings> good = {
      {""},
      {"a", "\0b"s, "-1", "0", "127", "128", "-4096", "4096", "-9223372036854775808",
       std::string(63, 'c'), std::string(64, 'd'), std::string(255, 'e'), std::string(256, 'f')},
      Seq("element ", 0, 20000)};
  for (const Strings& elems : good) ExpectRoundTrip(type, Encoded(elems), "chunkring");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no elements", Encoded({})},
      {"truncated", Encoded({"a", "bc"}).substr(0, 26)},
      {"count beyond the input", U64(1000000) + U64(1) + "a"},
      {"length beyond the input", U64(1) + U64(100) + "abc"},
  };
  ExpectRefused(type, bad);
  void* v = type.Load(Encoded({"a"}), 2);
  EXPECT_EQ(v, nullptr) << "an unknown encoding version";
  if (v != nullptr) type.Free(v);
}

TEST_F(DequeTest, DumpAndRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  const Strings elems = {"a", "", "\0\r\n"s, std::string(300, 'x'), "-42"};
  c.Cmd(Cat({"DEQ.PUSHBACK", "d"}, elems));
  const Reply dump = c("DUMP", "d");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  EXPECT_EQ(c("RESTORE", "d2", "0", dump.str).str, "OK");
  EXPECT_EQ(c("TYPE", "d2").str, "deque");
  EXPECT_EQ(Elements(c("DEQ.RANGE", "d2", "0", "-1")), elems);
  EXPECT_EQ(c("RESTORE", "d2", "0", dump.str).type, Reply::Type::kError);  // BUSYKEY
  EXPECT_EQ(c("RESTORE", "d2", "0", dump.str, "REPLACE").str, "OK");
}

// ---- the model-based test ----

Reply R(Reply::Type t, std::string s = "", int64_t i = 0) { return Reply{t, std::move(s), i, {}}; }
Reply RInt(int64_t v) { return R(Reply::Type::kInt, "", v); }
Reply RBulk(const std::string& s) { return R(Reply::Type::kBulk, s); }
Reply RArr(std::vector<Reply> elems) { return Reply{Reply::Type::kArray, "", 0, std::move(elems)}; }
Reply RErr(const std::string& s) { return R(Reply::Type::kError, s); }

// A std::deque per key and the module's rules, written independently: Apply returns the reply
// vessel must send and changes the model.
class Model {
 public:
  Reply Apply(const Strings& cmd) {
    const std::string& op = cmd[0];
    const std::string& k = cmd[1];
    auto it = keys_.find(k);
    std::deque<std::string>* d = it == keys_.end() ? nullptr : &it->second;
    auto drop_if_empty = [&] {
      if (d != nullptr && d->empty()) keys_.erase(k);
    };
    if (op == "DEQ.PUSHFRONT" || op == "DEQ.PUSHBACK") {
      auto& q = keys_[k];
      for (size_t i = 2; i < cmd.size(); ++i)
        op == "DEQ.PUSHFRONT" ? q.push_front(cmd[i]) : q.push_back(cmd[i]);
      return RInt(static_cast<int64_t>(q.size()));
    }
    if (op == "DEQ.POPFRONT" || op == "DEQ.POPBACK") {
      const bool front = op == "DEQ.POPFRONT";
      if (cmd.size() == 2) {
        if (d == nullptr) return R(Reply::Type::kNil);
        Reply r = RBulk(front ? d->front() : d->back());
        front ? d->pop_front() : d->pop_back();
        drop_if_empty();
        return r;
      }
      const int64_t n = std::stoll(cmd[2]);
      if (d == nullptr) return R(Reply::Type::kNilArray);
      std::vector<Reply> out;
      for (int64_t i = 0; i < n && !d->empty(); ++i) {
        out.push_back(RBulk(front ? d->front() : d->back()));
        front ? d->pop_front() : d->pop_back();
      }
      drop_if_empty();
      return RArr(out);
    }
    const int64_t len = d == nullptr ? 0 : static_cast<int64_t>(d->size());
    auto pos = [&](int64_t i) { return i < 0 ? i + len : i; };
    if (op == "DEQ.LEN") return RInt(len);
    if (op == "DEQ.FRONT" || op == "DEQ.BACK") {
      if (d == nullptr) return R(Reply::Type::kNil);
      return RBulk(op == "DEQ.FRONT" ? d->front() : d->back());
    }
    if (op == "DEQ.INDEX") {
      const int64_t p = pos(std::stoll(cmd[2]));
      if (d == nullptr || p < 0 || p >= len) return R(Reply::Type::kNil);
      return RBulk((*d)[static_cast<size_t>(p)]);
    }
    if (op == "DEQ.SET") {
      if (d == nullptr) return RErr(kNoSuchKey);
      const int64_t p = pos(std::stoll(cmd[2]));
      if (p < 0 || p >= len) return RErr(kOutOfRange);
      (*d)[static_cast<size_t>(p)] = cmd[3];
      return R(Reply::Type::kStatus, "OK");
    }
    if (op == "DEQ.RANGE") {
      int64_t a = pos(std::stoll(cmd[2])), b = pos(std::stoll(cmd[3]));
      std::vector<Reply> out;
      for (int64_t i = std::max<int64_t>(a, 0); i <= std::min(b, len - 1); ++i)
        out.push_back(RBulk((*d)[static_cast<size_t>(i)]));
      return RArr(out);
    }
    if (op == "DEQ.INSERT") {
      const int64_t p = pos(std::stoll(cmd[2]));
      if (p < 0 || p > len) return RErr(kOutOfRange);
      auto& q = keys_[k];
      q.insert(q.begin() + p, cmd[3]);
      return RInt(len + 1);
    }
    if (op == "DEQ.ERASE") {
      if (d == nullptr) return RInt(0);
      const int64_t p = pos(std::stoll(cmd[2]));
      if (p < 0 || p >= len) return RErr(kOutOfRange);
      const int64_t n = std::min<int64_t>(cmd.size() > 3 ? std::stoll(cmd[3]) : 1, len - p);
      d->erase(d->begin() + p, d->begin() + p + n);
      drop_if_empty();
      return RInt(n);
    }
    return RErr("unknown " + op);
  }
  const std::map<std::string, std::deque<std::string>>& keys() const { return keys_; }

 private:
  std::map<std::string, std::deque<std::string>> keys_;
};

std::string RandomElement(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return Str(static_cast<int64_t>(rng() % 300) - 150);
    case 1:
      return Str(static_cast<int64_t>(rng()));
    case 2:
      return "";
    case 3:  // 64 to 313 bytes, or now and then 256 to 8,255 (inline in a page, or a block)
      return std::string(rng() % 8 == 0 ? 256 + rng() % 8000 : 64 + rng() % 250,
                         static_cast<char>('a' + rng() % 26));
    case 4:
      return "0" + Str(static_cast<int64_t>(rng() % 10));
    default:
      return "e" + Str(static_cast<int64_t>(rng() % 1000));
  }
}

Strings RandomCommand(std::mt19937_64& rng, const Model& m) {
  const std::string k = "k" + Str(static_cast<int64_t>(rng() % 3));
  const auto it = m.keys().find(k);
  const int64_t len = it == m.keys().end() ? 0 : static_cast<int64_t>(it->second.size());
  auto index = [&] { return Str(static_cast<int64_t>(rng() % (2 * len + 3)) - len - 1); };
  switch (rng() % 14) {
    case 0:
    case 1: {
      Strings c = {rng() % 2 ? "DEQ.PUSHFRONT" : "DEQ.PUSHBACK", k};
      const size_t n = rng() % 10 == 0 ? 70 + rng() % 100 : 1 + rng() % 3;
      for (size_t i = 0; i < n; ++i) c.push_back(RandomElement(rng));
      return c;
    }
    case 2:
      return {rng() % 2 ? "DEQ.POPFRONT" : "DEQ.POPBACK", k};
    case 3:
      return {rng() % 2 ? "DEQ.POPFRONT" : "DEQ.POPBACK", k, Str(static_cast<int64_t>(rng() % 5))};
    case 4:
      return {"DEQ.LEN", k};
    case 5:
      return {rng() % 2 ? "DEQ.FRONT" : "DEQ.BACK", k};
    case 6:
      return {"DEQ.INDEX", k, index()};
    case 7:
      return {"DEQ.SET", k, index(), RandomElement(rng)};
    case 8:
      return {"DEQ.RANGE", k, index(), index()};
    case 9:
    case 10:
      return {"DEQ.INSERT", k, index(), RandomElement(rng)};
    case 11:
      return {"DEQ.ERASE", k, index()};
    case 12:
      return {"DEQ.ERASE", k, index(), Str(static_cast<int64_t>(rng() % 90))};
    default:
      return {"DEQ.PUSHBACK", k, RandomElement(rng), RandomElement(rng)};
  }
}

TEST_F(DequeTest, RandomCommandsAgreeWithTheModel) {
  const uint64_t seed = SeedFromEnv("DEQUE_SEED", 20261201);
  std::mt19937_64 rng(seed);
  Model model;
  RunModelTest(
      "seed " + std::to_string(seed), 6000, 200, [&] { return RandomCommand(rng, model); },
      [&](const Strings& cmd) { return model.Apply(cmd); },
      [&](RespClient& c) {
        for (int k = 0; k < 3; ++k) {
          const std::string key = "k" + Str(k);
          const auto it = model.keys().find(key);
          const Strings content =
              it == model.keys().end() ? Strings{} : Strings(it->second.begin(), it->second.end());
          ASSERT_EQ(Elements(c("DEQ.RANGE", key, "0", "-1")), content);
          ASSERT_EQ(c("EXISTS", key).integer, it == model.keys().end() ? 0 : 1);
        }
      });
}

}  // namespace
}  // namespace vessel::test
