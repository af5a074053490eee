// MULTI/EXEC/DISCARD/WATCH/UNWATCH against vessel and redis-server.
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class TransactionsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// Runs a two-client scenario on both servers; the recorded replies must be identical.
void SameOnBoth(const std::function<void(RespClient&, RespClient&, std::vector<Reply>&)>& fn) {
  std::vector<Reply> got[2];
  for (int i = 0; i < 2; ++i) {
    Servers& s = Servers::Get();
    RespClient a = i == 0 ? s.Vessel() : s.Redis();
    RespClient b = i == 0 ? s.Vessel() : s.Redis();
    fn(a, b, got[i]);
  }
  ASSERT_EQ(got[0].size(), got[1].size());
  for (size_t i = 0; i < got[0].size(); ++i)
    EXPECT_EQ(got[0][i], got[1][i]) << "step " << i << "\n  vessel: " << got[0][i].ToString()
                                    << "\n  redis:  " << got[1][i].ToString();
}

TEST_F(TransactionsTest, QueueAndExec) {
  RunTable({
      {{"EXEC"}, Err("ERR EXEC without MULTI")},
      {{"DISCARD"}, Err("ERR DISCARD without MULTI")},
      {{"MULTI"}, Ok()},
      {{"MULTI"}, Err("ERR MULTI calls can not be nested")},
      {{"SET", "a", "1"}, Simple("QUEUED")},
      {{"INCR", "a"}, Simple("QUEUED")},
      {{"GET", "a"}, Simple("QUEUED")},
      {{"PING"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Ok(), Int(2), Bulk("2"), Simple("PONG")})},
      {{"MULTI"}, Ok()},
      {{"EXEC"}, Arr({})},
      {{"MULTI"}, Ok()},
      {{"SET", "s", "x"}, Simple("QUEUED")},
      {{"INCR", "s"}, Simple("QUEUED")},
      {{"SET", "t", "y"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Ok(), Err("ERR value is not an integer or out of range"), Ok()})},
      {{"GET", "t"}, Bulk("y")},
  });
}

// Commands with Redis's no-multi flag are refused, not queued (SHUTDOWN queued inside MULTI
// once stopped the server at EXEC); the refusal aborts the transaction.
TEST_F(TransactionsTest, NoMultiCommandsAreRefused) {
  RunTable({
      {{"MULTI"}, Ok()},
      {{"SET", "a", "1"}, Simple("QUEUED")},
      {{"SHUTDOWN"}, Error("ERR Command not allowed inside a transaction")},
      {{"SHUTDOWN", "NOSAVE"}, Error("ERR Command not allowed inside a transaction")},
      {{"WATCH", "a"}, Error("ERR WATCH inside MULTI is not allowed")},
      {{"EXEC"}, Error("EXECABORT Transaction discarded because of previous errors.")},
      {{"GET", "a"}, Nil()},
      {{"PING"}, Simple("PONG")},
  });
}

TEST_F(TransactionsTest, QueueTimeErrorsAbort) {
  RunTable({
      {{"MULTI"}, Ok()},
      {{"SET", "a", "1"}, Simple("QUEUED")},
      {{"NOSUCHCOMMAND"}, Err("ERR unknown command*")},
      {{"SET", "b"}, Err("ERR wrong number of arguments for 'set' command")},
      {{"EXEC"}, Err("EXECABORT Transaction discarded because of previous errors.")},
      {{"EXISTS", "a"}, Int(0)},
      {{"MULTI"}, Ok()},
      {{"SET", "a", "1"}, Simple("QUEUED")},
      {{"DISCARD"}, Ok()},
      {{"EXISTS", "a"}, Int(0)},
      {{"MULTI"}, Ok()},
      {{"WATCH", "a"}, Err("ERR WATCH inside MULTI is not allowed")},
      {{"SET", "a", "2"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Ok()})},
      {{"MULTI"}, Ok()},
      {{"SELECT", "1"}, Simple("QUEUED")},
      {{"SET", "a", "in-db-1"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Ok(), Ok()})},
      {{"GET", "a"}, Bulk("in-db-1")},
      {{"SELECT", "0"}, Ok()},
      {{"GET", "a"}, Bulk("2")},
      {{"MULTI"}, Ok()},
      {{"FLUSHALL"}, Simple("QUEUED")},
      {{"DBSIZE"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Ok(), Int(0)})},
  });
}

TEST_F(TransactionsTest, WatchDetectsModification) {
  SameOnBoth([](RespClient& a, RespClient& b, std::vector<Reply>& out) {
    a("SET", "w", "1");
    out.push_back(a("WATCH", "w"));
    b("SET", "w", "2");
    out.push_back(a("MULTI"));
    out.push_back(a("SET", "w", "3"));
    out.push_back(a("EXEC"));  // aborted: nil
    out.push_back(a("GET", "w"));
    // Not modified: runs.
    out.push_back(a("WATCH", "w"));
    out.push_back(a("MULTI"));
    out.push_back(a("INCR", "w"));
    out.push_back(a("EXEC"));
    // Another key modified: runs.
    out.push_back(a("WATCH", "w"));
    b("SET", "other", "x");
    a("MULTI");
    a("INCR", "w");
    out.push_back(a("EXEC"));
  });
}

TEST_F(TransactionsTest, WatchSeesDeleteFlushAndExpiry) {
  SameOnBoth([](RespClient& a, RespClient& b, std::vector<Reply>& out) {
    a("SET", "w", "1");
    a("WATCH", "w");
    b("DEL", "w");
    a("MULTI");
    a("SET", "x", "1");
    out.push_back(a("EXEC"));
    out.push_back(a("EXISTS", "x"));

    a("SET", "w", "1");
    a("WATCH", "w");
    b("FLUSHALL");
    a("MULTI");
    a("SET", "x", "1");
    out.push_back(a("EXEC"));

    // A key that does not exist is watched too: creating it aborts.
    a("WATCH", "fresh");
    b("SET", "fresh", "1");
    a("MULTI");
    a("SET", "x", "1");
    out.push_back(a("EXEC"));

    // FLUSHALL of an absent watched key is not a modification.
    a("WATCH", "absent");
    b("FLUSHALL");
    a("MULTI");
    a("SET", "x", "2");
    out.push_back(a("EXEC"));

    // Expiry after WATCH aborts.
    a("SET", "e", "1", "PX", "20");
    a("WATCH", "e");
    usleep(60000);
    a("MULTI");
    a("SET", "x", "3");
    out.push_back(a("EXEC"));

    // UNWATCH and DISCARD forget the watched keys.
    a("WATCH", "w");
    b("SET", "w", "5");
    out.push_back(a("UNWATCH"));
    a("MULTI");
    a("SET", "x", "4");
    out.push_back(a("EXEC"));
    a("WATCH", "w");
    b("SET", "w", "6");
    a("MULTI");
    out.push_back(a("DISCARD"));
    a("MULTI");
    a("SET", "x", "5");
    out.push_back(a("EXEC"));
    out.push_back(a("GET", "x"));
  });
}

TEST_F(TransactionsTest, ExecIsAtomicAcrossKeysAndDatabases) {
  // A transaction's writes appear together: a reader on another connection never sees half.
  SameOnBoth([](RespClient& a, RespClient& b, std::vector<Reply>& out) {
    a("MULTI");
    a("SET", "p", "1");
    a("SET", "q", "1");
    a("MOVE", "q", "3");
    a("RENAME", "p", "r");
    out.push_back(a("EXEC"));
    out.push_back(b("MGET", "p", "q", "r"));
    b("SELECT", "3");
    out.push_back(b("GET", "q"));
  });
}

TEST_F(TransactionsTest, Resp3Exec) {
  RunTable(
      {
          {{"MULTI"}, Ok()},
          {{"SET", "a", "1"}, Simple("QUEUED")},
          {{"GET", "nokey"}, Simple("QUEUED")},
          {{"EXEC"}, Arr({Ok(), Nil()})},
      },
      3);
}

}  // namespace
}  // namespace vessel::test
