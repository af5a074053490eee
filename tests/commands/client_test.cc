// CLIENT PAUSE / UNPAUSE, CLIENT REPLY, and the DEBUG subcommands clients use, against vessel and
// redis-server: the same steps on both, the same replies (time-dependent steps are checked by
// property on both).
#include <chrono>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/scene.h"

namespace vessel::test {
namespace {

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// Runs fn on both servers (vessel first); what it logs must be identical.
void SameOnBoth(const std::function<void(bool vessel, std::vector<Reply>&)>& fn) {
  std::vector<Reply> got[2];
  for (int i = 0; i < 2; ++i) {
    Servers::Get().Reset();
    SCOPED_TRACE(i == 0 ? "on vessel" : "on redis-server");
    fn(i == 0, got[i]);
  }
  ASSERT_EQ(got[0].size(), got[1].size());
  for (size_t i = 0; i < got[0].size(); ++i)
    EXPECT_EQ(got[0][i], got[1][i]) << "step " << i << "\n  vessel: " << got[0][i].ToString()
                                    << "\n  redis:  " << got[1][i].ToString();
}

RespClient Connect(bool vessel) {
  return vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
}

// Every reply a pipelined batch produced, read until nothing more comes.
std::vector<Reply> Drain(RespClient& c, int quiet_ms = 200) {
  std::vector<Reply> out;
  c.SetTimeout(quiet_ms);
  for (Reply r = c.Read(); r.type != Reply::Type::kClosed; r = c.Read()) out.push_back(r);
  c.SetTimeout(10000);
  return out;
}

// Polls cond for up to 10 s.
bool WaitFor(const std::function<bool()>& cond) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST_F(ClientTest, ReplyOffOnSkip) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient c = Connect(vessel);
    std::string batch;
    for (const auto& cmd : std::vector<std::vector<std::string>>{
             {"CLIENT", "REPLY", "OFF"},
             {"SET", "a", "1"},
             {"INCR", "a"},
             {"CLIENT", "REPLY", "SKIP"},  // ignored while replies are off
             {"CLIENT", "REPLY", "ON"},
             {"GET", "a"},
             {"CLIENT", "REPLY", "SKIP"},
             {"INCR", "a"},
             {"GET", "a"},
             {"CLIENT", "REPLY", "SKIP"},
             {"CLIENT", "REPLY", "SKIP"},
             {"GET", "a"},
             {"CLIENT", "REPLY", "MAYBE"},
             {"PING"}}) {
      batch += RespClient::Encode(cmd);
    }
    c.SendRaw(batch);
    for (Reply& r : Drain(c)) log.push_back(std::move(r));
  });
}

// CLIENT REPLY SKIP then ON: ON ends the skip in force and answers, as Redis's clears
// CLIENT_REPLY_SKIP; RESET turns replies back on (a skip in force still drops its own reply).
TEST_F(ClientTest, ReplySkipThenOnAndReset) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient c = Connect(vessel);
    std::string batch;
    for (const auto& cmd : std::vector<std::vector<std::string>>{{"CLIENT", "REPLY", "SKIP"},
                                                                 {"CLIENT", "REPLY", "ON"},
                                                                 {"PING", "after on"},
                                                                 {"CLIENT", "REPLY", "SKIP"},
                                                                 {"CLIENT", "REPLY", "OFF"},
                                                                 {"PING", "off"},
                                                                 {"CLIENT", "REPLY", "ON"},
                                                                 {"PING", "on again"},
                                                                 {"CLIENT", "REPLY", "OFF"},
                                                                 {"RESET"},
                                                                 {"PING", "after reset"},
                                                                 {"CLIENT", "REPLY", "SKIP"},
                                                                 {"RESET"},
                                                                 {"PING", "last"}}) {
      batch += RespClient::Encode(cmd);
    }
    c.SendRaw(batch);
    for (Reply& r : Drain(c)) log.push_back(std::move(r));
  });
}

// CLIENT INFO / CLIENT LIST print Redis 7.0's fields in Redis's order (no lib-name or lib-ver:
// those are 7.2's), and the figures that do not depend on allocation sizes or times as Redis
// computes them: qbuf is the query buffer (the running command, or the whole pipelined batch;
// nothing once it ran), argv-mem the running command's arguments, multi-mem the queued
// commands, obl the replies not yet written.
TEST_F(ClientTest, ClientInfoFieldsAsRedis) {
  // "k=v k=v ..." of the first line: the names in order, and the values kept for comparison.
  auto fields = [](const Reply& r, std::vector<Reply>* log) {
    const std::string line = r.str.substr(0, r.str.find('\n'));
    Reply names{Reply::Type::kArray}, values{Reply::Type::kArray};
    size_t at = 0;
    while (at < line.size()) {
      size_t end = line.find(' ', at);
      if (end == std::string::npos) end = line.size();
      const std::string kv = line.substr(at, end - at);
      const size_t eq = kv.find('=');
      const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
      names.elems.push_back(Reply{Reply::Type::kBulk, k});
      static const std::set<std::string> kVaries = {"id",   "addr",      "laddr", "fd",  "age",
                                                    "idle", "qbuf-free", "rbs",   "rbp", "tot-mem"};
      if (!kVaries.contains(k)) values.elems.push_back(Reply{Reply::Type::kBulk, kv});
      at = end + 1;
    }
    log->push_back(names);
    log->push_back(values);
  };
  SameOnBoth([&](bool vessel, std::vector<Reply>& log) {
    RespClient c = Connect(vessel), other = Connect(vessel);
    fields(c("CLIENT", "INFO"), &log);
    c.SendRaw(RespClient::Encode({"SET", "k", std::string(100, 'v')}) +
              RespClient::Encode({"CLIENT", "INFO"}));
    std::vector<Reply> batch = Drain(c);
    ASSERT_EQ(batch.size(), 2u);
    fields(batch[1], &log);
    const std::string id = std::to_string(c("CLIENT", "ID").integer);
    c("CLIENT", "SETNAME", "lister");
    c("CLIENT", "NO-EVICT", "on");
    c("MULTI");
    c("SET", "a", "b");
    c("GET", "a");
    // Another connection sees c idle inside MULTI, two commands queued, its replies written
    // (vessel's worker may publish that a moment after the client read them: polled).
    auto idle = [&] {
      Reply r;
      for (int i = 0; i < 200; ++i) {
        r = other("CLIENT", "LIST", "ID", id);
        if (r.str.find(" obl=0 ") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return r;
    };
    fields(idle(), &log);
    c("DISCARD");
    fields(idle(), &log);
  });
}

TEST_F(ClientTest, PauseErrors) {
  RunTable({
      {{"CLIENT", "PAUSE", "x"}, Error("ERR timeout is not an integer or out of range")},
      {{"CLIENT", "PAUSE", "-1"}, Error("ERR timeout is negative")},
      {{"CLIENT", "PAUSE", "10", "READ"}, Error("ERR CLIENT PAUSE mode must be WRITE or ALL")},
      {{"CLIENT", "PAUSE", "0", "WRITE"}, Ok()},
      {{"CLIENT", "UNPAUSE"}, Ok()},
      {{"CLIENT", "UNPAUSE", "x"},
       Error("ERR wrong number of arguments for 'client|unpause' command")},
  });
}

// WRITE pauses writes (and a transaction that writes) but not reads; UNPAUSE releases them,
// and they run in order with nothing lost.
TEST_F(ClientTest, PauseWriteHoldsWritesUntilUnpause) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel), writer = Connect(vessel), reader = Connect(vessel);
    writer("SET", "k", "before");
    log.push_back(admin("CLIENT", "PAUSE", "10000", "WRITE"));
    const auto start = Clock::now();
    log.push_back(reader("GET", "k"));
    EXPECT_LT(MsSince(start), 2000);
    writer.Send({"SET", "k", "during"});
    writer.Send({"GET", "k"});
    Reply quiet = [&] {
      writer.SetTimeout(300);
      Reply r = writer.Read();
      writer.SetTimeout(10000);
      return r;
    }();
    log.push_back(quiet);  // nothing: the writer waits
    const Reply info = admin("INFO", "clients");
    EXPECT_NE(info.str.find("blocked_clients:1"), std::string::npos) << info.str;
    log.push_back(admin("CLIENT", "UNPAUSE"));
    log.push_back(writer.Read());
    log.push_back(writer.Read());
    log.push_back(reader("GET", "k"));
  });
}

// A pause keeps the dataset as it is (what FAILOVER relies on): an expired key is hidden from
// reads but neither read nor the active expiry cycle deletes it until the pause ends.
TEST_F(ClientTest, PauseKeepsExpiredKeysUntilItEnds) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel), reader = Connect(vessel);
    admin("FLUSHALL");
    admin("SET", "k", "v", "PX", "100");
    log.push_back(admin("CLIENT", "PAUSE", "10000", "WRITE"));
    EXPECT_TRUE(WaitFor([&] { return reader("GET", "k").type == Reply::Type::kNil; }));
    log.push_back(reader("EXISTS", "k"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few expiry cycles
    log.push_back(reader("DBSIZE"));
    log.push_back(admin("CLIENT", "UNPAUSE"));
    EXPECT_TRUE(WaitFor([&] { return reader("DBSIZE").integer == 0; }));
  });
}

// ALL pauses every command of every client (including the pausing one) until the timeout.
TEST_F(ClientTest, PauseAllEndsAtTimeout) {
  for (const bool vessel : {true, false}) {
    SCOPED_TRACE(vessel ? "on vessel" : "on redis-server");
    RespClient admin = Connect(vessel), other = Connect(vessel);
    ASSERT_EQ(admin("CLIENT", "PAUSE", "300", "ALL").str, "OK");
    const auto start = Clock::now();
    EXPECT_EQ(other("PING").str, "PONG");
    EXPECT_GE(MsSince(start), 250);
    EXPECT_EQ(admin("PING").str, "PONG");
  }
}

TEST_F(ClientTest, DebugProtocolAsRedis) {
  for (const int protocol : {2, 3}) {
    SameOnBoth([&](bool vessel, std::vector<Reply>& log) {
      RespClient c = Connect(vessel);
      if (protocol == 3) c("HELLO", "3");
      for (const char* t : {"string", "integer", "double", "bignum", "null", "array", "set", "map",
                            "true", "false", "verbatim", "nosuch"}) {
        log.push_back(c("DEBUG", "PROTOCOL", t));
      }
    });
  }
}

TEST_F(ClientTest, DebugObjectAndDigest) {
  for (const bool vessel : {true, false}) {
    SCOPED_TRACE(vessel ? "on vessel" : "on redis-server");
    RespClient c = Connect(vessel);
    c("SET", "k", "hello");
    const Reply obj = c("DEBUG", "OBJECT", "k");
    EXPECT_TRUE(
        std::regex_match(obj.str, std::regex("Value at:0x[0-9a-f]+ refcount:\\d+ encoding:\\w+ "
                                             "serializedlength:\\d+ lru:\\d+ "
                                             "lru_seconds_idle:\\d+.*")))
        << obj.str;
    EXPECT_EQ(c("DEBUG", "OBJECT", "nokey").str, "ERR no such key");
    const std::string d1 = c("DEBUG", "DIGEST").str;
    EXPECT_EQ(d1.size(), 40u);
    c("SET", "k", "other");
    EXPECT_NE(c("DEBUG", "DIGEST").str, d1);
    c("SET", "k", "hello");
    EXPECT_EQ(c("DEBUG", "DIGEST").str, d1);
    const Reply values = c("DEBUG", "DIGEST-VALUE", "k", "nokey");
    ASSERT_EQ(values.elems.size(), 2u);
    EXPECT_EQ(values.elems[1].str, std::string(40, '0'));
    c("FLUSHALL");
    EXPECT_EQ(c("DEBUG", "DIGEST").str, std::string(40, '0'));
    EXPECT_EQ(c("DEBUG", "CHANGE-REPL-ID").str, "OK");
  }
}

// DEBUG DIGEST and DIGEST-VALUE compute Redis's digests from the logical values: the same data
// digests the same on both servers, whatever each one's encodings, so a Redis master and a
// Vessel replica can be compared with one command.
TEST_F(ClientTest, DigestsAreRedis) {
  SameOnBoth([&](bool vessel, std::vector<Reply>& log) {
    RespClient c = Connect(vessel);
    c("FLUSHALL");
    log.push_back(c("DEBUG", "DIGEST"));
    c("SET", "str", "hello");
    c("SET", "num", "12345");
    c("SET", "ttl", "v", "EX", "1000");
    c("RPUSH", "list", "a", "b", "c", "1", "2");
    c("RPUSH", "list2", "c", "b", "a");
    c("SADD", "ints", "1", "2", "3", "-7");
    c("SADD", "strs", "x", "y", "zeta");
    c("ZADD", "z", "1", "a", "2.5", "b", "-3e10", "c", "0.1", "d");
    c("HSET", "h", "f1", "v1", "f2", "22", "f3", "");
    // A stream digests its entries (IDs, fields, values) in order; deleted entries and groups
    // are not part of it.
    c("XADD", "st", "1-1", "a", "1", "b", "2");
    c("XADD", "st", "1-2", "a", "3", "b", "4");
    c("XADD", "st", "5-0", "other", "fields", "n", "-12");
    c("XADD", "st", "6-0", "gone", "x");
    c("XDEL", "st", "6-0");
    c("XGROUP", "CREATE", "st", "g", "0");
    for (int i = 0; i < 300; ++i) {  // beyond the compact encodings
      const std::string n = std::to_string(i);
      c("RPUSH", "biglist", "element-" + n);
      c("SADD", "bigset", "member-" + n);
      c("ZADD", "bigz", std::to_string(i * 0.37), "m" + n);
      c("HSET", "bigh", "field-" + n, "value-" + n);
      c("XADD", "bigst", std::to_string(i + 1) + "-1", "field", n, "other", "value-" + n);
    }
    c("SELECT", "3");
    c("SET", "str", "hello");
    c("SELECT", "0");
    log.push_back(c("DEBUG", "DIGEST"));
    log.push_back(c("DEBUG", "DIGEST-VALUE", "str", "num", "ttl", "list", "list2", "ints", "strs",
                    "z", "h", "biglist", "bigset", "bigz", "bigh", "st", "bigst", "nokey"));
  });
}

}  // namespace
}  // namespace vessel::test
