// Module types in RDB files: vectors and multi_index values (with every index) survive a restart
// as RDB module records, a file holding a type whose module is not loaded is refused with a
// message naming the type, and a type declared not persisted is left out of every save.
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

const Strings kUsers = {"MI.CREATE", "u",       "INDEX", "email",   "email",   "HASH",  "UNIQUE",
                        "INDEX",     "age",     "age",   "ORDERED", "NUMERIC", "INDEX", "name",
                        "name",      "ORDERED", "INDEX", "city",    "city",    "HASH"};

void FillModules(RespClient& c) {
  for (int i = 0; i < 200; ++i) c("VEC.PUSH", "vec", "item" + std::to_string(i % 37));
  c("VEC.PUSH", "vec", std::string(5000, 'v'));
  ASSERT_EQ(c.Cmd(kUsers).str, "OK");
  for (int i = 0; i < 300; ++i) {
    Reply r = c("MI.INSERT", "u", "email", "user" + std::to_string(i) + "@x", "age",
                std::to_string(18 + i % 60), "name", "n" + std::to_string(i * 7919 % 1000), "city",
                "c" + std::to_string(i % 11));
    ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
  }
  c("MI.DEL", "u", "city", "c3");
  c("PEXPIRE", "u", "50000000");
}

// Query results that exercise every index of the multi_index value and the vector's contents.
std::vector<Reply> Queries(RespClient& c) {
  std::vector<Strings> qs = {
      {"VEC.RANGE", "vec", "0", "-1"},
      {"VEC.LEN", "vec"},
      {"VEC.FIND", "vec", "item5"},
      {"MI.CARD", "u"},
      {"MI.GET", "u", "email", "user42@x"},
      {"MI.GET", "u", "city", "c7"},
      {"MI.RANGE", "u", "age", "20", "30"},
      {"MI.RANGE", "u", "name", "[n1", "[n3", "LIMIT", "0", "20", "REV"},
      {"MI.COUNT", "u", "age", "-inf", "+inf"},
      {"MI.SCHEMA", "u"},
      {"TYPE", "u"},
  };
  std::vector<Reply> out;
  for (const auto& q : qs) out.push_back(c.Cmd(q));
  Reply ttl = c("PTTL", "u");
  ttl.integer = (ttl.integer + 50000) / 100000;
  out.push_back(ttl);
  return out;
}

TEST(PersistenceModules, RestartKeepsVectorsAndMultiIndex) {
  TempDir dir;
  std::vector<Reply> before;
  {
    auto v = StartVessel(dir.path(), {});
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    FillModules(c);
    before = Queries(c);
    for (const Reply& r : before) EXPECT_FALSE(r.is_error()) << r.ToString();
    EXPECT_EQ(c("BGSAVE").str, "Background saving started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");
  }
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  const std::vector<Reply> after = Queries(c);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(before[i], after[i])
        << i << ": " << before[i].ToString() << " vs " << after[i].ToString();
  // The same through DUMP/RESTORE (module records in a payload).
  Reply payload = c("DUMP", "u");
  ASSERT_EQ(payload.type, Reply::Type::kBulk);
  EXPECT_EQ(c("RESTORE", "u2", "0", payload.str).str, "OK");
  Reply r1 = c("MI.RANGE", "u2", "age", "20", "30"), r2 = c("MI.RANGE", "u", "age", "20", "30");
  EXPECT_EQ(r1, r2) << r1.ToString() << " vs " << r2.ToString();
}

TEST(PersistenceModules, UnknownModuleTypeIsRefusedByName) {
  TempDir dir;
  {
    auto v = StartVessel(dir.path(), {});
    RespClient c = Client(*v);
    FillModules(c);
    EXPECT_EQ(c("SAVE").str, "OK");
  }
  std::string error;
  EXPECT_EQ(StartVessel(dir.path(), {}, &error, "vectors"), nullptr);
  EXPECT_NE(error.find("vslvector"), std::string::npos) << error;
  // redis-server refuses the file too (it has no such module), naming the type.
  EXPECT_THROW(RedisIn redis(dir.path()), std::exception);
}

// The lines this process logs, for tests that count them.
class LineSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  int Count(const std::string& text) {
    std::lock_guard l(mutex_);
    int n = 0;
    for (const auto& line : lines_) n += line.find(text) != std::string::npos;
    return n;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

// vessel in-process in `dir` with the SDK's test module "good" (type goodval: no serialize,
// VSL_TYPE_NOT_PERSISTED) besides the in-tree modules.
std::unique_ptr<Server> StartWithGood(const std::string& dir) {
  config::Config cfg = config::Defaults();
  cfg.server.port = 0;
  cfg.server.bind = "127.0.0.1";
  cfg.server.threads = 2;
  const auto bin = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  cfg.modules.push_back({(bin / "test_modules" / "good.so").string(), {}});
  std::string why;
  EXPECT_TRUE(config::SetGenericParam(&cfg, "save", "", &why));
  EXPECT_TRUE(config::SetGenericParam(&cfg, "dir", dir, &why));
  auto s = std::make_unique<Server>(cfg);
  if (!s->Start(&why)) {
    ADD_FAILURE() << why;
    return nullptr;
  }
  return s;
}

// SAVE, BGSAVE, the AOF's base and BGREWRITEAOF write every key but those of a type not
// persisted, with one warning per save; DUMP refuses such a key; a restart has the others.
TEST(PersistenceModules, TypeNotPersistedIsLeftOutOfEverySave) {
  auto sink = std::make_shared<LineSink>();
  spdlog::default_logger()->sinks().push_back(sink);
  const std::string warning = "left out keys=2 of types not persisted: goodval";
  TempDir dir;
  {
    auto v = StartWithGood(dir.path());
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    ASSERT_EQ(c("SET", "s", "1").str, "OK");
    ASSERT_EQ(c("GOOD.PUT", "g1", "x").str, "OK");
    ASSERT_EQ(c("GOOD.PUT", "g2", "y").str, "OK");
    EXPECT_EQ(c("SAVE").str, "OK");
    EXPECT_EQ(sink->Count(warning), 1);
    EXPECT_EQ(c("BGSAVE").str, "Background saving started");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "rdb_bgsave_in_progress") == "0"; }));
    EXPECT_EQ(InfoField(c, "rdb_last_bgsave_status"), "ok");
    EXPECT_EQ(sink->Count(warning), 2);
    // Turning the AOF on writes its base at once; BGREWRITEAOF writes a new one.
    EXPECT_EQ(c("CONFIG", "SET", "appendonly", "yes").str, "OK");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
    EXPECT_EQ(c("BGREWRITEAOF").type, Reply::Type::kStatus);
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "aof_rewrite_in_progress") == "0" &&
             InfoField(c, "aof_rewrite_scheduled") == "0";
    }));
    EXPECT_EQ(InfoField(c, "aof_last_bgrewrite_status"), "ok");
    EXPECT_EQ(sink->Count(warning), 4);
    EXPECT_EQ(c("DUMP", "g1").str,
              "ERR DUMP is not supported for type goodval: its module declared it not persisted");
    EXPECT_EQ(c("DUMP", "s").type, Reply::Type::kBulk);
    EXPECT_EQ(c("CONFIG", "SET", "appendonly", "no").str, "OK");
    EXPECT_EQ(c("SAVE").str, "OK");
    EXPECT_EQ(sink->Count(warning), 5);
  }
  auto v = StartWithGood(dir.path());
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("GET", "s").str, "1");
  EXPECT_EQ(c("GOOD.GET", "g1").type, Reply::Type::kNil);
  EXPECT_EQ(c("DBSIZE").integer, 1);
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::find(sinks.begin(), sinks.end(), sink));
}

}  // namespace
}  // namespace vessel::test
