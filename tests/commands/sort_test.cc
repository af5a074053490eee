// SORT and SORT_RO against vessel and redis-server: every option on lists, sets and sorted sets,
// BY and GET patterns over strings and hash fields, STORE, and the errors.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class SortTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

const char kNotDouble[] = "ERR One or more scores can't be converted into double";

TEST_F(SortTest, ListsNumericAlphaLimitDesc) {
  RunTable({
      {{"RPUSH", "l", "3", "1", "2", "10", "-5", "2.5"}, Int(6)},
      {{"SORT", "l"}, BulkArr({"-5", "1", "2", "2.5", "3", "10"})},
      {{"SORT", "l", "DESC"}, BulkArr({"10", "3", "2.5", "2", "1", "-5"})},
      {{"SORT", "l", "ALPHA"}, BulkArr({"-5", "1", "10", "2", "2.5", "3"})},
      {{"SORT", "l", "LIMIT", "1", "2"}, BulkArr({"1", "2"})},
      {{"SORT", "l", "LIMIT", "-1", "2"}, BulkArr({"-5", "1"})},
      {{"SORT", "l", "LIMIT", "4", "100"}, BulkArr({"3", "10"})},
      {{"SORT", "l", "LIMIT", "10", "1"}, Arr({})},
      {{"SORT", "l", "LIMIT", "0", "-1", "DESC", "ALPHA"}, Any()},
      {{"SORT", "l", "LIMIT", "x", "1"}, Error(kNotInt)},
      {{"SORT", "l", "LIMIT", "1"}, Error(kSyntax)},
      {{"SORT", "l", "NOSUCH"}, Error(kSyntax)},
      {{"SORT_RO", "l", "DESC", "LIMIT", "0", "3"}, BulkArr({"10", "3", "2.5"})},
      {{"RPUSH", "w", "a", "1"}, Int(2)},
      {{"SORT", "w"}, Error(kNotDouble)},
      {{"SORT", "w", "ALPHA"}, BulkArr({"1", "a"})},
      {{"SORT", "nokey"}, Arr({})},
      {{"SORT_RO", "nokey", "ALPHA"}, Arr({})},
      {{"SET", "s", "x"}, Ok()},
      {{"SORT", "s"}, Error(kWrongType)},
      {{"SORT", "s", "BY", "nosort"}, Error(kWrongType)},
  });
}

// BY nosort keeps the list's and the sorted set's own order (DESC reverses it, LIMIT slices it).
TEST_F(SortTest, NoSortKeepsNativeOrder) {
  RunTable({
      {{"RPUSH", "l", "c", "a", "b", "d"}, Int(4)},
      {{"SORT", "l", "BY", "nosort"}, BulkArr({"c", "a", "b", "d"})},
      {{"SORT", "l", "BY", "nosort", "DESC"}, BulkArr({"d", "b", "a", "c"})},
      {{"SORT", "l", "BY", "nosort", "LIMIT", "1", "2"}, BulkArr({"a", "b"})},
      {{"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"}, BulkArr({"b", "a"})},
      {{"ZADD", "z", "3", "c", "1", "a", "2", "b"}, Int(3)},
      {{"SORT", "z", "BY", "nosort"}, BulkArr({"a", "b", "c"})},
      {{"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"}, BulkArr({"c", "b"})},
      {{"SORT", "z", "ALPHA", "DESC"}, BulkArr({"c", "b", "a"})},
      {{"SADD", "set", "b", "a", "c"}, Int(3)},
      {{"SORT", "set", "BY", "nosort"}, UnorderedBulkArr({"a", "b", "c"}), Diff::kUnordered},
      {{"SORT", "set", "ALPHA"}, BulkArr({"a", "b", "c"})},
      // With STORE a set is sorted anyway, so the stored list is the same everywhere.
      {{"SORT", "set", "BY", "nosort", "STORE", "dst"}, Int(3)},
      {{"LRANGE", "dst", "0", "-1"}, BulkArr({"a", "b", "c"})},
  });
}

TEST_F(SortTest, ByAndGetPatterns) {
  RunTable({
      {{"RPUSH", "ids", "1", "2", "3", "4"}, Int(4)},
      {{"MSET", "w_1", "30", "w_2", "10", "w_3", "20", "name_1", "one", "name_2", "two", "name_3",
        "three"},
       Ok()},
      {{"HSET", "user:1", "age", "40", "name", "ann"}, Int(2)},
      {{"HSET", "user:2", "age", "20", "name", "bob"}, Int(2)},
      {{"HSET", "user:3", "age", "30"}, Int(1)},
      // w_4 is missing: its weight is 0.
      {{"SORT", "ids", "BY", "w_*"}, BulkArr({"4", "2", "3", "1"})},
      {{"SORT", "ids", "BY", "w_*", "DESC"}, BulkArr({"1", "3", "2", "4"})},
      {{"SORT", "ids", "BY", "w_*", "GET", "name_*"},
       Arr({Nil(), Bulk("two"), Bulk("three"), Bulk("one")})},
      {{"SORT", "ids", "BY", "w_*", "GET", "#", "GET", "name_*", "LIMIT", "1", "2"},
       BulkArr({"2", "two", "3", "three"})},
      {{"SORT", "ids", "BY", "user:*->age"}, BulkArr({"4", "2", "3", "1"})},
      {{"SORT", "ids", "BY", "user:*->age", "GET", "user:*->name"},
       Arr({Nil(), Bulk("bob"), Nil(), Bulk("ann")})},
      {{"SORT", "ids", "BY", "name_*", "ALPHA"}, BulkArr({"4", "1", "3", "2"})},
      {{"SORT", "ids", "GET", "nostar"}, Arr({Nil(), Nil(), Nil(), Nil()})},
      {{"SORT", "ids", "BY", "user:*->name", "ALPHA", "DESC", "LIMIT", "0", "2"},
       BulkArr({"2", "1"})},
      // A pattern key of the wrong type counts as missing.
      {{"SET", "bad_1", "x"}, Ok()},
      {{"SORT", "ids", "BY", "w_*", "GET", "user:*->age"},
       Arr({Nil(), Bulk("20"), Bulk("30"), Bulk("40")})},
      {{"SORT", "ids", "BY", "name_*"}, Error(kNotDouble)},
      {{"SORT_RO", "ids", "BY", "w_*", "GET", "#"}, BulkArr({"4", "2", "3", "1"})},
  });
}

TEST_F(SortTest, Store) {
  RunTable({
      {{"RPUSH", "l", "3", "1", "2"}, Int(3)},
      {{"SET", "dst", "old"}, Ok()},
      {{"EXPIRE", "dst", "100"}, Int(1)},
      {{"SORT", "l", "STORE", "dst"}, Int(3)},
      {{"TYPE", "dst"}, Simple("list")},
      {{"TTL", "dst"}, Int(-1)},
      {{"LRANGE", "dst", "0", "-1"}, BulkArr({"1", "2", "3"})},
      {{"MSET", "v_1", "a", "v_3", "c"}, Ok()},
      {{"SORT", "l", "GET", "#", "GET", "v_*", "STORE", "dst"}, Int(6)},
      {{"LRANGE", "dst", "0", "-1"}, BulkArr({"1", "a", "2", "", "3", "c"})},
      {{"SORT", "l", "LIMIT", "5", "5", "STORE", "dst"}, Int(0)},
      {{"EXISTS", "dst"}, Int(0)},
      {{"SORT", "l", "STORE", "l"}, Int(3)},  // the source itself
      {{"LRANGE", "l", "0", "-1"}, BulkArr({"1", "2", "3"})},
      {{"SORT_RO", "l", "STORE", "dst"}, Error(kSyntax)},
      {{"SORT", "nokey", "STORE", "dst"}, Int(0)},
      {{"COMMAND", "GETKEYS", "SORT", "l", "STORE", "dst"}, BulkArr({"l", "dst"})},
      {{"COMMAND", "GETKEYS", "SORT", "l", "BY", "store", "LIMIT", "0", "1"}, BulkArr({"l"})},
  });
}

TEST_F(SortTest, InsideTransactions) {
  RunTable({
      {{"RPUSH", "l", "2", "1"}, Int(2)},
      {{"SET", "w_1", "5"}, Ok()},
      {{"MULTI"}, Ok()},
      {{"SORT", "l", "BY", "w_*", "STORE", "d"}, Simple("QUEUED")},
      {{"SORT", "l"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Int(2), BulkArr({"1", "2"})})},
      {{"LRANGE", "d", "0", "-1"}, BulkArr({"2", "1"})},
  });
}

}  // namespace
}  // namespace vessel::test
