// The replica side of replication (replication.h): REPLICAOF, and the link thread that connects
// to the master, runs the handshake (PING, AUTH, REPLCONF listening-port and capa, PSYNC), loads
// the RDB of a full synchronization ($<len> or $EOF:<mark>), then applies the master's stream
// through a session of the engine's external slot, answers REPLCONF GETACK, acknowledges its
// offset every second, and reconnects with a growing delay when the link fails.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "host/engine/builtins.h"
#include "host/persist/rdb_file.h"
#include "host/repl/repl_util.h"
#include "host/repl/replication.h"
#include "host/resp/parser.h"
#include "spdlog/spdlog.h"

namespace vessel::repl {
namespace {

using engine::Cat;
using engine::W;

// The master link's session I/O: replies are discarded by the link thread; Close (CLIENT KILL
// TYPE master, from any thread) shuts the socket down, which ends the link.
class LinkIo : public engine::SessionIo {
 public:
  explicit LinkIo(std::atomic<int>* fd) : fd_(fd) {}
  void Wake() override {}
  void Close() override {
    const int fd = fd_->load();
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
  }

 private:
  std::atomic<int>* fd_;
};

// Blocking I/O on the link's socket with deadlines; `in` keeps what was read and not consumed.
class LinkSocket {
 public:
  LinkSocket(int fd, std::atomic<bool>* stop) : fd_(fd), stop_(stop) {}
  int fd() const { return fd_; }
  std::string& in() { return in_; }

  bool SendAll(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        pollfd p{fd_, POLLOUT, 0};
        poll(&p, 1, 100);
        continue;
      }
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads what arrives within wait_ms into in(); 0 on timeout, -1 on EOF or error.
  int ReadSome(int wait_ms) {
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, wait_ms);
    if (r < 0) return errno == EINTR ? 0 : -1;
    if (r == 0) return 0;
    char buf[64 * 1024];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (n <= 0) return -1;
    in_.append(buf, static_cast<size_t>(n));
    return static_cast<int>(n);
  }
  // One line without its \r\n (empty lines, the master's keepalive newlines, are skipped).
  bool ReadLine(int64_t timeout_ms, std::string* line) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const size_t nl = in_.find('\n');
      if (nl != std::string::npos) {
        *line = in_.substr(0, nl);
        in_.erase(0, nl + 1);
        if (!line->empty() && line->back() == '\r') line->pop_back();
        if (line->empty()) continue;
        return true;
      }
      if (stop_->load() || std::chrono::steady_clock::now() >= deadline) return false;
      if (ReadSome(100) < 0) return false;
    }
  }

 private:
  int fd_;
  std::atomic<bool>* stop_;
  std::string in_;
};

// Connects within timeout_ms, giving up early when *stop is set (server shutdown).
int Connect(const std::string& host, int port, int64_t timeout_ms, const std::atomic<bool>* stop,
            std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) {
    *error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      *error = std::strerror(errno);
      close(fd);
      fd = -1;
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    int ready = 0;
    for (int64_t waited = 0; ready == 0 && waited < timeout_ms && !stop->load(); waited += 100)
      ready = poll(&p, 1, 100);
    if (ready != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      *error = err != 0 ? std::strerror(err) : "connection timed out";
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

}  // namespace

bool Replication::Start(std::string* error) {
  const std::string conf = ParamText(*e_, "replicaof");
  // A cluster node's replication is the node's to set (CLUSTER REPLICATE, elections).
  if (!conf.empty() && e_->cluster() != nullptr) {
    *error = "replicaof directive not allowed in cluster mode";
    return false;
  }
  // A cluster replica's node may have asked to follow its master already (its cron runs from the
  // node's start): its history resumes as a replica's too.
  ResumeHistory(!conf.empty() || IsReplica());
  link_thread_ = std::thread([this] { LinkThread(); });
  sync_thread_ = std::thread([this] { SyncThread(); });
  if (conf.empty()) return true;
  const std::vector<std::string> words = engine::SplitWords(conf);
  int64_t port = 0;
  if (words.size() != 2 || !engine::ParseInt64(words[1], &port) || port < 0 || port > 65535) {
    *error = Cat("Invalid master port in replicaof: ", conf);
    return false;
  }
  std::lock_guard l(mu_);
  master_host_ = words[0];
  master_port_ = static_cast<int>(port);
  is_replica_.store(true);
  recording_.store(false);
  link_state_ = LinkState::kConnect;
  down_since_ms_ = e_->Now();
  ++link_gen_;
  cv_.notify_all();
  return true;
}

void Replication::Stop() {
  {
    std::lock_guard l(mu_);
    if (stop_.exchange(true)) return;
    const int fd = link_fd_.load();
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
    cv_.notify_all();
    sync_cv_.notify_all();
  }
  if (link_thread_.joinable()) link_thread_.join();
  if (sync_thread_.joinable()) sync_thread_.join();
}

void Replication::SetLinkState(LinkState s) {
  std::lock_guard l(mu_);
  link_state_ = s;
}

bool Replication::LinkCurrent(uint64_t gen) {
  std::lock_guard l(mu_);
  return !stop_.load() && gen == link_gen_;
}

void Replication::LinkThread() {
  int failures = 0;
  for (;;) {
    std::string host;
    int port = 0;
    uint64_t gen = 0;
    {
      std::unique_lock l(mu_);
      cv_.wait(l, [&] { return stop_.load() || !master_host_.empty(); });
      if (stop_.load()) return;
      host = master_host_;
      port = master_port_;
      gen = link_gen_;
      link_state_ = LinkState::kConnect;
    }
    const bool ok = RunLink(host, port, gen);
    {
      std::unique_lock l(mu_);
      if (gen == link_gen_ && !master_host_.empty()) {
        link_state_ = LinkState::kConnect;
        if (down_since_ms_ == 0) down_since_ms_ = e_->Now();
      }
      failures = ok ? 0 : failures + 1;
      // Again at once after a link that worked; after failures, 250 ms doubling to 2 s.
      const int64_t delay =
          failures == 0 ? 0 : std::min<int64_t>(2000, 125 << std::min(failures, 4));
      cv_.wait_for(l, std::chrono::milliseconds(delay),
                   [&] { return stop_.load() || gen != link_gen_; });
      if (stop_.load()) return;
    }
  }
}

void Replication::RunAsMaster(std::initializer_list<std::string_view> argv) {
  std::atomic<int> no_fd{-1};
  LinkIo io(&no_fd);
  engine::WorkerScope scope(e_, e_->external_worker());
  engine::Session s(e_, e_->external_worker(), &io, "replication", "", -1);
  s.set_repl_role(engine::kReplRoleMaster);
  const std::string cmd = Command(argv);
  s.Process(cmd);
  if (!s.output().empty() && s.output()[0] == '-')
    spdlog::warn("MASTER <-> REPLICA sync: {}", s.output().substr(0, s.output().find('\r')));
}

bool Replication::FullSyncLoad(const std::string& path, int* stream_db, std::string* error) {
  // The old dataset goes as FLUSHALL would take it (the append-only file records it, a running
  // snapshot stops), FUNCTION libraries included, before the master's RDB loads.
  spdlog::info("MASTER <-> REPLICA sync: Flushing old data");
  RunAsMaster({"FLUSHALL"});
  if (e_->function_libraries() != nullptr) RunAsMaster({"FUNCTION", "FLUSH"});
  e_->set_loading(true);
  persist::LoadStats stats;
  // Expired keys are kept: the master's DELs remove them (a replica expires nothing itself).
  const bool ok = persist::LoadRdbFile(*e_, path, /*aof_base=*/true, &stats, error);
  e_->set_loading(false);
  *stream_db = std::max(0, stats.repl_stream_db);
  if (!ok) return false;
  spdlog::info("MASTER <-> REPLICA sync: Finished with success keys={}", stats.loaded);
  // The loaded dataset is in no record of the append-only file: a rewrite makes it the base, as
  // Redis restarts its AOF after a synchronization.
  if (p_->AofEnabled()) {
    const std::string reply = p_->BgRewriteAof();
    if (reply.starts_with("-")) spdlog::warn("MASTER <-> REPLICA sync: AOF rewrite: {}", reply);
  }
  return true;
}

bool Replication::RunLink(const std::string& host, int port, uint64_t gen) {
  const int64_t timeout_ms = Param(*e_, "repl-timeout") * 1000;
  SetLinkState(LinkState::kConnecting);
  spdlog::info("Connecting to MASTER {}:{}", host, port);
  std::string error;
  const int fd = Connect(host, port, timeout_ms, &stop_, &error);
  if (fd < 0) {
    spdlog::warn("Error condition on socket for SYNC: {}", error);
    return false;
  }
  link_fd_.store(fd);
  struct Closer {
    Replication* r;
    int fd;
    ~Closer() {
      r->link_fd_.store(-1);
      close(fd);
    }
  } closer{this, fd};
  if (!LinkCurrent(gen)) return true;
  LinkSocket sock(fd, &stop_);
  SetLinkState(LinkState::kHandshake);
  spdlog::info("MASTER <-> REPLICA sync started");
  std::string line;
  auto fail = [&](const std::string& why) {
    spdlog::warn("MASTER <-> REPLICA sync: {}", why);
    return false;
  };
  // PING: -NOAUTH (and -NOPERM, -ERR operation not permitted) are fine: AUTH comes next.
  if (!sock.SendAll(Command({"PING"})) || !sock.ReadLine(timeout_ms, &line))
    return fail("Master did not reply to PING");
  if (line[0] == '-' && !line.starts_with("-NOAUTH") && !line.starts_with("-NOPERM") &&
      !line.starts_with("-ERR operation not permitted"))
    return fail(Cat("Error reply to PING from master: '", line, "'"));
  const std::string auth = ParamText(*e_, "masterauth");
  if (!auth.empty()) {
    const std::string user = ParamText(*e_, "masteruser");
    const std::string cmd = user.empty() ? Command({"AUTH", auth}) : Command({"AUTH", user, auth});
    if (!sock.SendAll(cmd) || !sock.ReadLine(timeout_ms, &line) || line[0] == '-')
      return fail(Cat("Unable to AUTH to MASTER: ", line));
  }
  const int64_t announce_port = Param(*e_, "replica-announce-port");
  const std::string listen_port = std::to_string(announce_port != 0 ? announce_port : e_->port());
  std::string hs = Command({"REPLCONF", "listening-port", listen_port});
  const std::string announce_ip = ParamText(*e_, "replica-announce-ip");
  int replies = 2;
  if (!announce_ip.empty()) {
    hs += Command({"REPLCONF", "ip-address", announce_ip});
    ++replies;
  }
  hs += Command({"REPLCONF", "capa", "eof", "capa", "psync2"});
  if (!sock.SendAll(hs)) return fail("Error writing the handshake");
  for (int i = 0; i < replies; ++i) {
    if (!sock.ReadLine(timeout_ms, &line)) return fail("Master did not reply to REPLCONF");
    // Errors are not fatal: older masters do not know every option.
  }
  // PSYNC: continue our history when we have one. A master failing over to this one (FAILOVER)
  // asks it to take over first.
  std::string psync_id = "?", psync_offset = "-1";
  bool failing_over = false;
  {
    std::lock_guard l(mu_);
    if (backlog_ != nullptr || offset_ > 0) {
      psync_id = replid_;
      psync_offset = std::to_string(offset_ + 1);
    }
    failing_over = failover_state_ == FailoverState::kInProgress && gen == link_gen_;
  }
  const std::string psync = failing_over ? Command({"PSYNC", psync_id, psync_offset, "FAILOVER"})
                                         : Command({"PSYNC", psync_id, psync_offset});
  if (!sock.SendAll(psync)) {
    if (failing_over) {
      std::lock_guard l(mu_);
      if (gen == link_gen_) AbortFailoverLocked("Write error to failover target");
    }
    return fail("Write error sending the PSYNC command.");
  }
  if (!sock.ReadLine(timeout_ms, &line)) return fail("Master did not reply to PSYNC");
  if (!LinkCurrent(gen)) return true;
  if (failing_over) {
    // The target took over (+CONTINUE, or +FULLRESYNC in edge cases), or refused.
    std::lock_guard l(mu_);
    if (failover_state_ == FailoverState::kInProgress && gen == link_gen_) {
      if (line.starts_with("+CONTINUE") || line.starts_with("+FULLRESYNC")) {
        ClearFailoverLocked();
      } else {
        AbortFailoverLocked("Failover target rejected psync request");
        return fail(Cat("Unexpected reply to PSYNC FAILOVER from the target: ", line));
      }
    }
  }
  bool full = false;
  std::string new_id;
  uint64_t new_offset = 0;
  if (line.starts_with("+FULLRESYNC")) {
    const std::vector<std::string> w = engine::SplitWords(line.substr(1));
    int64_t off = 0;
    if (w.size() < 3 || w[1].size() != 40 || !engine::ParseInt64(w[2], &off))
      return fail(Cat("Master replied with wrong +FULLRESYNC syntax: ", line));
    full = true;
    new_id = w[1];
    new_offset = static_cast<uint64_t>(off);
  } else if (line.starts_with("+CONTINUE")) {
    const std::vector<std::string> w = engine::SplitWords(line.substr(1));
    std::lock_guard l(mu_);
    if (w.size() >= 2 && w[1].size() == 40 && w[1] != replid_) {
      // The master's history has a new id: ours continues under it.
      replid2_ = replid_;
      second_offset_ = static_cast<int64_t>(offset_) + 1;
      replid_ = w[1];
      DisconnectReplicasLocked();  // our replicas learn the new id by reconnecting
    }
    if (backlog_ == nullptr) CreateBacklogLocked();
    spdlog::info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
  } else {
    // -NOMASTERLINK, -LOADING: try again later; any other error as well.
    return fail(Cat("Unexpected reply to PSYNC from master: ", line));
  }

  if (full) {
    SetLinkState(LinkState::kTransfer);
    // $<len>\r\n<rdb>, or $EOF:<40 bytes>\r\n<rdb><the same 40 bytes>.
    if (!sock.ReadLine(timeout_ms, &line) || line.empty() || line[0] != '$')
      return fail(Cat("Bad protocol from MASTER, the first byte is not '$': ", line));
    std::string mark;
    int64_t len = -1;
    if (line.starts_with("$EOF:") && line.size() == 5 + 40) {
      mark = line.substr(5);
    } else if (!engine::ParseInt64(std::string_view(line).substr(1), &len) || len < 0) {
      return fail(Cat("Bad bulk length from MASTER: ", line));
    }
    {
      std::lock_guard l(mu_);
      transfer_size_ = len >= 0 ? static_cast<uint64_t>(len) : 0;
      transfer_read_ = 0;
      transfer_last_io_ms_ = e_->Now();
    }
    const std::string name = Cat("temp-", getpid(), "-", gen, ".rdb");
    const std::string path = Cat(p_->dir(), "/", name);
    const int out = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0)
      return fail(Cat("Opening the temp file needed for MASTER <-> REPLICA synchronization: ",
                      std::strerror(errno)));
    struct Unlink {
      std::string p;
      int fd;
      ~Unlink() {
        if (fd >= 0) close(fd);
        unlink(p.c_str());
      }
    } cleanup{path, out};
    uint64_t written = 0;
    std::string& in = sock.in();
    int64_t last_io = e_->Now();
    for (;;) {
      // Write what is certainly payload: everything (with a length), or all but the last 40
      // bytes, which may be the end mark.
      size_t take = in.size();
      bool done = false;
      if (len >= 0) {
        take = static_cast<size_t>(std::min<uint64_t>(take, static_cast<uint64_t>(len) - written));
        done = written + take == static_cast<uint64_t>(len);
      } else if (in.size() >= mark.size() &&
                 in.compare(in.size() - mark.size(), mark.size(), mark) == 0) {
        take = in.size() - mark.size();
        done = true;
      } else {
        take = in.size() > mark.size() ? in.size() - mark.size() : 0;
      }
      if (take > 0 && write(out, in.data(), take) != static_cast<ssize_t>(take))
        return fail(Cat("Write error writing to the DB file: ", std::strerror(errno)));
      written += take;
      in.erase(0, take);
      if (done) {
        if (len < 0) in.erase(0, mark.size());
        break;
      }
      const int n = sock.ReadSome(100);
      if (n < 0) return fail("I/O error trying to sync with MASTER: connection lost");
      const int64_t now = e_->Now();
      if (n > 0) last_io = now;
      if (!LinkCurrent(gen)) return true;
      if (now - last_io > timeout_ms) return fail("Timeout receiving bulk data from MASTER");
      std::lock_guard l(mu_);
      transfer_read_ = written;
      if (n > 0) transfer_last_io_ms_ = now;
    }
    fsync(out);
    spdlog::info("MASTER <-> REPLICA sync: received {} bytes of RDB", written);
    // Our own replicas must resynchronize: the history changes under them.
    {
      std::lock_guard l(mu_);
      DisconnectReplicasLocked();
      history_valid_ = false;
    }
    int stream_db = 0;
    if (!FullSyncLoad(path, &stream_db, &error))
      return fail(Cat("Failed trying to load the MASTER synchronization DB from disk: ", error));
    std::lock_guard l(mu_);
    replid_ = new_id;
    replid2_.assign(40, '0');
    second_offset_ = -1;
    offset_ = new_offset;
    CreateBacklogLocked();
    master_db_ = stream_db;
    history_valid_ = true;
  }

  // The stream.
  auto io = std::make_unique<LinkIo>(&link_fd_);
  std::unique_ptr<engine::Session> session;
  {
    engine::WorkerScope scope(e_, e_->external_worker());
    session = std::make_unique<engine::Session>(e_, e_->external_worker(), io.get(),
                                                Cat(host, ":", port), "", fd);
  }
  session->set_repl_role(engine::kReplRoleMaster);
  int master_db;
  uint64_t start_offset;
  {
    std::lock_guard l(mu_);
    start_offset = offset_;
    master_db = master_db_;
    link_session_ = session.get();
    link_state_ = LinkState::kConnected;
    down_since_ms_ = 0;
    last_io_ms_ = e_->Now();
    read_offset_ = offset_;
  }
  session->set_db(master_db);
  spdlog::info("MASTER <-> REPLICA sync: link up offset={}", start_offset);
  struct SessionEnd {
    Replication* r;
    std::unique_ptr<engine::Session>* s;
    ~SessionEnd() {
      {
        std::lock_guard l(r->mu_);
        r->master_db_ = (*s)->db();
        r->link_session_ = nullptr;
      }
      s->reset();
    }
  } session_end{this, &session};

  resp::Parser parser;
  std::vector<std::string_view> args;
  std::string tx;  // applied bytes of a MULTI not yet closed: appended with its EXEC
  int64_t last_ack = 0;
  auto send_ack = [&](uint64_t off) {
    return sock.SendAll(Command({"REPLCONF", "ACK", std::to_string(off)}));
  };
  if (!send_ack(start_offset))
    return fail("Error writing the first ACK");  // puts us online at once
  last_ack = e_->Now();
  for (;;) {
    if (!LinkCurrent(gen)) return true;
    std::string& in = sock.in();
    int64_t ack_at = -1;  // a GETACK asked for our offset as of then
    bool held = false;    // a command could not run yet (a busy script): wait a little
    if (!in.empty() && !e_->scripts_busy()) {
      engine::WorkerScope scope(e_, e_->external_worker());
      size_t pos = 0;
      while (pos < in.size()) {
        const std::string_view rest(in.data() + pos, in.size() - pos);
        const resp::ParseStatus st = parser.Parse(rest, &args);
        if (st == resp::ParseStatus::kNeedMore) {
          pos += parser.consumed();
          break;
        }
        if (st == resp::ParseStatus::kError)
          return fail(Cat("Protocol error from MASTER: ", parser.error()));
        const size_t size = parser.consumed();
        const std::string_view cmd = rest.substr(0, size);
        const bool getack = args.size() >= 2 && engine::EqualsIgnoreCase(args[0], "replconf") &&
                            engine::EqualsIgnoreCase(args[1], "getack");
        if (getack) {
          std::lock_guard l(mu_);
          ack_at = static_cast<int64_t>(offset_ + tx.size());
        } else {
          link_applying_.store(true);
          const size_t done = session->Process(cmd);
          if (done == 0 && !session->output().empty() && session->closing()) {
            link_applying_.store(false);
            return fail("master link session closed");
          }
          if (done == 0) {  // postponed: the same command again shortly
            link_applying_.store(false);
            held = true;
            break;
          }
          const std::string& out = session->output();
          if (!out.empty() && out[0] == '-')
            spdlog::warn("== CRITICAL == This replica is sending an error to its MASTER: '{}'",
                         out.substr(0, out.find('\r')));
        }
        session->output().clear();
        tx.append(cmd);
        pos += size;
        if (!session->in_multi()) {
          std::lock_guard l(mu_);
          AppendLocked(tx);  // also to our replicas, byte for byte
          tx.clear();
          read_offset_ = offset_;
        }
        link_applying_.store(false);
      }
      in.erase(0, pos);
      std::lock_guard l(mu_);
      read_offset_ = offset_ + tx.size();
    }
    const int64_t now = e_->Now();
    if (ack_at >= 0 && !send_ack(static_cast<uint64_t>(ack_at)))
      return fail("Error writing an ACK");
    if (now - last_ack >= 1000) {
      last_ack = now;
      uint64_t off;
      {
        std::lock_guard l(mu_);
        off = offset_;
      }
      if (!send_ack(off)) return fail("Error writing an ACK");
    }
    int64_t last_io;
    {
      std::lock_guard l(mu_);
      last_io = last_io_ms_;
    }
    if (now - last_io > timeout_ms) return fail("MASTER timeout: no data nor PING received...");
    const int n = sock.ReadSome(in.empty() || e_->scripts_busy() ? 100 : held ? 10 : 0);
    if (n < 0) {
      spdlog::info("Connection with master lost.");
      return true;
    }
    if (n > 0) {
      std::lock_guard l(mu_);
      last_io_ms_ = e_->Now();
    }
  }
}

void Replication::UnsetMasterLocked() {
  if (!IsReplica()) return;
  // Promotion: the master's history stays ours as replid2, so replicas of the old master (and
  // the old master itself) continue from it with a partial resynchronization.
  replid2_ = replid_;
  second_offset_ = static_cast<int64_t>(offset_) + 1;
  NewReplIdLocked();
  master_host_.clear();
  master_port_ = 0;
  // CONFIG GET replicaof (and CONFIG REWRITE) show the current master, as Redis.
  e_->settings().params.Set(engine::ParamValues::Find("replicaof"), "");
  ++link_gen_;
  link_state_ = LinkState::kNone;
  down_since_ms_ = 0;
  stream_db_ = -1;
  if (backlog_ == nullptr) CreateBacklogLocked();
  // The backlog's time to live counts from the promotion, not from when the last replica left.
  if (replicas_.empty()) no_replicas_since_ms_ = e_->Now();
  is_replica_.store(false);
  recording_.store(true);
  const int fd = link_fd_.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  cv_.notify_all();
  DisconnectReplicasLocked();  // they learn the new id by reconnecting (+CONTINUE)
}

void Replication::SetMasterLocked(std::string_view host, int port) {
  // Our history (replid, offset) stays: the new master may continue it (a promoted replica of
  // ours has it as replid2).
  if (backlog_ == nullptr) CreateBacklogLocked();
  master_host_.assign(host);
  master_port_ = port;
  e_->settings().params.Set(engine::ParamValues::Find("replicaof"),
                            Cat(master_host_, " ", master_port_));
  is_replica_.store(true);
  recording_.store(false);
  ++link_gen_;
  link_state_ = LinkState::kConnect;
  down_since_ms_ = e_->Now();
  const int fd = link_fd_.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  e_->DisconnectBlockedClients();  // clients blocked on a master, now a replica (Redis)
  cv_.notify_all();
}

// REPLICAOF host port | REPLICAOF NO ONE (and SLAVEOF)
void Replication::ReplicaOf(engine::CommandCtx* ctx) {
  const std::string_view host = ctx->argv[1], port_arg = ctx->argv[2];
  // A cluster node's master follows the cluster's configuration.
  if (e_->cluster() != nullptr)
    return W(ctx).ErrorLine("ERR REPLICAOF not allowed in cluster mode.");
  {
    std::lock_guard l(mu_);
    if (failover_state_ != FailoverState::kNone)
      return W(ctx).ErrorLine("ERR REPLICAOF not allowed while failing over.");
  }
  if (engine::EqualsIgnoreCase(host, "no") && engine::EqualsIgnoreCase(port_arg, "one")) {
    std::lock_guard l(mu_);
    if (IsReplica()) {
      UnsetMasterLocked();
      spdlog::info("MASTER MODE enabled (user request from '{}')", engine::S(ctx).peer());
    }
    return engine::ReplyOk(ctx);
  }
  // A replica's own connection cannot: the change disconnects it.
  if (engine::S(ctx).repl_role() == engine::kReplRoleReplica)
    return W(ctx).ErrorLine("ERR Command is not valid when client is a replica.");
  int64_t port = 0;
  if (!engine::IntArg(ctx, 2, &port)) return;
  if (port < 0 || port > 65535) return W(ctx).ErrorLine("ERR Invalid master port");
  std::lock_guard l(mu_);
  if (IsReplica() && engine::EqualsIgnoreCase(master_host_, host) && master_port_ == port) {
    spdlog::info(
        "REPLICAOF would result into synchronization with the master we are already "
        "connected with. No operation performed.");
    return W(ctx).Simple("OK Already connected to specified master");
  }
  SetMasterLocked(host, static_cast<int>(port));
  spdlog::info("REPLICAOF {}:{} enabled (user request from '{}')", master_host_, master_port_,
               engine::S(ctx).peer());
  engine::ReplyOk(ctx);
}

void Replication::Follow(const std::string& host, int port) {
  std::lock_guard l(mu_);
  if (IsReplica() && master_host_ == host && master_port_ == port) return;
  SetMasterLocked(host, port);
  spdlog::info("Connecting to MASTER {}:{} (cluster configuration)", host, port);
}

void Replication::Promote() {
  std::lock_guard l(mu_);
  if (!IsReplica()) return;
  UnsetMasterLocked();
  spdlog::info("MASTER MODE enabled (cluster failover)");
}

uint64_t Replication::Offset() const {
  std::lock_guard l(mu_);
  return offset_;
}

int64_t Replication::MasterSilenceMs(int64_t now_ms) const {
  std::lock_guard l(mu_);
  if (!IsReplica()) return 0;
  if (link_state_ == LinkState::kConnected) return now_ms - last_io_ms_;
  return down_since_ms_ != 0 ? now_ms - down_since_ms_ : now_ms;
}

void Replication::PauseForFailover(bool on) {
  {
    std::lock_guard l(mu_);
    cluster_failover_pause_ = on;
  }
  e_->SetWritePause(engine::Engine::WritePause::kFailover, on);
}

}  // namespace vessel::repl
