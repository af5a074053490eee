// Blocking sorted-set commands with several clients (BZPOPMIN BZPOPMAX BZMPOP), in the style of
// blocking_test.cc: each scenario runs on vessel and on redis-server and what every client
// received must be the same. Waits poll INFO blocked_clients or read with a timeout.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/scene.h"

namespace vessel::test {
namespace {

class ZsetsBlockingTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(ZsetsBlockingTest, ServedAtOnceWhenDataExists) {
  for (const char* proto : {"2", "3"}) {
    SameOnBoth([&](Scene& t) {
      t.C(1)("HELLO", proto);
      t.C(0)("ZADD", "z", "1", "a", "2", "b", "3", "c");
      t.Log("bzpopmin", t.C(1)("BZPOPMIN", "none", "z", "0"));
      t.Log("bzpopmax", t.C(1)("BZPOPMAX", "z", "5"));
      t.Log("bzmpop", t.C(1)("BZMPOP", "0", "2", "none", "z", "MIN", "COUNT", "5"));
      t.Log("gone", t.C(0)("EXISTS", "z"));
    });
  }
}

TEST_F(ZsetsBlockingTest, BlockedThenServedByAnotherConnection) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BZPOPMIN", "z", "0"});
    t.WaitBlocked(1);
    t.Log("still blocked", t.Quiet(t.C(1)));
    t.Log("zadd", t.C(0)("ZADD", "z", "5", "x", "1", "y"));
    t.Log("served", t.C(1).Read());
    t.Log("rest", t.C(0)("ZRANGE", "z", "0", "-1", "WITHSCORES"));
    // BZMPOP on two keys, woken by the second one.
    t.C(1).Send({"BZMPOP", "0", "2", "a", "b", "MAX", "COUNT", "2"});
    t.WaitBlocked(1);
    t.Log("zadd b", t.C(0)("ZADD", "b", "1", "p", "2", "q", "3", "r"));
    t.Log("bzmpop served", t.C(1).Read());
    // A ZUNIONSTORE into the key wakes a waiter too.
    t.C(1).Send({"BZPOPMAX", "u", "0"});
    t.WaitBlocked(1);
    t.Log("zunionstore", t.C(0)("ZUNIONSTORE", "u", "1", "b"));
    t.Log("woken by store", t.C(1).Read());
    // A GEOADD as well.
    t.C(1).Send({"BZPOPMIN", "g", "0"});
    t.WaitBlocked(1);
    t.Log("geoadd", t.C(0)("GEOADD", "g", "13.361389", "38.115556", "Palermo"));
    t.Log("woken by geoadd", t.C(1).Read());
  });
}

TEST_F(ZsetsBlockingTest, WaitersAreServedFirstComeFirstServed) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BZPOPMIN", "z", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BZPOPMIN", "z", "0"});
    t.WaitBlocked(2);
    t.C(3).Send({"BZMPOP", "0", "1", "z", "MIN", "COUNT", "10"});
    t.WaitBlocked(3);
    t.Log("zadd", t.C(0)("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"));
    t.Log("first", t.C(1).Read());
    t.Log("second", t.C(2).Read());
    t.Log("third", t.C(3).Read());
    t.Log("nothing left", t.C(0)("EXISTS", "z"));
    // One element for two waiters: the first one gets it, the second stays blocked.
    t.C(1).Send({"BZPOPMAX", "z", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BZPOPMAX", "z", "0"});
    t.WaitBlocked(2);
    t.Log("one", t.C(0)("ZADD", "z", "1", "only"));
    t.Log("first gets it", t.C(1).Read());
    t.Log("second waits", t.Quiet(t.C(2)));
    t.Log("another", t.C(0)("ZADD", "z", "2", "next"));
    t.Log("second served", t.C(2).Read());
  });
}

TEST_F(ZsetsBlockingTest, TimeoutsAndErrors) {
  for (const char* proto : {"2", "3"}) {
    SameOnBoth([&](Scene& t) {
      t.C(1)("HELLO", proto);
      const auto start = Clock::now();
      t.Log("bzpopmin times out", t.C(1)("BZPOPMIN", "z", "0.1"));
      t.Log("bzmpop times out", t.C(1)("BZMPOP", "0.05", "1", "z", "MIN"));
      t.Log("waited", Reply{Reply::Type::kBool, "", MsSince(start) >= 100});
      t.Log("negative", t.C(1)("BZPOPMIN", "z", "-1"));
      t.Log("not a float", t.C(1)("BZPOPMAX", "z", "x"));
      t.Log("nan", t.C(1)("BZPOPMAX", "z", "nan"));
      t.Log("huge", t.C(1)("BZPOPMIN", "z", "1e400"));
      t.Log("bzmpop numkeys", t.C(1)("BZMPOP", "0", "0", "z", "MIN"));
      t.Log("bzmpop where", t.C(1)("BZMPOP", "0", "1", "z", "MID"));
      t.Log("bzmpop timeout after numkeys", t.C(1)("BZMPOP", "x", "1", "z", "MIN"));
      t.Log("bzmpop count", t.C(1)("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"));
      t.C(0)("SET", "s", "x");
      t.Log("wrongtype", t.C(1)("BZPOPMIN", "none", "s", "0"));
      t.Log("wrongtype bzmpop", t.C(1)("BZMPOP", "0", "2", "none", "s", "MAX"));
    });
  }
}

TEST_F(ZsetsBlockingTest, InsideMultiTheyDoNotBlock) {
  for (const char* proto : {"2", "3"}) {
    SameOnBoth([&](Scene& t) {
      t.C(0)("HELLO", proto);
      t.Log("multi", t.C(0)("MULTI"));
      t.Log("q1", t.C(0)("BZPOPMIN", "z", "0"));
      t.Log("q2", t.C(0)("BZMPOP", "0", "1", "z", "MAX"));
      t.Log("q3", t.C(0)("ZADD", "z", "1", "a", "2", "b"));
      t.Log("q4", t.C(0)("BZPOPMAX", "z", "0"));
      t.Log("q5", t.C(0)("BZMPOP", "0", "1", "z", "MIN", "COUNT", "3"));
      t.Log("exec", t.C(0)("EXEC"));
    });
  }
}

// Waiters on both workers, woken by one ZADD: each is served once, in the order they blocked.
TEST_F(ZsetsBlockingTest, WaitersOnEveryWorker) {
  constexpr int kWaiters = 16;
  SameOnBoth([&](Scene& t) {
    std::set<int64_t> ids;
    for (int i = 1; i <= kWaiters; ++i) {
      if (t.vessel()) ids.insert(t.C(i)("CLIENT", "ID").integer);
      t.C(i).Send({i % 2 ? "BZPOPMIN" : "BZPOPMAX", "z", "0"});
      t.WaitBlocked(i);
    }
    if (t.vessel()) {
      std::set<int> workers;
      for (int64_t id : ids) workers.insert(WorkerOfClient(id));
      EXPECT_EQ(workers, (std::set<int>{0, 1})) << "all waiters landed on one worker";
    }
    Strings add = {"ZADD", "z"};
    for (int i = 1; i <= kWaiters; ++i)
      add.insert(add.end(), {std::to_string(i), "e" + std::to_string(i)});
    t.Log("zadd", t.C(0).Cmd(add));
    for (int i = 1; i <= kWaiters; ++i) t.Log("waiter " + std::to_string(i), t.C(i).Read());
    t.Log("empty", t.C(0)("EXISTS", "z"));
  });
}

// Producers adding and consumers popping from several connections on vessel: every member is
// consumed exactly once.
TEST_F(ZsetsBlockingTest, ProducersAndConsumersLoseNothing) {
  constexpr int kProducers = 3, kPerProducer = 2000, kConsumers = 4;
  constexpr int kTotal = kProducers * kPerProducer;
  std::atomic<int> consumed{0};
  std::vector<std::vector<std::string>> got(kConsumers);
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([p] {
      RespClient c = Servers::Get().Vessel();
      for (int i = 0; i < kPerProducer; i += 4) {
        Strings cmd = {"ZADD", i % 3 ? "q1" : "q2"};
        for (int j = i; j < i + 4; ++j) {
          cmd.insert(cmd.end(),
                     {std::to_string(j), "p" + std::to_string(p) + "-" + std::to_string(j)});
        }
        ASSERT_EQ(c.Cmd(cmd).integer, 4);
      }
    });
  }
  for (int k = 0; k < kConsumers; ++k) {
    threads.emplace_back([k, &consumed, &got] {
      RespClient c = Servers::Get().Vessel();
      const auto start = Clock::now();
      while (consumed.load() < kTotal && MsSince(start) < 60000) {
        Reply r;
        if (k % 2 == 0) {
          r = c("BZPOPMIN", "q1", "q2", "0.05");
          if (r.type == Reply::Type::kArray) {
            got[k].push_back(r.elems[1].str);
            consumed.fetch_add(1);
          }
        } else {
          r = c("BZMPOP", "0.05", "2", "q2", "q1", "MAX", "COUNT", "3");
          if (r.type == Reply::Type::kArray) {
            for (const Reply& e : r.elems[1].elems) {
              got[k].push_back(e.elems[0].str);
              consumed.fetch_add(1);
            }
          }
        }
        ASSERT_FALSE(r.is_error()) << r.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::multiset<std::string> all;
  for (const auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(static_cast<int>(all.size()), kTotal);
  std::set<std::string> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size()) << "a member was consumed twice";
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("EXISTS", "q1", "q2").integer, 0);
  Scene run(true);
  run.WaitBlocked(0);
}

}  // namespace
}  // namespace vessel::test
