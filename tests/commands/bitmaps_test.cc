// The bitmap commands of the strings module (SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
// BITFIELD_RO) against vessel and redis-server: every row runs on both, must meet its
// expectation on both, and the two replies must be identical. Random ranges and random BITFIELD
// programs are compared reply by reply, and the stored bytes after them.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kOffset[] = "ERR bit offset is not an integer or out of range";
constexpr char kBit[] = "ERR bit is not an integer or out of range";
constexpr char kType[] =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";
constexpr char kRoOnlyGet[] = "ERR BITFIELD_RO only supports the GET subcommand";
constexpr char kNotSingle[] = "ERR BITOP NOT must be called with a single source key.";
constexpr char kBitArg[] = "ERR The bit argument must be 1 or 0.";
constexpr char kOverflowType[] = "ERR Invalid OVERFLOW type specified";

std::string Str(int64_t v) { return std::to_string(v); }

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class BitmapsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- SETBIT / GETBIT ----

TEST_F(BitmapsTest, SetBitAndGetBit) {
  RunTable({
      {{"GETBIT", "k", "0"}, Int(0)},
      {{"GETBIT", "k", "4294967295"}, Int(0)},
      {{"EXISTS", "k"}, Int(0)},
      {{"SETBIT", "k", "0", "1"}, Int(0)},
      {{"GET", "k"}, Bulk("\x80")},
      {{"SETBIT", "k", "0", "1"}, Int(1)},
      {{"SETBIT", "k", "7", "1"}, Int(0)},
      {{"GET", "k"}, Bulk("\x81")},
      {{"SETBIT", "k", "0", "0"}, Int(1)},
      {{"GET", "k"}, Bulk("\x01")},
      {{"SETBIT", "k", "8", "0"}, Int(0)},  // grows with a zero byte though the bit is 0
      {{"GET", "k"}, Bulk("\x01\x00"s)},
      {{"SETBIT", "k", "100", "1"}, Int(0)},
      {{"STRLEN", "k"}, Int(13)},
      {{"GETBIT", "k", "100"}, Int(1)},
      {{"GETBIT", "k", "101"}, Int(0)},
      {{"GETBIT", "k", "7"}, Int(1)},
      {{"GETBIT", "k", "1000"}, Int(0)},
      {{"OBJECT", "ENCODING", "k"}, Bulk("raw")},
      // The bits of the decimal text of a number.
      {{"SET", "n", "5"}, Ok()},
      {{"GETBIT", "n", "2"}, Int(1)},
      {{"GETBIT", "n", "3"}, Int(1)},
      {{"SETBIT", "n", "6", "1"}, Int(0)},
      {{"GET", "n"}, Bulk("7")},
      {{"OBJECT", "ENCODING", "n"}, Bulk("raw")},
      {{"SET", "h", "a-value-longer-than-seven-bytes"}, Ok()},
      {{"SETBIT", "h", "2", "1"}, Int(1)},  // unchanged, but opened for writing
      {{"OBJECT", "ENCODING", "h"}, Bulk("raw")},
      {{"SETBIT", "h", "250", "1"}, Int(0)},
      {{"GET", "h"}, Bulk("a-value-longer-than-seven-bytes\x20")},
      // Offsets: integers from 0 to 2^32 - 1 (the last bit of 512 MB).
      {{"SETBIT", "k", "-1", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "4294967296", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "18446744073709551616", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "1.5", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "01", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "+1", "1"}, Error(kOffset)},
      {{"SETBIT", "k", " 1", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "", "1"}, Error(kOffset)},
      {{"SETBIT", "k", "#1", "1"}, Error(kOffset)},
      {{"GETBIT", "k", "-1"}, Error(kOffset)},
      {{"GETBIT", "k", "4294967296"}, Error(kOffset)},
      {{"GETBIT", "k", "x"}, Error(kOffset)},
      // Values: 0 or 1, checked after the offset.
      {{"SETBIT", "k", "1", "2"}, Error(kBit)},
      {{"SETBIT", "k", "1", "-1"}, Error(kBit)},
      {{"SETBIT", "k", "1", "x"}, Error(kBit)},
      {{"SETBIT", "k", "1", ""}, Error(kBit)},
      {{"SETBIT", "k", "1", "01"}, Error(kBit)},
      {{"SETBIT", "k", "1", "99999999999999999999"}, Error(kBit)},
      {{"SETBIT", "k", "x", "2"}, Error(kOffset)},
      {{"GET", "k"}, Any()},
  });
}

TEST_F(BitmapsTest, TheLastBitOf512Megabytes) {
  RunTable({
      {{"SETBIT", "big", "4294967295", "1"}, Int(0)},
      {{"STRLEN", "big"}, Int(536870912)},
      {{"GETBIT", "big", "4294967295"}, Int(1)},
      {{"GETBIT", "big", "4294967294"}, Int(0)},
      {{"BITCOUNT", "big"}, Int(1)},
      {{"BITCOUNT", "big", "-1", "-1"}, Int(1)},
      {{"BITCOUNT", "big", "0", "-2"}, Int(0)},
      {{"BITCOUNT", "big", "4294967295", "4294967295", "BIT"}, Int(1)},
      {{"BITPOS", "big", "1"}, Int(4294967295)},
      {{"BITPOS", "big", "0", "-1"}, Int(4294967288)},
      {{"BITPOS", "big", "1", "-2", "-1"}, Int(4294967295)},
      {{"BITPOS", "big", "1", "0", "-2"}, Int(-1)},
      {{"BITFIELD", "big", "GET", "u8", "#536870911"}, Arr({Int(1)})},
      {{"BITFIELD", "big", "SET", "u8", "#536870911", "255", "GET", "i4", "4294967292"},
       Arr({Int(1), Int(-1)})},
      {{"BITFIELD_RO", "big", "GET", "u1", "4294967296"}, Error(kOffset)},
      {{"SETBIT", "big", "4294967296", "1"}, Error(kOffset)},
      {{"BITFIELD", "big", "GET", "u8", "#536870912"}, Error(kOffset)},
      // A field that starts in the last byte may end past it: the string grows to hold it.
      {{"BITFIELD", "big", "SET", "u16", "4294967295", "1"}, Arr({Int(32768)})},
      {{"STRLEN", "big"}, Int(536870914)},
      {{"DEL", "big"}, Int(1)},
  });
}

// SETBIT and BITFIELD change the value in place or move it to a bigger block: the TTL stays.
TEST_F(BitmapsTest, WritesKeepTheTtl) {
  auto ttl = [](const std::string& key) {
    return Row{{"TTL", key}, IntRange(90, 100), Diff::kSkip, "seconds left may differ by one"};
  };
  RunTable({
      {{"SET", "t", "x", "EX", "100"}, Ok()},
      {{"SETBIT", "t", "0", "1"}, Int(0)},
      ttl("t"),
      {{"SETBIT", "t", "1000", "1"}, Int(0)},
      ttl("t"),
      {{"BITFIELD", "t", "SET", "u8", "#500", "7"}, Arr({Int(0)})},
      ttl("t"),
      {{"BITFIELD", "t", "INCRBY", "u8", "#1", "7"}, Arr({Int(7)})},
      ttl("t"),
      {{"GET", "t"}, Any()},
  });
}

// Whether a WATCH of key k on one connection sees `cmd` sent from another, on both servers.
void ExpectWatchSees(const Strings& cmd, bool seen) {
  for (const bool vessel : {true, false}) {
    RespClient a = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
    RespClient b = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
    a("WATCH", "k");
    b.Cmd(cmd);
    a("MULTI");
    a("PING");
    const Reply exec = a("EXEC");
    EXPECT_EQ(exec.type == Reply::Type::kNilArray, seen)
        << Show(cmd) << (vessel ? " on vessel: " : " on redis: ") << exec.ToString();
  }
}

// A write that changes nothing is no modification for WATCH, as in Redis.
TEST_F(BitmapsTest, WatchSeesRealChangesOnly) {
  RunTable({{{"SET", "k", "a-value-on-the-heap"}, Ok()}});
  ExpectWatchSees({"SETBIT", "k", "1", "1"}, false);  // 'a' = 01100001
  ExpectWatchSees({"SETBIT", "k", "0", "1"}, true);
  ExpectWatchSees({"BITFIELD", "k", "SET", "u8", "0", "225", "GET", "u8", "0"}, false);
  ExpectWatchSees({"BITFIELD", "k", "INCRBY", "u8", "0", "1"}, true);
  ExpectWatchSees({"BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "255"}, false);
  ExpectWatchSees({"BITFIELD_RO", "k", "GET", "u8", "0"}, false);
  ExpectWatchSees({"SETBIT", "k", "1000", "0"}, true);  // grows the string
  ExpectWatchSees({"BITOP", "NOT", "k", "k"}, true);
  RunTable({{{"GET", "k"}, Any()}});
}

// A smaller proto-max-bulk-len lowers the bound of every offset, as in Redis.
TEST_F(BitmapsTest, OffsetsFollowProtoMaxBulkLen) {
  RunTable({
      {{"CONFIG", "SET", "proto-max-bulk-len", "1048576"}, Ok()},
      {{"SETBIT", "k", "8388607", "1"}, Int(0)},
      {{"SETBIT", "k", "8388608", "1"}, Error(kOffset)},
      {{"GETBIT", "k", "8388608"}, Error(kOffset)},
      {{"BITFIELD", "k", "GET", "u8", "#1048575"}, Arr({Int(1)})},
      {{"BITFIELD", "k", "GET", "u8", "#1048576"}, Error(kOffset)},
      {{"STRLEN", "k"}, Int(1048576)},
      {{"CONFIG", "SET", "proto-max-bulk-len", "536870912"}, Ok()},
      {{"SETBIT", "k", "8388608", "1"}, Int(0)},
  });
}

// ---- BITCOUNT / BITPOS ----

TEST_F(BitmapsTest, BitCount) {
  RunTable({
      {{"BITCOUNT", "nokey"}, Int(0)},
      {{"BITCOUNT", "nokey", "0"}, Int(0)},  // no key: 0 before the arguments are looked at
      {{"BITCOUNT", "nokey", "x", "y", "z"}, Int(0)},
      {{"SET", "k", "foobar"}, Ok()},
      {{"BITCOUNT", "k"}, Int(26)},
      {{"BITCOUNT", "k", "0", "0"}, Int(4)},
      {{"BITCOUNT", "k", "1", "1"}, Int(6)},
      {{"BITCOUNT", "k", "1", "1", "BYTE"}, Int(6)},
      {{"BITCOUNT", "k", "5", "30", "BIT"}, Int(17)},
      {{"BITCOUNT", "k", "5", "30", "bit"}, Int(17)},
      {{"BITCOUNT", "k", "0", "-1"}, Int(26)},
      {{"BITCOUNT", "k", "-2", "-1"}, Int(7)},
      {{"BITCOUNT", "k", "-100", "100"}, Int(26)},
      {{"BITCOUNT", "k", "-1", "-2"}, Int(0)},
      {{"BITCOUNT", "k", "-1", "-2", "FOO"}, Int(0)},  // the empty range wins over the word
      {{"BITCOUNT", "k", "3", "1"}, Int(0)},
      {{"BITCOUNT", "k", "6", "100"}, Int(0)},
      {{"BITCOUNT", "k", "-3", "-1", "BIT"}, Int(1)},
      {{"BITCOUNT", "k", "0", "47", "BIT"}, Int(26)},
      {{"BITCOUNT", "k", "47", "47", "BIT"}, Int(0)},
      {{"BITCOUNT", "k", "1", "1", "BIT"}, Int(1)},
      {{"BITCOUNT", "k", "0"}, Error(kSyntax)},
      {{"BITCOUNT", "k", "0", "1", "2", "3"}, Error(kSyntax)},
      {{"BITCOUNT", "k", "0", "1", "BITS"}, Error(kSyntax)},
      {{"BITCOUNT", "k", "0", "1", "bit\0"s}, Int(1)},  // compared as a C string, as Redis
      {{"BITCOUNT", "k", "x", "1"}, Error(kNotInt)},
      {{"BITCOUNT", "k", "0", "1.0"}, Error(kNotInt)},
      {{"BITCOUNT", "k", "x", "1", "FOO"}, Error(kNotInt)},
      {{"SET", "e", ""}, Ok()},
      {{"BITCOUNT", "e"}, Int(0)},
      {{"BITCOUNT", "e", "0", "-1"}, Int(0)},
      {{"BITCOUNT", "e", "0", "-1", "BIT"}, Int(0)},
      {{"SET", "n", "12345"}, Ok()},
      {{"BITCOUNT", "n"}, Int(17)},
  });
}

TEST_F(BitmapsTest, BitPos) {
  RunTable({
      {{"BITPOS", "nokey", "1"}, Int(-1)},
      {{"BITPOS", "nokey", "0"}, Int(0)},
      {{"BITPOS", "nokey", "0", "x", "y", "z", "w"}, Int(0)},
      {{"BITPOS", "nokey", "2"}, Error(kBitArg)},
      {{"BITPOS", "nokey", "x"}, Error(kNotInt)},
      {{"SET", "k", "\xff\xf0\x00"s}, Ok()},
      {{"BITPOS", "k", "0"}, Int(12)},
      {{"BITPOS", "k", "1"}, Int(0)},
      {{"BITPOS", "k", "1", "2"}, Int(-1)},
      {{"BITPOS", "k", "0", "2"}, Int(16)},
      {{"BITPOS", "k", "1", "1", "-1"}, Int(8)},
      {{"BITPOS", "k", "0", "0", "0"}, Int(-1)},  // an explicit end: no zero padding
      {{"BITPOS", "k", "0", "0"}, Int(12)},
      {{"BITPOS", "k", "1", "7", "15", "BIT"}, Int(7)},
      {{"BITPOS", "k", "0", "7", "15", "BIT"}, Int(12)},
      {{"BITPOS", "k", "0", "2", "9", "BIT"}, Int(-1)},
      {{"BITPOS", "k", "1", "12", "-1", "bit"}, Int(-1)},
      {{"BITPOS", "k", "0", "-3", "-1", "BYTE"}, Int(12)},
      {{"BITPOS", "k", "1", "3", "1"}, Int(-1)},
      {{"BITPOS", "k", "0", "100"}, Int(-1)},
      {{"BITPOS", "k", "0", "-100", "-50"}, Int(-1)},
      {{"BITPOS", "k", "1", "0", "1", "BITS"}, Error(kSyntax)},
      {{"BITPOS", "k", "1", "x"}, Error(kNotInt)},
      {{"BITPOS", "k", "1", "0", "x"}, Error(kNotInt)},
      {{"BITPOS", "k", "1", "x", "1", "FOO"}, Error(kNotInt)},
      {{"BITPOS", "k", "1", "0", "x", "FOO"}, Error(kSyntax)},  // the word before the end
      {{"BITPOS", "k", "1", "0", "1", "BIT", "x"}, Error(kSyntax)},
      {{"BITPOS", "k", "2"}, Error(kBitArg)},
      {{"BITPOS", "k", "-1"}, Error(kBitArg)},
      {{"SET", "ones", "\xff\xff"s}, Ok()},
      {{"BITPOS", "ones", "0"}, Int(16)},
      {{"BITPOS", "ones", "0", "0"}, Int(16)},
      {{"BITPOS", "ones", "0", "0", "-1"}, Int(-1)},
      {{"BITPOS", "ones", "0", "0", "15", "BIT"}, Int(-1)},
      {{"SET", "e", ""}, Ok()},
      {{"BITPOS", "e", "0"}, Int(-1)},
      {{"BITPOS", "e", "1"}, Int(-1)},
  });
}

// Random ranges over a random value (and a long run of zeros and ones to cross whole words).
TEST_F(BitmapsTest, RandomRangesAgreeWithRedis) {
  std::mt19937_64 rng(7);
  const std::string value =
      RandomBytes(rng, 150) + std::string(70, '\0') + std::string(70, '\xff') + RandomBytes(rng, 9);
  const int64_t len = static_cast<int64_t>(value.size());
  std::vector<Row> rows = {{{"SET", "k", value}, Ok()}};
  auto index = [&](int64_t n) { return static_cast<int64_t>(rng() % (2 * n + 20)) - n - 10; };
  for (int i = 0; i < 1500; ++i) {
    const bool in_bits = rng() % 2;
    const int64_t n = in_bits ? len * 8 : len;
    const std::string unit = in_bits ? "BIT" : "BYTE";
    const std::string a = Str(index(n)), b = Str(index(n)), bit = Str(rng() % 2);
    switch (rng() % 5) {
      case 0:
        rows.push_back({{"BITCOUNT", "k", a, b, unit}, Any()});
        break;
      case 1:
        rows.push_back({{"BITCOUNT", "k", a, b}, Any()});
        break;
      case 2:
        rows.push_back({{"BITPOS", "k", bit, a, b, unit}, Any()});
        break;
      case 3:
        rows.push_back({{"BITPOS", "k", bit, a, b}, Any()});
        break;
      default:
        rows.push_back({{"BITPOS", "k", bit, a}, Any()});
        break;
    }
  }
  RunTable(rows);
}

// ---- BITOP ----

TEST_F(BitmapsTest, BitOp) {
  RunTable({
      {{"SET", "a", "foobar"}, Ok()},
      {{"SET", "b", "abcdef"}, Ok()},
      {{"SET", "c", "\x0f\xf0"s}, Ok()},
      {{"BITOP", "AND", "d", "a", "b"}, Int(6)},
      {{"GET", "d"}, Bulk("`bc`ab")},
      {{"BITOP", "or", "d", "a", "b"}, Int(6)},
      {{"GET", "d"}, Bulk("goofev")},
      {{"BITOP", "XOR", "d", "a", "b"}, Int(6)},
      {{"GET", "d"}, Any()},
      {{"BITOP", "NOT", "d", "c"}, Int(2)},
      {{"GET", "d"}, Bulk("\xf0\x0f"s)},
      {{"OBJECT", "ENCODING", "d"}, Bulk("raw")},
      // Shorter sources read as zero-padded; missing keys as empty strings.
      {{"BITOP", "AND", "d", "a", "c"}, Int(6)},
      {{"GET", "d"}, Bulk("\x06\x60\x00\x00\x00\x00"s)},
      {{"BITOP", "OR", "d", "c", "a"}, Int(6)},
      {{"GET", "d"}, Any()},
      {{"BITOP", "XOR", "d", "c", "nokey", "a"}, Int(6)},
      {{"GET", "d"}, Any()},
      {{"BITOP", "AND", "d", "a", "nokey"}, Int(6)},
      {{"GET", "d"}, Bulk(std::string(6, '\0'))},
      {{"BITOP", "OR", "d", "a"}, Int(6)},
      {{"GET", "d"}, Bulk("foobar")},
      {{"BITOP", "AND", "d", "a", "a", "a", "b", "b"}, Int(6)},
      {{"GET", "d"}, Bulk("`bc`ab")},
      {{"BITOP", "XOR", "a", "a", "b"}, Int(6)},  // the destination may be a source
      {{"GET", "a"}, Any()},
      // Nothing but missing or empty sources: the destination is deleted.
      {{"SET", "e", ""}, Ok()},
      {{"BITOP", "OR", "d", "nokey", "e"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      {{"BITOP", "NOT", "d", "nokey"}, Int(0)},
      {{"EXISTS", "d"}, Int(0)},
      // The destination is overwritten whatever it held, and loses its TTL.
      {{"SADD", "set", "x"}, Int(1)},
      {{"BITOP", "NOT", "set", "c"}, Int(2)},
      {{"TYPE", "set"}, Simple("string")},
      {{"SET", "t", "v", "EX", "100"}, Ok()},
      {{"BITOP", "OR", "t", "c"}, Int(2)},
      {{"TTL", "t"}, Int(-1)},
      // Errors: the operation, then NOT's arity, then the sources' types.
      {{"BITOP", "NAND", "d", "a"}, Error(kSyntax)},
      {{"BITOP", "NOT", "d", "a", "b"}, Error(kNotSingle)},
      {{"BITOP", "NAND", "d", "a", "b"}, Error(kSyntax)},
      {{"SADD", "s", "x"}, Int(1)},
      {{"BITOP", "AND", "d", "a", "s"}, WrongType()},
      {{"BITOP", "NOT", "d", "s"}, WrongType()},
      {{"BITOP", "NOT", "d"}, Error("ERR wrong number of arguments for 'bitop' command")},
      {{"BITOP", "not\0"s, "d", "c"}, Int(2)},  // compared as a C string, as Redis
  });
}

// Long random values of several lengths: the word-at-a-time paths and their tails.
TEST_F(BitmapsTest, BitOpOnLongValues) {
  std::mt19937_64 rng(11);
  std::vector<Row> rows;
  const Strings keys = {"a", "b", "c", "d"};
  const size_t lengths[] = {100001, 99999, 65536, 3};
  for (size_t i = 0; i < keys.size(); ++i)
    rows.push_back({{"SET", keys[i], RandomBytes(rng, lengths[i])}, Ok()});
  for (const char* op : {"AND", "OR", "XOR"}) {
    rows.push_back({{"BITOP", op, "r", "a", "b", "c", "d"}, Int(100001)});
    rows.push_back({{"GET", "r"}, Any()});
    rows.push_back({{"BITOP", op, "r", "c", "b"}, Int(99999)});
    rows.push_back({{"GET", "r"}, Any()});
    rows.push_back({{"BITCOUNT", "r"}, Any()});
  }
  rows.push_back({{"BITOP", "NOT", "r", "a"}, Int(100001)});
  rows.push_back({{"GET", "r"}, Any()});
  rows.push_back({{"BITCOUNT", "a"}, Any()});
  rows.push_back({{"BITCOUNT", "a", "13", "-17"}, Any()});
  rows.push_back({{"BITCOUNT", "a", "13", "-17", "BIT"}, Any()});
  RunTable(rows);
}

// ---- BITFIELD ----

TEST_F(BitmapsTest, Bitfield) {
  RunTable({
      {{"BITFIELD", "k"}, Arr({})},
      {{"BITFIELD", "k", "OVERFLOW", "SAT"}, Arr({})},
      {{"BITFIELD", "k", "GET", "u8", "0", "GET", "i64", "100"}, Arr({Int(0), Int(0)})},
      {{"EXISTS", "k"}, Int(0)},  // only GETs: nothing created
      {{"BITFIELD", "k", "INCRBY", "i5", "100", "1", "GET", "u4", "0"}, Arr({Int(1), Int(0)})},
      {{"STRLEN", "k"}, Int(14)},
      {{"BITFIELD", "k", "SET", "i8", "#0", "100", "SET", "i8", "#1", "-100"},
       Arr({Int(0), Int(0)})},
      {{"BITFIELD", "k", "GET", "i8", "#0", "GET", "u8", "#1", "GET", "i16", "0"},
       Arr({Int(100), Int(156), Int(25756)})},
      {{"BITFIELD", "k", "incrby", "u2", "100", "1", "OVERFLOW", "SAT", "incrby", "u2", "102", "1"},
       Arr({Int(1), Int(1)})},
      {{"BITFIELD", "k", "incrby", "u2", "100", "1", "OVERFLOW", "SAT", "incrby", "u2", "102", "1"},
       Arr({Int(2), Int(2)})},
      {{"BITFIELD", "k", "OVERFLOW", "FAIL", "incrby", "u2", "102", "1", "GET", "u2", "102"},
       Arr({Int(3), Int(3)})},
      {{"BITFIELD", "k", "OVERFLOW", "FAIL", "incrby", "u2", "102", "1", "GET", "u2", "102"},
       Arr({Nil(), Int(3)})},
      {{"BITFIELD", "k", "OVERFLOW", "SAT", "incrby", "u2", "102", "1", "incrby", "u2", "100",
        "-5"},
       Arr({Int(3), Int(0)})},
      {{"BITFIELD", "k", "OVERFLOW", "wrap", "SET", "u8", "0", "256", "SET", "u8", "0", "-1"},
       Arr({Int(100), Int(0)})},
      {{"BITFIELD", "k", "GET", "u8", "0"}, Arr({Int(255)})},
      {{"BITFIELD", "k", "OVERFLOW", "SAT", "SET", "i8", "0", "-1000", "SET", "u8", "0", "-1"},
       Arr({Int(-1), Int(128)})},
      {{"BITFIELD", "k", "GET", "u8", "0"}, Arr({Int(255)})},
      {{"BITFIELD", "k", "SET", "i64", "0", "-9223372036854775808", "GET", "i64", "0"},
       Arr({Any(), Int(INT64_MIN)})},
      {{"BITFIELD", "k", "SET", "u63", "0", "9223372036854775807", "GET", "u63", "0"},
       Arr({Any(), Int(INT64_MAX)})},
      {{"BITFIELD", "k", "INCRBY", "i64", "0", "-1", "OVERFLOW", "FAIL", "INCRBY", "i64", "0",
        "-9223372036854775808"},
       Arr({Int(-3), Nil()})},
      // A FAIL that writes nothing still creates and sizes the key, as in Redis.
      {{"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "20", "10"}, Arr({Nil()})},
      {{"GET", "f"}, Bulk("\0\0\0"s)},
      // "#N" offsets are N times the width; a huge N wraps like Redis's long long product.
      {{"BITFIELD", "k", "SET", "u4", "#3", "9", "GET", "u4", "12", "GET", "u8", "#1"},
       Arr({Any(), Int(9), Any()})},
      {{"BITFIELD", "k", "GET", "u8", "#2305843009213693952"}, Arr({Int(255)})},
      {{"BITFIELD", "k", "GET", "u8", "#-1"}, Error(kOffset)},
      {{"BITFIELD", "k", "GET", "u8", "#"}, Error(kOffset)},
      {{"BITFIELD", "k", "GET", "u8", "##1"}, Error(kOffset)},
      {{"BITFIELD", "k", "GET", "u8", "#9223372036854775807"}, Error(kOffset)},
      {{"BITFIELD", "k", "GET", "u8", "-1"}, Error(kOffset)},
      // Types: i1..i64 and u1..u63, case-sensitive; the width stops at a NUL as in C.
      {{"BITFIELD", "k", "GET", "u64", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "i65", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "i0", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "u0", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "I8", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "x8", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "i", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "i08", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "i-8", "0"}, Error(kType)},
      {{"BITFIELD", "k", "GET", "u8\0junk"s, "0"}, Arr({Int(255)})},
      {{"BITFIELD", "k", "GET", "i64", "0", "GET", "u63", "0", "GET", "i1", "0", "GET", "u1", "0"},
       Arr({Any(), Any(), Any(), Any()})},
      // Subcommands and their argument counts, values, OVERFLOW's word.
      {{"BITFIELD", "k", "GET", "u8"}, Error(kSyntax)},
      {{"BITFIELD", "k", "SET", "u8", "0"}, Error(kSyntax)},
      {{"BITFIELD", "k", "INCRBY", "u8", "0"}, Error(kSyntax)},
      {{"BITFIELD", "k", "FOO", "u8", "0"}, Error(kSyntax)},
      {{"BITFIELD", "k", "OVERFLOW"}, Error(kSyntax)},
      {{"BITFIELD", "k", "OVERFLOW", "SATURATE"}, Error(kOverflowType)},
      {{"BITFIELD", "k", "SET", "u8", "0", "x"}, Error(kNotInt)},
      {{"BITFIELD", "k", "INCRBY", "u8", "0", "1.5"}, Error(kNotInt)},
      {{"BITFIELD", "k", "GET", "u8", "0", "GET", "x8", "0", "GET", "u8", "-1"}, Error(kType)},
      {{"BITFIELD", "k", "SET", "u8", "-1", "x"}, Error(kOffset)},
      {{"BITFIELD", "k", "get\0"s, "u8", "0"}, Arr({Int(255)})},
      // BITFIELD_RO: GET only, parsed before anything else.
      {{"BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i4", "4"}, Arr({Int(255), Int(-1)})},
      {{"BITFIELD_RO", "k"}, Arr({})},
      {{"BITFIELD_RO", "k", "SET", "u8", "0", "1"}, Error(kRoOnlyGet)},
      {{"BITFIELD_RO", "k", "GET", "u8", "0", "INCRBY", "u8", "0", "1"}, Error(kRoOnlyGet)},
      {{"BITFIELD_RO", "k", "OVERFLOW", "FAIL"}, Arr({})},
      {{"BITFIELD_RO", "k", "SET", "u8", "0", "x"}, Error(kNotInt)},
      {{"BITFIELD_RO", "nokey", "GET", "u8", "0"}, Arr({Int(0)})},
      {{"GET", "k"}, Any()},
  });
}

TEST_F(BitmapsTest, WrongTypeBothWays) {
  RunTable({
      {{"SADD", "s", "x"}, Int(1)},
      {{"SETBIT", "s", "0", "1"}, WrongType()},
      {{"SETBIT", "s", "-1", "1"}, Error(kOffset)},  // arguments first
      {{"GETBIT", "s", "0"}, WrongType()},
      {{"BITCOUNT", "s"}, WrongType()},
      {{"BITCOUNT", "s", "x"}, WrongType()},  // the key before the arguments
      {{"BITPOS", "s", "1"}, WrongType()},
      {{"BITPOS", "s", "2"}, Error(kBitArg)},
      {{"BITOP", "OR", "d", "s"}, WrongType()},
      {{"BITFIELD", "s", "GET", "u8", "0"}, WrongType()},
      {{"BITFIELD", "s", "SET", "u8", "0", "1"}, WrongType()},
      {{"BITFIELD", "s", "GET", "u99", "0"}, Error(kType)},
      {{"BITFIELD_RO", "s", "GET", "u8", "0"}, WrongType()},
      {{"BITFIELD_RO", "s", "SET", "u8", "0", "1"}, Error(kRoOnlyGet)},
      {{"BITFIELD", "s"}, WrongType()},
      {{"SETBIT", "b", "3", "1"}, Int(0)},
      {{"SADD", "b", "x"}, WrongType()},
      {{"SMEMBERS", "s"}, BulkArr({"x"})},
  });
}

TEST_F(BitmapsTest, Resp3) {
  RunTable(
      {
          {{"SETBIT", "k", "9", "1"}, Int(0)},
          {{"GETBIT", "k", "9"}, Int(1)},
          {{"BITCOUNT", "k"}, Int(1)},
          {{"BITPOS", "k", "1"}, Int(9)},
          {{"BITOP", "NOT", "d", "k"}, Int(2)},
          {{"BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u1", "9", "1", "GET", "u16", "0"},
           Arr({Nil(), Int(64)})},
          {{"BITFIELD_RO", "k", "GET", "i3", "8"}, Arr({Int(2)})},
          {{"BITFIELD", "k"}, Arr({})},
      },
      3);
}

TEST_F(BitmapsTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"SETBIT", "k", "0"},
                                                 {"SETBIT", "k", "0", "1", "2"},
                                                 {"GETBIT", "k"},
                                                 {"GETBIT", "k", "0", "1"},
                                                 {"BITCOUNT"},
                                                 {"BITPOS", "k"},
                                                 {"BITOP", "AND", "d"},
                                                 {"BITFIELD"},
                                                 {"BITFIELD_RO"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Error("ERR wrong number of arguments for '" + lower + "' command")});
  }
  RunTable(rows);
}

// COMMAND INFO as Redis's, but for the "module" flag the host adds to module commands.
Reply WithoutModuleFlag(Reply r) {
  if (r.elems.size() == 1 && r.elems[0].elems.size() > 2)
    std::erase_if(r.elems[0].elems[2].elems, [](const Reply& f) { return f.str == "module"; });
  return r;
}

TEST_F(BitmapsTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name :
       {"setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"}) {
    const Reply v = WithoutModuleFlag(vessel("COMMAND", "INFO", name));
    const Reply r = WithoutModuleFlag(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
  // Not BITFIELD: Redis computes its key's flags per call (RO access with only GETs, RW access
  // update otherwise); the SDK's key specs are static, so vessel reports the declared ones.
  for (const Strings& cmd : std::vector<Strings>{{"BITOP", "AND", "d", "a", "b"},
                                                 {"BITFIELD_RO", "k", "GET", "u8", "0"},
                                                 {"SETBIT", "k", "0", "1"}}) {
    const Reply v = vessel.Cmd(Cat({"COMMAND", "GETKEYSANDFLAGS"}, cmd));
    const Reply r = redis.Cmd(Cat({"COMMAND", "GETKEYSANDFLAGS"}, cmd));
    EXPECT_EQ(v, r) << Show(cmd) << "\n  vessel: " << v.ToString()
                    << "\n  redis:  " << r.ToString();
  }
}

// ---- randomized BITFIELD programs ----

// A value near the edges of a field of `bits` bits (or anywhere), as a decimal string.
std::string FieldValue(std::mt19937_64& rng, int bits, bool is_signed) {
  const int64_t edges[] = {0,
                           1,
                           -1,
                           INT64_MAX,
                           INT64_MIN,
                           bits < 64 ? int64_t{1} << (bits - 1) : INT64_MIN,
                           bits < 63 ? int64_t{1} << bits : INT64_MAX,
                           bits < 64 ? -(int64_t{1} << (bits - 1)) : INT64_MIN};
  const int64_t base = edges[rng() % std::size(edges)];
  switch (rng() % 4) {
    case 0:
      return Str(base);
    case 1:
      return Str(static_cast<int64_t>(static_cast<uint64_t>(base) + rng() % 5 - 2));
    case 2:
      return Str(static_cast<int64_t>(rng() % 300) - 150);
    default:
      return Str(static_cast<int64_t>(rng() >> (rng() % 64)) * (is_signed && rng() % 2 ? -1 : 1));
  }
}

TEST_F(BitmapsTest, RandomBitfieldProgramsAgreeWithRedis) {
  std::mt19937_64 rng(20250101);
  const char* overflow[] = {"WRAP", "SAT", "FAIL"};
  for (int protocol : {2, 3}) {
    std::vector<Row> rows;
    for (int i = 0; i < 2500; ++i) {
      const std::string cmd_name = rng() % 10 == 0 ? "BITFIELD_RO" : "BITFIELD";
      Strings cmd = {cmd_name, "k" + Str(rng() % 2)};
      for (int ops = 1 + rng() % 4; ops > 0; --ops) {
        const bool is_signed = rng() % 2;
        const int bits = 1 + static_cast<int>(rng() % (is_signed ? 64 : 63));
        const std::string type = (is_signed ? "i" : "u") + Str(bits);
        const std::string offset = rng() % 4 == 0 ? "#" + Str(rng() % 12) : Str(rng() % 200);
        if (rng() % 3 == 0) cmd.insert(cmd.end(), {"OVERFLOW", overflow[rng() % 3]});
        switch (rng() % 3) {
          case 0:
            cmd.insert(cmd.end(), {"GET", type, offset});
            break;
          case 1:
            cmd.insert(cmd.end(), {"SET", type, offset, FieldValue(rng, bits, is_signed)});
            break;
          default:
            cmd.insert(cmd.end(), {"INCRBY", type, offset, FieldValue(rng, bits, is_signed)});
            break;
        }
      }
      rows.push_back({cmd, Any()});
      if (i % 100 == 99) {
        rows.push_back({{"GET", "k0"}, Any()});
        rows.push_back({{"GET", "k1"}, Any()});
      }
    }
    RunTable(rows, protocol);
  }
}

}  // namespace
}  // namespace vessel::test
