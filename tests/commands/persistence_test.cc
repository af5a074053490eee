// Persistence: RDB files written and read by vessel, interoperability with a real redis-server 7.0
// in both directions, background saves, save rules, errors. Each test starts its own servers in
// a temporary directory.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "gtest/gtest.h"
#include "host/persist/rdb_codec.h"
#include "host/persist/rdb_file.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

namespace fs = std::filesystem;

TEST(Persistence, RestartKeepsEveryFamilyDbAndTtl) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    before = Describe(c);
    EXPECT_EQ(c("SAVE").str, "OK");
    v->Stop();
  }
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
  EXPECT_EQ(InfoField(c, "rdb_last_load_keys_loaded"), std::to_string(before.size()));
}

TEST(Persistence, BgsaveAndShutdownSave) {
  TempDir dir;
  std::map<std::string, std::string> before;
  {
    auto v = StartVessel(dir.path(), {{"save", "3600 1"}});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    const int64_t last = c("LASTSAVE").integer;
    Fill(c);
    EXPECT_EQ(c("BGSAVE").str, "Background saving started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");
    EXPECT_EQ(InfoField(c, "rdb_changes_since_last_save"), "0");
    EXPECT_GE(c("LASTSAVE").integer, last);
    c("SET", "after-bgsave", "1");  // saved by SHUTDOWN (save rules exist)
    before = Describe(c);
    c("SHUTDOWN");
    v->Stop();
  }
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(before, Describe(c));
  c("SET", "x", "1");
  c("SHUTDOWN", "NOSAVE");
  v->Stop();
  v = StartVessel(dir.path(), {});
  RespClient c2 = Client(*v);
  EXPECT_EQ(c2("EXISTS", "x").integer, 0);
}

constexpr char kLibrary[] =
    "#!lua name=mylib\n"
    "redis.register_function('twice', function(keys, args) return 2 * tonumber(args[1]) end)";

// FUNCTION libraries are saved in snapshots (SAVE, BGSAVE) and loaded back on start, in Redis's
// RDB_OPCODE_FUNCTION2 records: redis-server loads Vessel's file and Vessel loads redis-server's.
TEST(Persistence, FunctionLibrariesInSnapshots) {
  TempDir dir;
  for (const char* save : {"SAVE", "BGSAVE"}) {
    {
      auto v = StartVessel(dir.path(), {});
      ASSERT_NE(v, nullptr);
      RespClient c = Client(*v);
      c("FUNCTION", "FLUSH");
      EXPECT_EQ(c("FUNCTION", "LOAD", kLibrary).str, "mylib");
      EXPECT_EQ(InfoField(c, "rdb_changes_since_last_save"), "2") << save;  // FLUSH and LOAD
      c(save);
      ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
      EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");
    }
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    EXPECT_EQ(c("FCALL", "twice", "0", "21").integer, 42) << save;
  }
  {
    RedisIn redis(dir.path());
    RespClient r = redis.Client();
    EXPECT_EQ(r("FCALL", "twice", "0", "4").integer, 8);
    r("FUNCTION", "DELETE", "mylib");
    r("FUNCTION", "LOAD",
      "#!lua name=other\nredis.register_function('one', function() return 1 end)");
    EXPECT_EQ(r("SAVE").str, "OK");
  }
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("FCALL", "one", "0").integer, 1);
  EXPECT_TRUE(c("FCALL", "twice", "0", "1").is_error());
}

// A library that does not compile refuses the file, naming the reason.
TEST(Persistence, BadFunctionLibraryRefusesTheFile) {
  TempDir dir;
  {
    RedisIn redis(dir.path());
    RespClient r = redis.Client();
    r("SET", "k", "v");
    r("FUNCTION", "LOAD",
      "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)");
    EXPECT_EQ(r("SAVE").str, "OK");
  }
  // The library's name inside the file changed to one that collides with a function name rule
  // (a function name with a dash is refused by FUNCTION LOAD).
  std::string data;
  {
    std::ifstream in(dir.file("dump.rdb"), std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = data.find("'f1'");
  ASSERT_NE(at, std::string::npos);
  data[at + 2] = '-';
  // Recompute the trailer's CRC64 so that only the library is wrong.
  const uint64_t crc = persist::Crc64(0, data.data(), data.size() - 8);
  for (int i = 0; i < 8; ++i)
    data[data.size() - 8 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  {
    std::ofstream out(dir.file("dump.rdb"), std::ios::binary | std::ios::trunc);
    out << data;
  }
  std::string error;
  auto v = StartVessel(dir.path(), {}, &error);
  EXPECT_EQ(v, nullptr);
  EXPECT_NE(error.find("Failed loading library"), std::string::npos) << error;
}

TEST(Persistence, VesselFileLoadsInRedisWithSameEncodings) {
  TempDir dir, ref_dir;
  std::map<std::string, std::string> expected;
  {
    // The same data written by redis itself: the encodings redis chooses.
    RedisIn ref(ref_dir.path());
    RespClient r = ref.Client();
    Fill(r);
    expected = Describe(r, /*encodings=*/true);
  }
  {
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("SAVE").str, "OK");
  }
  RedisIn redis(dir.path());
  RespClient r = redis.Client();
  ExpectSameData(expected, Describe(r, /*encodings=*/true));
}

TEST(Persistence, RedisFileLoadsInVessel) {
  TempDir dir;
  std::map<std::string, std::string> expected;
  {
    RedisIn redis(dir.path());
    RespClient r = redis.Client();
    Fill(r);
    // Also the encodings of older defaults: ziplist-era settings do not change 7.0's format,
    // but small limits make redis write the plain encodings of small values.
    r("CONFIG", "SET", "hash-max-listpack-entries", "1");
    r("HSET", "plainhash", "a", "1", "b", "2");
    r("CONFIG", "SET", "zset-max-listpack-entries", "1");
    r("ZADD", "plainzset", "1", "a", "2", "b");
    r("CONFIG", "SET", "set-max-intset-entries", "1");
    r("SADD", "plainints", "1", "2");
    r("CONFIG", "SET", "list-max-listpack-size", "2");
    r("RPUSH", "manynodes", "1", "2", "3", "4", "5");
    expected = Describe(r);
    EXPECT_EQ(r("SAVE").str, "OK");
  }
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ExpectSameData(expected, Describe(c));
}

TEST(Persistence, CompressionOffAndOn) {
  TempDir a, b;
  uintmax_t sizes[2];
  int i = 0;
  for (const TempDir* d : {&a, &b}) {
    auto v = StartVessel(d->path(), {{"rdbcompression", i == 0 ? "no" : "yes"}});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("SAVE").str, "OK");
    sizes[i++] = fs::file_size(d->file("dump.rdb"));
    RedisIn redis(d->path());
    RespClient r = redis.Client();
    EXPECT_EQ(r("STRLEN", "db0:long").integer, 5000);
    EXPECT_TRUE(r("LINDEX", "db0:hugeelems", "2").str == Big('j', 70000));
  }
  EXPECT_LT(sizes[1], sizes[0]);
}

// A snapshot is the dataset at BGSAVE's instant, whatever the writers do while it is written.
// kKeys spread over the default 1,024 shards: 20,000 keys make tables under 64 buckets (a
// snapshot chunk is found by hashing the key), 200,000 larger ones (a chunk is a set of buckets).
void BgsaveIsPointInTime(int kKeys) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    for (int i = 0; i < kKeys; i += 1000) {
      std::vector<std::string> cmd = {"MSET"};
      for (int j = i; j < i + 1000; ++j) {
        cmd.push_back("k" + std::to_string(j));
        cmd.push_back("old" + std::to_string(j));
      }
      c.Cmd(cmd);
    }
    std::atomic<bool> stop{false};
    std::atomic<int> writes{0};
    std::thread writer([&] {
      RespClient w = Client(*v);
      for (int n = 0; !stop.load(); ++n) {
        const int k = (n * 7919) % kKeys;
        w("SET", "k" + std::to_string(k), "new");
        w("SET", "added" + std::to_string(n), "x");
        w("DEL", "k" + std::to_string((k + 1) % kKeys));
        writes.fetch_add(1);
      }
    });
    while (writes.load() < 50) std::this_thread::yield();
    EXPECT_EQ(c("BGSAVE").str, "Background saving started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
    stop = true;
    writer.join();
    EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");
  }
  // The file has exactly the keys of one instant: every key is at its value of that instant, so
  // a key k<i> holds "old<i>" or "new", and the writer's own order (SET k, SET added, DEL k+1)
  // is respected: if added<n> is present, so are its predecessors.
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  Reply added = c("KEYS", "added*");
  int max_added = -1;
  for (const Reply& k : added.elems) max_added = std::max(max_added, std::stoi(k.str.substr(5)));
  EXPECT_EQ(static_cast<int>(added.elems.size()), max_added + 1);
  int deleted = 0;
  for (int i = 0; i < kKeys; ++i) {
    Reply r = c("GET", "k" + std::to_string(i));
    if (r.type == Reply::Type::kNil) {
      ++deleted;
      continue;
    }
    EXPECT_TRUE(r.str == "old" + std::to_string(i) || r.str == "new") << r.str;
  }
  // Writer step n deletes one key and adds one: the counts agree at any single instant (up to
  // the one step in flight and keys deleted twice).
  EXPECT_LE(deleted, max_added + 2);
}

TEST(Persistence, BgsaveIsPointInTime) {
  for (int keys : {20000, 200000}) {
    SCOPED_TRACE(keys);
    BgsaveIsPointInTime(keys);
  }
}

TEST(Persistence, SaveRulesTriggerBackgroundSave) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("CONFIG", "SET", "save", "1 2").str, "OK");
  EXPECT_EQ(c("CONFIG", "GET", "save").elems.at(1).str, "1 2");
  RedisIn redis(dir.path());
  RespClient r = redis.Client();
  EXPECT_EQ(c("CONFIG", "SET", "save", "1"), r("CONFIG", "SET", "save", "1"));
  EXPECT_EQ(c("CONFIG", "SET", "save", "0 1"), r("CONFIG", "SET", "save", "0 1"));
  c("SET", "a", "1");
  c("SET", "b", "2");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir.file("dump.rdb")); }, 5000));
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_changes_since_last_save") == "0"; }));
  EXPECT_EQ(c("CONFIG", "SET", "save", "").str, "OK");
  EXPECT_EQ(c("CONFIG", "GET", "save").elems.at(1).str, "");
}

TEST(Persistence, FlushallWithSaveRulesWritesEmptyFile) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), {{"save", "3600 1"}});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("SAVE").str, "OK");
    EXPECT_EQ(c("FLUSHALL").str, "OK");
    c("SHUTDOWN", "NOSAVE");
    v->Stop();
  }
  auto v = StartVessel(dir.path(), {});
  RespClient c = Client(*v);
  EXPECT_EQ(c("DBSIZE").integer, 0);
}

TEST(Persistence, CorruptAndTruncatedFilesAreRefused) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), {});
    RespClient c = Client(*v);
    Fill(c);
    EXPECT_EQ(c("SAVE").str, "OK");
  }
  std::string data;
  {
    std::ifstream in(dir.file("dump.rdb"), std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& bytes) {
    std::ofstream out(dir.file("dump.rdb"), std::ios::binary | std::ios::trunc);
    out << bytes;
  };
  std::string error;
  std::string flipped = data;
  flipped[data.size() / 2] ^= 0x40;
  write(flipped);
  EXPECT_EQ(StartVessel(dir.path(), {}, &error), nullptr);
  // Read in order, as Redis: the flip breaks a record (its offset) or the checksum at the end.
  EXPECT_TRUE(error.find("Wrong RDB checksum") != std::string::npos ||
              error.find("offset") != std::string::npos)
      << error;
  EXPECT_NE(error.find("dump.rdb"), std::string::npos) << error;

  write(data.substr(0, data.size() / 3));
  EXPECT_EQ(StartVessel(dir.path(), {}, &error), nullptr);
  EXPECT_NE(error.find("offset"), std::string::npos) << error;

  write("REDIS0099xxxx");
  EXPECT_EQ(StartVessel(dir.path(), {}, &error), nullptr);
  EXPECT_NE(error.find("Can't handle RDB format version"), std::string::npos) << error;

  write("NOTREDIS");
  EXPECT_EQ(StartVessel(dir.path(), {}, &error), nullptr);
  EXPECT_NE(error.find("Wrong signature"), std::string::npos) << error;

  // Without checksum verification the flipped byte is caught by the decoder or loads wrong data;
  // it never crashes. The intact file still loads.
  write(data);
  EXPECT_NE(StartVessel(dir.path(), {}, &error), nullptr) << error;
}

TEST(Persistence, FailedSaveReportsAndStopsWrites) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {{"save", "3600 1"}});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  c("SET", "a", "1");
  EXPECT_EQ(c("SAVE").str, "OK");
  persist::g_fail_writes_after = 0;  // a full disk
  Fill(c);
  EXPECT_EQ(c("BGSAVE").str, "Background saving started");
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
  persist::g_fail_writes_after = -1;
  EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "err");
  Reply r = c("SET", "b", "2");
  EXPECT_TRUE(r.is_error() && r.str.rfind("MISCONF", 0) == 0) << r.ToString();
  EXPECT_TRUE(c("GET", "a").str == "1");  // reads still served
  EXPECT_EQ(c("CONFIG", "SET", "stop-writes-on-bgsave-error", "no").str, "OK");
  EXPECT_EQ(c("SET", "b", "2").str, "OK");
  // The old file is intact: the failed save left no partial file behind.
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().rfind("temp-", 0), std::string::npos);
  EXPECT_EQ(c("SAVE").str, "OK");
  EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");

  // A dir that does not exist: CONFIG SET refuses it as Redis does.
  Reply bad = c("CONFIG", "SET", "dir", dir.file("missing"));
  EXPECT_TRUE(bad.is_error()) << bad.ToString();
}

TEST(Persistence, BgsaveErrorsAndSchedule) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {});
  RespClient c = Client(*v);
  EXPECT_EQ(c("BGSAVE", "x").str, "ERR syntax error");
  c("MULTI");
  c("BGSAVE");
  Reply r = c("EXEC");
  ASSERT_EQ(r.elems.size(), 1u);
  EXPECT_EQ(r.elems[0].str, "Background saving scheduled");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir.file("dump.rdb")); }, 5000));
}

}  // namespace
}  // namespace vessel::test

namespace vessel::test {
namespace {

// While the dataset loads at startup, commands get Redis's -LOADING error and INFO says loading:1.
TEST(Persistence, LoadingRepliesLoading) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), {});
    RespClient c = Client(*v);
    for (int i = 0; i < 300000; i += 1000) {
      std::vector<std::string> cmd = {"MSET"};
      for (int j = i; j < i + 1000; ++j) {
        cmd.push_back("key:" + std::to_string(j));
        cmd.push_back(std::to_string(j));
      }
      c.Cmd(cmd);
    }
    EXPECT_EQ(c("SAVE").str, "OK");
  }
  config::Config cfg = config::Defaults();
  const int port = FreePort();
  cfg.server.port = port;
  cfg.server.bind = "127.0.0.1";
  cfg.server.threads = 2;
  std::string why;
  config::SetGenericParam(&cfg, "save", "", &why);
  config::SetGenericParam(&cfg, "dir", dir.path(), &why);
  auto server = std::make_unique<Server>(cfg);
  std::atomic<bool> started{false};
  std::thread t([&] {
    std::string error;
    EXPECT_TRUE(server->Start(&error)) << error;
    started = true;
  });
  bool saw_loading = false, saw_info = false;
  while (!started.load()) {
    try {
      RespClient c("127.0.0.1", port);
      Reply r = c("GET", "key:1");
      if (r.is_error()) {
        EXPECT_EQ(r.str, "LOADING Redis is loading the dataset in memory");
        saw_loading = true;
        saw_info = saw_info || InfoField(c, "loading") == "1";
      }
    } catch (...) {
    }
  }
  t.join();
  EXPECT_TRUE(saw_loading);
  EXPECT_TRUE(saw_info);
  RespClient c("127.0.0.1", port);
  EXPECT_EQ(c("GET", "key:1").str, "1");
  EXPECT_EQ(c("DBSIZE").integer, 300000);
  EXPECT_EQ(InfoField(c, "loading"), "0");
}

}  // namespace
}  // namespace vessel::test
