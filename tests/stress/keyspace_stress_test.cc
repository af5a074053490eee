// Several client threads hammer overlapping keys with INCR, MSET, RENAME, DEL, GETDEL and
// transactions; the totals at the end must be exact. Runs under ThreadSanitizer in CI.
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int kScale = 1;  // TSan is ~10x slower: fewer rounds, same races
#else
constexpr int kScale = 5;
#endif
constexpr int kThreads = 8;

class KeyspaceStress : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  RespClient Client() { return Servers::Get().Vessel(); }
};

int64_t AsInt(const Reply& r) {
  if (r.type == Reply::Type::kInt) return r.integer;
  if (r.type == Reply::Type::kBulk) return std::stoll(r.str);
  return 0;
}

TEST_F(KeyspaceStress, IncrOnOverlappingKeysIsExact) {
  const int per_thread = 400 * kScale;
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(t);
    for (int i = 0; i < per_thread; ++i) {
      const std::string key = "counter:" + std::to_string(rng() % 16);
      // Pipeline a few to exercise batches that lock different shards.
      c.Send({"INCR", key});
      c.Send({"INCRBY", key, "2"});
      c.Send({"DECR", key});
      EXPECT_EQ(c.Read().type, Reply::Type::kInt);
      EXPECT_EQ(c.Read().type, Reply::Type::kInt);
      EXPECT_EQ(c.Read().type, Reply::Type::kInt);
    }
  });
  RespClient c = Client();
  int64_t total = 0;
  for (int k = 0; k < 16; ++k) total += AsInt(c("GET", "counter:" + std::to_string(k)));
  EXPECT_EQ(total, int64_t{kThreads} * per_thread * 2);
}

TEST_F(KeyspaceStress, MsetIsAtomicForReaders) {
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    RespClient c = Client();
    while (!stop.load()) {
      const Reply r = c("MGET", "a", "b", "c");
      if (r.elems.size() != 3) {
        ++torn;
        continue;
      }
      if (r.elems[0].type == Reply::Type::kNil) continue;
      if (r.elems[0].str != r.elems[1].str || r.elems[1].str != r.elems[2].str) ++torn;
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    for (int i = 0; i < 300 * kScale; ++i) {
      const std::string v = std::to_string(t) + ":" + std::to_string(i);
      EXPECT_EQ(c("MSET", "a", v, "b", v, "c", v).str, "OK");
    }
  });
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
}

// INCR and GETDEL race on one key: every increment is either collected by a GETDEL or still in
// the key at the end, never lost or counted twice.
TEST_F(KeyspaceStress, GetdelCollectsEveryIncrementOnce) {
  std::atomic<int64_t> collected{0}, increments{0};
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(100 + t);
    for (int i = 0; i < 500 * kScale; ++i) {
      if (rng() % 4 == 0) {
        collected += AsInt(c("GETDEL", "pot"));
      } else {
        EXPECT_EQ(c("INCR", "pot").type, Reply::Type::kInt);
        ++increments;
      }
    }
  });
  RespClient c = Client();
  EXPECT_EQ(collected.load() + AsInt(c("GET", "pot")), increments.load());
}

// A token renamed around a ring of keys: exactly one key of the ring exists at every moment
// (EXISTS over all of them is atomic), and the token's value survives.
TEST_F(KeyspaceStress, RenameRingKeepsExactlyOneKey) {
  constexpr int kRing = 6;
  RespClient setup = Client();
  setup("SET", "ring:0", "token");
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread observer([&] {
    RespClient c = Client();
    std::vector<std::string> cmd = {"EXISTS"};
    for (int i = 0; i < kRing; ++i) cmd.push_back("ring:" + std::to_string(i));
    while (!stop.load()) {
      if (c.Cmd(cmd).integer != 1) ++bad;
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(200 + t);
    for (int i = 0; i < 400 * kScale; ++i) {
      const int from = static_cast<int>(rng() % kRing);
      const int to = (from + 1 + static_cast<int>(rng() % (kRing - 1))) % kRing;
      c("RENAME", "ring:" + std::to_string(from), "ring:" + std::to_string(to));
    }
  });
  stop = true;
  observer.join();
  EXPECT_EQ(bad.load(), 0);
  int found = 0;
  for (int i = 0; i < kRing; ++i) {
    const Reply r = setup("GET", "ring:" + std::to_string(i));
    if (r.type == Reply::Type::kBulk) {
      ++found;
      EXPECT_EQ(r.str, "token");
    }
  }
  EXPECT_EQ(found, 1);
}

// Transfers between accounts inside MULTI/EXEC keep the total constant for every observer.
TEST_F(KeyspaceStress, TransactionsTransferWithoutLoss) {
  constexpr int kAccounts = 8;
  constexpr int64_t kInitial = 1000;
  RespClient setup = Client();
  for (int i = 0; i < kAccounts; ++i) setup("SET", "acct:" + std::to_string(i), "1000");
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread auditor([&] {
    RespClient c = Client();
    std::vector<std::string> cmd = {"MGET"};
    for (int i = 0; i < kAccounts; ++i) cmd.push_back("acct:" + std::to_string(i));
    while (!stop.load()) {
      const Reply r = c.Cmd(cmd);
      int64_t sum = 0;
      for (const Reply& e : r.elems) sum += AsInt(e);
      if (sum != kAccounts * kInitial) ++bad;
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(300 + t);
    for (int i = 0; i < 200 * kScale; ++i) {
      const int a = static_cast<int>(rng() % kAccounts);
      const int b = (a + 1 + static_cast<int>(rng() % (kAccounts - 1))) % kAccounts;
      const std::string amount = std::to_string(rng() % 50);
      c.Send({"MULTI"});
      c.Send({"DECRBY", "acct:" + std::to_string(a), amount});
      c.Send({"INCRBY", "acct:" + std::to_string(b), amount});
      c.Send({"EXEC"});
      EXPECT_EQ(c.Read().str, "OK");
      EXPECT_EQ(c.Read().str, "QUEUED");
      EXPECT_EQ(c.Read().str, "QUEUED");
      const Reply exec = c.Read();
      EXPECT_EQ(exec.elems.size(), 2u) << exec.ToString();
    }
  });
  stop = true;
  auditor.join();
  EXPECT_EQ(bad.load(), 0);
}

// Optimistic locking: WATCH/GET/MULTI/SET/EXEC retried until EXEC succeeds; the final value is
// exactly the number of successful transactions.
TEST_F(KeyspaceStress, WatchRetriesAreExact) {
  const int per_thread = 60 * kScale;
  std::atomic<int> aborted{0};
  Parallel(kThreads / 2, [&](int t) {
    RespClient c = Client();
    for (int i = 0; i < per_thread; ++i) {
      for (;;) {
        c("WATCH", "optimistic");
        const int64_t v = AsInt(c("GET", "optimistic"));
        c("MULTI");
        c("SET", "optimistic", std::to_string(v + 1));
        const Reply r = c("EXEC");
        if (r.type == Reply::Type::kArray) break;
        ++aborted;
      }
    }
  });
  RespClient c = Client();
  EXPECT_EQ(AsInt(c("GET", "optimistic")), int64_t{kThreads / 2} * per_thread);
}

// Whole-keyspace operations racing with writers neither crash nor deadlock, and the keyspace is
// consistent afterwards.
TEST_F(KeyspaceStress, FlushAndSwapdbRaceWithWriters) {
  std::atomic<bool> stop{false};
  std::thread chaos([&] {
    RespClient c = Client();
    std::mt19937 rng(7);
    while (!stop.load()) {
      switch (rng() % 4) {
        case 0:
          c("FLUSHDB");
          break;
        case 1:
          c("SWAPDB", "0", "1");
          break;
        case 2:
          c("KEYS", "k*");
          break;
        default:
          c("SCAN", "0", "COUNT", "100");
          break;
      }
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(400 + t);
    for (int i = 0; i < 300 * kScale; ++i) {
      const std::string k = "k" + std::to_string(rng() % 64);
      switch (rng() % 5) {
        case 0:
          c("SET", k, "v");
          break;
        case 1:
          c("DEL", k, "k" + std::to_string(rng() % 64));
          break;
        case 2:
          c("INCR", k + ":n");
          break;
        case 3:
          c("EXPIRE", k, "100");
          break;
        default:
          c("MSET", k, "1", "k" + std::to_string(rng() % 64), "2");
          break;
      }
    }
  });
  stop = true;
  chaos.join();
  RespClient c = Client();
  const Reply keys = c("KEYS", "*");
  EXPECT_EQ(static_cast<int64_t>(keys.elems.size()), c("DBSIZE").integer);
}

// Eviction racing with writers, readers and transactions on every worker: under allkeys-random
// no write is ever refused, the key count stays near the limit, and the keyspace stays
// consistent. Used memory is injected as 1000 bytes per key (sanitizer builds have no jemalloc
// statistics; the source stays set, and only counts while maxmemory is set); every policy runs
// the same sampling and deletion paths.
TEST_F(KeyspaceStress, EvictionUnderConcurrentWrites) {
  engine::Engine& engine = Servers::Get().vessel().engine();
  engine.set_used_memory_source([&engine] {
    return static_cast<int64_t>(engine.db(0).KeyCount() + engine.db(1).KeyCount()) * 1000;
  });
  RespClient admin = Client();
  for (const char* policy : {"allkeys-random", "allkeys-lru", "allkeys-lfu"}) {
    ASSERT_EQ(admin("CONFIG", "SET", "maxmemory-policy", policy).str, "OK");
    ASSERT_EQ(admin("CONFIG", "SET", "maxmemory", "200000").str, "OK");  // about 200 keys
    std::atomic<int> refused{0};
    Parallel(kThreads, [&](int t) {
      RespClient c = Client();
      std::mt19937 rng(t);
      if (t % 2 == 1) c("SELECT", "1");
      for (int i = 0; i < 150 * kScale; ++i) {
        const std::string k = "e" + std::to_string(rng() % 1000);
        Reply r;
        switch (rng() % 6) {
          case 0:
            r = c("SET", k, "v");
            break;
          case 1:
            r = c("RPUSH", k + ":l", "a", "b");
            break;
          case 2:
            r = c("SADD", k + ":s", "m");
            break;
          case 3:
            r = c("GET", k);
            break;
          case 4:
            c("MULTI");
            c("SET", k, "1");
            c("INCR", k);
            r = c("EXEC");
            break;
          default:
            r = c("SET", k, "v", "EX", "100");
            break;
        }
        if (r.type == Reply::Type::kError && r.str.rfind("OOM", 0) == 0) ++refused;
      }
    });
    EXPECT_EQ(refused.load(), 0) << policy;
    const int64_t keys = admin("DBSIZE").integer;
    EXPECT_LE(keys, 400) << policy;
    EXPECT_EQ(static_cast<int64_t>(admin("KEYS", "*").elems.size()), keys) << policy;
    admin("CONFIG", "SET", "maxmemory", "0");
    admin("FLUSHALL");
  }
  const std::string info = admin("INFO", "stats").str;
  EXPECT_EQ(info.find("evicted_keys:0\r\n"), std::string::npos) << info;
  admin("CONFIG", "SET", "maxmemory-policy", "noeviction");
}

}  // namespace
}  // namespace vessel::test
