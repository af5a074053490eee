// Module types in RDB files: vectors and multi_index values (with every index) survive a restart
// as RDB module records, and a file holding a type whose module is not loaded is refused with a
// message naming the type.
#include <string>
#include <vector>

#include "gtest/gtest.h"
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

}  // namespace
}  // namespace vessel::test
