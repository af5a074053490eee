// Connection and server commands, and the protocol edge cases, against vessel and redis-server.
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(ServerTest, PingEchoAndUnknownCommands) {
  RunTable({
      {{"PING"}, Simple("PONG")},
      {{"ping", "hello"}, Bulk("hello")},
      {{"PING", "a", "b"}, Err("ERR wrong number of arguments for 'ping' command")},
      {{"ECHO", "x y"}, Bulk("x y")},
      {{"ECHO", std::string("a\0\r\nb", 5)}, Bulk(std::string("a\0\r\nb", 5))},
      {{"ECHO"}, Err("ERR wrong number of arguments for 'echo' command")},
      {{"ECHO", "a", "b"}, Err("ERR wrong number of arguments for 'echo' command")},
      {{"NOSUCHCMD"}, Err("ERR unknown command 'NOSUCHCMD', with args beginning with: ")},
      {{"nosuch", "a", "b c"},
       Err("ERR unknown command 'nosuch', with args beginning with: 'a' 'b c' ")},
      {{"CONFIG", "NOSUCH"}, Err("ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.")},
      {{"config"}, Err("ERR wrong number of arguments for 'config' command")},
      {{"CONFIG", "GET"}, Err("ERR wrong number of arguments for 'config|get' command")},
      {{"client", "nosuch"}, Err("ERR unknown subcommand 'nosuch'. Try CLIENT HELP.")},
  });
}

TEST_F(ServerTest, SelectAndDbsize) {
  RunTable({
      {{"SELECT", "1"}, Ok()},
      {{"DBSIZE"}, Int(0)},
      {{"SELECT", "15"}, Ok()},
      {{"SELECT", "16"}, Err("ERR DB index is out of range")},
      {{"SELECT", "-1"}, Err("ERR DB index is out of range")},
      {{"SELECT", "x"}, Err("ERR value is not an integer or out of range")},
      {{"SELECT", "0"}, Ok()},
      {{"SWAPDB", "0", "1"}, Ok()},
      {{"SWAPDB", "0", "x"}, Err("ERR invalid second DB index")},
      {{"SWAPDB", "x", "0"}, Err("ERR invalid first DB index")},
      {{"SWAPDB", "0", "99"}, Err("ERR DB index is out of range")},
      {{"FLUSHDB", "ASYNC"}, Ok()},
      {{"FLUSHDB", "sync"}, Ok()},
      {{"FLUSHDB", "now"}, Err("ERR syntax error")},
      {{"FLUSHALL", "async", "x"}, Err("ERR syntax error")},
      {{"RANDOMKEY"}, Nil()},
      {{"KEYS", "*"}, BulkArr({})},
      {{"SCAN", "0"}, Arr({Bulk("0"), BulkArr({})})},
      {{"SCAN", "x"}, Err("ERR invalid cursor")},
      {{"SCAN", "0", "COUNT", "0"}, Err("ERR syntax error")},
      {{"SCAN", "0", "COUNT", "x"}, Err("ERR value is not an integer or out of range")},
      {{"SCAN", "0", "MATCH"}, Err("ERR syntax error")},
      {{"SCAN", "0", "FOO", "bar"}, Err("ERR syntax error")},
  });
}

TEST_F(ServerTest, HelloAndAuth) {
  RunTable({
      {{"HELLO", "4"}, Err("NOPROTO unsupported protocol version")},
      {{"HELLO", "1"}, Err("NOPROTO unsupported protocol version")},
      {{"HELLO", "x"}, Err("ERR Protocol version is not an integer or out of range")},
      {{"HELLO", "3", "FOO"}, Err("ERR Syntax error in HELLO option 'FOO'")},
      {{"HELLO", "2", "SETNAME", "a b"},
       Err("ERR Client names cannot contain spaces, newlines or special characters.")},
      {{"HELLO", "2", "AUTH", "bob", "pw"},
       Err("WRONGPASS invalid username-password pair or user is disabled.")},
      {{"AUTH", "pw"},
       Err("ERR AUTH <password> called without any password configured for the default user. "
           "Are you sure your configuration is correct?")},
      {{"AUTH", "default", "pw"}, Ok()},
      {{"AUTH", "bob", "pw"}, Err("WRONGPASS*")},
  });
  // The reply map differs in "server" (vessel) and the id: check vessel's own shape.
  RespClient c = Servers::Get().Vessel();
  Reply r = c("HELLO", "3", "SETNAME", "me");
  ASSERT_EQ(r.type, Reply::Type::kMap) << r.ToString();
  ASSERT_EQ(r.elems.size(), 14u);
  EXPECT_EQ(r.elems[0].str, "server");
  EXPECT_EQ(r.elems[4].str, "proto");
  EXPECT_EQ(r.elems[5].integer, 3);
  EXPECT_EQ(c("CLIENT", "GETNAME").str, "me");
  // RESP3 is now spoken: a null is "_".
  EXPECT_EQ(c("CLIENT", "GETNAME").type, Reply::Type::kBulk);
  c("CLIENT", "SETNAME", "");
  EXPECT_EQ(c("CLIENT", "GETNAME").type, Reply::Type::kNil);
  r = c("HELLO", "2");
  EXPECT_EQ(r.type, Reply::Type::kArray);
}

TEST_F(ServerTest, ClientCommands) {
  RunTable({
      {{"CLIENT", "GETNAME"}, Nil()},
      {{"CLIENT", "SETNAME", "worker-1"}, Ok()},
      {{"CLIENT", "GETNAME"}, Bulk("worker-1")},
      {{"CLIENT", "SETNAME", "bad name"},
       Err("ERR Client names cannot contain spaces, newlines or special characters.")},
      {{"CLIENT", "KILL", "1.2.3.4:5"}, Err("ERR No such client")},
      {{"CLIENT", "KILL", "ID", "999999"}, Int(0)},
      {{"CLIENT", "KILL", "ID", "x"}, Err("ERR client-id should be greater than 0")},
      {{"CLIENT", "KILL", "FOO", "bar"}, Err("ERR syntax error")},
      {{"CLIENT", "LIST", "TYPE", "pubsub"}, Bulk("")},
      {{"CLIENT", "LIST", "TYPE", "x"}, Err("ERR Unknown client type 'x'")},
      {{"CLIENT", "LIST", "ID", "x"}, Err("ERR Invalid client ID")},
      {{"CLIENT", "NO-EVICT", "on"}, Ok()},
      {{"CLIENT", "NO-EVICT", "x"}, Err("ERR syntax error")},
      {{"CLIENT", "UNBLOCK", "999999"}, Int(0)},
      {{"CLIENT", "UNBLOCK", "x"}, Err("ERR value is not an integer or out of range")},
      {{"CLIENT", "ID"}, Any(), Diff::kSkip, "connection ids differ between servers"},
      // Redis 7.0 has no SETINFO (7.2's); client libraries that send it ignore the error.
      {{"CLIENT", "SETINFO", "LIB-NAME", "redis-py"},
       Error("ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.")},
  });
  // CLIENT LIST shows this connection with Redis's fields.
  RespClient c = Servers::Get().Vessel();
  c("CLIENT", "SETNAME", "lister");
  const Reply id = c("CLIENT", "ID");
  const Reply list = c("CLIENT", "LIST", "ID", std::to_string(id.integer));
  EXPECT_NE(list.str.find("id=" + std::to_string(id.integer) + " addr=127.0.0.1:"),
            std::string::npos)
      << list.str;
  EXPECT_NE(list.str.find(" name=lister "), std::string::npos) << list.str;
  EXPECT_NE(list.str.find(" cmd=client|list "), std::string::npos) << list.str;
  EXPECT_NE(c("CLIENT", "INFO").str.find(" name=lister "), std::string::npos);
}

TEST_F(ServerTest, ClientKillClosesTheVictim) {
  for (bool redis : {false, true}) {
    RespClient victim = redis ? Servers::Get().Redis() : Servers::Get().Vessel();
    RespClient killer = redis ? Servers::Get().Redis() : Servers::Get().Vessel();
    const int64_t id = victim("CLIENT", "ID").integer;
    EXPECT_EQ(killer("CLIENT", "KILL", "ID", std::to_string(id)).integer, 1);
    EXPECT_TRUE(victim.ReadEof()) << (redis ? "redis" : "vessel");
    // SKIPME yes by default: killing our own address with the new form spares us.
    EXPECT_EQ(
        killer("CLIENT", "KILL", "ID", std::to_string(killer("CLIENT", "ID").integer)).integer, 0);
  }
}

TEST_F(ServerTest, ConfigGetSet) {
  RunTable({
      {{"CONFIG", "GET", "maxmemory"}, Arr({Bulk("maxmemory"), Bulk("0")})},
      {{"CONFIG", "SET", "maxmemory", "10mb"}, Ok()},
      {{"CONFIG", "GET", "maxmemory"}, Arr({Bulk("maxmemory"), Bulk("10485760")})},
      {{"CONFIG", "SET", "maxmemory", "0"}, Ok()},
      {{"CONFIG", "GET", "save"}, Any(), Diff::kSkip, "no persistence: save is always empty"},
      {{"CONFIG", "GET", "appendonly"}, Arr({Bulk("appendonly"), Bulk("no")})},
      {{"CONFIG", "GET", "nosuchparam"}, Arr({})},
      {{"CONFIG", "SET", "nosuch", "1"},
       Err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")},
      {{"CONFIG", "SET", "maxclients"},
       Err("ERR wrong number of arguments for 'config|set' command")},
      {{"CONFIG", "SET", "maxmemory", "1", "timeout"}, Err("ERR syntax error")},
      {{"CONFIG", "SET", "databases", "4"},
       Err("ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
           "immutable config")},
      {{"CONFIG", "SET", "maxclients", "x"},
       Err("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
           "couldn't be parsed into an integer")},
      {{"CONFIG", "SET", "timeout", "0"}, Ok()},
      {{"CONFIG", "RESETSTAT"}, Ok()},
  });
}

// Every parameter of Redis 7.0's CONFIG GET * exists in vessel (working, or accepted and
// reported back where it has no meaning in Vessel), so tools that set Redis's knobs work.
TEST_F(ServerTest, ConfigGetHasEveryRedisParameter) {
  RespClient v = Servers::Get().Vessel();
  RespClient r = Servers::Get().Redis();
  std::set<std::string> ours;
  const Reply mine = v("CONFIG", "GET", "*");
  for (size_t i = 0; i + 1 < mine.elems.size(); i += 2) ours.insert(mine.elems[i].str);
  const Reply theirs = r("CONFIG", "GET", "*");
  ASSERT_GT(theirs.elems.size(), 300u);
  for (size_t i = 0; i + 1 < theirs.elems.size(); i += 2)
    EXPECT_TRUE(ours.contains(theirs.elems[i].str)) << "missing " << theirs.elems[i].str;
}

TEST_F(ServerTest, ConfigSetIsAllOrNothing) {
  RunTable({
      {{"CONFIG", "GET", "hash-max-listpack-entries"},
       Arr({Bulk("hash-max-listpack-entries"), Bulk("512")})},
      {{"CONFIG", "SET", "hash-max-ziplist-entries", "300"}, Ok()},
      {{"CONFIG", "GET", "hash-max-*-entries"}, Any(), Diff::kUnordered},
      {{"CONFIG", "GET", "hash-max-listpack-entries"},
       Arr({Bulk("hash-max-listpack-entries"), Bulk("300")})},
      // The second parameter fails: the first keeps its old value.
      {{"CONFIG", "SET", "hash-max-listpack-entries", "100", "maxmemory-samples", "0"},
       Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument "
             "must be between 1 and 2147483647 inclusive")},
      {{"CONFIG", "GET", "hash-max-listpack-entries"},
       Arr({Bulk("hash-max-listpack-entries"), Bulk("300")})},
      {{"CONFIG", "SET", "maxmemory", "10mb", "zset-max-listpack-value", "x"},
       Error("ERR CONFIG SET failed (possibly related to argument 'zset-max-listpack-value') - "
             "argument must be a memory value")},
      {{"CONFIG", "GET", "maxmemory"}, Arr({Bulk("maxmemory"), Bulk("0")})},
      {{"CONFIG", "SET", "hash-max-listpack-entries", "1", "HASH-max-listpack-entries", "2"},
       Error("ERR CONFIG SET failed (possibly related to argument 'HASH-max-listpack-entries') - "
             "duplicate parameter")},
      {{"CONFIG", "SET", "hash-max-listpack-entries", "1", "hash-max-ziplist-entries", "2"}, Ok()},
      {{"CONFIG", "GET", "hash-max-listpack-entries"},
       Arr({Bulk("hash-max-listpack-entries"), Bulk("2")})},
      {{"CONFIG", "SET", "activerehashing", "maybe"},
       Error("ERR CONFIG SET failed (possibly related to argument 'activerehashing') - argument "
             "must be 'yes' or 'no'")},
      {{"CONFIG", "SET", "appendfsync", "sometimes"},
       Error("ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) "
             "must be one of the following: everysec, always, no")},
      {{"CONFIG", "SET", "daemonize", "yes"},
       Error("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set "
             "immutable config")},
      {{"CONFIG", "SET", "dir", "/tmp"},
       Error("ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected "
             "config")},
      {{"CONFIG", "SET", "slowlog-max-len", "64", "latency-monitor-threshold", "5"}, Ok()},
      {{"CONFIG", "GET", "slowlog-max-len"}, Arr({Bulk("slowlog-max-len"), Bulk("64")})},
      {{"CONFIG", "SET", "hash-max-listpack-entries", "512", "slowlog-max-len", "128",
        "latency-monitor-threshold", "0"},
       Ok()},
      {{"CONFIG", "REWRITE"}, Error("ERR The server is running without a config file")},
  });
}

// The section titles INFO prints for each argument form.
std::vector<std::string> InfoTitles(RespClient& c, const std::vector<std::string>& args) {
  const Reply r = c.Cmd(Cat({"INFO"}, args));
  std::vector<std::string> titles;
  size_t at = 0;
  while ((at = r.str.find("# ", at)) != std::string::npos) {
    const size_t end = r.str.find("\r\n", at);
    titles.push_back(r.str.substr(at + 2, end - at - 2));
    at = end;
  }
  return titles;
}

// "name:k1=v1,k2=v2" lines of an INFO section whose names start with prefix, without the fields
// that measure time.
std::map<std::string, std::string> InfoLines(RespClient& c, const std::string& section,
                                             const std::string& prefix) {
  const Reply r = c("INFO", section);
  std::map<std::string, std::string> out;
  std::istringstream in(r.str);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t colon = line.find(':');
    std::string fields;
    std::istringstream parts(line.substr(colon + 1));
    std::string field;
    while (std::getline(parts, field, ',')) {
      if (field.rfind("usec", 0) == 0 || field.rfind("p5", 0) == 0 || field.rfind("p9", 0) == 0)
        continue;
      fields += field + ",";
    }
    out[line.substr(0, colon)] = fields;
  }
  return out;
}

TEST_F(ServerTest, InfoSectionsAsRedis) {
  RespClient v = Servers::Get().Vessel();
  RespClient r = Servers::Get().Redis();
  for (const auto& args : std::vector<std::vector<std::string>>{{},
                                                                {"default"},
                                                                {"all"},
                                                                {"everything"},
                                                                {"commandstats"},
                                                                {"errorstats", "cpu"},
                                                                {"latencystats"},
                                                                {"default", "commandstats"},
                                                                {"CLUSTER"}}) {
    EXPECT_EQ(InfoTitles(v, args), InfoTitles(r, args)) << "INFO " << Show(args);
  }
}

// INFO commandstats / errorstats / latencystats count the same calls, refusals and failures as
// Redis for the same commands; CONFIG RESETSTAT clears them.
TEST_F(ServerTest, CommandAndErrorStats) {
  std::map<std::string, std::string> got[2][3];
  for (int i = 0; i < 2; ++i) {
    RespClient c = i == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    ASSERT_EQ(c("CONFIG", "RESETSTAT").str, "OK");
    c("SET", "a", "b");
    c("GET", "a");
    c("GET", "a");
    c("INCR", "a");        // failed: not an integer
    c("GET");              // rejected: arity
    c("NOSUCHCOMMAND");    // no command to charge
    c("LPUSH", "a", "x");  // failed: WRONGTYPE
    c("CONFIG", "GET", "maxmemory");
    c("CONFIG", "NOSUCH");  // unknown subcommand
    c("MULTI");
    c("INCR", "a");
    c("SET", "n", "1");
    c("EXEC");  // the inner INCR fails
    got[i][0] = InfoLines(c, "commandstats", "cmdstat_");
    got[i][1] = InfoLines(c, "errorstats", "errorstat_");
    got[i][2] = InfoLines(c, "latencystats", "latency_percentiles_usec_");
  }
  for (int s = 0; s < 3; ++s) {
    got[0][s].erase("cmdstat_info");  // INFO itself is counted after its reply on Redis
    got[1][s].erase("cmdstat_info");
    got[0][s].erase("latency_percentiles_usec_info");
    got[1][s].erase("latency_percentiles_usec_info");
    EXPECT_EQ(got[0][s], got[1][s]) << "section " << s;
  }
  EXPECT_EQ(got[0][0]["cmdstat_get"], "calls=2,rejected_calls=1,failed_calls=0,");
  EXPECT_EQ(got[0][1]["errorstat_WRONGTYPE"], "count=1,");
  RespClient v = Servers::Get().Vessel();
  v("CONFIG", "RESETSTAT");
  EXPECT_TRUE(InfoLines(v, "errorstats", "errorstat_").empty());
  EXPECT_FALSE(InfoLines(v, "commandstats", "cmdstat_").contains("cmdstat_get"));
}

// SLOWLOG records what Redis records, trimmed as Redis trims it (32 arguments, 128 bytes each).
TEST_F(ServerTest, SlowlogAsRedis) {
  std::vector<Reply> got[2];
  for (int i = 0; i < 2; ++i) {
    RespClient c = i == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    c("CLIENT", "SETNAME", "slow-one");
    c("CONFIG", "SET", "slowlog-log-slower-than", "0");
    c("SLOWLOG", "RESET");
    c("SET", "k", std::string(200, 'x'));
    std::vector<std::string> mset = {"MSET"};
    for (int k = 0; k < 20; ++k) mset.insert(mset.end(), {"key" + std::to_string(k), "v"});
    c.Cmd(mset);
    got[i].push_back(c("SLOWLOG", "LEN"));
    const Reply entries = c("SLOWLOG", "GET", "2");
    got[i].push_back(c("SLOWLOG", "GET", "-2"));
    c("CONFIG", "SET", "slowlog-log-slower-than", "10000");
    c("CLIENT", "SETNAME", "");
    ASSERT_EQ(entries.elems.size(), 2u) << entries.ToString();
    for (const Reply& e : entries.elems) {
      ASSERT_EQ(e.elems.size(), 6u) << e.ToString();
      got[i].push_back(e.elems[3]);  // the arguments
      got[i].push_back(e.elems[5]);  // the client name
      EXPECT_EQ(e.elems[4].str.rfind("127.0.0.1:", 0), 0u) << e.ToString();
    }
    EXPECT_EQ(entries.elems[0].elems[0].integer, entries.elems[1].elems[0].integer + 1);
  }
  ASSERT_EQ(got[0].size(), got[1].size());
  for (size_t i = 0; i < got[0].size(); ++i)
    EXPECT_EQ(got[0][i], got[1][i])
        << i << "\n  vessel: " << got[0][i].ToString() << "\n  redis:  " << got[1][i].ToString();
}

TEST_F(ServerTest, LatencyMonitorAndHistogram) {
  RunTable({
      {{"LATENCY", "RESET"}, Any(), Diff::kSkip, "earlier spikes differ"},
      {{"LATENCY", "LATEST"}, Arr({})},
      {{"LATENCY", "HISTORY", "command"}, Arr({})},
      {{"LATENCY", "GRAPH", "command"}, Error("ERR No samples available for event 'command'")},
      {{"CONFIG", "SET", "latency-monitor-threshold", "5"}, Ok()},
      {{"DEBUG", "SLEEP", "0.02"}, Ok()},
      {{"LATENCY", "RESET", "nosuch"}, Int(0)},
      {{"LATENCY", "RESET", "command"}, Int(1)},
      {{"LATENCY", "LATEST"}, Arr({})},
      {{"CONFIG", "SET", "latency-monitor-threshold", "0"}, Ok()},
      {{"LATENCY", "HISTOGRAM", "nosuchcommand"}, Arr({})},
      {{"LATENCY", "NOSUCH"}, Error("ERR unknown subcommand 'NOSUCH'. Try LATENCY HELP.")},
  });
  RespClient c = Servers::Get().Vessel();
  c("CONFIG", "SET", "latency-monitor-threshold", "5");
  c("DEBUG", "SLEEP", "0.02");
  const Reply latest = c("LATENCY", "LATEST");
  ASSERT_EQ(latest.elems.size(), 1u) << latest.ToString();
  EXPECT_EQ(latest.elems[0].elems[0].str, "command");
  EXPECT_GE(latest.elems[0].elems[2].integer, 20);
  c("CONFIG", "SET", "latency-monitor-threshold", "0");
  c("SET", "h", "1");
  const Reply h = c("LATENCY", "HISTOGRAM", "set");
  ASSERT_EQ(h.elems.size(), 2u) << h.ToString();
  EXPECT_EQ(h.elems[0].str, "set");
  ASSERT_EQ(h.elems[1].elems.size(), 4u) << h.ToString();
  EXPECT_EQ(h.elems[1].elems[0].str, "calls");
  EXPECT_EQ(h.elems[1].elems[2].str, "histogram_usec");
}

TEST_F(ServerTest, DebugNeedsEnableDebugCommand) {
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("CONFIG", "GET", "enable-debug-command").elems.at(1).str, "yes");
  EXPECT_EQ(c("CONFIG", "SET", "enable-debug-command", "no").str,
            "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't "
            "set immutable config");
}

TEST_F(ServerTest, CommandIntrospection) {
  RunTable({
      {{"COMMAND", "GETKEYS", "DEL", "a", "b"}, BulkArr({"a", "b"})},
      {{"COMMAND", "GETKEYS", "RENAME", "x", "y"}, BulkArr({"x", "y"})},
      {{"COMMAND", "GETKEYS", "PING", "x"}, Err("ERR The command has no key arguments")},
      {{"COMMAND", "GETKEYS", "PING"},
       Err("ERR wrong number of arguments for 'command|getkeys' command")},
      {{"COMMAND", "GETKEYS", "NOSUCH", "a"}, Err("ERR Invalid command specified")},
      {{"COMMAND", "GETKEYS", "RENAME", "a"},
       Err("ERR Invalid number of arguments specified for command")},
      {{"COMMAND", "INFO", "nosuch"}, Arr({NilArray()})},
      {{"COMMAND", "INFO", "del"}, Any()},
      {{"COMMAND", "INFO", "expire"}, Any()},
      {{"COMMAND", "INFO", "rename", "ttl", "select", "scan"}, Any()},
      {{"COMMAND", "INFO", "config|get"},
       Any(),
       Diff::kSkip,
       "ACL categories and tips of admin commands are not modelled"},
      {{"COMMAND", "COUNT"}, Any(), Diff::kSkip, "different command sets"},
  });
  RespClient c = Servers::Get().Vessel();
  const Reply docs = c("COMMAND", "DOCS", "del");
  ASSERT_EQ(docs.elems.size(), 2u) << docs.ToString();
  EXPECT_EQ(docs.elems[0].str, "del");
  const Reply count = c("COMMAND", "COUNT");
  const Reply all = c("COMMAND");
  EXPECT_EQ(static_cast<size_t>(count.integer), all.elems.size());
}

TEST_F(ServerTest, MiscServerCommands) {
  RunTable({
      {{"TIME"}, Any(), Diff::kSkip, "clock"},
      {{"ROLE"}, Arr({Bulk("master"), Int(0), Arr({})})},
      {{"WAIT", "0", "0"}, Int(0)},
      {{"WAIT", "0", "-1"}, Err("ERR timeout is negative")},
      {{"DEBUG", "SLEEP", "0"}, Ok()},
      {{"DEBUG", "SET-ACTIVE-EXPIRE", "1"}, Ok()},
      {{"LASTSAVE"}, Any(), Diff::kSkip, "start time"},
      {{"MEMORY", "USAGE", "nokey"}, Nil()},
      {{"MEMORY", "PURGE"}, Ok()},
      {{"OBJECT", "ENCODING", "nokey"}, Nil()},
      {{"INFO", "nosuchsection"}, Bulk("")},
  });
  RespClient c = Servers::Get().Vessel();
  const Reply info = c("INFO");
  for (const char* field : {"# Server", "redis_version:7.0.15", "tcp_port:", "# Clients",
                            "connected_clients:", "# Memory", "used_memory:", "maxmemory_policy:",
                            "# Stats", "total_commands_processed:", "# Keyspace", "# Modules"}) {
    EXPECT_NE(info.str.find(field), std::string::npos) << field;
  }
  const Reply modules = c("MODULE", "LIST");
  EXPECT_EQ(modules.type, Reply::Type::kArray);
  const Reply stats = c("MEMORY", "STATS");
  EXPECT_EQ(stats.type, Reply::Type::kArray);
}

// total_error_replies counts every error reply, unknown commands and arity errors included.
TEST_F(ServerTest, ErrorRepliesAreCounted) {
  auto errors = [](RespClient& c) {
    const std::string info = c("INFO", "stats").str;
    const size_t at = info.find("total_error_replies:");
    EXPECT_NE(at, std::string::npos);
    return std::stoll(info.substr(at + std::string_view("total_error_replies:").size()));
  };
  for (int i = 0; i < 2; ++i) {
    RespClient c = i == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    const long long before = errors(c);
    c("NOSUCHCOMMAND");
    c("GET");
    c("SET", "errcount", "x");
    c("INCR", "errcount");
    c("GET", "errcount");
    EXPECT_EQ(errors(c) - before, 3) << (i == 0 ? "vessel" : "redis");
  }
}

// Raw protocol input: both servers must reply the same bytes and close (or not) the same way.
TEST_F(ServerTest, ProtocolErrorsAndInlineCommands) {
  struct Case {
    std::string input;
    bool closes;
  };
  const std::vector<Case> cases = {
      {"PING\r\n", false},
      {"ping hello\r\n", false},
      {"ECHO \"a b\"\r\n", false},
      {"ECHO 'x y'\r\n", false},
      {"ECHO \"\\x41\\n\"\r\n", false},
      {"\r\n\r\nPING\r\n", false},
      {"*0\r\nPING\r\n", false},
      {"*-1\r\nPING\r\n", false},
      {"ECHO \"unbalanced\r\n", true},
      {"*1\r\n$-5\r\n", true},
      {"*1\r\n$abc\r\n", true},
      {"*abc\r\n", true},
      {"*1\r\nfoo\r\n", true},
      {"*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n*1\r\n$4\r\nPING\r\n", false},
      {"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$999999999999\r\n", true},
      {"*1\r\n$4\r\nPING\r\n*1\r\n:5\r\n", true},
  };
  for (const Case& c : cases) {
    std::string replies[2];
    bool closed[2];
    for (int i = 0; i < 2; ++i) {
      RespClient client = i == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
      client.SetTimeout(300);
      client.SendRaw(c.input);
      std::string all;
      Reply r;
      while ((r = client.Read()).type != Reply::Type::kClosed) all += r.ToString() + "|";
      replies[i] = all;
      client.SendRaw("PING\r\n");
      closed[i] = client.Read().type == Reply::Type::kClosed;
    }
    EXPECT_EQ(replies[0], replies[1]) << "input: " << c.input;
    EXPECT_EQ(closed[0], c.closes) << "input: " << c.input << " replies: " << replies[0];
    EXPECT_EQ(closed[1], c.closes) << "(redis) input: " << c.input;
  }
}

TEST_F(ServerTest, QuitRepliesThenCloses) {
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("QUIT").str, "OK");
  EXPECT_TRUE(c.ReadEof());
}

}  // namespace
}  // namespace vessel::test
