// Command execution: key resolution, locks, the call into the handler, and what every command
// is charged (changes, statistics, slowlog, latency, MONITOR); Call runs a command inside
// another (scripts, EXEC).
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "host/engine/abi.h"
#include "host/engine/access.h"
#include "host/engine/engine.h"
#include "host/engine/memory.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

thread_local const CommandCtx* t_running = nullptr;
// The running command whose changes Touch counts (the innermost one, as t_running).
thread_local CommandCtx* t_counting = nullptr;
// Key changes Touch saw on this thread that are not the host's own (expiry, eviction): a
// command that moved it wrote something the append-only file records.
thread_local uint64_t t_writes = 0;
// Depth of Engine::HostChanges scopes on this thread.
thread_local int t_host_changes = 0;

class CountingScope {
 public:
  explicit CountingScope(CommandCtx* ctx) : prev_(t_counting) { t_counting = ctx; }
  ~CountingScope() { t_counting = prev_; }
  CountingScope(const CountingScope&) = delete;
  CountingScope& operator=(const CountingScope&) = delete;

 private:
  CommandCtx* prev_;
};

// Converts the host's argument views to the SDK's slices (different field order).
struct Slices {
  absl::InlinedVector<vsl_slice, 8> v;
  Slices(const std::string_view* argv, int argc) {
    v.resize(argc);
    for (int i = 0; i < argc; ++i) v[i] = {argv[i].data(), argv[i].size()};
  }
};

}  // namespace

const CommandCtx* RunningCtx() { return t_running; }
RunningScope::RunningScope(const CommandCtx* ctx) : prev_(t_running) { t_running = ctx; }
RunningScope::~RunningScope() { t_running = prev_; }

Engine::HostChanges::HostChanges() { ++t_host_changes; }
Engine::HostChanges::~HostChanges() { --t_host_changes; }

uint64_t CommandCtx::ChangeCount() const {
  if (changes_reported) return changes;
  if (cmd == nullptr || cmd->native != nullptr) return touches;
  // One per distinct key a module command changed: two handles may name one key (LMOVE a a).
  uint64_t n = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i].changed) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j)
      seen = keys[j].changed && keys[j].db == keys[i].db && keys[j].name == keys[i].name;
    n += seen ? 0 : 1;
  }
  return n;
}

const CommandCtx* Engine::running_command() { return t_running; }

void Engine::ResolveKeys(CommandCtx* ctx) {
  ctx->keys.clear();
  if (ctx->cmd->keyspecs.empty() && ctx->cmd->resolve_hook == nullptr) return;
  KeyRefs own;
  const RoutedKeys* routed = ctx->routed != nullptr && ctx->routed->found ? ctx->routed : nullptr;
  if (routed == nullptr) ExtractKeys(*ctx->cmd, ctx->argv, ctx->argc, &own, /*partial=*/true);
  for (const KeyRef& r : routed != nullptr ? routed->refs : own) {
    CommandKey k;
    k.ctx = ctx;
    k.name = ctx->argv[r.arg_index];
    k.hash = routed != nullptr ? HashKeyInSlot(k.name, static_cast<uint32_t>(routed->slot))
                               : HashKey(k.name);
    k.db = ctx->db;
    k.shard = &ctx->db->shard(ctx->db->ShardOf(k.hash));
    k.flags = r.flags;
    ctx->keys.push_back(k);
  }
  if (ctx->cmd->resolve_hook != nullptr) ctx->cmd->resolve_hook(ctx);
}

void Engine::AddLocks(const CommandCtx& ctx, LockSet* locks) const {
  for (const CommandKey& k : ctx.keys) {
    locks->Add(static_cast<uint32_t>(k.db->index()),
               static_cast<uint32_t>(k.shard - &k.db->shard(0)),
               // A blocking command's keys exclusively, read-only ones too (XREAD): parking and
               // retrying change the shard's queue of blocked clients.
               k.writable() || (ctx.cmd->flags & (kCmdExclusiveKeys | VSL_CMD_BLOCKING)),
               k.writable() ? EntryTable::ChunkBit(k.hash) : 0);
  }
}

void Engine::Run(CommandCtx* ctx) {
  const auto start = std::chrono::steady_clock::now();
  const CommandSpec& cmd = *ctx->cmd;
  std::unique_ptr<WorldExclusive> world;
  // A lock a running script holds is never waited for: the command is postponed until the
  // scripts change, or refused with BUSY past busy-reply-threshold (ScriptHold).
  ctx->script_epoch = script_epoch();
  const bool can_postpone = CanPostpone(ctx);
  std::string busy;
  ScriptHold hold = ScriptHold::kFree;
  auto refuse = [&] {
    if (hold == ScriptHold::kHeld) {
      ctx->postponed = true;
      return;
    }
    ctx->ResetReplies(ctx->w->out()->size());
    ctx->w->ErrorLine(busy);
    if (!ctx->internal) Account(ctx, 0);
  };
  if (!ctx->world && !ctx->in_exec && NeedsWorld(cmd, ctx->argv, ctx->argc)) {
    world = WorldExclusive::TryTake(this, &busy, &hold, /*wait_held=*/!can_postpone);
    if (world == nullptr) return refuse();
    ctx->world = true;
  }
  ResolveKeys(ctx);
  LockSet locks;
  if (!ctx->world && !ctx->in_exec) {
    AddLocks(*ctx, &locks);
    if (!LockForCommand(&locks, ctx, &hold, &busy)) return refuse();
    ctx->locks = &locks;
  }
  ctx->ResetReplies(ctx->w->out()->size());
  ctx->changes_reported = false;
  ctx->changes = 0;
  ctx->touches = 0;
  const bool outermost = running_command() == nullptr;
  // Persistence: a command that changed keys is recorded (AOF) under its locks.
  WorkerStats& st = *stats_[current_worker().index];
  const uint64_t dirty_before = st.dirty.load(std::memory_order_relaxed);
  const uint64_t writes_before = t_writes;
  RunningScope running(ctx);  // to the end: tracking and events see the running command
  CountingScope counting(ctx);
  if (cmd.native != nullptr) {
    cmd.native(ctx);
    if (ctx->postponed || ctx->rerun) {  // nothing took effect (ShardGuard, a script's restart)
      ctx->w->out()->resize(ctx->out_mark);
      return;
    }
  } else {
    memory::ModuleScope scope(cmd.module->id);
    Slices slices(ctx->argv, ctx->argc);
    const int rc = cmd.handler(ToAbi(ctx), slices.v.data(), ctx->argc);
    if (rc != VSL_OK) {
      LogHandlerStatus(cmd, rc);
    }
  }
  if (messaging_ != nullptr && messaging_->tracking_clients.load(std::memory_order_relaxed) != 0)
    messaging_->EndCommand(ctx);  // under the locks: a later write of a key read here invalidates
  // Redis's server.dirty counts changes as each command defines them; EXEC's commands and a
  // script's add their own. A built-in's internal calls (SORT ... STORE, RESTORE, loading a file)
  // count nothing: the outer command reports its changes.
  if (!ctx->internal || ctx->script_call) {
    if (const uint64_t n = ctx->ChangeCount(); n != 0) st.Add(st.dirty, n);
  }
  if (persist_ != nullptr && (!ctx->internal || ctx->script_effect) &&
      (st.dirty.load(std::memory_order_relaxed) != dirty_before || t_writes != writes_before ||
       ctx->propagate_set))
    persist_->AfterWrite(ctx);
  bool parked = false;
  if (ctx->session != nullptr && ctx->session->blocked()) {
    parked = FinishRetry(ctx);  // a parked command re-run: stay queued or leave the queues
  } else if (ctx->blocked) {
    parked = BlockClient(ctx);  // under the locks: no write slips between the check and the park
  }
  if (!parked && cmd.native == nullptr &&
      (ctx->top_replies != 1 || !ctx->open.empty() || ctx->reply_invalid)) {
    // A handler must send exactly one complete reply: replace whatever it wrote by an error.
    spdlog::error(
        "module misuse: command sent {} replies ({} unfinished aggregates{}) module={} "
        "cmd={}",
        ctx->top_replies, ctx->open.size(), ctx->reply_invalid ? ", invalid aggregate lengths" : "",
        cmd.module->name, cmd.name);
    ctx->w->out()->resize(ctx->out_mark);
    ctx->w->Error("ERR", Cat("command '", cmd.name, "' sent an invalid reply"));
  }
  // A parked command is accounted for when it is served or times out (its last re-run).
  if (!parked && !ctx->internal) {
    Account(ctx, std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  if (outermost) PostDeferredWakes();
}

// A module handler that returned an error status: logged as module.h promises, at most once a
// second per server (a broken module must not flood the log).
void Engine::LogHandlerStatus(const CommandSpec& cmd, int rc) {
  static std::atomic<int64_t> last_ms{0};
  static std::atomic<uint64_t> suppressed{0};
  const int64_t now = WallMs();
  int64_t last = last_ms.load(std::memory_order_relaxed);
  if (now - last < 1000 || !last_ms.compare_exchange_strong(last, now)) {
    suppressed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  spdlog::warn("module command returned an error status module={} cmd={} rc={} suppressed={}",
               cmd.module != nullptr ? cmd.module->name : "", cmd.name, rc,
               suppressed.exchange(0, std::memory_order_relaxed));
}

void Engine::Account(CommandCtx* ctx, int64_t duration_ns) {
  const CommandSpec& cmd = *ctx->cmd;
  WorkerStats& st = *stats_[current_worker().index];
  CommandCounters& c = st.by_command[cmd.id];
  CommandCounters::Add(c.calls, 1);
  CommandCounters::Add(c.nsec, static_cast<uint64_t>(duration_ns));
  const std::string& out = *ctx->w->out();
  if (out.size() > ctx->out_mark && out[ctx->out_mark] == '-') {
    CommandCounters::Add(c.failed, 1);
    st.Add(st.error_replies);
    errors_.Add(std::string_view(out).substr(ctx->out_mark, 64));
  }
  if (ParamInt(p_latency_tracking_) != 0) {
    LatencyHistogram* h = c.histogram.load(std::memory_order_relaxed);
    if (h == nullptr) {
      h = new LatencyHistogram();
      c.histogram.store(h, std::memory_order_release);
    }
    h->Record(static_cast<uint64_t>(duration_ns));
  }
  const int64_t us = duration_ns / 1000;
  const int64_t slower = ParamInt(p_slowlog_slower_);
  if (slower >= 0 && us >= slower && !(cmd.flags & kCmdSkipSlowlog)) {
    std::string peer, name;
    if (ctx->session != nullptr) {
      peer = ctx->session->peer();
      std::lock_guard l(ctx->session->info().mu);
      name = ctx->session->info().name;
    }
    absl::InlinedVector<std::string_view, 8> shown(ctx->argv, ctx->argv + ctx->argc);
    for (int i = 0; i < ctx->argc; ++i)
      if (RedactedArgument(cmd, ctx->argv, ctx->argc, i)) shown[i] = "(redacted)";
    slowlog_.Add(shown.data(), ctx->argc, us, Now(), std::move(peer), std::move(name),
                 static_cast<size_t>(ParamInt(p_slowlog_max_len_)));
  }
  if (monitor_count_.load(std::memory_order_relaxed) != 0 &&
      !(cmd.flags & (VSL_CMD_ADMIN | kCmdSkipMonitor)))
    FeedMonitors(*ctx);
  const int64_t threshold = ParamInt(p_latency_threshold_);
  if (threshold > 0 && us / 1000 >= threshold) {
    latency_monitor_.Add((cmd.flags & VSL_CMD_FAST) ? "fast-command" : "command", Now(), us / 1000);
  }
}

void Engine::RecordRejected(const CommandSpec* cmd, std::string_view error_line) {
  WorkerStats& st = *stats_[current_worker().index];
  if (cmd != nullptr) CommandCounters::Add(st.by_command[cmd->id].rejected, 1);
  st.Add(st.error_replies);
  errors_.Add(error_line);
}

bool Engine::NeedsWorld(const CommandSpec& cmd, const std::string_view* argv, int argc) {
  return (cmd.flags & kCmdGlobalWorld) ||
         (cmd.needs_world != nullptr && cmd.needs_world(argv, argc));
}

bool Engine::Call(CommandCtx* parent, const std::vector<std::string_view>& argv, int protocol,
                  std::string* out) {
  resp::Writer w(out, protocol);
  const CommandSpec* cmd = registry_.Resolve(argv.data(), static_cast<int>(argv.size()));
  if (cmd == nullptr) {
    w.ErrorLine("ERR Unknown Redis command called from script");
    return false;
  }
  if (!cmd->ArityOk(static_cast<int>(argv.size()))) {
    w.ErrorLine("ERR Wrong number of args calling Redis command from script");
    return false;
  }
  CommandCtx ctx;
  ctx.engine = this;
  ctx.session = parent->session;
  ctx.cmd = cmd;
  ctx.argv = argv.data();
  ctx.argc = static_cast<int>(argv.size());
  ctx.db = parent->db;
  ctx.w = &w;
  ctx.now_ms = parent->now_ms;
  ctx.in_exec = true;  // the caller holds the locks
  ctx.world = parent->world;
  ctx.locks = parent->locks;
  ctx.extra_locks = parent->extra_locks;
  ctx.internal = true;
  ctx.script_caller = parent->script_caller;
  ctx.oom = parent->oom;
  // A script's parent context has no command of its own (host/scripting): its writes are recorded.
  ctx.script_effect = parent->script_effect || (!parent->internal && parent->cmd == nullptr);
  ctx.script_call = !parent->internal && parent->cmd == nullptr;
  if (!ctx.world) {
    // Only keys of shards the caller holds, exclusively when the call may write them.
    ResolveKeys(&ctx);
    for (const CommandKey& k : ctx.keys) {
      const auto shard = static_cast<uint32_t>(k.shard - &k.db->shard(0));
      const auto db = static_cast<uint32_t>(k.db->index());
      const bool held = (ctx.locks != nullptr && ctx.locks->Holds(db, shard, k.writable())) ||
                        (ctx.extra_locks != nullptr &&  // shards a script added (scripting)
                         ctx.extra_locks->Holds(db, shard, k.writable()));
      if (!held) {
        w.ErrorLine("ERR command touches a key its caller did not lock");
        return false;
      }
    }
    // Commands that walk every shard (KEYS, SCAN, ...) need the whole keyspace too: the caller
    // may hold some shard exclusively, which their shared per-shard locks would wait for.
    if (NeedsWorld(*cmd, ctx.argv, ctx.argc) || (cmd->flags & kCmdTxWorld)) {
      w.ErrorLine("ERR command needs the whole keyspace, its caller does not hold it");
      return false;
    }
  }
  Run(&ctx);
  return true;
}

void Engine::AddDirty(uint64_t n) {
  stats_[current_worker().index]->Add(stats_[current_worker().index]->dirty, n);
}

void Engine::Touch(Database& db, Shard& shard, std::string_view key, uint64_t hash) {
  if (t_host_changes == 0) {
    ++t_writes;
    if (t_counting != nullptr) ++t_counting->touches;
  }
  if (shard.watched != nullptr) {
    auto it = shard.watched->find(key);
    if (it != shard.watched->end()) {
      for (WatchState* w : it->second) w->dirty.store(true, std::memory_order_relaxed);
    }
  }
  if (shard.blocked != nullptr) WakeWaiters(db, shard, key);
  if (messaging_ != nullptr && messaging_->tracking_clients.load(std::memory_order_relaxed) != 0)
    messaging_->KeyModified(key, hash);
}

}  // namespace vessel::engine
