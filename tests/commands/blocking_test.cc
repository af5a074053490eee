// Blocking list commands with several clients (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP): each
// scenario runs on vessel and on redis-server and what every client received must be the same,
// except where a step documents a deliberate difference. Waits poll the server (INFO
// blocked_clients) or read with a timeout; fixed sleeps only where elapsed time is the point.
#include <algorithm>
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

class BlockingTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(BlockingTest, ServedAtOnceWhenDataExists) {
  SameOnBoth([](Scene& t) {
    t.C(0)("RPUSH", "k", "a", "b");
    const auto start = Clock::now();
    t.Log("blpop", t.C(1)("BLPOP", "k", "0"));
    t.Log("brpop", t.C(1)("BRPOP", "none", "k", "5"));
    t.Log("fast", Reply{Reply::Type::kBool, "", MsSince(start) < 1000});
    t.Log("exists", t.C(0)("EXISTS", "k"));
  });
}

TEST_F(BlockingTest, BlockedThenServedByPush) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("still blocked", t.Quiet(t.C(1)));
    t.Log("rpush", t.C(0)("RPUSH", "k", "x"));
    t.Log("served", t.C(1).Read());
    t.Log("llen", t.C(0)("LLEN", "k"));
    // LPUSH of several: the waiter takes the head after the whole push.
    t.C(1).Send({"BRPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("lpush", t.C(0)("LPUSH", "k", "a", "b", "c"));
    t.Log("brpop served", t.C(1).Read());
    t.Log("rest", t.C(0)("LRANGE", "k", "0", "-1"));
    // LPUSHX and RPUSHX on a missing key do not create it: the waiter stays.
    t.C(0)("DEL", "k");
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("lpushx", t.C(0)("LPUSHX", "k", "x"));
    t.Log("after lpushx", t.Quiet(t.C(1)));
    t.Log("linsert", t.C(0)("LINSERT", "k", "BEFORE", "a", "x"));
    t.Log("rpush again", t.C(0)("RPUSH", "k", "y"));
    t.Log("served again", t.C(1).Read());
  });
}

TEST_F(BlockingTest, Timeouts) {
  SameOnBoth([](Scene& t) {
    auto start = Clock::now();
    t.Log("blpop 0.1", t.C(1)("BLPOP", "k", "0.1"));
    const int64_t ms = MsSince(start);
    t.Log("waited about 0.1 s", Reply{Reply::Type::kBool, "", ms >= 90 && ms < 3000});
    t.Log("blmove 0.05", t.C(1)("BLMOVE", "k", "d", "LEFT", "RIGHT", "0.05"));
    t.Log("brpoplpush 0.05", t.C(1)("BRPOPLPUSH", "k", "d", "0.05"));
    t.Log("blmpop 0.05", t.C(1)("BLMPOP", "0.05", "1", "k", "LEFT", "COUNT", "2"));
    t.C(2)("HELLO", "3");
    t.Log("blpop resp3", t.C(2)("BLPOP", "k", "0.05"));
    t.Log("blmove resp3", t.C(2)("BLMOVE", "k", "d", "LEFT", "RIGHT", "0.05"));
    // Timeout 0 waits until served: it is still blocked well after the short ones expired.
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    t.Log("0 is forever", t.Quiet(t.C(1), 100));
    t.C(0)("RPUSH", "k", "late");
    t.Log("served", t.C(1).Read());
    // A timeout that ends while another client waits forever: only the first times out.
    start = Clock::now();
    t.C(1).Send({"BLPOP", "k", "0.2"});
    t.C(2).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(2);
    t.Log("first times out", t.C(1).Read());
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "k", "v");
    t.Log("second served", t.C(2).Read());
  });
}

// A timeout of about 317 years blocks (Redis) rather than timing out at once.
TEST_F(BlockingTest, VeryLongTimeout) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "1e10"});
    t.Log("still blocked", t.Quiet(t.C(1), 300));
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "k", "x");
    t.C(1).SetTimeout(2000);
    t.Log("served", t.C(1).Read());
  });
}

TEST_F(BlockingTest, ManyKeys) {
  SameOnBoth([](Scene& t) {
    // Data in several keys: the first non-empty key in argument order.
    t.C(0)("RPUSH", "c", "c1", "c2");
    t.C(0)("RPUSH", "b", "b1");
    t.Log("argument order", t.C(1)("BLPOP", "a", "b", "c", "0"));
    t.Log("argument order brpop", t.C(1)("BRPOP", "a", "c", "b", "0"));
    t.Log("blmpop", t.C(1)("BLMPOP", "0", "3", "a", "b", "c", "LEFT", "COUNT", "9"));
    // Blocked on three keys: a push to any of them serves it.
    t.C(1).Send({"BLPOP", "a", "b", "c", "0"});
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "c", "x");
    t.Log("served from c", t.C(1).Read());
    t.C(1).Send({"BLMPOP", "0", "3", "a", "b", "c", "RIGHT", "COUNT", "2"});
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "b", "1", "2", "3");
    t.Log("blmpop served from b", t.C(1).Read());
    t.Log("left in b", t.C(0)("LRANGE", "b", "0", "-1"));
    t.C(0)("DEL", "b");
    // Two keys get data in one transaction: Redis 7.0 serves from the key that became ready
    // first (c); vessel re-runs the command, which takes the first non-empty key in argument
    // order (b), as Redis 7.2 does. Either way exactly one element is taken.
    t.C(1).Send({"BLPOP", "a", "b", "c", "0"});
    t.WaitBlocked(1);
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "c", "from-c");
    t.C(0)("RPUSH", "b", "from-b");
    t.Log("exec", t.C(0)("EXEC"));
    const Reply served = t.C(1).Read();
    t.Log("served from the first ready key", served, /*compare=*/false);
    EXPECT_EQ(served, t.vessel() ? BulkArray({"b", "from-b"}) : BulkArray({"c", "from-c"}));
    const int64_t left = t.C(0)("LLEN", "b").integer + t.C(0)("LLEN", "c").integer;
    t.Log("left", Reply{Reply::Type::kInt, "", left});
  });
}

TEST_F(BlockingTest, FifoAmongWaiters) {
  SameOnBoth([](Scene& t) {
    for (int i = 1; i <= 3; ++i) {
      t.C(i).Send({"BLPOP", "k", "0"});
      t.WaitBlocked(i);
    }
    for (int i = 1; i <= 3; ++i) {
      t.C(0)("RPUSH", "k", "e" + std::to_string(i));
      t.Log("waiter " + std::to_string(i), t.C(i).Read());
    }
    t.Log("empty", t.C(0)("EXISTS", "k"));
  });
}

TEST_F(BlockingTest, OnePushServesSeveralWaiters) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BRPOP", "k", "0"});
    t.WaitBlocked(2);
    t.C(3).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(3);
    t.Log("rpush 2", t.C(0)("RPUSH", "k", "x", "y"));
    t.Log("first", t.C(1).Read());
    t.Log("second", t.C(2).Read());
    t.Log("third waits", t.Quiet(t.C(3)));
    t.WaitBlocked(1);
    t.Log("exists", t.C(0)("EXISTS", "k"));
    t.C(0)("LPUSH", "k", "z", "w");
    t.Log("third", t.C(3).Read());
    t.Log("left", t.C(0)("LRANGE", "k", "0", "-1"));
  });
}

TEST_F(BlockingTest, MovesAndTransactionsWakeWaiters) {
  SameOnBoth([](Scene& t) {
    t.C(0)("RPUSH", "src", "a", "b", "c", "d");
    t.C(1).Send({"BLPOP", "dst", "0"});
    t.WaitBlocked(1);
    t.Log("lmove", t.C(0)("LMOVE", "src", "dst", "LEFT", "RIGHT"));
    t.Log("served by lmove", t.C(1).Read());
    t.C(1).Send({"BRPOP", "dst", "0"});
    t.WaitBlocked(1);
    t.Log("rpoplpush", t.C(0)("RPOPLPUSH", "src", "dst"));
    t.Log("served by rpoplpush", t.C(1).Read());
    t.C(1).Send({"BLMPOP", "0", "1", "dst", "LEFT", "COUNT", "5"});
    t.WaitBlocked(1);
    t.Log("lmpop", t.C(0)("LMPOP", "1", "src", "LEFT"));
    t.Log("linsert on missing", t.C(0)("LINSERT", "dst", "AFTER", "x", "y"));
    t.Log("lmove into it", t.C(0)("LMOVE", "src", "dst", "RIGHT", "LEFT"));
    t.Log("served by lmove 2", t.C(1).Read());
    // A transaction pushes twice: the waiter is served once it completed.
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "k", "1");
    t.C(0)("RPUSH", "k", "2");
    t.C(0)("LSET", "k", "0", "one");
    t.Log("exec", t.C(0)("EXEC"));
    t.Log("served by exec", t.C(1).Read());
    t.Log("left", t.C(0)("LRANGE", "k", "0", "-1"));
    // RENAME and COPY of a list onto the key wake the waiter too.
    t.C(0)("DEL", "k");
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "tmp", "renamed");
    t.Log("rename", t.C(0)("RENAME", "tmp", "k"));
    t.Log("served by rename", t.C(1).Read());
  });
}

// A pushed element travels down a chain of BLMOVE waiters to a BLPOP at the end.
TEST_F(BlockingTest, BlmoveChain) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "d2", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLMOVE", "d1", "d2", "LEFT", "RIGHT", "0"});
    t.WaitBlocked(2);
    t.C(3).Send({"BRPOPLPUSH", "s", "d1", "0"});
    t.WaitBlocked(3);
    t.Log("rpush", t.C(0)("RPUSH", "s", "x"));
    t.Log("brpoplpush", t.C(3).Read());
    t.Log("blmove", t.C(2).Read());
    t.Log("blpop", t.C(1).Read());
    t.Log("all empty", t.C(0)("EXISTS", "s", "d1", "d2"));
    // The same list as source and destination: a waiter rotating it.
    t.C(1).Send({"BLMOVE", "r", "r", "RIGHT", "LEFT", "0"});
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "r", "1", "2");
    t.Log("rotate", t.C(1).Read());
    t.Log("rotated", t.C(0)("LRANGE", "r", "0", "-1"));
  });
}

// Host bug (reported): a BLMOVE waiter is queued on its destination key too, so while it is the
// head of that queue a push to the destination wakes only it; it finds its source empty, stays
// blocked, and the BLPOP waiter behind it is never woken.
TEST_F(BlockingTest, BlmoveWaiterDoesNotStarveWaitersOnItsDestination) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLPOP", "dst", "0"});
    t.WaitBlocked(2);
    t.C(0)("RPUSH", "dst", "x");
    t.C(2).SetTimeout(2000);
    t.Log("blpop on the destination", t.C(2).Read());
    t.Log("blmove still blocked", t.Quiet(t.C(1)));
    t.C(0)("RPUSH", "src", "y");
    t.C(1).SetTimeout(2000);
    t.Log("blmove", t.C(1).Read());
  });
}

// Host bug (reported): a waiter woken by a push whose element is gone by the time its re-run
// executes (taken in the same transaction) must simply stay blocked and send nothing.
TEST_F(BlockingTest, WakeUpWithNothingLeftStaysBlocked) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "k", "x");
    t.C(0)("LPOP", "k");
    t.Log("exec", t.C(0)("EXEC"));
    t.Log("still blocked", t.Quiet(t.C(1)));
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "k", "y");
    t.C(1).SetTimeout(2000);
    t.Log("served", t.C(1).Read());
    t.Log("nothing more", t.Quiet(t.C(1), 100));
  });
}

TEST_F(BlockingTest, KilledWaiter) {
  SameOnBoth([](Scene& t) {
    const int64_t id = t.C(1)("CLIENT", "ID").integer;
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(2);
    t.Log("kill", t.C(0)("CLIENT", "KILL", "ID", std::to_string(id)));
    t.Log("killed", Reply{Reply::Type::kBool, "", t.C(1).ReadEof()});
    t.WaitBlocked(1);
    t.Log("rpush", t.C(0)("RPUSH", "k", "x"));
    t.Log("next waiter", t.C(2).Read());
    t.Log("nothing lost", t.C(0)("LLEN", "k"));
    t.Log("ping", t.C(0)("PING"));
  });
}

// Killing the waiter a push just woke: vessel may already have served it (the kill is handled
// after the wake-up on the waiter's worker); Redis kills it first. Either way the element goes to
// exactly one client: nothing lost, nothing duplicated.
TEST_F(BlockingTest, KillRacingAWakeUp) {
  SameOnBoth([](Scene& t) {
    const int64_t id = t.C(1)("CLIENT", "ID").integer;
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(2);
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "k", "x");
    t.C(0)("CLIENT", "KILL", "ID", std::to_string(id));
    t.Log("exec", t.C(0)("EXEC"));
    const Reply first = t.C(1).Read();
    const bool first_got_it = first.type == Reply::Type::kArray;
    t.Log("killed waiter", first, /*compare=*/false);
    const Reply second = first_got_it ? t.Quiet(t.C(2), 300) : t.C(2).Read();
    t.Log("other waiter", second, /*compare=*/false);
    const int64_t left = t.C(0)("LLEN", "k").integer;
    const int served = (first_got_it ? 1 : 0) + (second.type == Reply::Type::kArray ? 1 : 0);
    t.Log("exactly once", Reply{Reply::Type::kInt, "", served + left});
    if (!first_got_it) {
      EXPECT_EQ(second, BulkArray({"k", "x"}));
    }
    if (first_got_it) {
      EXPECT_TRUE(t.vessel()) << "redis served a killed client";
      EXPECT_EQ(first, BulkArray({"k", "x"}));
      t.C(0)("RPUSH", "k", "y");  // release the other waiter
      EXPECT_EQ(t.C(2).Read(), BulkArray({"k", "y"}));
    }
  });
}

TEST_F(BlockingTest, DisconnectedWaiter) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLMOVE", "k", "d", "LEFT", "LEFT", "0"});
    t.WaitBlocked(2);
    t.C(1).Close();
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "k", "x");
    t.Log("next waiter", t.C(2).Read());
    t.Log("moved", t.C(0)("LRANGE", "d", "0", "-1"));
    // A waiter that disconnects right after a push woke it: the element is not lost.
    t.C(3).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(4).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(2);
    t.C(0).Send({"RPUSH", "k", "y"});
    t.C(3).Close();
    t.Log("rpush", t.C(0).Read());
    t.C(4).SetTimeout(1000);
    const Reply r = t.C(4).Read();
    const int64_t left = t.C(0)("LLEN", "k").integer;
    // Redis serves the closed client when the push comes first (its reply is lost with the
    // connection, as it would be in vessel), else the other one.
    t.Log("served or left", Reply{Reply::Type::kBool, "",
                                  r == BulkArray({"k", "y"}) || r.type == Reply::Type::kClosed});
    if (r.type == Reply::Type::kClosed) {
      EXPECT_EQ(left, 0);
      t.C(0)("RPUSH", "k", "z");
      t.C(4).Read();
    }
  });
}

TEST_F(BlockingTest, FlushAndDeleteKeepWaitersBlocked) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLMPOP", "0", "2", "k", "j", "LEFT"});
    t.WaitBlocked(2);
    t.Log("del", t.C(0)("DEL", "k", "j"));
    t.Log("flushall", t.C(0)("FLUSHALL"));
    t.Log("flushdb", t.C(0)("FLUSHDB"));
    t.Log("flushall async", t.C(0)("FLUSHALL", "ASYNC"));
    t.Log("still blocked", t.Quiet(t.C(1)));
    t.Log("still blocked 2", t.Quiet(t.C(2), 50));
    t.WaitBlocked(2);
    // A key created and deleted in one transaction serves nobody.
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "k", "gone");
    t.C(0)("DEL", "k");
    t.Log("exec", t.C(0)("EXEC"));
    t.Log("still blocked 3", t.Quiet(t.C(1)));
    t.C(0)("RPUSH", "j", "x");
    t.Log("served 2", t.C(2).Read());
    t.C(0)("RPUSH", "k", "y");
    t.Log("served 1", t.C(1).Read());
    // An expired list does not serve.
    t.C(1).Send({"BLPOP", "e", "0"});
    t.WaitBlocked(1);
    t.C(0)("MULTI");
    t.C(0)("RPUSH", "e", "old");
    t.C(0)("PEXPIRE", "e", "1");
    t.C(0)("EXEC");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t.C(0)("RPUSH", "e", "new");
    t.C(1).SetTimeout(2000);
    const Reply r = t.C(1).Read();
    // Redis may serve "old" when the push comes before the expiry; never both.
    t.Log("expired", Reply{Reply::Type::kBool, "",
                           r == BulkArray({"e", "new"}) || r == BulkArray({"e", "old"})});
  });
}

TEST_F(BlockingTest, ClientUnblock) {
  SameOnBoth([](Scene& t) {
    const std::string id = std::to_string(t.C(1)("CLIENT", "ID").integer);
    t.Log("not blocked", t.C(0)("CLIENT", "UNBLOCK", id));
    t.Log("bad reason", t.C(0)("CLIENT", "UNBLOCK", id, "MAYBE"));
    t.Log("bad id", t.C(0)("CLIENT", "UNBLOCK", "x"));
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("unblock", t.C(0)("CLIENT", "UNBLOCK", id));
    t.Log("timed out", t.C(1).Read());
    t.C(1).Send({"BRPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("unblock timeout", t.C(0)("CLIENT", "UNBLOCK", id, "TIMEOUT"));
    t.Log("timed out 2", t.C(1).Read());
    t.C(1).Send({"BLMOVE", "k", "d", "LEFT", "RIGHT", "0"});
    t.WaitBlocked(1);
    t.Log("unblock blmove", t.C(0)("CLIENT", "UNBLOCK", id, "timeout"));
    t.Log("blmove timed out", t.C(1).Read());
    t.C(1).Send({"BLMPOP", "0", "1", "k", "LEFT"});
    t.WaitBlocked(1);
    t.Log("unblock error", t.C(0)("CLIENT", "UNBLOCK", id, "ERROR"));
    t.Log("error", t.C(1).Read());
    t.Log("usable", t.C(1)("PING"));
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.C(2).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(2);
    t.Log("unblock first", t.C(0)("CLIENT", "UNBLOCK", id, "ERROR"));
    t.Log("error 2", t.C(1).Read());
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "k", "x");
    t.Log("second served", t.C(2).Read());
  });
}

TEST_F(BlockingTest, InsideMultiNeverBlocks) {
  SameOnBoth([](Scene& t) {
    t.C(1)("MULTI");
    t.C(1)("BLPOP", "k", "0");
    t.C(1)("BRPOP", "k", "j", "0");
    t.C(1)("BLMOVE", "k", "d", "LEFT", "RIGHT", "0");
    t.C(1)("BRPOPLPUSH", "k", "d", "0");
    t.C(1)("BLMPOP", "0", "1", "k", "LEFT");
    t.C(1)("RPUSH", "k", "x");
    t.C(1)("BLPOP", "k", "0");
    t.Log("exec", t.C(1)("EXEC"));
    t.Log("none blocked", Reply{Reply::Type::kInt, "", t.Blocked()});
  });
}

// A waiter whose key is overwritten with another type stays blocked (to it the key is still
// empty) and is served once the key holds a list again, as in Redis 7.0.
TEST_F(BlockingTest, KeySetToAnotherTypeWhileBlocked) {
  SameOnBoth([](Scene& t) {
    t.C(1).Send({"BLPOP", "k", "0"});
    t.WaitBlocked(1);
    t.Log("set", t.C(0)("SET", "k", "string"));
    t.Log("waiter after SET", t.Quiet(t.C(1), 300));
    t.C(0)("DEL", "k");
    t.C(0)("RPUSH", "k", "x");
    t.Log("served after DEL and RPUSH", t.C(1).Read());
    t.C(0)("DEL", "k");
    // The destination of a BLMOVE waiter holding a string: both reply WRONGTYPE when served
    // and the element stays in the source.
    t.C(0)("SET", "d", "string");
    t.C(2).Send({"BLMOVE", "s", "d", "LEFT", "RIGHT", "0"});
    t.WaitBlocked(1);
    t.C(0)("RPUSH", "s", "y");
    t.Log("blmove to a string", t.C(2).Read());
    t.Log("source kept it", t.C(0)("LRANGE", "s", "0", "-1"));
  });
}

// A transaction that pushes and then replaces the list by a string wakes nobody: waiters are
// served by what the key holds when the transaction ends. Every blocking list command.
TEST_F(BlockingTest, TransactionLeavingAnotherTypeKeepsWaitersBlocked) {
  const std::vector<std::vector<std::string>> waiters = {
      {"BLPOP", "list", "0"},
      {"BRPOP", "other", "list", "0"},
      {"BLMOVE", "list", "dst", "LEFT", "RIGHT", "0"},
      {"BRPOPLPUSH", "list", "dst", "0"},
      {"BLMPOP", "0", "1", "list", "LEFT"}};
  for (const auto& waiter : waiters) {
    SCOPED_TRACE(Show(waiter));
    SameOnBoth([&](Scene& t) {
      t.C(1).Send(waiter);
      t.WaitBlocked(1);
      t.C(0)("MULTI");
      t.C(0)("LPUSH", "list", "a");
      t.C(0)("DEL", "list");
      t.C(0)("SET", "list", "foo");
      t.Log("exec", t.C(0)("EXEC"));
      t.Log("still blocked", t.Quiet(t.C(1), 300));
      t.C(0)("DEL", "list");
      t.C(0)("LPUSH", "list", "b");
      t.Log("served b", t.C(1).Read());
      t.Log("left", t.C(0)("LRANGE", "dst", "0", "-1"));
    });
  }
}

TEST_F(BlockingTest, PipelinedCommandsWaitForTheBlockedOne) {
  SameOnBoth([](Scene& t) {
    std::string batch;
    for (const auto& cmd : std::vector<std::vector<std::string>>{{"BLPOP", "k", "0"},
                                                                 {"PING"},
                                                                 {"LLEN", "k"},
                                                                 {"ECHO", "after"},
                                                                 {"BLPOP", "k", "0"},
                                                                 {"RPUSH", "k", "self"},
                                                                 {"LPOP", "k"}}) {
      batch += RespClient::Encode(cmd);
    }
    t.C(1).SendRaw(batch);
    t.WaitBlocked(1);
    t.Log("nothing yet", t.Quiet(t.C(1)));
    t.C(0)("RPUSH", "k", "a", "b");
    for (int i = 0; i < 7; ++i) t.Log("reply " + std::to_string(i), t.C(1).Read());
  });
}

// Waiters spread over both workers (SO_REUSEPORT spreads the connections): every one is served
// exactly once, in the order they blocked.
TEST_F(BlockingTest, WaitersOnEveryWorker) {
  constexpr int kWaiters = 24;
  SameOnBoth([&](Scene& t) {
    std::set<int64_t> ids;
    for (int i = 1; i <= kWaiters; ++i) {
      if (t.vessel()) ids.insert(t.C(i)("CLIENT", "ID").integer);
      t.C(i).Send({i % 2 ? "BLPOP" : "BRPOP", "k", "0"});
      t.WaitBlocked(i);
    }
    if (t.vessel()) {
      std::set<int> workers;
      Servers::Get().vessel().engine().ForEachSession([&](engine::Session* s) {
        if (ids.contains(static_cast<int64_t>(s->id()))) workers.insert(s->worker());
      });
      EXPECT_EQ(workers.size(), 2u) << "all waiters landed on one worker";
    }
    std::vector<std::string> push = {"RPUSH", "k"};
    for (int i = 1; i <= kWaiters; ++i) push.push_back("e" + std::to_string(i));
    t.Log("rpush", t.C(0).Cmd(push));
    for (int i = 1; i <= kWaiters; ++i) t.Log("waiter " + std::to_string(i), t.C(i).Read());
    t.Log("empty", t.C(0)("EXISTS", "k"));
  });
}

// N producers and M consumers of different kinds on vessel: every element pushed is consumed
// exactly once.
TEST_F(BlockingTest, ProducersAndConsumersLoseNothing) {
  constexpr int kProducers = 4, kPerProducer = 3000, kConsumers = 6;
  constexpr int kTotal = kProducers * kPerProducer;
  std::atomic<int> consumed{0};
  std::vector<std::vector<std::string>> got(kConsumers);
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([p] {
      RespClient c = Servers::Get().Vessel();
      for (int i = 0; i < kPerProducer;) {
        const std::string key = (i % 3 == 0) ? "q1" : "q2";
        const int batch = std::min(1 + i % 4, kPerProducer - i);
        std::vector<std::string> cmd = {i % 2 ? "RPUSH" : "LPUSH", key};
        for (int j = 0; j < batch; ++j)
          cmd.push_back("p" + std::to_string(p) + "-" + std::to_string(i + j));
        const Reply r = c.Cmd(cmd);
        ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
        i += batch;
      }
    });
  }
  for (int k = 0; k < kConsumers; ++k) {
    threads.emplace_back([k, &consumed, &got] {
      RespClient c = Servers::Get().Vessel();
      auto take = [&](const std::string& v) {
        got[k].push_back(v);
        consumed.fetch_add(1);
      };
      const auto start = Clock::now();
      while (consumed.load() < kTotal && MsSince(start) < 60000) {
        Reply r;
        switch (k % 3) {
          case 0:
            r = c("BLPOP", "q1", "q2", "0.05");
            if (r.type == Reply::Type::kArray) take(r.elems[1].str);
            break;
          case 1:
            r = c("BLMPOP", "0.05", "2", "q2", "q1", "RIGHT", "COUNT", "3");
            if (r.type == Reply::Type::kArray) {
              for (const Reply& e : r.elems[1].elems) take(e.str);
            }
            break;
          default:
            r = c("BLMOVE", k % 2 ? "q1" : "q2", "done" + std::to_string(k), "LEFT", "RIGHT",
                  "0.05");
            if (r.type == Reply::Type::kBulk) take(r.str);
            break;
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
  EXPECT_EQ(unique.size(), all.size()) << "an element was consumed twice";
  for (int p = 0; p < kProducers; ++p) {
    for (int i = 0; i < kPerProducer; ++i) {
      const std::string e = "p" + std::to_string(p) + "-" + std::to_string(i);
      ASSERT_TRUE(unique.contains(e)) << "lost " << e;
    }
  }
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("EXISTS", "q1", "q2").integer, 0);
  int64_t moved = 0;
  for (int k = 2; k < kConsumers; k += 3) moved += c("LLEN", "done" + std::to_string(k)).integer;
  EXPECT_EQ(moved, static_cast<int64_t>(got[2].size() + got[5].size()));
  Scene run(true);
  run.WaitBlocked(0);
}

}  // namespace
}  // namespace vessel::test
