// Scripts under concurrent clients on several workers: atomicity of classic script patterns
// (sliding-window rate limiter, token lock, list <-> sorted-set job queue), scripts touching keys
// they did not declare, and long-running scripts (BUSY, SCRIPT/FUNCTION KILL, UNKILLABLE).
// Runs under ThreadSanitizer in CI (label tsan).
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class ScriptingConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Servers::Configure([](config::Config& c) { c.server.threads = 3; });
    Servers::Get().Reset();
    RespClient c = Servers::Get().Vessel();
    c("SCRIPT", "FLUSH");
    c("FUNCTION", "FLUSH");
    c("CONFIG", "SET", "busy-reply-threshold", "5000");
  }
  RespClient V() { return Servers::Get().Vessel(); }
};

constexpr int kClients = 6;

// A sliding-window limiter: ZREMRANGEBYSCORE + ZCARD + ZADD in one script; across clients the
// number of admitted requests is exactly the limit.
TEST_F(ScriptingConcurrencyTest, SlidingWindowRateLimiterIsExact) {
  const char* script =
      "redis.call('zremrangebyscore', KEYS[1], 0, tonumber(ARGV[1]) - tonumber(ARGV[2]))\n"
      "if redis.call('zcard', KEYS[1]) < tonumber(ARGV[3]) then\n"
      "  redis.call('zadd', KEYS[1], ARGV[1], ARGV[4])\n"
      "  return 1\n"
      "end\n"
      "return 0\n";
  const std::string sha = V()("SCRIPT", "LOAD", script).str;
  std::atomic<int> admitted{0};
  Parallel(kClients, [&](int t) {
    RespClient c = V();
    for (int i = 0; i < 60; ++i) {
      const std::string member = std::to_string(t) + ":" + std::to_string(i);
      const Reply r = c("EVALSHA", sha, "1", "rate:user", "1000", "100000", "50", member);
      ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
      admitted += static_cast<int>(r.integer);
    }
  });
  EXPECT_EQ(admitted.load(), 50);
  EXPECT_EQ(V()("ZCARD", "rate:user").integer, 50);
}

// A lock taken with SET NX and released by a script that deletes it only when the token is
// still ours; a counter updated non-atomically under the lock never loses an increment.
TEST_F(ScriptingConcurrencyTest, TokenLockReleasedByScript) {
  const char* release =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "
      "return 0";
  std::atomic<int> acquired{0};
  Parallel(kClients, [&](int t) {
    RespClient c = V();
    for (int i = 0; i < 40; ++i) {
      const std::string token = "t" + std::to_string(t) + "-" + std::to_string(i);
      while (c("SET", "lock", token, "NX", "PX", "10000").type != Reply::Type::kStatus) {
      }
      const Reply n = c("GET", "counter");
      const int64_t v = n.type == Reply::Type::kBulk ? std::stoll(n.str) : 0;
      c("SET", "counter", std::to_string(v + 1));
      ASSERT_EQ(c("EVAL", release, "1", "lock", token).integer, 1);
      // Releasing again (the token is gone) does nothing.
      ASSERT_EQ(c("EVAL", release, "1", "lock", token).integer, 0);
      ++acquired;
    }
  });
  EXPECT_EQ(V()("GET", "counter").str, std::to_string(acquired.load()));
}

// Jobs move atomically from a list to a sorted set (claim) and out of it (ack): each job is
// claimed exactly once across clients, none is lost.
TEST_F(ScriptingConcurrencyTest, QueueMovesJobsAtomically) {
  RespClient c = V();
  constexpr int kJobs = 600;
  for (int i = 0; i < kJobs; i += 100) {
    std::vector<std::string> push = {"RPUSH", "pending"};
    for (int j = i; j < i + 100; ++j) push.push_back("job" + std::to_string(j));
    c.Cmd(push);
  }
  const char* claim =
      "local job = redis.call('lpop', KEYS[1])\n"
      "if not job then return false end\n"
      "redis.call('zadd', KEYS[2], ARGV[1], job)\n"
      "return job\n";
  const char* ack =
      "if redis.call('zrem', KEYS[1], ARGV[1]) == 1 then return redis.call('incr', KEYS[2]) end "
      "return redis.error_reply('not claimed')";
  std::vector<std::vector<std::string>> got(kClients);
  Parallel(kClients, [&](int t) {
    RespClient cl = V();
    while (true) {
      const Reply j = cl("EVAL", claim, "2", "pending", "processing", std::to_string(t));
      if (j.type != Reply::Type::kBulk) break;
      got[t].push_back(j.str);
      const Reply a = cl("EVAL", ack, "2", "processing", "done", j.str);
      ASSERT_EQ(a.type, Reply::Type::kInt) << a.ToString();
    }
  });
  std::set<std::string> all;
  size_t total = 0;
  for (const auto& v : got) {
    total += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(total, static_cast<size_t>(kJobs));
  EXPECT_EQ(all.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(c("GET", "done").str, std::to_string(kJobs));
  EXPECT_EQ(c("ZCARD", "processing").integer, 0);
  EXPECT_EQ(c("LLEN", "pending").integer, 0);
}

// Scripts that declare no keys but increment keys named in ARGV, interleaved with plain INCRs
// and declared-key scripts on the same keys: no increment is lost.
TEST_F(ScriptingConcurrencyTest, UndeclaredKeysStayAtomic) {
  const char* undeclared = "for i = 1, #ARGV do redis.call('incr', ARGV[i]) end return #ARGV";
  const char* declared = "for i = 1, #KEYS do redis.call('incr', KEYS[i]) end return #KEYS";
  std::atomic<int64_t> expected{0};
  Parallel(kClients, [&](int t) {
    RespClient c = V();
    for (int i = 0; i < 150; ++i) {
      const std::string a = "u" + std::to_string(i % 7), b = "u" + std::to_string((i + t) % 7);
      Reply r;
      switch ((i + t) % 3) {
        case 0:
          r = c("EVAL", undeclared, "0", a, b);
          break;
        case 1:
          r = c("EVAL", declared, "2", a, b);
          break;
        default:
          r = c("INCRBY", a, "1");
          r = c("INCRBY", b, "1");
          r.integer = 2;
      }
      ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
      ASSERT_EQ(r.integer, 2);
      expected += 2;
    }
  });
  int64_t sum = 0;
  RespClient c = V();
  for (int k = 0; k < 7; ++k) {
    const Reply r = c("GET", "u" + std::to_string(k));
    if (r.type == Reply::Type::kBulk) sum += std::stoll(r.str);
  }
  EXPECT_EQ(sum, expected.load());
}

// Waits until `c` answers cmd with an error starting with `prefix` (the busy state needs the
// threshold to pass).
Reply WaitForError(RespClient& c, const std::vector<std::string>& cmd, const std::string& prefix) {
  Reply r;
  for (int i = 0; i < 200; ++i) {
    r = c.Cmd(cmd);
    if (r.is_error() && r.str.starts_with(prefix)) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return r;
}

// A client connected once the script runs: every connection is answered while a script is
// busy, the script's own worker serving its clients from the script's hook.
RespClient OtherClient() { return Servers::Get().Vessel(); }

// A connection on `worker` (-1: any) other than `avoid`, found by connecting until the kernel
// places one there.
RespClient ClientOn(int worker, int avoid) {
  for (int i = 0; i < 64; ++i) {
    RespClient c = Servers::Get().Vessel();
    const int w = WorkerOfClient(c("CLIENT", "ID").integer);
    if (w != avoid && (worker < 0 || w == worker)) return c;
  }
  ADD_FAILURE() << "no connection landed on the worker asked for";
  return Servers::Get().Vessel();
}

constexpr char kBusyEval[] =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

// A script that loops forever holding the whole keyspace (its first run): every other client is
// answered BUSY, SCRIPT KILL stops it, and the server serves again.
TEST_F(ScriptingConcurrencyTest, BusyScriptKilled) {
  V()("CONFIG", "SET", "busy-reply-threshold", "100");
  std::thread runner([&] {
    RespClient c = V();
    const Reply r = c("EVAL", "while true do end", "1", "busykey");
    EXPECT_TRUE(r.is_error());
    EXPECT_TRUE(r.str.starts_with("ERR Script killed by user with SCRIPT KILL...")) << r.str;
  });
  RespClient other = OtherClient();
  EXPECT_EQ(WaitForError(other, {"GET", "busykey"}, "BUSY").str, kBusyEval);
  EXPECT_EQ(other("SET", "elsewhere", "1").str, kBusyEval);
  EXPECT_EQ(other("FUNCTION", "KILL").str,
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
            "NOSAVE.");
  EXPECT_EQ(other("SCRIPT", "KILL").str, "OK");
  runner.join();
  EXPECT_EQ(other("PING").str, "PONG");
  EXPECT_EQ(other("SCRIPT", "KILL").str, "NOTBUSY No scripts in execution right now.");
}

// Once a script is known to keep to its declared keys it runs under their locks only; past
// busy-reply-threshold every client is answered BUSY but for the allow-busy commands, as in
// Redis (FUNCTION STATS, FUNCTION KILL); FUNCTION KILL stops a function like SCRIPT KILL.
TEST_F(ScriptingConcurrencyTest, BusyFunctionIsKilled) {
  RespClient c = V();
  c("CONFIG", "SET", "busy-reply-threshold", "100");
  ASSERT_EQ(c("FUNCTION", "LOAD",
              "#!lua name=spin\n"
              "redis.register_function('spin', function(keys, args)\n"
              "  local v = redis.call('get', keys[1])\n"
              "  if args[1] == 'loop' then while true do end end\n"
              "  return v\n"
              "end)")
                .str,
            "spin");
  EXPECT_EQ(c("FCALL", "spin", "1", "hot", "once").type, Reply::Type::kNil);  // learns its keys
  std::thread runner([&] {
    RespClient r = V();
    const Reply rep = r("FCALL", "spin", "1", "hot", "loop");
    EXPECT_TRUE(rep.str.starts_with("ERR Script killed by user with SCRIPT KILL...")) << rep.str;
  });
  RespClient other = OtherClient();
  constexpr char kBusyFunction[] =
      "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
  EXPECT_EQ(WaitForError(other, {"GET", "hot"}, "BUSY").str, kBusyFunction);
  EXPECT_EQ(other("SET", "cold", "1").str, kBusyFunction);
  const Reply stats = other("FUNCTION", "STATS");
  ASSERT_EQ(stats.type, Reply::Type::kArray);
  ASSERT_GE(stats.elems.size(), 2u);
  EXPECT_EQ(stats.elems[1].elems.size(), 6u);  // name, command, duration_ms
  EXPECT_EQ(other("SCRIPT", "KILL").str, kBusyFunction);
  EXPECT_EQ(other("FUNCTION", "KILL").str, "OK");
  runner.join();
  EXPECT_EQ(other("GET", "hot").type, Reply::Type::kNil);
  EXPECT_EQ(other("SET", "cold", "1").str, "OK");
}

// Under busy-reply-threshold, a command on a key a script holds waits for the script without
// blocking its worker: another client of that worker is served meanwhile, and the waiting
// command gets its real reply once the script ends.
TEST_F(ScriptingConcurrencyTest, CommandsOnAScriptsKeysWaitWithoutBlockingTheirWorker) {
  RespClient owner = V();
  const int script_worker = WorkerOfClient(owner("CLIENT", "ID").integer);
  // The script learns it keeps to its keys first: then it holds only its shard.
  const char* script =
      "if ARGV[1] == 'spin' then\n"
      "  local t0 = tonumber(redis.call('time')[1])\n"
      "  while tonumber(redis.call('time')[1]) < t0 + 2 do end\n"
      "end\n"
      "return redis.call('set', KEYS[1], ARGV[1])";
  EXPECT_EQ(owner("EVAL", script, "1", "hot", "warm").str, "OK");
  RespClient waiter = ClientOn(-1, script_worker);
  const int waiter_worker = WorkerOfClient(waiter("CLIENT", "ID").integer);
  RespClient neighbour = ClientOn(waiter_worker, script_worker);
  std::atomic<bool> script_done{false};
  std::thread runner([&] {
    EXPECT_EQ(owner("EVAL", script, "1", "hot", "spin").str, "OK");
    script_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the script holds "hot"
  waiter.Send({"GET", "hot"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(neighbour("PING").str, "PONG");
  EXPECT_FALSE(script_done.load()) << "the script ended too early for the check to mean much";
  EXPECT_EQ(waiter.Read().str, "spin");  // after the script, with its write
  runner.join();
}

// Commands over the whole keyspace inside a script that otherwise keeps to its declared keys
// (FLUSHALL, SWAPDB, KEYS, SCAN, RANDOMKEY) work on every run, as in Redis: a run that meets one
// starts again holding the whole keyspace.
TEST_F(ScriptingConcurrencyTest, WholeKeyspaceCommandsInScriptsRunEveryTime) {
  std::vector<Row> rows;
  for (int i = 0; i < 3; ++i) {
    rows.push_back(
        {{"EVAL", "redis.call('set', KEYS[1], 'x') return #redis.call('keys', '*')", "1", "k"},
         Int(1)});
    rows.push_back({{"EVAL",
                     "redis.call('set', KEYS[1], 'x') local c, n = '0', 0 repeat "
                     "local r = redis.call('scan', c) c = r[1] n = n + #r[2] until c == '0' "
                     "return n",
                     "1", "k"},
                    Int(1)});
    rows.push_back(
        {{"EVAL", "redis.call('set', KEYS[1], 'x') return redis.call('randomkey')", "1", "k"},
         Bulk("k")});
    rows.push_back(
        {{"EVAL", "redis.call('set', KEYS[1], 'x') return redis.call('flushall')", "1", "k"},
         Simple("OK")});
    rows.push_back({{"EVAL", "return redis.call('swapdb', 0, 1)", "0"}, Simple("OK")});
    rows.push_back({{"EVAL",
                     "if ARGV[1] == 'flush' then return redis.call('flushdb') end "
                     "return redis.call('set', KEYS[1], 'y')",
                     "1", "k", i == 2 ? "flush" : "set"},
                    Simple("OK")});
  }
  RunTable(rows);
}

// A script that wrote cannot be killed: UNKILLABLE until it ends by itself. It runs for 4-5 s so
// that finding a connection on another worker (up to 16 probes of 500 ms on a loaded machine)
// still leaves it running.
TEST_F(ScriptingConcurrencyTest, WriteScriptIsUnkillable) {
  V()("CONFIG", "SET", "busy-reply-threshold", "100");
  std::thread runner([&] {
    RespClient c = V();
    const Reply r = c("EVAL",
                      "redis.call('set', KEYS[1], 'x')\n"
                      "local t0 = tonumber(redis.call('time')[1])\n"
                      "while tonumber(redis.call('time')[1]) < t0 + 5 do end\n"
                      "return 'done'",
                      "1", "w");
    EXPECT_EQ(r.str, "done");
  });
  RespClient other = OtherClient();
  WaitForError(other, {"GET", "w"}, "BUSY");
  EXPECT_TRUE(other("SCRIPT", "KILL")
                  .str.starts_with("UNKILLABLE Sorry the script already executed "
                                   "write commands against the dataset."));
  runner.join();
  EXPECT_EQ(other("GET", "w").str, "x");
}

}  // namespace
}  // namespace vessel::test
