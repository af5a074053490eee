// Redis's change counter (server.dirty, INFO rdb_changes_since_last_save, what the save rules
// count) against redis-server: every write command of every family Redis has, run on both
// servers from the same state, must add the same number of changes.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

// One measured step: commands to set the state up (not measured), then the commands whose
// changes are counted together (several for MULTI ... EXEC).
struct Case {
  std::vector<Strings> setup;
  std::vector<Strings> measured;
  bool random_replies = false;  // the replies are random draws: only the counts are compared
};

Strings Words(const std::string& line) {
  std::istringstream in(line);
  Strings out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "SET a 1; EXPIRE a 100" -> two commands (arguments without spaces).
std::vector<Strings> Commands(const std::string& lines) {
  std::vector<Strings> out;
  std::string::size_type start = 0;
  while (start <= lines.size()) {
    const auto end = std::min(lines.find(';', start), lines.size());
    Strings w = Words(lines.substr(start, end - start));
    if (!w.empty()) out.push_back(std::move(w));
    start = end + 1;
  }
  return out;
}

Case C(const std::string& setup, const std::string& measured) {
  return {Commands(setup), Commands(measured)};
}
// A case whose replies are random (SPOP, SRANDMEMBER).
Case Random(const std::string& setup, const std::string& measured) {
  return {Commands(setup), Commands(measured), true};
}

int64_t Changes(RespClient& c) {
  const Reply r = c("INFO", "persistence");
  const std::string key = "rdb_changes_since_last_save:";
  const auto at = r.str.find(key);
  if (at == std::string::npos) return -1;
  return std::stoll(r.str.substr(at + key.size()));
}

struct Outcome {
  int64_t changes = -1;
  std::vector<Reply> replies;
};

Outcome Run(RespClient& c, const Case& k) {
  c("FLUSHALL");
  c("SELECT", "1");
  c("FLUSHDB");
  c("SELECT", "0");
  for (const Strings& cmd : k.setup) c.Cmd(cmd);
  Outcome o;
  const int64_t before = Changes(c);
  for (const Strings& cmd : k.measured) o.replies.push_back(c.Cmd(cmd));
  o.changes = Changes(c) - before;
  return o;
}

std::string Show(const std::vector<Strings>& cmds) {
  std::string out;
  for (const Strings& c : cmds) out += (out.empty() ? "" : "; ") + vessel::test::Show(c);
  return out;
}

void Compare(const std::vector<Case>& cases) {
  RespClient v = Servers::Get().Vessel();
  RespClient r = Servers::Get().Redis();
  for (const Case& k : cases) {
    const Outcome ov = Run(v, k);
    const Outcome orr = Run(r, k);
    SCOPED_TRACE("setup: " + Show(k.setup) + "\n  measured: " + Show(k.measured));
    ASSERT_EQ(ov.replies.size(), orr.replies.size());
    for (size_t i = 0; i < ov.replies.size() && !k.random_replies; ++i) {
      EXPECT_EQ(ov.replies[i].ToString(), orr.replies[i].ToString()) << "reply " << i;
    }
    EXPECT_EQ(ov.changes, orr.changes)
        << "changes counted: vessel " << ov.changes << ", redis " << orr.changes;
  }
}

class ChangesTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(ChangesTest, Strings) {
  Compare({
      C("", "SET a 1"),
      C("", "SET a 1 EX 100"),
      C("SET a 0", "SET a 1 PX 100000 GET"),
      C("SET a 0", "SET a 1 NX"),
      C("", "SET a 1 XX"),
      C("SET a 0 EX 100", "SET a 1 KEEPTTL"),
      C("", "SETNX a 1"),
      C("SET a 0", "SETNX a 1"),
      C("", "SETEX a 100 v"),
      C("", "PSETEX a 100000 v"),
      C("SET a 0", "GETSET a 1"),
      C("SET a 0", "GETDEL a"),
      C("", "GETDEL a"),
      C("SET a 0", "GETEX a EX 100"),
      C("SET a 0 EX 100", "GETEX a PERSIST"),
      C("SET a 0", "GETEX a PERSIST"),
      C("SET a 0", "GETEX a"),
      C("", "MSET a 1 b 2 a 3"),
      C("", "MSETNX a 1 b 2"),
      C("SET b 0", "MSETNX a 1 b 2"),
      C("SET a 0", "APPEND a xyz"),
      C("", "APPEND a xyz"),
      C("SET a hello", "SETRANGE a 2 xx"),
      C("", "SETRANGE a 3 xx"),
      {{{"SET", "a", "hello"}}, {{"SETRANGE", "a", "1", ""}}},
      C("SET a 1", "INCR a"),
      C("", "DECR a"),
      C("SET a 1", "INCRBY a 10"),
      C("SET a 1", "DECRBY a 10"),
      C("SET a 1", "INCRBYFLOAT a 1.5"),
      C("SET a x", "INCR a"),
      C("", "GET a; STRLEN a; GETRANGE a 0 -1; MGET a b"),
  });
}

TEST_F(ChangesTest, BitmapsAndHyperLogLog) {
  Compare({
      C("", "SETBIT b 7 1"),
      C("SETBIT b 7 1", "SETBIT b 7 1"),
      C("SETBIT b 7 1", "SETBIT b 100 0"),
      C("", "BITFIELD b SET u8 0 255 INCRBY u8 8 1 GET u8 0"),
      C("SET b x", "BITFIELD b GET u8 0"),
      C("SET b x", "BITFIELD b SET u8 0 120"),
      C("SET b x", "BITFIELD b OVERFLOW FAIL INCRBY u8 0 200"),
      C("SET a abc; SET b xyz", "BITOP AND d a b"),
      C("SET d 1", "BITOP OR d x y"),
      C("", "BITOP OR d x y"),
      C("", "PFADD h a b c"),
      C("PFADD h a b c", "PFADD h a"),
      C("", "PFADD h"),
      C("PFADD h1 a b; PFADD h2 c", "PFMERGE d h1 h2"),
      C("PFADD h1 a b; PFADD h2 c", "PFCOUNT h1 h2"),
  });
}

TEST_F(ChangesTest, Lists) {
  Compare({
      C("", "LPUSH l a b c"),
      C("RPUSH l x", "RPUSH l a b c"),
      C("", "LPUSHX l a b"),
      C("RPUSH l x", "LPUSHX l a b"),
      C("RPUSH l x", "RPUSHX l a b"),
      C("RPUSH l a b", "LINSERT l BEFORE b x"),
      C("RPUSH l a b", "LINSERT l AFTER z x"),
      C("RPUSH l a b", "LSET l 0 x"),
      C("RPUSH l a b c", "LPOP l"),
      C("RPUSH l a b c", "LPOP l 2"),
      C("RPUSH l a b c", "RPOP l 5"),
      C("", "RPOP l"),
      C("RPUSH l a b a c a", "LREM l 0 a"),
      C("RPUSH l a b a c a", "LREM l -1 z"),
      C("RPUSH l a b c d e", "LTRIM l 1 2"),
      C("RPUSH l a b c d e", "LTRIM l 0 -1"),
      C("RPUSH l a b", "LTRIM l 5 10"),
      C("RPUSH l a b", "LMOVE l m LEFT RIGHT"),
      C("RPUSH l a", "LMOVE l l LEFT RIGHT"),
      C("RPUSH l a b", "RPOPLPUSH l m"),
      C("RPUSH l a b c", "LMPOP 2 x l LEFT COUNT 2"),
      C("RPUSH l a b c", "BLPOP l 0"),
      C("RPUSH l a b c", "BRPOP x l 0"),
      C("RPUSH l a b", "BLMOVE l m RIGHT LEFT 0"),
      C("RPUSH l a b", "BRPOPLPUSH l m 0"),
      C("RPUSH l a b c", "BLMPOP 0 1 l RIGHT COUNT 5"),
      C("RPUSH l a b c", "LRANGE l 0 -1; LINDEX l 0; LPOS l b; LLEN l"),
  });
}

TEST_F(ChangesTest, Sets) {
  Compare({
      C("", "SADD s a b c"),
      C("SADD s a b", "SADD s a c d"),
      C("SADD s a b", "SADD s a"),
      C("SADD s a b", "SREM s a x"),
      C("SADD s a", "SREM s a"),
      C("SADD s a b; SADD t c", "SMOVE s t a"),
      C("SADD s a b", "SMOVE s t a"),
      C("SADD s a; SADD t a", "SMOVE s t a"),
      C("SADD s a b", "SMOVE s t x"),
      Random("SADD s a b c", "SPOP s"),
      Random("SADD s a b c", "SPOP s 2"),
      Random("SADD s a b c", "SPOP s 10"),
      C("SADD s a b c", "SPOP s 0"),
      C("SADD s a b c; SADD t b c d", "SINTERSTORE d s t"),
      C("SADD s a b c; SADD t b c d", "SUNIONSTORE d s t"),
      C("SADD s a b c; SADD t b c d", "SDIFFSTORE d s t"),
      C("SADD s a; SADD t b; SET d x", "SINTERSTORE d s t"),
      C("SADD s a; SADD t b", "SINTERSTORE d s t"),
      Random("SADD s a b", "SMEMBERS s; SISMEMBER s a; SCARD s; SRANDMEMBER s"),
  });
}

TEST_F(ChangesTest, Hashes) {
  Compare({
      C("", "HSET h f v g w"),
      C("HSET h f v", "HSET h f v g w"),
      C("", "HMSET h f v g w"),
      C("", "HSETNX h f v"),
      C("HSET h f v", "HSETNX h f v"),
      C("HSET h f v g w", "HDEL h f x"),
      C("HSET h f v", "HDEL h f"),
      C("HSET h f v", "HDEL h x"),
      C("HSET h f 1", "HINCRBY h f 2"),
      C("", "HINCRBYFLOAT h f 2.5"),
      Random("HSET h f v", "HGET h f; HGETALL h; HLEN h; HRANDFIELD h"),
  });
}

TEST_F(ChangesTest, SortedSets) {
  Compare({
      C("", "ZADD z 1 a 2 b"),
      C("ZADD z 1 a", "ZADD z 1 a 2 b"),
      C("ZADD z 1 a", "ZADD z 3 a"),
      C("ZADD z 1 a", "ZADD z CH 3 a 4 b"),
      C("ZADD z 1 a", "ZADD z NX 3 a"),
      C("ZADD z 1 a", "ZADD z XX 3 a 4 b"),
      C("ZADD z 1 a", "ZADD z INCR 2 a"),
      C("ZADD z 1 a", "ZINCRBY z 2 a"),
      C("ZADD z 1 a 2 b", "ZREM z a x"),
      C("ZADD z 1 a 2 b 3 c", "ZREMRANGEBYRANK z 0 1"),
      C("ZADD z 1 a 2 b 3 c", "ZREMRANGEBYSCORE z 2 +inf"),
      C("ZADD z 0 a 0 b 0 c", "ZREMRANGEBYLEX z [a [b"),
      C("ZADD z 1 a 2 b 3 c", "ZPOPMIN z 2"),
      C("ZADD z 1 a 2 b 3 c", "ZPOPMAX z"),
      C("ZADD z 1 a 2 b 3 c", "ZMPOP 1 z MIN COUNT 5"),
      C("ZADD z 1 a 2 b 3 c", "BZPOPMIN z 0"),
      C("ZADD z 1 a 2 b 3 c", "BZMPOP 0 1 z MAX COUNT 2"),
      C("ZADD z 1 a 2 b; ZADD y 1 b 3 c", "ZUNIONSTORE d 2 z y"),
      C("ZADD z 1 a 2 b; ZADD y 1 b 3 c", "ZINTERSTORE d 2 z y"),
      C("ZADD z 1 a 2 b; ZADD y 1 b 3 c", "ZDIFFSTORE d 2 z y"),
      C("ZADD z 1 a; ZADD y 1 b; SET d x", "ZINTERSTORE d 2 z y"),
      C("ZADD z 1 a 2 b 3 c", "ZRANGESTORE d z 0 1"),
      C("ZADD z 1 a 2 b 3 c; SET d x", "ZRANGESTORE d z 5 10"),
      C("ZADD z 1 a 2 b", "ZRANGE z 0 -1; ZSCORE z a; ZCARD z; ZRANK z a"),
  });
}

TEST_F(ChangesTest, Geo) {
  Compare({
      C("", "GEOADD g 13.361389 38.115556 a 15.087269 37.502669 b"),
      C("GEOADD g 13.361389 38.115556 a", "GEOADD g CH 13.5 38.1 a 15.087269 37.502669 b"),
      C("GEOADD g 13.361389 38.115556 a 15.087269 37.502669 b",
        "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km"),
      C("GEOADD g 13.361389 38.115556 a 15.087269 37.502669 b", "GEORADIUS g 15 37 200 km STORE d"),
      C("GEOADD g 13.361389 38.115556 a 15.087269 37.502669 b",
        "GEORADIUSBYMEMBER g a 300 km STOREDIST d"),
      C("GEOADD g 13.361389 38.115556 a; SET d x",
        "GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 km"),
      C("GEOADD g 13.361389 38.115556 a", "GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 km"),
  });
}

TEST_F(ChangesTest, KeyspaceAndServer) {
  Compare({
      C("SET a 1; SET b 2", "DEL a b c"),
      C("SET a 1", "DEL a a"),
      C("SET a 1; SET b 2", "UNLINK a b c"),
      C("SET a 1", "EXPIRE a 100"),
      C("", "EXPIRE a 100"),
      C("SET a 1 EX 50", "EXPIRE a 100 NX"),
      C("SET a 1", "PEXPIRE a 100000"),
      C("SET a 1", "EXPIREAT a 4000000000"),
      C("SET a 1", "PEXPIREAT a 4000000000000"),
      C("SET a 1", "EXPIRE a -1"),
      C("SET a 1 EX 100", "PERSIST a"),
      C("SET a 1", "PERSIST a"),
      C("SET a 1; SET b 2", "RENAME a b"),
      C("SET a 1", "RENAME a a"),
      C("SET a 1; SET b 2", "RENAMENX a b"),
      C("SET a 1", "RENAMENX a c"),
      C("SET a 1", "MOVE a 1"),
      C("SET a 1", "COPY a b"),
      C("SET a 1; SET b 2", "COPY a b REPLACE"),
      C("SET a 1", "COPY a b DB 1"),
      C("SET a 1", "SWAPDB 0 1"),
      C("SET a 1; SET b 2; SET c 3", "FLUSHDB"),
      C("SET a 1; SET b 2; SELECT 1; SET c 3; SELECT 0", "FLUSHALL"),
      C("", "FLUSHALL"),
      C("RPUSH l 3 1 2", "SORT l STORE d"),
      C("SET d x", "SORT l STORE d"),
      C("SET a 1", "TOUCH a b"),
      C("SET a 1", "EXISTS a; TYPE a; TTL a; KEYS *; DBSIZE; RANDOMKEY"),
  });
}

TEST_F(ChangesTest, DumpRestore) {
  for (const bool vessel : {true, false}) {
    SCOPED_TRACE(vessel ? "on vessel" : "on redis-server");
    RespClient c = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
    c("FLUSHALL");
    c("RPUSH", "l", "a", "b", "c");
    const Reply dump = c("DUMP", "l");
    ASSERT_EQ(dump.type, Reply::Type::kBulk);
    c("SET", "d", "x");
    const int64_t before = Changes(c);
    EXPECT_EQ(c("RESTORE", "d", "0", dump.str, "REPLACE").ToString(), "OK");
    EXPECT_EQ(Changes(c) - before, 1);  // Redis: one change, whatever the value holds
  }
}

constexpr char kLibrary[] =
    "#!lua name=changes\n"
    "redis.register_function('setk', function(keys) return redis.call('set', keys[1], 'w') end)";

TEST_F(ChangesTest, TransactionsAndScripts) {
  Compare({
      C("", "MULTI; SET a 1 EX 100; HSET h f v g w; LPUSH l a b c; EXEC"),
      C("SET a 1", "MULTI; INCR a; DEL a b; EXEC"),
      {{},
       {{"EVAL",
         "redis.call('set', 'a', '1', 'EX', '100'); return redis.call('hset', 'h', 'f', 'v', 'g', "
         "'w')",
         "0"}}},
      {{{"SADD", "s", "a"}},
       {{"EVAL", "return redis.call('sadd', KEYS[1], 'a', 'b', 'c')", "1", "s"}}},
      // SORT ... STORE runs internal commands of its own: only SORT's count counts.
      {{{"RPUSH", "l", "3", "1", "2"}, {"SET", "d", "x"}},
       {{"EVAL", "return redis.call('sort', KEYS[1], 'STORE', KEYS[2])", "2", "l", "d"}}},
      C("RPUSH l 3 1 2; SET d x", "MULTI; SORT l STORE d; EXEC"),
      {{{"FUNCTION", "FLUSH"}}, {{"FUNCTION", "LOAD", kLibrary}}},
      {{{"FUNCTION", "LOAD", "REPLACE", kLibrary}}, {{"FUNCTION", "DELETE", "changes"}}},
      {{{"FUNCTION", "LOAD", "REPLACE", kLibrary}, {"SET", "k", "v"}},
       {{"FCALL", "setk", "1", "k"}}},
  });
  OnBoth([](RespClient& c) { c("FUNCTION", "FLUSH"); });
}

// A key found expired and deleted on the way (Redis's expireIfNeeded) is not a change; what the
// command then does is.
TEST_F(ChangesTest, LazyExpiryIsNotAChange) {
  const std::vector<std::pair<Strings, int64_t>> steps = {
      {{"SET", "a", "2"}, 1},        {{"DEL", "a"}, 0},       {{"EXPIRE", "a", "100"}, 0},
      {{"RPUSH", "a", "x", "y"}, 2}, {{"SREM", "a", "x"}, 0},
  };
  for (const bool vessel : {true, false}) {
    SCOPED_TRACE(vessel ? "on vessel" : "on redis-server");
    RespClient c = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
    c("DEBUG", "SET-ACTIVE-EXPIRE", "0");
    for (const auto& [cmd, expected] : steps) {
      SCOPED_TRACE(vessel::test::Show(cmd));
      c("FLUSHALL");
      // An expiry 2 ms ahead of the server's clock, then wait on that clock until it passed.
      const Reply t = c("TIME");
      ASSERT_EQ(t.elems.size(), 2u);
      const int64_t at = std::stoll(t.elems[0].str) * 1000 + std::stoll(t.elems[1].str) / 1000 + 2;
      c("SET", "a", "1", "PXAT", std::to_string(at));
      for (;;) {
        const Reply now = c("TIME");
        if (std::stoll(now.elems[0].str) * 1000 + std::stoll(now.elems[1].str) / 1000 > at) break;
      }
      const int64_t before = Changes(c);
      c.Cmd(cmd);
      EXPECT_EQ(Changes(c) - before, expected);
    }
    c("DEBUG", "SET-ACTIVE-EXPIRE", "1");
  }
}

}  // namespace
}  // namespace vessel::test
