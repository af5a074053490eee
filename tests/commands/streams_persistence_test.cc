// Streams in Redis's own formats: RDB files written by redis-server load in vessel and the
// reverse, DUMP payloads cross both ways (and vessel's are byte for byte Redis's), the AOF (its
// RDB base after a rewrite, and the commands XREADGROUP and XCLAIM record) brings back the same
// streams, groups, pending entries and consumers. A stream is compared by XINFO STREAM FULL
// COUNT 0, which shows every entry, counter, pending entry, delivery time and consumer.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/commands/persistence_util.h"

namespace vessel::test {
namespace {

// Streams of every shape: several nodes, field names like and unlike each node's first entry,
// integers, empty and long (compressible) values, tombstones (the first entry's too), trims,
// XSETID's counters, groups with pending entries owned by consumers, NOACK reads, forced claims,
// a consumer without pending entries, an empty stream with a group, a stream emptied by XDEL.
void FillStreams(RespClient& c) {
  for (int i = 1; i <= 260; ++i) {
    const std::string id = std::to_string(1000 + i) + "-" + std::to_string(i % 3);
    std::vector<std::string> cmd = {"XADD", "s", id};
    if (i % 7 == 0) {
      cmd.insert(cmd.end(), {"other", std::to_string(-i), "x", ""});
    } else {
      cmd.insert(cmd.end(),
                 {"temperature", std::to_string(i * 3), "name", "sensor-" + std::to_string(i % 5)});
    }
    if (i % 50 == 0) cmd.insert(cmd.end(), {"long", std::string(300, 'a' + i % 26)});
    ASSERT_FALSE(c.Cmd(cmd).is_error());
  }
  c("XDEL", "s", "1001-1", "1010-1", "1100-1", "1101-2", "1260-0");
  c("XTRIM", "s", "MINID", "1005");
  c("XGROUP", "CREATE", "s", "g1", "0");
  c("XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "7");
  c("XGROUP", "CREATE", "s", "g3", "1050");
  c("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s", ">");
  c("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s", ">");
  c("XREADGROUP", "GROUP", "g1", "carol", "NOACK", "COUNT", "4", "STREAMS", "s", ">");
  c("XREADGROUP", "GROUP", "g3", "dave", "COUNT", "5", "STREAMS", "s", ">");
  c("XCLAIM", "s", "g1", "erin", "0", "1006-0", "TIME", "1600000000000", "RETRYCOUNT", "4");
  c("XCLAIM", "s", "g1", "erin", "0", "1200-0", "FORCE", "TIME", "1600000000001", "JUSTID");
  c("XACK", "s", "g1", "1007-1");
  c("XGROUP", "CREATECONSUMER", "s", "g2", "idle-one");
  c("XADD", "s", "MAXLEN", "~", "200", "2000-0", "temperature", "1", "name", "sensor-9");
  c("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM");
  c("XADD", "gone", "5-0", "a", "1");
  c("XADD", "gone", "6-0", "a", "2");
  c("XDEL", "gone", "5-0", "6-0");
  c("XSETID", "gone", "9-0", "ENTRIESADDED", "40", "MAXDELETEDID", "8-0");
  c("XADD", "big", "1-0", "blob", std::string(5000, 'z'), "n", "12345678901");
  c("SELECT", "1");
  c("XADD", "s", "1-1", "a", "b");
  c("SELECT", "0");
}

// Every stream of every database, as XINFO STREAM FULL COUNT 0 shows it (radix-tree-nodes, which
// counts Redis's radix tree nodes, is left out).
std::map<std::string, std::string> DescribeStreams(RespClient& c) {
  std::map<std::string, std::string> out;
  for (int db = 0; db < 16; ++db) {
    c("SELECT", std::to_string(db));
    for (const Reply& k : c("KEYS", "*").elems) {
      if (c("TYPE", k.str).str != "stream") continue;
      Reply info = c("XINFO", "STREAM", k.str, "FULL", "COUNT", "0");
      for (size_t i = 0; i + 1 < info.elems.size(); i += 2)
        if (info.elems[i].str == "radix-tree-nodes") info.elems[i + 1] = Reply{};
      out[std::to_string(db) + "/" + k.str] = info.ToString();
    }
  }
  c("SELECT", "0");
  return out;
}

// The same without consumers' seen times (a replayed command creates a consumer when it runs).
std::map<std::string, std::string> WithoutSeenTimes(std::map<std::string, std::string> d) {
  for (auto& [key, text] : d) {
    for (size_t at; (at = text.find("\"seen-time\", (integer) ")) != std::string::npos;) {
      const size_t from = at + 23;
      text.erase(from, text.find_first_not_of("0123456789", from) - from);
      text.replace(at, 9, "seen-tim_");
    }
  }
  return d;
}

TEST(StreamsPersistence, RedisFileLoadsInVessel) {
  TempDir dir;
  std::map<std::string, std::string> expected;
  {
    RedisIn redis(dir.path());
    RespClient r = redis.Client();
    FillStreams(r);
    expected = DescribeStreams(r);
    EXPECT_EQ(r("SAVE").str, "OK");
  }
  ASSERT_EQ(expected.size(), 5u);
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(DescribeStreams(c), expected);
  EXPECT_EQ(c("XADD", "s", "2000-*", "f", "v").str, "2000-1");  // the last ID came along too
}

TEST(StreamsPersistence, VesselFileLoadsInRedis) {
  TempDir dir;
  std::map<std::string, std::string> expected;
  {
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    FillStreams(c);
    expected = DescribeStreams(c);
    EXPECT_EQ(c("SAVE").str, "OK");
  }
  ASSERT_EQ(expected.size(), 5u);
  RedisIn redis(dir.path());
  RespClient r = redis.Client();
  EXPECT_EQ(DescribeStreams(r), expected);
}

// DUMP on one server, RESTORE on the other, both ways; vessel's payload of a stream it restored
// from Redis is Redis's payload byte for byte (same nodes, same listpacks, same compression).
TEST(StreamsPersistence, DumpPayloadsCrossBothWays) {
  Servers::Get().Reset();
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  FillStreams(r);
  const auto from_redis = DescribeStreams(r);
  for (const auto& [name, text] : from_redis) {
    if (name.rfind("0/", 0) != 0) continue;
    const std::string key = name.substr(2);
    const Reply payload = r("DUMP", key);
    ASSERT_EQ(v("RESTORE", key, "0", payload.str).str, "OK") << key;
    EXPECT_EQ(v("DUMP", key).str, payload.str) << key << ": vessel's payload differs";
  }
  auto restored = DescribeStreams(v);
  restored.erase("1/s");
  auto want = from_redis;
  want.erase("1/s");
  EXPECT_EQ(restored, want);

  Servers::Get().Reset();
  FillStreams(v);
  const auto from_vessel = DescribeStreams(v);
  for (const auto& [name, text] : from_vessel) {
    if (name.rfind("0/", 0) != 0) continue;
    const std::string key = name.substr(2);
    const Reply payload = v("DUMP", key);
    ASSERT_EQ(r("RESTORE", key, "0", payload.str).str, "OK") << key;
  }
  auto in_redis = DescribeStreams(r);
  in_redis.erase("1/s");
  auto want2 = from_vessel;
  want2.erase("1/s");
  EXPECT_EQ(in_redis, want2);
  // A corrupted payload is refused, never half-loaded.
  std::string bad = v("DUMP", "s").str;
  bad[bad.size() / 2] ^= 0x40;
  EXPECT_TRUE(v("RESTORE", "bad", "0", bad).is_error());
  EXPECT_EQ(v("EXISTS", "bad").integer, 0);
  Servers::Get().Reset();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The append-only file: what the group commands record replays to the same streams; a rewrite
// (an RDB base in Redis's stream encoding) too.
TEST(StreamsPersistence, AppendOnlyFileReplaysGroups) {
  TempDir dir;
  std::map<std::string, std::string> expected;
  {
    auto v = StartVessel(dir.path(), {{"appendonly", "yes"}});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    FillStreams(c);
    expected = DescribeStreams(c);
  }
  std::string incr;
  for (const auto& e : fs::directory_iterator(dir.file("appendonlydir")))
    if (e.path().string().ends_with(".incr.aof")) incr += ReadAll(e.path());
  // XREADGROUP recorded as Redis propagates it: one XCLAIM per delivery, XGROUP SETID for NOACK.
  EXPECT_NE(incr.find("XCLAIM\r\n$1\r\ns\r\n$2\r\ng1\r\n$5\r\nalice\r\n$1\r\n0\r\n"),
            std::string::npos);
  EXPECT_NE(incr.find("$5\r\nFORCE\r\n$6\r\nJUSTID\r\n$6\r\nLASTID\r\n"), std::string::npos);
  EXPECT_NE(incr.find("$5\r\nSETID\r\n$1\r\ns\r\n$2\r\ng1\r\n"), std::string::npos);
  EXPECT_NE(incr.find("$11\r\nENTRIESREAD\r\n"), std::string::npos);
  EXPECT_EQ(incr.find("XREADGROUP"), std::string::npos);
  // The approximate trim was recorded as the exact one it did.
  EXPECT_NE(incr.find("$6\r\nMAXLEN\r\n$1\r\n=\r\n"), std::string::npos);
  {
    auto v = StartVessel(dir.path(), {{"appendonly", "yes"}});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(WithoutSeenTimes(DescribeStreams(c)), WithoutSeenTimes(expected));
    expected = DescribeStreams(c);
    EXPECT_EQ(c("BGREWRITEAOF").str, "Background append only file rewriting started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "aof_last_bgrewrite_status"), "ok");
  }
  auto v = StartVessel(dir.path(), {{"appendonly", "yes"}});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(DescribeStreams(c), expected);  // from the base: seen times included
}

}  // namespace
}  // namespace vessel::test
