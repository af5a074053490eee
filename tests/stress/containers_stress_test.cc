// Atomicity of multi-key list and set commands under load: threads move elements between keys
// with SMOVE, LMOVE and BLMOVE while others sum SCARD/LLEN over every key (inside MULTI, so the
// sum is one atomic observation) and run SUNIONSTORE; the total never changes and no element
// is duplicated or lost. Runs under ThreadSanitizer in CI.
#include <unistd.h>

#include <atomic>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int kScale = 1;
#else
constexpr int kScale = 4;
#endif
constexpr int kKeys = 6;
constexpr int kElements = 300;

class ContainersStress : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  static std::string K(const char* prefix, int i) { return prefix + std::to_string(i); }
};

// Sum of SCARD (or LLEN) over every key, observed atomically inside MULTI/EXEC.
int64_t AtomicTotal(RespClient& c, const char* len_cmd, const char* prefix) {
  c.Send({"MULTI"});
  for (int i = 0; i < kKeys; ++i) c.Send({len_cmd, prefix + std::to_string(i)});
  c.Send({"EXEC"});
  for (int i = 0; i <= kKeys; ++i) c.Read();
  const Reply r = c.Read();
  int64_t sum = 0;
  for (const Reply& e : r.elems) sum += e.integer;
  return sum;
}

TEST_F(ContainersStress, SmoveKeepsEveryMemberExactlyOnce) {
  RespClient setup = Servers::Get().Vessel();
  for (int e = 0; e < kElements; ++e) setup("SADD", K("s", e % kKeys), K("m", e));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread auditor([&] {
    RespClient c = Servers::Get().Vessel();
    while (!stop.load()) {
      if (AtomicTotal(c, "SCARD", "s") != kElements) ++bad;
      // A union stored elsewhere must hold every member exactly once, too.
      std::vector<std::string> cmd = {"SUNIONSTORE", "union"};
      for (int i = 0; i < kKeys; ++i) cmd.push_back(K("s", i));
      if (c.Cmd(cmd).integer != kElements) ++bad;
    }
  });
  std::vector<std::thread> movers;
  for (int t = 0; t < 6; ++t) {
    movers.emplace_back([&, t] {
      RespClient c = Servers::Get().Vessel();
      std::mt19937 rng(t);
      for (int i = 0; i < 500 * kScale; ++i) {
        const int from = static_cast<int>(rng() % kKeys);
        const int to = static_cast<int>(rng() % kKeys);
        c("SMOVE", K("s", from), K("s", to), K("m", static_cast<int>(rng() % kElements)));
      }
    });
  }
  for (auto& m : movers) m.join();
  stop = true;
  auditor.join();
  EXPECT_EQ(bad.load(), 0);
  std::set<std::string> all;
  for (int i = 0; i < kKeys; ++i)
    for (const Reply& m : setup("SMEMBERS", K("s", i)).elems) EXPECT_TRUE(all.insert(m.str).second);
  EXPECT_EQ(all.size(), static_cast<size_t>(kElements));
}

TEST_F(ContainersStress, LmoveAndBlmoveNeverLoseOrDuplicate) {
  RespClient setup = Servers::Get().Vessel();
  for (int e = 0; e < kElements; ++e) setup("RPUSH", K("l", e % kKeys), K("e", e));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread auditor([&] {
    RespClient c = Servers::Get().Vessel();
    while (!stop.load()) {
      // Elements are either in a list or held by a BLMOVE in flight, which moves atomically:
      // the total over the lists plus the "parking" list is constant.
      c.Send({"MULTI"});
      for (int i = 0; i < kKeys; ++i) c.Send({"LLEN", K("l", i)});
      c.Send({"LLEN", "parking"});
      c.Send({"EXEC"});
      for (int i = 0; i <= kKeys + 1; ++i) c.Read();
      const Reply r = c.Read();
      int64_t sum = 0;
      for (const Reply& e : r.elems) sum += e.integer;
      if (sum != kElements) ++bad;
    }
  });
  std::vector<std::thread> movers;
  for (int t = 0; t < 4; ++t) {
    movers.emplace_back([&, t] {
      RespClient c = Servers::Get().Vessel();
      std::mt19937 rng(10 + t);
      const char* ends[] = {"LEFT", "RIGHT"};
      for (int i = 0; i < 400 * kScale; ++i) {
        const int from = static_cast<int>(rng() % kKeys);
        const int to = static_cast<int>(rng() % kKeys);
        c("LMOVE", K("l", from), K("l", to), ends[rng() % 2], ends[rng() % 2]);
      }
    });
  }
  // Blocked movers: take from "parking" (fed below) and put back into the lists.
  std::vector<std::thread> blockers;
  std::atomic<int> moved_back{0};
  for (int t = 0; t < 2; ++t) {
    blockers.emplace_back([&, t] {
      RespClient c = Servers::Get().Vessel();
      while (!stop.load()) {
        const Reply r = c("BLMOVE", "parking", K("l", t), "LEFT", "RIGHT", "0.05");
        if (r.type == Reply::Type::kBulk) ++moved_back;
      }
    });
  }
  {
    RespClient c = Servers::Get().Vessel();
    std::mt19937 rng(99);
    for (int i = 0; i < 200 * kScale; ++i)
      c("LMOVE", K("l", static_cast<int>(rng() % kKeys)), "parking", "LEFT", "RIGHT");
  }
  for (auto& m : movers) m.join();
  // Let the blockers drain the parking list, then stop everything.
  for (int i = 0; i < 500 && setup("LLEN", "parking").integer > 0; ++i) usleep(10000);
  stop = true;
  auditor.join();
  for (auto& b : blockers) b.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(moved_back.load(), 0);
  std::set<std::string> all;
  for (int i = 0; i < kKeys; ++i)
    for (const Reply& e : setup("LRANGE", K("l", i), "0", "-1").elems)
      EXPECT_TRUE(all.insert(e.str).second) << e.str;
  for (const Reply& e : setup("LRANGE", "parking", "0", "-1").elems)
    EXPECT_TRUE(all.insert(e.str).second) << e.str;
  EXPECT_EQ(all.size(), static_cast<size_t>(kElements));
}

}  // namespace
}  // namespace vessel::test
