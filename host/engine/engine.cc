// The engine core: construction, command execution under key locks, key operations, expiry.
#include "host/engine/engine.h"

#include <chrono>
#include <cstring>

#include "host/config/params.h"
#include "host/engine/abi.h"
#include "host/engine/access.h"
#include "host/engine/builtins.h"
#include "host/engine/lazy_free.h"
#include "host/engine/memory.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

thread_local WorkerState* t_worker = nullptr;
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

uint32_t Log2(uint64_t v) {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < v) ++bits;
  return bits;
}

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

int64_t Engine::WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

ParamValues::ParamValues(const std::vector<std::string>& initial)
    : texts_(initial), ints_(new std::atomic<int64_t>[config::GenericParams().size()]) {
  const auto defs = config::GenericParams();
  texts_.resize(defs.size());
  for (size_t i = initial.size(); i < defs.size(); ++i) texts_[i] = std::string(defs[i].def);
  for (size_t i = 0; i < defs.size(); ++i) ints_[i] = config::ParamInteger(defs[i], texts_[i]);
}

std::string ParamValues::Text(int i) const {
  std::lock_guard l(mu_);
  return texts_[i];
}

void ParamValues::Set(int i, std::string normalized) {
  std::lock_guard l(mu_);
  ints_[i].store(config::ParamInteger(config::GenericParams()[i], normalized),
                 std::memory_order_relaxed);
  texts_[i] = std::move(normalized);
}

int ParamValues::Find(std::string_view name) {
  // Built once: lowercase name and alias -> index.
  static const StrMap<int> index = [] {
    StrMap<int> m;
    const auto defs = config::GenericParams();
    for (size_t i = 0; i < defs.size(); ++i) {
      m.emplace(std::string(defs[i].name), static_cast<int>(i));
      if (!defs[i].alias.empty()) m.emplace(std::string(defs[i].alias), static_cast<int>(i));
    }
    return m;
  }();
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  std::string lower;
  AsciiLower(name, &lower);
  it = index.find(lower);
  return it == index.end() ? -1 : it->second;
}

Engine::Engine(const config::Config& config)
    : config_(config), settings_(config.params), start_ms_(WallMs()) {
  const auto& s = config_.server;
  settings_.maxclients = s.maxclients;
  settings_.timeout = s.timeout;
  settings_.maxmemory = config_.storage.maxmemory;
  settings_.hz = config_.storage.hz;
  settings_.max_bulk_len = s.max_bulk_len;
  settings_.max_multibulk_len = s.max_multibulk_len;
  settings_.query_buffer_limit = s.query_buffer_limit;
  settings_.output_buffer_limit = s.output_buffer_limit;
  settings_.lazyfree_threshold = config_.storage.lazyfree_threshold;
  settings_.log_level = static_cast<int>(spdlog::get_level());
  settings_.maxmemory_policy = config_.storage.maxmemory_policy;
  EvictionPolicy policy = EvictionPolicy::kNoEviction;
  ParsePolicy(config_.storage.maxmemory_policy, &policy);  // validated by the config loader
  settings_.eviction_policy = static_cast<int>(policy);
  settings_.maxmemory_samples = config_.storage.maxmemory_samples;

  p_latency_tracking_ = ParamValues::Find("latency-tracking");
  p_slowlog_slower_ = ParamValues::Find("slowlog-log-slower-than");
  p_slowlog_max_len_ = ParamValues::Find("slowlog-max-len");
  p_latency_threshold_ = ParamValues::Find("latency-monitor-threshold");
  p_enable_debug_ = ParamValues::Find("enable-debug-command");
  p_notify_ = ParamValues::Find("notify-keyspace-events");
  // Redis's defaults: "slave 256mb 64mb 60 pubsub 32mb 8mb 60" (normal: output_buffer_limit).
  settings_.obuf[RuntimeSettings::kObufReplica].hard = int64_t{256} << 20;
  settings_.obuf[RuntimeSettings::kObufReplica].soft = int64_t{64} << 20;
  settings_.obuf[RuntimeSettings::kObufReplica].seconds = 60;
  settings_.obuf[RuntimeSettings::kObufPubsub].hard = int64_t{32} << 20;
  settings_.obuf[RuntimeSettings::kObufPubsub].soft = int64_t{8} << 20;
  settings_.obuf[RuntimeSettings::kObufPubsub].seconds = 60;

  const uint32_t bits = Log2(static_cast<uint64_t>(config_.storage.shards));
  for (int i = 0; i < config_.storage.databases; ++i)
    dbs_.push_back(std::make_unique<Database>(i, bits));
  AttachWorkers({});
  RegisterBuiltins();
}

Engine::~Engine() {
  // Watch and blocked states that waited for a script may be gone with the workers' queues.
  for (auto& db : dbs_) {
    for (uint32_t i = 0; i < db->shard_count(); ++i) {
      db->shard(i).watched.reset();
      db->shard(i).blocked.reset();
    }
  }
  // Values are owned by their modules' types: free them while the modules are still loaded.
  for (auto& db : dbs_) FlushDb(*db, /*lazy=*/false);
  LazyFree::Instance().Drain();
}

void Engine::AttachWorkers(std::vector<WorkerExecutor*> workers) {
  executors_ = std::move(workers);
  const int n = static_cast<int>(executors_.size()) + 1;  // + the external slot
  world_ = std::make_unique<WorldLock>(n + 1);            // + the snapshot thread's
  workers_.clear();
  stats_.clear();
  for (int i = 0; i < n; ++i) {
    auto w = std::make_unique<WorkerState>();
    w->index = i;
    w->rng.seed(static_cast<uint64_t>(WallMs()) * 7919 + i);
    workers_.push_back(std::move(w));
    stats_.push_back(std::make_unique<WorkerStats>());
  }
}

void Engine::OnParamSet(std::string_view name, std::shared_ptr<ParamApply> apply) {
  const int i = ParamValues::Find(name);
  if (i < 0) return;
  if (param_hooks_.size() <= static_cast<size_t>(i)) param_hooks_.resize(i + 1);
  param_hooks_[i] = std::move(apply);
}

const std::shared_ptr<Engine::ParamApply>& Engine::ParamHook(int generic) const {
  static const std::shared_ptr<ParamApply> kNone;
  if (generic < 0 || static_cast<size_t>(generic) >= param_hooks_.size()) return kNone;
  return param_hooks_[generic];
}

WorkerState& Engine::current_worker() { return t_worker != nullptr ? *t_worker : *workers_.back(); }

const CommandCtx* Engine::running_command() { return t_running; }

// ---- execution ----

void Engine::ResolveKeys(CommandCtx* ctx) {
  ctx->keys.clear();
  if (ctx->cmd->keyspecs.empty() && ctx->cmd->resolve_hook == nullptr) return;
  KeyRefs refs;
  ExtractKeys(*ctx->cmd, ctx->argv, ctx->argc, &refs, /*partial=*/true);
  for (const KeyRef& r : refs) {
    CommandKey k;
    k.ctx = ctx;
    k.name = ctx->argv[r.arg_index];
    k.hash = HashKey(k.name);
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
               k.writable() || (ctx.cmd->flags & kCmdExclusiveKeys),
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

// ---- CLIENT PAUSE ----

void Engine::Pause(int64_t timeout_ms, PauseType type) {
  const int64_t end = Now() + timeout_ms;
  std::lock_guard l(pause_mu_);
  if (pause_type_.load() == 0 || Now() >= pause_end_ms_.load()) {
    pause_type_.store(static_cast<int>(type));
    pause_end_ms_.store(end);
  } else {
    pause_type_.store(std::max(pause_type_.load(), static_cast<int>(type)));
    pause_end_ms_.store(std::max(pause_end_ms_.load(), end));
  }
  const int worker = current_worker().index;
  if (worker < worker_count())
    executors_[worker]->PostAfter(timeout_ms + 1, [this] { EndPauseIfDue(); });
}

void Engine::Unpause() {
  {
    std::lock_guard l(pause_mu_);
    pause_end_ms_.store(0);
  }
  EndPauseIfDue();
}

bool Engine::Paused(const CommandSpec* cmd, const Session* s) {
  const int type = pause_type_.load(std::memory_order_relaxed);
  if (type == 0 || Now() >= pause_end_ms_.load(std::memory_order_relaxed)) return false;
  if (type == static_cast<int>(PauseType::kAll)) return true;
  if (cmd->flags & (VSL_CMD_WRITE | kCmdMayReplicate)) return true;
  if (cmd->name == "exec") {
    for (const QueuedCommand& q : s->queued_)
      if (q.cmd->flags & (VSL_CMD_WRITE | kCmdMayReplicate)) return true;
  }
  return false;
}

void Engine::Postpone(Session* s) {
  s->postponed_ = true;
  std::lock_guard l(pause_mu_);
  postponed_.emplace_back(s->id(), s->worker());
  blocked_count_.fetch_add(1, std::memory_order_relaxed);
}

void Engine::ForgetPostponed(Session* s) {
  std::lock_guard l(pause_mu_);
  const size_t before = postponed_.size();
  std::erase_if(postponed_, [&](const auto& p) { return p.first == s->id(); });
  if (postponed_.size() != before) blocked_count_.fetch_sub(1, std::memory_order_relaxed);
  s->postponed_ = false;
}

// Ends the pause when its time has come (a later CLIENT PAUSE may have extended it: its own
// timer ends it then) and resumes every postponed session on its worker.
void Engine::EndPauseIfDue() {
  std::vector<std::pair<uint64_t, int>> resume;
  {
    std::lock_guard l(pause_mu_);
    if (Now() < pause_end_ms_.load()) return;
    pause_type_.store(0);
    resume.swap(postponed_);
    blocked_count_.fetch_sub(static_cast<int64_t>(resume.size()), std::memory_order_relaxed);
  }
  for (const auto& [id, worker] : resume) {
    if (worker >= worker_count()) continue;
    PostToWorker(worker, [this, id = id, worker = worker] {
      auto& sessions = workers_[worker]->sessions;
      auto it = sessions.find(id);
      if (it == sessions.end() || !it->second->postponed_) return;
      it->second->postponed_ = false;
      it->second->io()->Wake();
    });
  }
}

bool Engine::Allowed(int protected_param, std::string_view peer) const {
  const int64_t v = ParamInt(protected_param);  // index in {no, yes, local}
  if (v == 1) return true;
  return v == 2 && (peer.starts_with("127.") || peer.starts_with("[::1]"));
}

bool Engine::AddMonitor(Session* s) {
  if (s->monitor_) return false;
  s->monitor_ = true;
  std::lock_guard l(monitors_mu_);
  monitors_.emplace_back(s->id(), s->worker());
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
  return true;
}

void Engine::RemoveMonitor(Session* s) {
  if (!s->monitor_) return;
  s->monitor_ = false;
  std::lock_guard l(monitors_mu_);
  std::erase_if(monitors_, [&](const auto& m) { return m.first == s->id(); });
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

// Posts the command's MONITOR line to every monitor's worker, where it is appended to the
// monitor's output; lines from one worker arrive in order.
void Engine::FeedMonitors(const CommandCtx& ctx) {
  std::vector<std::pair<uint64_t, int>> targets;
  {
    std::lock_guard l(monitors_mu_);
    targets = monitors_;
  }
  if (targets.empty()) return;
  auto line = std::make_shared<const std::string>(MonitorLine(ctx));
  for (const auto& [id, worker] : targets) {
    if (worker >= worker_count()) continue;
    PostToWorker(worker, [this, id = id, worker = worker, line] {
      auto& sessions = workers_[worker]->sessions;
      auto it = sessions.find(id);
      if (it == sessions.end() || !it->second->monitor_ || it->second->closing()) return;
      it->second->out_ += *line;
      it->second->io()->Wake();
    });
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
  std::string lower;
  AsciiLower(argv[0], &lower);
  const CommandSpec* cmd = registry_.Find(lower);
  if (cmd != nullptr && cmd->is_container() && argv.size() >= 2) {
    AsciiLower(argv[1], &lower);
    auto it = cmd->subcommands.find(lower);
    cmd = it == cmd->subcommands.end() ? nullptr : it->second.get();
  }
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

// ---- key operations: callers hold the key's shard lock (exclusive when writing) ----

Entry* Engine::Lookup(Database& db, Shard& shard, std::string_view key, uint64_t hash, int64_t now,
                      bool writable) {
  Entry* e = shard.table.Find(key, hash);
  if (e == nullptr || e->expire_ms == 0 || e->expire_ms > now) return e;
  if (writable) {
    NotifyKeyspaceEvent(kNotifyExpired, "expired", key, db.index());
    HostChanges expiry;  // not a change of the command that looked the key up (Redis)
    Remove(db, shard, e, hash);
    WorkerStats& st = *stats_[current_worker().index];
    st.Add(st.expired_keys);
  } else {
    ExpireLater(db, key);
  }
  return nullptr;
}

void Engine::Remove(Database& db, Shard& shard, Entry* e, uint64_t hash, RemoveMode mode) {
  Entry* removed = shard.table.Remove(e->key(), hash);
  if (removed->expire_ms != 0) --shard.volatile_keys;
  shard.SyncHints();
  if (shard.due != nullptr) {
    shard.due->Set(removed->key(), -1);
    shard.SyncDueHint();
  }
  Touch(db, shard, removed->key(), hash);
  if (mode != RemoveMode::kKeepValue) {
    FreeValue(removed->type_id(), removed->value, mode == RemoveMode::kLazy);
  }
  Entry::Destroy(removed);
}

Entry* Engine::Store(Database& db, Shard& shard, std::string_view key, uint64_t hash,
                     uint16_t type_id, void* value, bool keep_ttl) {
  Entry* e = shard.table.Find(key, hash);
  if (e != nullptr) {
    void* old = e->value;
    const uint16_t old_type = e->type_id();
    e->value = value;
    e->set_type_id(type_id);
    // A new value is a fresh access under LRU; LFU keeps the key's counter (as Redis does).
    if (!IsLfu(eviction_policy())) e->set_access(InitialAccess(eviction_policy(), Now()));
    if (!keep_ttl && e->expire_ms != 0) {
      e->expire_ms = 0;
      --shard.volatile_keys;
    }
    // Re-storing the current value (after an in-place change or a realloc that did not move)
    // must not free it.
    if (old != value) FreeValue(old_type, old, /*lazy=*/false);
  } else {
    e = Entry::Create(key);
    e->value = value;
    e->set_type_id(type_id);
    e->set_access(InitialAccess(eviction_policy(), Now()));
    shard.table.Insert(e, hash);
    db.MarkUsed();
    NotifyKeyspaceEvent(kNotifyNew, "new", key, db.index());
  }
  shard.SyncHints();
  Touch(db, shard, key, hash);
  ScheduleParts(db, shard, e);
  return e;
}

void Engine::ScheduleParts(Database& db, Shard& shard, Entry* e) {
  const vsl_type* t = registry_.TypeById(e->type_id());
  int64_t due = -1;
  if (t != nullptr && t->desc.next_due != nullptr && t->desc.expire_due != nullptr) {
    memory::ModuleScope scope(t->module->id);
    due = t->desc.next_due(nullptr, e->value);
  }
  if (due < 0 && shard.due == nullptr) return;  // nothing expires here: the common case
  if (shard.due == nullptr) shard.due = std::make_unique<PartsSchedule>();
  shard.due->Set(e->key(), due);
  shard.SyncDueHint();
  if (due >= 0) db.MarkDue();
}

void Engine::SetExpire(Database& db, Shard& shard, Entry* e, int64_t abs_ms) {
  if (abs_ms < 0) abs_ms = 0;
  if ((e->expire_ms != 0) != (abs_ms != 0)) {
    shard.volatile_keys += abs_ms != 0 ? 1 : -1;
    shard.SyncHints();
  }
  if (abs_ms != 0) db.MarkVolatile();
  e->expire_ms = abs_ms;
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

void Engine::ExpireLater(Database& db, std::string_view key) {
  const int worker = current_worker().index;
  if (worker >= worker_count()) return;
  PostToWorker(worker, [this, db = &db, key = std::string(key)] {
    const uint64_t hash = HashKey(key);
    const uint32_t si = db->ShardOf(hash);
    LockSet locks;
    locks.Add(static_cast<uint32_t>(db->index()), si, true, EntryTable::ChunkBit(hash));
    // A script holding the shard is not waited for: the key expires later (reads hide it).
    if (!LockUnlessScript(&locks)) return;
    Lookup(*db, db->shard(si), key, hash, Now(), /*writable=*/true);
    locks.Unlock();
  });
}

void Engine::FreeValue(uint16_t type_id, void* value, bool lazy) {
  const vsl_type* t = registry_.TypeById(type_id);
  if (t == nullptr) return;
  if (lazy && t->desc.free_effort != nullptr) {
    size_t effort;
    {
      memory::ModuleScope scope(t->module->id);
      effort = t->desc.free_effort(nullptr, value);
    }
    if (effort >
        static_cast<size_t>(settings_.lazyfree_threshold.load(std::memory_order_relaxed))) {
      LazyFree::Instance().Enqueue(t, value);
      return;
    }
  }
  memory::ModuleScope scope(t->module->id);
  t->desc.free(nullptr, value);
}

void Engine::FlushDb(Database& db, bool lazy) {
  for (uint32_t i = 0; i < db.shard_count(); ++i) {
    Shard& shard = db.shard(i);
    if (shard.table.size() == 0) continue;
    if (shard.watched != nullptr) {
      // Watchers of keys that existed see the flush as a modification, as in Redis.
      for (auto& [key, watchers] : *shard.watched) {
        if (shard.table.Find(key, HashKey(key)) == nullptr) continue;
        for (WatchState* w : watchers) w->dirty.store(true, std::memory_order_relaxed);
      }
    }
    stats_[current_worker().index]->Add(stats_[current_worker().index]->dirty, shard.table.size());
    shard.table.Drain([&](Entry* e) {
      FreeValue(e->type_id(), e->value, lazy);
      Entry::Destroy(e);
    });
    shard.table = EntryTable();
    shard.volatile_keys = 0;
    shard.SyncHints();
    shard.due.reset();
    shard.SyncDueHint();
    // Clients parked until their key goes (VSL_BLOCK_KEY_GONE) learn that it went.
    if (shard.blocked != nullptr)
      for (auto& [key, waiters] : *shard.blocked) WakeWaiters(db, shard, key);
  }
}

// ---- expiry and periodic work ----

void Engine::Cron(int worker) {
  WorkerState& ws = *workers_[worker];
  if (ws.pumping) return;  // inside a busy script of this worker: its next tick
  WorkerScope scope(this, worker, WorkerScope::kNoScriptWait);
  if (!scope.held()) return;  // a script holds the keyspace
  const int64_t now = Now();
  if (worker == 0) {
    // jemalloc's statistics cost ~100k instructions to refresh: only the OOM check needs them
    // periodically (INFO and MEMORY read them on demand).
    if (settings_.maxmemory.load(std::memory_order_relaxed) > 0) RefreshUsedMemory();
    SampleOps(now);
    if (persist_ != nullptr) persist_->Cron(now);
  }
  if (active_expire_.load(std::memory_order_relaxed)) {
    ActiveExpire(worker, now);
    ActiveExpireParts(worker, now);
  }
  const int64_t idle = settings_.timeout.load(std::memory_order_relaxed);
  if (idle > 0) {
    for (auto& [id, s] : workers_[worker]->sessions) {
      if (s->blocked() || s->info().in_multi.load(std::memory_order_relaxed)) continue;
      if (now - s->info().last_active_ms.load(std::memory_order_relaxed) > idle * 1000) {
        s->closing_ = true;
        s->io()->Close();  // posted: the session map is not modified during this loop
      }
    }
  }
}

// Each worker owns the shards i with i % workers == worker. For each shard with keys that
// expire it walks a bounded number of buckets from a remembered cursor, like SCAN, so every
// key is eventually checked; time per cycle is bounded.
void Engine::ActiveExpire(int worker, int64_t now) {
  const int n = std::max(1, worker_count());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  constexpr int kBucketsPerShard = 32;
  for (auto& db : dbs_) {
    if (!db->ever_volatile() || db->VolatileCount() == 0) continue;
    for (uint32_t i = static_cast<uint32_t>(worker % n); i < db->shard_count(); i += n) {
      Shard& shard = db->shard(i);
      if (shard.volatile_hint.load(std::memory_order_relaxed) == 0) continue;
      if (!shard.mu.try_lock()) continue;
      db->BeforeWrite(i);
      std::vector<std::pair<Entry*, uint64_t>> expired;
      uint64_t cursor = shard.expire_cursor;
      for (int b = 0; b < kBucketsPerShard; ++b) {
        cursor = shard.table.Scan(cursor, [&](const Entry* e) {
          if (e->expire_ms != 0 && e->expire_ms <= now)
            expired.push_back({const_cast<Entry*>(e), HashKey(e->key())});
        });
        if (cursor == 0) break;
      }
      shard.expire_cursor = cursor;
      HostChanges expiry;  // Redis's server.dirty does not count expired keys
      for (auto& [e, hash] : expired) {
        NotifyKeyspaceEvent(kNotifyExpired, "expired", e->key(), db->index());
        if (persist_ != nullptr) persist_->KeyDeleted(db->index(), e->key());
        Remove(*db, shard, e, hash);
      }
      if (!expired.empty()) stats_[worker]->Add(stats_[worker]->expired_keys, expired.size());
      shard.mu.unlock();
      if (std::chrono::steady_clock::now() > deadline) return;
    }
  }
}

// The parts of values that are due (hash fields with a TTL): each worker handles the shards it
// owns for key expiry, calling the type's expire_due on every key whose time has come, deleting
// values left empty and rescheduling the rest. Bounded like ActiveExpire.
void Engine::ActiveExpireParts(int worker, int64_t now) {
  const int n = std::max(1, worker_count());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  constexpr int kKeysPerShard = 64;
  for (auto& db : dbs_) {
    if (!db->ever_due()) continue;
    for (uint32_t i = static_cast<uint32_t>(worker % n); i < db->shard_count(); i += n) {
      Shard& shard = db->shard(i);
      if (shard.due_hint.load(std::memory_order_relaxed) > now) continue;
      if (!shard.mu.try_lock()) continue;
      db->BeforeWrite(i);
      uint64_t parts = 0, keys = 0, changed_keys = 0;
      for (int k = 0; k < kKeysPerShard && shard.due != nullptr && !shard.due->empty(); ++k) {
        const auto [due, key] = *shard.due->by_time.begin();
        if (due > now) break;
        const uint64_t hash = HashKey(key);
        Entry* e = Lookup(*db, shard, key, hash, now, /*writable=*/true);
        if (e == nullptr) {
          shard.due->Set(key, -1);
          continue;
        }
        const vsl_type* t = registry_.TypeById(e->type_id());
        int empty = 0;
        size_t expired;
        {
          memory::ModuleScope scope(t->module->id);
          expired = t->desc.expire_due(nullptr, e->value, now, &empty);
        }
        parts += expired;
        if (expired > 0) ++changed_keys;
        if (expired > 0 && t->desc.parts_expired_event != nullptr)
          NotifyKeyspaceEvent(t->desc.parts_expired_class, t->desc.parts_expired_event, key,
                              db->index());
        if (empty) {
          Remove(*db, shard, e, hash);
          NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db->index());
          ++keys;
        } else {
          Touch(*db, shard, key, hash);
          ScheduleParts(*db, shard, e);
          // A value whose next part is still due (a lower bound that did not move) waits a tick.
          if (shard.due->by_time.begin()->first <= now && shard.due->by_time.begin()->second == key)
            shard.due->Set(key, now + 1);
        }
      }
      shard.SyncDueHint();
      shard.mu.unlock();
      // A value that lost parts changed (save rules see it); one per key, as Touch counted.
      if (changed_keys != 0) stats_[worker]->Add(stats_[worker]->dirty, changed_keys);
      stats_[worker]->Add(stats_[worker]->expired_subkeys, parts);
      stats_[worker]->Add(stats_[worker]->expired_keys, keys);
      if (std::chrono::steady_clock::now() > deadline) return;
    }
  }
}

// ---- sessions ----

void Engine::RegisterSession(Session* s) {
  {
    std::lock_guard l(sessions_mu_);
    sessions_.emplace(s->id(), s);
  }
  workers_[s->worker()]->sessions.emplace(s->id(), s);
  connected_.fetch_add(1, std::memory_order_relaxed);
  stats_[s->worker()]->Add(stats_[s->worker()]->connections);
}

void Engine::UnregisterSession(Session* s) {
  {
    std::lock_guard l(sessions_mu_);
    sessions_.erase(s->id());
  }
  workers_[s->worker()]->sessions.erase(s->id());
  connected_.fetch_sub(1, std::memory_order_relaxed);
}

void Engine::KillSession(uint64_t id, int worker) {
  WithSession(id, worker, [](Session* s) {
    s->closing_ = true;
    s->io()->Close();
  });
}

void Engine::WithSession(uint64_t id, int worker, std::function<void(Session*)> fn) {
  auto run = [this, id, worker, fn = std::move(fn)] {
    auto& sessions = workers_[worker]->sessions;
    auto it = sessions.find(id);
    if (it != sessions.end()) fn(it->second);
  };
  if (worker < worker_count() && &current_worker() != workers_[worker].get()) {
    executors_[worker]->Post(std::move(run));
  } else {
    run();
  }
}

void Engine::set_persist(PersistHooks* p) {
  persist_ = p;
  for (auto& db : dbs_) db->set_persist(p);
}

void Engine::set_disk_error(std::string message) {
  std::lock_guard l(disk_error_mu_);
  disk_error_text_ = std::move(message);
  disk_error_.store(!disk_error_text_.empty(), std::memory_order_relaxed);
}

std::string Engine::disk_error_message() const {
  std::lock_guard l(disk_error_mu_);
  return disk_error_text_;
}

uint64_t Engine::Dirty() const {
  uint64_t n = 0;
  for (const auto& st : stats_) n += st->dirty.load(std::memory_order_relaxed);
  return n;
}

void Engine::RequestShutdown() {
  if (shutdown_) shutdown_();
}

// ---- waiting for scripts ----

void Engine::WhenScriptsChange(uint64_t epoch, int worker, absl::AnyInvocable<void() &&> fn) {
  {
    std::lock_guard l(script_waiters_mu_);
    // Checked under the lock ScriptsChanged takes after bumping the epoch: either it sees this
    // waiter, or this sees the new epoch.
    if (script_epoch() == epoch) {
      script_waiters_.emplace_back(worker, std::move(fn));
      return;
    }
  }
  executors_[worker]->Post(std::move(fn));
}

void Engine::ScriptsChanged() {
  std::vector<std::pair<int, absl::AnyInvocable<void() &&>>> waiters;
  {
    std::lock_guard l(script_waiters_mu_);
    script_epoch_.fetch_add(1, std::memory_order_acq_rel);
    waiters.swap(script_waiters_);
  }
  for (auto& [worker, fn] : waiters) executors_[worker]->Post(std::move(fn));
}

bool Engine::CanPostpone(const CommandCtx* ctx) const {
  return ctx->session != nullptr && !ctx->internal && ctx->session->worker() < worker_count();
}

void Engine::PostponeForScripts(Session* s, uint64_t epoch) {
  s->postponed_ = true;
  WhenScriptsChange(epoch, s->worker(), [this, id = s->id(), worker = s->worker()] {
    auto& sessions = workers_[worker]->sessions;
    auto it = sessions.find(id);
    if (it == sessions.end() || !it->second->postponed_) return;
    it->second->postponed_ = false;
    it->second->io()->Wake();
  });
}

void Engine::PostToWorker(int worker, absl::AnyInvocable<void() &&> fn) {
  executors_[worker]->Post(
      [this, worker, fn = std::move(fn)]() mutable { RunOnWorker(worker, std::move(fn)); });
}

void Engine::RunOnWorker(int worker, absl::AnyInvocable<void() &&> fn) {
  const uint64_t epoch = script_epoch();
  {
    WorkerScope scope(this, worker, WorkerScope::kNoScriptWait);
    if (scope.held()) return std::move(fn)();
  }
  WhenScriptsChange(epoch, worker, [this, worker, fn = std::move(fn)]() mutable {
    RunOnWorker(worker, std::move(fn));
  });
}

bool Engine::LockForCommand(LockSet* locks, const CommandCtx* ctx, ScriptHold* hold,
                            std::string* busy) {
  *hold = ScriptHold::kFree;
  if (busy_probe_ == nullptr) return locks->Lock(dbs_);
  const bool can_postpone = CanPostpone(ctx);
  return locks->Lock(dbs_, [&](uint32_t db, uint32_t shard) {
    *hold = busy_probe_->ShardHold(db, shard, busy);
    return *hold == ScriptHold::kBusy || (*hold == ScriptHold::kHeld && can_postpone);
  });
}

bool Engine::LockUnlessScript(LockSet* locks) {
  if (busy_probe_ == nullptr) return locks->Lock(dbs_);
  std::string busy;
  return locks->Lock(dbs_, [&](uint32_t db, uint32_t shard) {
    return busy_probe_->ShardHold(db, shard, &busy) != ScriptHold::kFree;
  });
}

void Engine::PumpWhileBusy() {
  WorkerState& w = current_worker();
  if (w.index >= worker_count() || w.pumping) return;
  w.pumping = true;
  w.pumped = true;
  executors_[w.index]->Pump();
  w.pumping = false;
}

void Engine::EndPumpIfDue() {
  WorkerState& w = current_worker();
  if (!w.pumped || w.pumping) return;
  w.pumped = false;
  executors_[w.index]->EndPump();
}

// ---- world lock scopes ----

WorkerScope::WorkerScope(Engine* engine, int worker, Mode mode)
    : engine_(engine), worker_(worker) {
  WorkerState& w = engine->worker_state(worker);
  if (w.world_depth++ == 0) {
    BusyProbe* probe = engine->busy_probe();
    if (mode == kWait || probe == nullptr) {
      engine->world().LockShared(worker);
    } else {
      std::string busy;
      ScriptHold hold = ScriptHold::kFree;
      if (!engine->world().LockSharedUnless(worker, [&] {
            hold = probe->WorldHold(&busy);
            return hold != ScriptHold::kFree;
          })) {
        w.world_hold = hold;  // runs without the slot: see WorkerState::world_hold
      }
    }
    t_worker = &w;
  }
}

WorkerScope::~WorkerScope() {
  WorkerState& w = engine_->worker_state(worker_);
  if (--w.world_depth == 0) {
    if (w.world_hold != ScriptHold::kFree) {
      w.world_hold = ScriptHold::kFree;
    } else {
      engine_->world().UnlockShared(worker_);
    }
    t_worker = nullptr;
  }
}

bool WorkerScope::held() const {
  return engine_->worker_state(worker_).world_hold == ScriptHold::kFree;
}

WorldExclusive::WorldExclusive(Engine* engine) : WorldExclusive(engine, NoWait{}) {
  engine->world().LockExclusive();
  // A running snapshot captures what it has not yet: the holder may change any shard.
  if (engine->persist() != nullptr) engine->persist()->BeforeWorldWrite();
}

WorldExclusive::WorldExclusive(Engine* engine, NoWait) : engine_(engine) {
  WorkerState& w = engine->current_worker();
  worker_ = w.index;
  held_own_ = w.world_depth > 0 && w.world_hold == ScriptHold::kFree;
  if (held_own_) engine->world().UnlockShared(worker_);
}

std::unique_ptr<WorldExclusive> WorldExclusive::TryTake(Engine* engine, std::string* busy,
                                                        ScriptHold* hold, bool wait_held) {
  std::unique_ptr<WorldExclusive> w(new WorldExclusive(engine, NoWait{}));
  BusyProbe* probe = engine->busy_probe();
  *hold = ScriptHold::kFree;
  // A worker running without its slot (a script holds the whole keyspace) cannot take it.
  if (engine->current_worker().world_hold != ScriptHold::kFree) {
    *hold = probe->AnyHold(busy);
    if (*hold == ScriptHold::kFree) *hold = ScriptHold::kHeld;
    w->taken_ = false;
    return nullptr;
  }
  if (probe == nullptr) {
    engine->world().LockExclusive();
  } else if (!engine->world().LockExclusive([&] {
               *hold = probe->AnyHold(busy);
               return *hold == ScriptHold::kBusy || (*hold == ScriptHold::kHeld && !wait_held);
             })) {
    w->taken_ = false;
    return nullptr;  // the destructor retakes the worker's own slot
  }
  *hold = ScriptHold::kFree;
  if (engine->persist() != nullptr) engine->persist()->BeforeWorldWrite();
  return w;
}

WorldExclusive::~WorldExclusive() {
  if (taken_) engine_->world().UnlockExclusive();
  if (held_own_) engine_->world().LockShared(worker_);
}

}  // namespace vessel::engine

namespace vessel::engine {

void Engine::RefreshUsedMemory() {
  used_memory_.store(has_used_memory_source_.load(std::memory_order_acquire)
                         ? used_memory_source_()
                         : static_cast<int64_t>(memory::ReadStats().allocated),
                     std::memory_order_relaxed);
}

}  // namespace vessel::engine

namespace vessel::engine {

int64_t Engine::PeakMemory(int64_t used) {
  int64_t peak = peak_memory_.load(std::memory_order_relaxed);
  while (used > peak && !peak_memory_.compare_exchange_weak(peak, used)) {
  }
  return std::max(peak, used);
}

void Engine::SampleOps(int64_t now) {
  uint64_t total = 0;
  for (auto& st : stats_) total += st->commands.load(std::memory_order_relaxed);
  std::lock_guard l(ops_mu_);
  if (ops_last_ms_ != 0 && now > ops_last_ms_) {
    ops_samples_[ops_index_] =
        static_cast<int64_t>((total - ops_last_count_) * 1000 / (now - ops_last_ms_));
    ops_index_ = (ops_index_ + 1) % 16;
  }
  ops_last_ms_ = now;
  ops_last_count_ = total;
}

int64_t Engine::InstantaneousOps() {
  std::lock_guard l(ops_mu_);
  int64_t sum = 0;
  for (int64_t s : ops_samples_) sum += s;
  return sum / 16;
}

void Engine::ResetStats() {
  for (auto& st : stats_) {
    for (auto* c :
         {&st->commands, &st->connections, &st->rejected_connections, &st->expired_keys,
          &st->evicted_keys, &st->keyspace_hits, &st->keyspace_misses, &st->net_input_bytes,
          &st->net_output_bytes, &st->error_replies, &st->expired_subkeys})
      c->store(0, std::memory_order_relaxed);
    for (uint32_t i = 0; i < kMaxCommandIds; ++i) st->by_command[i].Reset();
  }
  errors_.Reset();
  peak_memory_.store(0, std::memory_order_relaxed);
}

}  // namespace vessel::engine
