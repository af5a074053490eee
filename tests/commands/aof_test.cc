// The append-only file: restarts replay it, rewrites keep everything, the directory is redis-server
// 7.0's multi-part layout (each server loads the other's), effects are recorded instead of
// commands that could replay differently, damaged files are refused or cut as Redis does.
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "host/persist/rdb_file.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

namespace fs = std::filesystem;

using Params = std::vector<std::pair<std::string, std::string>>;

const Params kAof = {{"appendonly", "yes"}};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::string Incr(const TempDir& dir, int seq) {
  return dir.file("appendonlydir/appendonly.aof." + std::to_string(seq) + ".incr.aof");
}

// Writes whose naive replay would differ, in every shape the AOF must handle.
void Effects(RespClient& c) {
  c("SADD", "popped", "a", "b", "c", "d", "e", "f");
  c("SPOP", "popped");
  c("SPOP", "popped", "2");
  c("INCRBYFLOAT", "float", "1.1");
  c("INCRBYFLOAT", "float", "2.25");
  c("HSET", "hf", "f", "1");
  c("HINCRBYFLOAT", "hf", "f", "0.5");
  c("SET", "rel", "v", "EX", "1000");
  c("EXPIRE", "db0:str", "5000");
  c("MULTI");
  c("SET", "tx1", "a");
  c("SELECT", "2");
  c("SET", "tx2", "b");
  c("EXEC");
  c("SELECT", "0");
  c("LPUSH", "blist", "x", "y");
  c("BLPOP", "blist", "0");
  c("EVAL", "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('RPUSH', KEYS[2], ARGV[1])", "2",
    "scripted", "slist", "v");
}

TEST(Aof, RestartReplaysEveryWrite) {
  TempDir dir;
  std::map<std::string, std::string> before;
  std::map<std::string, std::string> hx_times;  // field -> HPEXPIRETIME reply
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    Effects(c);
    // Hash field expiries (Redis 7.4 and 8.0 commands, so not in Effects, which redis-server 7.0
    // replays too).
    c("HSET", "hx", "a", "1", "b", "2", "c", "3", "d", "4");
    c("HEXPIRE", "hx", "1000", "FIELDS", "1", "a");
    c("HSETEX", "hx", "PX", "2000000", "FIELDS", "1", "b", "22");
    c("HGETEX", "hx", "EX", "3000", "FIELDS", "1", "c");
    before = Describe(c);
    for (const char* f : {"a", "b", "c", "d"})
      hx_times[f] = c("HPEXPIRETIME", "hx", "FIELDS", "1", f).ToString();
    EXPECT_EQ(InfoField(c, "aof_enabled"), "1");
  }
  const std::string log = ReadAll(Incr(dir, 1));
  EXPECT_EQ(log.find("spop"), std::string::npos);
  EXPECT_EQ(log.find("SPOP"), std::string::npos);
  EXPECT_NE(log.find("SREM"), std::string::npos);
  EXPECT_EQ(log.find("INCRBYFLOAT"), std::string::npos);
  EXPECT_NE(log.find("KEEPTTL"), std::string::npos);
  EXPECT_NE(log.find("PEXPIREAT"), std::string::npos);
  // Hash field expiries are logged with absolute times, as Redis 7.4 logs HEXPIRE as HPEXPIREAT.
  EXPECT_EQ(log.find("HEXPIRE"), std::string::npos);
  EXPECT_NE(log.find("HPEXPIREAT"), std::string::npos);
  EXPECT_EQ(log.find("\r\n2000000\r\n"), std::string::npos);  // HSETEX's relative PX
  EXPECT_NE(log.find("PXAT"), std::string::npos);
  EXPECT_NE(log.find("MULTI"), std::string::npos);
  EXPECT_EQ(log.find("EVAL"), std::string::npos);  // a script's effects, not the script
  EXPECT_EQ(log.find("eval"), std::string::npos);
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
  for (const char* f : {"a", "b", "c", "d"})
    EXPECT_EQ(c("HPEXPIRETIME", "hx", "FIELDS", "1", f).ToString(), hx_times[f]) << f;
}

TEST(Aof, RewriteUnderWritesKeepsEverything) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    std::thread writer([&] {
      RespClient w = Client(*v);
      for (int i = 0; i < 3000; ++i) w("SET", "during" + std::to_string(i), std::to_string(i));
    });
    EXPECT_EQ(c("BGREWRITEAOF").str, "Background append only file rewriting started");
    writer.join();
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "aof_last_bgrewrite_status"), "ok");
    EXPECT_EQ(InfoField(c, "aof_rewrites"), "1");
    Effects(c);
    before = Describe(c);
  }
  EXPECT_EQ(ReadAll(dir.file("appendonlydir/appendonly.aof.manifest")),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n");
  EXPECT_FALSE(fs::exists(Incr(dir, 1)));
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
}

TEST(Aof, VesselDirectoryLoadsInRedis) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto v = StartVessel(dir.path(), kAof);
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("BGREWRITEAOF").str, "Background append only file rewriting started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
    Effects(c);
    before = Describe(c);
  }
  int port = 0;
  const int pid = StartRedis(&port, {"--dir", dir.path(), "--appendonly", "yes"});
  RespClient r("127.0.0.1", port);
  ExpectSameData(before, Describe(r));
  StopProcess(pid);
}

TEST(Aof, RedisDirectoryLoadsInVessel) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    int port = 0;
    const int pid = StartRedis(&port, {"--dir", dir.path(), "--appendonly", "yes"});
    RespClient r("127.0.0.1", port);
    Fill(r);
    Effects(r);
    before = Describe(r);
    StopProcess(pid);  // SIGTERM: redis fsyncs its AOF
  }
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
}

TEST(Aof, TruncatedTailAndDamage) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), kAof);
    RespClient c = Client(*v);
    for (int i = 0; i < 100; ++i) c("SET", "k" + std::to_string(i), std::to_string(i));
  }
  const std::string good = ReadAll(Incr(dir, 1));
  // A command cut short by a crash: loaded without it (a warning), the file cut back.
  WriteAll(Incr(dir, 1), good + "*3\r\n$3\r\nSET\r\n$4\r\nlast\r\n$2\r\nv");
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(c("DBSIZE").integer, 100);
    EXPECT_EQ(c("EXISTS", "last").integer, 0);
  }
  EXPECT_EQ(ReadAll(Incr(dir, 1)).size(), good.size());
  // An unfinished MULTI group is dropped whole.
  WriteAll(Incr(dir, 1), good + "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$2\r\ntx\r\n$1\r\n1\r\n");
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(c("EXISTS", "tx").integer, 0);
  }
  // With aof-load-truncated no, the same tail refuses to start.
  WriteAll(Incr(dir, 1), good + "*3\r\n$3\r\nSET\r\n");
  std::string error;
  Params strict = kAof;
  strict.emplace_back("aof-load-truncated", "no");
  EXPECT_EQ(StartVessel(dir.path(), strict, &error), nullptr);
  EXPECT_NE(error.find("appendonly.aof.1.incr.aof"), std::string::npos) << error;
  // Damage in the middle: refused with the file and the offset.
  std::string damaged = good;
  damaged.insert(good.size() / 2, "garbage\r\n");
  WriteAll(Incr(dir, 1), damaged);
  EXPECT_EQ(StartVessel(dir.path(), kAof, &error), nullptr);
  EXPECT_NE(error.find("Bad file format"), std::string::npos) << error;
  EXPECT_NE(error.find("appendonly.aof.1.incr.aof at offset"), std::string::npos) << error;
}

// FUNCTION LOAD/DELETE are logged as Redis logs them, and a rewrite keeps the libraries in its
// base (RDB_OPCODE_FUNCTION2 records).
TEST(Aof, FunctionLibrariesSurviveReplayAndRewrite) {
  TempDir dir;
  const char* lib1 = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)";
  const char* lib2 = "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)";
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(c("FUNCTION", "LOAD", lib1).str, "lib1");
    EXPECT_EQ(c("FUNCTION", "LOAD", lib2).str, "lib2");
    EXPECT_EQ(c("FUNCTION", "DELETE", "lib2").str, "OK");
  }
  {
    auto v = StartVessel(dir.path(), kAof);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(c("FCALL", "f1", "0").integer, 1);
    EXPECT_TRUE(c("FCALL", "f2", "0").is_error());
    EXPECT_EQ(c("BGREWRITEAOF").str, "Background append only file rewriting started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
  }
  ASSERT_TRUE(fs::exists(Incr(dir, 2)));
  EXPECT_EQ(ReadAll(Incr(dir, 2)), "");  // everything is in the new base
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("FCALL", "f1", "0").integer, 1);
}

// Replies wait for the file; records no reply waits for (active expiry's DEL) reach it within
// about a second, without any other command.
TEST(Aof, ExpiryRecordsReachTheFileWithoutTraffic) {
  TempDir dir;
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("SET", "short", "v", "PX", "50").str, "OK");
  EXPECT_NE(ReadAll(Incr(dir, 1)).find("short"), std::string::npos);  // before the reply
  ASSERT_TRUE(WaitFor(
      [&] { return ReadAll(Incr(dir, 1)).find("$3\r\nDEL\r\n$5\r\nshort") != std::string::npos; },
      5000));
}

TEST(Aof, ConfigSetAppendonlyCreatesTheFiles) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto v = StartVessel(dir.path(), {});
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("CONFIG", "SET", "appendonly", "yes").str, "OK");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "aof_enabled"), "1");
    EXPECT_EQ(c("CONFIG", "SET", "appendfsync", "always").str, "OK");
    Effects(c);
    before = Describe(c);
  }
  auto v = StartVessel(dir.path(), kAof);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
}

TEST(Aof, FailedWriteRefusesWritesUntilItRecovers) {
  TempDir dir;
  auto v = StartVessel(dir.path(), kAof);
  RespClient c = Client(*v);
  c("SET", "a", "1");
  persist::g_fail_writes_after = 0;
  c("SET", "b", "2");  // executed; its record waits in the buffer
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_last_write_status") == "err"; }));
  ASSERT_TRUE(WaitFor([&] { return c("SET", "c", "3").is_error(); }));
  EXPECT_EQ(c("SET", "c", "3").str.rfind("MISCONF Errors writing to the AOF file", 0), 0u);
  persist::g_fail_writes_after = -1;
  ASSERT_TRUE(WaitFor([&] { return !c("SET", "c", "3").is_error(); }, 5000));
  EXPECT_EQ(InfoField(c, "aof_last_write_status"), "ok");
  v->Stop();
  v = StartVessel(dir.path(), kAof);
  RespClient c2 = Client(*v);
  EXPECT_EQ(c2("MGET", "a", "b", "c").elems.size(), 3u);
  EXPECT_EQ(c2("GET", "b").str, "2");
  EXPECT_EQ(c2("GET", "c").str, "3");
}

}  // namespace
}  // namespace vessel::test
