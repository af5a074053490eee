// The zsets module's command descriptors against redis-server: the arity error of every
// sorted-set command, and COMMAND INFO, COMMAND GETKEYS and GETKEYSANDFLAGS of every sorted-set
// and geo command (flags, key specs, numkeys and keyword key specs).
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class ZsetsInfoTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(ZsetsInfoTest, ArityErrors) {
  std::vector<Row> rows;
  for (const Strings& cmd : std::vector<Strings>{{"ZADD", "k", "1"},
                                                 {"ZINCRBY", "k", "1"},
                                                 {"ZREM", "k"},
                                                 {"ZCARD"},
                                                 {"ZSCORE", "k"},
                                                 {"ZMSCORE", "k"},
                                                 {"ZRANK", "k"},
                                                 {"ZREVRANK", "k", "a", "b"},
                                                 {"ZCOUNT", "k", "0"},
                                                 {"ZLEXCOUNT", "k"},
                                                 {"ZRANGE", "k", "0"},
                                                 {"ZRANGESTORE", "d", "k", "0"},
                                                 {"ZREVRANGE", "k"},
                                                 {"ZRANGEBYSCORE", "k", "0"},
                                                 {"ZREVRANGEBYSCORE", "k"},
                                                 {"ZRANGEBYLEX", "k"},
                                                 {"ZREVRANGEBYLEX", "k", "-"},
                                                 {"ZREMRANGEBYRANK", "k", "0"},
                                                 {"ZREMRANGEBYSCORE"},
                                                 {"ZREMRANGEBYLEX", "k", "-", "+", "x"},
                                                 {"ZPOPMIN"},
                                                 {"ZPOPMAX"},
                                                 {"ZMPOP", "1", "k"},
                                                 {"BZPOPMIN", "k"},
                                                 {"BZPOPMAX"},
                                                 {"BZMPOP", "0", "1", "k"},
                                                 {"ZRANDMEMBER"},
                                                 {"ZUNION", "1"},
                                                 {"ZINTER", "1"},
                                                 {"ZDIFF", "1"},
                                                 {"ZUNIONSTORE", "d", "1"},
                                                 {"ZINTERSTORE", "d"},
                                                 {"ZDIFFSTORE", "d", "1"},
                                                 {"ZINTERCARD", "1"},
                                                 {"ZSCAN", "k"}}) {
    std::string lower = cmd[0];
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    rows.push_back({cmd, Error("ERR wrong number of arguments for '" + lower + "' command")});
  }
  RunTable(rows);
}

// COMMAND INFO as Redis's, but for the "module" flag the host adds to module commands.
Reply WithoutModuleFlag(Reply r) {
  if (r.elems.size() == 1 && r.elems[0].elems.size() > 6) {
    std::erase_if(r.elems[0].elems[2].elems, [](const Reply& f) { return f.str == "module"; });
  }
  return r;
}

TEST_F(ZsetsInfoTest, CommandInfoMatchesRedis) {
  RespClient vessel = Servers::Get().Vessel(), redis = Servers::Get().Redis();
  for (const char* name : {"zadd",
                           "zincrby",
                           "zrem",
                           "zcard",
                           "zscore",
                           "zmscore",
                           "zrank",
                           "zrevrank",
                           "zcount",
                           "zlexcount",
                           "zrange",
                           "zrangestore",
                           "zrevrange",
                           "zrangebyscore",
                           "zrevrangebyscore",
                           "zrangebylex",
                           "zrevrangebylex",
                           "zremrangebyrank",
                           "zremrangebyscore",
                           "zremrangebylex",
                           "zpopmin",
                           "zpopmax",
                           "zmpop",
                           "bzpopmin",
                           "bzpopmax",
                           "bzmpop",
                           "zrandmember",
                           "zunion",
                           "zinter",
                           "zdiff",
                           "zunionstore",
                           "zinterstore",
                           "zdiffstore",
                           "zintercard",
                           "zscan",
                           "geoadd",
                           "geopos",
                           "geodist",
                           "geohash",
                           "geosearch",
                           "geosearchstore",
                           "georadius",
                           "georadiusbymember",
                           "georadius_ro",
                           "georadiusbymember_ro"}) {
    const Reply v = WithoutModuleFlag(vessel("COMMAND", "INFO", name));
    const Reply r = WithoutModuleFlag(redis("COMMAND", "INFO", name));
    ASSERT_EQ(v.elems.size(), 1u) << name << ": " << v.ToString();
    EXPECT_EQ(v, r) << name << "\n  vessel: " << v.ToString() << "\n  redis:  " << r.ToString();
  }
  for (const Strings& cmd : std::vector<Strings>{
           {"ZUNION", "2", "a", "b", "WEIGHTS", "1", "2"},
           {"ZINTERSTORE", "d", "3", "a", "b", "c"},
           {"ZDIFFSTORE", "d", "1", "a"},
           {"ZINTERCARD", "2", "a", "b", "LIMIT", "1"},
           {"ZMPOP", "2", "a", "b", "MIN"},
           {"BZMPOP", "0", "2", "a", "b", "MAX", "COUNT", "2"},
           {"BZPOPMIN", "a", "b", "0"},
           {"ZRANGESTORE", "d", "s", "0", "1"},
           {"GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"},
           {"GEORADIUS", "s", "0", "0", "1", "km", "STORE", "d"},
           {"GEORADIUS", "s", "0", "0", "1", "km", "STOREDIST", "d2", "STORE", "d1"},
           {"GEORADIUSBYMEMBER", "s", "m", "1", "km", "STOREDIST", "d"},
           {"GEORADIUS_RO", "s", "0", "0", "1", "km"},
       }) {
    for (const char* sub : {"GETKEYS", "GETKEYSANDFLAGS"}) {
      const Reply v = vessel.Cmd(Cat({"COMMAND", sub}, cmd));
      const Reply r = redis.Cmd(Cat({"COMMAND", sub}, cmd));
      EXPECT_EQ(v, r) << sub << " " << Show(cmd) << "\n  vessel: " << v.ToString()
                      << "\n  redis:  " << r.ToString();
    }
  }
}

}  // namespace
}  // namespace vessel::test
