// Client-side caching (CLIENT TRACKING) against redis-server: invalidation pushes in RESP3 and on
// __redis__:invalidate for RESP2 redirection, self-invalidation after the reply, NOLOOP,
// OPTIN/OPTOUT with CLIENT CACHING, BCAST prefixes, FLUSHALL/FLUSHDB nulls, broken redirection,
// TRACKINGINFO and GETREDIR, the option errors, tracking-table-max-keys; and on vessel, reads and
// writes on both workers: every invalidation arrives.
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/messaging_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class TrackingTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  void TearDown() override {
    for (int server = 0; server < 2; ++server) {
      RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
      c("CONFIG", "SET", "tracking-table-max-keys", "1000000");
    }
  }
};

TEST_F(TrackingTest, Resp3Invalidations) {
  Scenario(2, 3).Run({
      {0, {"CLIENT", "TRACKING", "ON"}},
      {0, {"GET", "k"}},
      {0, {"MGET", "a", "b"}},
      {1, {"SET", "k", "1"}},
      {1, {"SET", "k", "2"}},  // not read again since: nothing
      {1, {"MSET", "a", "1", "b", "2", "c", "3"}},
      {0, {"GET", "k"}},
      {0, {"SET", "k", "3"}},  // its own write: the invalidation after the reply
      {0, {"GET", "k"}},
      {0, {"EXISTS", "x"}},
      {1, {"DEL", "x"}},  // nothing to delete: no change, no invalidation
      {1, {"SET", "x", "1"}},
      {0, {"TYPE", "k"}},
      {1, {"EXPIRE", "k", "100"}},
      {0, {"TTL", "k"}},
      {1, {"PERSIST", "k"}},
      {0, {"MULTI"}},
      {0, {"GET", "m"}},
      {0, {"EXEC"}},
      {1, {"SET", "m", "1"}},
      {0, {"GET", "k"}},
      {1, {"SELECT", "5"}},
      {1, {"SET", "k", "other db"}},  // keys are tracked by name, across databases, as in Redis
      {0, {"CLIENT", "TRACKING", "OFF"}},
      {0, {"GET", "z"}},
      {1, {"SET", "z", "1"}},
  });
}

TEST_F(TrackingTest, NoLoopOptInOptOut) {
  Scenario(2, 3).Run({
      {0, {"CLIENT", "TRACKING", "ON", "NOLOOP"}},
      {0, {"GET", "a"}},
      {0, {"SET", "a", "1"}},  // its own change: nothing
      {0, {"GET", "a"}},
      {1, {"SET", "a", "2"}},
      {0, {"CLIENT", "TRACKING", "ON", "OPTIN"}},
      {0, {"GET", "b"}},  // not cached: no CACHING YES
      {1, {"SET", "b", "1"}},
      {0, {"CLIENT", "CACHING", "YES"}},
      {0, {"GET", "b"}},
      {0, {"GET", "c"}},  // CACHING applies to one command
      {1, {"MSET", "b", "2", "c", "3"}},
      {0, {"CLIENT", "CACHING", "YES"}},
      {0, {"CLIENT", "ID"}, 0, Step::kSkip},  // CLIENT commands keep the window open
      {0, {"GET", "c"}},
      {1, {"SET", "c", "4"}},
      {0, {"CLIENT", "TRACKINGINFO"}},
      {0, {"CLIENT", "CACHING", "NO"}},
      {0, {"CLIENT", "TRACKING", "ON", "OPTOUT"}},
      {0, {"CLIENT", "TRACKING", "OFF"}},
      {0, {"CLIENT", "TRACKING", "ON", "OPTOUT"}},
      {0, {"GET", "d"}},
      {0, {"CLIENT", "CACHING", "NO"}},
      {0, {"GET", "e"}},  // not cached
      {0, {"CLIENT", "TRACKINGINFO"}},
      {1, {"MSET", "d", "1", "e", "1"}},
      {0, {"CLIENT", "TRACKINGINFO"}},
  });
}

TEST_F(TrackingTest, Broadcast) {
  Scenario(3, 3).Run({
      {0, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "item:"}},
      {1, {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"}},
      {2, {"MSET", "user:1", "a", "item:9", "b", "other", "c", "user:0", "d"}},
      {2, {"DEL", "user:1", "user:1"}},
      {1, {"SET", "user:5", "x"}},  // NOLOOP: not to itself
      {1, {"SET", "zzz", "x"}},
      {0, {"GET", "user:1"}},  // BCAST reads are not remembered
      {0, {"CLIENT", "TRACKINGINFO"}},
      {0, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "us"}},  // overlaps user:
      {0, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "order:"}},
      {0, {"CLIENT", "TRACKINGINFO"}},
      {2, {"SET", "order:1", "x"}},
      {0, {"CLIENT", "TRACKING", "ON"}},  // cannot leave BCAST without OFF
      {0, {"CLIENT", "TRACKING", "OFF"}},
      {0, {"CLIENT", "TRACKINGINFO"}},
      {2, {"SET", "user:2", "x"}},
  });
}

TEST_F(TrackingTest, RedirectToResp2Subscriber) {
  Scenario(4, 2).Run({
      {0, {"SUBSCRIBE", "__redis__:invalidate"}},
      {1, {"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID0"}},
      {1, {"CLIENT", "GETREDIR"}, 0, Step::kSkip},
      {1, {"GET", "k"}},
      {2, {"SET", "k", "1"}},
      {1, {"GET", "k"}},
      {1, {"SET", "k", "2"}},  // its own write: still sent (no NOLOOP)
      {3, {"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID0", "BCAST", "PREFIX", "p"}},
      {2, {"MSET", "p1", "1", "p2", "2", "q", "3"}},
      {2, {"FLUSHDB"}},  // a null for every tracking client
      {1, {"CLIENT", "TRACKING", "ON", "REDIRECT", "999999"}},
      {1, {"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID0", "REDIRECT", "$ID0"}},
      {1, {"CLIENT", "TRACKING", "ON", "REDIRECT", "x"}},
      {2, {"FLUSHALL"}},
  });
}

TEST_F(TrackingTest, RedirectToResp3AndBroken) {
  Scenario(4, 3).Run({
      {1, {"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID0"}},
      {1, {"GET", "a"}},
      {2, {"SET", "a", "1"}},
      {3, {"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID2"}},  // RESP3 redirection target
      {3, {"GET", "a"}},
      // To 2 itself, as a push: redis writes it before 2's reply; vessel too when 3 is on 2's
      // worker, after it otherwise (3's worker sends it).
      {2, {"SET", "a", "2"}, 0, Step::kUnordered},
      {1, {"GET", "a"}},
      {0, {"QUIT"}},
      {1, {"CLIENT", "TRACKINGINFO"}, 0, Step::kSkip},
      {2, {"SET", "a", "3"}, 0, Step::kSkip},  // 1's target is gone: tracking-redir-broken <id>
      {1, {"CLIENT", "TRACKINGINFO"}, 0, Step::kSkip},
      {2, {"FLUSHALL"}, 0, Step::kSkip},
  });
}

TEST_F(TrackingTest, Resp2WithoutRedirectGetsNothing) {
  Scenario(2, 2).Run({
      {0, {"CLIENT", "TRACKING", "ON"}},
      {0, {"GET", "a"}},
      {1, {"SET", "a", "1"}},
      {0, {"GET", "a"}},
      {0, {"FLUSHALL"}},
      {0, {"CLIENT", "GETREDIR"}},
      {0, {"CLIENT", "TRACKINGINFO"}},
  });
}

TEST_F(TrackingTest, OptionErrors) {
  RunTable({
      {{"CLIENT", "TRACKING"},
       Error("ERR wrong number of arguments for 'client|tracking' command")},
      {{"CLIENT", "TRACKING", "maybe"}, Error(kSyntax)},
      {{"CLIENT", "TRACKING", "ON", "BOGUS"}, Error(kSyntax)},
      {{"CLIENT", "TRACKING", "ON", "PREFIX"}, Error(kSyntax)},
      {{"CLIENT", "TRACKING", "ON", "PREFIX", "a"},
       Error("ERR PREFIX option requires BCAST mode to be enabled")},
      {{"CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"},
       Error("ERR OPTIN and OPTOUT are not compatible with BCAST")},
      {{"CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"},
       Error("ERR You can't specify both OPTIN mode and OPTOUT mode")},
      {{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab"},
       Error("ERR Prefix 'a' overlaps with another provided prefix 'ab'. Prefixes for a single "
             "client must not overlap.")},
      {{"CLIENT", "TRACKING", "ON", "REDIRECT", "-1"},
       Error("ERR The client ID you want redirect to does not exist")},
      {{"CLIENT", "TRACKING", "ON", "REDIRECT", "1.5"}, Error(kNotInt)},
      {{"CLIENT", "CACHING", "YES"},
       Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with "
             "OPTIN or OPTOUT mode enabled")},
      {{"CLIENT", "GETREDIR"}, Int(-1)},
      {{"CLIENT", "TRACKING", "ON", "OPTIN"}, Ok()},
      {{"CLIENT", "CACHING", "NO"},
       Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")},
      {{"CLIENT", "CACHING", "MAYBE"}, Error(kSyntax)},
      {{"CLIENT", "TRACKING", "ON", "OPTOUT"},
       Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
             "and then re-enabling it with a different mode.")},
      {{"CLIENT", "TRACKING", "ON", "BCAST"},
       Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
             "and then re-enabling it with a different mode.")},
      {{"CLIENT", "TRACKING", "ON"}, Ok()},  // plain ON: OPTIN is dropped
      {{"CLIENT", "CACHING", "YES"},
       Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")},
      {{"CLIENT", "GETREDIR"}, Int(0)},
      {{"CLIENT", "TRACKINGINFO"},
       Arr({Bulk("flags"), BulkArr({"on"}), Bulk("redirect"), Int(0), Bulk("prefixes"), Arr({})})},
      {{"CLIENT", "TRACKING", "OFF"}, Ok()},
      {{"CLIENT", "TRACKINGINFO"},
       Arr({Bulk("flags"), BulkArr({"off"}), Bulk("redirect"), Int(-1), Bulk("prefixes"),
            Arr({})})},
  });
}

// Redis evicts tracked keys (invalidating them) when the table is over tracking-table-max-keys;
// which keys go is random, so the test counts them.
TEST_F(TrackingTest, TableMaxKeys) {
  for (int server = 0; server < 2; ++server) {
    SCOPED_TRACE(server == 0 ? "vessel" : "redis");
    RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    c("HELLO", "3");
    c("CLIENT", "TRACKING", "ON");
    c("MGET", "k1", "k2", "k3", "k4");
    RespClient admin = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
    EXPECT_EQ(InfoField(admin, "stats", "tracking_total_keys"), 4);
    EXPECT_EQ(InfoField(admin, "stats", "tracking_total_items"), 4);
    EXPECT_EQ(InfoField(admin, "clients", "tracking_clients"), 1);
    admin("CONFIG", "SET", "tracking-table-max-keys", "1");
    c.Send({"PING"});
    std::set<std::string> invalidated;
    c.SetTimeout(5000);
    for (int i = 0; i < 4; ++i) {
      const Reply r = c.Read();
      if (r.type == Reply::Type::kPush) invalidated.insert(r.elems[1].elems[0].str);
    }
    EXPECT_EQ(invalidated.size(), 3u);
    EXPECT_TRUE(ReadQuiet(c, 100).empty());
    EXPECT_EQ(InfoField(admin, "stats", "tracking_total_keys"), 1);
  }
}

// Readers on both workers, writers on both: every read key is invalidated for every reader
// exactly once.
TEST_F(TrackingTest, AcrossWorkers) {
  constexpr int kReaders = 4, kKeys = 300;
  std::vector<RespClient> readers = SpreadConnections(kReaders);
  for (auto& r : readers) {
    r("HELLO", "3");
    r("CLIENT", "TRACKING", "ON");
    for (int k = 0; k < kKeys; ++k) r("GET", "key" + std::to_string(k));
  }
  std::vector<RespClient> writers = SpreadConnections(2);
  Parallel(2, [&](int w) {
    for (int k = w; k < kKeys; k += 2) writers[w]("SET", "key" + std::to_string(k), "v");
  });
  for (int i = 0; i < kReaders; ++i) {
    std::set<std::string> got;
    readers[i].SetTimeout(5000);
    for (int k = 0; k < kKeys; ++k) {
      const Reply r = readers[i].Read();
      ASSERT_EQ(r.type, Reply::Type::kPush) << r.ToString();
      EXPECT_TRUE(got.insert(r.elems[1].elems[0].str).second) << "twice: " << r.ToString();
    }
    EXPECT_EQ(got.size(), static_cast<size_t>(kKeys));
    EXPECT_TRUE(ReadQuiet(readers[i], 50).empty());
  }
}

}  // namespace
}  // namespace vessel::test
