// The zsets module's sorted-set commands against vessel and redis-server: table rows run on both
// (RESP2 and RESP3) and must meet their expectation on both with identical replies, in both
// representations (small sets are "listpack"; more than 128 members or a member longer than 64
// bytes make a "skiplist"). Random replies (ZRANDMEMBER) and ZSCAN are checked by property.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;

constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kRangeNotFloat[] = "ERR min or max is not a float";
constexpr char kNotLex[] = "ERR min or max not valid string range item";

const std::string kLong(70, 'L');  // longer than zset-max-listpack-value

// ZADD key s0 m0 s1 m1 ... with scores from `first`.
Strings ZAddArgs(const std::string& key, const Strings& members, int first) {
  Strings cmd = {"ZADD", key};
  for (size_t i = 0; i < members.size(); ++i) {
    cmd.push_back(std::to_string(first + static_cast<int>(i)));
    cmd.push_back(members[i]);
  }
  return cmd;
}

// The three shapes every table runs in: a listpack, a skiplist by count, a skiplist by length.
struct Shape {
  const char* name;
  Strings filler;  // extra members, scored 1000 and up (after every test member)
  const char* encoding;
};
std::vector<Shape> Shapes() {
  return {{"listpack", {}, "listpack"},
          {"skiplist by count", Seq("f", 0, 200), "skiplist"},
          {"skiplist by length", {kLong}, "skiplist"}};
}
// Rows that give key `key` the shape's filler.
std::vector<Row> Fill(const std::string& key, const Shape& s) {
  if (s.filler.empty()) return {};
  return {{ZAddArgs(key, s.filler, 1000), Int(static_cast<int64_t>(s.filler.size()))}};
}
std::vector<Row> Join(std::vector<Row> a, const std::vector<Row>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// The shape's filler for a set whose scores are all 0 (lex ranges need equal scores).
Strings LexFiller(const Shape& s) {
  Strings args;
  for (const std::string& f : s.filler) args.insert(args.end(), {"0", "zz" + f});
  return args;
}
// Runs rows in RESP2 and RESP3, each after a FLUSHALL.
void RunBoth(const std::vector<Row>& rows) {
  for (int protocol : {2, 3}) {
    SCOPED_TRACE("RESP" + std::to_string(protocol));
    Servers::Get().Reset();
    RunTable(rows, protocol);
  }
}

class ZsetsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- adding and reading members ----

TEST_F(ZsetsTest, AddScoreRankInEveryShape) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    const int64_t f = static_cast<int64_t>(s.filler.size());
    RunBoth(Join(Fill("z", s), {
                                   {{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, Int(3)},
                                   {{"ZADD", "z", "1", "a"}, Int(0)},
                                   {{"ZADD", "z", "CH", "1", "a", "5", "b"}, Int(1)},
                                   {{"ZCARD", "z"}, Int(f + 3)},
                                   {{"ZCARD", "nokey"}, Int(0)},
                                   {{"ZSCORE", "z", "b"}, Dbl("5")},
                                   {{"ZSCORE", "z", "nope"}, Nil()},
                                   {{"ZSCORE", "nokey", "a"}, Nil()},
                                   {{"ZMSCORE", "z", "a", "nope", "c"}, Any()},
                                   {{"ZMSCORE", "nokey", "a", "b"}, Arr({Nil(), Nil()})},
                                   {{"ZRANK", "z", "a"}, Int(0)},
                                   {{"ZRANK", "z", "b"}, Int(2)},
                                   {{"ZRANK", "z", "c"}, Int(1)},
                                   {{"ZREVRANK", "z", "a"}, Int(f + 2)},
                                   {{"ZRANK", "z", "nope"}, Nil()},
                                   {{"ZREVRANK", "nokey", "a"}, Nil()},
                                   {{"ZINCRBY", "z", "2.5", "a"}, Dbl("3.5")},
                                   {{"ZINCRBY", "z", "1", "new"}, Dbl("1")},
                                   {{"ZINCRBY", "z", "-1", "new"}, Dbl("0")},
                                   {{"ZRANGE", "z", "0", "3", "WITHSCORES"}, Any()},
                                   {{"ZREM", "z", "a", "nope", "a"}, Int(1)},
                                   {{"ZREM", "nokey", "a"}, Int(0)},
                                   {{"ZCARD", "z"}, Int(f + 3)},
                                   {{"OBJECT", "ENCODING", "z"}, Bulk(s.encoding)},
                                   {{"TYPE", "z"}, Simple("zset")},
                               }));
  }
}

TEST_F(ZsetsTest, AddOptions) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(Fill("z", s),
                 {
                     {{"ZADD", "z", "10", "a", "20", "b"}, Int(2)},
                     {{"ZADD", "z", "NX", "1", "a", "30", "c"}, Int(1)},
                     {{"ZSCORE", "z", "a"}, Dbl("10")},
                     {{"ZADD", "z", "XX", "1", "a", "40", "d"}, Int(0)},
                     {{"ZSCORE", "z", "a"}, Dbl("1")},
                     {{"ZSCORE", "z", "d"}, Nil()},
                     {{"ZADD", "z", "XX", "CH", "2", "a", "20", "b"}, Int(1)},
                     {{"ZADD", "z", "GT", "CH", "1", "a", "25", "b", "5", "e"}, Int(2)},
                     {{"ZSCORE", "z", "a"}, Dbl("2")},
                     {{"ZSCORE", "z", "b"}, Dbl("25")},
                     {{"ZADD", "z", "LT", "CH", "3", "a", "1", "b", "6", "f"}, Int(2)},
                     {{"ZSCORE", "z", "b"}, Dbl("1")},
                     {{"ZADD", "z", "XX", "GT", "100", "a", "100", "new"}, Int(0)},
                     {{"ZSCORE", "z", "new"}, Nil()},
                     {{"ZADD", "z", "INCR", "5", "a"}, Dbl("105")},
                     {{"ZADD", "z", "NX", "INCR", "5", "a"}, Nil()},
                     {{"ZADD", "z", "XX", "INCR", "5", "nope"}, Nil()},
                     {{"ZADD", "z", "GT", "INCR", "-1", "a"}, Nil()},
                     {{"ZADD", "z", "LT", "INCR", "-1", "a"}, Dbl("104")},
                     {{"ZADD", "z", "nx", "incr", "2.5", "g"}, Dbl("2.5")},
                     {{"ZADD", "nokey", "XX", "1", "a"}, Int(0)},
                     {{"EXISTS", "nokey"}, Int(0)},
                     {{"ZADD", "nokey", "XX", "INCR", "1", "a"}, Nil()},
                     {{"ZADD", "z", "GT", "LT", "1", "a"},
                      Error("ERR GT, LT, and/or NX options at the same time are not compatible")},
                     {{"ZADD", "z", "NX", "GT", "1", "a"},
                      Error("ERR GT, LT, and/or NX options at the same time are not compatible")},
                     {{"ZADD", "z", "NX", "XX", "1", "a"},
                      Error("ERR XX and NX options at the same time are not compatible")},
                     {{"ZADD", "z", "NX", "XX", "GT", "1", "a"},
                      Error("ERR XX and NX options at the same time are not compatible")},
                     {{"ZADD", "z", "INCR", "1", "a", "2", "b"},
                      Error("ERR INCR option supports a single increment-element pair")},
                     {{"ZADD", "z", "1", "a", "2"}, Error(kSyntax)},
                     {{"ZADD", "z", "NX"}, Any()},  // an arity error in Redis too
                     {{"ZADD", "z", "NX", "CH"}, Error(kSyntax)},
                     {{"ZADD", "z", "x", "a"}, Error(kNotFloat)},
                     {{"ZADD", "z", "1", "a", "nan", "b"}, Error(kNotFloat)},
                     {{"ZADD", "z", "1", "a", "1.5x", "b"}, Error(kNotFloat)},
                     {{"ZADD", "z", " 1", "a"}, Error(kNotFloat)},
                     {{"ZADD", "z", "", "a"}, Error(kNotFloat)},
                     {{"ZADD", "z", "1e400", "a"}, Error(kNotFloat)},
                     {{"ZINCRBY", "z", "x", "a"}, Error(kNotFloat)},
                     {{"ZINCRBY", "z", "nx", "a"}, Error(kSyntax)},
                     {{"ZSCORE", "z", "x"}, Nil()},  // nothing above was applied
                 }));
  }
}

TEST_F(ZsetsTest, InfinityNanAndNegativeZero) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(
        Fill("z", s),
        {
            {{"ZADD", "z", "inf", "a", "-inf", "b", "+inf", "c", "1e308", "d"}, Int(4)},
            {{"ZSCORE", "z", "a"}, Dbl("inf")},
            {{"ZSCORE", "z", "b"}, Dbl("-inf")},
            {{"ZINCRBY", "z", "1e308", "d"}, Dbl("inf")},
            {{"ZINCRBY", "z", "-inf", "a"}, Error("ERR resulting score is not a number (NaN)")},
            {{"ZADD", "z", "INCR", "+inf", "b"},
             Error("ERR resulting score is not a number (NaN)")},
            {{"ZSCORE", "z", "a"}, Dbl("inf")},
            {{"ZINCRBY", "z", "inf", "a"}, Dbl("inf")},
            // Redis stores an integral listpack score as an integer: -0 reads back 0
            // from a listpack and -0 from a skiplist.
            {{"ZADD", "z", "-0", "nz"}, Int(1)},
            {{"ZSCORE", "z", "nz"}, Any()},
            {{"ZINCRBY", "z", "-0", "nz"}, Any()},
            {{"ZADD", "z", "0.1", "p", "1e17", "q", "-1.5e-300", "r", "123456789012", "t"}, Int(4)},
            {{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, Any()},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "0", "12"}, Any()},
            {{"ZCOUNT", "z", "-inf", "inf"}, Any()},
            {{"ZCOUNT", "z", "(-inf", "(inf"}, Any()},
        }));
  }
  // ZSCAN writes a listpack's scores as Redis's listpack holds them (integers as integers).
  RunTable({
      {{"ZADD", "p", "1e17", "a", "0.1", "b", "-0", "c", "3", "d", "inf", "e"}, Int(5)},
      {{"ZSCAN", "p", "0"}, Any(), Diff::kUnordered},
  });
}

TEST_F(ZsetsTest, WrongTypeEverywhere) {
  std::vector<Row> rows = {{{"SET", "str", "x"}, Ok()}, {{"SADD", "set", "a"}, Int(1)}};
  for (const Strings& cmd : std::vector<Strings>{
           {"ZADD", "str", "1", "a"},
           {"ZINCRBY", "str", "1", "a"},
           {"ZREM", "str", "a"},
           {"ZCARD", "str"},
           {"ZSCORE", "str", "a"},
           {"ZMSCORE", "str", "a"},
           {"ZRANK", "str", "a"},
           {"ZREVRANK", "str", "a"},
           {"ZCOUNT", "str", "0", "1"},
           {"ZLEXCOUNT", "str", "-", "+"},
           {"ZRANGE", "str", "0", "1"},
           {"ZRANGESTORE", "d", "str", "0", "1"},
           {"ZREVRANGE", "str", "0", "1"},
           {"ZRANGEBYSCORE", "str", "0", "1"},
           {"ZRANGEBYLEX", "str", "-", "+"},
           {"ZREMRANGEBYRANK", "str", "0", "1"},
           {"ZREMRANGEBYSCORE", "str", "0", "1"},
           {"ZREMRANGEBYLEX", "str", "-", "+"},
           {"ZPOPMIN", "str"},
           {"ZPOPMAX", "str", "2"},
           {"ZMPOP", "1", "str", "MIN"},
           {"BZPOPMIN", "str", "0"},
           {"BZMPOP", "0", "1", "str", "MAX"},
           {"ZRANDMEMBER", "str"},
           {"ZRANDMEMBER", "str", "2"},
           {"ZSCAN", "str", "0"},
           {"ZUNION", "2", "set", "str"},
           {"ZINTERSTORE", "d", "1", "str"},
           {"ZINTERCARD", "1", "str"},
           {"ZADD", "set", "1", "a"},
           {"ZSCORE", "set", "a"},
       }) {
    rows.push_back({cmd, WrongType()});
  }
  RunTable(rows);
  // A zset key read by another family's command.
  RunTable({
      {{"ZADD", "z", "1", "a"}, Int(1)},
      {{"GET", "z"}, WrongType()},
      {{"SADD", "z", "a"}, WrongType()},
      {{"LPUSH", "z", "a"}, WrongType()},
      {{"SUNION", "z"}, WrongType()},
  });
}

// ---- ranges ----

TEST_F(ZsetsTest, RangeByRank) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(Fill("z", s),
                 {
                     {{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, Int(4)},
                     {{"ZRANGE", "z", "0", "2"}, BulkArr({"a", "b", "c"})},
                     {{"ZRANGE", "z", "1", "2", "WITHSCORES"}, Any()},
                     {{"ZRANGE", "z", "-3", "-1"}, Any()},
                     {{"ZRANGE", "z", "0", "-1"}, Any()},
                     {{"ZRANGE", "z", "-100000", "1"}, BulkArr({"a", "b"})},
                     {{"ZRANGE", "z", "3", "1"}, Arr({})},
                     {{"ZRANGE", "z", "1000", "2000"}, Arr({})},
                     {{"ZRANGE", "z", "0", "1", "REV"}, Any()},
                     {{"ZRANGE", "z", "0", "1", "REV", "WITHSCORES"}, Any()},
                     {{"ZREVRANGE", "z", "0", "1", "WITHSCORES"}, Any()},
                     {{"ZREVRANGE", "z", "-2", "-1"}, BulkArr({"b", "a"})},
                     {{"ZRANGE", "nokey", "0", "-1"}, Arr({})},
                     {{"ZRANGE", "z", "x", "1"}, Error(kNotInt)},
                     {{"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"},
                      Error("ERR syntax error, LIMIT is only supported in combination with either "
                            "BYSCORE or BYLEX")},
                     {{"ZRANGE", "z", "0", "1", "FOO"}, Error(kSyntax)},
                     {{"ZRANGE", "z", "0", "1", "LIMIT", "0"}, Error(kSyntax)},
                     {{"ZREVRANGE", "z", "0", "1", "REV"}, Error(kSyntax)},
                     {{"ZREVRANGE", "z", "0", "1", "BYSCORE"}, Error(kSyntax)},
                     {{"ZRANGE", "z", "0", "1", "REV", "REV"}, Error(kSyntax)},
                     {{"ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"}, Error(kSyntax)},
                 }));
  }
}

TEST_F(ZsetsTest, RangeByScore) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(
        Fill("z", s),
        {
            {{"ZADD", "z", "1", "a", "2", "b", "2", "bb", "3", "c", "4.5", "d", "-5", "m"}, Int(6)},
            {{"ZRANGEBYSCORE", "z", "2", "3"}, BulkArr({"b", "bb", "c"})},
            {{"ZRANGEBYSCORE", "z", "(2", "3"}, BulkArr({"c"})},
            {{"ZRANGEBYSCORE", "z", "(1", "(3", "WITHSCORES"}, Any()},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "2", "3"}, Any()},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "-1"}, Any()},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "3"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "0", "0"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "100000", "1"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "3", "2"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "(2", "2"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "2", "(2"}, Arr({})},
            {{"ZRANGEBYSCORE", "z", "2", "2"}, BulkArr({"b", "bb"})},
            {{"ZREVRANGEBYSCORE", "z", "3", "2"}, BulkArr({"c", "bb", "b"})},
            {{"ZREVRANGEBYSCORE", "z", "+inf", "(1", "WITHSCORES", "LIMIT", "1", "2"}, Any()},
            {{"ZRANGE", "z", "(1", "4.5", "BYSCORE"}, Any()},
            {{"ZRANGE", "z", "4.5", "(1", "BYSCORE", "REV", "LIMIT", "1", "10", "WITHSCORES"},
             Any()},
            {{"ZRANGEBYSCORE", "z", "1e0", "0x3"}, Any()},  // strtod: exponents and hex
            {{"ZRANGEBYSCORE", "z", " 1", "2"}, Any()},     // strtod skips a leading space
            {{"ZRANGEBYSCORE", "z", "", "2"}, Any()},       // "" is 0 to strtod
            {{"ZRANGEBYSCORE", "z", "(", "2"}, Any()},
            {{"ZRANGEBYSCORE", "z", "1 ", "2"}, Error(kRangeNotFloat)},
            {{"ZRANGEBYSCORE", "z", "nan", "2"}, Error(kRangeNotFloat)},
            {{"ZRANGEBYSCORE", "z", "1", "(nan"}, Error(kRangeNotFloat)},
            {{"ZRANGEBYSCORE", "z", "[1", "2"}, Error(kRangeNotFloat)},
            {{"ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "x", "1"}, Error(kNotInt)},
            {{"ZRANGEBYSCORE", "z", "0", "1", "REV"}, Error(kSyntax)},
            {{"ZRANGEBYSCORE", "z", "0", "1", "WITHSCORE"}, Error(kSyntax)},
            {{"ZRANGEBYSCORE", "nokey", "x", "1"}, Error(kRangeNotFloat)},
            {{"ZCOUNT", "z", "2", "3"}, Int(3)},
            {{"ZCOUNT", "z", "(2", "+inf"}, Any()},
            {{"ZCOUNT", "z", "5", "1"}, Int(0)},
            {{"ZCOUNT", "nokey", "0", "1"}, Int(0)},
            {{"ZCOUNT", "z", "x", "1"}, Error(kRangeNotFloat)},
        }));
  }
}

TEST_F(ZsetsTest, RangeByLex) {
  const Strings members = {"", "a", "aa", "ab", "b", "b\0c"s, "bc", "c", "z"};
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    // Lex ranges need equal scores: the shape's filler goes to another key.
    std::vector<Row> rows;
    Strings add = {"ZADD", "z"};
    for (const std::string& m : members) add.insert(add.end(), {"0", m});
    add = Cat(add, LexFiller(s));
    rows.push_back({add, Int(static_cast<int64_t>(members.size() + s.filler.size()))});
    const std::vector<Row> body = {
        {{"ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "9"}, Any()},
        {{"ZRANGEBYLEX", "z", "[a", "[b"}, BulkArr({"a", "aa", "ab", "b"})},
        {{"ZRANGEBYLEX", "z", "(a", "(b"}, BulkArr({"aa", "ab"})},
        {{"ZRANGEBYLEX", "z", "[b", "[b\0d"s}, Any()},
        {{"ZRANGEBYLEX", "z", "-", "(a"}, BulkArr({""})},
        {{"ZRANGEBYLEX", "z", "[", "[a"}, BulkArr({"", "a"})},
        {{"ZRANGEBYLEX", "z", "(", "[a"}, BulkArr({"a"})},
        {{"ZRANGEBYLEX", "z", "[c", "+"}, Any()},
        {{"ZRANGEBYLEX", "z", "+", "-"}, Arr({})},
        {{"ZRANGEBYLEX", "z", "[b", "[a"}, Arr({})},
        {{"ZRANGEBYLEX", "z", "(a", "[a"}, Arr({})},
        {{"ZRANGEBYLEX", "z", "-", "-"}, Arr({})},
        {{"ZRANGEBYLEX", "z", "-", "+", "LIMIT", "2", "3"}, BulkArr({"aa", "ab", "b"})},
        {{"ZRANGEBYLEX", "z", "-", "+", "LIMIT", "-1", "3"}, Arr({})},
        {{"ZRANGEBYLEX", "z", "[a", "+", "LIMIT", "1", "-1"}, Any()},
        {{"ZREVRANGEBYLEX", "z", "[b", "[a"}, BulkArr({"b", "ab", "aa", "a"})},
        {{"ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", "1", "2"}, Any()},
        {{"ZRANGE", "z", "[a", "(b", "BYLEX"}, BulkArr({"a", "aa", "ab"})},
        {{"ZRANGE", "z", "(b", "[a", "BYLEX", "REV", "LIMIT", "0", "2"}, BulkArr({"ab", "aa"})},
        {{"ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"},
         Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")},
        {{"ZLEXCOUNT", "z", "[a", "[b"}, Int(4)},
        {{"ZLEXCOUNT", "z", "-", "+"}, Any()},
        {{"ZLEXCOUNT", "z", "(z", "+"}, Any()},
        {{"ZLEXCOUNT", "z", "[b", "[a"}, Int(0)},
        {{"ZLEXCOUNT", "nokey", "-", "+"}, Int(0)},
        {{"ZRANGEBYLEX", "z", "a", "+"}, Error(kNotLex)},
        {{"ZRANGEBYLEX", "z", "-a", "+"}, Error(kNotLex)},
        {{"ZRANGEBYLEX", "z", "[a", "++"}, Error(kNotLex)},
        {{"ZRANGEBYLEX", "z", "", "+"}, Error(kNotLex)},
        {{"ZLEXCOUNT", "nokey", "x", "+"}, Error(kNotLex)},
        {{"ZREMRANGEBYLEX", "z", "[a", "x"}, Error(kNotLex)},
        {{"ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"},
         Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")},
    };
    rows.insert(rows.end(), body.begin(), body.end());
    RunBoth(rows);
  }
}

TEST_F(ZsetsTest, RangeStore) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(
        Fill("src", s),
        {
            {{"ZADD", "src", "1", "a", "2", "b", "3", "c", "-0", "z"}, Int(4)},
            {{"ZRANGESTORE", "dst", "src", "0", "1"}, Int(2)},
            {{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, Any()},
            {{"OBJECT", "ENCODING", "dst"}, Bulk("listpack")},
            {{"ZRANGESTORE", "dst", "src", "0", "-1"}, Any()},
            {{"OBJECT", "ENCODING", "dst"}, Bulk(s.encoding)},
            {{"ZRANGE", "dst", "0", "3", "WITHSCORES"}, Any()},
            {{"ZRANGESTORE", "dst", "src", "(1", "+inf", "BYSCORE", "LIMIT", "0", "2"}, Int(2)},
            {{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, Any()},
            {{"ZRANGESTORE", "dst", "src", "+inf", "-inf", "BYSCORE", "REV"}, Any()},
            {{"ZRANGE", "dst", "-3", "-1", "WITHSCORES"}, Any()},
            {{"ZRANGESTORE", "dst", "src", "0", "-1", "REV"}, Any()},
            {{"ZSCORE", "dst", "z"}, Any()},
            {{"SET", "str", "x"}, Ok()},
            {{"ZRANGESTORE", "str", "src", "0", "0"}, Int(1)},
            {{"TYPE", "str"}, Simple("zset")},
            {{"EXPIRE", "dst", "100"}, Int(1)},
            {{"ZRANGESTORE", "dst", "src", "0", "0"}, Int(1)},
            {{"TTL", "dst"}, Int(-1)},
            {{"ZRANGESTORE", "dst", "src", "5", "1"}, Int(0)},
            {{"EXISTS", "dst"}, Int(0)},
            {{"ZRANGESTORE", "str", "nokey", "0", "-1"}, Int(0)},
            {{"EXISTS", "str"}, Int(0)},
            {{"ZRANGESTORE", "src", "src", "0", "1"}, Int(2)},
            {{"ZRANGE", "src", "0", "-1"}, Any()},
            {{"ZRANGESTORE", "dst", "src", "0", "1", "WITHSCORES"}, Error(kSyntax)},
            {{"ZRANGESTORE", "dst", "src", "[a", "+", "BYLEX"}, Any()},
        }));
  }
}

TEST_F(ZsetsTest, RemoveRanges) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    const int64_t f = static_cast<int64_t>(s.filler.size());
    RunBoth(Join(
        Fill("z", s),
        {
            {{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}, Int(5)},
            {{"ZREMRANGEBYRANK", "z", "1", "2"}, Int(2)},
            {{"ZRANGE", "z", "0", "2"}, BulkArr({"a", "d", "e"})},
            {{"ZREMRANGEBYRANK", "z", "5", "1"}, Int(0)},
            {{"ZREMRANGEBYRANK", "z", "100000", "100001"}, Int(0)},
            {{"ZREMRANGEBYRANK", "z", "-100000", "0"}, Int(1)},
            {{"ZREMRANGEBYSCORE", "z", "(4", "5"}, Int(1)},
            {{"ZREMRANGEBYSCORE", "z", "10", "5"}, Int(0)},
            {{"ZCARD", "z"}, Int(f + 1)},
            {Cat({"ZADD", "lx", "0", "x", "0", "y", "0", "w", "0", "v"}, LexFiller(s)), Int(f + 4)},
            {{"ZREMRANGEBYLEX", "lx", "[x", "[y"}, Int(2)},
            {{"ZREMRANGEBYLEX", "lx", "(v", "(x"}, Int(1)},
            {{"ZREMRANGEBYLEX", "lx", "[y", "[x"}, Int(0)},
            {{"ZREMRANGEBYLEX", "lx", "-", "+"}, Int(f + 1)},
            {{"EXISTS", "lx"}, Int(0)},
            {{"ZREMRANGEBYRANK", "z", "x", "1"}, Error(kNotInt)},
            {{"ZREMRANGEBYSCORE", "z", "(x", "1"}, Error(kRangeNotFloat)},
            {{"ZREMRANGEBYRANK", "nokey", "0", "-1"}, Int(0)},
            {{"ZREMRANGEBYSCORE", "nokey", "-inf", "+inf"}, Int(0)},
            {{"ZREMRANGEBYLEX", "nokey", "-", "+"}, Int(0)},
            {{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}, Int(f + 1)},
            {{"EXISTS", "z"}, Int(0)},
        }));
  }
}

// ---- popping ----

TEST_F(ZsetsTest, Pops) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(
        Fill("z", s),
        {
            {{"ZADD", "z", "1", "a", "2", "b", "3", "c", "-1", "m"}, Int(4)},
            {{"ZPOPMIN", "z"}, Any()},
            {{"ZPOPMIN", "z", "2"}, Any()},
            {{"ZPOPMAX", "z"}, Any()},
            {{"ZPOPMAX", "z", "1"}, Any()},
            {{"ZPOPMIN", "z", "0"}, Arr({})},
            {{"ZPOPMIN", "nokey"}, Arr({})},
            {{"ZPOPMIN", "nokey", "3"}, Arr({})},
            {{"ZPOPMIN", "z", "-1"}, Error(kNotPositive)},
            {{"ZPOPMIN", "z", "x"}, Error(kNotPositive)},
            {{"ZPOPMIN", "z", "1", "2"}, Error(kSyntax)},
            {{"ZMPOP", "2", "nokey", "z", "MIN"}, Any()},
            {{"ZMPOP", "1", "z", "max", "COUNT", "2"}, Any()},
            {{"ZMPOP", "1", "nokey", "MIN"}, NilArray()},
            {{"ZMPOP", "0", "z", "MIN"}, Error("ERR numkeys should be greater than 0")},
            {{"ZMPOP", "x", "z", "MIN"}, Error("ERR numkeys should be greater than 0")},
            {{"ZMPOP", "2", "z", "MIN"}, Error(kSyntax)},
            {{"ZMPOP", "1", "z", "MID"}, Error(kSyntax)},
            {{"ZMPOP", "1", "z", "MIN", "COUNT", "0"}, Error("ERR count should be greater than 0")},
            {{"ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"}, Error(kSyntax)},
            {{"ZMPOP", "1", "z", "MIN", "COUNT"}, Error(kSyntax)},
            {{"ZPOPMIN", "z", "100000"}, Any()},
            {{"EXISTS", "z"}, Int(0)},
        }));
  }
}

// ---- algebra ----

TEST_F(ZsetsTest, UnionInterDiff) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    RunBoth(Join(
        Fill("z1", s),
        {
            {{"ZADD", "z1", "1", "a", "2", "b", "3", "c"}, Int(3)},
            {{"ZADD", "z2", "10", "b", "20", "c", "30", "d"}, Int(3)},
            {{"SADD", "s", "c", "d", "e"}, Int(3)},
            {{"ZUNION", "2", "z1", "z2", "WITHSCORES"}, Any()},
            {{"ZINTER", "2", "z1", "z2", "WITHSCORES"}, Any()},
            {{"ZDIFF", "2", "z1", "z2", "WITHSCORES"}, Any()},
            {{"ZUNION", "3", "z1", "z2", "s", "WEIGHTS", "2", "0.5", "10", "WITHSCORES"}, Any()},
            {{"ZINTER", "2", "z1", "z2", "AGGREGATE", "MIN", "WITHSCORES"}, Any()},
            {{"ZINTER", "2", "z1", "z2", "aggregate", "max", "withscores"}, Any()},
            {{"ZINTER", "2", "z2", "s", "WITHSCORES"}, Any()},
            {{"ZDIFF", "2", "z2", "s"}, BulkArr({"b"})},
            {{"ZDIFF", "2", "s", "z2", "WITHSCORES"}, Any()},
            {{"ZDIFF", "2", "z1", "z1"}, Arr({})},
            {{"ZUNION", "2", "z1", "nokey"}, Any()},
            {{"ZINTER", "2", "z1", "nokey"}, Arr({})},
            {{"ZUNION", "1", "nokey"}, Arr({})},
            {{"ZINTERCARD", "2", "z1", "z2"}, Int(2)},
            {{"ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"}, Int(1)},
            {{"ZINTERCARD", "2", "z1", "z2", "LIMIT", "0"}, Int(2)},
            {{"ZINTERCARD", "3", "z1", "z2", "s"}, Int(1)},
            {{"ZUNIONSTORE", "out", "2", "z1", "z2", "WEIGHTS", "1", "-1"}, Any()},
            {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
            {{"OBJECT", "ENCODING", "out"}, Any()},
            {{"ZINTERSTORE", "out", "2", "z1", "s"}, Int(1)},
            {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
            {{"ZDIFFSTORE", "out", "2", "z1", "z2"}, Any()},
            {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
            {{"ZDIFFSTORE", "out", "2", "z1", "z1"}, Int(0)},
            {{"EXISTS", "out"}, Int(0)},
            {{"ZUNIONSTORE", "z1", "2", "z1", "z2"}, Any()},
            {{"ZCARD", "z1"}, Any()},
            {{"ZINTERSTORE", "out", "2", "z1", "nokey"}, Int(0)},
        }));
  }
}

TEST_F(ZsetsTest, AlgebraInfinitiesAndErrors) {
  RunBoth({
      {{"ZADD", "p", "inf", "a", "-inf", "b", "5", "c"}, Int(3)},
      {{"ZADD", "n", "-inf", "a", "inf", "b", "-5", "c"}, Int(3)},
      // inf + -inf is NaN: Redis makes it 0 (SUM); MIN and MAX keep a number.
      {{"ZUNION", "2", "p", "n", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "p", "n", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "p", "n", "AGGREGATE", "MIN", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "p", "n", "AGGREGATE", "MAX", "WITHSCORES"}, Any()},
      {{"ZUNION", "2", "p", "n", "WEIGHTS", "0", "1", "WITHSCORES"}, Any()},  // 0 * inf
      {{"ZUNIONSTORE", "o", "2", "p", "n", "WEIGHTS", "inf", "-inf"}, Int(3)},
      {{"ZRANGE", "o", "0", "-1", "WITHSCORES"}, Any()},
      {{"ZUNION", "0", "p"}, Error("ERR at least 1 input key is needed for 'zunion' command")},
      {{"ZINTERSTORE", "o", "0", "p"},
       Error("ERR at least 1 input key is needed for 'zinterstore' command")},
      {{"ZDIFF", "-1", "p"}, Error("ERR at least 1 input key is needed for 'zdiff' command")},
      {{"ZINTERCARD", "0", "p"},
       Error("ERR at least 1 input key is needed for 'zintercard' command")},
      {{"ZUNION", "x", "p"}, Error(kNotInt)},
      {{"ZUNION", "3", "p", "n"}, Error(kSyntax)},
      {{"ZUNION", "2", "p", "n", "WEIGHTS", "1"}, Error(kSyntax)},
      {{"ZUNION", "2", "p", "n", "WEIGHTS", "1", "x"}, Error("ERR weight value is not a float")},
      {{"ZUNION", "2", "p", "n", "AGGREGATE", "AVG"}, Error(kSyntax)},
      {{"ZUNION", "2", "p", "n", "AGGREGATE"}, Error(kSyntax)},
      {{"ZDIFF", "2", "p", "n", "WEIGHTS", "1", "1"}, Error(kSyntax)},
      {{"ZUNIONSTORE", "o", "2", "p", "n", "WITHSCORES"}, Error(kSyntax)},
      {{"ZINTERCARD", "1", "p", "LIMIT", "-1"}, Error("ERR LIMIT can't be negative")},
      {{"ZINTERCARD", "1", "p", "LIMIT", "x"}, Error("ERR LIMIT can't be negative")},
      {{"ZINTERCARD", "1", "p", "WITHSCORES"}, Error(kSyntax)},
      {{"ZINTERCARD", "2", "p"}, Error(kSyntax)},
      {{"RPUSH", "l", "a"}, Int(1)},
      {{"ZUNION", "2", "p", "l"}, WrongType()},
      {{"ZUNION", "2", "l", "p", "FOO"}, WrongType()},  // types are checked before options
  });
}

TEST_F(ZsetsTest, SetInputsOfEveryEncoding) {
  // Plain sets of every representation count with score 1 (intset, listpack, hashtable).
  RunTable({
      {{"SADD", "ints", "1", "2", "3"}, Int(3)},
      {{"SADD", "strs", "a", "b", "1"}, Int(3)},
      {Cat({"SADD", "big"}, Seq("m", 0, 600)), Int(600)},
      {{"ZADD", "z", "5", "1", "6", "a", "7", "m5"}, Int(3)},
      {{"ZUNION", "4", "ints", "strs", "big", "z", "LIMIT"}, Error(kSyntax)},
      {{"ZINTER", "2", "ints", "z", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "strs", "z", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "big", "z", "WITHSCORES"}, Any()},
      {{"ZINTER", "2", "ints", "strs", "WITHSCORES"}, Any()},
      {{"ZUNIONSTORE", "u", "3", "ints", "strs", "z", "WEIGHTS", "1", "2", "3"}, Int(6)},
      {{"ZRANGE", "u", "0", "-1", "WITHSCORES"}, Any()},
      {{"ZUNIONSTORE", "u", "1", "big"}, Int(600)},
      {{"OBJECT", "ENCODING", "u"}, Bulk("skiplist")},
      {{"ZRANGE", "u", "0", "4", "WITHSCORES"}, Any()},
      {{"ZDIFFSTORE", "d", "2", "big", "z"}, Int(599)},
      {{"ZINTERCARD", "3", "big", "z", "u"}, Int(1)},
      {{"ZDIFF", "2", "ints", "strs"}, BulkArr({"2", "3"})},
  });
}

// ---- random members and scans ----

TEST_F(ZsetsTest, RandMember) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    Servers::Get().Reset();
    RunTable(Join(Fill("z", s),
                  {
                      {{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, Int(3)},
                      {{"ZRANDMEMBER", "nokey"}, Nil()},
                      {{"ZRANDMEMBER", "nokey", "5"}, Arr({})},
                      {{"ZRANDMEMBER", "z", "0"}, Arr({})},
                      {{"ZRANDMEMBER", "z", "100000"}, Any()},  // all, highest first
                      {{"ZRANDMEMBER", "z", "100000", "WITHSCORES"}, Any()},
                      {{"ZRANDMEMBER", "z", "x"}, Error(kNotInt)},
                      {{"ZRANDMEMBER", "z", "1", "WITHSCORE"}, Error(kSyntax)},
                      {{"ZRANDMEMBER", "z", "1", "WITHSCORES", "x"}, Error(kSyntax)},
                      {{"ZRANDMEMBER", "z", "-9223372036854775808"},
                       Error("ERR value is out of range, value must between -9223372036854775807 "
                             "and 9223372036854775807")},
                      {{"ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"},
                       Error("ERR value is out of range")},
                  }));
    const int64_t size = 3 + static_cast<int64_t>(s.filler.size());
    OnBoth([&](RespClient& c) {
      for (int protocol : {2, 3}) {
        c("HELLO", std::to_string(protocol));
        const Reply one = c("ZRANDMEMBER", "z");
        ASSERT_EQ(one.type, Reply::Type::kBulk);
        EXPECT_EQ(c("ZSCORE", "z", one.str).type,
                  protocol == 2 ? Reply::Type::kBulk : Reply::Type::kDouble);
        const Reply distinct = c("ZRANDMEMBER", "z", "2", "WITHSCORES");
        std::set<std::string> seen;
        if (protocol == 2) {
          ASSERT_EQ(distinct.elems.size(), 4u);
          seen = {distinct.elems[0].str, distinct.elems[2].str};
          EXPECT_EQ(c("ZSCORE", "z", distinct.elems[0].str).str, distinct.elems[1].str);
        } else {
          ASSERT_EQ(distinct.elems.size(), 2u);
          ASSERT_EQ(distinct.elems[0].elems.size(), 2u);
          seen = {distinct.elems[0].elems[0].str, distinct.elems[1].elems[0].str};
        }
        EXPECT_EQ(seen.size(), 2u);
        const Reply most = c("ZRANDMEMBER", "z", std::to_string(size - 1));
        std::set<std::string> unique;
        for (const Reply& e : most.elems) unique.insert(e.str);
        EXPECT_EQ(static_cast<int64_t>(unique.size()), size - 1);
        const Reply repeated = c("ZRANDMEMBER", "z", "-20");
        EXPECT_EQ(repeated.elems.size(), 20u);
        for (const Reply& e : repeated.elems)
          EXPECT_NE(c("ZSCORE", "z", e.str).type, Reply::Type::kNil);
      }
    });
  }
}

TEST_F(ZsetsTest, ScanReturnsEveryMember) {
  for (const Shape& s : Shapes()) {
    SCOPED_TRACE(s.name);
    Servers::Get().Reset();
    RunTable(Join(Fill("z", s), {
                                    {{"ZADD", "z", "1.5", "a", "2", "b", "3", "c"}, Int(3)},
                                    {{"ZSCAN", "nokey", "0"}, Arr({Bulk("0"), Arr({})})},
                                    {{"ZSCAN", "z", "x"}, Error("ERR invalid cursor")},
                                    {{"ZSCAN", "z", "0", "COUNT", "0"}, Error(kSyntax)},
                                    {{"ZSCAN", "z", "0", "COUNT", "x"}, Error(kNotInt)},
                                    {{"ZSCAN", "z", "0", "MATCH"}, Error(kSyntax)},
                                    {{"ZSCAN", "z", "0", "TYPE", "zset"}, Error(kSyntax)},
                                    {{"ZSCAN", "nokey", "0", "FOO"}, Arr({Bulk("0"), Arr({})})},
                                }));
    OnBoth([&](RespClient& c) {
      for (const char* pattern : {"*", "f1*", "[abc]"}) {
        std::set<std::pair<std::string, std::string>> got;
        std::string cursor = "0";
        int calls = 0;
        do {
          const Reply r = c("ZSCAN", "z", cursor, "MATCH", pattern, "COUNT", "7");
          ASSERT_EQ(r.elems.size(), 2u) << r.ToString();
          cursor = r.elems[0].str;
          ASSERT_EQ(r.elems[1].elems.size() % 2, 0u);
          for (size_t i = 0; i < r.elems[1].elems.size(); i += 2) {
            got.insert({r.elems[1].elems[i].str, r.elems[1].elems[i + 1].str});
          }
        } while (cursor != "0" && ++calls < 1000);
        std::set<std::pair<std::string, std::string>> want;
        const Reply all = c("ZRANGE", "z", "0", "-1", "WITHSCORES");
        for (size_t i = 0; i < all.elems.size(); i += 2) {
          const std::string& m = all.elems[i].str;
          const bool match = std::string(pattern) == "*" ||
                             (std::string(pattern) == "f1*" && m.rfind("f1", 0) == 0) ||
                             (std::string(pattern) == "[abc]" && m.size() == 1 && m[0] <= 'c');
          if (match) want.insert({m, all.elems[i + 1].str});
        }
        EXPECT_EQ(got, want) << "pattern " << pattern;
      }
    });
  }
}

// ---- reply types in RESP3 ----

TEST_F(ZsetsTest, Resp3ReplyShapes) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (RespClient* c : {&v, &r}) {
    (*c)("HELLO", "3");
    (*c)("ZADD", "z", "1", "a", "2.5", "b");
  }
  for (const Strings& cmd : std::vector<Strings>{
           {"ZSCORE", "z", "b"},
           {"ZINCRBY", "z", "0", "a"},
           {"ZMSCORE", "z", "a", "x"},
           {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
           {"ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"},
           {"ZUNION", "1", "z", "WITHSCORES"},
           {"ZRANDMEMBER", "z", "5", "WITHSCORES"},
           {"ZPOPMIN", "z", "1"},
           {"ZPOPMAX", "z"},
           {"ZMPOP", "1", "z", "MIN"},
           {"ZSCAN", "z", "0"},
           {"ZPOPMIN", "z"},
       }) {
    const Reply got = v.Cmd(cmd), want = r.Cmd(cmd);
    EXPECT_EQ(got, want) << Show(cmd) << "\n  vessel: " << got.ToString()
                         << "\n  redis:  " << want.ToString();
  }
  EXPECT_EQ(v("ZSCORE", "z", "x").type, Reply::Type::kNil);
  v("ZADD", "z", "3", "c");
  EXPECT_EQ(v("ZSCORE", "z", "c").type, Reply::Type::kDouble);
  EXPECT_EQ(v("ZRANGE", "z", "0", "-1", "WITHSCORES").elems[0].type, Reply::Type::kArray);
}

}  // namespace
}  // namespace vessel::test
