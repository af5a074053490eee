// Pub/sub against redis-server: message and subscription frames in RESP2 and RESP3, the RESP2
// subscribed context, shard channels, PUBSUB introspection, glob patterns, CLIENT LIST / INFO
// figures, COMMAND INFO; and vessel's own concerns: publishers and subscribers on both workers
// (every message exactly once, in order), slow subscribers disconnected by
// client-output-buffer-limit while the others keep up, unsubscribing with messages in flight.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/messaging_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class PubsubTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  void TearDown() override {
    for (int server = 0; server < 2; ++server) {
      RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
      c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 33554432 8388608 60");
    }
  }
};

TEST_F(PubsubTest, Resp2Frames) {
  Scenario(3).Run({
      {0, {"SUBSCRIBE", "news", "sport"}},
      {1, {"PSUBSCRIBE", "n*", "s?ort", "news"}},
      {2, {"PUBLISH", "news", "hello"}, 0, Step::kUnordered},  // patterns: in hash order
      {2, {"PUBLISH", "sport", ""}},
      {2, {"PUBLISH", "nothing", "x"}},
      {2, {"PUBLISH", "other", "x"}},
      {0, {"SUBSCRIBE", "news"}},  // already: the count stays
      {0, {"PING"}},
      {0, {"PING", "hi"}},
      {0, {"GET", "x"}},  // refused in the subscribed context
      {0, {"CONFIG", "GET", "maxmemory"}},
      {0, {"UNSUBSCRIBE", "news", "nope"}},
      {1, {"PUNSUBSCRIBE"}},  // every pattern, in subscription order
      {1, {"PUNSUBSCRIBE"}},  // none left: a null pattern
      {1, {"PING"}},          // no longer subscribed: a plain PONG
      {0, {"UNSUBSCRIBE"}},
      {0, {"UNSUBSCRIBE"}},
      {0, {"GET", "x"}},
      {2, {"PUBSUB", "NUMPAT"}},
  });
}

TEST_F(PubsubTest, Resp3Pushes) {
  Scenario(3, 3).Run({
      {0, {"SUBSCRIBE", "a", "b"}},
      {1, {"PSUBSCRIBE", "*"}},
      {0, {"SET", "k", "v"}},  // RESP3 has no subscribed context
      {0, {"GET", "k"}},
      {0, {"PING"}},
      {2, {"PUBLISH", "a", "m1"}},
      {0, {"PUBLISH", "a", "to myself"}},  // the message comes before the reply, as in Redis
      {1, {"PUBLISH", "zzz", "pattern only"}},
      {0, {"UNSUBSCRIBE", "a", "b", "c"}},
      {0, {"UNSUBSCRIBE"}},
      {1, {"PUNSUBSCRIBE", "*", "x*"}},
      {0, {"SSUBSCRIBE", "s1"}},
      {2, {"SPUBLISH", "s1", "shard"}},
      {0, {"SUNSUBSCRIBE"}},
      {0, {"SUNSUBSCRIBE"}},
  });
}

// CLIENT REPLY OFF (or SKIP) silences replies, not pushes: (un)subscribe confirmations, messages,
// keyspace events and a message published to oneself still reach the subscriber, in RESP2 and
// RESP3 (Redis's CLIENT_PUSHING; its pubsub.tcl "make sure it works even if replies are
// silenced").
TEST_F(PubsubTest, PushesWhileRepliesAreOff) {
  // Steps of the silenced connection: no reply to wait for (Step::blocks), only what is pushed.
  constexpr auto kExact = Step::kExact;
  constexpr auto kUnordered = Step::kUnordered;
  for (int protocol : {2, 3}) {
    SCOPED_TRACE(protocol);
    Scenario(2, protocol, {{"CONFIG", "SET", "notify-keyspace-events", "KA"}})
        .Run({
            {0, {"CLIENT", "REPLY", "OFF"}, 0, kExact, true},
            {0, {"SUBSCRIBE", "chan"}, 0, kExact, true},
            {0, {"PSUBSCRIBE", "ch*", "__keyspace@0__:*"}, 0, kExact, true},
            {1, {"PUBLISH", "chan", "hello"}, 0, kUnordered},
            {1, {"SET", "foo", "bar"}},
            {0, {"SET", "foo", "self"}, 0, kExact, true},  // RESP2: refused while subscribed
            {0, {"PUBLISH", "chan", "to myself"}, 0, kUnordered, true},
            {0, {"PING"}, 0, kExact, true},
            {0, {"CLIENT", "REPLY", "SKIP"}, 0, kExact, true},  // ignored (RESP2: refused)
            {0, {"PUNSUBSCRIBE"}, 0, kExact, true},
            {0, {"UNSUBSCRIBE"}, 0, kExact, true},
            {0, {"CLIENT", "REPLY", "ON"}},
            {0, {"CLIENT", "REPLY", "SKIP"}, 0, kExact, true},
            {0, {"SUBSCRIBE", "again"}, 0, kExact, true},  // skipped: only its push comes
            {0, {"PING"}},
            {0, {"UNSUBSCRIBE"}},
        });
  }
}

TEST_F(PubsubTest, ShardChannels) {
  Scenario(3).Run({
      {0, {"SSUBSCRIBE", "s", "t"}},
      {1, {"SUBSCRIBE", "s"}},
      {1, {"PSUBSCRIBE", "*"}},
      {2, {"SPUBLISH", "s", "only the shard subscriber"}},
      {2, {"PUBLISH", "s", "not the shard subscriber"}},
      {2, {"PUBSUB", "SHARDCHANNELS"}, 0, Step::kUnordered},
      {2, {"PUBSUB", "SHARDNUMSUB", "s", "t", "u"}},
      {2, {"PUBSUB", "NUMSUB", "s", "t"}},
      {0, {"SUBSCRIBE", "x"}},  // counts are per kind
      {0, {"SUNSUBSCRIBE", "s"}},
      {0, {"GET", "k"}},
      {0, {"SUNSUBSCRIBE", "t", "zz"}},
      {0, {"UNSUBSCRIBE", "x"}},
      {0, {"GET", "k"}},
  });
}

TEST_F(PubsubTest, ResetQuitAndMulti) {
  Scenario(3).Run({
      {0, {"SUBSCRIBE", "c"}},
      {1, {"PSUBSCRIBE", "c*"}},
      {0, {"RESET"}},
      {2, {"PUBLISH", "c", "after reset"}},
      {0, {"GET", "k"}},
      {0, {"MULTI"}},
      {0, {"SUBSCRIBE", "d"}},
      {0, {"SSUBSCRIBE", "e"}},
      {0, {"EXEC"}},
      {2, {"PUBLISH", "d", "x"}},
      {1, {"QUIT"}},
      {2, {"PUBLISH", "c", "after quit"}},
      {2, {"PUBSUB", "NUMPAT"}},
  });
}

TEST_F(PubsubTest, Introspection) {
  Scenario(3).Run({
      {0, {"SUBSCRIBE", "news.it", "news.sport", "weather"}},
      {1, {"SUBSCRIBE", "news.it"}},
      {1, {"PSUBSCRIBE", "news.*", "a", "news.*"}},
      {2, {"PUBSUB", "CHANNELS"}, 0, Step::kUnordered},
      {2, {"PUBSUB", "CHANNELS", "news.*"}, 0, Step::kUnordered},
      {2, {"PUBSUB", "CHANNELS", "w[a-f]ather"}},
      {2, {"PUBSUB", "NUMSUB"}},
      {2, {"PUBSUB", "NUMSUB", "news.it", "weather", "none"}},
      {2, {"PUBSUB", "NUMPAT"}},
      {2, {"PUBSUB", "SHARDCHANNELS", "*"}},
      {2, {"PUBSUB", "SHARDNUMSUB"}},
  });
  RunTable({
      {{"PUBSUB"}, Error("ERR wrong number of arguments for 'pubsub' command")},
      {{"PUBSUB", "foo"}, Error("ERR unknown subcommand 'foo'. Try PUBSUB HELP.")},
      {{"PUBSUB", "CHANNELS", "a", "b"},
       Error("ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB "
             "HELP.")},
      {{"PUBSUB", "shardchannels", "a", "b"}, Err("ERR unknown subcommand or wrong number*")},
      {{"PUBSUB", "NUMPAT", "x"},
       Error("ERR wrong number of arguments for 'pubsub|numpat' command")},
      {{"PUBSUB", "HELP"}, Any()},
      {{"PUBLISH", "c"}, Error("ERR wrong number of arguments for 'publish' command")},
      {{"PUBLISH", "c", "m", "x"}, Error("ERR wrong number of arguments for 'publish' command")},
      {{"SPUBLISH", "c"}, Error("ERR wrong number of arguments for 'spublish' command")},
      {{"SUBSCRIBE"}, Error("ERR wrong number of arguments for 'subscribe' command")},
      {{"PSUBSCRIBE"}, Error("ERR wrong number of arguments for 'psubscribe' command")},
      {{"SSUBSCRIBE"}, Error("ERR wrong number of arguments for 'ssubscribe' command")},
      {{"PUBLISH", "nobody", "x"}, Int(0)},
      {{"SPUBLISH", "nobody", "x"}, Int(0)},
      {{"UNSUBSCRIBE"}, Arr({Bulk("unsubscribe"), Nil(), Int(0)})},
      {{"PUNSUBSCRIBE", "p"}, Arr({Bulk("punsubscribe"), Bulk("p"), Int(0)})},
      {{"SUNSUBSCRIBE"}, Arr({Bulk("sunsubscribe"), Nil(), Int(0)})},
      {{"COMMAND", "GETKEYS", "SPUBLISH", "c", "m"}, Error("ERR The command has no key arguments")},
      {{"COMMAND", "GETKEYS", "SSUBSCRIBE", "c"}, Error("ERR The command has no key arguments")},
  });
}

TEST_F(PubsubTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name :
       {"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "publish", "ssubscribe",
        "sunsubscribe", "spublish", "pubsub|channels", "pubsub|numsub", "pubsub|numpat",
        "pubsub|shardchannels", "pubsub|shardnumsub", "pubsub|help", "client|tracking",
        "client|caching", "client|getredir", "client|trackinginfo"}) {
    const Reply v = vessel("COMMAND", "INFO", name);
    const Reply r = redis("COMMAND", "INFO", name);
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
  // The PUBSUB container: its flags and categories (its subcommands are listed in any order).
  const Reply v = vessel("COMMAND", "INFO", "pubsub"), r = redis("COMMAND", "INFO", "pubsub");
  ASSERT_EQ(v.elems.size(), 1u);
  for (size_t i = 0; i < 9; ++i)
    EXPECT_EQ(v.elems[0].elems[i], r.elems[0].elems[i]) << "field " << i;
}

// Redis's stringmatchlen: every pattern against every channel, through PUBLISH's receiver count.
TEST_F(PubsubTest, GlobPatternsMatchAsRedis) {
  const Strings patterns = {"*",        "?",           "h?llo",     "h*llo",    "h[ae]llo",
                            "h[^e]llo", "h[a-b]llo",   "h[b-a]llo", "h[a-]llo", "h[]llo",
                            "h[",       "h[a",         "h\\*llo",   "h\\",      "\\",
                            "h*",       "*o",          "**",        "h**o",     "[\\]]",
                            "[\\-]",    "a*b*c*d",     "[^]",       "[[]",      "h[!e]llo",
                            "*[",       "[a-z][0-9]*", "x\\?y",     "\\[a]"};
  const Strings channels = {"hello", "hallo", "hxllo", "h*llo", "hllo",    "h",        "",
                            "h[",    "h\\",   "]",     "-",     "aXbYcZd", "abcd",     "[",
                            "x?y",   "xzy",   "a1",    "[a]",   "a",       "heeeello", "h-llo"};
  std::map<std::string, std::vector<int64_t>> got[2];
  for (int server = 0; server < 2; ++server) {
    RespClient sub = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    RespClient pub = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    for (const std::string& p : patterns) {
      sub.Send({"PSUBSCRIBE", p});
      ASSERT_EQ(sub.Read().elems.size(), 3u);
      int64_t received = 0;
      for (const std::string& ch : channels) {
        got[server][p].push_back(pub("PUBLISH", ch, "m").integer);
        received += got[server][p].back();
      }
      for (int64_t i = 0; i < received; ++i) ASSERT_EQ(sub.Read().elems.size(), 4u);
      sub.Send({"PUNSUBSCRIBE", p});
      ASSERT_EQ(sub.Read().elems.size(), 3u);
    }
  }
  for (const std::string& p : patterns) {
    for (size_t i = 0; i < channels.size(); ++i)
      EXPECT_EQ(got[0][p][i], got[1][p][i])
          << "pattern \"" << p << "\" channel \"" << channels[i] << "\"";
  }
}

TEST_F(PubsubTest, ClientListAndInfo) {
  for (int server = 0; server < 2; ++server) {
    SCOPED_TRACE(server == 0 ? "vessel" : "redis");
    auto connect = [&] { return server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis(); };
    RespClient a = connect(), b = connect(), admin = connect();
    a.Send({"SUBSCRIBE", "x", "y"});
    a.Read();
    a.Read();
    a.Send({"PSUBSCRIBE", "p*"});
    a.Read();
    a.Send({"SSUBSCRIBE", "s"});
    a.Read();
    b("HELLO", "3");
    b.Send({"SSUBSCRIBE", "s", "t"});
    b.Read();
    b.Read();
    const std::string line = admin("CLIENT", "LIST", "TYPE", "pubsub").str;
    EXPECT_NE(line.find(" flags=P "), std::string::npos) << line;
    EXPECT_NE(line.find(" sub=2 psub=1 ssub=1 "), std::string::npos) << line;
    EXPECT_NE(line.find(" sub=0 psub=0 ssub=2 "), std::string::npos) << line;
    EXPECT_EQ(admin("CLIENT", "LIST", "TYPE", "normal").str.find("flags=P"), std::string::npos);
    EXPECT_EQ(InfoField(admin, "stats", "pubsub_channels"), 2);
    EXPECT_EQ(InfoField(admin, "stats", "pubsub_patterns"), 1);
    EXPECT_EQ(InfoField(admin, "stats", "pubsubshard_channels"), 2);
    EXPECT_EQ(admin("CLIENT", "KILL", "TYPE", "pubsub").integer, 2);
    EXPECT_TRUE(a.ReadEof());
  }
}

// ---- vessel: several workers ----

// Reads n frames (messages) from c, with a generous timeout.
std::vector<Reply> ReadN(RespClient& c, size_t n) {
  std::vector<Reply> out;
  c.SetTimeout(10000);
  while (out.size() < n) {
    Reply r = c.Read();
    if (r.type == Reply::Type::kClosed) break;
    out.push_back(std::move(r));
  }
  return out;
}

// Many subscribers on both workers, publishers on both: every message reaches every subscriber
// exactly once, each publisher's messages in the order it sent them.
TEST_F(PubsubTest, FanOutAcrossWorkersInOrder) {
  constexpr int kSubs = 12, kPubs = 4, kMessages = 1500;
  std::vector<RespClient> subs = SpreadConnections(kSubs);
  for (size_t i = 0; i < subs.size(); ++i) {
    // Half listen on the channel, half on a pattern that matches it; one does both.
    if (i % 2 == 0 || i == 1) subs[i].Send({"SUBSCRIBE", "fan"});
    if (i % 2 == 1) subs[i].Send({"PSUBSCRIBE", "f?n"});
    subs[i].Read();
    if (i == 1) subs[i].Read();
  }
  std::vector<RespClient> pubs = SpreadConnections(kPubs);
  const int64_t receivers = kSubs + 1;
  std::atomic<int> wrong_counts{0};
  Parallel(kPubs, [&](int p) {
    std::string batch;
    for (int m = 0; m < kMessages; ++m)
      batch += RespClient::Encode({"PUBLISH", "fan", std::to_string(p) + ":" + std::to_string(m)});
    pubs[p].SendRaw(batch);
    for (int m = 0; m < kMessages; ++m)
      if (pubs[p].Read().integer != receivers) ++wrong_counts;
  });
  EXPECT_EQ(wrong_counts, 0);
  for (size_t i = 0; i < subs.size(); ++i) {
    const size_t expect = (i == 1 ? 2 : 1) * kPubs * kMessages;
    const std::vector<Reply> got = ReadN(subs[i], expect);
    ASSERT_EQ(got.size(), expect) << "subscriber " << i;
    std::map<std::string, std::vector<int>> seen;  // kind:publisher -> message numbers
    for (const Reply& r : got) {
      const std::string& payload = r.elems.back().str;
      const size_t colon = payload.find(':');
      seen[r.elems[0].str + payload.substr(0, colon)].push_back(
          std::stoi(payload.substr(colon + 1)));
    }
    for (const auto& [from, numbers] : seen) {
      ASSERT_EQ(numbers.size(), static_cast<size_t>(kMessages))
          << "subscriber " << i << " " << from;
      for (int m = 0; m < kMessages; ++m)
        ASSERT_EQ(numbers[m], m) << "subscriber " << i << " from " << from << " out of order";
    }
    EXPECT_TRUE(ReadQuiet(subs[i], 50).empty()) << "subscriber " << i << " got extra messages";
  }
}

TEST_F(PubsubTest, ShardChannelsAndPatternsAcrossWorkers) {
  std::vector<RespClient> c = SpreadConnections(4);
  c[0].Send({"SSUBSCRIBE", "s"});
  c[1].Send({"SSUBSCRIBE", "s"});
  c[2].Send({"PSUBSCRIBE", "*"});
  c[3].Send({"SUBSCRIBE", "s"});
  for (auto& x : c) x.Read();
  std::vector<RespClient> pub = SpreadConnections(2);
  for (int round = 0; round < 50; ++round) {
    EXPECT_EQ(pub[round % 2]("SPUBLISH", "s", std::to_string(round)).integer, 2);
    EXPECT_EQ(pub[round % 2]("PUBLISH", "s", std::to_string(round)).integer, 2);
  }
  for (int i = 0; i < 4; ++i) {
    const std::vector<Reply> got = ReadN(c[i], 50);
    ASSERT_EQ(got.size(), 50u);
    for (int round = 0; round < 50; ++round) {
      EXPECT_EQ(got[round].elems[0].str, i < 2 ? "smessage" : (i == 2 ? "pmessage" : "message"));
      EXPECT_EQ(got[round].elems.back().str, std::to_string(round));
    }
  }
}

// A subscriber that does not read is disconnected at the pubsub class's hard limit; the others
// and the publisher carry on.
TEST_F(PubsubTest, SlowSubscriberIsDisconnected) {
  RespClient admin = Servers::Get().Vessel();
  ASSERT_EQ(admin("CONFIG", "SET", "client-output-buffer-limit", "pubsub 8mb 0 0").type,
            Reply::Type::kStatus);
  EXPECT_NE(
      admin("CONFIG", "GET", "client-output-buffer-limit").elems[1].str.find("pubsub 8388608 0 0"),
      std::string::npos);
  std::vector<RespClient> subs = SpreadConnections(4);  // 0 and 1 never read
  for (auto& s : subs) {
    s.Send({"SUBSCRIBE", "big"});
    s.Read();
  }
  RespClient pub = Servers::Get().Vessel();
  const std::string payload(4096, 'x');
  constexpr int kMessages = 12000, kChunk = 200;  // 48 MB: more than the kernel buffers hold
  std::atomic<int> received[2] = {0, 0};
  std::vector<std::thread> readers;
  for (int i = 2; i < 4; ++i) {
    readers.emplace_back([&, i] {
      while (received[i - 2] < kMessages && subs[i].Read().type == Reply::Type::kArray)
        ++received[i - 2];
    });
  }
  std::string chunk;
  for (int m = 0; m < kChunk; ++m) chunk += RespClient::Encode({"PUBLISH", "big", payload});
  int64_t last = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int sent = 0; sent < kMessages; sent += kChunk) {
    // Paced to the readers (at most 2 MB behind), so that only the subscribers that do not read
    // at all can reach the limit, however busy the machine.
    while (std::min(received[0].load(), received[1].load()) < sent - 500 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pub.SendRaw(chunk);
    for (int m = 0; m < kChunk; ++m) last = pub.Read().integer;
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(received[0], kMessages);
  EXPECT_EQ(received[1], kMessages);
  EXPECT_EQ(last, 2) << "the slow subscribers are gone by the end";
  for (int i = 0; i < 2; ++i) {
    // What was sent before the limit was reached, then the end of the connection.
    Reply r;
    do {
      r = subs[i].Read();
    } while (r.type == Reply::Type::kArray);
    EXPECT_EQ(r.type, Reply::Type::kClosed) << "slow subscriber " << i << " still connected";
  }
  EXPECT_EQ(admin("PUBSUB", "NUMSUB", "big").elems[1].integer, 2);
}

// The soft limit: a subscriber over it is disconnected only once it has stayed over it for longer
// than the limit's seconds (whole seconds, as Redis counts them), checked as its output grows. It
// went over the limit after the burst began, so it cannot be gone sooner than that after it began,
// however slowly the burst goes (sanitizers, a loaded machine).
TEST_F(PubsubTest, SoftLimitHeldForItsSeconds) {
  RespClient admin = Servers::Get().Vessel();
  ASSERT_EQ(admin("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 1mb 2").type,
            Reply::Type::kStatus);
  RespClient slow = Servers::Get().Vessel();
  slow.Send({"SUBSCRIBE", "soft"});
  slow.Read();
  RespClient pub = Servers::Get().Vessel();
  const std::string payload(64 * 1024, 'x');
  std::string burst;
  for (int m = 0; m < 320; ++m) burst += RespClient::Encode({"PUBLISH", "soft", payload});
  const auto start = std::chrono::steady_clock::now();
  pub.SendRaw(burst);  // 20 MB: the kernel buffers fill, then vessel holds more than 1 MB
  for (int m = 0; m < 320; ++m) pub.Read();
  int64_t subscribers = admin("PUBSUB", "NUMSUB", "soft").elems[1].integer;
  while (subscribers == 1 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    subscribers = pub("PUBLISH", "soft", "tick").integer;  // output is checked as it grows
  }
  EXPECT_EQ(subscribers, 0) << "never disconnected";
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// UNSUBSCRIBE while a publisher on the other worker streams messages: the subscriber gets a gap-
// free prefix of the stream, then the unsubscribe reply, then nothing more from that channel.
TEST_F(PubsubTest, UnsubscribeWhileMessagesInFlight) {
  for (int round = 0; round < 5; ++round) {
    std::vector<RespClient> c = SpreadConnections(2);
    RespClient& sub = c[0];
    RespClient& pub = c[1];
    sub.Send({"SUBSCRIBE", "flow", "other"});
    sub.Read();
    sub.Read();
    std::thread publisher([&] {
      std::string batch;
      for (int m = 0; m < 20000; ++m)
        batch += RespClient::Encode({"PUBLISH", "flow", std::to_string(m)});
      pub.SendRaw(batch);
      for (int m = 0; m < 20000; ++m) pub.Read();
      pub("PUBLISH", "other", "end");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + round));
    sub.Send({"UNSUBSCRIBE", "flow"});
    int expect = 0;
    bool unsubscribed = false;
    for (;;) {
      const Reply r = sub.Read();
      ASSERT_EQ(r.type, Reply::Type::kArray);
      if (r.elems[0].str == "unsubscribe") {
        unsubscribed = true;
        continue;
      }
      if (r.elems[1].str == "other") break;
      ASSERT_FALSE(unsubscribed) << "message " << r.elems[2].str << " after UNSUBSCRIBE";
      ASSERT_EQ(r.elems[2].str, std::to_string(expect++));
    }
    publisher.join();
    EXPECT_TRUE(unsubscribed);
  }
}

}  // namespace
}  // namespace vessel::test
