// Keyspace notifications of module commands (ABI 1.4's vsl_api.notify): for every family of Redis
// (strings, bitmaps, HyperLogLog, lists with blocking pops served later, sets, hashes, sorted
// sets, geo) the same command sequence runs on redis-server and on vessel with a listener of every
// event, and the event streams (keyspace and keyevent channels, "new" included) must be equal.
// Hash field expiry (Redis 7.4, which the reference redis-server lacks) and the Vessel-own types
// (vectors, multi_index) are checked against the events their sources and docs/commands/ document.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/messaging_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class NotifyModulesTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  void TearDown() override {
    for (int server = 0; server < 2; ++server) {
      RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
      c("CONFIG", "SET", "notify-keyspace-events", "");
      c("DEBUG", "SET-ACTIVE-EXPIRE", "1");
    }
  }
};

// Every class, "new" included; connection 0 listens to every event of every db, 1 works.
const std::vector<std::vector<std::string>> kAll = {
    {"CONFIG", "SET", "notify-keyspace-events", "KEAn"}};
const Step kListen = {0, {"PSUBSCRIBE", "__key*__:*"}};

TEST_F(NotifyModulesTest, Strings) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"SET", "a", "1"}},
          {1, {"SET", "a", "2", "EX", "1000"}},
          {1, {"SET", "a", "3", "PX", "1000000", "GET"}},
          {1, {"SET", "b", "1", "NX"}},
          {1, {"SET", "b", "2", "NX"}},  // not set: no event
          {1, {"SET", "c", "1", "XX"}},
          {1, {"SET", "b", "5", "KEEPTTL"}},
          {1, {"SET", "b", "6", "NX", "GET"}},
          {1, {"SETNX", "d", "1"}},
          {1, {"SETNX", "d", "2"}},
          {1, {"SETEX", "e", "1000", "v"}},
          {1, {"PSETEX", "f", "1000000", "v"}},
          {1, {"SETEX", "e", "0", "v"}},  // an error: nothing
          {1, {"GETSET", "a", "x"}},
          {1, {"GETSET", "g", "x"}},
          {1, {"GETDEL", "a"}},
          {1, {"GETDEL", "a"}},
          {1, {"GETEX", "b", "EX", "1000"}},
          {1, {"GETEX", "b", "PERSIST"}},
          {1, {"GETEX", "b", "PERSIST"}},  // no TTL to remove
          {1, {"GETEX", "b"}},
          {1, {"GETEX", "b", "PXAT", "1"}},  // in the past: deleted
          {1, {"GETEX", "nope", "EX", "10"}},
          {1, {"MSET", "g", "1", "h", "2", "g", "3"}},
          {1, {"MSETNX", "i", "1", "g", "2"}},
          {1, {"MSETNX", "i", "1", "j", "2"}},
          {1, {"APPEND", "k", "abc"}},
          {1, {"APPEND", "k", "def"}},
          {1, {"APPEND", "k", ""}},
          {1, {"APPEND", "k2", ""}},
          {1, {"SETRANGE", "k", "1", "ZZ"}},
          {1, {"SETRANGE", "k", "1", ""}},
          {1, {"SETRANGE", "k3", "0", ""}},
          {1, {"SETRANGE", "k4", "5", "x"}},
          {1, {"INCR", "n"}},
          {1, {"INCRBY", "n", "5"}},
          {1, {"DECR", "n"}},
          {1, {"DECRBY", "n", "2"}},
          {1, {"INCR", "k"}},  // not an integer: nothing
          {1, {"INCRBY", "n", "9223372036854775807"}},
          {1, {"INCRBYFLOAT", "fl", "1.5"}},
          {1, {"INCRBYFLOAT", "fl", "2"}},
          {1, {"INCRBYFLOAT", "k", "1"}},
          {1, {"GET", "fl"}},
          {1, {"MGET", "fl", "k"}},
          {1, {"STRLEN", "k"}},
          {1, {"GETRANGE", "k", "0", "1"}},
          {1, {"LCS", "k", "k4"}},
          {1, {"SET", "k", "over"}},  // over an existing key of the family: no "new"
          {1, {"RPUSH", "lst", "a"}},
          {1, {"SET", "lst", "over"}},  // over another type
      });
}

TEST_F(NotifyModulesTest, Bitmaps) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"SETBIT", "bm", "7", "1"}},
          {1, {"SETBIT", "bm", "7", "1"}},  // unchanged: no event
          {1, {"SETBIT", "bm", "7", "0"}},
          {1, {"SETBIT", "bm", "100", "0"}},  // grows the string
          {1, {"SETBIT", "bm", "2", "2"}},
          {1, {"GETBIT", "bm", "7"}},
          {1, {"BITCOUNT", "bm"}},
          {1, {"BITPOS", "bm", "1"}},
          {1, {"BITFIELD", "bf", "SET", "u8", "0", "255"}},
          {1, {"BITFIELD", "bf", "SET", "u8", "0", "255"}},  // unchanged
          {1, {"BITFIELD", "bf", "INCRBY", "u8", "0", "1"}},
          {1, {"BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"}},
          {1, {"BITFIELD", "bf", "GET", "u8", "0"}},
          {1, {"BITFIELD", "bf", "SET", "u8", "100", "0"}},  // grows
          {1, {"BITFIELD", "bf2", "OVERFLOW", "FAIL", "SET", "i8", "0", "200"}},
          {1, {"BITFIELD_RO", "bf", "GET", "u8", "0"}},
          {1, {"BITOP", "AND", "dest", "bm", "bf"}},
          {1, {"BITOP", "OR", "dest", "nope1", "nope2"}},  // empty: dest deleted
          {1, {"BITOP", "NOT", "dest", "nope1"}},          // empty, nothing to delete
          {1, {"BITOP", "XOR", "bm", "bm", "bf"}},
      });
}

TEST_F(NotifyModulesTest, HyperLogLog) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"PFADD", "h", "a", "b", "c"}},
          {1, {"PFADD", "h", "a"}},  // no register raised: no event
          {1, {"PFADD", "h2"}},      // created empty
          {1, {"PFADD", "h2"}},
          {1, {"PFCOUNT", "h"}},
          {1, {"PFCOUNT", "h", "h2"}},
          {1, {"PFMERGE", "hm", "h", "h2"}},
          {1, {"PFMERGE", "hm"}},
          {1, {"PFMERGE", "h3", "nope"}},
          {1, {"SET", "s", "x"}},
          {1, {"PFADD", "s", "a"}},  // not an HLL: nothing
      });
}

TEST_F(NotifyModulesTest, Streams) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"XADD", "s", "1-0", "a", "1"}},  // "new", then "xadd"
          {1, {"XADD", "s", "2-0", "a", "1"}},
          {1, {"XADD", "s", "1-0", "a", "1"}},  // refused: nothing
          {1, {"XADD", "none", "NOMKSTREAM", "*", "a", "1"}},
          {1, {"XADD", "s", "MAXLEN", "1", "3-0", "a", "1"}},  // "xadd", then "xtrim"
          {1, {"XADD", "s", "MAXLEN", "5", "4-0", "a", "1"}},  // nothing trimmed: no "xtrim"
          {1, {"XDEL", "s", "9-0"}},
          {1, {"XDEL", "s", "3-0"}},
          {1, {"XTRIM", "s", "MAXLEN", "5"}},
          {1, {"XTRIM", "s", "MAXLEN", "0"}},
          {1, {"XSETID", "s", "10-0"}},
          {1, {"XGROUP", "CREATE", "s", "g", "$"}},
          {1, {"XGROUP", "CREATE", "t", "g", "$", "MKSTREAM"}},  // "new", then "xgroup-create"
          {1, {"XGROUP", "SETID", "s", "g", "0"}},
          {1, {"XGROUP", "CREATECONSUMER", "s", "g", "c"}},
          {1, {"XGROUP", "CREATECONSUMER", "s", "g", "c"}},
          {1, {"XADD", "s", "11-0", "a", "1"}},
          {1, {"XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", ">"}},  // creates consumer d
          {1, {"XCLAIM", "s", "g", "e", "0", "11-0"}},                  // creates consumer e
          {1, {"XAUTOCLAIM", "s", "g", "f", "0", "0"}},                 // creates consumer f
          {1, {"XACK", "s", "g", "11-0"}},
          {1, {"XGROUP", "DELCONSUMER", "s", "g", "c"}},
          {1, {"XGROUP", "DELCONSUMER", "s", "g", "zz"}},
          {1, {"XGROUP", "DESTROY", "s", "g"}},
          {1, {"XGROUP", "DESTROY", "s", "g"}},
          {1, {"DEL", "s"}},
      });
}

TEST_F(NotifyModulesTest, Lists) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"LPUSH", "l", "a", "b", "c"}},
          {1, {"RPUSH", "l", "d"}},
          {1, {"LPUSHX", "nol", "x"}},
          {1, {"RPUSHX", "l", "e"}},
          {1, {"LPUSHX", "l", "f"}},
          {1, {"LINSERT", "l", "BEFORE", "a", "z"}},
          {1, {"LINSERT", "l", "AFTER", "nope", "z"}},
          {1, {"LINSERT", "nol", "AFTER", "a", "z"}},
          {1, {"LSET", "l", "0", "q"}},
          {1, {"LSET", "l", "100", "q"}},
          {1, {"LREM", "l", "0", "nope"}},  // nothing removed: no event
          {1, {"LREM", "l", "1", "q"}},
          {1, {"LTRIM", "l", "0", "100"}},  // "ltrim" even when nothing goes
          {1, {"LTRIM", "nol", "0", "1"}},
          {1, {"LPOP", "l"}},
          {1, {"RPOP", "l", "2"}},
          {1, {"LPOP", "l", "0"}},
          {1, {"LPOP", "nol"}},
          {1, {"LRANGE", "l", "0", "-1"}},
          {1, {"LINDEX", "l", "0"}},
          {1, {"LPOS", "l", "a"}},
          {1, {"LLEN", "l"}},
          {1, {"LMOVE", "l", "l2", "LEFT", "RIGHT"}},  // the push on l2, then the pop on l
          {1, {"LMOVE", "l", "l2", "RIGHT", "LEFT"}},
          {1, {"RPOPLPUSH", "l2", "l2"}},
          {1, {"LMOVE", "nol", "l2", "LEFT", "LEFT"}},
          {1, {"LRANGE", "l", "0", "-1"}},
          {1, {"LMOVE", "l", "l3", "LEFT", "LEFT"}},  // empties l: "del" after its pop
          {1, {"LMPOP", "2", "nol", "l2", "LEFT", "COUNT", "2"}},
          {1, {"LMPOP", "2", "nol", "l2", "RIGHT", "COUNT", "10"}},
          {1, {"LMPOP", "1", "nol", "LEFT"}},
          {1, {"RPUSH", "m", "a", "b"}},
          {1, {"LTRIM", "m", "5", "10"}},  // empties it
          {1, {"RPUSH", "m", "a", "a", "b"}},
          {1, {"LREM", "m", "0", "a"}},
          {1, {"LREM", "m", "0", "b"}},
      });
}

// Pops served after a push fire their events after the push's, as Redis's blocked clients do.
TEST_F(NotifyModulesTest, BlockingListPopsServedLater) {
  Scenario(3, 2, kAll)
      .Run({
          kListen,
          {2, {"BLPOP", "bl", "0"}, 50, Step::kExact, true},
          {1, {"RPUSH", "bl", "a", "b"}},
          {2, {"BRPOP", "bl2", "bl", "0"}},  // served at once: b
          {2, {"BRPOP", "bl", "0"}, 50, Step::kExact, true},
          {1, {"LPUSH", "bl", "x"}},  // served: "lpush", then "rpop" and "del"
          {2, {"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"}, 50, Step::kExact, true},
          {1, {"RPUSH", "src", "1", "2"}},
          {2, {"BRPOPLPUSH", "src", "dst", "0"}},
          {2, {"BLMPOP", "0", "2", "e1", "e2", "RIGHT", "COUNT", "5"}, 50, Step::kExact, true},
          {1, {"RPUSH", "e2", "p", "q", "r"}},
          {1, {"EXISTS", "e2", "src"}},
      });
}

TEST_F(NotifyModulesTest, Sets) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"SADD", "s", "a", "b", "c", "d"}},
          {1, {"SADD", "s", "a"}},  // nothing added: no event
          {1, {"SADD", "s", "a", "e"}},
          {1, {"SREM", "s", "nope"}},
          {1, {"SREM", "s", "e"}},
          {1, {"SREM", "nos", "e"}},
          {1, {"SMOVE", "s", "s2", "a"}},  // srem s, then new s2 and sadd s2
          {1, {"SMOVE", "s", "s2", "nope"}},
          {1, {"SMOVE", "s2", "s2", "a"}},
          {1, {"SADD", "s3", "b"}},
          {1, {"SMOVE", "s", "s3", "b"}},  // already in s3: srem only
          {1, {"SMOVE", "s", "s2", "c"}},
          {1, {"SMOVE", "s", "s2", "d"}},  // empties s: srem, del, then sadd
          {1, {"SISMEMBER", "s2", "a"}},
          {1, {"SMEMBERS", "s3"}},
          {1, {"SCARD", "s2"}},
          {1, {"SADD", "one", "x"}},
          {1, {"SPOP", "one"}},  // empties it
          {1, {"SPOP", "one"}},
          {1, {"SADD", "p", "1", "2", "3"}},
          {1, {"SPOP", "p", "1"}, 0, Step::kSkipReply},  // a random member
          {1, {"SPOP", "p", "0"}},
          {1, {"SPOP", "p", "10"}, 0, Step::kSkipReply},  // the rest: spop, del
          {1, {"SINTERSTORE", "d", "s2", "s3"}},          // empty: nothing to delete
          {1, {"SUNIONSTORE", "d", "s2", "s3"}},
          {1, {"SUNIONSTORE", "d", "s2"}},  // over the existing d: no "new"
          {1, {"SINTERSTORE", "d", "s2", "s2"}},
          {1, {"SDIFFSTORE", "d", "s2", "s2"}},  // empty: d deleted
          {1, {"SDIFFSTORE", "d2", "s2", "s3"}},
          {1, {"SINTERSTORE", "d2", "s2", "nope"}},
          {1, {"SINTERCARD", "2", "s2", "s3"}},
          {1, {"SUNION", "s2", "s3"}, 0, Step::kUnordered},
      });
}

TEST_F(NotifyModulesTest, Hashes) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"HSET", "h", "a", "1", "b", "2"}},
          {1, {"HSET", "h", "a", "1"}},  // no new field: "hset" all the same
          {1, {"HSETNX", "h", "a", "x"}},
          {1, {"HSETNX", "h", "c", "3"}},
          {1, {"HSETNX", "h2", "c", "3"}},
          {1, {"HMSET", "h", "d", "4"}},
          {1, {"HDEL", "h", "nope"}},
          {1, {"HDEL", "h", "a", "b", "a"}},
          {1, {"HDEL", "nope", "a"}},
          {1, {"HINCRBY", "h", "n", "5"}},
          {1, {"HINCRBY", "h", "n", "-2"}},
          {1, {"HINCRBY", "h", "c", "9223372036854775807"}},
          {1, {"HINCRBY", "h3", "n", "1"}},
          {1, {"HINCRBYFLOAT", "h", "f", "1.5"}},
          {1, {"HINCRBYFLOAT", "h", "f", "abc"}},
          {1, {"HSET", "h", "s", "str"}},
          {1, {"HINCRBYFLOAT", "h", "s", "1"}},
          {1, {"HGET", "h", "f"}},
          {1, {"HMGET", "h", "f", "n"}},
          {1, {"HLEN", "h"}},
          {1, {"HEXISTS", "h", "f"}},
          {1, {"HSTRLEN", "h", "f"}},
          {1, {"HKEYS", "h"}, 0, Step::kUnordered},
          {1, {"HDEL", "h", "c", "d", "n", "f", "s"}},  // empties it: hdel, del
          {1, {"HDEL", "h2", "c"}},
      });
}

TEST_F(NotifyModulesTest, SortedSets) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"ZADD", "z", "1", "a", "2", "b"}},
          {1, {"ZADD", "z", "1", "a"}},  // unchanged: no event
          {1, {"ZADD", "z", "XX", "5", "nope"}},
          {1, {"ZADD", "nz", "XX", "5", "nope"}},
          {1, {"ZADD", "z", "CH", "3", "a"}},
          {1, {"ZADD", "z", "INCR", "1", "a"}},
          {1, {"ZADD", "z", "INCR", "0", "a"}},  // score unchanged
          {1, {"ZINCRBY", "z", "1", "b"}},
          {1, {"ZINCRBY", "z2", "1", "b"}},
          {1, {"ZADD", "z", "NX", "9", "a"}},
          {1, {"ZADD", "z", "GT", "0", "a"}},
          {1, {"ZADD", "z", "LT", "0", "a"}},
          {1, {"ZADD", "z", "1", "x"}},
          {1, {"ZREM", "z", "nope"}},
          {1, {"ZREM", "z", "x"}},
          {1, {"ZADD", "z", "1", "c", "2", "d", "3", "e", "4", "f"}},
          {1, {"ZREMRANGEBYRANK", "z", "0", "0"}},
          {1, {"ZREMRANGEBYRANK", "z", "100", "200"}},
          {1, {"ZREMRANGEBYSCORE", "z", "2", "2"}},
          {1, {"ZREMRANGEBYSCORE", "z", "100", "200"}},
          {1, {"ZADD", "lex", "0", "a", "0", "b", "0", "c"}},
          {1, {"ZREMRANGEBYLEX", "lex", "[a", "[b"}},
          {1, {"ZREMRANGEBYLEX", "lex", "[x", "[y"}},
          {1, {"ZREMRANGEBYLEX", "lex", "-", "+"}},  // empties it
          {1, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}},
          {1, {"ZSCORE", "z", "a"}},
          {1, {"ZRANK", "z", "a"}},
          {1, {"ZCARD", "z"}},
          {1, {"ZRANGESTORE", "d", "z", "0", "1"}},
          {1, {"ZRANGESTORE", "d", "z", "0", "-1"}},   // over d: no "new"
          {1, {"ZRANGESTORE", "d", "z", "50", "60"}},  // empty: d deleted
          {1, {"ZRANGESTORE", "d", "nope", "0", "-1"}},
          {1, {"ZUNIONSTORE", "u", "2", "z", "z"}},
          {1, {"ZINTERSTORE", "u", "2", "z", "nope"}},  // empty: u deleted
          {1, {"ZDIFFSTORE", "u", "1", "z"}},
          {1, {"ZDIFFSTORE", "u", "2", "z", "z"}},
          {1, {"ZUNIONSTORE", "u", "1", "nope"}},
          {1, {"ZUNION", "2", "z", "z"}},
          {1, {"ZINTERCARD", "1", "z"}},
          {1, {"ZPOPMIN", "z"}},
          {1, {"ZPOPMAX", "z", "0"}},
          {1, {"ZPOPMAX", "nope"}},
          {1, {"ZMPOP", "2", "nope", "z", "MIN", "COUNT", "1"}},
          {1, {"ZPOPMAX", "z", "10"}},  // empties it: zpopmax, del
          {1, {"ZADD", "z", "1", "a"}},
          {1, {"ZMPOP", "1", "z", "MAX"}},
      });
}

TEST_F(NotifyModulesTest, BlockingSortedSetPopsServedLater) {
  Scenario(3, 2, kAll)
      .Run({
          kListen,
          {2, {"BZPOPMIN", "bz", "0"}, 50, Step::kExact, true},
          {1, {"ZADD", "bz", "1", "a", "2", "b"}},
          {2, {"BZPOPMAX", "bz", "0"}},
          {2, {"BZMPOP", "0", "2", "e1", "e2", "MIN", "COUNT", "5"}, 50, Step::kExact, true},
          {1, {"ZADD", "e2", "1", "p", "2", "q"}},
          {1, {"EXISTS", "e2", "bz"}},
      });
}

TEST_F(NotifyModulesTest, Geo) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1,
           {"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
            "Catania"}},
          {1, {"GEOADD", "g", "13.361389", "38.115556", "Palermo"}},  // unchanged: no event
          {1, {"GEOADD", "g", "XX", "CH", "13.5", "38.0", "Palermo"}},
          {1, {"GEOADD", "g", "NX", "13.5", "38.0", "Palermo"}},
          {1, {"GEOPOS", "g", "Palermo"}},
          {1, {"GEODIST", "g", "Palermo", "Catania"}},
          {1, {"GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"}},
          {1,
           {"GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
            "STOREDIST"}},
          {1, {"GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"}},
          {1, {"GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"}},
          {1, {"GEORADIUSBYMEMBER", "g", "Palermo", "1000", "km", "STOREDIST", "gr2"}},
          {1, {"GEOSEARCHSTORE", "gr", "nope", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"}},
          {1, {"GEORADIUS", "nope", "15", "37", "200", "km", "STORE", "gr2"}},
          {1, {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"}},
          {1, {"ZREM", "g", "Palermo", "Catania"}},
      });
}

// SORT ... STORE (a built-in writing a list): "sortstore", or "del" for an empty result, never
// the events of the DEL and RPUSH it is made of.
TEST_F(NotifyModulesTest, SortStore) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"RPUSH", "src", "3", "1", "2"}},
          {1, {"SORT", "src", "STORE", "dst"}},
          {1, {"SORT", "src", "DESC", "STORE", "dst"}},  // over dst: no "new"
          {1, {"SORT", "nope", "STORE", "dst"}},         // empty: dst deleted
          {1, {"SORT", "nope", "STORE", "dst"}},
          {1, {"SADD", "s", "b", "a"}},
          {1, {"SORT", "s", "ALPHA", "STORE", "s2"}},
          {1, {"SET", "str", "x"}},
          {1, {"SORT", "src", "STORE", "str"}},  // over another type
          {1, {"SORT", "src", "LIMIT", "5", "5", "STORE", "str"}},
          {1, {"LRANGE", "s2", "0", "-1"}},
      });
}

// Events inside MULTI come in command order, as Redis's.
TEST_F(NotifyModulesTest, Transaction) {
  Scenario(2, 2, kAll)
      .Run({
          kListen,
          {1, {"MULTI"}},
          {1, {"SET", "a", "1"}},
          {1, {"RPUSH", "l", "x"}},
          {1, {"LPOP", "l"}},
          {1, {"SADD", "s", "m"}},
          {1, {"HSET", "h", "f", "v"}},
          {1, {"ZADD", "z", "1", "m"}},
          {1, {"EXEC"}},
      });
}

// ---- vessel only ----

// Runs cmds on vessel (db 0) with notify-keyspace-events `flags` and returns the events on
// __keyevent@0__ as "event key", in order.
std::vector<std::string> VesselEvents(const std::string& flags,
                                      const std::vector<std::vector<std::string>>& cmds) {
  RespClient admin = Servers::Get().Vessel();
  admin("CONFIG", "SET", "notify-keyspace-events", flags);
  RespClient listener = Servers::Get().Vessel();
  listener.Send({"PSUBSCRIBE", "__keyevent@0__:*"});
  listener.Read();
  RespClient c = Servers::Get().Vessel();
  for (const auto& cmd : cmds) c.Cmd(cmd);
  std::vector<std::string> out;
  const std::string prefix = "__keyevent@0__:";
  for (const Reply& r : ReadQuiet(listener, 500)) {
    if (r.elems.size() != 4) {
      out.push_back("unexpected " + r.ToString());
      continue;
    }
    out.push_back(r.elems[2].str.substr(prefix.size()) + " " + r.elems[3].str);
  }
  return out;
}

using Events = std::vector<std::string>;

// Redis 7.4's events of field expiry (t_hash.c: hashTypeSetExDone, hpersistCommand, lazy
// expiry); HSETEX/HGETEX/HGETDEL as Redis 8.0 documents them.
TEST_F(NotifyModulesTest, HashFieldExpiry) {
  RespClient admin = Servers::Get().Vessel();
  admin("DEBUG", "SET-ACTIVE-EXPIRE", "0");
  const int64_t later = 4000000000;
  EXPECT_EQ(VesselEvents("KEA",
                         {
                             {"HSET", "h", "a", "1", "b", "2", "c", "3"},
                             {"HEXPIRE", "h", "1000", "FIELDS", "2", "a", "nope"},
                             {"HEXPIRE", "h", "1000", "NX", "FIELDS", "1", "a"},  // unmet
                             {"HPEXPIREAT", "h", std::to_string(later * 1000), "FIELDS", "1", "b"},
                             {"HEXPIREAT", "h", "1", "FIELDS", "1", "b"},  // past: deleted
                             {"HPERSIST", "h", "FIELDS", "1", "a"},
                             {"HPERSIST", "h", "FIELDS", "1", "a"},  // none to remove
                             {"HTTL", "h", "FIELDS", "1", "a"},
                             {"HEXPIRE", "h", "0", "FIELDS", "2", "a", "c"},  // all gone
                             {"HSETEX", "h2", "EX", "1000", "FIELDS", "1", "f", "v"},
                             {"HSETEX", "h2", "FIELDS", "1", "g", "v"},
                             {"HGETEX", "h2", "PERSIST", "FIELDS", "1", "f"},
                             {"HGETEX", "h2", "EX", "100", "FIELDS", "1", "f"},
                             {"HGETEX", "h2", "FIELDS", "1", "f"},
                             {"HGETDEL", "h2", "FIELDS", "2", "f", "nope"},
                             {"HGETDEL", "h2", "FIELDS", "1", "g"},
                             {"HGETDEL", "h2", "FIELDS", "1", "g"},
                         }),
            (Events{"hset h", "hexpire h", "hexpire h", "hdel h", "hpersist h", "hdel h", "del h",
                    "hset h2", "hexpire h2", "hset h2", "hpersist h2", "hexpire h2", "hdel h2",
                    "hdel h2", "del h2"}));
  // A field expired on its own goes when the next write opens the hash: "hexpired" first.
  EXPECT_EQ(
      VesselEvents("KEA",
                   {
                       {"HSET", "e", "a", "1", "b", "2"},
                       {"HPEXPIRE", "e", "1", "FIELDS", "1", "a"},
                       {"DEBUG", "SLEEP", "0.05"},
                       {"HSET", "e", "c", "3"},
                       {"HPEXPIRE", "e", "1", "FIELDS", "2", "b", "c"},
                       {"DEBUG", "SLEEP", "0.05"},
                       {"HDEL", "e", "b"},  // both expired: the hash goes, nothing deleted
                   }),
      (Events{"hset e", "hexpire e", "hexpired e", "hset e", "hexpire e", "hexpired e", "del e"}));
  // Fields removed by the active cycle: "hexpired", then "del" when none is left (Redis 7.4).
  admin("DEBUG", "SET-ACTIVE-EXPIRE", "1");
  admin("CONFIG", "SET", "notify-keyspace-events", "KEA");
  RespClient listener = Servers::Get().Vessel();
  listener.Send({"PSUBSCRIBE", "__keyevent@0__:*"});
  listener.Read();
  admin("HSET", "x", "a", "1", "b", "2");
  admin("HPEXPIRE", "x", "100", "FIELDS", "1", "a");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the cycle runs 10 times a second
  EXPECT_EQ(admin("HLEN", "x").integer, 1);
  admin("HPEXPIRE", "x", "100", "FIELDS", "1", "b");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(admin("EXISTS", "x").integer, 0);
  Events got;
  for (const Reply& r : ReadQuiet(listener, 500))
    got.push_back(r.elems.size() == 4 ? r.elems[2].str.substr(15) + " " + r.elems[3].str
                                      : "unexpected " + r.ToString());
  EXPECT_EQ(got, (Events{"hset x", "hexpire x", "hexpired x", "hexpire x", "hexpired x", "del x"}));
  admin("DEBUG", "SET-ACTIVE-EXPIRE", "0");
}

// The vectors module's events, class d (docs/commands/vectors.md).
TEST_F(NotifyModulesTest, Vectors) {
  EXPECT_EQ(VesselEvents("KEdgn",
                         {
                             {"VEC.PUSH", "v", "a", "b", "c"},
                             {"VEC.POP", "v"},
                             {"VEC.POP", "v", "0"},
                             {"VEC.SET", "v", "0", "x"},
                             {"VEC.SET", "v", "9", "x"},  // an error: nothing
                             {"VEC.MSET", "v", "0", "y", "1", "z"},
                             {"VEC.SWAP", "v", "0", "1"},
                             {"VEC.INSERT", "v", "1", "m"},
                             {"VEC.ERASE", "v", "0"},
                             {"VEC.ERASE", "v", "1", "0"},
                             {"VEC.TRIM", "v", "0", "-1"},
                             {"VEC.RESIZE", "v", "4", "f"},
                             {"VEC.LEN", "v"},
                             {"VEC.RANGE", "v", "0", "-1"},
                             {"VEC.CLEAR", "v"},
                             {"VEC.CLEAR", "v"},
                             {"VEC.INSERT", "w", "0", "a"},
                             {"VEC.TRIM", "w", "5", "6"},  // empties it
                             {"VEC.RESIZE", "w", "2"},
                             {"VEC.RESIZE", "w", "0"},
                             {"VEC.RESIZE", "w", "0"},
                             {"VEC.PUSH", "w", "a"},
                             {"VEC.POP", "w", "5"},
                         }),
            (Events{"new v",       "vec.push v",   "vec.pop v",    "vec.set v",    "vec.mset v",
                    "vec.swap v",  "vec.insert v", "vec.erase v",  "vec.trim v",   "vec.resize v",
                    "vec.clear v", "del v",        "new w",        "vec.insert w", "vec.trim w",
                    "del w",       "new w",        "vec.resize w", "vec.resize w", "del w",
                    "new w",       "vec.push w",   "vec.pop w",    "del w"}));
  // Class d off: nothing but the generic ones.
  EXPECT_EQ(VesselEvents("Eg", {{"VEC.PUSH", "v", "a"}, {"VEC.CLEAR", "v"}}), (Events{"del v"}));
}

// The multi_index module's events, class d (docs/commands/multi_index.md).
TEST_F(NotifyModulesTest, MultiIndex) {
  EXPECT_EQ(VesselEvents("KEd",
                         {
                             {"MI.CREATE", "m", "INDEX", "byname", "name", "HASH", "UNIQUE"},
                             {"MI.CREATE", "m", "INDEX", "byname", "name", "HASH"},  // BUSYKEY
                             {"MI.INSERT", "m", "name", "ann", "age", "3"},
                             {"MI.INSERT", "m", "name", "ann"},  // UNIQUE: refused
                             {"MI.INSERT", "m", "name", "bob"},
                             {"MI.UPDATE", "m", "byname", "ann", "age", "4"},
                             {"MI.UPDATE", "m", "byname", "nobody", "age", "4"},
                             {"MI.UPDATEBYID", "m", "2", "age", "5"},
                             {"MI.UPDATEBYID", "m", "9", "age", "5"},
                             {"MI.GET", "m", "byname", "ann"},
                             {"MI.DEL", "m", "byname", "ann"},
                             {"MI.DEL", "m", "byname", "ann"},
                             {"MI.DELBYID", "m", "2", "7"},
                             {"MI.DELBYID", "m", "2"},
                             {"MI.CARD", "m"},
                         }),
            (Events{"mi.create m", "mi.insert m", "mi.insert m", "mi.update m", "mi.update m",
                    "mi.del m", "mi.del m"}));
}

}  // namespace
}  // namespace vessel::test
