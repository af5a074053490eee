// One client connection's state: protocol, database, transaction, blocking, output buffer.
// A session lives on one worker; only that worker touches it, except the fields documented as
// shared (atomics and ClientInfo under info_mu).
#ifndef VESSEL_HOST_ENGINE_SESSION_H_
#define VESSEL_HOST_ENGINE_SESSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "host/engine/access.h"
#include "host/engine/messaging.h"
#include "host/engine/registry.h"
#include "host/resp/parser.h"
#include "host/resp/writer.h"

namespace vessel::engine {

class Engine;
struct RoutedKeys;

// What a session needs from its transport. Called on the session's worker only.
class SessionIo {
 public:
  virtual ~SessionIo() = default;
  // Output was produced outside Process() (a blocked client served or timed out): write it,
  // then feed any buffered input to Process() again.
  virtual void Wake() = 0;
  // Close the connection after writing what is pending (CLIENT KILL, output limit).
  virtual void Close() = 0;
  // Reply bytes handed to the socket but not yet written (they count toward the output limit).
  virtual size_t PendingOutput() const { return 0; }
  // The size of the connection's read buffer, which holds the input Process() is given: CLIENT
  // LIST's qbuf-free is what it has left (0 when unknown).
  virtual size_t ReadBufferCapacity() const { return 0; }
};

// Values of ClientInfo::repl_role.
inline constexpr int kReplRoleNone = 0, kReplRoleReplica = 1, kReplRoleMaster = 2;

// A queued MULTI command with its own copy of the arguments.
struct QueuedCommand {
  const CommandSpec* cmd;
  std::vector<std::string> args;
};

// WATCH state, pointed to from Shard::watched; `dirty` is set by whichever worker modifies a
// watched key, under that key's shard lock.
struct WatchState {
  std::atomic<bool> dirty{false};
  struct Watched {
    int db;
    std::string key;
    int64_t expire_at_watch;  // the key's expiry when WATCH ran (0 none, -1 absent)
  };
  std::vector<Watched> keys;
};

// A parked blocking command (see blocking.cc).
struct BlockState {
  bool active = false;
  uint64_t seq = 0;
  const CommandSpec* cmd = nullptr;
  std::vector<std::string> args;  // owned copy; the read buffer moves on
  int db = 0;
  int64_t deadline_ms = 0;                        // 0 = forever
  std::vector<std::pair<int, std::string>> keys;  // (db, key) registered as waiters
  uint32_t flags = 0;                             // VSL_BLOCK_* (ABI 1.7)
  std::string state;                              // block_ex's state, handed to the re-runs
};

// Fields other threads read (CLIENT LIST, INFO), guarded by info_mu or atomic.
struct ClientInfo {
  mutable std::mutex mu;
  std::string name;
  std::atomic<const CommandSpec*> last_cmd{nullptr};
  int64_t created_ms = 0;
  std::atomic<int64_t> last_active_ms{0};
  std::atomic<int> db{0};
  std::atomic<int> protocol{2};
  std::atomic<bool> in_multi{false};
  std::atomic<bool> blocked{false};
  std::atomic<bool> no_evict{false};  // CLIENT NO-EVICT ON
  // Replication: kReplRoleReplica for a replica's connection (after SYNC/PSYNC), kReplRoleMaster
  // for this server's link to its master; set once on the session's worker.
  std::atomic<int> repl_role{0};
  // CLIENT LIST's buffers, as the session's worker last published them (Session::Process,
  // OutputWritten): reply bytes not yet written, the reply buffer's size and its recent peak,
  // the input held (Redis's query buffer) and the room left after it, the queued commands' size.
  std::atomic<size_t> output_bytes{0};
  std::atomic<size_t> reply_capacity{0};
  std::atomic<size_t> reply_peak{0};
  std::atomic<size_t> query_bytes{0};
  std::atomic<size_t> query_free{0};
  std::atomic<size_t> multi_bytes{0};
  std::atomic<int> multi_count{-1};
  std::string user = "default";   // the session's user (under mu)
  uint64_t user_incarnation = 0;  // AccessUser::incarnation() of that user (under mu)
  MessagingInfo messaging;        // subscriptions and tracking (host/pubsub)
};

class Session {
 public:
  Session(Engine* engine, int worker, SessionIo* io, std::string peer, std::string local, int fd);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Executes the complete commands at the start of input and returns the bytes consumed.
  // Replies go to output(). Stops early when the client blocks or must close, and after a
  // turn's budget of work (kTurnCommands commands or kTurnOutputBytes of replies), so that one
  // client's pipeline cannot starve the other clients of its worker: yielded() then says that
  // complete commands may remain, and the transport calls Process again on a later turn.
  size_t Process(std::string_view input);
  static constexpr int kTurnCommands = 1024;
  static constexpr size_t kTurnOutputBytes = size_t{1} << 20;
  std::string& output() { return out_; }
  bool yielded() const { return yielded_; }
  bool closing() const { return closing_; }
  // Over its output-buffer limit: closed at once, its pending replies are dropped (Redis's
  // close-asap).
  bool overflowed() const { return overflowed_; }
  bool blocked() const { return block_.active; }
  // While a parked command re-runs: the state it parked with (block_ex); null otherwise.
  const std::string* BlockedState() const { return block_.active ? &block_.state : nullptr; }
  bool postponed() const { return postponed_; }
  // The current blocking episode (Engine::RetryBlocked takes it).
  uint64_t block_seq() const { return block_.seq; }
  int repl_role() const { return info_.repl_role.load(std::memory_order_relaxed); }
  void set_repl_role(int role) { info_.repl_role.store(role, std::memory_order_relaxed); }
  // True while blocked on (db, key) as one of the keys it takes data from.
  bool WaitsOn(int db, std::string_view key) const {
    for (const auto& [d, k] : block_.keys)
      if (d == db && k == key) return true;
    return false;
  }
  // Hint for the transport's read buffer (see resp::Parser::bytes_hint).
  size_t bytes_hint() const { return parser_.bytes_hint(); }
  // The transport wrote (some of) the output: CLIENT LIST shows what is left.
  void OutputWritten() { PublishOutput(/*peak=*/false); }

  uint64_t id() const { return id_; }
  int worker() const { return worker_; }
  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  const std::string& local() const { return local_; }
  int db() const { return db_; }
  void set_db(int db) {
    db_ = db;
    info_.db.store(db, std::memory_order_relaxed);
  }
  void set_protocol(int protocol) {
    writer_.set_protocol(protocol);
    info_.protocol.store(protocol, std::memory_order_relaxed);
  }
  bool in_multi() const { return in_multi_; }
  // Cluster mode: ASKING was sent (Redis's CLIENT_ASKING). It lasts for the next command, or for
  // a whole transaction up to its EXEC: Execute clears it after any other command outside MULTI.
  bool asking() const { return asking_; }
  void set_asking() { asking_ = true; }
  // Cluster mode: READONLY (Redis's CLIENT_READONLY): a replica serves reads of its master's
  // slots to this connection instead of redirecting them. READWRITE turns it off.
  bool readonly() const { return readonly_; }
  void set_readonly(bool on) { readonly_ = on; }
  const std::vector<QueuedCommand>& queued() const { return queued_; }
  bool monitor() const { return monitor_; }
  // CLIENT REPLY: kOn, kOff (no replies), kSkipNext (the next command's reply is dropped). As
  // Redis: ON also ends a skip in force (so it answers), SKIP is ignored while replies are off.
  enum class ReplyMode { kOn, kOff, kSkipNext };
  void SetReplyMode(ReplyMode mode) {
    switch (mode) {
      case ReplyMode::kOn:
        reply_off_ = skip_now_ = false;
        break;
      case ReplyMode::kOff:
        reply_off_ = true;
        break;
      case ReplyMode::kSkipNext:
        if (!reply_off_) skip_next_ = true;
        break;
    }
  }
  // Bytes [from, to) of output() are a push (a pub/sub message or (un)subscribe confirmation, a
  // tracking invalidation) written while this session's own command runs: they are sent even
  // when CLIENT REPLY drops the command's reply, as Redis's CLIENT_PUSHING. Call on the session's
  // worker, during its command only.
  void NotePush(size_t from, size_t to) {
    if (!pushes_.empty() && pushes_.back().second == from) {
      pushes_.back().second = to;
    } else {
      pushes_.emplace_back(from, to);
    }
  }
  // Marks the session for closing after its pending output is written.
  void CloseAfterReply() { closing_ = true; }
  int protocol() const { return writer_.protocol(); }
  ClientInfo& info() { return info_; }
  const ClientInfo& info() const { return info_; }
  SessionIo* io() const { return io_; }
  // The messaging subsystem's state for this session (null until it subscribes or tracks).
  std::unique_ptr<SessionMessaging>& messaging() { return messaging_; }
  // True when `pending` reply bytes break this client's client-output-buffer-limit class
  // (pubsub while subscribed, else normal): the hard limit, or the soft limit held for longer
  // than its seconds. A client that must still authenticate may leave 16 KiB unread, as in Redis.
  bool OverOutputLimit(size_t pending);

  // ---- access control (engine/access.h) ----
  // The user this session runs as (null when the engine has no access control).
  const AccessUser* user() const { return user_.get(); }
  bool authenticated() const { return authenticated_; }
  // Not authenticated while the default user needs a password (Redis's authRequired).
  bool AuthRequired() const;
  void SetUser(std::shared_ptr<const AccessUser> user, bool authenticated);
  // Back to the default user, authenticated when it is open (new sessions, RESET).
  void ResetUser();
  // "" when the session's user may run cmd with these arguments, else the error line. `in_exec`:
  // EXEC runs the command queued by MULTI.
  std::string CheckAccess(const CommandSpec* cmd, const std::string_view* argv, int argc,
                          bool in_exec);

 private:
  friend class Engine;
  // Runs one command; false when it was postponed (CLIENT PAUSE, a running script): it stays in
  // the input and is parsed again when the pause or the script ends.
  bool Execute(const std::string_view* argv, int argc);
  // What Admit decided about a command.
  enum class Admission {
    kRun,        // run it now
    kQueue,      // queue it (inside MULTI)
    kRefused,    // refused: the error reply is written (Refuse)
    kPostponed,  // left unread until a pause or a script ends
  };
  // Every check a command passes before it runs or is queued, in Redis's order: the command
  // and its arity, protected commands, authentication, no-multi, ACL, loading, disk errors,
  // maxmemory (*oom: no room even after eviction), a subscribed RESP2 context, busy scripts,
  // CLIENT PAUSE. Resolves a container's subcommand into *cmd; in cluster mode, *routed gets the
  // keys routing found.
  Admission Admit(const CommandSpec** cmd, const std::string_view* argv, int argc, bool* oom,
                  RoutedKeys* routed);
  // Writes `msg` as the refusal of cmd (null: an unknown command) and accounts for it; a refused
  // EXEC discards its transaction, a refusal inside MULTI fails the EXEC.
  Admission Refuse(const CommandSpec* cmd, std::string msg);
  // The command named by argv[0] (a cache remembers the last one), or null.
  const CommandSpec* FindCommand(std::string_view name);
  // Appends the command to the MULTI queue and replies QUEUED.
  void Queue(const CommandSpec* cmd, const std::string_view* argv, int argc);
  // Drops the reply the command wrote after `mark`, keeping its pushes (NotePush).
  void DropReply(size_t mark);
  // Copies the output and query buffer figures CLIENT LIST shows into info_ (`held`: input bytes
  // the transport keeps for this session; `peak`: the reply peak too).
  void PublishOutput(bool peak);
  void PublishInput(size_t held);
  bool QueuedWrites() const;  // a queued MULTI command writes

  Engine* engine_;
  const uint64_t id_;
  const int worker_;
  SessionIo* io_;
  const std::string peer_, local_;
  const int fd_;

  resp::Parser parser_;
  std::vector<std::string_view> args_;
  std::string out_;
  resp::Writer writer_;
  std::string lower_;  // scratch for command name lookup
  // The last top-level command found, keyed by its name exactly as the client sent it: a pipeline
  // repeats one name, and a hit skips lowering and hashing it. Specs live as long as the registry.
  std::string last_name_;
  const CommandSpec* last_cmd_ = nullptr;

  int db_ = 0;
  bool closing_ = false;
  bool yielded_ = false;
  bool overflowed_ = false;
  bool monitor_ = false;    // MONITOR: receives the command lines of every client
  bool postponed_ = false;  // waiting for CLIENT PAUSE to end
  bool reply_off_ = false;  // CLIENT REPLY OFF
  bool skip_next_ = false;  // CLIENT REPLY SKIP ran: the reply of the next command is dropped
  bool skip_now_ = false;   // this command's reply is dropped (a SKIP preceded it)
  bool asking_ = false;     // cluster: ASKING (asking())
  bool readonly_ = false;   // cluster: READONLY (readonly())
  std::vector<std::pair<size_t, size_t>> pushes_;  // NotePush ranges of the running command
  bool authenticated_ = true;
  std::shared_ptr<const AccessUser> user_;
  uint64_t user_generation_ = 0;  // AccessControl::generation() when user_ was read
  bool unauth_limits_ = false;    // the parser has the limits of an unauthenticated client
  // MULTI state.
  bool in_multi_ = false;
  bool multi_dirty_ = false;  // a queue-time error: EXEC aborts
  std::vector<QueuedCommand> queued_;
  std::unique_ptr<WatchState> watch_;
  BlockState block_;
  ClientInfo info_;
  std::unique_ptr<SessionMessaging> messaging_;
  int64_t obuf_soft_since_ms_ = 0;   // when the output first went over the soft limit; 0: under
  int64_t reply_peak_since_ms_ = 0;  // when ClientInfo::reply_peak started over
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_SESSION_H_
