// The container families (deque, omap, bag, multimap) across restarts: each fills keys of every
// shape (small and large, long elements, a TTL), then the data goes through SAVE and a restart,
// or through an AOF rewrite (the base written by the types' serialize callbacks, then commands
// after it) and a restart; every query must answer as before. Each test starts its own servers in
// its own dir, one at a time (a second in-process server would share the modules' registrations
// with the first, which is why these tests have a binary of their own).
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

struct Family {
  std::string name;
  std::function<void(RespClient&)> fill;
  std::function<void(RespClient&)> more;  // after the rewrite: replayed from the AOF
  std::function<std::vector<Reply>(RespClient&)> queries;
};

std::vector<Family> Families() {
  return {
      {"deque",
       [](RespClient& c) {
         for (int k = 0; k < 20; ++k) {
           const std::string key = "d" + Str(k);
           for (int i = 0; i < k * 40 + 1; ++i) c("DEQ.PUSHBACK", key, Str(i * k), "s" + Str(i));
           c("DEQ.INSERT", key, "1", std::string(400, 'x'));
         }
         c("EXPIRE", "d3", "1000");
       },
       [](RespClient& c) { c("DEQ.PUSHFRONT", "d0", "after-rewrite"); },
       [](RespClient& c) {
         std::vector<Reply> out;
         for (int k = 0; k < 20; ++k) out.push_back(c("DEQ.RANGE", "d" + Str(k), "0", "-1"));
         out.push_back(c("TYPE", "d1"));
         Reply ttl = c("TTL", "d3");
         ttl.integer = ttl.integer > 900 ? 1 : 0;
         out.push_back(ttl);
         return out;
       }},
      {"omap",
       [](RespClient& c) {
         for (int k = 0; k < 10; ++k) {
           for (int i = 0; i < k * 100 + 1; ++i)
             c("OMAP.SET", "m" + Str(k), "f" + Str(i * 31 % 1000), i % 2 ? Str(i) : "s" + Str(i));
         }
         c("OMAP.SET", "m1", std::string(300, 'k'), std::string(5000, 'v'));
       },
       [](RespClient& c) { c("OMAP.SET", "m0", "after", "rewrite"); },
       [](RespClient& c) {
         std::vector<Reply> out;
         for (int k = 0; k < 10; ++k) out.push_back(c("OMAP.RANGE", "m" + Str(k), "-", "+"));
         out.push_back(c("OBJECT", "ENCODING", "m9"));
         return out;
       }},
      {"bag",
       [](RespClient& c) {
         for (int i = 0; i < 2000; ++i) c("BAG.ADD", "b", "m" + Str(i * i % 777));
         c("BAG.ADD", "small", "x", "y", "x");
         c("BAG.INCRBY", "small", std::string(250, 'z'), "100");
       },
       [](RespClient& c) { c("BAG.REM", "b", "m0", "2"); },
       [](RespClient& c) {
         return std::vector<Reply>{c("BAG.TOP", "b", "20"), c("BAG.RANGE", "b", "-", "+"),
                                   c("BAG.LEN", "b"), c("BAG.RANGE", "small", "-", "+"),
                                   c("BAG.LEN", "small")};
       }},
      {"multimap",
       [](RespClient& c) {
         for (int k = 0; k < 6; ++k) {
           for (int i = 0; i < k * 150 + 1; ++i)
             c("MMAP.ADD", "mm" + Str(k), "f" + Str(i % 37), "v" + Str(i));
         }
         c("MMAP.ADD", "mm1", std::string(400, 'f'), std::string(3000, 'v'));
       },
       [](RespClient& c) { c("MMAP.DEL", "mm5", "f3"); },
       [](RespClient& c) {
         std::vector<Reply> out;
         for (int k = 0; k < 6; ++k) {
           out.push_back(c("MMAP.RANGE", "mm" + Str(k), "-", "+"));
           out.push_back(c("MMAP.CARD", "mm" + Str(k)));
         }
         return out;
       }},
  };
}

void RoundTrip(const Family& f, bool aof) {
  SCOPED_TRACE(f.name + (aof ? ": aof rewrite" : ": rdb"));
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> params;
  if (aof) params.push_back({"appendonly", "yes"});
  std::vector<Reply> before;
  {
    auto v = StartVessel(dir.path(), params);
    ASSERT_NE(v, nullptr);
    RespClient c = Client(*v);
    f.fill(c);
    if (aof) {
      EXPECT_EQ(c("BGREWRITEAOF").type, Reply::Type::kStatus);
      ASSERT_TRUE(WaitFor([&] { return InfoField(c, "aof_rewrite_in_progress") == "0"; }));
      f.more(c);
    } else {
      EXPECT_EQ(c("SAVE").str, "OK");
    }
    before = f.queries(c);
    for (const Reply& r : before) EXPECT_FALSE(r.is_error()) << r.ToString();
  }
  auto v = StartVessel(dir.path(), params);
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  const std::vector<Reply> after = f.queries(c);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(after[i], before[i]) << i << ": " << after[i].ToString();
}

TEST(ContainersPersistence, SaveAndRestartKeepEveryKey) {
  for (const Family& f : Families()) RoundTrip(f, false);
}

TEST(ContainersPersistence, AofRewriteAndRestartKeepEveryKey) {
  for (const Family& f : Families()) RoundTrip(f, true);
}

}  // namespace
}  // namespace vessel::test
