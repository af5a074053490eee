// The lists module (LPUSH ... BLMPOP) against vessel and redis-server: every row runs on both,
// must meet its expectation on both, and the two replies must be identical. The blocking
// commands' parking and waking are in blocking_test.cc; here they run where they do not block.
#include <algorithm>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kBadTimeout[] = "ERR timeout is not a float or out of range";
constexpr char kNegativeTimeout[] = "ERR timeout is negative";
constexpr char kRankZero[] =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";

std::string Str(int64_t v) { return std::to_string(v); }

// An array of n integers (LPOS COUNT on large lists).
Expect IntArr(std::vector<int64_t> v) {
  std::vector<Expect> e;
  for (int64_t x : v) e.push_back(Int(x));
  return Arr(std::move(e));
}

// "prefix0" ... "prefix<n-1>"
std::vector<std::string> Numbered(const std::string& prefix, int n, int from = 0) {
  std::vector<std::string> v;
  for (int i = from; i < from + n; ++i) v.push_back(prefix + Str(i));
  return v;
}

std::vector<std::string> Cmd(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

class ListsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(ListsTest, PushAndPop) {
  RunTable({
      {{"LPUSH", "l", "a"}, Int(1)},
      {{"LPUSH", "l", "b", "c"}, Int(3)},
      {{"RPUSH", "l", "d", "e"}, Int(5)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"c", "b", "a", "d", "e"})},
      {{"lpush", "l", "f"}, Int(6)},
      {{"LPUSHX", "l", "g", "h"}, Int(8)},
      {{"RPUSHX", "l", "i"}, Int(9)},
      {{"LPUSHX", "none", "x"}, Int(0)},
      {{"RPUSHX", "none", "x", "y"}, Int(0)},
      {{"EXISTS", "none"}, Int(0)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"h", "g", "f", "c", "b", "a", "d", "e", "i"})},
      {{"LPOP", "l"}, Bulk("h")},
      {{"RPOP", "l"}, Bulk("i")},
      {{"LPOP", "l", "2"}, BulkArr({"g", "f"})},
      {{"RPOP", "l", "2"}, BulkArr({"e", "d"})},
      {{"LPOP", "l", "0"}, Arr({})},
      {{"RPOP", "l", "0"}, Arr({})},
      {{"LLEN", "l"}, Int(3)},
      {{"RPOP", "l", "10"}, BulkArr({"a", "b", "c"})},
      {{"EXISTS", "l"}, Int(0)},  // emptied: the key is gone
      {{"LPOP", "l"}, Nil()},
      {{"RPOP", "l"}, Nil()},
      {{"LPOP", "l", "1"}, NilArray()},
      {{"RPOP", "l", "0"}, NilArray()},
      {{"LPOP", "l", "-1"}, Error(kNotPositive)},
      {{"LPOP", "l", "abc"}, Error(kNotPositive)},
      {{"RPOP", "l", "1.5"}, Error(kNotPositive)},
      {{"LPOP", "l", "1", "2"}, Error("ERR wrong number of arguments for 'lpop' command")},
      {{"RPOP", "l", "1", "2"}, Error("ERR wrong number of arguments for 'rpop' command")},
      {{"RPUSH", "one", "x"}, Int(1)},
      {{"LPOP", "one"}, Bulk("x")},
      {{"EXISTS", "one"}, Int(0)},
      {{"RPUSH", "one", "x"}, Int(1)},
      {{"LPOP", "one", "1"}, BulkArr({"x"})},
      {{"EXISTS", "one"}, Int(0)},
      {{"RPUSH", "e", ""}, Int(1)},
      {{"LPOP", "e"}, Bulk("")},
      {{"LPUSH", "l", "x"}, Int(1)},
      {{"LPOP", "l", "-1"}, Error(kNotPositive)},
      {{"LPOP", "l", "9223372036854775807"}, BulkArr({"x"})},
      {{"TYPE", "l"}, Simple("none")},
      {{"RPUSH", "l", "x"}, Int(1)},
      {{"TYPE", "l"}, Simple("list")},
      {{"OBJECT", "ENCODING", "l"}, Bulk("quicklist")},
  });
}

TEST_F(ListsTest, PushAndPopResp3) {
  RunTable(
      {
          {{"RPUSH", "l", "a", "b", "c"}, Int(3)},
          {{"LPOP", "l"}, Bulk("a")},
          {{"LPOP", "l", "1"}, BulkArr({"b"})},
          {{"LPOP", "l", "0"}, Arr({})},
          {{"RPOP", "l", "5"}, BulkArr({"c"})},
          {{"LPOP", "l"}, Nil()},
          {{"LPOP", "l", "1"}, Nil()},
          {{"RPOP", "l", "0"}, Nil()},
          {{"LRANGE", "l", "0", "-1"}, Arr({})},
          {{"LINDEX", "l", "0"}, Nil()},
          {{"LPOS", "l", "a"}, Nil()},
          {{"LMPOP", "1", "l", "LEFT"}, Nil()},
          {{"LMOVE", "l", "m", "LEFT", "LEFT"}, Nil()},
          {{"RPOPLPUSH", "l", "m"}, Nil()},
          {{"RPUSH", "l", "x"}, Int(1)},
          {{"LMPOP", "1", "l", "RIGHT"}, Arr({Bulk("l"), BulkArr({"x"})})},
          {{"MULTI"}, Ok()},
          {{"BLPOP", "l", "0"}, Simple("QUEUED")},
          {{"BLMOVE", "l", "m", "LEFT", "RIGHT", "0"}, Simple("QUEUED")},
          {{"BRPOPLPUSH", "l", "m", "0"}, Simple("QUEUED")},
          {{"BLMPOP", "0", "1", "l", "LEFT"}, Simple("QUEUED")},
          {{"EXEC"}, Arr({Nil(), Nil(), Nil(), Nil()})},
      },
      3);
}

TEST_F(ListsTest, LenIndexSet) {
  RunTable({
      {{"LLEN", "l"}, Int(0)},
      {{"RPUSH", "l", "a", "b", "c", "d"}, Int(4)},
      {{"LLEN", "l"}, Int(4)},
      {{"LINDEX", "l", "0"}, Bulk("a")},
      {{"LINDEX", "l", "3"}, Bulk("d")},
      {{"LINDEX", "l", "4"}, Nil()},
      {{"LINDEX", "l", "-1"}, Bulk("d")},
      {{"LINDEX", "l", "-4"}, Bulk("a")},
      {{"LINDEX", "l", "-5"}, Nil()},
      {{"LINDEX", "l", "9223372036854775807"}, Nil()},
      {{"LINDEX", "l", "-9223372036854775808"}, Nil()},
      {{"LINDEX", "l", "x"}, Error(kNotInt)},
      {{"LINDEX", "l", "1.0"}, Error(kNotInt)},
      {{"LINDEX", "none", "x"}, Nil()},  // the key is looked up first
      {{"LINDEX", "none", "0"}, Nil()},
      {{"LSET", "l", "0", "A"}, Ok()},
      {{"LSET", "l", "-1", "D"}, Ok()},
      {{"LSET", "l", "1", "a much longer element than fifteen bytes"}, Ok()},
      {{"LSET", "l", "1", "short again"}, Ok()},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"A", "short again", "c", "D"})},
      {{"LSET", "l", "4", "x"}, Error("ERR index out of range")},
      {{"LSET", "l", "-5", "x"}, Error("ERR index out of range")},
      {{"LSET", "l", "x", "x"}, Error(kNotInt)},
      {{"LSET", "none", "0", "x"}, Error("ERR no such key")},
      {{"LSET", "none", "x", "x"}, Error("ERR no such key")},
      {{"EXISTS", "none"}, Int(0)},
      {{"LLEN", "l"}, Int(4)},
  });
}

TEST_F(ListsTest, RangeAndTrim) {
  RunTable({
      {{"LRANGE", "none", "0", "-1"}, Arr({})},
      {{"LRANGE", "none", "x", "-1"}, Error(kNotInt)},
      {{"LRANGE", "none", "0", "y"}, Error(kNotInt)},
      {{"RPUSH", "l", "0", "1", "2", "3", "4", "5", "6"}, Int(7)},
      {{"LRANGE", "l", "0", "0"}, BulkArr({"0"})},
      {{"LRANGE", "l", "2", "4"}, BulkArr({"2", "3", "4"})},
      {{"LRANGE", "l", "-3", "-1"}, BulkArr({"4", "5", "6"})},
      {{"LRANGE", "l", "-100", "1"}, BulkArr({"0", "1"})},
      {{"LRANGE", "l", "5", "100"}, BulkArr({"5", "6"})},
      {{"LRANGE", "l", "4", "2"}, Arr({})},
      {{"LRANGE", "l", "7", "10"}, Arr({})},
      {{"LRANGE", "l", "-1", "-2"}, Arr({})},
      {{"LRANGE", "l", "-9223372036854775808", "9223372036854775807"},
       BulkArr({"0", "1", "2", "3", "4", "5", "6"})},
      {{"LRANGE", "l", "9223372036854775807", "-9223372036854775808"}, Arr({})},
      {{"LTRIM", "l", "1", "-2"}, Ok()},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"1", "2", "3", "4", "5"})},
      {{"LTRIM", "l", "-100", "100"}, Ok()},
      {{"LLEN", "l"}, Int(5)},
      {{"LTRIM", "l", "2", "2"}, Ok()},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"3"})},
      {{"LTRIM", "l", "1", "0"}, Ok()},
      {{"EXISTS", "l"}, Int(0)},
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"LTRIM", "l", "5", "10"}, Ok()},
      {{"EXISTS", "l"}, Int(0)},
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"LTRIM", "l", "-1", "-2"}, Ok()},
      {{"EXISTS", "l"}, Int(0)},
      {{"LTRIM", "none", "0", "1"}, Ok()},
      {{"LTRIM", "none", "a", "1"}, Error(kNotInt)},
      {{"LTRIM", "none", "0", "b"}, Error(kNotInt)},
      {{"EXISTS", "none"}, Int(0)},
  });
}

TEST_F(ListsTest, Insert) {
  RunTable({
      {{"LINSERT", "none", "BEFORE", "a", "x"}, Int(0)},
      {{"LINSERT", "none", "MIDDLE", "a", "x"}, Error(kSyntax)},
      {{"EXISTS", "none"}, Int(0)},
      {{"RPUSH", "l", "a", "b", "c"}, Int(3)},
      {{"LINSERT", "l", "BEFORE", "a", "0"}, Int(4)},
      {{"LINSERT", "l", "after", "c", "d"}, Int(5)},
      {{"LINSERT", "l", "Before", "c", "b2"}, Int(6)},
      {{"LINSERT", "l", "AFTER", "a", "a2"}, Int(7)},
      {{"LINSERT", "l", "AFTER", "zz", "x"}, Int(-1)},
      {{"LINSERT", "l", "BEFORE", "", "x"}, Int(-1)},
      {{"LINSERT", "l", "BETWEEN", "a", "x"}, Error(kSyntax)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"0", "a", "a2", "b", "b2", "c", "d"})},
      {{"RPUSH", "l", "a"}, Int(8)},
      {{"LINSERT", "l", "AFTER", "a", "first-a-only"}, Int(9)},
      {{"LRANGE", "l", "0", "3"}, BulkArr({"0", "a", "first-a-only", "a2"})},
      {{"LINSERT", "l", "BEFORE", "d", "a long element of more than fifteen bytes"}, Int(10)},
      {{"LINDEX", "l", "7"}, Bulk("a long element of more than fifteen bytes")},
      {{"LINSERT", "l", "BEFORE", "a long element of more than fifteen bytes", ""}, Int(11)},
      {{"LRANGE", "l", "6", "-1"},
       BulkArr({"c", "", "a long element of more than fifteen bytes", "d", "a"})},
  });
}

TEST_F(ListsTest, Remove) {
  RunTable({
      {{"LREM", "none", "0", "a"}, Int(0)},
      {{"LREM", "none", "x", "a"}, Error(kNotInt)},
      {{"RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"}, Int(7)},
      {{"LREM", "l", "1", "a"}, Int(1)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"b", "a", "c", "a", "b", "a"})},
      {{"LREM", "l", "-2", "a"}, Int(2)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"b", "a", "c", "b"})},
      {{"LREM", "l", "0", "b"}, Int(2)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"a", "c"})},
      {{"LREM", "l", "0", "zz"}, Int(0)},
      {{"LREM", "l", "5", "c"}, Int(1)},
      {{"LREM", "l", "-9223372036854775808", "a"}, Int(1)},
      {{"EXISTS", "l"}, Int(0)},
      {{"RPUSH", "l", "x", "x", "x"}, Int(3)},
      {{"LREM", "l", "9223372036854775807", "x"}, Int(3)},
      {{"EXISTS", "l"}, Int(0)},
      {{"RPUSH", "l", "", "x", ""}, Int(3)},
      {{"LREM", "l", "0", ""}, Int(2)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"x"})},
  });
}

TEST_F(ListsTest, Pos) {
  RunTable({
      {{"LPOS", "none", "a"}, Nil()},
      {{"LPOS", "none", "a", "COUNT", "0"}, Arr({})},
      {{"LPOS", "none", "a", "RANK", "0"}, Error(kRankZero)},
      {{"RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"}, Int(8)},
      {{"LPOS", "l", "a"}, Int(0)},
      {{"LPOS", "l", "c"}, Int(2)},
      {{"LPOS", "l", "zz"}, Nil()},
      {{"LPOS", "l", "c", "RANK", "1"}, Int(2)},
      {{"LPOS", "l", "c", "RANK", "2"}, Int(6)},
      {{"LPOS", "l", "c", "RANK", "4"}, Nil()},
      {{"LPOS", "l", "c", "RANK", "-1"}, Int(7)},
      {{"LPOS", "l", "c", "RANK", "-3"}, Int(2)},
      {{"LPOS", "l", "c", "RANK", "-4"}, Nil()},
      {{"LPOS", "l", "c", "COUNT", "0"}, IntArr({2, 6, 7})},
      {{"LPOS", "l", "c", "COUNT", "2"}, IntArr({2, 6})},
      {{"LPOS", "l", "c", "COUNT", "2", "RANK", "2"}, IntArr({6, 7})},
      {{"LPOS", "l", "c", "COUNT", "0", "RANK", "-1"}, IntArr({7, 6, 2})},
      {{"LPOS", "l", "c", "RANK", "-2", "COUNT", "1"}, IntArr({6})},
      {{"LPOS", "l", "zz", "COUNT", "5"}, Arr({})},
      {{"LPOS", "l", "c", "MAXLEN", "2"}, Nil()},
      {{"LPOS", "l", "c", "MAXLEN", "3"}, Int(2)},
      {{"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"}, IntArr({2, 6})},
      {{"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "0"}, IntArr({2, 6, 7})},
      {{"LPOS", "l", "a", "RANK", "-1", "MAXLEN", "7"}, Nil()},
      {{"LPOS", "l", "a", "RANK", "-1", "MAXLEN", "8"}, Int(0)},
      {{"LPOS", "l", "c", "rank", "2", "count", "1", "maxlen", "10"}, IntArr({6})},
      {{"LPOS", "l", "c", "RANK", "1", "RANK", "2"}, Int(6)},  // the last one wins
      {{"LPOS", "l", "c", "RANK", "0"}, Error(kRankZero)},
      {{"LPOS", "l", "c", "RANK", "x"}, Error(kNotInt)},
      {{"LPOS", "l", "c", "COUNT", "-1"}, Error("ERR COUNT can't be negative")},
      {{"LPOS", "l", "c", "COUNT", "x"}, Error("ERR COUNT can't be negative")},
      {{"LPOS", "l", "c", "MAXLEN", "-1"}, Error("ERR MAXLEN can't be negative")},
      {{"LPOS", "l", "c", "MAXLEN", "x"}, Error("ERR MAXLEN can't be negative")},
      {{"LPOS", "l", "c", "RANK"}, Error(kSyntax)},
      {{"LPOS", "l", "c", "COUNT"}, Error(kSyntax)},
      {{"LPOS", "l", "c", "FOO", "1"}, Error(kSyntax)},
      {{"LPOS", "none", "c", "FOO"}, Error(kSyntax)},  // options are parsed first
      {{"LPOS", "l", "c", "RANK", "-9223372036854775808"}, Any()},
      {{"LPOS", "l", "c", "RANK", "-9223372036854775808", "COUNT", "2"}, Any()},
      {{"LPOS", "l", "c", "RANK", "9223372036854775807"}, Nil()},
  });
}

TEST_F(ListsTest, MoveAndRPopLPush) {
  RunTable({
      {{"LMOVE", "none", "d", "LEFT", "RIGHT"}, Nil()},
      {{"EXISTS", "d"}, Int(0)},
      {{"LMOVE", "none", "d", "UP", "RIGHT"}, Error(kSyntax)},
      {{"LMOVE", "none", "d", "LEFT", "DOWN"}, Error(kSyntax)},
      {{"RPUSH", "s", "a", "b", "c"}, Int(3)},
      {{"LMOVE", "s", "d", "LEFT", "RIGHT"}, Bulk("a")},
      {{"LMOVE", "s", "d", "right", "left"}, Bulk("c")},
      {{"LRANGE", "d", "0", "-1"}, BulkArr({"c", "a"})},
      {{"LMOVE", "s", "d", "Left", "Left"}, Bulk("b")},
      {{"EXISTS", "s"}, Int(0)},
      {{"LRANGE", "d", "0", "-1"}, BulkArr({"b", "c", "a"})},
      {{"LMOVE", "d", "d", "LEFT", "RIGHT"}, Bulk("b")},  // rotation
      {{"LRANGE", "d", "0", "-1"}, BulkArr({"c", "a", "b"})},
      {{"LMOVE", "d", "d", "RIGHT", "LEFT"}, Bulk("b")},
      {{"LMOVE", "d", "d", "LEFT", "LEFT"}, Bulk("b")},
      {{"LRANGE", "d", "0", "-1"}, BulkArr({"b", "c", "a"})},
      {{"RPOPLPUSH", "d", "e"}, Bulk("a")},
      {{"RPOPLPUSH", "d", "e"}, Bulk("c")},
      {{"RPOPLPUSH", "d", "d"}, Bulk("b")},
      {{"RPOPLPUSH", "d", "e"}, Bulk("b")},
      {{"EXISTS", "d"}, Int(0)},
      {{"LRANGE", "e", "0", "-1"}, BulkArr({"b", "c", "a"})},
      {{"RPOPLPUSH", "none", "e"}, Nil()},
      {{"RPUSH", "one", "x"}, Int(1)},
      {{"LMOVE", "one", "one", "LEFT", "RIGHT"}, Bulk("x")},
      {{"LRANGE", "one", "0", "-1"}, BulkArr({"x"})},
      {{"RPOPLPUSH", "one", "one"}, Bulk("x")},
      {{"LLEN", "one"}, Int(1)},
      {{"RPUSH", "long", "an element longer than fifteen bytes", "short"}, Int(2)},
      {{"LMOVE", "long", "e", "LEFT", "RIGHT"}, Bulk("an element longer than fifteen bytes")},
      {{"LMOVE", "long", "e", "LEFT", "LEFT"}, Bulk("short")},
      {{"LRANGE", "e", "0", "-1"},
       BulkArr({"short", "b", "c", "a", "an element longer than fifteen bytes"})},
  });
}

TEST_F(ListsTest, MPop) {
  RunTable({
      {{"LMPOP", "1", "none", "LEFT"}, NilArray()},
      {{"LMPOP", "2", "none", "none2", "RIGHT", "COUNT", "5"}, NilArray()},
      {{"RPUSH", "b", "1", "2", "3", "4"}, Int(4)},
      {{"RPUSH", "c", "x"}, Int(1)},
      {{"LMPOP", "3", "a", "b", "c", "LEFT"}, Arr({Bulk("b"), BulkArr({"1"})})},
      {{"LMPOP", "3", "a", "b", "c", "RIGHT", "COUNT", "2"}, Arr({Bulk("b"), BulkArr({"4", "3"})})},
      {{"LMPOP", "2", "b", "c", "left", "count", "10"}, Arr({Bulk("b"), BulkArr({"2"})})},
      {{"EXISTS", "b"}, Int(0)},
      {{"LMPOP", "2", "b", "c", "LEFT"}, Arr({Bulk("c"), BulkArr({"x"})})},
      {{"EXISTS", "c"}, Int(0)},
      {{"LMPOP", "0", "a", "LEFT"}, Error("ERR numkeys should be greater than 0")},
      {{"LMPOP", "-1", "a", "LEFT"}, Error("ERR numkeys should be greater than 0")},
      {{"LMPOP", "x", "a", "LEFT"}, Error("ERR numkeys should be greater than 0")},
      {{"LMPOP", "2", "a", "LEFT"}, Error(kSyntax)},
      {{"LMPOP", "9223372036854775807", "a", "LEFT"}, Error(kSyntax)},
      {{"LMPOP", "1", "a", "MIDDLE"}, Error(kSyntax)},
      {{"LMPOP", "1", "a", "LEFT", "COUNT"}, Error(kSyntax)},
      {{"LMPOP", "1", "a", "LEFT", "COUNT", "0"}, Error("ERR count should be greater than 0")},
      {{"LMPOP", "1", "a", "LEFT", "COUNT", "-1"}, Error("ERR count should be greater than 0")},
      {{"LMPOP", "1", "a", "LEFT", "COUNT", "x"}, Error("ERR count should be greater than 0")},
      {{"LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"}, Error(kSyntax)},
      {{"LMPOP", "1", "a", "LEFT", "EXTRA"}, Error(kSyntax)},
      {{"RPUSH", "a", "v"}, Int(1)},
      {{"LMPOP", "1", "a", "LEFT", "COUNT", "9223372036854775807"},
       Arr({Bulk("a"), BulkArr({"v"})})},
      {{"RPUSH", "a", "v"}, Int(1)},
      {{"LMPOP", "2", "a", "a", "RIGHT"}, Arr({Bulk("a"), BulkArr({"v"})})},
  });
}

// The blocking commands where they do not block: data is there, inside MULTI, or argument errors.
TEST_F(ListsTest, BlockingCommandsThatDoNotBlock) {
  RunTable({
      {{"RPUSH", "a", "1", "2", "3"}, Int(3)},
      {{"BLPOP", "none", "a", "0"}, BulkArr({"a", "1"})},
      {{"BRPOP", "none", "a", "0"}, BulkArr({"a", "3"})},
      {{"BLPOP", "a", "a", "0.5"}, BulkArr({"a", "2"})},
      {{"EXISTS", "a"}, Int(0)},
      {{"RPUSH", "a", "1", "2", "3"}, Int(3)},
      {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "0"}, Bulk("1")},
      {{"BRPOPLPUSH", "a", "b", "0"}, Bulk("3")},
      {{"BLMPOP", "0", "2", "none", "a", "LEFT", "COUNT", "5"}, Arr({Bulk("a"), BulkArr({"2"})})},
      {{"LRANGE", "b", "0", "-1"}, BulkArr({"3", "1"})},
      {{"BLMPOP", "1", "1", "b", "RIGHT"}, Arr({Bulk("b"), BulkArr({"1"})})},
      {{"BLMOVE", "b", "b", "LEFT", "RIGHT", "1"}, Bulk("3")},
      // Inside MULTI they never block: the empty reply at once.
      {{"MULTI"}, Ok()},
      {{"BLPOP", "none", "0"}, Simple("QUEUED")},
      {{"BRPOP", "none", "none2", "10"}, Simple("QUEUED")},
      {{"BLMOVE", "none", "b", "LEFT", "RIGHT", "0"}, Simple("QUEUED")},
      {{"BRPOPLPUSH", "none", "b", "0"}, Simple("QUEUED")},
      {{"BLMPOP", "0", "1", "none", "LEFT"}, Simple("QUEUED")},
      {{"BLPOP", "b", "0"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({NilArray(), NilArray(), Nil(), Nil(), NilArray(), BulkArr({"b", "3"})})},
      {{"MULTI"}, Ok()},
      {{"RPUSH", "q", "x"}, Simple("QUEUED")},
      {{"BRPOP", "q", "0"}, Simple("QUEUED")},
      {{"BLPOP", "q", "0"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Int(1), BulkArr({"q", "x"}), NilArray()})},
      // Timeout errors.
      {{"BLPOP", "a", "x"}, Error(kBadTimeout)},
      {{"BLPOP", "a", ""}, Error(kBadTimeout)},
      {{"BLPOP", "a", " 1"}, Error(kBadTimeout)},
      {{"BLPOP", "a", "1 "}, Error(kBadTimeout)},
      // An embedded NUL ends strtold early: the whole argument must be the number.
      {{"BLPOP", "a", std::string("0.01\0x", 6)}, Error(kBadTimeout)},
      {{"BZPOPMIN", "a", std::string("0.01\0x", 6)}, Error(kBadTimeout)},
      {{"INCRBYFLOAT", "f", std::string("1\0x", 3)}, Error("ERR value is not a valid float")},
      {{"HINCRBYFLOAT", "h", "f", std::string("1\0x", 3)}, Error("ERR value is not a valid float")},
      {{"BLPOP", "a", "nan"}, Error(kBadTimeout)},
      {{"BLPOP", "a", "1e5000"}, Error(kBadTimeout)},
      {{"BLPOP", "a", "-1"}, Error(kNegativeTimeout)},
      {{"BLPOP", "a", "-0.002"}, Error(kNegativeTimeout)},
      {{"BLPOP", "a", "inf"}, Error(kNegativeTimeout)},
      {{"BLPOP", "a", "-inf"}, Error(kNegativeTimeout)},
      {{"BLPOP", "a", "1e30"}, Error(kNegativeTimeout)},
      {{"BLPOP", "a", "9223372036854775807"}, Error(kNegativeTimeout)},
      {{"BRPOP", "a", "b", "x"}, Error(kBadTimeout)},
      {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "x"}, Error(kBadTimeout)},
      {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "-1"}, Error(kNegativeTimeout)},
      {{"BLMOVE", "a", "b", "UP", "RIGHT", "x"}, Error(kSyntax)},  // positions first
      {{"BLMOVE", "a", "b", "LEFT", "DOWN", "-1"}, Error(kSyntax)},
      {{"BRPOPLPUSH", "a", "b", "x"}, Error(kBadTimeout)},
      {{"BRPOPLPUSH", "a", "b", "-1"}, Error(kNegativeTimeout)},
      {{"BLMPOP", "x", "1", "a", "LEFT"}, Error(kBadTimeout)},
      {{"BLMPOP", "-1", "1", "a", "LEFT"}, Error(kNegativeTimeout)},
      {{"BLMPOP", "-1", "0", "a", "LEFT"}, Error("ERR numkeys should be greater than 0")},
      {{"BLMPOP", "x", "2", "a", "LEFT"}, Error(kSyntax)},  // the timeout is parsed last
      {{"BLMPOP", "x", "1", "a", "LEFT", "COUNT", "0"},
       Error("ERR count should be greater than 0")},
      {{"BLMPOP", "0", "1", "a", "NOWHERE"}, Error(kSyntax)},
      // Data there: the timeout is only checked for validity.
      {{"RPUSH", "a", "v"}, Int(1)},
      {{"BLPOP", "a", "0.0001"}, BulkArr({"a", "v"})},
  });
}

// Short timeouts that expire (the longer scenarios are in blocking_test.cc).
TEST_F(ListsTest, BlockingTimeouts) {
  RunTable({
      {{"BLPOP", "a", "0.01"}, NilArray()},
      {{"BRPOP", "a", "b", "0.01"}, NilArray()},
      {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "0.01"}, NilArray()},  // *-1 as Redis 7.0
      {{"BRPOPLPUSH", "a", "b", "0.01"}, NilArray()},
      {{"BLMPOP", "0.01", "2", "a", "b", "LEFT"}, NilArray()},
      {{"BLPOP", "a", "1e-9"}, NilArray()},  // rounded up to 1 ms, not 0 = forever
      {{"EXISTS", "a", "b"}, Int(0)},
  });
  RunTable(
      {
          {{"BLPOP", "a", "0.01"}, Nil()},
          {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "0.01"}, Nil()},
          {{"BRPOPLPUSH", "a", "b", "0.01"}, Nil()},
          {{"BLMPOP", "0.01", "1", "a", "LEFT"}, Nil()},
      },
      3);
}

// Every list command on a string, and string commands on a list.
TEST_F(ListsTest, WrongType) {
  RunTable({
      {{"SET", "s", "v"}, Ok()},
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"LPUSH", "s", "x"}, Error(kWrongType)},
      {{"RPUSH", "s", "x"}, Error(kWrongType)},
      {{"LPUSHX", "s", "x"}, Error(kWrongType)},
      {{"RPUSHX", "s", "x"}, Error(kWrongType)},
      {{"LPOP", "s"}, Error(kWrongType)},
      {{"RPOP", "s"}, Error(kWrongType)},
      {{"LPOP", "s", "0"}, Error(kWrongType)},
      {{"RPOP", "s", "2"}, Error(kWrongType)},
      {{"LLEN", "s"}, Error(kWrongType)},
      {{"LRANGE", "s", "0", "-1"}, Error(kWrongType)},
      {{"LINDEX", "s", "0"}, Error(kWrongType)},
      {{"LINDEX", "s", "x"}, Error(kWrongType)},
      {{"LSET", "s", "0", "x"}, Error(kWrongType)},
      {{"LINSERT", "s", "BEFORE", "a", "x"}, Error(kWrongType)},
      {{"LREM", "s", "0", "a"}, Error(kWrongType)},
      {{"LTRIM", "s", "0", "1"}, Error(kWrongType)},
      {{"LPOS", "s", "a"}, Error(kWrongType)},
      {{"LPOS", "s", "a", "COUNT", "0"}, Error(kWrongType)},
      {{"LMOVE", "s", "l", "LEFT", "RIGHT"}, Error(kWrongType)},
      {{"LMOVE", "l", "s", "LEFT", "RIGHT"}, Error(kWrongType)},
      {{"LMOVE", "none", "s", "LEFT", "RIGHT"}, Nil()},  // no source: the destination is not read
      {{"RPOPLPUSH", "s", "l"}, Error(kWrongType)},
      {{"RPOPLPUSH", "l", "s"}, Error(kWrongType)},
      {{"LMPOP", "2", "none", "s", "LEFT"}, Error(kWrongType)},
      {{"LMPOP", "2", "s", "l", "LEFT"}, Error(kWrongType)},
      {{"LMPOP", "2", "l", "s", "LEFT"}, Arr({Bulk("l"), BulkArr({"a"})})},
      {{"BLPOP", "s", "0"}, Error(kWrongType)},
      {{"BLPOP", "none", "s", "l", "0"}, Error(kWrongType)},
      {{"BLPOP", "l", "s", "0"}, BulkArr({"l", "b"})},
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"BRPOP", "s", "0"}, Error(kWrongType)},
      {{"BLMOVE", "s", "l", "LEFT", "RIGHT", "0"}, Error(kWrongType)},
      {{"BLMOVE", "l", "s", "LEFT", "RIGHT", "0"}, Error(kWrongType)},
      {{"BRPOPLPUSH", "s", "l", "0"}, Error(kWrongType)},
      {{"BRPOPLPUSH", "l", "s", "0"}, Error(kWrongType)},
      {{"BLMPOP", "0", "1", "s", "LEFT"}, Error(kWrongType)},
      {{"BLMPOP", "0", "2", "none", "s", "RIGHT", "COUNT", "2"}, Error(kWrongType)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"a", "b"})},  // nothing changed
      {{"GET", "s"}, Bulk("v")},
      // String commands on a list.
      {{"GET", "l"}, Error(kWrongType)},
      {{"APPEND", "l", "x"}, Error(kWrongType)},
      {{"INCR", "l"}, Error(kWrongType)},
      {{"STRLEN", "l"}, Error(kWrongType)},
      {{"GETRANGE", "l", "0", "1"}, Error(kWrongType)},
      {{"SETRANGE", "l", "0", "x"}, Error(kWrongType)},
      {{"GETDEL", "l"}, Error(kWrongType)},
      {{"MGET", "l", "s"}, Arr({Nil(), Bulk("v")})},
      {{"SET", "l", "now a string"}, Ok()},  // SET overwrites any type
      {{"TYPE", "l"}, Simple("string")},
      {{"LLEN", "l"}, Error(kWrongType)},
  });
}

TEST_F(ListsTest, BinaryElements) {
  const std::string nul = "a\0b"s, crlf = "x\r\ny"s, high = "\xff\xfe\x80\x01"s;
  const std::string fifteen = "0123456789abcd\0"s, sixteen = "0123456789abcde\0"s;
  const std::string big(100000, '\0');
  RunTable({
      {{"RPUSH", "l", nul, crlf, high, "", fifteen, sixteen}, Int(6)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({nul, crlf, high, "", fifteen, sixteen})},
      {{"LPOS", "l", "a"}, Nil()},
      {{"LPOS", "l", nul}, Int(0)},
      {{"LPOS", "l", sixteen}, Int(5)},
      {{"LPOS", "l", "0123456789abcde"}, Nil()},
      {{"LINSERT", "l", "AFTER", high, big}, Int(7)},
      {{"LINDEX", "l", "3"}, Bulk(big)},
      {{"LREM", "l", "0", fifteen}, Int(1)},
      {{"LSET", "l", "0", crlf}, Ok()},
      {{"LREM", "l", "-1", crlf}, Int(1)},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({crlf, high, big, "", sixteen})},
      {{"LMOVE", "l", "m", "LEFT", "LEFT"}, Bulk(crlf)},
      {{"RPOPLPUSH", "l", "m"}, Bulk(sixteen)},
      {{"LMPOP", "1", "l", "LEFT", "COUNT", "2"}, Arr({Bulk("l"), BulkArr({high, big})})},
      {{"BLPOP", "l", "0"}, BulkArr({"l", ""})},
      {{"LRANGE", "m", "0", "-1"}, BulkArr({sixteen, crlf})},
      {{"RPUSH", nul, nul}, Int(1)},  // binary key names too
      {{"BLMPOP", "0", "1", nul, "LEFT"}, Arr({Bulk(nul), BulkArr({nul})})},
  });
}

// 1000+ elements: ranges, trims, removals and searches over a ring that wrapped and resized.
TEST_F(ListsTest, LargeLists) {
  const std::vector<std::string> items = Numbered("item-", 1500);
  const std::vector<std::string> front = Numbered("f", 300);
  std::vector<Row> rows = {
      {Cmd({"RPUSH", "big"}, items), Int(1500)},
      {Cmd({"LPUSH", "big"}, front), Int(1800)},
      {{"LLEN", "big"}, Int(1800)},
      {{"LINDEX", "big", "0"}, Bulk("f299")},
      {{"LINDEX", "big", "299"}, Bulk("f0")},
      {{"LINDEX", "big", "300"}, Bulk("item-0")},
      {{"LINDEX", "big", "-1"}, Bulk("item-1499")},
      {{"LRANGE", "big", "0", "-1"}, Any()},
      {{"LRANGE", "big", "250", "349"}, Any()},
      {{"LRANGE", "big", "-1000", "-990"}, Any()},
      {{"LPOS", "big", "item-700"}, Int(1000)},
      {{"LPOS", "big", "item-700", "RANK", "-1"}, Int(1000)},
      {{"LPOS", "big", "item-700", "MAXLEN", "1000"}, Nil()},
      {{"LPOS", "big", "item-700", "MAXLEN", "1001"}, Int(1000)},
      // From the tail, MAXLEN counts from index 1799: item-700 (index 1000) is the 800th.
      {{"LPOS", "big", "item-700", "RANK", "-1", "MAXLEN", "799"}, Nil()},
      {{"LPOS", "big", "item-700", "RANK", "-1", "MAXLEN", "800"}, Int(1000)},
      {{"LPOS", "big", "f5", "RANK", "-1", "MAXLEN", "1794"}, Int(294)},
      {{"LPOS", "big", "f5", "RANK", "-1", "MAXLEN", "1505"}, Nil()},
      {{"LPOP", "big", "100"}, Any()},
      {{"RPOP", "big", "100"}, Any()},
      {{"LINDEX", "big", "0"}, Bulk("f199")},
      {Cmd({"RPUSH", "big"}, Numbered("dup", 10)), Int(1610)},
      {Cmd({"LPUSH", "big"}, Numbered("dup", 10)), Int(1620)},
      {{"RPUSH", "big", "dup3", "dup3", "dup3"}, Int(1623)},
      {{"LPOS", "big", "dup3", "COUNT", "0"}, Any()},
      {{"LPOS", "big", "dup3", "COUNT", "0", "RANK", "-2"}, Any()},
      {{"LREM", "big", "-2", "dup3"}, Int(2)},
      {{"LREM", "big", "2", "dup3"}, Int(2)},
      {{"LREM", "big", "0", "dup3"}, Int(1)},
      {{"LPOS", "big", "dup3"}, Nil()},
      {{"LLEN", "big"}, Int(1618)},
      {{"LINSERT", "big", "BEFORE", "item-800", "mid"}, Int(1619)},
      {{"LPOS", "big", "mid"}, Any()},
      {{"LINSERT", "big", "AFTER", "item-150", "early"}, Int(1620)},
      {{"LRANGE", "big", "0", "-1"}, Any()},
      {{"LTRIM", "big", "100", "-100"}, Ok()},
      {{"LLEN", "big"}, Int(1421)},
      {{"LRANGE", "big", "0", "9"}, Any()},
      {{"LRANGE", "big", "-10", "-1"}, Any()},
      {{"LTRIM", "big", "10", "19"}, Ok()},
      {{"LRANGE", "big", "0", "-1"}, Any()},
      {{"LLEN", "big"}, Int(10)},
      {Cmd({"RPUSH", "rot"}, items), Int(1500)},
  };
  // Rotate through LMOVE so the ring's head wraps, then read it all back.
  for (int i = 0; i < 700; ++i) rows.push_back({{"LMOVE", "rot", "rot", "RIGHT", "LEFT"}, Any()});
  rows.push_back({{"LRANGE", "rot", "0", "-1"}, Any()});
  rows.push_back({{"LINDEX", "rot", "0"}, Bulk("item-800")});
  rows.push_back({{"LINDEX", "rot", "1499"}, Bulk("item-799")});
  // Shrink by popping, then grow again.
  for (int i = 0; i < 15; ++i) rows.push_back({{"LPOP", "rot", "99"}, Any()});
  rows.push_back({{"LRANGE", "rot", "0", "-1"}, Any()});
  rows.push_back({Cmd({"LPUSH", "rot"}, Numbered("again", 1000)), Int(1015)});
  rows.push_back({{"LRANGE", "rot", "0", "-1"}, Any()});
  rows.push_back({{"LREM", "rot", "0", "again500"}, Int(1)});
  rows.push_back({{"LRANGE", "rot", "-30", "-1"}, Any()});
  rows.push_back({{"RPOP", "rot", "2000"}, Any()});
  rows.push_back({{"EXISTS", "rot"}, Int(0)});
  RunTable(rows);
}

// Integers at the edges of every integer entry width of a packed list (lists_type.h): 0..127,
// 13 bits, then 16, 24, 32 and 64 bits; all canonical and distinct.
std::vector<std::string> IntegerEdges() {
  return {"0",
          "7",
          "127",
          "128",
          "-1",
          "-4096",
          "4095",
          "4096",
          "-4097",
          "32767",
          "-32768",
          "32768",
          "8388607",
          "-8388608",
          "8388608",
          "2147483647",
          "-2147483648",
          "2147483648",
          "9223372036854775807",
          "-9223372036854775808"};
}

// Searches (LPOS both ways, LREM, LINSERT) compare stored entries with the needle's encoding:
// one element of every encoding, each beside near misses (same length or same value as text,
// different bytes), so a search finds exactly the equal element and never its neighbour.
TEST_F(ListsTest, SearchEveryEncoding) {
  const std::string s100(100, 'x'), s100b = std::string(99, 'x') + "y";
  const std::string s300(300, 'z'), s300b = std::string(299, 'z') + "w", s301(301, 'z');
  std::vector<std::string> elements = IntegerEdges();
  for (const std::string& e : {"007"s, "+7"s, "-0"s, "9223372036854775808"s, ""s, "a"s, "ab"s, s100,
                               s100b, s300, s300b, s301, "12a"s, "1 "s, "1.0"s})
    elements.push_back(e);
  std::vector<Row> rows = {{Cmd({"RPUSH", "l"}, elements), Int(elements.size())},
                           {Cmd({"RPUSH", "l"}, elements), Int(2 * elements.size())}};
  const int64_t n = static_cast<int64_t>(elements.size());
  for (int64_t i = 0; i < n; ++i) {  // every element is distinct
    const std::string& e = elements[i];
    rows.push_back({{"LPOS", "l", e}, Int(i)});
    rows.push_back({{"LPOS", "l", e, "RANK", "-1"}, Int(n + i)});
    rows.push_back({{"LPOS", "l", e, "COUNT", "0"}, IntArr({i, n + i})});
  }
  for (const std::string& e :
       std::vector<std::string>{"00", "-00", "1e3", "9223372036854775806", std::string(100, 'y'),
                                std::string(300, 'w'), std::string(64, 'x')}) {
    rows.push_back({{"LPOS", "l", e}, Nil()});
  }
  rows.push_back({{"LINSERT", "l", "AFTER", "-4097", "mark"}, Any()});
  rows.push_back({{"LINSERT", "l", "BEFORE", s300b, "mark"}, Any()});
  rows.push_back({{"LREM", "l", "0", "7"}, Int(2)});
  rows.push_back({{"LREM", "l", "-1", s300}, Int(1)});
  rows.push_back({{"LREM", "l", "1", "2147483648"}, Int(1)});
  rows.push_back({{"LRANGE", "l", "0", "-1"}, Any()});
  RunTable(rows);
}

TEST_F(ListsTest, LargeElements) {
  const std::string a(70000, 'a'), b(1 << 20, 'b');
  RunTable({
      {{"RPUSH", "l", a, b, "c"}, Int(3)},
      {{"LINDEX", "l", "1"}, Bulk(b)},
      {{"LPOS", "l", b}, Int(1)},
      {{"LSET", "l", "1", "small"}, Ok()},
      {{"LRANGE", "l", "0", "-1"}, BulkArr({a, "small", "c"})},
      {{"LREM", "l", "0", a}, Int(1)},
      {{"LLEN", "l"}, Int(2)},
  });
}

// Keyspace commands on lists: the host's side of the type (COPY, RENAME, EXPIRE, DEL, ...).
// Random list commands on both servers with elements of every stored form (small and large
// integers, non-canonical numbers, short, 64..255-byte and long strings), on lists long enough to
// span many chunks: every reply and the whole list after each step must be Redis's.
TEST_F(ListsTest, RandomOperationsMatchRedis) {
  std::mt19937_64 rng(20261123);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<std::string> pool = IntegerEdges();
  for (const std::string& e :
       {"01"s, "-0"s, "+5"s, "1.5"s, " 3"s, ""s, "a"s, "hello"s, std::string(63, 'm'),
        std::string(64, 'n'), std::string(255, 'o'), std::string(256, 'p'), std::string(3000, 'q')})
    pool.push_back(e);
  auto elem = [&] { return pool[pick(pool.size())]; };
  auto index = [&] { return std::to_string(static_cast<int64_t>(pick(4000)) - 2000); };
  for (const int initial : {300, 3000}) {
    SCOPED_TRACE(initial);
    Servers::Get().Reset();
    RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
    for (RespClient* c : {&v, &r}) {
      Strings fill = {"RPUSH", "l"};
      for (int i = 0; i < initial; ++i) fill.push_back(pool[(i * 7) % pool.size()]);
      c->Cmd(fill);
    }
    for (int step = 0; step < 2000; ++step) {
      Strings cmd;
      switch (pick(12)) {
        case 0:
          cmd = {"LPUSH", "l", elem(), elem()};
          break;
        case 1:
          cmd = {"RPUSH", "l", elem()};
          break;
        case 2:
          cmd = {"LPOP", "l"};
          break;
        case 3:
          cmd = {"RPOP", "l", std::to_string(pick(4))};
          break;
        case 4:
          cmd = {"LSET", "l", index(), elem()};
          break;
        case 5:
          cmd = {"LINSERT", "l", pick(2) ? "BEFORE" : "AFTER", elem(), elem()};
          break;
        case 6:
          cmd = {"LREM", "l", std::to_string(static_cast<int>(pick(7)) - 3), elem()};
          break;
        case 7:
          cmd = {"LTRIM", "l", std::to_string(pick(3)),
                 std::to_string(-1 - static_cast<int>(pick(3)))};
          break;
        case 8:
          cmd = {"LINDEX", "l", index()};
          break;
        case 9:
          cmd = {"LPOS", "l", elem(), "RANK", pick(2) ? "-1" : "2", "COUNT", "3"};
          break;
        case 10:
          cmd = {"LMOVE", "l", "l", pick(2) ? "LEFT" : "RIGHT", pick(2) ? "LEFT" : "RIGHT"};
          break;
        default:
          cmd = {"LRANGE", "l", index(), index()};
          break;
      }
      const Reply a = v.Cmd(cmd), b = r.Cmd(cmd);
      ASSERT_EQ(a, b) << "step " << step << ": " << Show(cmd) << "\n  vessel: " << a.ToString()
                      << "\n  redis:  " << b.ToString();
      if (step % 50 == 0) {
        ASSERT_EQ(v("LRANGE", "l", "0", "-1"), r("LRANGE", "l", "0", "-1"))
            << "after step " << step;
      }
      if (v("LLEN", "l").integer < 50) {
        const Strings refill = {"RPUSH", "l", elem(), elem(), elem(), elem(), elem()};
        for (RespClient* c : {&v, &r}) c->Cmd(refill);
      }
    }
    EXPECT_EQ(v("LRANGE", "l", "0", "-1"), r("LRANGE", "l", "0", "-1"));
  }
}

TEST_F(ListsTest, KeyspaceCommandsOnLists) {
  const std::string longer = "an element that is stored outside the ring";
  RunTable({
      {{"RPUSH", "l", "a", longer, "c"}, Int(3)},
      {{"COPY", "l", "l2"}, Int(1)},
      {{"LPOP", "l"}, Bulk("a")},
      {{"LRANGE", "l2", "0", "-1"}, BulkArr({"a", longer, "c"})},
      {{"LSET", "l2", "1", "changed"}, Ok()},
      {{"LINDEX", "l", "0"}, Bulk(longer)},
      {{"RENAME", "l2", "l3"}, Ok()},
      {{"LRANGE", "l3", "0", "-1"}, BulkArr({"a", "changed", "c"})},
      {{"EXPIRE", "l3", "100"}, Int(1)},
      {{"RPUSH", "l3", "d"}, Int(4)},
      {{"TTL", "l3"}, Int(100)},  // pushing keeps the TTL
      {{"RPOP", "l3", "4"}, BulkArr({"d", "c", "changed", "a"})},
      {{"TTL", "l3"}, Int(-2)},
      {{"RPUSH", "l3", "x"}, Int(1)},
      {{"TTL", "l3"}, Int(-1)},
      {{"DEL", "l", "l3"}, Int(2)},
      {{"DBSIZE"}, Int(0)},
      {{"RPUSH", "u", "x"}, Int(1)},
      {{"UNLINK", "u"}, Int(1)},
  });
}

TEST_F(ListsTest, ArityErrors) {
  RunTable({
      {{"LPUSH", "l"}, Err("ERR wrong number of arguments for 'lpush' command")},
      {{"RPUSH", "l"}, Err("ERR wrong number of arguments for 'rpush' command")},
      {{"LPUSHX", "l"}, Err("ERR wrong number of arguments for 'lpushx' command")},
      {{"RPUSHX", "l"}, Err("ERR wrong number of arguments for 'rpushx' command")},
      {{"LPOP"}, Err("ERR wrong number of arguments for 'lpop' command")},
      {{"RPOP"}, Err("ERR wrong number of arguments for 'rpop' command")},
      {{"LLEN"}, Err("ERR wrong number of arguments for 'llen' command")},
      {{"LLEN", "a", "b"}, Err("ERR wrong number of arguments for 'llen' command")},
      {{"LRANGE", "l", "0"}, Err("ERR wrong number of arguments for 'lrange' command")},
      {{"LINDEX", "l"}, Err("ERR wrong number of arguments for 'lindex' command")},
      {{"LSET", "l", "0"}, Err("ERR wrong number of arguments for 'lset' command")},
      {{"LINSERT", "l", "BEFORE", "a"}, Err("ERR wrong number of arguments for 'linsert' command")},
      {{"LREM", "l", "0"}, Err("ERR wrong number of arguments for 'lrem' command")},
      {{"LTRIM", "l", "0"}, Err("ERR wrong number of arguments for 'ltrim' command")},
      {{"LPOS", "l"}, Err("ERR wrong number of arguments for 'lpos' command")},
      {{"LMOVE", "a", "b", "LEFT"}, Err("ERR wrong number of arguments for 'lmove' command")},
      {{"RPOPLPUSH", "a"}, Err("ERR wrong number of arguments for 'rpoplpush' command")},
      {{"LMPOP", "1", "a"}, Err("ERR wrong number of arguments for 'lmpop' command")},
      {{"BLPOP", "a"}, Err("ERR wrong number of arguments for 'blpop' command")},
      {{"BRPOP", "a"}, Err("ERR wrong number of arguments for 'brpop' command")},
      {{"BLMOVE", "a", "b", "LEFT", "LEFT"},
       Err("ERR wrong number of arguments for 'blmove' command")},
      {{"BRPOPLPUSH", "a", "b"}, Err("ERR wrong number of arguments for 'brpoplpush' command")},
      {{"BLMPOP", "0", "1", "a"}, Err("ERR wrong number of arguments for 'blmpop' command")},
  });
}

TEST_F(ListsTest, GetKeys) {
  RunTable({
      {{"COMMAND", "GETKEYS", "LPUSH", "k", "a"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "LMOVE", "s", "d", "LEFT", "RIGHT"}, BulkArr({"s", "d"})},
      {{"COMMAND", "GETKEYS", "BLPOP", "a", "b", "c", "0"}, BulkArr({"a", "b", "c"})},
      {{"COMMAND", "GETKEYS", "BLMOVE", "s", "d", "LEFT", "RIGHT", "0"}, BulkArr({"s", "d"})},
      {{"COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT"}, BulkArr({"a", "b"})},
      {{"COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "3"},
       BulkArr({"a", "b"})},
  });
}

// COMMAND INFO with what the SDK cannot express removed on both sides: the "module" flag the host
// adds and Redis's "noscript" flag (no VSL_CMD_NOSCRIPT yet).
Reply NormalizeCommandInfo(Reply r) {
  if (r.elems.size() != 1 || r.elems[0].elems.size() < 3) return r;
  std::erase_if(r.elems[0].elems[2].elems,
                [](const Reply& f) { return f.str == "module" || f.str == "noscript"; });
  return r;
}

TEST_F(ListsTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name :
       {"lpush",  "rpush", "lpushx",  "rpushx", "lpop",       "rpop",  "llen",  "lrange",
        "lindex", "lset",  "linsert", "lrem",   "ltrim",      "lpos",  "lmove", "rpoplpush",
        "lmpop",  "blpop", "brpop",   "blmove", "brpoplpush", "blmpop"}) {
    const Reply v = NormalizeCommandInfo(vessel("COMMAND", "INFO", name));
    const Reply r = NormalizeCommandInfo(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
}

// MEMORY USAGE counts the ring and the out-of-line elements (vessel only: sizes differ).
// MEMORY USAGE follows the packed representation: short elements cost a few bytes each, strings
// up to 255 bytes are stored inline, longer ones in their own block, and trimming gives the room
// back.
TEST_F(ListsTest, MemoryUsage) {
  RespClient c = Servers::Get().Vessel();
  c("RPUSH", "small", "a");
  const int64_t one = c("MEMORY", "USAGE", "small").integer;
  EXPECT_GT(one, 0);
  for (int i = 0; i < 1000; ++i) c("RPUSH", "small", "b");
  const int64_t small_1001 = c("MEMORY", "USAGE", "small").integer;
  EXPECT_GE(small_1001, one + 1000 * 2);  // a tag byte and the byte itself
  EXPECT_LT(small_1001, one + 1000 * 4);
  for (int i = 0; i < 1000; ++i) c("RPUSH", "ints", std::to_string(100 + i));
  EXPECT_LT(c("MEMORY", "USAGE", "ints").integer, 1000 * 3);  // two bytes per number
  const std::string longer(100, 'x');
  for (int i = 0; i < 1000; ++i) c("RPUSH", "heap", longer);
  const int64_t heap_1000 = c("MEMORY", "USAGE", "heap").integer;
  EXPECT_GE(heap_1000, 1000 * (2 + 100));
  EXPECT_LT(heap_1000, 1000 * (2 + 100) * 13 / 10);
  c("LTRIM", "heap", "0", "9");
  const int64_t heap_10 = c("MEMORY", "USAGE", "heap").integer;
  EXPECT_LT(heap_10, 2500);  // the dropped chunks were freed, the last one shrank
  c("LSET", "heap", "0", std::string(5000, 'y'));
  const int64_t with_block = c("MEMORY", "USAGE", "heap").integer;
  EXPECT_GE(with_block, heap_10 + 5000);
  c("LSET", "heap", "0", "y");
  EXPECT_LT(c("MEMORY", "USAGE", "heap").integer, with_block - 5000);
}

// The type's serialize and deserialize through the host's ABI (no command uses them yet; DUMP,
// RESTORE and snapshots will): a list written and read back is the same list, and bad input is
// refused. Vessel only, in-process.
TEST_F(ListsTest, SerializeRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  std::vector<std::string> elems = {"",
                                    "short",
                                    std::string(15, 'a'),
                                    std::string(16, 'b'),
                                    "bin\0ary\r\n"s,
                                    std::string(5000, 'z')};
  for (const std::string& e : Numbered("element-", 1000)) elems.push_back(e);
  ASSERT_EQ(c.Cmd(Cmd({"RPUSH", "src"}, elems)).integer, 1006);
  c("LPOP", "src");  // the ring's head is not at slot 0

  const TypeCallbacks type("list");
  ASSERT_TRUE(type.found());
  const std::string bytes = type.SaveKey("src");
  ASSERT_FALSE(bytes.empty());
  const uint32_t version = type.encoding_version();
  for (size_t cut :
       {size_t{0}, size_t{7}, size_t{8}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_EQ(type.Load(bytes.substr(0, cut), version), nullptr) << "cut at " << cut;
  }
  EXPECT_EQ(type.Load(bytes, version + 1), nullptr) << "unknown encoding version";
  void* value = type.Load(bytes, version);
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(type.Save(value), bytes);
  type.StoreKey("dst", value);
  EXPECT_EQ(c("LRANGE", "dst", "0", "-1"), c("LRANGE", "src", "0", "-1"));
  EXPECT_EQ(c("LLEN", "dst").integer, 1005);
  // The same elements in freshly packed chunks: about the same memory (the source's first chunk
  // lost an element and kept its room).
  const double src_bytes = static_cast<double>(c("MEMORY", "USAGE", "src").integer);
  EXPECT_NEAR(static_cast<double>(c("MEMORY", "USAGE", "dst").integer), src_bytes,
              src_bytes * 0.05);
}

}  // namespace
}  // namespace vessel::test
