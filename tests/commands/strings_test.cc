// The strings module (GET SET ... LCS) against vessel and redis-server: every row runs on both,
// must meet its expectation on both, and the two replies must be identical.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kOverflow[] = "ERR increment or decrement would overflow";
constexpr char kTooBig[] = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
constexpr char kNanInf[] = "ERR increment would produce NaN or Infinity";

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}
std::string Str(int64_t v) { return std::to_string(v); }

// A bulk reply of n bytes starting with prefix.
Expect BulkPrefix(std::string prefix, size_t n) {
  return {"bulk of " + Str(n) + " bytes starting \"" + prefix + "\"", [prefix, n](const Reply& r) {
            return r.type == Reply::Type::kBulk && r.str.size() == n && r.str.starts_with(prefix);
          }};
}

// A TTL check: both servers must be in range; their exact values may differ by the time between.
Row Ttl(std::vector<std::string> cmd, int64_t lo, int64_t hi) {
  return {std::move(cmd), IntRange(lo, hi), Diff::kSkip,
          "the time left differs by the time between the two calls"};
}

class StringsTest : public ::testing::Test {
 protected:
  // Loads the in-tree modules that are built, so this family is testable on its own.
  static void SetUpTestSuite() { LoadOnlyBuiltModules(); }
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(StringsTest, GetAndSet) {
  const std::string bin = "a\0b\r\nc\0"s;
  const std::string s44(44, 'e'), s45(45, 'f'), s100k(100000, 'g');
  RunTable({
      {{"GET", "k"}, Nil()},
      {{"SET", "k", "v"}, Ok()},
      {{"GET", "k"}, Bulk("v")},
      {{"get", "k"}, Bulk("v")},
      {{"SET", "k", "seven77"}, Ok()},
      {{"GET", "k"}, Bulk("seven77")},
      {{"SET", "k", "eight888"}, Ok()},
      {{"GET", "k"}, Bulk("eight888")},
      {{"SET", "k", ""}, Ok()},
      {{"GET", "k"}, Bulk("")},
      {{"EXISTS", "k"}, Int(1)},
      {{"SET", "k", bin}, Ok()},
      {{"GET", "k"}, Bulk(bin)},
      {{"SET", "k", "\xff\xfe\x80\x01"s}, Ok()},
      {{"GET", "k"}, Bulk("\xff\xfe\x80\x01"s)},
      {{"SET", "k", "\0\0\0\0\0\0\0"s}, Ok()},
      {{"GET", "k"}, Bulk("\0\0\0\0\0\0\0"s)},
      {{"SET", "k", "\0\0\0\0\0\0\0\0"s}, Ok()},
      {{"GET", "k"}, Bulk("\0\0\0\0\0\0\0\0"s)},
      {{"SET", "k", s44}, Ok()},
      {{"GET", "k"}, Bulk(s44)},
      {{"SET", "k", s45}, Ok()},
      {{"GET", "k"}, Bulk(s45)},
      {{"SET", "k", s100k}, Ok()},
      {{"GET", "k"}, Bulk(s100k)},
      {{"SET", "k", "short"}, Ok()},
      {{"GET", "k"}, Bulk("short")},
      {{"SET", bin, "binary key"}, Ok()},
      {{"GET", bin}, Bulk("binary key")},
      {{"TYPE", "k"}, Simple("string")},
      {{"GET"}, Error("ERR wrong number of arguments for 'get' command")},
      {{"GET", "a", "b"}, Error("ERR wrong number of arguments for 'get' command")},
      {{"SET", "k"}, Error("ERR wrong number of arguments for 'set' command")},
  });
}

TEST_F(StringsTest, SetNxXxGet) {
  RunTable({
      {{"SET", "k", "1", "XX"}, Nil()},
      {{"EXISTS", "k"}, Int(0)},
      {{"SET", "k", "1", "NX"}, Ok()},
      {{"SET", "k", "2", "NX"}, Nil()},
      {{"GET", "k"}, Bulk("1")},
      {{"SET", "k", "3", "xx"}, Ok()},
      {{"GET", "k"}, Bulk("3")},
      {{"SET", "k", "4", "NX", "NX"}, Nil()},
      {{"SET", "k", "4", "XX", "XX"}, Ok()},
      {{"SET", "k", "5", "NX", "XX"}, Error(kSyntax)},
      {{"SET", "k", "5", "XX", "NX"}, Error(kSyntax)},
      {{"SET", "k", "5", "GET"}, Bulk("4")},
      {{"SET", "k", "6", "get", "GET"}, Bulk("5")},
      {{"SET", "new", "1", "GET"}, Nil()},
      {{"GET", "new"}, Bulk("1")},
      // NX together with GET is allowed since Redis 7.0: the old value, and no write.
      {{"SET", "k", "7", "NX", "GET"}, Bulk("6")},
      {{"GET", "k"}, Bulk("6")},
      {{"SET", "nx", "1", "NX", "GET"}, Nil()},
      {{"GET", "nx"}, Bulk("1")},
      {{"SET", "k", "8", "XX", "GET"}, Bulk("6")},
      {{"GET", "k"}, Bulk("8")},
      {{"SET", "xx", "1", "XX", "GET"}, Nil()},
      {{"EXISTS", "xx"}, Int(0)},
      {{"SET", "k", "a-long-value-on-the-heap", "GET"}, Bulk("8")},
      {{"SET", "k", "x", "GET"}, Bulk("a-long-value-on-the-heap")},
      {{"SET", "k", "v", "FOO"}, Error(kSyntax)},
      {{"SET", "k", "v", "PERSIST"}, Error(kSyntax)},
      {{"SET", "k", "v", "NX", "foo"}, Error(kSyntax)},
      {{"GET", "k"}, Bulk("x")},
  });
}

TEST_F(StringsTest, SetExpiryOptions) {
  const int64_t now = NowMs();
  const std::string exat = Str(now / 1000 + 100), pxat = Str(now + 100000);
  RunTable({
      {{"SET", "k", "v", "EX", "100"}, Ok()},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SET", "k", "v", "PX", "50000"}, Ok()},
      Ttl({"PTTL", "k"}, 40000, 50000),
      {{"SET", "k", "v", "EXAT", exat}, Ok()},
      Ttl({"TTL", "k"}, 90, 101),
      {{"SET", "k", "v", "PXAT", pxat}, Ok()},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SET", "k", "w", "KEEPTTL"}, Ok()},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"GET", "k"}, Bulk("w")},
      {{"SET", "k", "w"}, Ok()},
      {{"PTTL", "k"}, Int(-1)},
      {{"SET", "k", "v", "ex", "100", "EX", "200"}, Ok()},
      Ttl({"PTTL", "k"}, 190000, 200000),
      {{"SET", "k", "v", "px", "1000", "KEEPTTL"}, Error(kSyntax)},
      {{"SET", "k", "v", "KEEPTTL", "EX", "10"}, Error(kSyntax)},
      {{"SET", "k", "v", "EX", "10", "PX", "10"}, Error(kSyntax)},
      {{"SET", "k", "v", "PX", "10", "EXAT", exat}, Error(kSyntax)},
      {{"SET", "k", "v", "EXAT", exat, "PXAT", pxat}, Error(kSyntax)},
      {{"SET", "k", "v", "PXAT", pxat, "EX", "10"}, Error(kSyntax)},
      {{"SET", "k", "v", "EX"}, Error(kSyntax)},
      {{"SET", "k", "v", "PXAT"}, Error(kSyntax)},
      {{"SET", "k", "v", "EX", "abc"}, Error(kNotInt)},
      {{"SET", "k", "v", "EX", "1.5"}, Error(kNotInt)},
      {{"SET", "k", "v", "EX", "0"}, Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "EX", "-1"}, Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "PX", "0"}, Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "EXAT", "0"}, Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "PXAT", "-5"}, Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "EX", "9223372036854776"},
       Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "EX", "9223372036854775"},
       Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "PX", "9223372036854775807"},
       Error("ERR invalid expire time in 'set' command")},
      {{"SET", "k", "v", "EX", "9223372036854775808"}, Error(kNotInt)},
      // the expiry is validated before NX/XX and GET look at the key
      {{"SET", "k", "v", "NX", "EX", "0"}, Error("ERR invalid expire time in 'set' command")},
      Ttl({"PTTL", "k"}, 190000, 200000),
      {{"SET", "far", "v", "PXAT", "9223372036854775807"}, Ok()},
      Ttl({"PTTL", "far"}, 9223372036854775807 - now - 100000, 9223372036854775807 - now),
      {{"SET", "k", "v", "EXAT", "1"}, Ok()},
      {{"EXISTS", "k"}, Int(0)},
      {{"GET", "k"}, Nil()},
      {{"SET", "k", "old"}, Ok()},
      {{"SET", "k", "new", "GET", "PXAT", "1"}, Bulk("old")},
      {{"EXISTS", "k"}, Int(0)},
      {{"SET", "k", "v", "NX", "GET", "EX", "100"}, Nil()},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SET", "k", "w", "XX", "GET", "KEEPTTL"}, Bulk("v")},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SET", "k", "x", "XX", "PX", "5000"}, Ok()},
      Ttl({"PTTL", "k"}, 4000, 5000),
      {{"SET", "k", "y", "NX", "PX", "100000"}, Nil()},
      Ttl({"PTTL", "k"}, 4000, 5000),
  });
}

TEST_F(StringsTest, SetNxSetExPSetEx) {
  RunTable({
      {{"SETNX", "k", "1"}, Int(1)},
      {{"SETNX", "k", "2"}, Int(0)},
      {{"GET", "k"}, Bulk("1")},
      {{"SETNX", "long", "a value of more than seven bytes"}, Int(1)},
      {{"GET", "long"}, Bulk("a value of more than seven bytes")},
      {{"SETNX", "k"}, Error("ERR wrong number of arguments for 'setnx' command")},
      {{"SETEX", "k", "100", "v"}, Ok()},
      {{"GET", "k"}, Bulk("v")},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SETNX", "k", "3"}, Int(0)},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"SETEX", "k", "0", "v"}, Error("ERR invalid expire time in 'setex' command")},
      {{"SETEX", "k", "-10", "v"}, Error("ERR invalid expire time in 'setex' command")},
      {{"SETEX", "k", "9223372036854775", "v"},
       Error("ERR invalid expire time in 'setex' command")},
      {{"SETEX", "k", "abc", "v"}, Error(kNotInt)},
      {{"SETEX", "k", "10"}, Error("ERR wrong number of arguments for 'setex' command")},
      {{"PSETEX", "k", "50000", "pv"}, Ok()},
      {{"GET", "k"}, Bulk("pv")},
      Ttl({"PTTL", "k"}, 40000, 50000),
      {{"PSETEX", "k", "0", "v"}, Error("ERR invalid expire time in 'psetex' command")},
      {{"PSETEX", "k", "-1", "v"}, Error("ERR invalid expire time in 'psetex' command")},
      {{"PSETEX", "k", "9223372036854775807", "v"},
       Error("ERR invalid expire time in 'psetex' command")},
      {{"PSETEX", "k", "1e3", "v"}, Error(kNotInt)},
      {{"GET", "k"}, Bulk("pv")},
      {{"PSETEX", "k", "1", "v", "x"}, Error("ERR wrong number of arguments for 'psetex' command")},
  });
}

TEST_F(StringsTest, GetSetAndGetDel) {
  RunTable({
      {{"GETSET", "k", "1"}, Nil()},
      {{"GET", "k"}, Bulk("1")},
      {{"GETSET", "k", "a longer value on the heap"}, Bulk("1")},
      {{"GETSET", "k", "2"}, Bulk("a longer value on the heap")},
      {{"EXPIRE", "k", "100"}, Int(1)},
      {{"GETSET", "k", "3"}, Bulk("2")},
      {{"TTL", "k"}, Int(-1)},
      {{"GETSET", "k"}, Error("ERR wrong number of arguments for 'getset' command")},
      {{"GETDEL", "k"}, Bulk("3")},
      {{"EXISTS", "k"}, Int(0)},
      {{"GETDEL", "k"}, Nil()},
      {{"SET", "k", "value bigger than seven"}, Ok()},
      {{"GETDEL", "k"}, Bulk("value bigger than seven")},
      {{"GET", "k"}, Nil()},
      {{"SET", "k", "\0\r\n"s, "EX", "100"}, Ok()},
      {{"GETDEL", "k"}, Bulk("\0\r\n"s)},
      {{"TTL", "k"}, Int(-2)},
      {{"GETDEL", "k", "x"}, Error("ERR wrong number of arguments for 'getdel' command")},
  });
}

TEST_F(StringsTest, GetEx) {
  const int64_t now = NowMs();
  const std::string exat = Str(now / 1000 + 100), pxat = Str(now + 100000);
  RunTable({
      {{"GETEX", "k"}, Nil()},
      {{"GETEX", "k", "EX", "abc"}, Nil()},  // no key: the time is not even parsed
      {{"GETEX", "k", "EX", "0"}, Nil()},
      {{"GETEX", "k", "FOO"}, Error(kSyntax)},
      {{"SET", "k", "v"}, Ok()},
      {{"GETEX", "k"}, Bulk("v")},
      {{"TTL", "k"}, Int(-1)},
      {{"GETEX", "k", "EX", "100"}, Bulk("v")},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"GETEX", "k"}, Bulk("v")},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"GETEX", "k", "PX", "50000"}, Bulk("v")},
      Ttl({"PTTL", "k"}, 40000, 50000),
      {{"GETEX", "k", "EXAT", exat}, Bulk("v")},
      Ttl({"TTL", "k"}, 90, 101),
      {{"GETEX", "k", "PXAT", pxat}, Bulk("v")},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"GETEX", "k", "PERSIST"}, Bulk("v")},
      {{"TTL", "k"}, Int(-1)},
      {{"GETEX", "k", "persist"}, Bulk("v")},
      {{"TTL", "k"}, Int(-1)},
      {{"GETEX", "k", "ex", "10", "EX", "20"}, Bulk("v")},
      Ttl({"TTL", "k"}, 15, 20),
      {{"GETEX", "k", "EX", "abc"}, Error(kNotInt)},
      {{"GETEX", "k", "EX", "0"}, Error("ERR invalid expire time in 'getex' command")},
      {{"GETEX", "k", "PX", "-1"}, Error("ERR invalid expire time in 'getex' command")},
      {{"GETEX", "k", "EXAT", "0"}, Error("ERR invalid expire time in 'getex' command")},
      {{"GETEX", "k", "EX", "9223372036854775"},
       Error("ERR invalid expire time in 'getex' command")},
      {{"GETEX", "k", "EX"}, Error(kSyntax)},
      {{"GETEX", "k", "EX", "10", "PX", "10"}, Error(kSyntax)},
      {{"GETEX", "k", "EX", "10", "PERSIST"}, Error(kSyntax)},
      {{"GETEX", "k", "PERSIST", "EXAT", exat}, Error(kSyntax)},
      {{"GETEX", "k", "KEEPTTL"}, Error(kSyntax)},
      {{"GETEX", "k", "NX"}, Error(kSyntax)},
      {{"GETEX", "k", "XX"}, Error(kSyntax)},
      {{"GETEX", "k", "GET"}, Error(kSyntax)},
      Ttl({"TTL", "k"}, 15, 20),
      // an absolute time in the past deletes the key after returning the value
      {{"GETEX", "k", "EXAT", "1"}, Bulk("v")},
      {{"EXISTS", "k"}, Int(0)},
      {{"SET", "k", "heap-allocated value"}, Ok()},
      {{"GETEX", "k", "PXAT", "1"}, Bulk("heap-allocated value")},
      {{"GET", "k"}, Nil()},
      {{"GETEX"}, Error("ERR wrong number of arguments for 'getex' command")},
  });
}

TEST_F(StringsTest, MGetMSetMSetNx) {
  const std::string bin = "x\0y\r\n"s, big(300, 'b');
  RunTable({
      {{"MGET", "a", "b"}, Arr({Nil(), Nil()})},
      {{"MSET", "a", "1", "b", big, "c", bin}, Ok()},
      {{"MGET", "a", "b", "c", "d"}, Arr({Bulk("1"), Bulk(big), Bulk(bin), Nil()})},
      {{"MGET", "a", "a"}, BulkArr({"1", "1"})},
      {{"MSET", "a", "x", "a", "y"}, Ok()},
      {{"GET", "a"}, Bulk("y")},
      {{"EXPIRE", "a", "100"}, Int(1)},
      {{"MSET", "a", "z"}, Ok()},
      {{"TTL", "a"}, Int(-1)},
      {{"MSET", "a", "1", "b"}, Error("ERR wrong number of arguments for 'mset' command")},
      {{"MSET", "a"}, Error("ERR wrong number of arguments for 'mset' command")},
      {{"MGET"}, Error("ERR wrong number of arguments for 'mget' command")},
      {{"MSETNX", "a", "1", "new", "2"}, Int(0)},
      {{"EXISTS", "new"}, Int(0)},
      {{"MSETNX", "n1", "1", "n2", "a value on the heap"}, Int(1)},
      {{"MGET", "n1", "n2"}, BulkArr({"1", "a value on the heap"})},
      {{"MSETNX", "n3", "3", "n1", "x"}, Int(0)},
      {{"EXISTS", "n3"}, Int(0)},
      {{"MSETNX", "d", "1", "d", "2"}, Int(1)},
      {{"GET", "d"}, Bulk("2")},
      {{"MSETNX", "a", "1", "b"}, Error("ERR wrong number of arguments for 'msetnx' command")},
      {{"MSETNX", "a"}, Error("ERR wrong number of arguments for 'msetnx' command")},
      {{"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"}, BulkArr({"a", "b"})},
      {{"COMMAND", "GETKEYS", "MGET", "a", "b", "c"}, BulkArr({"a", "b", "c"})},
      {{"COMMAND", "GETKEYS", "MSETNX", "x", "1"}, BulkArr({"x"})},
      {{"COMMAND", "GETKEYS", "SET", "k", "v", "EX", "1"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "LCS", "k1", "k2", "IDX"}, BulkArr({"k1", "k2"})},
      {{"COMMAND", "GETKEYS", "GETEX", "k", "PERSIST"}, BulkArr({"k"})},
  });
}

TEST_F(StringsTest, AppendAndStrLen) {
  const std::string big(1 << 20, 'm');
  RunTable({
      {{"STRLEN", "k"}, Int(0)},
      {{"APPEND", "k", "abc"}, Int(3)},
      {{"APPEND", "k", "def"}, Int(6)},
      {{"APPEND", "k", "g"}, Int(7)},  // still inline
      {{"GET", "k"}, Bulk("abcdefg")},
      {{"APPEND", "k", "h"}, Int(8)},  // now on the heap
      {{"GET", "k"}, Bulk("abcdefgh")},
      {{"STRLEN", "k"}, Int(8)},
      {{"APPEND", "k", "ijklmnopqrstuvwxyz"}, Int(26)},
      {{"APPEND", "k", ""}, Int(26)},
      {{"GET", "k"}, Bulk("abcdefghijklmnopqrstuvwxyz")},
      {{"APPEND", "k", "\0\r\n"s}, Int(29)},
      {{"GET", "k"}, Bulk("abcdefghijklmnopqrstuvwxyz\0\r\n"s)},
      {{"STRLEN", "k"}, Int(29)},
      {{"APPEND", "e", ""}, Int(0)},
      {{"EXISTS", "e"}, Int(1)},
      {{"STRLEN", "e"}, Int(0)},
      {{"SET", "n", "12345"}, Ok()},
      {{"STRLEN", "n"}, Int(5)},
      {{"APPEND", "n", "6"}, Int(6)},
      {{"INCR", "n"}, Int(123457)},
      {{"SET", "b", "x"}, Ok()},
      {{"APPEND", "b", big}, Int((1 << 20) + 1)},
      {{"APPEND", "b", "tail"}, Int((1 << 20) + 5)},
      {{"STRLEN", "b"}, Int((1 << 20) + 5)},
      {{"GET", "b"}, Bulk("x" + big + "tail")},
      {{"SET", "t", "v", "EX", "100"}, Ok()},
      {{"APPEND", "t", "w"}, Int(2)},
      {{"APPEND", "t", "a long tail that moves the value to the heap"}, Int(46)},
      Ttl({"PTTL", "t"}, 90000, 100000),
      {{"APPEND", "k"}, Error("ERR wrong number of arguments for 'append' command")},
      {{"STRLEN"}, Error("ERR wrong number of arguments for 'strlen' command")},
  });
}

TEST_F(StringsTest, GetRangeAndSubstr) {
  RunTable({
      {{"GETRANGE", "missing", "0", "-1"}, Bulk("")},
      {{"GETRANGE", "missing", "x", "-1"}, Error(kNotInt)},
      {{"SET", "k", "This is a string"}, Ok()},
      {{"GETRANGE", "k", "0", "3"}, Bulk("This")},
      {{"GETRANGE", "k", "-3", "-1"}, Bulk("ing")},
      {{"GETRANGE", "k", "0", "-1"}, Bulk("This is a string")},
      {{"GETRANGE", "k", "10", "100"}, Bulk("string")},
      {{"GETRANGE", "k", "5", "3"}, Bulk("")},
      {{"GETRANGE", "k", "-1", "-5"}, Bulk("")},
      {{"GETRANGE", "k", "0", "-100"}, Bulk("T")},  // Redis 7.0 clamps end to 0
      {{"GETRANGE", "k", "-100", "-100"}, Bulk("T")},
      {{"GETRANGE", "k", "-100", "2"}, Bulk("Thi")},
      {{"GETRANGE", "k", "16", "20"}, Bulk("")},
      {{"GETRANGE", "k", "15", "15"}, Bulk("g")},
      {{"GETRANGE", "k", "-9223372036854775808", "9223372036854775807"}, Bulk("This is a string")},
      {{"GETRANGE", "k", "-9223372036854775808", "-9223372036854775808"}, Bulk("T")},
      {{"GETRANGE", "k", "0", "9223372036854775808"}, Error(kNotInt)},
      {{"GETRANGE", "k", "1.5", "2"}, Error(kNotInt)},
      {{"GETRANGE", "k", "0"}, Error("ERR wrong number of arguments for 'getrange' command")},
      {{"SUBSTR", "k", "0", "3"}, Bulk("This")},
      {{"SUBSTR", "k", "-6", "-1"}, Bulk("string")},
      {{"SUBSTR", "k", "a", "1"}, Error(kNotInt)},
      {{"SUBSTR", "k", "0"}, Error("ERR wrong number of arguments for 'substr' command")},
      {{"SET", "n", "1234567"}, Ok()},
      {{"GETRANGE", "n", "1", "3"}, Bulk("234")},
      {{"GETRANGE", "n", "-2", "-1"}, Bulk("67")},
      {{"SET", "e", ""}, Ok()},
      {{"GETRANGE", "e", "0", "-1"}, Bulk("")},
      {{"GETRANGE", "e", "0", "0"}, Bulk("")},
      {{"GETRANGE", "e", "-1", "-1"}, Bulk("")},
      {{"SET", "b", "a\0b\r\nc"s}, Ok()},
      {{"GETRANGE", "b", "1", "4"}, Bulk("\0b\r\n"s)},
  });
}

TEST_F(StringsTest, SetRange) {
  RunTable({
      {{"SETRANGE", "k", "0", ""}, Int(0)},
      {{"EXISTS", "k"}, Int(0)},
      {{"SETRANGE", "k", "536870912", ""}, Int(0)},  // nothing to write: no size check
      {{"SETRANGE", "k", "-1", "x"}, Error("ERR offset is out of range")},
      {{"SETRANGE", "k", "x", "x"}, Error(kNotInt)},
      {{"SETRANGE", "k", "536870912", "x"}, Error(kTooBig)},
      {{"SETRANGE", "k", "536870911", "xy"}, Error(kTooBig)},
      {{"SETRANGE", "k", "9223372036854775807", "x"}, Error(kTooBig)},
      {{"EXISTS", "k"}, Int(0)},
      {{"SETRANGE", "k", "5", "ab"}, Int(7)},  // inline, zero padded
      {{"GET", "k"}, Bulk("\0\0\0\0\0ab"s)},
      {{"SETRANGE", "k", "0", "xy"}, Int(7)},
      {{"GET", "k"}, Bulk("xy\0\0\0ab"s)},
      {{"SETRANGE", "k", "7", "z"}, Int(8)},  // grows onto the heap
      {{"GET", "k"}, Bulk("xy\0\0\0abz"s)},
      {{"SETRANGE", "k", "2", "123"}, Int(8)},
      {{"GET", "k"}, Bulk("xy123abz")},
      {{"SETRANGE", "k", "20", "end"}, Int(23)},
      {{"GET", "k"}, Bulk("xy123abz\0\0\0\0\0\0\0\0\0\0\0\0end"s)},
      {{"SETRANGE", "k", "0", ""}, Int(23)},
      {{"SETRANGE", "k", "100", ""}, Int(23)},
      {{"SETRANGE", "k", "536870912", "x"}, Error(kTooBig)},
      {{"STRLEN", "k"}, Int(23)},
      {{"SETRANGE", "h", "6", "ab"}, Int(8)},  // a new key straight onto the heap
      {{"GET", "h"}, Bulk("\0\0\0\0\0\0ab"s)},
      {{"SET", "s", "Hello World"}, Ok()},
      {{"SETRANGE", "s", "6", "Redis"}, Int(11)},
      {{"GET", "s"}, Bulk("Hello Redis")},
      {{"SET", "i", "abc"}, Ok()},
      {{"SETRANGE", "i", "1", "\0\r"s}, Int(3)},
      {{"GET", "i"}, Bulk("a\0\r"s)},
      {{"SET", "n", "100"}, Ok()},
      {{"SETRANGE", "n", "0", "2"}, Int(3)},
      {{"INCR", "n"}, Int(201)},
      {{"SET", "t", "v", "EX", "100"}, Ok()},
      {{"SETRANGE", "t", "1", "w"}, Int(2)},
      {{"SETRANGE", "t", "10", "moves it to the heap"}, Int(30)},
      Ttl({"PTTL", "t"}, 90000, 100000),
      {{"SETRANGE", "k", "0"}, Error("ERR wrong number of arguments for 'setrange' command")},
  });
}

TEST_F(StringsTest, IncrDecr) {
  RunTable({
      {{"INCR", "k"}, Int(1)},
      {{"INCR", "k"}, Int(2)},
      {{"DECR", "k"}, Int(1)},
      {{"DECR", "d"}, Int(-1)},
      {{"INCRBY", "k", "100"}, Int(101)},
      {{"DECRBY", "k", "201"}, Int(-100)},
      {{"GET", "k"}, Bulk("-100")},
      {{"INCRBY", "k", "-5"}, Int(-105)},
      {{"DECRBY", "k", "-5"}, Int(-100)},
      {{"INCRBY", "k", "0"}, Int(-100)},
      // across the inline/heap boundary (7 -> 8 bytes) and back
      {{"SET", "b", "9999999"}, Ok()},
      {{"INCR", "b"}, Int(10000000)},
      {{"GET", "b"}, Bulk("10000000")},
      {{"INCR", "b"}, Int(10000001)},
      {{"DECRBY", "b", "2"}, Int(9999999)},
      {{"GET", "b"}, Bulk("9999999")},
      {{"SET", "b", "-999999"}, Ok()},
      {{"DECR", "b"}, Int(-1000000)},
      {{"GET", "b"}, Bulk("-1000000")},
      {{"SET", "b", "12345678901234"}, Ok()},
      {{"INCRBY", "b", "-12345678901200"}, Int(34)},
      {{"INCRBY", "b", "1000000000000000000"}, Int(1000000000000000034)},
      {{"GET", "b"}, Bulk("1000000000000000034")},
      // overflow edges
      {{"SET", "m", "9223372036854775807"}, Ok()},
      {{"INCR", "m"}, Error(kOverflow)},
      {{"INCRBY", "m", "1"}, Error(kOverflow)},
      {{"DECRBY", "m", "-1"}, Error(kOverflow)},
      {{"GET", "m"}, Bulk("9223372036854775807")},
      {{"INCRBY", "m", "0"}, Int(INT64_MAX)},
      {{"DECR", "m"}, Int(INT64_MAX - 1)},
      {{"INCRBY", "m", "-9223372036854775808"}, Int(-2)},
      {{"SET", "m", "-9223372036854775808"}, Ok()},
      {{"DECR", "m"}, Error(kOverflow)},
      {{"INCRBY", "m", "-1"}, Error(kOverflow)},
      {{"DECRBY", "m", "1"}, Error(kOverflow)},
      {{"INCRBY", "m", "9223372036854775807"}, Int(-1)},
      {{"DECRBY", "m", "-9223372036854775808"}, Error("ERR decrement would overflow")},
      {{"DECRBY", "m", "9223372036854775807"}, Int(INT64_MIN)},
      {{"INCR", "m"}, Int(INT64_MIN + 1)},
      // values and arguments that are not integers
      {{"INCRBY", "k", "abc"}, Error(kNotInt)},
      {{"INCRBY", "k", "1.5"}, Error(kNotInt)},
      {{"INCRBY", "k", "9223372036854775808"}, Error(kNotInt)},
      {{"INCRBY", "k", ""}, Error(kNotInt)},
      {{"DECRBY", "k", " 1"}, Error(kNotInt)},
      {{"SET", "s", "abc"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", " 1"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "1 "}, Ok()},
      {{"DECR", "s"}, Error(kNotInt)},
      {{"SET", "s", "01"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "-0"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "+1"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "1.0"}, Ok()},
      {{"INCRBY", "s", "1"}, Error(kNotInt)},
      {{"SET", "s", ""}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "9223372036854775808"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "100000000000000000000"}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"SET", "s", "1\0"s}, Ok()},
      {{"INCR", "s"}, Error(kNotInt)},
      {{"GET", "s"}, Bulk("1\0"s)},
      {{"SET", "z", "0"}, Ok()},
      {{"INCR", "z"}, Int(1)},
      // the TTL survives
      {{"SET", "t", "5", "EX", "100"}, Ok()},
      {{"INCR", "t"}, Int(6)},
      {{"INCRBY", "t", "100000000"}, Int(100000006)},
      {{"DECR", "t"}, Int(100000005)},
      {{"DECRBY", "t", "100000000"}, Int(5)},
      Ttl({"PTTL", "t"}, 90000, 100000),
      {{"INCR"}, Error("ERR wrong number of arguments for 'incr' command")},
      {{"DECR", "a", "b"}, Error("ERR wrong number of arguments for 'decr' command")},
      {{"INCRBY", "a"}, Error("ERR wrong number of arguments for 'incrby' command")},
      {{"DECRBY", "a"}, Error("ERR wrong number of arguments for 'decrby' command")},
  });
}

TEST_F(StringsTest, IncrByFloat) {
  const std::string zeros_one = std::string(5118, '0') + "1";  // 5119 bytes: still a number
  RunTable({
      {{"INCRBYFLOAT", "k", "10.5"}, Bulk("10.5")},
      {{"INCRBYFLOAT", "k", "0.1"}, Bulk("10.6")},
      {{"INCRBYFLOAT", "k", "-5"}, Bulk("5.6")},
      {{"INCRBYFLOAT", "k", "-5.6"}, Bulk("0")},
      {{"GET", "k"}, Bulk("0")},
      {{"INCRBYFLOAT", "e", "3.0e3"}, Bulk("3000")},
      {{"SET", "e", "5.0e3"}, Ok()},
      {{"INCRBYFLOAT", "e", "2.0e2"}, Bulk("5200")},
      {{"SET", "i", "10"}, Ok()},
      {{"INCRBYFLOAT", "i", "1.5"}, Bulk("11.5")},
      {{"INCRBYFLOAT", "i", "-0.5"}, Bulk("11")},
      {{"INCR", "i"}, Int(12)},
      {{"INCRBYFLOAT", "p", "0.1"}, Bulk("0.1")},
      {{"INCRBYFLOAT", "p", "0.2"}, Bulk("0.3")},
      {{"INCRBYFLOAT", "p", "1.10"}, Bulk("1.4")},
      {{"INCRBYFLOAT", "tiny", "1e-20"}, Bulk("0")},
      {{"INCRBYFLOAT", "neg", "-1.5"}, Bulk("-1.5")},
      {{"SET", "nz", "-0.0"}, Ok()},
      {{"INCRBYFLOAT", "nz", "-0"}, Bulk("0")},
      {{"INCRBYFLOAT", "hex", "0x10"}, Bulk("16")},
      {{"INCRBYFLOAT", "frac", "1.23456789012345678"}, Bulk("1.23456789012345678")},
      {{"INCRBYFLOAT", "frac", "100000"}, Bulk("100001.2345678901234578")},
      {{"INCRBYFLOAT", "heap", "12345.6789"}, Bulk("12345.67889999999999961")},
      {{"INCRBYFLOAT", "heap", "1"}, Bulk("12346.67889999999999961")},
      {{"INCRBYFLOAT", "heap", "-12340"}, Bulk("6.67889999999999961")},
      {{"INCRBYFLOAT", "big", "1e300"}, BulkPrefix("10000000000000000000089973240795", 301)},
      {{"SET", "huge", "1e4000"}, Ok()},
      {{"INCRBYFLOAT", "huge", "0"}, BulkPrefix("99999999999999999999654638730996", 4000)},
      {{"STRLEN", "huge"}, Int(4000)},
      {{"SET", "max", "1e4932"}, Ok()},
      {{"INCRBYFLOAT", "max", "1e4932"}, Error(kNanInf)},
      {{"INCRBYFLOAT", "k", "inf"}, Error(kNanInf)},
      {{"INCRBYFLOAT", "k", "-inf"}, Error(kNanInf)},
      {{"INCRBYFLOAT", "k", "nan"}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", "1e5000"}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", "1e-5000"}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", "abc"}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", ""}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", " 1"}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", "1 "}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "k", "1\0002"s}, Error(kNotFloat)},
      {{"INCRBYFLOAT", "missing", "x"}, Error(kNotFloat)},
      {{"EXISTS", "missing"}, Int(0)},
      {{"SET", "s", "abc"}, Ok()},
      {{"INCRBYFLOAT", "s", "1"}, Error(kNotFloat)},
      {{"SET", "s", " 1.5"}, Ok()},
      {{"INCRBYFLOAT", "s", "1"}, Error(kNotFloat)},
      {{"SET", "s", ""}, Ok()},
      {{"INCRBYFLOAT", "s", "1"}, Error(kNotFloat)},
      {{"SET", "s", zeros_one}, Ok()},
      {{"INCRBYFLOAT", "s", "1"}, Bulk("2")},
      {{"SET", "s", "0" + zeros_one}, Ok()},  // 5120 bytes: too long for Redis's buffer
      {{"INCRBYFLOAT", "s", "1"}, Error(kNotFloat)},
      {{"SET", "t", "1.5", "EX", "100"}, Ok()},
      {{"INCRBYFLOAT", "t", "1"}, Bulk("2.5")},
      Ttl({"PTTL", "t"}, 90000, 100000),
      {{"INCRBYFLOAT", "k"}, Error("ERR wrong number of arguments for 'incrbyfloat' command")},
  });
}

TEST_F(StringsTest, Lcs) {
  RunTable({
      {{"MSET", "key1", "ohmytext", "key2", "mynewtext"}, Ok()},
      {{"LCS", "key1", "key2"}, Bulk("mytext")},
      {{"LCS", "key1", "key2", "LEN"}, Int(6)},
      {{"LCS", "key1", "key2", "IDX"},
       Arr({Bulk("matches"),
            Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)})}),
                 Arr({Arr({Int(2), Int(3)}), Arr({Int(0), Int(1)})})}),
            Bulk("len"), Int(6)})},
      {{"LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4"},
       Arr({Bulk("matches"), Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)})})}),
            Bulk("len"), Int(6)})},
      {{"LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"},
       Arr({Bulk("matches"), Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)}), Int(4)})}),
            Bulk("len"), Int(6)})},
      {{"LCS", "key1", "key2", "withmatchlen", "idx"},
       Arr({Bulk("matches"),
            Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)}), Int(4)}),
                 Arr({Arr({Int(2), Int(3)}), Arr({Int(0), Int(1)}), Int(2)})}),
            Bulk("len"), Int(6)})},
      {{"LCS", "key1", "key2", "IDX", "MINMATCHLEN", "-5"}, Any()},
      {{"LCS", "key1", "key2", "IDX", "MINMATCHLEN", "100"},
       Arr({Bulk("matches"), Arr({}), Bulk("len"), Int(6)})},
      {{"LCS", "key1", "key2", "LEN", "WITHMATCHLEN"}, Int(6)},
      {{"LCS", "key1", "key2", "LEN", "MINMATCHLEN", "3"}, Int(6)},
      {{"LCS", "key1", "key2", "MINMATCHLEN", "3"}, Bulk("mytext")},
      {{"LCS", "key1", "key2", "IDX", "LEN"},
       Error("ERR If you want both the length and indexes, please just use IDX.")},
      {{"LCS", "key1", "key2", "MINMATCHLEN"}, Error(kSyntax)},
      {{"LCS", "key1", "key2", "MINMATCHLEN", "x"}, Error(kNotInt)},
      {{"LCS", "key1", "key2", "FOO"}, Error(kSyntax)},
      {{"LCS", "key1", "missing"}, Bulk("")},
      {{"LCS", "missing", "key2", "LEN"}, Int(0)},
      {{"LCS", "missing", "other", "IDX"}, Arr({Bulk("matches"), Arr({}), Bulk("len"), Int(0)})},
      {{"LCS", "key1", "key1"}, Bulk("ohmytext")},
      {{"LCS", "key1", "key1", "IDX", "WITHMATCHLEN"},
       Arr({Bulk("matches"), Arr({Arr({Arr({Int(0), Int(7)}), Arr({Int(0), Int(7)}), Int(8)})}),
            Bulk("len"), Int(8)})},
      {{"MSET", "a", "abc", "b", "xyz"}, Ok()},
      {{"LCS", "a", "b"}, Bulk("")},
      {{"LCS", "a", "b", "IDX"}, Arr({Bulk("matches"), Arr({}), Bulk("len"), Int(0)})},
      {{"MSET", "a", "a\0b\r\nc"s, "b", "\0\r\n"s}, Ok()},
      {{"LCS", "a", "b"}, Bulk("\0\r\n"s)},
      {{"MSET", "a", "GTTCCTAATA-the-quick-brown-fox", "b", "CGATAATTGAGA-the-lazy-dog"}, Ok()},
      {{"LCS", "a", "b"}, Any()},
      {{"LCS", "a", "b", "IDX", "WITHMATCHLEN"}, Any()},
      {{"LCS", "b", "a", "IDX", "MINMATCHLEN", "2"}, Any()},
      {{"LCS", "a"}, Error("ERR wrong number of arguments for 'lcs' command")},
  });
  // The scratch table is limited by proto-max-bulk-len.
  const std::string big(11600, 'a');
  RunTable({
      {{"MSET", "x", big, "y", big}, Ok()},
      {{"LCS", "x", "y", "LEN"},
       Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")},
      {{"LCS", "x", "y"},
       Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")},
      {{"SET", "y", big.substr(0, 5000)}, Ok()},
      {{"LCS", "x", "y", "LEN"}, Int(5000)},
  });
}

TEST_F(StringsTest, ObjectEncoding) {
  RunTable({
      {{"SET", "k", "123"}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("int")},
      {{"SET", "k", "-9223372036854775808"}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("int")},
      {{"SET", "k", "12345678901234567890"}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("embstr")},
      {{"SET", "k", "01"}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("embstr")},
      {{"SET", "k", ""}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("embstr")},
      {{"SET", "k", std::string(44, 'x')}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("embstr")},
      {{"SET", "k", std::string(45, 'x')}, Ok()},
      {{"OBJECT", "ENCODING", "k"}, Bulk("raw")},
      {{"APPEND", "a", "abc"}, Int(3)},
      {{"OBJECT", "ENCODING", "a"}, Bulk("embstr")},
      {{"APPEND", "a", "d"}, Int(4)},
      {{"OBJECT", "ENCODING", "a"}, Bulk("raw")},
      {{"APPEND", "a2", "12"}, Int(2)},
      {{"OBJECT", "ENCODING", "a2"}, Bulk("int")},
      {{"APPEND", "a2", ""}, Int(2)},
      {{"OBJECT", "ENCODING", "a2"}, Bulk("raw")},
      {{"INCR", "a2"}, Int(13)},
      {{"OBJECT", "ENCODING", "a2"}, Bulk("int")},
      {{"SET", "h", "heap value"}, Ok()},
      {{"APPEND", "h", "!"}, Int(11)},
      {{"OBJECT", "ENCODING", "h"}, Bulk("raw")},
      {{"SETRANGE", "r", "0", "ab"}, Int(2)},
      {{"OBJECT", "ENCODING", "r"}, Bulk("raw")},
      {{"SET", "r2", "hello"}, Ok()},
      {{"SETRANGE", "r2", "0", ""}, Int(5)},
      {{"OBJECT", "ENCODING", "r2"}, Bulk("embstr")},
      {{"SETRANGE", "r2", "0", "j"}, Int(5)},
      {{"OBJECT", "ENCODING", "r2"}, Bulk("raw")},
      {{"INCRBYFLOAT", "f", "3.0e3"}, Bulk("3000")},
      {{"OBJECT", "ENCODING", "f"}, Bulk("embstr")},
      {{"INCRBYFLOAT", "f", "1e50"}, Any()},
      {{"OBJECT", "ENCODING", "f"}, Bulk("raw")},
      {{"INCR", "c"}, Int(1)},
      {{"OBJECT", "ENCODING", "c"}, Bulk("int")},
      {{"INCRBY", "c", "99999999999"}, Int(100000000000)},
      {{"OBJECT", "ENCODING", "c"}, Bulk("int")},
      {{"MSET", "m1", "7", "m2", "seven"}, Ok()},
      {{"OBJECT", "ENCODING", "m1"}, Bulk("int")},
      {{"OBJECT", "ENCODING", "m2"}, Bulk("embstr")},
      {{"GETSET", "m2", "8"}, Bulk("seven")},
      {{"OBJECT", "ENCODING", "m2"}, Bulk("int")},
      {{"SETEX", "m2", "100", "8.5"}, Ok()},
      {{"OBJECT", "ENCODING", "m2"}, Bulk("embstr")},
      {{"COPY", "h", "hcopy"}, Int(1)},
      {{"GET", "hcopy"}, Bulk("heap value!")},
      {{"OBJECT", "ENCODING", "hcopy"}, Bulk("raw")},
      {{"COPY", "m1", "m1copy"}, Int(1)},
      {{"OBJECT", "ENCODING", "m1copy"}, Bulk("int")},
  });
}

TEST_F(StringsTest, TtlInterplay) {
  RunTable({
      {{"SET", "k", "1", "EX", "100"}, Ok()},
      {{"APPEND", "k", "0"}, Int(2)},
      {{"SETRANGE", "k", "0", "2"}, Int(2)},
      {{"INCR", "k"}, Int(21)},
      {{"INCRBYFLOAT", "k", "0.5"}, Bulk("21.5")},
      {{"GETEX", "k"}, Bulk("21.5")},
      {{"SET", "k", "x", "KEEPTTL"}, Ok()},
      {{"SETNX", "k", "y"}, Int(0)},
      {{"MSETNX", "k", "y"}, Int(0)},
      Ttl({"PTTL", "k"}, 90000, 100000),
      {{"GETSET", "k", "z"}, Bulk("x")},
      {{"PTTL", "k"}, Int(-1)},
      {{"SET", "k", "1", "PX", "100000"}, Ok()},
      {{"SET", "k", "2"}, Ok()},
      {{"PTTL", "k"}, Int(-1)},
      {{"SETEX", "k", "100", "3"}, Ok()},
      {{"MSET", "k", "4"}, Ok()},
      {{"PTTL", "k"}, Int(-1)},
      {{"PSETEX", "k", "100000", "5"}, Ok()},
      {{"GETEX", "k", "PERSIST"}, Bulk("5")},
      {{"PTTL", "k"}, Int(-1)},
      {{"PSETEX", "k", "100000", "6"}, Ok()},
      {{"GETDEL", "k"}, Bulk("6")},
      {{"SET", "k", "7"}, Ok()},
      {{"PTTL", "k"}, Int(-1)},
      {{"PEXPIREAT", "k", "1"}, Int(1)},
      {{"INCR", "k"}, Int(1)},  // the expired value is gone, not incremented
      {{"PTTL", "k"}, Int(-1)},
      {{"SET", "k", "v", "PXAT", "1"}, Ok()},
      {{"APPEND", "k", "w"}, Int(1)},
      {{"PTTL", "k"}, Int(-1)},
  });
}

// The replies that differ in RESP3: nulls, maps, and doubles sent as bulk strings.
TEST_F(StringsTest, Resp3) {
  RunTable(
      {
          {{"GET", "k"}, Nil()},
          {{"SET", "k", "v", "GET"}, Nil()},
          {{"SET", "k", "v", "XX", "GET"}, Bulk("v")},
          {{"SET", "x", "v", "XX"}, Nil()},
          {{"GETEX", "none"}, Nil()},
          {{"GETDEL", "none"}, Nil()},
          {{"GETSET", "gs", "1"}, Nil()},
          {{"MGET", "k", "none", "none2"}, Arr({Bulk("v"), Nil(), Nil()})},
          {{"INCRBYFLOAT", "f", "1.5"}, Bulk("1.5")},
          {{"INCR", "i"}, Int(1)},
          {{"MSET", "key1", "ohmytext", "key2", "mynewtext"}, Ok()},
          {{"LCS", "key1", "key2", "IDX", "WITHMATCHLEN"},
           Arr({Bulk("matches"),
                Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)}), Int(4)}),
                     Arr({Arr({Int(2), Int(3)}), Arr({Int(0), Int(1)}), Int(2)})}),
                Bulk("len"), Int(6)})},
          {{"LCS", "key1", "key2"}, Bulk("mytext")},
          {{"SETNX", "k", "1"}, Int(0)},
          {{"GETRANGE", "none", "0", "-1"}, Bulk("")},
      },
      3);
}

// Keys of another type (a list): WRONGTYPE for reads and updates, overwritten by plain SETs.
TEST_F(StringsTest, WrongType) {
  if (Servers::Get().Vessel()("LLEN", "probe").is_error()) GTEST_SKIP() << "no lists module";
  const std::string kWrongType =
      "WRONGTYPE Operation against a key holding the wrong kind of value";
  std::vector<Row> rows = {{{"SET", "s", "v"}, Ok()}};
  for (const char* key : {"l", "l2", "l3", "l4", "l5", "l6", "l7"})
    rows.push_back({{"RPUSH", key, "a", "b"}, Int(2)});
  for (std::vector<std::string> cmd : std::vector<std::vector<std::string>>{
           {"GET", "l"},
           {"SET", "l", "v", "GET"},
           {"SET", "l", "v", "NX", "GET"},
           {"GETSET", "l", "v"},
           {"GETDEL", "l"},
           {"GETEX", "l"},
           {"GETEX", "l", "EX", "abc"},
           {"GETEX", "l", "PERSIST"},
           {"APPEND", "l", "x"},
           {"STRLEN", "l"},
           {"GETRANGE", "l", "0", "-1"},
           {"SUBSTR", "l", "0", "-1"},
           {"SETRANGE", "l", "0", "x"},
           {"SETRANGE", "l", "0", ""},
           {"INCR", "l"},
           {"DECR", "l"},
           {"INCRBY", "l", "2"},
           {"DECRBY", "l", "2"},
           {"INCRBYFLOAT", "l", "1.5"},
       })
    rows.push_back({cmd, Error(kWrongType)});
  const std::string kNotStrings = "ERR The specified keys must contain string values";
  std::vector<Row> more = {
      {{"TYPE", "l"}, Simple("list")},
      {{"INCRBY", "l", "abc"}, Error(kNotInt)},  // arguments are checked first
      {{"DECRBY", "l", "-9223372036854775808"}, Error("ERR decrement would overflow")},
      {{"GETRANGE", "l", "x", "1"}, Error(kNotInt)},
      {{"SETRANGE", "l", "-1", "x"}, Error("ERR offset is out of range")},
      {{"SET", "l", "v", "EX", "0"}, Error("ERR invalid expire time in 'set' command")},
      {{"LCS", "l", "s"}, Error(kNotStrings)},
      {{"LCS", "s", "l", "IDX"}, Error(kNotStrings)},
      {{"LCS", "l", "l", "FOO"}, Error(kNotStrings)},
      {{"MGET", "s", "l", "none"}, Arr({Bulk("v"), Nil(), Nil()})},
      {{"SET", "l", "v", "NX"}, Nil()},
      {{"SETNX", "l", "v"}, Int(0)},
      {{"MSETNX", "new", "v", "l", "v"}, Int(0)},
      {{"EXISTS", "new"}, Int(0)},
      {{"LLEN", "l"}, Int(2)},
      {{"SET", "l", "v", "XX"}, Ok()},
      {{"TYPE", "l"}, Simple("string")},
      {{"SET", "l2", "v"}, Ok()},
      {{"GET", "l2"}, Bulk("v")},
      {{"SETEX", "l3", "100", "v"}, Ok()},
      {{"PSETEX", "l4", "100000", "v"}, Ok()},
      {{"MSET", "l5", "v", "s", "w"}, Ok()},
      {{"SET", "l6", "v", "KEEPTTL"}, Ok()},
      {{"MGET", "l", "l2", "l3", "l4", "l5", "l6", "s"},
       BulkArr({"v", "v", "v", "v", "v", "v", "w"})},
      {{"TYPE", "l7"}, Simple("list")},
      {{"GETSET", "l7", "v"}, Error(kWrongType)},
      {{"TYPE", "l7"}, Simple("list")},
  };
  rows.insert(rows.end(), more.begin(), more.end());
  RunTable(rows);
}

// Changes made in place (the heap block reused) must reach WATCH like any other write.
TEST_F(StringsTest, InPlaceChangesAbortWatchers) {
  struct Case {
    std::vector<std::string> setup, change;
    bool aborts;
  };
  const std::vector<Case> cases = {
      {{"SET", "k", "a value on the heap"}, {"APPEND", "k", "x"}, true},
      {{"SET", "k", "a value on the heap"}, {"APPEND", "k", ""}, true},
      {{"SET", "k", "inline"}, {"APPEND", "k", "!"}, true},
      {{"SET", "k", "a value on the heap"}, {"SETRANGE", "k", "0", "A"}, true},
      {{"SET", "k", "a value on the heap"}, {"SETRANGE", "k", "0", ""}, false},
      {{"SET", "k", "12345678901"}, {"INCR", "k"}, true},
      {{"SET", "k", "1.2345678901"}, {"INCRBYFLOAT", "k", "1"}, true},
      {{"SET", "k", "v"}, {"GETEX", "k", "EX", "100"}, true},
      {{"SET", "k", "v", "EX", "100"}, {"GETEX", "k", "PERSIST"}, true},
      {{"SET", "k", "v"}, {"GETEX", "k", "PERSIST"}, false},
      {{"SET", "k", "v"}, {"GETEX", "k"}, false},
      {{"SET", "k", "a value on the heap"}, {"GETRANGE", "k", "0", "3"}, false},
  };
  for (const bool on_vessel : {true, false}) {
    for (const Case& c : cases) {
      RespClient a = on_vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
      RespClient b = on_vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
      a.Cmd(c.setup);
      a("WATCH", "k");
      b.Cmd(c.change);
      a("MULTI");
      a("PING");
      const Reply r = a("EXEC");
      const bool aborted = r.type == Reply::Type::kNilArray || r.type == Reply::Type::kNil;
      EXPECT_EQ(aborted, c.aborts)
          << (on_vessel ? "vessel: " : "redis: ") << Show(c.change) << " -> " << r.ToString();
    }
  }
}

// Longer LCS inputs over a small alphabet: many runs, so the walk back must match Redis's.
TEST_F(StringsTest, LcsLongInputs) {
  std::string a, b;
  uint32_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 1103515245 + 12345;
    a += "ACGT"[(x >> 16) % 4];
    x = x * 1103515245 + 12345;
    if (i < 250) b += "ACGT"[(x >> 16) % 4];
  }
  RunTable({
      {{"MSET", "a", a, "b", b}, Ok()},
      {{"LCS", "a", "b"}, Any()},
      {{"LCS", "a", "b", "LEN"}, Any()},
      {{"LCS", "a", "b", "IDX"}, Any()},
      {{"LCS", "b", "a", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"}, Any()},
  });
}

// COMMAND INFO with what the SDK cannot express yet removed on both sides: the "module" flag the
// host adds, command tips, key-spec notes and the VARIABLE_FLAGS key-spec flag.
Reply NormalizeCommandInfo(Reply r) {
  if (r.elems.size() != 1 || r.elems[0].elems.size() < 9) return r;
  Reply& info = r.elems[0];
  std::erase_if(info.elems[2].elems, [](const Reply& f) { return f.str == "module"; });
  info.elems[7].elems.clear();
  for (Reply& spec : info.elems[8].elems) {
    auto& kv = spec.elems;
    for (size_t i = 0; i + 1 < kv.size();) {
      if (kv[i].str == "notes") {
        kv.erase(kv.begin() + i, kv.begin() + i + 2);
        continue;
      }
      if (kv[i].str == "flags")
        std::erase_if(kv[i + 1].elems, [](const Reply& f) { return f.str == "variable_flags"; });
      i += 2;
    }
  }
  return r;
}

TEST_F(StringsTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name :
       {"get",  "set",  "setnx",  "setex",  "psetex",      "getset",   "getdel", "getex",
        "mget", "mset", "msetnx", "append", "strlen",      "getrange", "substr", "setrange",
        "incr", "decr", "incrby", "decrby", "incrbyfloat", "lcs"}) {
    const Reply v = NormalizeCommandInfo(vessel("COMMAND", "INFO", name));
    const Reply r = NormalizeCommandInfo(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
}

}  // namespace
}  // namespace vessel::test
