// Crash test of the append-only file: writers on several connections record every acknowledged
// write; the server (a vessel-server child process) is killed with SIGKILL at a random moment,
// sometimes while it rewrites its AOF; after a restart every acknowledged write (stream entries
// and consumer-group deliveries included) is present and every MULTI/EXEC group is whole.
// appendfsync always and everysec both keep everything a killed process acknowledged (everysec
// writes before replying; only a power loss can cost it ~1 s).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/persistence_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

namespace fs = std::filesystem;

std::string ServerBinary() {
  return (fs::read_symlink("/proc/self/exe").parent_path() / "vessel-server").string();
}

// Starts vessel-server in dir; returns its pid once it answers PING (-1 on failure).
int StartChild(const std::string& dir, int port, const std::string& fsync) {
  const std::string bin = ServerBinary();
  std::vector<std::string> args = {bin,
                                   "--port",
                                   std::to_string(port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--threads",
                                   "2",
                                   "--dir",
                                   dir,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   fsync,
                                   "--log-level",
                                   "warn"};
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    try {
      RespClient c("127.0.0.1", port);
      c.SetTimeout(500);
      if (c("PING").str == "PONG") return pid;
    } catch (...) {
    }
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// What one writer got acknowledged in one round.
struct Acked {
  int sets = 0;        // SET r<round>:w<t>:<i> i for i < sets
  int incrs = 0;       // INCR r<round>:c<t>
  int pushes = 0;      // RPUSH r<round>:l<t> i
  int groups = 0;      // MULTI INCR r<round>:g<t> RPUSH r<round>:gl<t> EXEC
  bool group = false;  // XGROUP CREATE r<round>:s<t> g 0 MKSTREAM
  int xadds = 0;       // XADD r<round>:s<t> <i+1>-1 n i
  int reads = 0;  // XREADGROUP GROUP g c COUNT 1 STREAMS r<round>:s<t> >: entries 1..reads pending
};

void Writer(int port, const std::string& p, Acked* acked) {
  try {
    RespClient c("127.0.0.1", port);
    c.SetTimeout(2000);
    if (c("XGROUP", "CREATE", p + "s", "g", "0", "MKSTREAM").str != "OK") return;
    acked->group = true;
    for (int i = 0;; ++i) {
      const std::string n = std::to_string(i);
      if (c("SET", p + "w:" + n, n).str != "OK") return;
      acked->sets = i + 1;
      if (c("INCR", p + "c").integer != i + 1) return;
      acked->incrs = i + 1;
      if (c("RPUSH", p + "l", n).integer != i + 1) return;
      acked->pushes = i + 1;
      c.Send({"MULTI"});
      c.Send({"INCR", p + "g"});
      c.Send({"RPUSH", p + "gl", n});
      c.Send({"EXEC"});
      for (int k = 0; k < 3; ++k) c.Read();
      Reply exec = c.Read();
      if (exec.type != Reply::Type::kArray || exec.elems.size() != 2) return;
      acked->groups = i + 1;
      // A stream entry, then its delivery to a consumer (recorded as Redis propagates it: an
      // XCLAIM and the group's last ID), so the group's pending entries survive too.
      if (c("XADD", p + "s", std::to_string(i + 1) + "-1", "n", n).str !=
          std::to_string(i + 1) + "-1")
        return;
      acked->xadds = i + 1;
      const Reply got = c("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", p + "s", ">");
      if (got.type != Reply::Type::kArray || got.elems.size() != 1) return;
      acked->reads = i + 1;
    }
  } catch (...) {
  }
}

void Verify(RespClient& c, const std::string& p, const Acked& a) {
  for (int i = 0; i < a.sets; ++i) {
    Reply r = c("GET", p + "w:" + std::to_string(i));
    ASSERT_EQ(r.str, std::to_string(i)) << p << " acknowledged SET " << i << " lost";
  }
  // Unacknowledged writes may or may not be there; acknowledged ones must.
  int64_t incr = 0;
  const Reply cr = c("GET", p + "c");
  if (cr.type == Reply::Type::kBulk) incr = std::stoll(cr.str);
  EXPECT_GE(incr, a.incrs) << p;
  const int64_t len = c("LLEN", p + "l").integer;
  EXPECT_GE(len, a.pushes) << p;
  if (a.pushes > 0) {
    EXPECT_EQ(c("LINDEX", p + "l", std::to_string(a.pushes - 1)).str, std::to_string(a.pushes - 1));
  }
  // Groups are all or nothing: the counter and the list agree.
  int64_t g = 0;
  const Reply gr = c("GET", p + "g");
  if (gr.type == Reply::Type::kBulk) g = std::stoll(gr.str);
  EXPECT_EQ(g, c("LLEN", p + "gl").integer) << p << " a MULTI/EXEC group was split";
  EXPECT_GE(g, a.groups) << p;
  // Every acknowledged stream entry, and every acknowledged delivery still pending in the group.
  EXPECT_GE(c("XLEN", p + "s").integer, a.xadds) << p;
  if (a.xadds > 0) {
    const std::string id = std::to_string(a.xadds) + "-1";
    const Reply last = c("XRANGE", p + "s", id, id);
    ASSERT_EQ(last.elems.size(), 1u) << p << " acknowledged XADD " << id << " lost";
  }
  if (!a.group) return;
  const Reply pending = c("XPENDING", p + "s", "g");
  ASSERT_EQ(pending.type, Reply::Type::kArray) << p << " the consumer group was lost";
  EXPECT_GE(pending.elems[0].integer, a.reads) << p << " acknowledged deliveries lost";
  if (a.reads > 0) EXPECT_EQ(pending.elems[1].str, "1-1") << p;
}

TEST(AofCrash, KillNineLosesNoAcknowledgedWrite) {
  TempDir dir;
  std::mt19937 rng(std::random_device{}());
  constexpr int kRounds = 8, kWriters = 4;
  std::vector<std::vector<Acked>> rounds;
  for (int round = 0; round < kRounds; ++round) {
    const std::string fsync = round % 2 == 0 ? "always" : "everysec";
    const int port = FreePort();
    const int pid = StartChild(dir.path(), port, fsync);
    ASSERT_GT(pid, 0) << "vessel-server did not start in round " << round;
    {
      // Everything acknowledged in earlier rounds survived their kill -9.
      RespClient c("127.0.0.1", port);
      for (int r = 0; r < round; ++r)
        for (int t = 0; t < kWriters; ++t)
          Verify(c, "r" + std::to_string(r) + ":t" + std::to_string(t) + ":", rounds[r][t]);
      if (HasFatalFailure()) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        return;
      }
    }
    rounds.emplace_back(kWriters);
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t)
      writers.emplace_back(Writer, port,
                           "r" + std::to_string(round) + ":t" + std::to_string(t) + ":",
                           &rounds[round][t]);
    const int ms = 150 + static_cast<int>(rng() % 500);
    if (round % 3 == 1) {
      // Kill it in the middle of an AOF rewrite.
      std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
      RespClient c("127.0.0.1", port);
      c("BGREWRITEAOF");
      std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    for (auto& w : writers) w.join();
    int total = 0;
    for (const Acked& a : rounds[round]) total += a.sets;
    EXPECT_GT(total, 0) << "no write was acknowledged in round " << round;
  }
  const int port = FreePort();
  const int pid = StartChild(dir.path(), port, "always");
  ASSERT_GT(pid, 0);
  RespClient c("127.0.0.1", port);
  for (int r = 0; r < kRounds; ++r)
    for (int t = 0; t < kWriters; ++t)
      Verify(c, "r" + std::to_string(r) + ":t" + std::to_string(t) + ":", rounds[r][t]);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace vessel::test
