// One client connection's state and its command loop.
#include "host/engine/session.h"

#include <algorithm>
#include <cstring>

#include "host/engine/engine.h"
#include "host/engine/memory.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

resp::ParserLimits LimitsOf(Engine* e) {
  resp::ParserLimits l;
  l.max_bulk_len = e->settings().max_bulk_len.load(std::memory_order_relaxed);
  l.max_multibulk_len = e->settings().max_multibulk_len.load(std::memory_order_relaxed);
  return l;
}

// Redis: "unknown command 'x', with args beginning with: 'a' 'b' " (128 bytes of args at most).
std::string UnknownCommand(const std::string_view* argv, int argc) {
  std::string args;
  for (int i = 1; i < argc && args.size() < 128; ++i) {
    args += '\'';
    args.append(argv[i].substr(0, 128 - args.size() + 1));
    args += "' ";
  }
  return Cat("unknown command '", argv[0].substr(0, 128), "', with args beginning with: ", args);
}

// Redis's pubsub context: PING, (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, QUIT, RESET.
bool AllowedWhenSubscribed(std::string_view name) {
  for (std::string_view n : {"ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
                             "psubscribe", "punsubscribe", "quit", "reset"})
    if (name == n) return true;
  return false;
}

// What a client that must still authenticate may leave unread: Redis closes it once its replies
// overflow its 16 KiB reply buffer (the reply list behind it then holds more than 1024 bytes), so
// NOAUTH replies to a pipeline that is never read cannot pile up to the normal class's limit.
constexpr size_t kUnauthenticatedOutputLimit = 16 * 1024;

// Argument vectors above this capacity are given back after the batch (a command with millions
// of arguments would otherwise keep their views for the connection's life).
constexpr size_t kKeepArgs = 1024;

constexpr char kBusyScript[] =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

// Allowed while a script is busy (Redis's allow-busy) but touching the keyspace (watched keys'
// lists): on a worker that cannot take shards now these wait for the script, unread.
bool TouchesShards(const CommandSpec& cmd) {
  for (std::string_view n : {"watch", "unwatch", "discard", "reset"})
    if (cmd.name == n) return true;
  return false;
}

}  // namespace

bool Session::QueuedWrites() const {
  for (const QueuedCommand& q : queued_)
    if (q.cmd->flags & VSL_CMD_WRITE) return true;
  return false;
}

Session::Session(Engine* engine, int worker, SessionIo* io, std::string peer, std::string local,
                 int fd)
    : engine_(engine),
      id_(engine->NextSessionId()),
      worker_(worker),
      io_(io),
      peer_(std::move(peer)),
      local_(std::move(local)),
      fd_(fd),
      parser_(LimitsOf(engine)),
      writer_(&out_, 2) {
  info_.created_ms = engine->Now();
  info_.last_active_ms = info_.created_ms;
  ResetUser();
  WorkerScope scope(engine_, worker_, WorkerScope::kNoScriptWait);  // touches no shard
  engine_->RegisterSession(this);
}

Session::~Session() {
  // Nothing here waits for a script: the blocked and watch state leave their shards later when
  // a script holds them (Engine::WithShardsOrLater).
  WorkerScope scope(engine_, worker_, WorkerScope::kNoScriptWait);
  if (block_.active) engine_->UnblockClient(this, /*served=*/false);
  if (watch_ != nullptr) engine_->Unwatch(this);
  engine_->RemoveMonitor(this);
  if (postponed_) engine_->ForgetPostponed(this);
  if (messaging_ != nullptr) engine_->messaging()->CloseSession(this);
  if (repl_role() != kReplRoleNone && engine_->repl() != nullptr)
    engine_->repl()->SessionClosed(this);
  engine_->UnregisterSession(this);
}

size_t Session::Process(std::string_view input) {
  yielded_ = false;
  if (closing_ || block_.active || postponed_) return 0;
  const uint64_t epoch = engine_->script_epoch();
  WorkerScope scope(engine_, worker_, WorkerScope::kNoScriptWait);  // see Execute's busy check
  if (engine_->current_worker().world_hold == ScriptHold::kHeld) {
    // A script under busy-reply-threshold holds the whole keyspace: the input waits for it.
    engine_->PostponeForScripts(this, epoch);
    return 0;
  }
  info_.last_active_ms.store(engine_->Now(), std::memory_order_relaxed);
  // As Redis's query buffer, which keeps a batch's commands until all have run.
  PublishInput(input.size());
  parser_.set_limits(LimitsOf(engine_));
  WorkerStats& stats = engine_->stats(worker_);
  const size_t out_start = out_.size();
  size_t consumed = 0;
  for (int n = 0; !closing_ && !block_.active && consumed < input.size(); ++n) {
    if (n == kTurnCommands || out_.size() - out_start >= kTurnOutputBytes) {
      yielded_ = true;
      break;
    }
    if (!authenticated_ || unauth_limits_) {  // Redis's tighter limits before AUTH
      resp::ParserLimits l = LimitsOf(engine_);
      unauth_limits_ = l.unauthenticated = AuthRequired();
      parser_.set_limits(l);
    }
    const resp::ParseStatus st = parser_.Parse(input.substr(consumed), &args_);
    if (st == resp::ParseStatus::kNeedMore) {
      consumed += parser_.consumed();  // empty commands skipped before the partial one
      break;
    }
    if (st == resp::ParseStatus::kError) {
      writer_.ErrorLine(Cat("ERR ", parser_.error()));
      engine_->RecordRejected(nullptr, "ERR");
      consumed += parser_.consumed();
      closing_ = true;
      break;
    }
    const size_t size = parser_.consumed();
    const size_t mark = out_.size();
    pushes_.clear();
    const bool from_replica = repl_role() == kReplRoleReplica;
    if (!Execute(args_.data(), static_cast<int>(args_.size()))) break;  // postponed
    consumed += size;
    if (from_replica && out_.size() > mark) {
      // A replica's connection carries the replication stream: a reply would land inside it.
      // Redis disconnects a replica whose command replied; so does this server.
      spdlog::warn("Replica generated a reply to command '{}', disconnecting it addr={}",
                   std::string_view(args_[0]), peer_);
      out_.resize(mark);
      closing_ = true;
      break;
    }
    // CLIENT REPLY: the reply is dropped when, once the command ran, replies are off or skipped
    // for it (a SKIP preceded it), so REPLY ON answers and REPLY OFF does not.
    if ((reply_off_ || skip_now_) && !block_.active) DropReply(mark);
    skip_now_ = false;
    if (skip_next_) {
      skip_next_ = false;
      skip_now_ = true;
    }
    const size_t pending = out_.size() + (io_ != nullptr ? io_->PendingOutput() : 0);
    if (OverOutputLimit(pending)) {
      spdlog::warn(
          "client scheduled to be closed for overcoming of output buffer limits id={} "
          "addr={} pending={}",
          id_, peer_, pending);
      overflowed_ = closing_ = true;
      out_.clear();
      break;
    }
  }
  if (args_.capacity() > kKeepArgs) std::vector<std::string_view>().swap(args_);
  PublishInput(input.size() - consumed);
  PublishOutput(/*peak=*/true);
  stats.Add(stats.net_input_bytes, consumed);
  if (engine_->messaging() != nullptr) engine_->messaging()->EndOfBatch(worker_);
  return consumed;
}

void Session::PublishInput(size_t held) {
  const size_t capacity = io_ != nullptr ? io_->ReadBufferCapacity() : 0;
  info_.query_bytes.store(held, std::memory_order_relaxed);
  info_.query_free.store(capacity > held ? capacity - held : 0, std::memory_order_relaxed);
}

void Session::PublishOutput(bool peak) {
  const size_t pending = out_.size() + (io_ != nullptr ? io_->PendingOutput() : 0);
  info_.output_bytes.store(pending, std::memory_order_relaxed);
  info_.reply_capacity.store(out_.capacity(), std::memory_order_relaxed);
  if (!peak) return;
  // The peak restarts every 5 seconds from what is pending, as Redis's buf_peak
  // (reply-buffer-peak-reset-time).
  constexpr int64_t kPeakResetMs = 5000;
  const int64_t now = engine_->Now();
  size_t highest = info_.reply_peak.load(std::memory_order_relaxed);
  if (now - reply_peak_since_ms_ >= kPeakResetMs) {
    highest = 0;
    reply_peak_since_ms_ = now;
  }
  info_.reply_peak.store(std::max(highest, pending), std::memory_order_relaxed);
}

void Session::DropReply(size_t mark) {
  size_t kept = mark;
  for (const auto& [from, to] : pushes_) {
    if (from < kept || to > out_.size()) continue;  // not of this command's output
    std::memmove(out_.data() + kept, out_.data() + from, to - from);
    kept += to - from;
  }
  out_.resize(kept);
  pushes_.clear();
}

const CommandSpec* Session::FindCommand(std::string_view name) {
  if (last_cmd_ != nullptr && name == last_name_) return last_cmd_;
  AsciiLower(name, &lower_);
  const CommandSpec* cmd = engine_->registry().Find(lower_);
  if (cmd != nullptr && name.size() <= 32) {
    last_name_.assign(name);
    last_cmd_ = cmd;
  }
  return cmd;
}

Session::Admission Session::Refuse(const CommandSpec* cmd, std::string msg) {
  if (cmd != nullptr && cmd->name == "exec") {
    // Redis's execCommandAbort: a refused EXEC discards the transaction. Redis's refusals
    // without a code of their own carry none here either.
    if (msg.starts_with("ERR ")) msg.erase(0, 4);
    msg = Cat("EXECABORT Transaction discarded because of: ", msg);
    engine_->DiscardMulti(this);
    engine_->Unwatch(this);
  }
  writer_.ErrorLine(msg);
  engine_->RecordRejected(cmd, msg);
  if (in_multi_) multi_dirty_ = true;
  return Admission::kRefused;
}

Session::Admission Session::Admit(const CommandSpec** cmd_io, const std::string_view* argv,
                                  int argc, bool* oom, RoutedKeys* routed) {
  const CommandSpec* cmd = *cmd_io;
  if (cmd != nullptr && cmd->is_container() && argc >= 2) {
    const CommandSpec* sub = cmd->Subcommand(argv[1]);
    if (sub == nullptr) {
      std::string upper(argv[0]);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      // No command to charge the refusal to, as in Redis.
      return Refuse(nullptr, Cat("ERR unknown subcommand '", argv[1].substr(0, 128), "'. Try ",
                                 upper, " HELP."));
    }
    cmd = *cmd_io = sub;
  }
  if (cmd == nullptr) return Refuse(nullptr, Cat("ERR ", UnknownCommand(argv, argc)));
  if (!cmd->ArityOk(argc))
    return Refuse(cmd, Cat("ERR wrong number of arguments for '", cmd->name, "' command"));
  info_.last_cmd.store(cmd, std::memory_order_relaxed);
  const uint64_t epoch = engine_->script_epoch();
  const WorkerState& ws = engine_->current_worker();
  // A script runs past busy-reply-threshold: every client is answered BUSY but for the
  // allow-busy commands, as in Redis. This worker may be the one running the script and serving
  // its clients from the script's hook (pumping), or run without its slot while the script holds
  // the whole keyspace (world_hold).
  const bool busy_now = engine_->scripts_busy() || ws.pumping || ws.world_hold == ScriptHold::kBusy;

  if ((cmd->flags & kCmdProtected) && !engine_->DebugAllowed(peer_)) {
    return Refuse(
        cmd,
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
        "you can run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.");
  }
  // The master link obeys its master: no authentication, ACL, read-only or OOM refusal.
  const bool master_link = repl_role() == kReplRoleMaster;
  // Access control, in Redis's order: authentication, then no-multi, then the user's ACL.
  if (!master_link && !(cmd->flags & kCmdNoAuth) && AuthRequired())
    return Refuse(cmd, "NOAUTH Authentication required.");
  if (in_multi_ && (cmd->flags & kCmdNoMulti))
    return Refuse(cmd, "ERR Command not allowed inside a transaction");
  if (user_ != nullptr && !master_link) {
    std::string denied = CheckAccess(cmd, argv, argc, /*in_exec=*/false);
    if (closing_) return Admission::kRefused;  // its user was deleted: the connection closes
    if (!denied.empty()) return Refuse(cmd, std::move(denied));
  }
  // Cluster mode, after the ACL as in Redis: a key served by another node is redirected, keys of
  // several slots are refused. Not the master link's commands (Redis's mustObeyClient).
  if (engine_->cluster() != nullptr && !master_link) {
    std::string redirect;
    if (!engine_->cluster()->Route(this, cmd, argv, argc, routed, &redirect)) {
      if (cmd->name != "exec") return Refuse(cmd, std::move(redirect));
      // A refused EXEC discards the transaction with the redirection itself, as Redis answers.
      engine_->DiscardMulti(this);
      engine_->Unwatch(this);
      writer_.ErrorLine(redirect);
      engine_->RecordRejected(cmd, redirect);
      return Admission::kRefused;
    }
  }
  // Persistence: while the dataset loads only commands flagged loading run; after a disk error
  // (stop-writes-on-bgsave-error, a failed AOF write) writes and PING are refused, as in Redis.
  if (engine_->loading() && !(cmd->flags & kCmdLoading))
    return Refuse(cmd, "LOADING Redis is loading the dataset in memory");
  const uint64_t flags = cmd->FlagsFor(argv, argc);  // a script's own flags (EVAL, FCALL)
  if (engine_->disk_error() &&
      ((flags & VSL_CMD_WRITE) || cmd->name == "ping" || (cmd->name == "exec" && QueuedWrites())))
    return Refuse(cmd, engine_->disk_error_message());

  // At maxmemory: evict by the policy first; what cannot be made to fit refuses commands that
  // may grow memory, and inside MULTI every command that would be queued (the queue itself
  // grows), which then fails EXEC, as in Redis.
  const bool queue = in_multi_ && !(cmd->flags & kCmdTxControl);
  // Not while a script is busy (as Redis): it holds shards eviction would wait for.
  *oom = !busy_now && !master_link && !engine_->EvictToLimit();
  if (*oom && ((flags & VSL_CMD_DENYOOM) || queue))
    return Refuse(cmd, "OOM command not allowed when used memory > 'maxmemory'.");
  // Replication: a read-only replica, min-replicas-to-write, a replica serving no stale data.
  if (!master_link && engine_->repl() != nullptr) {
    const bool write = (flags & VSL_CMD_WRITE) || (cmd->name == "exec" && QueuedWrites());
    std::string refusal = engine_->repl()->Refusal(write, (cmd->flags & kCmdStale) != 0);
    if (!refusal.empty()) return Refuse(cmd, std::move(refusal));
  }
  // A subscribed RESP2 connection only takes the commands that make sense there (Redis).
  if (messaging_ != nullptr && protocol() == 2 && info_.messaging.in_pubsub() &&
      !AllowedWhenSubscribed(cmd->name)) {
    return Refuse(cmd, Cat("ERR Can't execute '", cmd->name,
                           "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                           "allowed in this context"));
  }
  // Only Redis's allow-busy commands run while a script is busy; those that touch the keyspace
  // wait for the script, unread; the rest are answered BUSY, as Redis answers.
  // The master link's commands wait for a busy script (its thread tries again), never BUSY.
  if (busy_now && master_link) return Admission::kPostponed;
  if (busy_now) {
    if (cmd->flags & kCmdAllowBusy) {
      if (TouchesShards(*cmd)) {
        engine_->PostponeForScripts(this, epoch);
        return Admission::kPostponed;
      }
    } else {
      std::string busy;
      if (engine_->busy_probe() != nullptr) engine_->busy_probe()->AnyHold(&busy);
      // Unless the script ended (or its threshold was raised) since: the command runs then.
      if (!busy.empty() || ws.pumping || ws.world_hold == ScriptHold::kBusy)
        return Refuse(cmd, busy.empty() ? std::string(kBusyScript) : std::move(busy));
    }
  }
  // CLIENT PAUSE: the command waits, still unread, until the pause ends. Not the master link's,
  // which runs on the replication thread (no event loop to wake it): a pause on a replica does
  // not hold its master's stream back.
  if (!master_link && engine_->Paused(cmd, this)) {
    engine_->Postpone(this);
    return Admission::kPostponed;
  }
  return queue ? Admission::kQueue : Admission::kRun;
}

void Session::Queue(const CommandSpec* cmd, const std::string_view* argv, int argc) {
  QueuedCommand q{cmd, {}};
  q.args.reserve(argc);
  for (int i = 0; i < argc; ++i) q.args.emplace_back(argv[i]);
  queued_.push_back(std::move(q));
  info_.multi_count.store(static_cast<int>(queued_.size()), std::memory_order_relaxed);
  // Redis's multi-mem: the arguments' bytes and a pointer each.
  size_t bytes = sizeof(void*) * static_cast<size_t>(argc);
  for (int i = 0; i < argc; ++i) bytes += argv[i].size();
  info_.multi_bytes.fetch_add(bytes, std::memory_order_relaxed);
  writer_.Simple("QUEUED");
}

bool Session::Execute(const std::string_view* argv, int argc) {
  const CommandSpec* cmd = FindCommand(argv[0]);
  bool oom = false;
  RoutedKeys routed;
  switch (Admit(&cmd, argv, argc, &oom, &routed)) {
    case Admission::kRefused:
      if (asking_ && !in_multi_) asking_ = false;  // one command (Redis's resetClient)
      return true;
    case Admission::kPostponed:
      return false;
    case Admission::kQueue:
      Queue(cmd, argv, argc);
      return true;
    case Admission::kRun:
      break;
  }

  // A script that learns it needs the whole keyspace before it changed anything runs again,
  // once, with the whole keyspace held (CommandCtx::rerun).
  for (int attempt = 0;; ++attempt) {
    CommandCtx ctx;
    ctx.engine = engine_;
    ctx.session = this;
    ctx.cmd = cmd;
    ctx.argv = argv;
    ctx.argc = argc;
    ctx.db = &engine_->db(db_);
    ctx.w = &writer_;
    ctx.now_ms = engine_->Now();
    ctx.can_block = true;
    ctx.oom = oom;
    ctx.routed = &routed;
    engine_->Run(&ctx);
    if (ctx.postponed) {  // it met a script's lock: read again when the scripts change
      engine_->PostponeForScripts(this, ctx.script_epoch);
      return false;
    }
    if (!ctx.rerun) break;
    if (attempt > 0) {  // the scripting layer never asks twice; a reply is owed all the same
      writer_.ErrorLine("ERR the script needs more of the keyspace than it could lock");
      break;
    }
  }
  WorkerStats& st = engine_->stats(worker_);
  st.Add(st.commands);
  if (messaging_ != nullptr) engine_->messaging()->AfterCommand(this, cmd);
  // ASKING lasts one command, or a transaction up to its EXEC (Redis's resetClient).
  if (asking_ && !in_multi_ && cmd->name != "asking") asking_ = false;
  return true;
}

void Session::SetUser(std::shared_ptr<const AccessUser> user, bool authenticated) {
  user_ = std::move(user);
  authenticated_ = authenticated;
  AccessControl* ac = engine_->access();
  user_generation_ = ac != nullptr ? ac->generation() : 0;
  std::lock_guard l(info_.mu);
  info_.user = user_ != nullptr ? user_->name() : "default";
  info_.user_incarnation = user_ != nullptr ? user_->incarnation() : 0;
}

void Session::ResetUser() {
  AccessControl* ac = engine_->access();
  if (ac == nullptr) return SetUser(nullptr, true);
  const uint64_t generation = ac->generation();  // read first: a change after it is seen later
  SetUser(ac->DefaultUser(), ac->default_open());
  user_generation_ = generation;
}

std::string Session::CheckAccess(const CommandSpec* cmd, const std::string_view* argv, int argc,
                                 bool in_exec) {
  AccessControl* ac = engine_->access();
  if (ac == nullptr || user_ == nullptr) return "";
  const uint64_t generation = ac->generation();
  if (generation != user_generation_) {
    std::shared_ptr<const AccessUser> current = ac->Current(*user_);
    if (current == nullptr) {  // deleted: ACL DELUSER closes its clients
      closing_ = true;
      return Cat("NOPERM this user has no permissions to run the '", cmd->name, "' command");
    }
    user_ = std::move(current);
    user_generation_ = generation;
  }
  if (user_->unrestricted()) return "";
  return ac->Check(*this, *user_, *cmd, argv, argc, in_exec);
}

bool Session::AuthRequired() const {
  return !authenticated_ && engine_->access() != nullptr && !engine_->access()->default_open();
}

bool Session::OverOutputLimit(size_t pending) {
  if (pending > kUnauthenticatedOutputLimit && AuthRequired()) return true;
  RuntimeSettings& rs = engine_->settings();
  const int cls = repl_role() == kReplRoleReplica ? RuntimeSettings::kObufReplica
                  : info_.messaging.in_pubsub()   ? RuntimeSettings::kObufPubsub
                                                  : RuntimeSettings::kObufNormal;
  const int64_t hard = cls == RuntimeSettings::kObufNormal
                           ? rs.output_buffer_limit.load(std::memory_order_relaxed)
                           : rs.obuf[cls].hard.load(std::memory_order_relaxed);
  const int64_t soft = rs.obuf[cls].soft.load(std::memory_order_relaxed);
  const auto used = static_cast<int64_t>(pending);
  if (hard > 0 && used >= hard) return true;
  if (soft <= 0 || used < soft) {
    obuf_soft_since_ms_ = 0;
    return false;
  }
  // As Redis: over the soft limit for longer than its seconds (whole seconds elapsed).
  const int64_t now = engine_->Now();
  if (obuf_soft_since_ms_ == 0) {
    obuf_soft_since_ms_ = now;
    return false;
  }
  return (now - obuf_soft_since_ms_) / 1000 > rs.obuf[cls].seconds.load(std::memory_order_relaxed);
}

}  // namespace vessel::engine
