// XREAD and XREADGROUP with BLOCK, several clients: each scenario runs on vessel and on
// redis-server and what every client received must be the same (waits poll INFO
// blocked_clients). Then vessel alone: waiters spread over both workers, and producers and
// group consumers on several threads, where every entry is delivered exactly once.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/scene.h"

namespace vessel::test {
namespace {

class StreamsBlockingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { LoadOnlyBuiltModules(); }
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(StreamsBlockingTest, XReadWaitsForNewEntries) {
  for (const char* proto : {"2", "3"}) {
    SameOnBoth([&](Scene& t) {
      t.C(1)("HELLO", proto);
      t.C(0)("XADD", "s", "1-0", "a", "1");
      t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
      t.WaitBlocked(1);
      t.Log("still blocked", t.Quiet(t.C(1)));
      t.Log("xadd", t.C(0)("XADD", "s", "2-0", "b", "2"));
      t.Log("served the new entry only", t.C(1).Read());
      // Two keys, woken by the second; "$" of a missing key is 0-0.
      t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"});
      t.WaitBlocked(1);
      t.Log("xadd t", t.C(0)("XADD", "t", "5-0", "c", "3"));
      t.Log("served t", t.C(1).Read());
      // Woken with entries in both: answered with one stream, the one written first.
      t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"});
      t.WaitBlocked(1);
      t.C(0)("MULTI");
      t.C(0)("XADD", "s", "2-5", "y", "1");
      t.C(0)("XADD", "t", "6-0", "y", "2");
      t.Log("exec both", t.C(0)("EXEC"));
      t.Log("served s only", t.C(1).Read());
      // Entries added in one transaction come together.
      t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
      t.WaitBlocked(1);
      t.C(0)("MULTI");
      t.C(0)("XADD", "s", "3-0", "x", "1");
      t.C(0)("XADD", "s", "4-0", "x", "2");
      t.Log("exec", t.C(0)("EXEC"));
      t.Log("both", t.C(1).Read());
      // An explicit ID ahead of the stream waits until the stream passes it.
      t.C(1).Send({"XREAD", "BLOCK", "0", "COUNT", "1", "STREAMS", "s", "10-0"});
      t.WaitBlocked(1);
      t.Log("behind", t.C(0)("XADD", "s", "9-0", "x", "3"));
      t.Log("not yet", t.Quiet(t.C(1)));
      t.Log("ahead", t.C(0)("XADD", "s", "11-0", "x", "4"));
      t.Log("served", t.C(1).Read());
    });
  }
}

// Readers do not consume: one XADD serves every XREAD waiting, wherever it waits in the queue.
TEST_F(StreamsBlockingTest, EveryReaderIsServed) {
  SameOnBoth([](Scene& t) {
    t.C(0)("XADD", "s", "5-0", "a", "1");
    t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "100-0"});  // first, but not served
    t.WaitBlocked(1);
    for (int i = 2; i <= 4; ++i) {
      t.C(i).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
      t.WaitBlocked(i);
    }
    t.Log("xadd", t.C(0)("XADD", "s", "6-0", "b", "2"));
    for (int i = 2; i <= 4; ++i) t.Log("reader " + std::to_string(i), t.C(i).Read());
    t.Log("first still waits", t.Quiet(t.C(1)));
    t.Log("xadd past it", t.C(0)("XADD", "s", "101-0", "c", "3"));
    t.Log("first served", t.C(1).Read());
  });
}

TEST_F(StreamsBlockingTest, GroupReadersShareTheEntries) {
  SameOnBoth([](Scene& t) {
    t.C(0)("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    t.C(0)("XGROUP", "CREATE", "s", "h", "$");
    t.C(1).Send({"XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"});
    t.WaitBlocked(1);
    t.C(2).Send({"XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">"});
    t.WaitBlocked(2);
    t.C(3).Send({"XREADGROUP", "GROUP", "h", "carol", "BLOCK", "0", "STREAMS", "s", ">"});
    t.WaitBlocked(3);
    t.Log("one entry", t.C(0)("XADD", "s", "1-0", "a", "1"));
    t.Log("alice gets it", t.C(1).Read());
    t.Log("carol's group too", t.C(3).Read());
    t.Log("bob waits", t.Quiet(t.C(2)));
    t.Log("another", t.C(0)("XADD", "s", "2-0", "b", "2"));
    t.Log("bob gets it", t.C(2).Read());
    t.Log("pending g", t.C(0)("XPENDING", "s", "g"));
    t.Log("pending h", t.C(0)("XPENDING", "s", "h"));
    t.Log("groups", t.C(0)("XINFO", "GROUPS", "s"));
    // NOACK: delivered, not pending.
    t.C(1).Send({"XREADGROUP", "GROUP", "g", "dave", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"});
    t.WaitBlocked(1);
    t.C(0)("XADD", "s", "3-0", "c", "3");
    t.Log("dave", t.C(1).Read());
    t.Log("pending after noack", t.C(0)("XPENDING", "s", "g"));
  });
}

// A blocked XREADGROUP learns when its stream or its group goes; XREAD keeps waiting.
TEST_F(StreamsBlockingTest, GoneStreamsAndGroups) {
  SameOnBoth([](Scene& t) {
    auto park = [&](int c, const char* group) {
      t.C(c).Send({"XREADGROUP", "GROUP", group, "c", "BLOCK", "0", "STREAMS", "s", ">"});
    };
    t.C(0)("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    park(1, "g");
    t.WaitBlocked(1);
    t.C(2).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
    t.WaitBlocked(2);
    t.Log("del", t.C(0)("DEL", "s"));
    t.Log("xreadgroup unblocked", t.C(1).Read());
    t.Log("xread still waits", t.Quiet(t.C(2)));
    t.Log("xadd again", t.C(0)("XADD", "s", "1-0", "a", "1"));
    t.Log("xread served", t.C(2).Read());

    t.C(0)("XGROUP", "CREATE", "s", "g", "$");
    park(1, "g");
    t.WaitBlocked(1);
    t.Log("destroy", t.C(0)("XGROUP", "DESTROY", "s", "g"));
    t.Log("no group", t.C(1).Read());

    t.C(0)("XGROUP", "CREATE", "s", "g", "$");
    park(1, "g");
    t.WaitBlocked(1);
    t.Log("overwritten", t.C(0)("SET", "s", "x"));
    t.Log("not a stream any more", t.C(1).Read());

    t.C(0)("DEL", "s");
    t.C(0)("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    park(1, "g");
    t.WaitBlocked(1);
    t.Log("flushall", t.C(0)("FLUSHALL"));
    t.Log("flushed", t.C(1).Read());

    t.C(0)("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    park(1, "g");
    t.WaitBlocked(1);
    t.C(0)("SET", "tmp", "x");
    t.Log("rename over it", t.C(0)("RENAME", "tmp", "s"));
    t.Log("renamed over", t.C(1).Read());
  });
}

TEST_F(StreamsBlockingTest, TimeoutsUnblockAndMkstream) {
  SameOnBoth([](Scene& t) {
    const auto start = Clock::now();
    t.Log("timeout", t.C(1)("XREAD", "BLOCK", "100", "STREAMS", "s", "$"));
    t.Log("waited", Reply{Reply::Type::kBool, "", MsSince(start) >= 100});
    t.C(0)("XGROUP", "CREATE", "g", "grp", "$", "MKSTREAM");
    t.Log("group timeout",
          t.C(1)("XREADGROUP", "GROUP", "grp", "c", "BLOCK", "50", "STREAMS", "g", ">"));
    t.Log("consumer created by the timed out read?", t.C(0)("XINFO", "GROUPS", "g"));
    // XGROUP CREATE ... MKSTREAM creates the stream a reader waits on: empty, it waits on.
    t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "m", "$"});
    t.WaitBlocked(1);
    t.Log("mkstream", t.C(0)("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"));
    t.Log("empty: still waits", t.Quiet(t.C(1)));
    t.Log("xadd", t.C(0)("XADD", "m", "1-0", "a", "1"));
    t.Log("served", t.C(1).Read());
    // CLIENT UNBLOCK: as a timeout, or with an error.
    const std::string id = std::to_string(t.C(1)("CLIENT", "ID").integer);
    t.C(1).Send({"XREAD", "BLOCK", "0", "STREAMS", "m", "$"});
    t.WaitBlocked(1);
    t.Log("unblock", t.admin()("CLIENT", "UNBLOCK", id));
    t.Log("as a timeout", t.C(1).Read());
    t.C(0)("XGROUP", "CREATE", "m", "g2", "$");
    t.C(1).Send({"XREADGROUP", "GROUP", "g2", "c", "BLOCK", "0", "STREAMS", "m", ">"});
    t.WaitBlocked(1);
    t.Log("unblock error", t.admin()("CLIENT", "UNBLOCK", id, "ERROR"));
    t.Log("with an error", t.C(1).Read());
  });
}

// Readers on both workers are all served by one XADD on either.
TEST_F(StreamsBlockingTest, ReadersOnEveryWorker) {
  constexpr int kReaders = 16;
  SameOnBoth([&](Scene& t) {
    std::set<int> workers;
    for (int i = 1; i <= kReaders; ++i) {
      if (t.vessel()) workers.insert(WorkerOfClient(t.C(i)("CLIENT", "ID").integer));
      if (i % 2) {
        t.C(i).Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
      } else {
        t.C(i).Send({"XREADGROUP", "GROUP", "g", "c" + std::to_string(i), "BLOCK", "0", "STREAMS",
                     "s", ">"});
      }
      if (i == 1) {
        t.WaitBlocked(1);
        t.C(0)("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
      }
      t.WaitBlocked(i);
    }
    if (t.vessel()) {
      EXPECT_EQ(workers.size(), 2u) << "all readers landed on one worker";
    }
    t.Log("xadd", t.C(0)("XADD", "s", "1-0", "f", "v"));
    int group_served = 0;
    for (int i = 1; i <= kReaders; i += 2) t.Log("reader " + std::to_string(i), t.C(i).Read());
    // One group reader gets the entry: which one may differ between the servers' schedules.
    std::vector<int> waiting;
    for (int i = 2; i <= kReaders; i += 2) {
      const Reply r = t.Quiet(t.C(i), 300);
      if (r.type == Reply::Type::kClosed) {
        waiting.push_back(i);
      } else {
        ++group_served;
        t.Log("group reader served", r);
      }
    }
    t.Log("one group reader served", Reply{Reply::Type::kInt, "", group_served});
    // One entry at a time, each to the next reader of the group (entries added faster than the
    // readers re-run would reach fewer readers, several entries each: a reader takes what is
    // there when it is served).
    const auto left = static_cast<int64_t>(waiting.size());
    for (int64_t k = 1; k <= left; ++k) {
      t.C(0)("XADD", "s", "*", "f", "v");
      t.WaitBlocked(left - k);
    }
    for (int i : waiting) {
      const Reply r = t.C(i).Read();
      t.Log("later", Reply{Reply::Type::kBool, "",
                           r.type == Reply::Type::kArray && r.elems[0].elems[1].elems.size() == 1});
    }
  });
}

// Producers and consumers of one group on vessel: every entry is delivered exactly once, and
// acknowledged entries leave the pending list.
TEST_F(StreamsBlockingTest, GroupConsumersLoseNothing) {
  constexpr int kProducers = 3, kPerProducer = 1500, kConsumers = 5;
  constexpr int kTotal = kProducers * kPerProducer;
  {
    RespClient c = Servers::Get().Vessel();
    ASSERT_EQ(c("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM").str, "OK");
  }
  std::atomic<int> consumed{0};
  std::vector<std::vector<std::string>> got(kConsumers);
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([p] {
      RespClient c = Servers::Get().Vessel();
      for (int i = 0; i < kPerProducer; ++i) {
        const Reply r = c("XADD", "q", "*", "p", std::to_string(p), "i", std::to_string(i));
        ASSERT_EQ(r.type, Reply::Type::kBulk) << r.ToString();
      }
    });
  }
  for (int k = 0; k < kConsumers; ++k) {
    threads.emplace_back([k, &consumed, &got] {
      RespClient c = Servers::Get().Vessel();
      const std::string me = "c" + std::to_string(k);
      const auto start = Clock::now();
      while (consumed.load() < kTotal && MsSince(start) < 60000) {
        const Reply r = c("XREADGROUP", "GROUP", "g", me, "COUNT", std::to_string(1 + k), "BLOCK",
                          "50", "STREAMS", "q", ">");
        ASSERT_FALSE(r.is_error()) << r.ToString();
        if (r.type != Reply::Type::kArray) continue;
        std::vector<std::string> ack = {"XACK", "q", "g"};
        for (const Reply& e : r.elems[0].elems[1].elems) {
          got[k].push_back(e.elems[1].elems[1].str + "/" + e.elems[1].elems[3].str);
          ack.push_back(e.elems[0].str);
          consumed.fetch_add(1);
        }
        ASSERT_EQ(c.Cmd(ack).integer, static_cast<int64_t>(ack.size() - 3));
      }
    });
  }
  for (auto& t : threads) t.join();
  std::multiset<std::string> all;
  for (const auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(static_cast<int>(all.size()), kTotal);
  std::set<std::string> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size()) << "an entry was delivered twice";
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("XLEN", "q").integer, kTotal);
  EXPECT_EQ(c("XPENDING", "q", "g").elems[0].integer, 0);
  Scene run(true);
  run.WaitBlocked(0);
}

}  // namespace
}  // namespace vessel::test
