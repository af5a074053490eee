// The vectors module (VEC.*) against the in-process vessel server. Vectors are not a Redis
// family, so the tables run on vessel only (RunVesselTable), in RESP2 and RESP3; where a VEC
// command has a Redis list twin (VEC.RANGE and LRANGE, VEC.TRIM and LTRIM, VEC.INDEX and LINDEX)
// the two are compared against redis-server over a grid of arguments. A randomized model-based
// test replays seeded command sequences against an in-test std::vector per key.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/family.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kNoSuchKey[] = "ERR no such key";
constexpr char kOutOfRange[] = "ERR index out of range";
constexpr char kTooLong[] = "ERR vector exceeds maximum allowed length";

// got == want, showing both when not.
::testing::AssertionResult Same(const Reply& got, const Reply& want) {
  if (got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\n  vessel:   " << got.ToString() << "\n  expected: " << want.ToString() << "\n  ";
}

// Every command of the module with its flags and key-spec flags, as COMMAND INFO shows them.
const std::vector<CommandInfo> kCommands = {
    {"vec.push", -3, {"write", "denyoom", "fast"}, {"RW", "insert"}},
    {"vec.pop", -2, {"write", "fast"}, {"RW", "access", "delete"}},
    {"vec.len", 2, {"readonly", "fast"}, {"RO"}},
    {"vec.index", 3, {"readonly", "fast"}, {"RO", "access"}},
    {"vec.front", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"vec.back", 2, {"readonly", "fast"}, {"RO", "access"}},
    {"vec.mget", -3, {"readonly", "fast"}, {"RO", "access"}},
    {"vec.set", 4, {"write", "denyoom", "fast"}, {"RW", "update"}},
    {"vec.mset", -4, {"write", "denyoom"}, {"RW", "update"}},
    {"vec.range", 4, {"readonly"}, {"RO", "access"}},
    {"vec.insert", -4, {"write", "denyoom"}, {"RW", "insert"}},
    {"vec.erase", -3, {"write"}, {"RW", "delete"}},
    {"vec.trim", 4, {"write"}, {"RW", "delete"}},
    {"vec.resize", -3, {"write", "denyoom"}, {"RW", "insert", "delete"}},
    {"vec.find", -3, {"readonly"}, {"RO"}},
    {"vec.swap", 4, {"write", "fast"}, {"RW", "update"}},
    {"vec.clear", 2, {"write"}, {"RW", "delete"}},
};

class VectorsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- one command at a time ----

std::vector<Row> PushPopRows() {
  return {
      {{"VEC.PUSH", "v", "a"}, Int(1)},
      {{"VEC.PUSH", "v", "b", "c", "d"}, Int(4)},
      {{"vec.push", "v", "e"}, Int(5)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "b", "c", "d", "e"})},
      {{"TYPE", "v"}, Simple("vector")},
      {{"VEC.POP", "v"}, Bulk("e")},
      {{"VEC.POP", "v", "2"}, BulkArr({"d", "c"})},
      {{"VEC.POP", "v", "0"}, Arr({})},
      {{"VEC.LEN", "v"}, Int(2)},
      {{"VEC.POP", "v", "-1"}, Error(kNotPositive)},
      {{"VEC.POP", "v", "x"}, Error(kNotInt)},
      {{"VEC.POP", "v", "1.5"}, Error(kNotInt)},
      {{"VEC.POP", "v", "1", "2"}, Arity("vec.pop")},
      {{"VEC.LEN", "v"}, Int(2)},
      {{"VEC.POP", "v", "9223372036854775807"}, BulkArr({"b", "a"})},
      {{"EXISTS", "v"}, Int(0)},  // emptied: the key is gone
      {{"VEC.POP", "v"}, Nil()},
      {{"VEC.POP", "v", "1"}, NilArray()},
      {{"VEC.POP", "v", "0"}, NilArray()},
      {{"VEC.POP", "v", "-1"}, Error(kNotPositive)},  // arguments before the key
      {{"VEC.LEN", "v"}, Int(0)},
      {{"VEC.PUSH", "v", "only"}, Int(1)},
      {{"VEC.POP", "v"}, Bulk("only")},
      {{"EXISTS", "v"}, Int(0)},
      {{"VEC.PUSH", "big", std::string(100, 'x'), "s", std::string(16, 'y')}, Int(3)},
      {{"VEC.POP", "big", "3"}, BulkArr({std::string(16, 'y'), "s", std::string(100, 'x')})},
      {{"DBSIZE"}, Int(0)},
  };
}

TEST_F(VectorsTest, PushAndPop) { RunBothProtocols(PushPopRows()); }

std::vector<Row> ReadRows() {
  return {
      {{"VEC.PUSH", "v", "a", "b", "c"}, Int(3)},
      {{"VEC.INDEX", "v", "0"}, Bulk("a")},
      {{"VEC.INDEX", "v", "2"}, Bulk("c")},
      {{"VEC.INDEX", "v", "3"}, Nil()},
      {{"VEC.INDEX", "v", "-1"}, Bulk("c")},
      {{"VEC.INDEX", "v", "-3"}, Bulk("a")},
      {{"VEC.INDEX", "v", "-4"}, Nil()},
      {{"VEC.INDEX", "v", "9223372036854775807"}, Nil()},
      {{"VEC.INDEX", "v", "-9223372036854775808"}, Nil()},
      {{"VEC.INDEX", "v", "9223372036854775808"}, Error(kNotInt)},
      {{"VEC.INDEX", "v", "x"}, Error(kNotInt)},
      {{"VEC.INDEX", "v", "1.0"}, Error(kNotInt)},
      {{"VEC.INDEX", "v", ""}, Error(kNotInt)},
      {{"VEC.INDEX", "v", " 1"}, Error(kNotInt)},
      {{"VEC.INDEX", "v", "+1"}, Error(kNotInt)},
      {{"VEC.INDEX", "v", "01"}, Error(kNotInt)},
      {{"VEC.INDEX", "nokey", "0"}, Nil()},
      {{"VEC.INDEX", "nokey", "x"}, Error(kNotInt)},
      {{"VEC.FRONT", "v"}, Bulk("a")},
      {{"VEC.BACK", "v"}, Bulk("c")},
      {{"VEC.FRONT", "nokey"}, Nil()},
      {{"VEC.BACK", "nokey"}, Nil()},
      {{"VEC.MGET", "v", "0", "-1", "5", "1", "-9"},
       Arr({Bulk("a"), Bulk("c"), Nil(), Bulk("b"), Nil()})},
      {{"VEC.MGET", "v", "1"}, BulkArr({"b"})},
      {{"VEC.MGET", "nokey", "0", "1"}, Arr({Nil(), Nil()})},
      {{"VEC.MGET", "v", "0", "x"}, Error(kNotInt)},
      {{"VEC.MGET", "nokey", "x"}, Error(kNotInt)},
      {{"VEC.LEN", "v"}, Int(3)},
      {{"VEC.LEN", "nokey"}, Int(0)},
      // An empty element is a bulk, never confused with nil.
      {{"VEC.PUSH", "e", ""}, Int(1)},
      {{"VEC.INDEX", "e", "0"}, Bulk("")},
      {{"VEC.INDEX", "e", "1"}, Nil()},
      {{"VEC.FRONT", "e"}, Bulk("")},
      {{"VEC.MGET", "e", "0", "1"}, Arr({Bulk(""), Nil()})},
      {{"VEC.POP", "e"}, Bulk("")},
      {{"EXISTS", "e"}, Int(0)},
  };
}

TEST_F(VectorsTest, IndexFrontBackMGetLen) { RunBothProtocols(ReadRows()); }

std::vector<Row> SetRows() {
  const std::string longer(100, 'L');
  return {
      {{"VEC.SET", "nokey", "0", "x"}, Error(kNoSuchKey)},
      {{"VEC.SET", "nokey", "x", "x"}, Error(kNotInt)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"VEC.PUSH", "v", "a", "b", "c"}, Int(3)},
      {{"VEC.SET", "v", "0", "A"}, Ok()},
      {{"VEC.SET", "v", "-1", "C"}, Ok()},
      {{"VEC.SET", "v", "3", "x"}, Error(kOutOfRange)},
      {{"VEC.SET", "v", "-4", "x"}, Error(kOutOfRange)},
      {{"VEC.SET", "v", "9223372036854775807", "x"}, Error(kOutOfRange)},
      {{"VEC.SET", "v", "1", longer}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"A", longer, "C"})},
      {{"VEC.SET", "v", "1", "short"}, Ok()},  // a heap element becomes inline
      {{"VEC.SET", "v", "0", ""}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"", "short", "C"})},
      {{"VEC.MSET", "v", "0", "x", "2", "z"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"x", "short", "z"})},
      {{"VEC.MSET", "v", "0", "p", "-3", longer}, Ok()},  // a repeated position keeps the last
      {{"VEC.INDEX", "v", "0"}, Bulk(longer)},
      // All or none: one bad index or position changes nothing.
      {{"VEC.MSET", "v", "0", "y", "5", "z"}, Error(kOutOfRange)},
      {{"VEC.MSET", "v", "0", "y", "x", "z"}, Error(kNotInt)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({longer, "short", "z"})},
      {{"VEC.MSET", "v", "0"}, Arity("vec.mset")},
      {{"VEC.MSET", "v", "0", "a", "1"}, Arity("vec.mset")},
      {{"VEC.MSET", "nokey", "0", "a"}, Error(kNoSuchKey)},
      {{"VEC.MSET", "nokey", "x", "a"}, Error(kNotInt)},
      {{"EXISTS", "nokey"}, Int(0)},
  };
}

TEST_F(VectorsTest, SetAndMSet) { RunBothProtocols(SetRows()); }

TEST_F(VectorsTest, Range) {
  const Strings all = Seq("e", 0, 10);
  RunBothProtocols({
      {Cat({"VEC.PUSH", "v"}, all), Int(10)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr(all)},
      {{"VEC.RANGE", "v", "2", "4"}, BulkArr({"e2", "e3", "e4"})},
      {{"VEC.RANGE", "v", "-3", "-1"}, BulkArr({"e7", "e8", "e9"})},
      {{"VEC.RANGE", "v", "-100", "1"}, BulkArr({"e0", "e1"})},
      {{"VEC.RANGE", "v", "5", "100"}, BulkArr({"e5", "e6", "e7", "e8", "e9"})},
      {{"VEC.RANGE", "v", "0", "0"}, BulkArr({"e0"})},
      {{"VEC.RANGE", "v", "5", "4"}, Arr({})},
      {{"VEC.RANGE", "v", "10", "20"}, Arr({})},
      {{"VEC.RANGE", "v", "-1", "-2"}, Arr({})},
      {{"VEC.RANGE", "v", "-100", "-50"}, Arr({})},
      {{"VEC.RANGE", "v", "-9223372036854775808", "9223372036854775807"}, BulkArr(all)},
      {{"VEC.RANGE", "v", "9223372036854775807", "-9223372036854775808"}, Arr({})},
      {{"VEC.RANGE", "nokey", "0", "-1"}, Arr({})},
      {{"VEC.RANGE", "v", "x", "1"}, Error(kNotInt)},
      {{"VEC.RANGE", "v", "0", "1.5"}, Error(kNotInt)},
      {{"VEC.RANGE", "nokey", "0", "y"}, Error(kNotInt)},
  });
}

TEST_F(VectorsTest, Insert) {
  const std::string longer(40, 'L');
  RunBothProtocols({
      {{"VEC.INSERT", "nokey", "1", "a"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "nokey", "-1", "a"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "nokey", "x", "a"}, Error(kNotInt)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"VEC.INSERT", "v", "0", "a"}, Int(1)},  // position 0 of a missing key creates it
      {{"TYPE", "v"}, Simple("vector")},
      {{"VEC.INSERT", "v", "1", "c"}, Int(2)},  // index == length appends
      {{"VEC.INSERT", "v", "1", "b"}, Int(3)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "b", "c"})},
      {{"VEC.INSERT", "v", "-1", "x", longer}, Int(5)},  // before the last element, in order
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "b", "x", longer, "c"})},
      {{"VEC.INSERT", "v", "-5", "s"}, Int(6)},
      {{"VEC.INSERT", "v", "-7", "z"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "v", "7", "z"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "v", "9223372036854775807", "z"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "v", "-9223372036854775808", "z"}, Error(kOutOfRange)},
      {{"VEC.INSERT", "v", "6", "end", ""}, Int(8)},
      {{"VEC.INSERT", "v", "0", "", "first"}, Int(10)},
      {{"VEC.RANGE", "v", "0", "-1"},
       BulkArr({"", "first", "s", "a", "b", "x", longer, "c", "end", ""})},
      {{"VEC.INSERT", "v", "x", "a"}, Error(kNotInt)},
      {{"VEC.INSERT", "v", "0"}, Arity("vec.insert")},
      {{"VEC.LEN", "v"}, Int(10)},
  });
}

TEST_F(VectorsTest, Erase) {
  RunBothProtocols({
      {{"VEC.ERASE", "nokey", "0"}, Int(0)},
      {{"VEC.ERASE", "nokey", "5", "2"}, Int(0)},
      {{"VEC.ERASE", "nokey", "x"}, Error(kNotInt)},
      {{"VEC.ERASE", "nokey", "0", "-1"}, Error(kNotPositive)},
      {{"VEC.PUSH", "v", "a", "b", "c", "d", "e", "f"}, Int(6)},
      {{"VEC.ERASE", "v", "1"}, Int(1)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "c", "d", "e", "f"})},
      {{"VEC.ERASE", "v", "-2", "2"}, Int(2)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "c", "d"})},
      {{"VEC.ERASE", "v", "1", "100"}, Int(2)},  // fewer at the end
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a"})},
      {{"VEC.ERASE", "v", "0", "0"}, Int(0)},
      {{"VEC.ERASE", "v", "1"}, Error(kOutOfRange)},
      {{"VEC.ERASE", "v", "-2"}, Error(kOutOfRange)},
      {{"VEC.ERASE", "v", "0", "-1"}, Error(kNotPositive)},
      {{"VEC.ERASE", "v", "x"}, Error(kNotInt)},
      {{"VEC.ERASE", "v", "0", "x"}, Error(kNotInt)},
      {{"VEC.ERASE", "v", "0", "1", "2"}, Arity("vec.erase")},
      {{"VEC.LEN", "v"}, Int(1)},
      {{"VEC.ERASE", "v", "0", "9223372036854775807"}, Int(1)},
      {{"EXISTS", "v"}, Int(0)},
      {{"VEC.PUSH", "w", "a", std::string(50, 'b'), "c"}, Int(3)},
      {{"VEC.ERASE", "w", "0", "2"}, Int(2)},
      {{"VEC.RANGE", "w", "0", "-1"}, BulkArr({"c"})},
  });
}

TEST_F(VectorsTest, Trim) {
  RunBothProtocols({
      {{"VEC.TRIM", "nokey", "0", "1"}, Ok()},
      {{"VEC.TRIM", "nokey", "x", "1"}, Error(kNotInt)},
      {{"EXISTS", "nokey"}, Int(0)},
      {Cat({"VEC.PUSH", "v"}, Seq("e", 0, 10)), Int(10)},
      {{"VEC.TRIM", "v", "2", "-3"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr(Seq("e", 2, 8))},
      {{"VEC.TRIM", "v", "-100", "100"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr(Seq("e", 2, 8))},
      {{"VEC.TRIM", "v", "1", "1"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"e3"})},
      {{"VEC.TRIM", "v", "0", "y"}, Error(kNotInt)},
      {{"VEC.TRIM", "v", "5", "1"}, Ok()},  // an empty range deletes the key
      {{"EXISTS", "v"}, Int(0)},
      {Cat({"VEC.PUSH", "w"}, Seq("e", 0, 3)), Int(3)},
      {{"VEC.TRIM", "w", "3", "10"}, Ok()},
      {{"EXISTS", "w"}, Int(0)},
  });
}

TEST_F(VectorsTest, Resize) {
  const std::string fill(20, 'f');
  RunBothProtocols({
      {{"VEC.RESIZE", "nokey", "0"}, Int(0)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"VEC.RESIZE", "v", "3"}, Int(3)},  // creates the key, default fill ""
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"", "", ""})},
      {{"VEC.RESIZE", "v", "5", "x"}, Int(5)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"", "", "", "x", "x"})},
      {{"VEC.RESIZE", "v", "2", "ignored"}, Int(2)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"", ""})},
      {{"VEC.RESIZE", "v", "2"}, Int(2)},
      {{"VEC.RESIZE", "v", "0"}, Int(0)},
      {{"EXISTS", "v"}, Int(0)},
      {{"VEC.RESIZE", "v", "-1"}, Error(kNotPositive)},
      {{"VEC.RESIZE", "v", "x"}, Error(kNotInt)},
      {{"VEC.RESIZE", "v", "1", "a", "b"}, Arity("vec.resize")},
      {{"VEC.RESIZE", "v", "4294967296"}, Error(kTooLong)},
      {{"VEC.RESIZE", "v", "9223372036854775807"}, Error(kTooLong)},
      {{"EXISTS", "v"}, Int(0)},
      {{"VEC.RESIZE", "v", "3", fill}, Int(3)},  // heap elements, one block each
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({fill, fill, fill})},
      {{"VEC.SET", "v", "1", "one"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({fill, "one", fill})},
      {{"VEC.RESIZE", "v", "100000"}, Int(100000)},
      {{"VEC.LEN", "v"}, Int(100000)},
      {{"VEC.INDEX", "v", "99999"}, Bulk("")},
      {{"VEC.INDEX", "v", "2"}, Bulk(fill)},
      {{"VEC.RESIZE", "v", "1"}, Int(1)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({fill})},
  });
}

TEST_F(VectorsTest, Find) {
  RunBothProtocols({
      {{"VEC.FIND", "nokey", "a"}, Int(-1)},
      {{"VEC.FIND", "nokey", "a", "FROM", "x"}, Error(kNotInt)},
      {{"VEC.PUSH", "v", "a", "b", "a", "c"}, Int(4)},
      {{"VEC.FIND", "v", "a"}, Int(0)},
      {{"VEC.FIND", "v", "a", "FROM", "1"}, Int(2)},
      {{"VEC.FIND", "v", "a", "from", "3"}, Int(-1)},
      {{"VEC.FIND", "v", "c", "FROM", "-1"}, Int(3)},
      {{"VEC.FIND", "v", "a", "FROM", "-2"}, Int(2)},
      {{"VEC.FIND", "v", "b", "FROM", "-2"}, Int(-1)},
      {{"VEC.FIND", "v", "a", "FROM", "-3"}, Int(2)},
      {{"VEC.FIND", "v", "a", "FROM", "-100"}, Int(0)},
      {{"VEC.FIND", "v", "a", "FROM", "100"}, Int(-1)},
      {{"VEC.FIND", "v", "a", "FROM", "-9223372036854775808"}, Int(0)},
      {{"VEC.FIND", "v", "a", "FROM", "9223372036854775807"}, Int(-1)},
      {{"VEC.FIND", "v", "a", "FROM", "1", "FROM", "0"}, Int(0)},  // the last FROM wins
      {{"VEC.FIND", "v", "z"}, Int(-1)},
      {{"VEC.FIND", "v", "A"}, Int(-1)},  // case-sensitive
      {{"VEC.FIND", "v", ""}, Int(-1)},
      {{"VEC.FIND", "v", "a", "FROM"}, Error(kSyntax)},
      {{"VEC.FIND", "v", "a", "FROM", "x"}, Error(kNotInt)},
      {{"VEC.FIND", "v", "a", "BAD", "1"}, Error(kSyntax)},
      {{"VEC.FIND", "v", "a", "1"}, Error(kSyntax)},
      {{"VEC.PUSH", "v", ""}, Int(5)},
      {{"VEC.FIND", "v", ""}, Int(4)},
  });
}

TEST_F(VectorsTest, Swap) {
  const std::string longer(30, 'L');
  RunBothProtocols({
      {{"VEC.SWAP", "nokey", "0", "1"}, Error(kNoSuchKey)},
      {{"VEC.SWAP", "nokey", "x", "1"}, Error(kNotInt)},
      {{"VEC.PUSH", "v", "a", "b", longer}, Int(3)},
      {{"VEC.SWAP", "v", "0", "2"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({longer, "b", "a"})},
      {{"VEC.SWAP", "v", "-1", "0"}, Ok()},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "b", longer})},
      {{"VEC.SWAP", "v", "1", "1"}, Ok()},
      {{"VEC.SWAP", "v", "0", "3"}, Error(kOutOfRange)},
      {{"VEC.SWAP", "v", "-4", "0"}, Error(kOutOfRange)},
      {{"VEC.SWAP", "v", "0", "x"}, Error(kNotInt)},
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", "b", longer})},
  });
}

TEST_F(VectorsTest, Clear) {
  RunBothProtocols({
      {{"VEC.CLEAR", "nokey"}, Int(0)},
      {{"VEC.PUSH", "v", "a", "b", std::string(90, 'c')}, Int(3)},
      {{"VEC.CLEAR", "v"}, Int(3)},
      {{"EXISTS", "v"}, Int(0)},
      {{"VEC.CLEAR", "v"}, Int(0)},
      {{"SET", "str", "x"}, Ok()},
      {{"VEC.CLEAR", "str"}, WrongType()},
      {{"GET", "str"}, Bulk("x")},
  });
}

TEST_F(VectorsTest, BinaryElements) {
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes.push_back(static_cast<char>(c));
  const Strings elems = {"a\0b"s,
                         "\r\n"s,
                         ""s,
                         "\0"s,
                         std::string(15, '\0'),
                         std::string(16, '\xff'),
                         "123456789012345",
                         "1234567890123456",
                         all_bytes,
                         std::string(100000, 'z') + "\0end"s};
  std::vector<Row> rows = {{Cat({"VEC.PUSH", "v"}, elems), Int(static_cast<int64_t>(elems.size()))},
                           {{"VEC.RANGE", "v", "0", "-1"}, BulkArr(elems)}};
  for (size_t i = 0; i < elems.size(); ++i) {
    rows.push_back({{"VEC.INDEX", "v", Str(static_cast<int64_t>(i))}, Bulk(elems[i])});
    rows.push_back({{"VEC.FIND", "v", elems[i]}, Int(static_cast<int64_t>(i))});
  }
  const std::vector<Row> more = {
      {{"VEC.FIND", "v", "a"}, Int(-1)},  // "a\0b" is not "a"
      {{"VEC.FIND", "v", "a\0"s}, Int(-1)},
      {{"VEC.SET", "v", "0", all_bytes}, Ok()},
      {{"VEC.FIND", "v", all_bytes}, Int(0)},
      {{"VEC.SWAP", "v", "0", "-1"}, Ok()},
      {{"VEC.INDEX", "v", "0"}, Bulk(elems.back())},
      {{"VEC.INSERT", "v", "1", "\0\0"s, "x\r\ny"s}, Int(12)},
      {{"VEC.MGET", "v", "1", "2"}, BulkArr({"\0\0"s, "x\r\ny"s})},
      {{"VEC.RESIZE", "f", "2", "\0f\0"s}, Int(2)},
      {{"VEC.RANGE", "f", "0", "-1"}, BulkArr({"\0f\0"s, "\0f\0"s})},
  };
  rows.insert(rows.end(), more.begin(), more.end());
  RunBothProtocols(rows);
}

// ---- types and protocol ----

TEST_F(VectorsTest, WrongTypeBothWays) {
  std::vector<Row> rows = {
      {{"SET", "str", "v"}, Ok()},
      {{"SADD", "set", "m"}, Int(1)},
      {{"VEC.PUSH", "vec", "a", "b"}, Int(2)},
      {{"TYPE", "vec"}, Simple("vector")},
  };
  for (const char* other : {"str", "set"}) {
    const std::string k = other;
    const std::vector<Row> each = {
        {{"VEC.PUSH", k, "x"}, WrongType()},
        {{"VEC.POP", k}, WrongType()},
        {{"VEC.POP", k, "1"}, WrongType()},
        {{"VEC.LEN", k}, WrongType()},
        {{"VEC.INDEX", k, "0"}, WrongType()},
        {{"VEC.FRONT", k}, WrongType()},
        {{"VEC.BACK", k}, WrongType()},
        {{"VEC.MGET", k, "0", "1"}, WrongType()},
        {{"VEC.SET", k, "0", "x"}, WrongType()},
        {{"VEC.MSET", k, "0", "x"}, WrongType()},
        {{"VEC.RANGE", k, "0", "-1"}, WrongType()},
        {{"VEC.INSERT", k, "0", "x"}, WrongType()},
        {{"VEC.ERASE", k, "0"}, WrongType()},
        {{"VEC.TRIM", k, "0", "0"}, WrongType()},
        {{"VEC.RESIZE", k, "0"}, WrongType()},
        {{"VEC.RESIZE", k, "5"}, WrongType()},
        {{"VEC.FIND", k, "x"}, WrongType()},
        {{"VEC.SWAP", k, "0", "0"}, WrongType()},
        {{"VEC.CLEAR", k}, WrongType()},
        {{"VEC.INDEX", k, "x"}, Error(kNotInt)},  // arguments are checked before the key
    };
    rows.insert(rows.end(), each.begin(), each.end());
  }
  const std::vector<Row> tail = {
      {{"GET", "str"}, Bulk("v")},
      {{"SCARD", "set"}, Int(1)},
      {{"GET", "vec"}, WrongType()},
      {{"APPEND", "vec", "x"}, WrongType()},
      {{"INCR", "vec"}, WrongType()},
      {{"STRLEN", "vec"}, WrongType()},
      {{"GETDEL", "vec"}, WrongType()},
      {{"MGET", "vec", "str"}, Arr({Nil(), Bulk("v")})},
      {{"SADD", "vec", "x"}, WrongType()},
      {{"SMEMBERS", "vec"}, WrongType()},
      {{"SINTER", "set", "vec"}, WrongType()},
      {{"SUNIONSTORE", "dst", "vec"}, WrongType()},
      {{"VEC.RANGE", "vec", "0", "-1"}, BulkArr({"a", "b"})},
      {{"SUNIONSTORE", "vec", "set"}, Int(1)},  // a destination of another type is replaced
      {{"TYPE", "vec"}, Simple("set")},
      {{"VEC.PUSH", "v2", "a"}, Int(1)},
      {{"SET", "v2", "now a string"}, Ok()},  // SET replaces any type
      {{"TYPE", "v2"}, Simple("string")},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  RunBothProtocols(rows);
}

TEST_F(VectorsTest, WrongTypeAgainstLists) {
  RespClient v = Servers::Get().Vessel();
  if (v("COMMAND", "INFO", "lpush").elems.at(0).type != Reply::Type::kArray) {
    GTEST_SKIP() << "the lists module is not loaded";
  }
  RunBothProtocols({
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"VEC.PUSH", "v", "a"}, Int(1)},
      {{"VEC.PUSH", "l", "x"}, WrongType()},
      {{"VEC.INDEX", "l", "0"}, WrongType()},
      {{"VEC.RANGE", "l", "0", "-1"}, WrongType()},
      {{"VEC.LEN", "l"}, WrongType()},
      {{"LPUSH", "v", "a"}, WrongType()},
      {{"RPOP", "v"}, WrongType()},
      {{"LINDEX", "v", "0"}, WrongType()},
      {{"LRANGE", "v", "0", "-1"}, WrongType()},
      {{"LLEN", "v"}, WrongType()},
      {{"LMOVE", "l", "v", "LEFT", "RIGHT"}, WrongType()},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"a", "b"})},
      {{"TYPE", "l"}, Simple("list")},
      {{"TYPE", "v"}, Simple("vector")},
  });
}

TEST_F(VectorsTest, Resp3ReplyTypes) {
  RespClient c = Servers::Get().Vessel();
  c("HELLO", "3");
  c("VEC.PUSH", "v", "a", "");
  EXPECT_EQ(c("VEC.INDEX", "v", "5").type, Reply::Type::kNil);
  EXPECT_EQ(c("VEC.INDEX", "v", "1").type, Reply::Type::kBulk);
  EXPECT_EQ(c("VEC.FRONT", "nokey").type, Reply::Type::kNil);
  EXPECT_EQ(c("VEC.POP", "nokey").type, Reply::Type::kNil);
  EXPECT_EQ(c("VEC.POP", "nokey", "2").type, Reply::Type::kNil);  // RESP3 null, as RPOP
  EXPECT_EQ(c("VEC.POP", "v", "0").type, Reply::Type::kArray);
  EXPECT_EQ(c("VEC.RANGE", "v", "0", "-1").type, Reply::Type::kArray);
  const Reply mget = c("VEC.MGET", "v", "0", "9");
  ASSERT_EQ(mget.type, Reply::Type::kArray);
  ASSERT_EQ(mget.elems.size(), 2u);
  EXPECT_EQ(mget.elems[1].type, Reply::Type::kNil);
  EXPECT_EQ(c("VEC.LEN", "v").type, Reply::Type::kInt);
  EXPECT_EQ(c("VEC.SET", "v", "0", "b").type, Reply::Type::kStatus);
  // RESP2 tells the two nils apart.
  RespClient c2 = Servers::Get().Vessel();
  EXPECT_EQ(c2("VEC.POP", "nokey").type, Reply::Type::kNil);
  EXPECT_EQ(c2("VEC.POP", "nokey", "2").type, Reply::Type::kNilArray);
}

TEST_F(VectorsTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"VEC.PUSH", "k"},
                                                 {"VEC.POP"},
                                                 {"VEC.LEN"},
                                                 {"VEC.LEN", "k", "x"},
                                                 {"VEC.INDEX", "k"},
                                                 {"VEC.INDEX", "k", "0", "1"},
                                                 {"VEC.FRONT"},
                                                 {"VEC.FRONT", "k", "x"},
                                                 {"VEC.BACK"},
                                                 {"VEC.BACK", "k", "x"},
                                                 {"VEC.MGET", "k"},
                                                 {"VEC.SET", "k", "0"},
                                                 {"VEC.SET", "k", "0", "a", "b"},
                                                 {"VEC.MSET", "k", "0"},
                                                 {"VEC.RANGE", "k", "0"},
                                                 {"VEC.RANGE", "k", "0", "1", "2"},
                                                 {"VEC.INSERT", "k", "0"},
                                                 {"VEC.ERASE", "k"},
                                                 {"VEC.TRIM", "k", "0"},
                                                 {"VEC.RESIZE", "k"},
                                                 {"VEC.FIND", "k"},
                                                 {"VEC.SWAP", "k", "0"},
                                                 {"VEC.SWAP", "k", "0", "1", "2"},
                                                 {"VEC.CLEAR"},
                                                 {"VEC.CLEAR", "k", "x"}}) {
    rows.push_back({cmd, Arity(Lower(cmd[0]))});
  }
  RunBothProtocols(rows);
}

// COMMAND INFO, DOCS and ACL CAT show the table (ExpectCommandTable); besides, (first, last,
// step) = (1, 1, 1) and one key spec at index 1.
TEST_F(VectorsTest, CommandInfoMatchesTheTable) {
  ExpectCommandTable("vectors", "vector", kCommands);
  RespClient c = Servers::Get().Vessel();
  for (const CommandInfo& want : kCommands) {
    SCOPED_TRACE(want.name);
    const Reply r = c("COMMAND", "INFO", want.name);
    ASSERT_EQ(r.elems.size(), 1u);
    const Reply& info = r.elems[0];
    ASSERT_EQ(info.type, Reply::Type::kArray) << r.ToString();
    ASSERT_EQ(info.elems.size(), 10u);
    EXPECT_EQ(info.elems[0].str, want.name);
    EXPECT_EQ(info.elems[3].integer, 1);
    EXPECT_EQ(info.elems[4].integer, 1);
    EXPECT_EQ(info.elems[5].integer, 1);
    const Reply& specs = info.elems[8];
    ASSERT_EQ(specs.elems.size(), 1u) << info.ToString();
    const Reply& spec = specs.elems[0];  // flags, {set}, begin_search, {...}, find_keys, {...}
    ASSERT_EQ(spec.elems.size(), 6u) << spec.ToString();
    EXPECT_EQ(spec.elems[0].str, "flags");
    Strings getkeys = {"COMMAND", "GETKEYS", want.name, "k"};
    while (static_cast<int>(getkeys.size()) - 2 < std::abs(want.arity)) getkeys.push_back("0");
    const Reply keys = c.Cmd(getkeys);
    EXPECT_EQ(Elements(keys), Strings{"k"}) << keys.ToString();
  }
}

TEST_F(VectorsTest, CommandDocsForEveryCommand) {
  RespClient c = Servers::Get().Vessel();
  for (const CommandInfo& want : kCommands) {
    SCOPED_TRACE(want.name);
    const Reply r = c("COMMAND", "DOCS", want.name);
    ASSERT_EQ(r.elems.size(), 2u) << r.ToString();
    EXPECT_EQ(r.elems[0].str, want.name);
    std::map<std::string, std::string> docs;
    for (size_t i = 0; i + 1 < r.elems[1].elems.size(); i += 2) {
      docs[r.elems[1].elems[i].str] = r.elems[1].elems[i + 1].str;
    }
    EXPECT_FALSE(docs["summary"].empty());
    EXPECT_FALSE(docs["syntax"].empty());
    EXPECT_TRUE(docs["syntax"].starts_with("key")) << docs["syntax"];
    EXPECT_EQ(docs["since"], "1.0.0");
  }
}

// ---- against Redis's list twins ----

// VEC.RANGE/LRANGE, VEC.INDEX/LINDEX and VEC.TRIM/LTRIM over a grid of arguments: a vector on
// vessel and a list on redis-server with the same content must answer the same.
TEST_F(VectorsTest, RangeIndexAndTrimAgreeWithRedisLists) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const Strings content = Seq("e", 0, 7);
  v.Cmd(Cat({"VEC.PUSH", "v"}, content));
  r.Cmd(Cat({"RPUSH", "l"}, content));
  const Strings edges = {"-9223372036854775808", "9223372036854775807", "x"};
  Strings args = edges;
  for (int i = -10; i <= 10; ++i) args.push_back(Str(i));
  for (const std::string& a : args) {
    const Reply got = v("VEC.INDEX", "v", a), want = r("LINDEX", "l", a);
    EXPECT_TRUE(Same(got, want)) << "index " << a;
    for (const std::string& b : args) {
      const Reply got_range = v("VEC.RANGE", "v", a, b), want_range = r("LRANGE", "l", a, b);
      EXPECT_TRUE(Same(got_range, want_range)) << "range " << a << " " << b;
      v("DEL", "t");
      r("DEL", "t");
      v.Cmd(Cat({"VEC.PUSH", "t"}, content));
      r.Cmd(Cat({"RPUSH", "t"}, content));
      const Reply got_trim = v("VEC.TRIM", "t", a, b), want_trim = r("LTRIM", "t", a, b);
      EXPECT_TRUE(Same(got_trim, want_trim)) << "trim " << a << " " << b;
      EXPECT_TRUE(Same(v("VEC.RANGE", "t", "0", "-1"), r("LRANGE", "t", "0", "-1")))
          << "trim " << a << " " << b;
      EXPECT_TRUE(Same(v("EXISTS", "t"), r("EXISTS", "t"))) << "trim " << a << " " << b;
    }
  }
  for (const char* n : {"0", "1", "3", "7", "100"}) {
    for (const bool vessel : {true, false}) {
      RespClient& c = vessel ? v : r;
      c("DEL", "p");
      c.Cmd(Cat({vessel ? "VEC.PUSH" : "RPUSH", "p"}, content));
    }
    EXPECT_TRUE(Same(v("VEC.POP", "p", n), r("RPOP", "p", n))) << "pop " << n;
    EXPECT_TRUE(Same(v("VEC.POP", "p"), r("RPOP", "p")));
    EXPECT_TRUE(Same(v("VEC.POP", "nokey", n), r("RPOP", "nokey", n)));
  }
}

// ---- the host's side of the type ----

TEST_F(VectorsTest, KeyspaceCommandsOnVectors) {
  const std::string longer = "an element stored outside its slot";
  RunBothProtocols({
      {{"VEC.PUSH", "v", "a", longer, "c"}, Int(3)},
      {{"OBJECT", "ENCODING", "v"}, Bulk("vector")},
      {{"MEMORY", "USAGE", "v"}, IntRange(100, 1000)},
      {{"COPY", "v", "v2"}, Int(1)},
      {{"VEC.POP", "v"}, Bulk("c")},
      {{"VEC.SET", "v2", "1", "changed"}, Ok()},  // the copy is deep
      {{"VEC.RANGE", "v", "0", "-1"}, BulkArr({"a", longer})},
      {{"VEC.RANGE", "v2", "0", "-1"}, BulkArr({"a", "changed", "c"})},
      {{"COPY", "v", "v2"}, Int(0)},
      {{"COPY", "v", "v2", "REPLACE"}, Int(1)},
      {{"VEC.RANGE", "v2", "0", "-1"}, BulkArr({"a", longer})},
      {{"RENAME", "v2", "v3"}, Ok()},
      {{"VEC.RANGE", "v3", "0", "-1"}, BulkArr({"a", longer})},
      {{"EXPIRE", "v3", "100"}, Int(1)},
      {{"VEC.PUSH", "v3", "d"}, Int(3)},
      {{"VEC.SET", "v3", "0", "e"}, Ok()},
      {{"VEC.INSERT", "v3", "0", "f"}, Int(4)},
      {{"TTL", "v3"}, Int(100)},  // changing a vector keeps its TTL
      {{"COPY", "v3", "v4"}, Int(1)},
      {{"TTL", "v4"}, IntRange(99, 100)},  // COPY copies it
      {{"VEC.POP", "v3", "10"}, BulkArr({"d", longer, "e", "f"})},
      {{"TTL", "v3"}, Int(-2)},  // emptied: the key and its TTL are gone
      {{"VEC.PUSH", "v3", "x"}, Int(1)},
      {{"TTL", "v3"}, Int(-1)},
      {{"PEXPIRE", "v3", "100000"}, Int(1)},
      {{"PERSIST", "v3"}, Int(1)},
      {{"TTL", "v3"}, Int(-1)},
      {{"EXPIREAT", "v3", "1"}, Int(1)},  // a time in the past deletes the key
      {{"VEC.LEN", "v3"}, Int(0)},
      {{"EXISTS", "v3"}, Int(0)},
      {{"VEC.RESIZE", "v4", "0"}, Int(0)},
      {{"TTL", "v4"}, Int(-2)},
      {{"DEL", "v"}, Int(1)},
      {{"VEC.PUSH", "u", "x"}, Int(1)},
      {{"UNLINK", "u"}, Int(1)},
      {{"DBSIZE"}, Int(0)},
  });
}

TEST_F(VectorsTest, TransactionsRunVectorCommands) {
  RunBothProtocols({
      {{"MULTI"}, Ok()},
      {{"VEC.PUSH", "v", "a", "b"}, Queued()},
      {{"VEC.SET", "v", "5", "x"}, Queued()},
      {{"VEC.INDEX", "v", "1"}, Queued()},
      {{"VEC.POP", "v", "1", "2"}, Queued()},  // a surplus argument fails at EXEC, as RPOP's
      {{"VEC.SWAP", "v", "0", "1"}, Queued()},
      {{"VEC.RANGE", "v", "0", "-1"}, Queued()},
      {{"EXEC"},
       Arr({Int(2), Error(kOutOfRange), Bulk("b"), Arity("vec.pop"), Ok(), BulkArr({"b", "a"})})},
      {{"MULTI"}, Ok()},
      {{"VEC.PUSH", "v", "c"}, Queued()},
      {{"VEC.LEN"}, Arity("vec.len")},
      {{"EXEC"}, Error("EXECABORT Transaction discarded because of previous errors.")},
      {{"VEC.LEN", "v"}, Int(2)},
      {{"MULTI"}, Ok()},
      {{"VEC.CLEAR", "v"}, Queued()},
      {{"VEC.PUSH", "w", "z"}, Queued()},
      {{"VEC.RESIZE", "w", "3", "y"}, Queued()},
      {{"EXEC"}, Arr({Int(2), Int(1), Int(3)})},
      {{"VEC.RANGE", "w", "0", "-1"}, BulkArr({"z", "y", "y"})},
      {{"EXISTS", "v"}, Int(0)},
  });
}

TEST_F(VectorsTest, WatchSeesVectorChanges) {
  RespClient a = Servers::Get().Vessel(), b = Servers::Get().Vessel();
  a("VEC.PUSH", "v", "a", "b");
  // Every command that changes the vector in place aborts a transaction watching it.
  for (const Strings& change : std::vector<Strings>{{"VEC.SET", "v", "0", "x"},
                                                    {"VEC.MSET", "v", "0", "y"},
                                                    {"VEC.SWAP", "v", "0", "1"},
                                                    {"VEC.PUSH", "v", "c"},
                                                    {"VEC.INSERT", "v", "0", "d"},
                                                    {"VEC.ERASE", "v", "0"},
                                                    {"VEC.POP", "v"},
                                                    {"VEC.TRIM", "v", "0", "0"},
                                                    {"VEC.RESIZE", "v", "4"}}) {
    SCOPED_TRACE(Show(change));
    EXPECT_EQ(a("WATCH", "v").str, "OK");
    EXPECT_NE(b.Cmd(change).type, Reply::Type::kError);
    a("MULTI");
    a("VEC.LEN", "v");
    EXPECT_EQ(a("EXEC").type, Reply::Type::kNilArray);
  }
  // Reads and failed writes do not.
  EXPECT_EQ(a("WATCH", "v").str, "OK");
  b("VEC.RANGE", "v", "0", "-1");
  b("VEC.INDEX", "v", "0");
  b("VEC.SET", "v", "100", "x");
  b("VEC.ERASE", "v", "0", "0");
  a("MULTI");
  a("VEC.LEN", "v");
  EXPECT_EQ(a("EXEC").elems.size(), 1u);
}

// ---- values: memory accounting, serialization ----

// MEMORY USAGE is exact: what it reports beyond the module's allocations for the value is the
// host's entry, the same for keys of equal length, so USAGE minus the growth of the module's
// bytes is one constant; shrinking gives memory back; deleting gives every byte back.
TEST_F(VectorsTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "vectors");
  const std::vector<Strings> contents = {
      {"a"},
      Seq("", 0, 100),
      Seq("a long element number ", 0, 1000),
      {std::string(3000, 'y'), "", std::string(16, 'z')},
      Cat(Seq("", 0, 5000), Seq("another long element ", 0, 5000))};
  std::vector<Strings> creates;
  for (size_t i = 0; i < contents.size(); ++i)
    creates.push_back(Cat({"VEC.PUSH", "key" + Str(static_cast<int64_t>(i))}, contents[i]));
  const std::vector<int64_t> overheads = ExpectMemoryUsageMatches(c, "vectors", creates);
  // Every kind of change keeps the count exact: deleting the key gives back what USAGE says.
  c("VEC.SET", "key4", "0", std::string(500, 'q'));
  c("VEC.SET", "key4", "0", std::string(100, 'p'));
  c("VEC.SET", "key4", "-1", "inline");
  c("VEC.ERASE", "key4", "10", "100");
  c("VEC.INSERT", "key4", "5", "x", std::string(70, 'w'));
  c("VEC.SWAP", "key4", "0", "-1");
  c("VEC.MSET", "key4", "1", std::string(40, 'm'), "2", "short");
  c("VEC.POP", "key4", "7");
  c("VEC.RESIZE", "key4", "12000", std::string(20, 'r'));
  const int64_t before_trim = c("MEMORY", "USAGE", "key4").integer;
  c("VEC.TRIM", "key4", "0", "99");  // a sparse buffer shrinks
  const int64_t after_trim = c("MEMORY", "USAGE", "key4").integer;
  EXPECT_LT(after_trim * 20, before_trim);
  c("VEC.RESIZE", "key3", "1000", std::string(17, 'g'));
  c("VEC.RESIZE", "key3", "900");
  Strings deleted;
  for (const std::string key : {"key2", "key3", "key4"}) {
    const std::string copy = "kez" + key.substr(3);  // a name of the same length
    const int64_t before = ModuleAllocated(c, "vectors");
    EXPECT_EQ(c("COPY", key, copy).integer, 1);
    EXPECT_NEAR(c("MEMORY", "USAGE", copy).integer - (ModuleAllocated(c, "vectors") - before),
                overheads[0], kEntryJitter)
        << key;
    EXPECT_LE(c("MEMORY", "USAGE", copy).integer, c("MEMORY", "USAGE", key).integer + 64)
        << key << ": a copy has no more spare room than its source";
    deleted.push_back(key);
    deleted.push_back(copy);
  }
  for (const std::string& key : deleted) {
    const int64_t before = ModuleAllocated(c, "vectors");
    const int64_t value_bytes = c("MEMORY", "USAGE", key).integer - overheads[0];
    EXPECT_EQ(c("DEL", key).integer, 1);
    auto freed = [&] { return before - ModuleAllocated(c, "vectors"); };
    for (int i = 0; i < 200 && std::abs(freed() - value_bytes) > kEntryJitter; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a lazy free finishes
    }
    EXPECT_NEAR(freed(), value_bytes, kEntryJitter) << key;
  }
  ExpectFlushFreesAll(c, "vectors", base);
}

// The vector type's callbacks, called directly: serialize and deserialize round trips, refusals
// of malformed input, copy, encoding, free effort.
std::string Encoded(const Strings& elems) {
  std::string s = U64(elems.size());
  for (const auto& e : elems) s += U64(e.size()) + e;
  return s;
}

TEST_F(VectorsTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("vector");
  ASSERT_TRUE(type.found());
  ASSERT_NE(type.desc().copy, nullptr);
  ASSERT_NE(type.desc().free_effort, nullptr);
  const std::vector<Strings> good = {
      {""},
      {"a", "\0b"s, std::string(15, 'c'), std::string(16, 'd'), std::string(5000, 'e')},
      Seq("element ", 0, 20000)};
  for (const Strings& elems : good) {
    const std::string bytes = Encoded(elems);
    void* v = type.Load(bytes);
    ASSERT_NE(v, nullptr) << elems.size();
    EXPECT_STREQ(type.desc().encoding(nullptr, v), "vector");
    EXPECT_EQ(type.Save(v), bytes);
    EXPECT_EQ(type.desc().free_effort(nullptr, v), elems.size());
    void* copy = type.desc().copy(nullptr, v);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(type.Save(copy), bytes);
    // Neither has spare room: a load gives back what it reserved while growing.
    const size_t used = type.desc().mem_usage(nullptr, v);
    EXPECT_LE(type.desc().mem_usage(nullptr, copy), used + used / 50 + 64);
    EXPECT_LE(used, type.desc().mem_usage(nullptr, copy) * 51 / 50 + 64);
    type.Free(copy);
    type.Free(v);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no elements", Encoded({})},
      {"truncated", Encoded({"a", "bc"}).substr(0, 26)},  // one byte short
      {"count beyond the input", U64(1000000) + U64(1) + "a"},
      {"count beyond the maximum length", U64(uint64_t{1} << 32) + U64(1) + "a"},
      {"length beyond the input", U64(1) + U64(100) + "abc"},
  };
  ExpectRefused(type, bad);
  void* v = type.Load(Encoded({"a"}), 2);
  EXPECT_EQ(v, nullptr) << "an unknown encoding version";
  if (v != nullptr) type.Free(v);
}

TEST_F(VectorsTest, DumpAndRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  const Reply info = c("COMMAND", "INFO", "dump");
  if (info.elems.empty() || info.elems[0].type != Reply::Type::kArray) {
    GTEST_SKIP() << "the host has no DUMP/RESTORE yet";
  }
  const Strings elems = {"a", "", "\0\r\n"s, std::string(200, 'x')};
  c.Cmd(Cat({"VEC.PUSH", "v"}, elems));
  const Reply dump = c("DUMP", "v");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  EXPECT_EQ(c("RESTORE", "v2", "0", dump.str).str, "OK");
  EXPECT_EQ(c("TYPE", "v2").str, "vector");
  EXPECT_EQ(Elements(c("VEC.RANGE", "v2", "0", "-1")), elems);
  EXPECT_EQ(c("RESTORE", "v2", "0", dump.str).type, Reply::Type::kError);  // BUSYKEY
  EXPECT_EQ(c("RESTORE", "v2", "0", dump.str, "REPLACE").str, "OK");
  EXPECT_EQ(c("DUMP", "nokey").type, Reply::Type::kNil);
}

// ---- the model-based test ----

// The reference: a std::vector<std::string> per key, and the same rules as the module, written
// independently. Apply() gives the reply vessel must send for a command and applies it.
class Model {
 public:
  static constexpr char kStringKey[] = "str";  // holds a string: every VEC command fails on it

  const std::map<std::string, Strings>& keys() const { return keys_; }

  Reply Apply(const Strings& cmd) {
    const std::string& name = cmd[0];
    const int argc = static_cast<int>(cmd.size());
    if (name == "COPY") return Copy(cmd[1], cmd[2]);
    const auto it = std::find_if(kCommands.begin(), kCommands.end(),
                                 [&](const CommandInfo& c) { return c.name == Lower(name); });
    if (it == kCommands.end()) return Err("unknown command in the model: " + name);
    if (it->arity > 0 ? argc != it->arity : argc < -it->arity) return ArityErr(name);
    const std::string& key = cmd[1];
    const auto vec = [&]() -> Strings& { return keys_[key]; };
    const auto wrongtype = [&] { return key == kStringKey; };
    const auto exists = [&] { return keys_.contains(key); };
    if (name == "VEC.PUSH") {
      if (wrongtype()) return WrongTypeReply();
      Strings& x = vec();
      x.insert(x.end(), cmd.begin() + 2, cmd.end());
      return IntReply(x.size());
    }
    if (name == "VEC.POP") {
      if (argc > 3) return ArityErr(name);
      int64_t count = 1;
      if (argc == 3 && !ParseCount(cmd[2], &count)) return CountErr(cmd[2]);
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return argc == 3 ? Reply{Reply::Type::kNilArray} : Reply{Reply::Type::kNil};
      Strings& x = vec();
      Reply out{Reply::Type::kArray};
      const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), x.size());
      for (size_t i = 0; i < n; ++i) {
        out.elems.push_back(BulkReply(x.back()));
        x.pop_back();
      }
      Commit(key);
      return argc == 3 ? out : out.elems[0];
    }
    if (name == "VEC.LEN") {
      if (wrongtype()) return WrongTypeReply();
      return IntReply(exists() ? vec().size() : 0);
    }
    if (name == "VEC.INDEX") {
      int64_t i;
      if (!ParseInt(cmd[2], &i)) return Err(kNotInt);
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return Reply{Reply::Type::kNil};
      return At(vec(), i);
    }
    if (name == "VEC.FRONT" || name == "VEC.BACK") {
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return Reply{Reply::Type::kNil};
      return BulkReply(name == "VEC.FRONT" ? vec().front() : vec().back());
    }
    if (name == "VEC.MGET") {
      std::vector<int64_t> idx(argc - 2);
      for (int i = 2; i < argc; ++i) {
        if (!ParseInt(cmd[i], &idx[i - 2])) return Err(kNotInt);
      }
      if (wrongtype()) return WrongTypeReply();
      Reply out{Reply::Type::kArray};
      for (int64_t i : idx) out.elems.push_back(exists() ? At(vec(), i) : Reply{Reply::Type::kNil});
      return out;
    }
    if (name == "VEC.SET" || name == "VEC.MSET") {
      if (argc % 2 != 0) return ArityErr(name);
      std::vector<int64_t> idx;
      for (int i = 2; i < argc; i += 2) {
        idx.push_back(0);
        if (!ParseInt(cmd[i], &idx.back())) return Err(kNotInt);
      }
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return Err(kNoSuchKey);
      Strings& x = vec();
      for (int64_t& i : idx) {
        i = Pos(i, x.size());
        if (i < 0) return Err(kOutOfRange);
      }
      for (size_t k = 0; k < idx.size(); ++k) x[idx[k]] = cmd[3 + 2 * k];
      return Reply{Reply::Type::kStatus, "OK"};
    }
    if (name == "VEC.SWAP") {
      int64_t i, j;
      if (!ParseInt(cmd[2], &i) || !ParseInt(cmd[3], &j)) return Err(kNotInt);
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return Err(kNoSuchKey);
      Strings& x = vec();
      i = Pos(i, x.size());
      j = Pos(j, x.size());
      if (i < 0 || j < 0) return Err(kOutOfRange);
      std::swap(x[i], x[j]);
      return Reply{Reply::Type::kStatus, "OK"};
    }
    if (name == "VEC.RANGE" || name == "VEC.TRIM") {
      int64_t start, stop;
      if (!ParseInt(cmd[2], &start) || !ParseInt(cmd[3], &stop)) return Err(kNotInt);
      if (wrongtype()) return WrongTypeReply();
      const bool range = name == "VEC.RANGE";
      if (!exists()) return range ? Reply{Reply::Type::kArray} : Reply{Reply::Type::kStatus, "OK"};
      Strings& x = vec();
      const int64_t n = static_cast<int64_t>(x.size());
      if (start < 0) start = std::max<int64_t>(start + n, 0);
      if (stop < 0) stop += n;
      stop = std::min(stop, n - 1);
      Strings kept;
      for (int64_t i = start; i <= stop; ++i) kept.push_back(x[i]);
      if (range) return BulkReply(kept);
      x = kept;
      Commit(key);
      return Reply{Reply::Type::kStatus, "OK"};
    }
    if (name == "VEC.INSERT") {
      int64_t i;
      if (!ParseInt(cmd[2], &i)) return Err(kNotInt);
      if (wrongtype()) return WrongTypeReply();
      const int64_t n = exists() ? static_cast<int64_t>(vec().size()) : 0;
      if (i < 0) i += n;
      if (i < 0 || i > n) return Err(kOutOfRange);
      Strings& x = vec();
      x.insert(x.begin() + i, cmd.begin() + 3, cmd.end());
      return IntReply(x.size());
    }
    if (name == "VEC.ERASE") {
      if (argc > 4) return ArityErr(name);
      int64_t i, count = 1;
      if (!ParseInt(cmd[2], &i)) return Err(kNotInt);
      if (argc == 4 && !ParseCount(cmd[3], &count)) return CountErr(cmd[3]);
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return IntReply(0);
      Strings& x = vec();
      i = Pos(i, x.size());
      if (i < 0) return Err(kOutOfRange);
      const int64_t n = std::min<int64_t>(count, static_cast<int64_t>(x.size()) - i);
      x.erase(x.begin() + i, x.begin() + i + n);
      Commit(key);
      return IntReply(n);
    }
    if (name == "VEC.RESIZE") {
      if (argc > 4) return ArityErr(name);
      int64_t n;
      if (!ParseCount(cmd[2], &n)) return CountErr(cmd[2]);
      if (n > (int64_t{1} << 32) - 1) return Err(kTooLong);
      if (wrongtype()) return WrongTypeReply();
      if (n == 0 && !exists()) return IntReply(0);
      vec().resize(n, argc == 4 ? cmd[3] : "");
      Commit(key);
      return IntReply(n);
    }
    if (name == "VEC.FIND") {
      int64_t from = 0;
      for (int j = 3; j < argc; j += 2) {
        if (Lower(cmd[j]) != "from" || j + 1 == argc) return Err(kSyntax);
        if (!ParseInt(cmd[j + 1], &from)) return Err(kNotInt);
      }
      if (wrongtype()) return WrongTypeReply();
      if (!exists()) return IntReply(-1);
      const Strings& x = vec();
      const int64_t n = static_cast<int64_t>(x.size());
      if (from < 0) from = std::max<int64_t>(from + n, 0);
      for (int64_t i = from; i < n; ++i) {
        if (x[i] == cmd[2]) return IntReply(i);
      }
      return IntReply(-1);
    }
    if (name == "VEC.CLEAR") {
      if (wrongtype()) return WrongTypeReply();
      const size_t n = exists() ? vec().size() : 0;
      keys_.erase(key);
      return IntReply(n);
    }
    return Err("unknown command in the model: " + name);
  }

  static Reply IntReply(int64_t n) {
    Reply r{Reply::Type::kInt};
    r.integer = n;
    return r;
  }
  static Reply BulkReply(const std::string& s) { return Reply{Reply::Type::kBulk, s}; }
  static Reply BulkReply(const Strings& v) {
    Reply r{Reply::Type::kArray};
    for (const std::string& s : v) r.elems.push_back(BulkReply(s));
    return r;
  }

 private:
  static Reply Err(const std::string& text) { return Reply{Reply::Type::kError, text}; }
  static Reply WrongTypeReply() { return Err(kWrongType); }
  static Reply ArityErr(const std::string& name) {
    return Err("ERR wrong number of arguments for '" + Lower(name) + "' command");
  }
  // Redis's strict integers: the generator only makes canonical ones or obvious garbage.
  static bool ParseInt(const std::string& s, int64_t* out) {
    if (s.empty() || s[0] == '+' || (s.size() > 1 && s[0] == '0')) return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size();
  }
  static bool ParseCount(const std::string& s, int64_t* out) {
    return ParseInt(s, out) && *out >= 0;
  }
  static Reply CountErr(const std::string& s) {
    int64_t ignored;
    return Err(ParseInt(s, &ignored) ? kNotPositive : kNotInt);
  }
  static int64_t Pos(int64_t i, size_t len) {
    const int64_t n = static_cast<int64_t>(len);
    if (i < 0) i += n;
    return i < 0 || i >= n ? -1 : i;
  }
  static Reply At(const Strings& x, int64_t i) {
    i = Pos(i, x.size());
    return i < 0 ? Reply{Reply::Type::kNil} : BulkReply(x[i]);
  }
  void Commit(const std::string& key) {
    if (keys_[key].empty()) keys_.erase(key);
  }
  Reply Copy(const std::string& src, const std::string& dst) {  // COPY src dst REPLACE
    if (!keys_.contains(src)) return IntReply(0);
    keys_[dst] = keys_[src];
    return IntReply(1);
  }

  std::map<std::string, Strings> keys_;
};

// Random commands, mostly well-formed, sometimes not, with indexes around the current length.
class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Strings Next(const Model& m) {
    const std::string key = Pick(kKeys);
    const auto it = m.keys().find(key);
    const int64_t len = it == m.keys().end() ? 0 : static_cast<int64_t>(it->second.size());
    size_t total = 0;
    for (const auto& [k, v] : m.keys()) total += v.size();
    const bool shrink = total > 300;  // keep the vectors small enough to compare every step
    switch (Below(shrink ? 4 : 20)) {
      case 0:
        return {"VEC.POP", key, Count(len)};
      case 1:
        return Opt({"VEC.ERASE", key, Index(len)}, Count(len));
      case 2:
        return {"VEC.TRIM", key, Index(len), Index(len)};
      case 3:
        return Opt({"VEC.RESIZE", key, Count(len / 2)}, Elem());
      case 4:
        return Elems({"VEC.PUSH", key}, 1 + Below(4));
      case 5:
        return Elems({"VEC.INSERT", key, Index(len + 1)}, 1 + Below(3));
      case 6:
        return {"VEC.SET", key, Index(len), Elem()};
      case 7: {
        Strings cmd = {"VEC.MSET", key};
        for (int i = 0, n = 1 + Below(3); i < n; ++i) cmd = Cat(cmd, {Index(len), Elem()});
        if (Below(20) == 0) cmd.pop_back();
        return cmd;
      }
      case 8:
        return {"VEC.SWAP", key, Index(len), Index(len)};
      case 9:
        return {"VEC.INDEX", key, Index(len)};
      case 10: {
        Strings cmd = {"VEC.MGET", key};
        for (int i = 0, n = 1 + Below(4); i < n; ++i) cmd.push_back(Index(len));
        return cmd;
      }
      case 11:
        return {"VEC.RANGE", key, Index(len), Index(len)};
      case 12: {
        Strings cmd = {"VEC.FIND", key, Elem()};
        if (Below(2) == 0) cmd = Cat(cmd, {Below(10) == 0 ? "FRUM" : "FROM", Index(len)});
        if (Below(20) == 0) cmd.pop_back();
        return cmd;
      }
      case 13:
        return {Below(2) == 0 ? "VEC.FRONT" : "VEC.BACK", key};
      case 14:
        return {"VEC.LEN", key};
      case 15:
        return Below(4) == 0 ? Strings{"VEC.CLEAR", key} : Strings{"VEC.POP", key};
      case 16:
        return Opt({"VEC.RESIZE", key, Count(len * 2 + 3)}, Elem());
      case 17: {
        const std::string dst = Pick(kKeys);
        if (dst == key || key == Model::kStringKey || dst == Model::kStringKey) {
          return {"VEC.LEN", key};
        }
        return {"COPY", key, dst, "REPLACE"};
      }
      default:
        return Elems({"VEC.PUSH", key}, 1 + Below(8));
    }
  }

 private:
  inline static const Strings kKeys = {"v0", "v1", "v2", "v0", "v1", Model::kStringKey};
  inline static const Strings kPool = {"a",
                                       "b",
                                       "c",
                                       "",
                                       "x\0y"s,
                                       "\r\n",
                                       "123456789012345",
                                       "1234567890123456",
                                       std::string(40, 'L'),
                                       std::string(300, 'H')};

  int Below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string Pick(const Strings& from) { return from[Below(static_cast<int>(from.size()))]; }
  std::string Elem() { return Below(4) == 0 ? "t" + Str(serial_++) : Pick(kPool); }
  // An index around [-len, len), sometimes far off or not an integer.
  std::string Index(int64_t len) {
    switch (Below(40)) {
      case 0:
        return "x";
      case 1:
        return "9223372036854775807";
      case 2:
        return "-9223372036854775808";
      case 3:
        return "1.5";
      default:
        return Str(static_cast<int64_t>(Below(static_cast<int>(2 * len + 5))) - len - 2);
    }
  }
  // A count around [0, len], sometimes negative or not an integer.
  std::string Count(int64_t len) {
    switch (Below(30)) {
      case 0:
        return "-1";
      case 1:
        return "y";
      default:
        return Str(Below(static_cast<int>(len + 3)));
    }
  }
  Strings Elems(Strings head, int n) {
    for (int i = 0; i < n; ++i) head.push_back(Elem());
    return head;
  }
  // head, then maybe `optional`, then rarely one argument too many.
  Strings Opt(Strings head, const std::string& optional) {
    if (Below(2) == 0) head.push_back(optional);
    if (Below(25) == 0) {
      head.push_back(optional);
      head.push_back("extra");
    }
    return head;
  }

  std::mt19937_64 rng_;
  int64_t serial_ = 0;
};

// RESP3 sends one null for both of RESP2's nils.
Reply ForProtocol(Reply r, int protocol) {
  if (protocol == 3 && r.type == Reply::Type::kNilArray) r.type = Reply::Type::kNil;
  for (Reply& e : r.elems) e = ForProtocol(std::move(e), protocol);
  return r;
}

// Runs `steps` random commands; after each, compares the reply, and every key's content and
// existence, with the model. Stops at the first difference, naming the seed and the step.
void RunModel(uint64_t seed, int steps, int protocol) {
  RespClient c = Servers::Get().Vessel();
  if (protocol == 3) c("HELLO", "3");
  c("FLUSHALL");
  ASSERT_EQ(c("SET", Model::kStringKey, "a string").str, "OK");
  Model model;
  Generator gen(seed);
  const Strings keys = {"v0", "v1", "v2"};
  std::map<std::string, std::pair<int, int>> outcomes;  // command -> (replies, errors)
  for (int step = 0; step < steps; ++step) {
    const Strings cmd = gen.Next(model);
    const std::string where = "seed " + Str(static_cast<int64_t>(seed)) + " step " + Str(step) +
                              " (RESP" + Str(protocol) + "): " + Show(cmd);
    const Reply want = ForProtocol(model.Apply(cmd), protocol);
    const Reply got = c.Cmd(cmd);
    ASSERT_TRUE(Same(got, want)) << where;
    auto& [ok, failed] = outcomes[cmd[0]];
    ++(got.is_error() ? failed : ok);
    for (const std::string& k : keys) {
      c.Send({"VEC.RANGE", k, "0", "-1"});
      c.Send({"EXISTS", k});
    }
    for (const std::string& k : keys) {
      const Reply range = c.Read(), exists = c.Read();
      const auto it = model.keys().find(k);
      const Strings expected = it == model.keys().end() ? Strings{} : it->second;
      ASSERT_EQ(Elements(range), expected) << where << "\n  key " << k << ": " << range.ToString();
      ASSERT_EQ(exists.integer, it == model.keys().end() ? 0 : 1) << where << "\n  key " << k;
    }
  }
  EXPECT_EQ(c("GET", Model::kStringKey).str, "a string");
  // The sequence covered every command, and its error paths (WRONGTYPE at least).
  for (const CommandInfo& info : kCommands) {
    std::string upper = info.name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    EXPECT_GT(outcomes[upper].first, 0) << upper << " never succeeded, seed " << seed;
    if (upper != "VEC.LEN" && upper != "VEC.FRONT" && upper != "VEC.BACK" && upper != "VEC.CLEAR" &&
        upper != "VEC.PUSH") {
      EXPECT_GT(outcomes[upper].second, 0) << upper << " never failed, seed " << seed;
    }
  }
}

TEST_F(VectorsTest, RandomCommandsAgreeWithTheModel) {
  if (std::getenv("VECTORS_SEED") != nullptr) {
    const int steps = std::getenv("VECTORS_STEPS") ? std::atoi(std::getenv("VECTORS_STEPS")) : 5000;
    return RunModel(SeedFromEnv("VECTORS_SEED", 0), steps, 2);
  }
  for (const uint64_t seed : {1u, 2u, 20240611u}) {
    RunModel(seed, 3000, 2);
    if (HasFatalFailure()) return;
  }
  RunModel(7, 2000, 3);
}

}  // namespace
}  // namespace vessel::test
