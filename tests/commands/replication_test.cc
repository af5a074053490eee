// Replication with real redis-server processes: a redis-server replica of vessel, vessel a replica
// of redis-server, vessel of vessel with promotion; full and partial resynchronization (the link
// killed with CLIENT KILL TYPE replica/master), WAIT, INFO replication and ROLE, READONLY;
// FAILOVER between vessel and redis-server both ways, and its errors and states compared with
// redis-server's; the replica settings Sentinel reads (replica-priority, replica-announced,
// replica-announce-ip/port). Every server gets its own temporary --dir and a free port.
#include <sys/prctl.h>
#include <sys/wait.h>

#include <cctype>
#include <csignal>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/persistence_util.h"

namespace vessel::test {
namespace {

std::string Info(RespClient& c, const std::string& section, const std::string& field) {
  const std::string info = c("INFO", section).str;
  const std::string key = "\n" + field + ":";
  size_t at = info.find(key);
  if (at == std::string::npos && info.starts_with(field + ":"))
    at = 0;
  else if (at != std::string::npos)
    at += 1;
  if (at == std::string::npos) return "";
  const size_t from = at + field.size() + 1;
  return info.substr(from, info.find('\r', from) - from);
}

// Waits until the replica's link is up and it has applied everything the master wrote so far.
bool InSync(RespClient& master, RespClient& replica) {
  return WaitFor(
      [&] {
        if (Info(replica, "replication", "master_link_status") != "up") return false;
        const std::string off = Info(master, "replication", "master_repl_offset");
        return !off.empty() && Info(replica, "replication", "slave_repl_offset") == off;
      },
      20000);
}

// Writes that exercise what the stream must carry: databases, transactions, scripts, rewritten
// commands (relative expiries, SPOP), deletions.
void LiveWrites(RespClient& c, const std::string& tag) {
  c("SELECT", "0");
  c("SET", "live:" + tag, "v");
  c("SET", "live:ex:" + tag, "v", "EX", "1000");
  c("EXPIRE", "db0:str", "5000");
  c("INCRBY", "live:n", "5");
  c("MULTI");
  c("RPUSH", "live:l:" + tag, "a", "b");
  c("SELECT", "1");
  c("SADD", "live:s:" + tag, "x", "y", "z");
  c("SELECT", "0");
  ASSERT_EQ(c("EXEC").type, Reply::Type::kArray);
  c("SELECT", "15");
  c("HSET", "live:h:" + tag, "f", "1");
  c("DEL", "db15:str");
  c("EVAL", "redis.call('set', KEYS[1], 'lua'); redis.call('incr', 'live:n2'); return 1", "1",
    "live:lua:" + tag);
  c("SELECT", "1");
  c("SADD", "live:pop", "p1", "p2", "p3");
  c("SPOP", "live:pop");
  c("SELECT", "0");
}

class ReplicationTest : public ::testing::Test {};

// A vessel-server child process (in-process servers share their modules' state, so a second
// vessel runs as a process of its own), with its own dir and a free port.
class VesselChild {
 public:
  explicit VesselChild(const std::string& dir) {
    port_ = FreePort();
    const std::string bin = (fs::read_symlink("/proc/self/exe").parent_path() / "vessel-server");
    std::vector<std::string> args = {bin,
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--threads",
                                     "2",
                                     "--dir",
                                     dir,
                                     "--save",
                                     "",
                                     "--log.file",
                                     dir + "/vessel.log"};
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    EXPECT_TRUE(WaitFor([&] {
      try {
        RespClient c("127.0.0.1", port_);
        c.SetTimeout(500);
        return c("PING").str == "PONG";
      } catch (...) {
        return false;
      }
    })) << "vessel-server did not start";
  }
  ~VesselChild() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  int port() const { return port_; }
  RespClient Client() const { return RespClient("127.0.0.1", port_); }

 private:
  int pid_ = -1, port_ = 0;
};

// A redis-server master in dir: a full synchronization starts at once (diskless, no delay).
struct RedisMaster {
  explicit RedisMaster(const std::string& dir) {
    pid = StartRedis(&port, {"--dir", dir, "--repl-diskless-sync-delay", "0"});
  }
  ~RedisMaster() { StopProcess(pid); }
  RespClient Client() const { return RespClient("127.0.0.1", port); }
  int pid = -1, port = 0;
};

TEST_F(ReplicationTest, RedisReplicaOfVessel) {
  TempDir vdir, rdir;
  auto vessel = StartVessel(vdir.path(), {});
  ASSERT_NE(vessel, nullptr);
  RespClient m = Client(*vessel);
  EXPECT_EQ(Info(m, "replication", "role"), "master");
  EXPECT_EQ(Info(m, "replication", "repl_backlog_active"), "0");
  Fill(m);
  int port = 0;
  const int pid = StartRedis(
      &port, {"--dir", rdir.path(), "--replicaof", "127.0.0.1", std::to_string(vessel->port())});
  RespClient r("127.0.0.1", port);
  ASSERT_TRUE(InSync(m, r)) << r("INFO", "replication").str;
  ExpectSameData(Describe(m), Describe(r));
  EXPECT_EQ(Info(m, "stats", "sync_full"), "1");

  // The live stream, then WAIT for the replica's acknowledgement.
  LiveWrites(m, "a");
  EXPECT_EQ(m("WAIT", "1", "5000").integer, 1);
  ASSERT_TRUE(InSync(m, r));
  ExpectSameData(Describe(m), Describe(r));

  // PUBLISH reaches the replica's subscribers.
  {
    RespClient sub("127.0.0.1", port);
    sub("SUBSCRIBE", "news");
    m("PUBLISH", "news", "hello");
    const Reply msg = sub.Read();
    ASSERT_EQ(msg.elems.size(), 3u);
    EXPECT_EQ(msg.elems[2].str, "hello");
  }

  // INFO replication and ROLE, as Redis 7.0 prints them.
  EXPECT_EQ(Info(m, "replication", "connected_slaves"), "1");
  const std::string slave0 = Info(m, "replication", "slave0");
  EXPECT_TRUE(slave0.starts_with("ip=127.0.0.1,port=" + std::to_string(port) + ",state=online,"))
      << slave0;
  EXPECT_EQ(Info(m, "replication", "master_failover_state"), "no-failover");
  EXPECT_EQ(Info(m, "replication", "master_replid").size(), 40u);
  EXPECT_EQ(Info(m, "replication", "master_replid2"), std::string(40, '0'));
  EXPECT_EQ(Info(m, "replication", "second_repl_offset"), "-1");
  EXPECT_EQ(Info(m, "replication", "repl_backlog_active"), "1");
  EXPECT_EQ(Info(m, "replication", "repl_backlog_size"), "1048576");
  EXPECT_EQ(Info(m, "replication", "repl_backlog_first_byte_offset"), "1");
  EXPECT_EQ(Info(m, "replication", "repl_backlog_histlen"),
            Info(m, "replication", "master_repl_offset"));
  EXPECT_EQ(Info(r, "replication", "master_replid"), Info(m, "replication", "master_replid"));
  Reply role = m("ROLE");
  ASSERT_EQ(role.elems.size(), 3u);
  EXPECT_EQ(role.elems[0].str, "master");
  ASSERT_EQ(role.elems[2].elems.size(), 1u);
  EXPECT_EQ(role.elems[2].elems[0].elems[1].str, std::to_string(port));

  // The link killed: the replica continues from the backlog.
  EXPECT_EQ(m("CLIENT", "KILL", "TYPE", "replica").integer, 1);
  LiveWrites(m, "b");
  ASSERT_TRUE(InSync(m, r));
  ExpectSameData(Describe(m), Describe(r));
  EXPECT_EQ(Info(m, "stats", "sync_partial_ok"), "1");
  EXPECT_EQ(Info(m, "stats", "sync_full"), "1");
  StopProcess(pid);
}

TEST_F(ReplicationTest, VesselReplicaOfRedis) {
  TempDir vdir, rdir;
  RedisMaster redis(rdir.path());
  RespClient m = redis.Client();
  Fill(m);
  auto vessel =
      StartVessel(vdir.path(), {{"replicaof", "127.0.0.1 " + std::to_string(redis.port)}});
  ASSERT_NE(vessel, nullptr);
  RespClient r = Client(*vessel);
  ASSERT_TRUE(InSync(m, r)) << r("INFO", "replication").str;
  ExpectSameData(Describe(m), Describe(r));

  LiveWrites(m, "a");
  ASSERT_TRUE(InSync(m, r));
  ExpectSameData(Describe(m), Describe(r));
  EXPECT_EQ(m("WAIT", "1", "5000").integer, 1);

  // A read-only replica.
  EXPECT_EQ(r("SET", "x", "1").str, "READONLY You can't write against a read only replica.");
  EXPECT_EQ(r("GET", "live:a").str, "v");
  EXPECT_EQ(r("WAIT", "0", "0").str.substr(0, 38), "ERR WAIT cannot be used with replica i");
  Reply role = r("ROLE");
  ASSERT_EQ(role.elems.size(), 5u);
  EXPECT_EQ(role.elems[0].str, "slave");
  EXPECT_EQ(role.elems[1].str, "127.0.0.1");
  EXPECT_EQ(role.elems[2].integer, redis.port);
  EXPECT_EQ(role.elems[3].str, "connected");
  EXPECT_EQ(Info(r, "replication", "role"), "slave");
  EXPECT_EQ(Info(r, "replication", "master_port"), std::to_string(redis.port));
  EXPECT_EQ(Info(r, "replication", "slave_read_only"), "1");

  // CLIENT PAUSE on the replica does not hold its master's stream back.
  ASSERT_EQ(r("CLIENT", "PAUSE", "5000", "WRITE").str, "OK");
  m("SET", "during:pause", "1");
  EXPECT_TRUE(InSync(m, r));
  EXPECT_EQ(r("GET", "during:pause").str, "1");
  ASSERT_EQ(r("CLIENT", "UNPAUSE").str, "OK");

  // No expiry of its own: an expired key is hidden from reads but stays until the master's DEL.
  ASSERT_EQ(m("DEBUG", "SET-ACTIVE-EXPIRE", "0").str, "OK");
  m("SET", "soon", "v", "PX", "100");
  ASSERT_TRUE(InSync(m, r));
  const int64_t keys = r("DBSIZE").integer;
  ASSERT_TRUE(WaitFor([&] { return r("GET", "soon").type == Reply::Type::kNil; }));
  EXPECT_EQ(r("EXISTS", "soon").integer, 0);
  EXPECT_EQ(r("DBSIZE").integer, keys);
  EXPECT_EQ(m("GET", "soon").type, Reply::Type::kNil);  // the master expires it: DEL
  ASSERT_TRUE(InSync(m, r));
  EXPECT_EQ(r("DBSIZE").integer, keys - 1);
  m("DEBUG", "SET-ACTIVE-EXPIRE", "1");

  // The link killed on the replica's side: a partial resynchronization.
  EXPECT_EQ(r("CLIENT", "KILL", "TYPE", "master").integer, 1);
  LiveWrites(m, "b");
  ASSERT_TRUE(InSync(m, r));
  ExpectSameData(Describe(m), Describe(r));
  EXPECT_EQ(Info(m, "stats", "sync_partial_ok"), "1");

  // Chained: a redis-server replica of the vessel replica gets the master's stream, from the
  // database the stream is in (the RDB's repl-stream-db: no SELECT comes for db 5 below).
  m("SELECT", "5");
  m("SET", "chain:before", "1");
  ASSERT_TRUE(InSync(m, r));
  TempDir cdir;
  int cport = 0;
  const int cpid = StartRedis(
      &cport, {"--dir", cdir.path(), "--replicaof", "127.0.0.1", std::to_string(vessel->port())});
  RespClient c("127.0.0.1", cport);
  ASSERT_TRUE(InSync(r, c)) << c("INFO", "replication").str;
  m("SET", "chain:after", "1");
  ASSERT_TRUE(InSync(m, r));
  ASSERT_TRUE(InSync(r, c));
  c("SELECT", "5");
  EXPECT_EQ(c("GET", "chain:after").str, "1");
  c("SELECT", "0");
  LiveWrites(m, "c");
  ASSERT_TRUE(InSync(m, r));
  ASSERT_TRUE(InSync(r, c));
  EXPECT_EQ(Info(c, "replication", "master_repl_offset"),
            Info(m, "replication", "master_repl_offset"));
  ExpectSameData(Describe(m), Describe(c));
  StopProcess(cpid);
}

TEST_F(ReplicationTest, VesselOfVesselAndPromotion) {
  TempDir adir, bdir;
  // The RDB from a file ($<len>); the other tests' masters stream it ($EOF:<mark>).
  auto a = StartVessel(adir.path(), {{"repl-diskless-sync", "no"}});
  ASSERT_NE(a, nullptr);
  VesselChild b(bdir.path());
  RespClient ca = Client(*a), cb = b.Client();
  Fill(ca);
  EXPECT_EQ(cb("REPLICAOF", "127.0.0.1", std::to_string(a->port())).str, "OK");
  EXPECT_EQ(cb("REPLICAOF", "127.0.0.1", std::to_string(a->port())).str,
            "OK Already connected to specified master");
  const Reply conf = cb("CONFIG", "GET", "replicaof");
  ASSERT_EQ(conf.elems.size(), 2u);
  EXPECT_EQ(conf.elems[1].str, "127.0.0.1 " + std::to_string(a->port()));
  ASSERT_TRUE(InSync(ca, cb)) << cb("INFO", "replication").str;
  LiveWrites(ca, "a");
  ASSERT_TRUE(InSync(ca, cb));
  ExpectSameData(Describe(ca), Describe(cb));

  // Promotion keeps the old history as replid2: the old master follows with a partial resync.
  const std::string old_id = Info(ca, "replication", "master_replid");
  EXPECT_EQ(cb("REPLICAOF", "NO", "ONE").str, "OK");
  EXPECT_EQ(Info(cb, "replication", "role"), "master");
  EXPECT_EQ(Info(cb, "replication", "master_replid2"), old_id);
  EXPECT_NE(Info(cb, "replication", "master_replid"), old_id);
  EXPECT_EQ(cb("SET", "after", "promotion").str, "OK");
  EXPECT_EQ(ca("REPLICAOF", "127.0.0.1", std::to_string(b.port())).str, "OK");
  ASSERT_TRUE(InSync(cb, ca)) << ca("INFO", "replication").str;
  EXPECT_EQ(ca("GET", "after").str, "promotion");
  EXPECT_EQ(Info(cb, "stats", "sync_partial_ok"), "1");
  EXPECT_EQ(Info(cb, "stats", "sync_full"), "0");
  LiveWrites(cb, "b");
  ASSERT_TRUE(InSync(cb, ca));
  ExpectSameData(Describe(cb), Describe(ca));
}

TEST_F(ReplicationTest, SlowReplicaIsDisconnectedAtItsBufferLimit) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  ASSERT_EQ(c("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 0 0").str, "OK");
  // A replica that synchronizes, then reads nothing more.
  RespClient slow = Client(*v);
  slow.SendRaw("PSYNC ? -1\r\n");
  const Reply full = slow.Read();
  ASSERT_TRUE(full.str.starts_with("FULLRESYNC ")) << full.str;
  ASSERT_TRUE(WaitFor(
      [&] { return Info(c, "replication", "slave0").find("online") != std::string::npos; }));
  const std::string value(64 * 1024, 'x');
  for (int i = 0; i < 400 && Info(c, "replication", "connected_slaves") == "1"; ++i)
    c("SET", "k" + std::to_string(i % 8), value);
  EXPECT_TRUE(WaitFor([&] { return Info(c, "replication", "connected_slaves") == "0"; }));
  EXPECT_EQ(c("PING").str, "PONG");
}

TEST_F(ReplicationTest, ReplicaWithoutItsMaster) {
  TempDir dir;
  const int nobody = FreePort();  // nothing listens there
  auto v = StartVessel(dir.path(), {{"replicaof", "127.0.0.1 " + std::to_string(nobody)}});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(Info(c, "replication", "role"), "slave");
  EXPECT_EQ(Info(c, "replication", "master_link_status"), "down");
  EXPECT_NE(Info(c, "replication", "master_link_down_since_seconds"), "");
  const Reply role = c("ROLE");
  ASSERT_EQ(role.elems.size(), 5u);
  EXPECT_EQ(role.elems[4].integer, -1);
  // Stale data is served by default; not with replica-serve-stale-data no.
  EXPECT_EQ(c("GET", "k").type, Reply::Type::kNil);
  EXPECT_EQ(c("CONFIG", "SET", "replica-serve-stale-data", "no").str, "OK");
  EXPECT_EQ(c("GET", "k").str,
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
  EXPECT_EQ(c("PING").str,
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is "
            "set to 'no'.");
  // A replica of it cannot synchronize while its own link is down.
  EXPECT_EQ(c("CONFIG", "SET", "replica-serve-stale-data", "yes").str, "OK");
  RespClient r = Client(*v);
  r.SendRaw("PSYNC ? -1\r\n");
  EXPECT_EQ(r.Read().str, "NOMASTERLINK Can't SYNC while not connected with my master");
  // Promotion: a master again.
  EXPECT_EQ(c("REPLICAOF", "NO", "ONE").str, "OK");
  EXPECT_EQ(c("SET", "k", "v").str, "OK");
  EXPECT_EQ(Info(c, "replication", "role"), "master");
}

TEST_F(ReplicationTest, PsyncFromTheBacklogOrInFull) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  // An unknown history: a full synchronization, counted as a failed partial one.
  RespClient a = Client(*v);
  a.SendRaw("PSYNC " + std::string(40, 'x') + " 5\r\n");
  const Reply full = a.Read();
  ASSERT_TRUE(full.str.starts_with("FULLRESYNC ")) << full.str;
  EXPECT_EQ(Info(c, "stats", "sync_full"), "1");
  EXPECT_EQ(Info(c, "stats", "sync_partial_err"), "1");
  const std::string id = Info(c, "replication", "master_replid");
  EXPECT_EQ(full.str.substr(11, 40), id);
  c("SET", "k", "v");
  const int64_t offset = std::stoll(Info(c, "replication", "master_repl_offset"));
  // The current history within the backlog: +CONTINUE (with the id for a psync2 replica).
  RespClient b = Client(*v);
  EXPECT_EQ(b("REPLCONF", "capa", "eof", "capa", "psync2").str, "OK");
  b.SendRaw("PSYNC " + id + " " + std::to_string(offset + 1) + "\r\n");
  EXPECT_EQ(b.Read().str, "CONTINUE " + id);
  EXPECT_EQ(Info(c, "stats", "sync_partial_ok"), "1");
  // Past the end of the stream: a full synchronization again.
  RespClient d = Client(*v);
  d.SendRaw("PSYNC " + id + " " + std::to_string(offset + 100) + "\r\n");
  EXPECT_TRUE(d.Read().str.starts_with("FULLRESYNC ")) << "beyond the stream";
  EXPECT_EQ(Info(c, "stats", "sync_partial_err"), "2");
  EXPECT_EQ(Info(c, "replication", "connected_slaves"), "3");
}

// Every field name of INFO replication, in order ("slaveN" lines as "slave").
std::vector<std::string> InfoFields(RespClient& c) {
  std::vector<std::string> out;
  const std::string info = c("INFO", "replication").str;
  size_t at = 0;
  while (at < info.size()) {
    const size_t eol = info.find("\r\n", at);
    const std::string line = info.substr(at, eol - at);
    at = eol == std::string::npos ? info.size() : eol + 2;
    const size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    if (name.starts_with("slave") && name.size() > 5 && std::isdigit(name[5])) name = "slave";
    out.push_back(name);
  }
  return out;
}

// A replica that synchronizes and then acknowledges offset 0 only (a raw PSYNC client announcing
// `listening_port`, where nothing listens): a FAILOVER to it waits until its timeout or ABORT.
RespClient StalledReplica(RespClient& admin, int server_port, int listening_port) {
  RespClient fake("127.0.0.1", server_port);
  EXPECT_EQ(fake("REPLCONF", "listening-port", std::to_string(listening_port)).str, "OK");
  fake.SendRaw("PSYNC ? -1\r\n");
  // (Keepalive newlines may come first, which the test client reads as part of the line.)
  const Reply full = fake.Read();
  EXPECT_NE(full.str.find("FULLRESYNC "), std::string::npos) << full.ToString();
  // redis-server puts a diskless replica online at its first ACK after the transfer.
  EXPECT_TRUE(WaitFor([&] {
    fake.SendRaw("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n");
    return Info(admin, "replication", "slave0").find("state=online") != std::string::npos;
  }));
  return fake;
}

// The same FAILOVER session on a master (vessel or redis-server): its errors, the write pause, the
// states INFO shows, ABORT, the timeout, FORCE. Returns every reply, for comparison.
std::vector<std::string> FailoverSession(int port) {
  std::vector<std::string> out;
  RespClient c("127.0.0.1", port);
  auto run = [&](const Strings& cmd) {
    const Reply r = c.Cmd(cmd);
    out.push_back(r.ToString());
    return r;
  };
  auto state = [&] { return Info(c, "replication", "master_failover_state"); };
  // Without replicas, and bad arguments.
  for (const Strings& cmd : std::vector<Strings>{
           {"FAILOVER"},
           {"FAILOVER", "ABORT"},
           {"FAILOVER", "TIMEOUT", "0"},
           {"FAILOVER", "TIMEOUT", "-1"},
           {"FAILOVER", "TIMEOUT", "soon"},
           {"FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"},
           {"FAILOVER", "TO", "127.0.0.1"},
           {"FAILOVER", "TO", "127.0.0.1", "port"},
           {"FAILOVER", "FORCE", "FORCE"},
           {"FAILOVER", "ABORT", "TIMEOUT", "5"},
           {"FAILOVER", "NOW"},
           {"FAILOVER", "FORCE"},
       })
    run(cmd);
  const int nobody = FreePort();
  RespClient fake = StalledReplica(c, port, nobody);
  const std::string to[] = {"FAILOVER", "TO", "127.0.0.1", std::to_string(nobody)};
  run({"SET", "before", "1"});  // the replica's ACK stays behind from here on
  for (const Strings& cmd : std::vector<Strings>{
           {"FAILOVER", "FORCE"},
           {"FAILOVER", "TIMEOUT", "100", "FORCE"},
           {to[0], to[1], to[2], to[3], "FORCE"},
           {"FAILOVER", "TO", "127.0.0.1", "1"},
           {to[0], to[1], to[2], to[3], "TIMEOUT", "0"},
       })
    run(cmd);
  // Waiting for the replica: writes wait, reads do not, and nothing else changes the role.
  EXPECT_EQ(run({to[0], to[1], to[2], to[3]}).str, "OK");
  out.push_back(state());
  EXPECT_EQ(out.back(), "waiting-for-sync");
  run({"FAILOVER"});
  run({"REPLICAOF", "NO", "ONE"});
  run({"REPLICAOF", "127.0.0.1", std::to_string(nobody)});
  {
    RespClient other("127.0.0.1", port);
    other.SendRaw("PSYNC ? -1\r\n");
    out.push_back(other.Read().ToString());
  }
  RespClient writer("127.0.0.1", port);
  writer.Send({"SET", "during", "1"});
  writer.SetTimeout(300);
  EXPECT_EQ(writer.Read().type, Reply::Type::kClosed) << "a write ran during the failover";
  writer.SetTimeout(10000);
  run({"GET", "before"});
  EXPECT_EQ(run({"FAILOVER", "ABORT"}).str, "OK");
  out.push_back(writer.Read().ToString());  // the paused write runs now
  out.push_back(state());
  run({"FAILOVER", "ABORT"});
  // The timeout without FORCE: aborted, still the master.
  EXPECT_EQ(run({to[0], to[1], to[2], to[3], "TIMEOUT", "100"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return state() == "no-failover"; }));
  out.push_back(Info(c, "replication", "role"));
  // With FORCE: a replica of the target at the timeout, whose link never comes up: in progress
  // until ABORT makes it a master again.
  EXPECT_EQ(run({to[0], to[1], to[2], to[3], "FORCE", "TIMEOUT", "100"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return state() == "failover-in-progress"; }));
  out.push_back(Info(c, "replication", "role"));
  EXPECT_EQ(Info(c, "replication", "master_port"), std::to_string(nobody));
  run({"SET", "in-progress", "1"});
  run({"FAILOVER"});
  EXPECT_EQ(run({"FAILOVER", "ABORT"}).str, "OK");
  out.push_back(state());
  out.push_back(Info(c, "replication", "role"));
  run({"SET", "after", "1"});
  return out;
}

TEST_F(ReplicationTest, FailoverStatesAndErrorsAsRedis) {
  TempDir vdir, rdir;
  auto vessel = StartVessel(vdir.path(), {});
  ASSERT_NE(vessel, nullptr);
  RedisMaster redis(rdir.path());
  const std::vector<std::string> ours = FailoverSession(vessel->port());
  const std::vector<std::string> theirs = FailoverSession(redis.port);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(ours[i], theirs[i]) << "reply " << i;
  // A few of them spelled out.
  EXPECT_EQ(ours[0], "(error) ERR FAILOVER requires connected replicas.");
  EXPECT_EQ(ours[1], "(error) ERR No failover in progress.");
  EXPECT_EQ(ours[2], "(error) ERR FAILOVER timeout must be greater than 0");
}

// A replica's connection carries the stream: a command of the replica that replies (PING) gets
// the replica disconnected, as Redis does, rather than a reply inside the stream.
TEST_F(ReplicationTest, ReplicaWhoseCommandRepliesIsDisconnectedAsRedis) {
  TempDir vdir, rdir;
  auto vessel = StartVessel(vdir.path(), {});
  ASSERT_NE(vessel, nullptr);
  RedisMaster redis(rdir.path());
  for (const int port : {vessel->port(), redis.port}) {
    RespClient admin("127.0.0.1", port);
    RespClient fake = StalledReplica(admin, port, FreePort());
    fake.Send({"PING"});
    EXPECT_TRUE(WaitFor([&] { return Info(admin, "replication", "connected_slaves") == "0"; }))
        << (port == redis.port ? "redis-server" : "vessel");
  }
}

TEST_F(ReplicationTest, FailoverBetweenVesselAndRedisBothWays) {
  TempDir vdir, rdir;
  auto vessel = StartVessel(vdir.path(), {});
  ASSERT_NE(vessel, nullptr);
  RespClient v = Client(*vessel);
  Fill(v);
  int rport = 0;
  const int rpid = StartRedis(
      &rport, {"--dir", rdir.path(), "--replicaof", "127.0.0.1", std::to_string(vessel->port())});
  RespClient r("127.0.0.1", rport);
  ASSERT_TRUE(InSync(v, r)) << r("INFO", "replication").str;
  LiveWrites(v, "a");
  ASSERT_TRUE(InSync(v, r));

  // Vessel hands over to its redis-server replica, which takes over on PSYNC ... FAILOVER.
  EXPECT_EQ(v("FAILOVER").str, "OK");
  ASSERT_TRUE(WaitFor([&] {
    return Info(r, "replication", "role") == "master" &&
           Info(v, "replication", "master_port") == std::to_string(rport) && InSync(r, v);
  })) << v("INFO", "replication").str;
  EXPECT_EQ(Info(v, "replication", "master_failover_state"), "no-failover");
  EXPECT_EQ(Info(r, "stats", "sync_partial_ok"), "1");  // vessel continued its history
  EXPECT_EQ(Info(r, "stats", "sync_full"), "0");
  EXPECT_EQ(v("SET", "x", "1").str, "READONLY You can't write against a read only replica.");
  LiveWrites(r, "b");
  ASSERT_TRUE(InSync(r, v));
  ExpectSameData(Describe(r), Describe(v));

  // And back: redis-server's FAILOVER TO vessel makes vessel the master again.
  EXPECT_EQ(
      r("FAILOVER", "TO", "127.0.0.1", std::to_string(vessel->port()), "TIMEOUT", "10000").str,
      "OK");
  ASSERT_TRUE(WaitFor([&] {
    return Info(v, "replication", "role") == "master" &&
           Info(r, "replication", "master_port") == std::to_string(vessel->port()) && InSync(v, r);
  })) << r("INFO", "replication").str;
  EXPECT_EQ(Info(r, "replication", "master_failover_state"), "no-failover");
  EXPECT_EQ(Info(v, "stats", "sync_partial_ok"), "1");
  EXPECT_EQ(Info(v, "stats", "sync_full"), "1");  // only redis-server's first synchronization
  LiveWrites(v, "c");
  ASSERT_TRUE(InSync(v, r));
  ExpectSameData(Describe(v), Describe(r));
  StopProcess(rpid);
}

TEST_F(ReplicationTest, FailoverToOneVesselReplicaTheOtherFollows) {
  TempDir adir, bdir, cdir;
  auto a = StartVessel(adir.path(), {});
  ASSERT_NE(a, nullptr);
  VesselChild b(bdir.path()), c(cdir.path());
  RespClient ca = Client(*a), cb = b.Client(), cc = c.Client();
  Fill(ca);
  ASSERT_EQ(cb("REPLICAOF", "127.0.0.1", std::to_string(a->port())).str, "OK");
  ASSERT_EQ(cc("REPLICAOF", "127.0.0.1", std::to_string(a->port())).str, "OK");
  ASSERT_TRUE(InSync(ca, cb) && InSync(ca, cc));
  LiveWrites(ca, "a");
  EXPECT_EQ(cb("FAILOVER").str, "ERR FAILOVER is not valid when server is a replica.");

  EXPECT_EQ(ca("FAILOVER", "TO", "127.0.0.1", std::to_string(b.port())).str, "OK");
  ASSERT_TRUE(WaitFor([&] {
    return Info(cb, "replication", "role") == "master" &&
           Info(ca, "replication", "master_port") == std::to_string(b.port()) && InSync(cb, ca);
  })) << ca("INFO", "replication").str;
  EXPECT_EQ(Info(ca, "replication", "master_failover_state"), "no-failover");
  EXPECT_EQ(Info(cb, "stats", "sync_partial_ok"), "1");
  EXPECT_EQ(Info(cb, "stats", "sync_full"), "0");
  // The other replica stays with the old master, now a replica in the chain.
  LiveWrites(cb, "b");
  ASSERT_TRUE(InSync(cb, ca));
  ASSERT_TRUE(InSync(ca, cc));
  ExpectSameData(Describe(cb), Describe(cc));
}

TEST_F(ReplicationTest, ReplicaSettingsSentinelReadsAsRedis) {
  // A redis-server master with a vessel replica and a redis-server replica, set up alike.
  TempDir mdir, vdir, rdir;
  RedisMaster master(mdir.path());
  RespClient m = master.Client();
  auto vessel = StartVessel(vdir.path(), {});
  ASSERT_NE(vessel, nullptr);
  int rport = 0;
  const int rpid = StartRedis(&rport, {"--dir", rdir.path()});
  RespClient v = Client(*vessel), r("127.0.0.1", rport);
  const std::string vport = std::to_string(vessel->port());
  for (RespClient* c : {&v, &r}) {
    EXPECT_EQ((*c)("CONFIG", "SET", "replica-priority", "0").str, "OK");
    EXPECT_EQ((*c)("CONFIG", "SET", "replica-announced", "no").str, "OK");
    EXPECT_EQ((*c)("CONFIG", "SET", "replica-announce-ip", "127.0.0.2").str, "OK");
    EXPECT_EQ((*c)("CONFIG", "SET", "replica-announce-port", c == &v ? "4321" : "4322").str, "OK");
    EXPECT_EQ((*c)("REPLICAOF", "127.0.0.1", std::to_string(master.port)).str, "OK");
  }
  ASSERT_TRUE(InSync(m, v) && InSync(m, r));
  EXPECT_EQ(InfoFields(v), InfoFields(r));
  for (const char* field :
       {"role", "master_host", "master_link_status", "slave_priority", "slave_read_only",
        "replica_announced", "slave_repl_offset", "connected_slaves", "master_failover_state"})
    EXPECT_EQ(Info(v, "replication", field), Info(r, "replication", field)) << field;
  EXPECT_EQ(Info(v, "replication", "slave_priority"), "0");
  EXPECT_EQ(Info(v, "replication", "replica_announced"), "0");
  // The master lists both under their announced address.
  EXPECT_TRUE(WaitFor([&] {
    const std::string info = m("INFO", "replication").str;
    return info.find("ip=127.0.0.2,port=4321,state=online") != std::string::npos &&
           info.find("ip=127.0.0.2,port=4322,state=online") != std::string::npos;
  })) << m("INFO", "replication").str;
  // The link down: the fields Sentinel reads then.
  EXPECT_EQ(v("CONFIG", "SET", "replica-priority", "100").str, "OK");
  EXPECT_EQ(r("CONFIG", "SET", "replica-priority", "100").str, "OK");
  StopProcess(master.pid);
  master.pid = -1;
  ASSERT_TRUE(WaitFor([&] {
    return Info(v, "replication", "master_link_status") == "down" &&
           Info(r, "replication", "master_link_status") == "down";
  }));
  EXPECT_EQ(InfoFields(v), InfoFields(r));
  EXPECT_EQ(Info(v, "replication", "slave_priority"), "100");
  EXPECT_NE(Info(v, "replication", "master_link_down_since_seconds"), "");
  StopProcess(rpid);
}

TEST_F(ReplicationTest, WaitAndMinReplicas) {
  TempDir dir;
  auto v = StartVessel(dir.path(), {});
  ASSERT_NE(v, nullptr);
  RespClient c = Client(*v);
  EXPECT_EQ(c("WAIT", "0", "0").integer, 0);
  EXPECT_EQ(c("WAIT", "1", "100").integer, 0);  // no replica: the timeout
  EXPECT_EQ(c("WAIT", "1", "-1").str, "ERR timeout is negative");
  EXPECT_EQ(c("CONFIG", "SET", "min-replicas-to-write", "1").str, "OK");
  EXPECT_EQ(c("SET", "k", "v").str, "NOREPLICAS Not enough good replicas to write.");
  EXPECT_EQ(c("GET", "k").type, Reply::Type::kNil);
  EXPECT_EQ(c("CONFIG", "SET", "min-replicas-to-write", "0").str, "OK");
  EXPECT_EQ(c("SET", "k", "v").str, "OK");
  EXPECT_EQ(c("REPLCONF", "listening-port").str, kSyntax);
  EXPECT_EQ(c("REPLCONF", "nope", "1").str, "ERR Unrecognized REPLCONF option: nope");
  EXPECT_EQ(c("REPLCONF", "listening-port", "1234").str, "OK");
}

}  // namespace
}  // namespace vessel::test
