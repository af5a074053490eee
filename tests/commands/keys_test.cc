// Generic keyspace commands (DEL EXISTS TYPE RENAME COPY MOVE SCAN KEYS EXPIRE TTL ...) against
// vessel and redis-server.
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class KeysTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(KeysTest, DelExistsTypeTouch) {
  RunTable({
      {{"SET", "a", "1"}, Ok()},
      {{"SET", "b", "2"}, Ok()},
      {{"EXISTS", "a", "b", "c", "a"}, Int(3)},
      {{"TOUCH", "a", "c"}, Int(1)},
      {{"TYPE", "a"}, Simple("string")},
      {{"TYPE", "nokey"}, Simple("none")},
      {{"DEL", "a", "a", "c"}, Int(1)},
      {{"EXISTS", "a"}, Int(0)},
      {{"UNLINK", "b", "x"}, Int(1)},
      {{"DBSIZE"}, Int(0)},
      {{"DEL"}, Err("ERR wrong number of arguments for 'del' command")},
      {{"EXISTS"}, Err("ERR wrong number of arguments for 'exists' command")},
  });
}

TEST_F(KeysTest, RenameAndRenamenx) {
  RunTable({
      {{"RENAME", "nokey", "x"}, Err("ERR no such key")},
      {{"RENAMENX", "nokey", "x"}, Err("ERR no such key")},
      {{"SET", "a", "1"}, Ok()},
      {{"PEXPIRE", "a", "100000"}, Int(1)},
      {{"RENAME", "a", "a"}, Ok()},
      {{"RENAMENX", "a", "a"}, Int(0)},
      {{"RENAME", "a", "b"}, Ok()},
      {{"EXISTS", "a"}, Int(0)},
      {{"GET", "b"}, Bulk("1")},
      {{"PTTL", "b"}, IntRange(90000, 100000), Diff::kSkip, "time passes between servers"},
      {{"SET", "c", "3"}, Ok()},
      {{"RENAMENX", "b", "c"}, Int(0)},
      {{"RENAME", "b", "c"}, Ok()},
      {{"GET", "c"}, Bulk("1")},
      {{"TTL", "c"}, IntRange(99, 100), Diff::kSkip, "time passes between servers"},
      {{"RENAMENX", "c", "d"}, Int(1)},
      {{"KEYS", "*"}, BulkArr({"d"})},
  });
}

TEST_F(KeysTest, CopyAndMove) {
  RunTable({
      {{"SET", "src", "v"}, Ok()},
      {{"COPY", "src", "dst"}, Int(1)},
      {{"GET", "dst"}, Bulk("v")},
      {{"COPY", "src", "dst"}, Int(0)},
      {{"SET", "src", "w"}, Ok()},
      {{"COPY", "src", "dst", "REPLACE"}, Int(1)},
      {{"GET", "dst"}, Bulk("w")},
      {{"COPY", "src", "src"}, Err("ERR source and destination objects are the same")},
      {{"COPY", "nokey", "x"}, Int(0)},
      {{"COPY", "src", "x", "DB", "1"}, Int(1)},
      {{"COPY", "src", "x", "DB", "99"}, Err("ERR DB index is out of range")},
      {{"COPY", "src", "x", "DB", "z"}, Err("ERR value is not an integer or out of range")},
      {{"COPY", "src", "x", "BOGUS"}, Err("ERR syntax error")},
      {{"COPY", "src", "src", "DB", "1", "REPLACE"}, Int(1)},
      {{"MOVE", "src", "0"}, Err("ERR source and destination objects are the same")},
      {{"MOVE", "src", "1"}, Int(0)},
      {{"MOVE", "dst", "2"}, Int(1)},
      {{"MOVE", "dst", "2"}, Int(0)},
      {{"MOVE", "src", "x"}, Err("ERR value is not an integer or out of range")},
      {{"MOVE", "src", "99"}, Err("ERR DB index is out of range")},
      {{"SELECT", "1"}, Ok()},
      {{"GET", "x"}, Bulk("w")},
      {{"GET", "src"}, Bulk("w")},
      {{"SELECT", "2"}, Ok()},
      {{"GET", "dst"}, Bulk("w")},
      {{"SELECT", "0"}, Ok()},
      {{"EXISTS", "dst"}, Int(0)},
  });
}

TEST_F(KeysTest, ExpireFamily) {
  RunTable({
      {{"SET", "k", "v"}, Ok()},
      {{"TTL", "k"}, Int(-1)},
      {{"PTTL", "nokey"}, Int(-2)},
      {{"EXPIRETIME", "k"}, Int(-1)},
      {{"EXPIRE", "nokey", "10"}, Int(0)},
      {{"EXPIRE", "k", "100"}, Int(1)},
      {{"TTL", "k"}, Int(100)},
      {{"EXPIRE", "k", "50", "GT"}, Int(0)},
      {{"EXPIRE", "k", "200", "GT"}, Int(1)},
      {{"EXPIRE", "k", "300", "LT"}, Int(0)},
      {{"EXPIRE", "k", "150", "LT"}, Int(1)},
      {{"EXPIRE", "k", "10", "NX"}, Int(0)},
      {{"EXPIRE", "k", "10", "XX"}, Int(1)},
      {{"TTL", "k"}, Int(10)},
      {{"PERSIST", "k"}, Int(1)},
      {{"PERSIST", "k"}, Int(0)},
      {{"EXPIRE", "k", "10", "XX"}, Int(0)},
      {{"EXPIRE", "k", "10", "GT"}, Int(0)},
      {{"EXPIRE", "k", "10", "LT"}, Int(1)},
      {{"EXPIRE", "k", "10", "NX", "XX"},
       Err("ERR NX and XX, GT or LT options at the same time are not compatible")},
      {{"EXPIRE", "k", "10", "GT", "LT"},
       Err("ERR GT and LT options at the same time are not compatible")},
      {{"EXPIRE", "k", "10", "FOO"}, Err("ERR Unsupported option FOO")},
      {{"EXPIRE", "k", "x"}, Err("ERR value is not an integer or out of range")},
      {{"EXPIRE", "k", "9223372036854775807"}, Err("ERR invalid expire time in 'expire' command")},
      {{"PEXPIRE", "k", "9223372036854775807"},
       Err("ERR invalid expire time in 'pexpire' command")},
      {{"EXPIREAT", "k", "9999999999"}, Int(1)},
      {{"EXPIRETIME", "k"}, Int(9999999999)},
      {{"PEXPIRETIME", "k"}, Int(9999999999000)},
      {{"PEXPIREAT", "k", "9999999999123"}, Int(1)},
      {{"PEXPIRETIME", "k"}, Int(9999999999123)},
      {{"EXPIRETIME", "k"}, Int(9999999999)},
      {{"EXPIRE", "k", "-1"}, Int(1)},
      {{"EXISTS", "k"}, Int(0)},
      {{"SET", "k", "v"}, Ok()},
      {{"EXPIREAT", "k", "1"}, Int(1)},
      {{"GET", "k"}, Nil()},
      {{"SET", "k", "v", "EX", "100"}, Ok()},
      {{"SET", "k", "w"}, Ok()},
      {{"TTL", "k"}, Int(-1)},
  });
}

TEST_F(KeysTest, ExpiredKeysVanish) {
  for (bool redis : {false, true}) {
    RespClient c = redis ? Servers::Get().Redis() : Servers::Get().Vessel();
    c("SET", "short", "v", "PX", "30");
    c("SET", "long", "v", "EX", "100");
    EXPECT_EQ(c("EXISTS", "short").integer, 1);
    // Poll: the key must disappear for readers once its time is past (lazy expiry), and the
    // active cycle must eventually delete it so DBSIZE drops too.
    for (int i = 0; i < 200 && c("EXISTS", "short").integer == 1; ++i) usleep(10000);
    EXPECT_EQ(c("GET", "short").type, Reply::Type::kNil);
    for (int i = 0; i < 300 && c("DBSIZE").integer != 1; ++i) usleep(10000);
    EXPECT_EQ(c("DBSIZE").integer, 1) << (redis ? "redis" : "vessel");
  }
}

TEST_F(KeysTest, KeysPatterns) {
  std::vector<Row> rows;
  for (const char* k : {"hello", "hallo", "hxllo", "hllo", "heeeello", "hillo", "h*llo", "a[b]",
                        "user:1", "user:2", "User:3"})
    rows.push_back({{"SET", k, "1"}, Ok()});
  for (const char* p : {"h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h\\*llo", "*",
                        "user:*", "[uU]ser:?", "a\\[b\\]", "a[b", "*o", "[", "h[a-", ""})
    rows.push_back({{"KEYS", p}, Any(), Diff::kUnordered});
  RunTable(rows);
}

TEST_F(KeysTest, ScanReturnsEveryKeyOnce) {
  for (bool redis : {false, true}) {
    RespClient c = redis ? Servers::Get().Redis() : Servers::Get().Vessel();
    c("FLUSHALL");
    std::set<std::string> all;
    for (int i = 0; i < 2000; ++i) {
      const std::string k = "key:" + std::to_string(i);
      c.Send({"SET", k, "x"});
      all.insert(k);
    }
    for (int i = 0; i < 2000; ++i) c.Read();
    std::set<std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      const Reply r = c("SCAN", cursor, "COUNT", "50");
      ASSERT_EQ(r.elems.size(), 2u) << r.ToString();
      cursor = r.elems[0].str;
      for (const Reply& k : r.elems[1].elems) seen.insert(k.str);
      // Grow the table during the scan: keys present all along must still be returned.
      if (++calls == 5) {
        for (int i = 2000; i < 6000; ++i) c.Send({"SET", "extra:" + std::to_string(i), "x"});
        for (int i = 2000; i < 6000; ++i) c.Read();
      }
    } while (cursor != "0");
    for (const std::string& k : all) EXPECT_TRUE(seen.contains(k)) << k;
    const Reply typed = c("SCAN", "0", "MATCH", "key:1?", "COUNT", "100000", "TYPE", "string");
    EXPECT_EQ(typed.elems[1].elems.size(), 10u) << (redis ? "redis" : "vessel");
    const Reply none = c("SCAN", "0", "COUNT", "100000", "TYPE", "list");
    EXPECT_EQ(none.elems[1].elems.size(), 0u);
  }
}

TEST_F(KeysTest, RandomKeyAndSwapdb) {
  RunTable({
      {{"SET", "only", "1"}, Ok()},
      {{"RANDOMKEY"}, Bulk("only")},
      {{"SWAPDB", "0", "1"}, Ok()},
      {{"RANDOMKEY"}, Nil()},
      {{"SELECT", "1"}, Ok()},
      {{"GET", "only"}, Bulk("1")},
      {{"SWAPDB", "1", "0"}, Ok()},
      {{"DBSIZE"}, Int(0)},
      {{"SELECT", "0"}, Ok()},
      {{"DBSIZE"}, Int(1)},
      {{"FLUSHALL"}, Ok()},
      {{"DBSIZE"}, Int(0)},
  });
}

TEST_F(KeysTest, ObjectAndMemory) {
  RunTable({
      {{"SET", "n", "12345"}, Ok()},
      {{"SET", "s", "hello"}, Ok()},
      {{"SET", "big", std::string(100, 'x')}, Ok()},
      {{"OBJECT", "ENCODING", "n"}, Bulk("int")},
      {{"OBJECT", "ENCODING", "s"}, Bulk("embstr")},
      {{"OBJECT", "ENCODING", "big"}, Bulk("raw")},
      {{"OBJECT", "REFCOUNT", "s"}, Int(1), Diff::kSkip, "Redis shares small integers"},
      {{"OBJECT", "FREQ", "s"}, Err("ERR An LFU maxmemory policy is not selected*")},
      {{"OBJECT", "IDLETIME", "s"}, Int(0)},
      {{"OBJECT", "IDLETIME", "nokey"}, Nil()},
      // Under an LFU policy the stamp holds a frequency (new keys start at 5), not an idle time.
      {{"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}, Ok()},
      {{"SET", "f", "abc"}, Ok()},  // not a small integer: Redis shares those
      {{"OBJECT", "FREQ", "f"}, Int(5)},
      {{"OBJECT", "IDLETIME", "f"}, Err("ERR An LFU maxmemory policy is selected*")},
      {{"CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU"}, Ok()},
      {{"CONFIG", "GET", "maxmemory-policy"}, Arr({Bulk("maxmemory-policy"), Bulk("allkeys-lru")})},
      {{"CONFIG", "SET", "maxmemory-policy", "lru"},
       Err("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) "
           "must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
           "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")},
      {{"CONFIG", "SET", "maxmemory-samples", "0"},
       Err("ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument "
           "must be between 1 and 2147483647 inclusive")},
      {{"CONFIG", "GET", "maxmemory-samples"}, Arr({Bulk("maxmemory-samples"), Bulk("5")})},
      {{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, Ok()},
      {{"OBJECT", "HELP"}, Any()},
      {{"MEMORY", "USAGE", "s"}, Any(), Diff::kSkip, "different allocation layouts"},
      {{"MEMORY", "USAGE", "s", "SAMPLES"}, Err("ERR syntax error")},
  });
}

TEST_F(KeysTest, DumpRestoreErrors) {
  RunTable({
      {{"DUMP", "nokey"}, Nil()},
      {{"SET", "k", "v"}, Ok()},
      {{"RESTORE", "k", "0", "garbage"}, Err("BUSYKEY Target key name already exists.")},
      {{"RESTORE", "n", "0", "garbage"}, Err("ERR DUMP payload version or checksum are wrong")},
      {{"RESTORE", "n", "-1", "x"}, Err("ERR Invalid TTL value, must be >= 0")},
      {{"RESTORE", "n", "x", "x"}, Err("ERR value is not an integer or out of range")},
      {{"RESTORE", "n", "0", "x", "BOGUS"}, Err("ERR syntax error")},
      {{"RESTORE", "n", "0", "x", "FREQ", "300"},
       Err("ERR Invalid FREQ value, must be >= 0 and <= 255")},
      {{"RESTORE", "n", "0", "x", "IDLETIME", "-1"},
       Err("ERR Invalid IDLETIME value, must be >= 0")},
  });
}

// Payloads are Vessel's own framing (a documented difference), so round trips are checked on
// vessel alone.
TEST_F(KeysTest, DumpRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  for (const std::string& v : {std::string("short"), std::string(100, 'x'), std::string("12345"),
                               std::string("a\0b\r\n", 6)}) {
    c("SET", "src", v);
    const Reply dump = c("DUMP", "src");
    ASSERT_EQ(dump.type, Reply::Type::kBulk);
    EXPECT_EQ(c("RESTORE", "dst", "0", dump.str, "REPLACE").str, "OK");
    EXPECT_EQ(c("GET", "dst").str, v);
    EXPECT_EQ(c("RESTORE", "dst", "0", dump.str).str, "BUSYKEY Target key name already exists.");
    EXPECT_EQ(c("RESTORE", "ttl", "100000", dump.str, "REPLACE").str, "OK");
    EXPECT_GT(c("PTTL", "ttl").integer, 90000);
    // A damaged payload is refused before any module code sees it.
    std::string bad = dump.str;
    bad[bad.size() / 2] ^= 1;
    EXPECT_EQ(c("RESTORE", "x", "0", bad).str, "ERR DUMP payload version or checksum are wrong");
    // An absolute TTL in the past stores nothing and removes the existing key.
    EXPECT_EQ(c("RESTORE", "dst", "1", dump.str, "REPLACE", "ABSTTL").str, "OK");
    EXPECT_EQ(c("EXISTS", "dst").integer, 0);
  }
}

// RESTORE's IDLETIME sets the LRU idle time, FREQ the LFU counter (each under its kind of
// policy), on both servers, each restoring its own DUMP payload.
TEST_F(KeysTest, RestoreSetsIdleTimeAndFrequency) {
  for (int server = 0; server < 2; ++server) {
    RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    c("SET", "src", "some value");
    const std::string payload = c("DUMP", "src").str;
    EXPECT_EQ(c("RESTORE", "idle", "0", payload, "IDLETIME", "1000").str, "OK");
    EXPECT_GE(c("OBJECT", "IDLETIME", "idle").integer, 1000);
    EXPECT_LT(c("OBJECT", "IDLETIME", "idle").integer, 1010);
    EXPECT_EQ(c("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu").str, "OK");
    EXPECT_EQ(c("RESTORE", "freq", "0", payload, "FREQ", "100").str, "OK");
    EXPECT_EQ(c("OBJECT", "FREQ", "freq").integer, 100);
    EXPECT_EQ(c("CONFIG", "SET", "maxmemory-policy", "noeviction").str, "OK");
  }
}

}  // namespace
}  // namespace vessel::test
