// Atomicity of multi-key list and set commands under load: threads move elements between keys
// with SMOVE, LMOVE and BLMOVE while others sum SCARD/LLEN over every key (inside MULTI, so the
// sum is one atomic observation) and run SUNIONSTORE; the total never changes and no element
// is duplicated or lost. The container modules the same way: deque producers and blocked
// consumers on both workers, and counters kept in a bag, a multimap and an ordered map by many
// clients at once. Runs under ThreadSanitizer in CI.
#include <unistd.h>

#include <atomic>
#include <map>
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

// Producers push numbered elements onto three deques while consumers, spread over both workers,
// take them with DEQ.BPOPFRONT / DEQ.BPOPBACK over every key: each element arrives exactly once,
// and what one consumer takes from the front of a key, of one producer, comes in push order.
TEST_F(ContainersStress, DequeBlockingPopsDeliverEachElementOnce) {
  constexpr int kProducers = 3, kConsumers = 4;
  const int per_producer = 300 * kScale;
  const int total = kProducers * per_producer;
  std::atomic<int> taken{0}, out_of_order{0};
  std::vector<std::vector<std::string>> got(kConsumers);
  std::vector<std::thread> threads;
  for (int t = 0; t < kConsumers; ++t) {
    threads.emplace_back([&, t] {
      RespClient c = Servers::Get().Vessel();
      std::map<std::string, int> last;  // key and producer -> last sequence taken from the front
      const bool front = t != 0;        // one consumer pops from the back
      while (taken.load() < total) {
        const Reply r = c(front ? "DEQ.BPOPFRONT" : "DEQ.BPOPBACK", "dq0", "dq1", "dq2", "0.05");
        if (r.type != Reply::Type::kArray || r.elems.size() != 2) continue;  // timed out
        ++taken;
        const std::string& e = r.elems[1].str;  // p<producer>:<sequence>
        got[static_cast<size_t>(t)].push_back(e);
        if (!front) continue;
        const size_t colon = e.find(':');
        const std::string stream = r.elems[0].str + "/" + e.substr(0, colon);
        const int seq = std::atoi(e.c_str() + colon + 1);
        auto [it, added] = last.try_emplace(stream, seq);
        if (!added) {
          if (seq <= it->second) ++out_of_order;
          it->second = seq;
        }
      }
    });
  }
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      RespClient c = Servers::Get().Vessel();
      std::mt19937 rng(static_cast<uint32_t>(p));
      for (int i = 0; i < per_producer;) {
        const int batch = std::min(1 + static_cast<int>(rng() % 3), per_producer - i);
        std::vector<std::string> cmd = {"DEQ.PUSHBACK", K("dq", static_cast<int>(rng() % 3))};
        for (int j = 0; j < batch; ++j) cmd.push_back(K("p", p) + ":" + std::to_string(i + j));
        c.Cmd(cmd);
        i += batch;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(out_of_order.load(), 0);
  std::set<std::string> all;
  for (const auto& g : got)
    for (const std::string& e : g) EXPECT_TRUE(all.insert(e).second) << e;
  EXPECT_EQ(all.size(), static_cast<size_t>(total));
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("EXISTS", "dq0", "dq1", "dq2").integer, 0);
}

// Many clients count into one bag (BAG.INCRBY, BAG.REM) and one multimap (MMAP.ADD, MMAP.DEL)
// and overwrite one ordered map's fields, while an auditor reads each container twice inside
// MULTI: the totals agree with the contents every time, and at the end every count is the sum of
// what the clients did.
TEST_F(ContainersStress, BagMultimapAndOmapCountExactly) {
  constexpr int kWriters = 4, kMembers = 16, kFields = 8;
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::atomic<int64_t>> counts(kMembers);
  std::atomic<int64_t> pairs{0};
  std::thread auditor([&] {
    RespClient c = Servers::Get().Vessel();
    while (!stop.load()) {
      c.Send({"MULTI"});
      c.Send({"BAG.LEN", "bag"});
      c.Send({"BAG.RANGE", "bag", "-", "+"});
      c.Send({"MMAP.LEN", "mm"});
      c.Send({"MMAP.RANGE", "mm", "-", "+"});
      c.Send({"OMAP.LEN", "om"});
      c.Send({"OMAP.RANGE", "om", "-", "+"});
      c.Send({"EXEC"});
      for (int i = 0; i < 7; ++i) c.Read();  // OK, QUEUED x 6
      const Reply r = c.Read();
      if (r.elems.size() != 6) {
        ++bad;
        continue;
      }
      int64_t sum = 0;
      for (size_t i = 1; i < r.elems[1].elems.size(); i += 2) sum += r.elems[1].elems[i].integer;
      if (sum != r.elems[0].integer) ++bad;
      if (static_cast<int64_t>(r.elems[3].elems.size()) != 2 * r.elems[2].integer) ++bad;
      if (static_cast<int64_t>(r.elems[5].elems.size()) != 2 * r.elems[4].integer) ++bad;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      RespClient c = Servers::Get().Vessel();
      std::mt19937 rng(static_cast<uint32_t>(100 + t));
      for (int i = 0; i < 300 * kScale; ++i) {
        const int m = static_cast<int>(rng() % kMembers);
        const int64_t by = 1 + static_cast<int64_t>(rng() % 3);
        c("BAG.INCRBY", "bag", K("m", m), std::to_string(by));
        counts[static_cast<size_t>(m)] += by;
        if (rng() % 4 == 0)
          counts[static_cast<size_t>(m)] -= c("BAG.REM", "bag", K("m", m)).integer;
        const std::string field = K("f", static_cast<int>(rng() % kFields));
        pairs += c("MMAP.ADD", "mm", field, K("v", t)).integer;
        if (rng() % 8 == 0) pairs -= c("MMAP.DEL", "mm", field, K("v", t)).integer;
        c("OMAP.SET", "om", field, K("w", t) + ":" + std::to_string(i));
        if (rng() % 8 == 0) c("OMAP.DEL", "om", K("f", static_cast<int>(rng() % kFields)));
      }
    });
  }
  for (auto& w : writers) w.join();
  stop = true;
  auditor.join();
  EXPECT_EQ(bad.load(), 0);
  RespClient c = Servers::Get().Vessel();
  int64_t total = 0;
  for (int m = 0; m < kMembers; ++m) {
    EXPECT_EQ(c("BAG.COUNT", "bag", K("m", m)).integer, counts[static_cast<size_t>(m)].load()) << m;
    total += counts[static_cast<size_t>(m)].load();
  }
  EXPECT_EQ(c("BAG.LEN", "bag").integer, total);
  EXPECT_EQ(c("MMAP.LEN", "mm").integer, pairs.load());
  // Each field of the ordered map holds the last value one of the writers set.
  const Reply om = c("OMAP.RANGE", "om", "-", "+");
  for (size_t i = 1; i < om.elems.size(); i += 2) EXPECT_EQ(om.elems[i].str[0], 'w');
}

}  // namespace
}  // namespace vessel::test
