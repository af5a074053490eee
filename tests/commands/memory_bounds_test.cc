// What one command may allocate, family by family: a size an argument decides (an offset, a
// length, a count, a value copied into every match) is bounded by proto-max-bulk-len with a clear
// error, and under maxmemory a command that would grow past it is refused with Redis's OOM error
// after eviction had its chance; used memory stays bounded either way. Where Redis behaves the
// same the rows run on both servers; the maxmemory checks are vessel's own (Redis checks memory
// only before a command, so it lets one command allocate without bound).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

constexpr char kOom[] = "OOM command not allowed when used memory > 'maxmemory'.";
constexpr int64_t kMiB = int64_t{1} << 20;

int64_t InfoField(RespClient& c, const std::string& section, const std::string& field) {
  const Reply r = c("INFO", section);
  const auto at = r.str.find(field + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(r.str.substr(at + field.size() + 1));
}

int64_t UsedMemory(RespClient& c) { return InfoField(c, "memory", "used_memory"); }

class MemoryBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  void TearDown() override {
    OnBoth([](RespClient& c) {
      c("CONFIG", "SET", "proto-max-bulk-len", "512mb");
      c("CONFIG", "SET", "maxmemory-policy", "noeviction");
    });
    Servers::Get().Reset();  // FLUSHALL, maxmemory 0
  }
  // maxmemory `room` bytes above what vessel uses now (the test process's own allocations count:
  // the in-process server reads the process allocator).
  static void LimitVesselTo(RespClient& v, int64_t room) {
    ASSERT_EQ(v("CONFIG", "SET", "maxmemory", std::to_string(UsedMemory(v) + room)).str, "OK");
  }
  // Runs rows on vessel and checks that used memory grew by less than `bound` bytes.
  static void RunBounded(const std::vector<Row>& rows, int64_t bound) {
    RespClient v = Servers::Get().Vessel();
    const int64_t before = UsedMemory(v);
    RunVesselTable(rows);
    EXPECT_LT(UsedMemory(v) - before, bound) << "used_memory grew past the bound";
  }
};

// ---- strings, bitmaps ----

TEST_F(MemoryBoundsTest, StringOffsetsPastTheLimitFailAsInRedis) {
  RunTable({
      {{"SETRANGE", "s", "536870912", "x"},
       Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")},
      {{"SETBIT", "s", "4294967296", "1"},
       Error("ERR bit offset is not an integer or out of range")},
      {{"BITFIELD", "s", "SET", "u8", "4294967296", "1"},
       Error("ERR bit offset is not an integer or out of range")},
      {{"EXISTS", "s"}, Int(0)},
      {{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, Ok()},
      {{"SETRANGE", "s", "1048576", "x"},
       Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")},
      {{"SETBIT", "s", "8388608", "1"}, Error("ERR bit offset is not an integer or out of range")},
      {{"SETRANGE", "s", "1048575", "x"}, Int(1048576)},
      {{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, Ok()},
  });
}

TEST_F(MemoryBoundsTest, StringsDoNotGrowPastMaxmemory) {
  RespClient v = Servers::Get().Vessel();
  LimitVesselTo(v, 100 * kMiB);
  RunBounded(
      {
          {{"SETRANGE", "s", "209715200", "x"}, Error(kOom)},
          {{"SETBIT", "s", "1677721600", "1"}, Error(kOom)},
          {{"BITFIELD", "s", "SET", "u8", "1677721600", "1"}, Error(kOom)},
          {{"EXISTS", "s"}, Int(0)},
          {{"SET", "s", "abc"}, Ok()},
          {{"SETRANGE", "s", "209715200", "x"}, Error(kOom)},
          {{"GET", "s"}, Bulk("abc")},  // nothing changed
          {{"SETRANGE", "s", "1000", "x"}, Int(1001)},
          {{"SETBIT", "s", "80000", "1"}, Int(0)},
          {{"BITFIELD", "s", "SET", "u8", "160000", "1"}, Arr({Int(0)})},
          {{"STRLEN", "s"}, Int(20001)},
      },
      32 * kMiB);
}

// LCS's scratch table grows with the product of the two lengths: bounded by proto-max-bulk-len
// as in Redis 7.0, and by maxmemory.
TEST_F(MemoryBoundsTest, LcsScratchTableIsBounded) {
  const std::string a(1000, 'a'), b(1000, 'b');
  RunTable({
      {{"SET", "a", a}, Ok()},
      {{"SET", "b", b}, Ok()},
      {{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, Ok()},  // 1001 x 1001 x 4 bytes: 4 MB
      {{"LCS", "a", "b"},
       Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")},
      {{"SET", "b", "ab"}, Ok()},
      {{"LCS", "a", "b", "LEN"}, Int(1)},
      {{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, Ok()},
  });
  RespClient v = Servers::Get().Vessel();
  v("SET", "a", std::string(6000, 'a'));
  v("SET", "b", std::string(6000, 'b'));
  LimitVesselTo(v, 100 * kMiB);
  RunBounded({{{"LCS", "a", "b", "LEN"}, Error(kOom)}}, 32 * kMiB);  // a 144 MB table
}

// ---- lists: sizes follow the data, whatever the arguments say ----

TEST_F(MemoryBoundsTest, ListRangesAndCountsFollowTheData) {
  RespClient v = Servers::Get().Vessel();
  const int64_t before = UsedMemory(v);
  RunTable({
      {{"RPUSH", "l", "a", "b", "c"}, Int(3)},
      {{"LRANGE", "l", "0", "9223372036854775807"}, BulkArr({"a", "b", "c"})},
      {{"LRANGE", "l", "-9223372036854775807", "9223372036854775807"}, BulkArr({"a", "b", "c"})},
      {{"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "9223372036854775807"}, Arr({Int(2)})},
      {{"LPOS", "l", "a", "RANK", "-9223372036854775807", "COUNT", "9223372036854775807"}, Arr({})},
      {{"LINDEX", "l", "9223372036854775807"}, Nil()},
      {{"LMPOP", "1", "l", "LEFT", "COUNT", "9223372036854775807"},
       Arr({Bulk("l"), BulkArr({"a", "b", "c"})})},
      {{"RPUSH", "l", "x"}, Int(1)},
      {{"RPOP", "l", "9223372036854775807"}, BulkArr({"x"})},
      {{"SET", "s", "hello"}, Ok()},
      {{"GETRANGE", "s", "0", "9223372036854775807"}, Bulk("hello")},
      {{"GETRANGE", "s", "-9223372036854775807", "9223372036854775807"}, Bulk("hello")},
  });
  EXPECT_LT(UsedMemory(v) - before, 16 * kMiB);
}

// ---- sets, hashes, sorted sets: replies a negative count decides ----

TEST_F(MemoryBoundsTest, RandomRepliesFollowTheHostsLimit) {
  RespClient v = Servers::Get().Vessel();
  v("SADD", "s", "member-000", "member-001", "member-002", "member-003");
  v("HSET", "h", "field-0001", "v", "field-0002", "v");
  v("ZADD", "z", "1", "member-001", "2", "member-002");
  // A 1 MiB limit: 100,000 picks of ~26 bytes would pass it, 1,000 would not.
  RunBounded(
      {
          {{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, Ok()},
          {{"SRANDMEMBER", "s", "-100000"},
           Error("ERR value is out of range, the reply would be too large")},
          {{"HRANDFIELD", "h", "-100000"},
           Error("ERR value is out of range, the reply would be too large")},
          {{"ZRANDMEMBER", "z", "-100000"},
           Error("ERR value is out of range, the reply would be too large")},
          {{"SRANDMEMBER", "s", "-9223372036854775807"},
           Error("ERR value is out of range, the reply would be too large")},
          {{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, Ok()},
      },
      16 * kMiB);
  EXPECT_EQ(v("SRANDMEMBER", "s", "-1000").elems.size(), 1000u);
  EXPECT_EQ(v("HRANDFIELD", "h", "-1000", "WITHVALUES").elems.size(), 2000u);
  EXPECT_EQ(v("ZRANDMEMBER", "z", "-1000").elems.size(), 1000u);
}

// ---- geo: searches return what the data holds ----

TEST_F(MemoryBoundsTest, GeoCountsFollowTheData) {
  RespClient v = Servers::Get().Vessel();
  const int64_t before = UsedMemory(v);
  RunTable({
      {{"GEOADD", "g", "13.361389", "38.115556", "a", "15.087269", "37.502669", "b"}, Int(2)},
      {{"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "20000", "km", "ASC", "COUNT",
        "9223372036854775807"},
       BulkArr({"b", "a"})},
      {{"GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "20000", "km", "COUNT",
        "9223372036854775807"},
       Int(2)},
      {{"ZRANGESTORE", "e", "d", "0", "9223372036854775807"}, Int(2)},
  });
  EXPECT_LT(UsedMemory(v) - before, 16 * kMiB);
}

// ---- vectors ----

TEST_F(MemoryBoundsTest, VectorResizeIsBounded) {
  RunBounded(
      {
          // 100M slots of 16 bytes: 1.6 GB from a 9-byte argument.
          {{"VEC.RESIZE", "v", "100000000"},
           Error("ERR vector growth exceeds maximum allowed size (proto-max-bulk-len)")},
          {{"EXISTS", "v"}, Int(0)},
          {{"VEC.PUSH", "v", "a"}, Int(1)},
          {{"VEC.RESIZE", "v", "100000000", "x"},
           Error("ERR vector growth exceeds maximum allowed size (proto-max-bulk-len)")},
          {{"VEC.LEN", "v"}, Int(1)},
          {{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, Ok()},
          // Long fills count their own blocks: 1,000 copies of 2,000 bytes.
          {{"VEC.RESIZE", "v", "1000", std::string(2000, 'f')},
           Error("ERR vector growth exceeds maximum allowed size (proto-max-bulk-len)")},
          {{"VEC.RESIZE", "v", "65538"},  // 65,537 more slots: 16 bytes past 1 MiB
           Error("ERR vector growth exceeds maximum allowed size (proto-max-bulk-len)")},
          {{"VEC.RESIZE", "v", "10000"}, Int(10000)},
          {{"VEC.RESIZE", "v", "3"}, Int(3)},  // shrinking allocates nothing
          {{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, Ok()},
      },
      32 * kMiB);
}

TEST_F(MemoryBoundsTest, VectorsDoNotGrowPastMaxmemory) {
  RespClient v = Servers::Get().Vessel();
  LimitVesselTo(v, 100 * kMiB);
  RunBounded(
      {
          {{"VEC.RESIZE", "v", "10000000"}, Error(kOom)},  // 160 MB
          {{"EXISTS", "v"}, Int(0)},
          {{"VEC.RESIZE", "v", "1000"}, Int(1000)},
          {{"VEC.RESIZE", "v", "10000000"}, Error(kOom)},
          {{"VEC.LEN", "v"}, Int(1000)},
      },
      32 * kMiB);
}

// Under an evicting policy the host makes room first: older keys go, the command runs. Used
// memory is injected as the modules' allocated bytes (sanitizer builds have no allocator
// statistics; the source stays set for the tests after this one, which only compare requests far
// past their room).
TEST_F(MemoryBoundsTest, GrowingEvictsFirstUnderAnEvictingPolicy) {
  Servers::Get().UseModuleBytesAsUsedMemory();
  RespClient v = Servers::Get().Vessel();
  const std::string mib(kMiB, 'x');
  const int64_t limit = Servers::ModuleBytes() + 100 * kMiB;
  ASSERT_EQ(v("CONFIG", "SET", "maxmemory", std::to_string(limit)).str, "OK");
  ASSERT_EQ(v("CONFIG", "SET", "maxmemory-policy", "allkeys-lru").str, "OK");
  for (int i = 0; i < 40; ++i) ASSERT_EQ(v("SET", "k" + std::to_string(i), mib).str, "OK");
  const int64_t evicted = InfoField(v, "stats", "evicted_keys");
  // 64 MB more: fits only once some of the 40 MB of strings are gone.
  EXPECT_EQ(v("VEC.RESIZE", "v", "4000000").integer, 4000000);
  EXPECT_GT(InfoField(v, "stats", "evicted_keys"), evicted);
  EXPECT_LT(v("DBSIZE").integer, 41);
  EXPECT_EQ(v("VEC.LEN", "v").integer, 4000000);
  // What no eviction can make room for is still refused, and the vector stays.
  EXPECT_EQ(v("VEC.RESIZE", "v", "30000000").str, kOom);
  EXPECT_EQ(v("VEC.LEN", "v").integer, 4000000);
}

// ---- multi_index: one value copied into every matching record ----

TEST_F(MemoryBoundsTest, MultiIndexUpdateIsBounded) {
  RespClient v = Servers::Get().Vessel();
  ASSERT_EQ(v("MI.CREATE", "m", "INDEX", "g", "grp", "HASH").str, "OK");
  for (int i = 0; i < 2000; ++i) v("MI.INSERT", "m", "grp", "x", "n", std::to_string(i));
  const std::string big(100 * 1024, 'v');
  RunBounded(
      {
          {{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, Ok()},
          // 2,000 records x 100 KB: 200 MB from one 100 KB argument.
          {{"MI.UPDATE", "m", "g", "x", "f", big},
           Error("ERR update exceeds maximum allowed size (proto-max-bulk-len)")},
          {{"MI.UPDATE", "m", "g", "x", "f", "small"}, Int(2000)},
          {{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, Ok()},
      },
      32 * kMiB);
  LimitVesselTo(v, 100 * kMiB);
  RunBounded(
      {
          {{"MI.UPDATE", "m", "g", "x", "f", big}, Error(kOom)},
          {{"MI.CARD", "m"}, Int(2000)},
          {{"MI.UPDATEBYID", "m", "1", "f", big}, Int(1)},  // one record: room enough
      },
      32 * kMiB);
}

}  // namespace
}  // namespace vessel::test
