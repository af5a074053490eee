// DUMP and RESTORE with Redis's payload (an RDB record, the RDB version, CRC64): payloads move
// between vessel and a real redis-server in both directions, small values dump to the same bytes,
// and damaged payloads get Redis's errors.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/persist/rdb_file.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

// Moves every key of every database from `from` to `to` with DUMP and RESTORE (with its TTL).
void Transfer(RespClient& from, RespClient& to) {
  for (int db : {0, 1, 15}) {
    from("SELECT", std::to_string(db));
    to("SELECT", std::to_string(db));
    for (const Reply& k : from("KEYS", "*").elems) {
      Reply payload = from("DUMP", k.str);
      ASSERT_EQ(payload.type, Reply::Type::kBulk) << k.str << " " << payload.ToString();
      int64_t ttl = from("PTTL", k.str).integer;
      Reply r = to("RESTORE", k.str, std::to_string(ttl < 0 ? 0 : ttl), payload.str);
      EXPECT_EQ(r.str, "OK") << k.str;
    }
  }
  from("SELECT", "0");
  to("SELECT", "0");
}

TEST(Dump, RedisPayloadsRestoreInVessel) {
  Servers& s = Servers::Get();
  s.Reset();
  RespClient v = s.Vessel(), r = s.Redis();
  Fill(r);
  Transfer(r, v);
  ExpectSameData(Describe(r), Describe(v));
}

TEST(Dump, VesselPayloadsRestoreInRedisWithItsEncodings) {
  Servers& s = Servers::Get();
  s.Reset();
  RespClient v = s.Vessel(), r = s.Redis();
  Fill(r);
  const auto expected = Describe(r, /*encodings=*/true);
  r("FLUSHALL");
  Fill(v);
  Transfer(v, r);
  ExpectSameData(expected, Describe(r, /*encodings=*/true));
}

TEST(Dump, SmallValuesDumpToRedisBytes) {
  Servers& s = Servers::Get();
  s.Reset();
  OnBoth([](RespClient& c) {
    c("SET", "s", "hello");
    c("SET", "n", "-12345");
    c("SET", "long", std::string(100, 'x'));
    c("RPUSH", "l", "a", "1", "bb", "-300000");
    c("SADD", "is", "5", "1", "70000");
    c("SADD", "ss", "x");
    c("ZADD", "z", "1", "a", "2.5", "b");
  });
  RespClient v = s.Vessel(), r = s.Redis();
  for (const char* key : {"s", "n", "long", "l", "is", "ss", "z"}) {
    Reply a = v("DUMP", key), b = r("DUMP", key);
    EXPECT_TRUE(a.type == Reply::Type::kBulk && a.str == b.str)
        << key << " vessel " << a.ToString() << " redis " << b.ToString();
  }
}

TEST(Dump, RestoreOptionsAndErrorsAsRedis) {
  Servers& s = Servers::Get();
  s.Reset();
  RespClient r = s.Redis();
  r("SET", "src", "value");
  const std::string good = r("DUMP", "src").str;
  std::string bad_crc = good;
  bad_crc[0] ^= 1;
  // A valid frame around a record that is not a value: a string whose length runs past the end.
  const std::string bad_data = persist::MakeDumpPayload(std::string("\x00\x40\xff", 3));
  const std::string unknown_type = persist::MakeDumpPayload(std::string("\x63\x01x", 3));
  std::string future = good;
  future[future.size() - 10] = 99;  // RDB version 99
  RunTable({
      {{"RESTORE", "k", "0", good}, Ok()},
      {{"GET", "k"}, Bulk("value")},
      {{"RESTORE", "k", "0", good}, Error("BUSYKEY Target key name already exists.")},
      {{"RESTORE", "k", "0", good, "REPLACE"}, Ok()},
      {{"RESTORE", "t", "100000", good}, Ok()},
      {{"PTTL", "t"}, ClockReading(90000, 100000)},
      {{"RESTORE", "t", "1", good, "REPLACE", "ABSTTL"}, Ok()},
      {{"EXISTS", "t"}, Int(0)},
      {{"RESTORE", "k2", "0", bad_crc}, Error("ERR DUMP payload version or checksum are wrong")},
      {{"RESTORE", "k2", "0", future}, Error("ERR DUMP payload version or checksum are wrong")},
      {{"RESTORE", "k2", "0", "x"}, Error("ERR DUMP payload version or checksum are wrong")},
      {{"RESTORE", "k2", "0", bad_data}, Error("ERR Bad data format")},
      {{"RESTORE", "k2", "0", unknown_type}, Error("ERR Bad data format")},
      {{"RESTORE", "k2", "-1", good}, Error("ERR Invalid TTL value, must be >= 0")},
      {{"RESTORE", "k2", "0", good, "IDLETIME", "10"}, Ok()},
      {{"OBJECT", "IDLETIME", "k2"}, ClockReading(10, 11)},
      {{"DUMP", "missing"}, Nil()},
  });
}

}  // namespace
}  // namespace vessel::test
