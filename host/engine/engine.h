// The engine: keyspace, command table, dispatch with key locks, expiry, blocking and
// transactions. Transport-agnostic: the net layer feeds bytes to Sessions; tests can too.
#ifndef VESSEL_HOST_ENGINE_ENGINE_H_
#define VESSEL_HOST_ENGINE_ENGINE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "host/config/config.h"
#include "host/engine/cluster_hooks.h"
#include "host/engine/context.h"
#include "host/engine/evict.h"
#include "host/engine/keyspace.h"
#include "host/engine/messaging.h"
#include "host/engine/persist_hooks.h"
#include "host/engine/registry.h"
#include "host/engine/repl_hooks.h"
#include "host/engine/session.h"
#include "host/engine/stats.h"

namespace vessel::engine {

enum class PauseType { kNone = 0, kWrite = 1, kAll = 2 };

// Runs work on one worker thread (implemented by the net layer). Thread safe.
class WorkerExecutor {
 public:
  virtual ~WorkerExecutor() = default;
  virtual void Post(absl::AnyInvocable<void() &&> fn) = 0;
  // Runs fn on the worker after delay_ms (blocked-client timeouts).
  virtual void PostAfter(int64_t delay_ms, absl::AnyInvocable<void() &&> fn) = 0;
  // Called on the worker's own thread from inside one of its handlers (a script running past
  // busy-reply-threshold, Redis's processEventsWhileBlocked): runs the I/O handlers that are
  // ready now, so that the worker's clients are answered (BUSY) and SCRIPT KILL is read. Work
  // posted to the worker (Post, PostAfter, connection teardown) waits until EndPump.
  virtual void Pump() {}
  // The script ended: the work held back by Pump runs, in order, on later turns of the loop.
  virtual void EndPump() {}
};

// What a running script means for work that needs part of the keyspace. A script holds its
// shards (or the whole keyspace) for as long as it runs, so nothing on an event loop ever waits
// for one: work that meets a script's lock is postponed until the scripts change, or refused
// with BUSY once the script runs past busy-reply-threshold (as Redis answers every client).
enum class ScriptHold {
  kFree,  // no running script holds it: lock it (waiting only for ordinary commands)
  kHeld,  // a script under busy-reply-threshold holds it: postpone (Engine::WhenScriptsChange)
  kBusy,  // a script past busy-reply-threshold holds it: refuse with the BUSY error
};

// The running scripts, as the engine asks about them (host/scripting implements it). Thread safe;
// one relaxed load when no script runs.
class BusyProbe {
 public:
  virtual ~BusyProbe() = default;
  // Whether a running script holds shard (db, shard), or the whole keyspace; *busy gets the BUSY
  // error line with kBusy.
  virtual ScriptHold ShardHold(uint32_t db, uint32_t shard, std::string* busy) = 0;
  // Whether a running script holds the whole keyspace.
  virtual ScriptHold WorldHold(std::string* busy) = 0;
  // Whether any script runs (what taking the whole keyspace would wait for).
  virtual ScriptHold AnyHold(std::string* busy) = 0;
  // SHUTDOWN, or the server stopping: running scripts stop at their next hook, killable or
  // not, and later ones at once.
  virtual void OnShutdown() = 0;
};

// The FUNCTION libraries, as persistence saves them in snapshots and loads them back (the
// scripting subsystem implements it; null without scripting). Thread safe.
class FunctionLibraries {
 public:
  virtual ~FunctionLibraries() = default;
  // The source of every library, in name order.
  virtual std::vector<std::string> LibrarySources() = 0;
  // Loads one library as FUNCTION LOAD does (no REPLACE); false with *error (Redis's text).
  virtual bool AddLibrarySource(std::string_view code, std::string* error) = 0;
};

// What INFO memory shows of scripting, in Redis's terms (the scripting subsystem implements it;
// null without scripting). Thread safe.
struct ScriptMemory {
  int64_t vm_eval = 0;       // used_memory_vm_eval: the EVAL states' Lua heaps, every worker's
  int64_t vm_functions = 0;  // used_memory_vm_functions: the function states' Lua heaps
  int64_t scripts_eval = 0;  // used_memory_scripts_eval: the script cache
  int64_t functions = 0;     // used_memory_functions: the libraries' sources and descriptions
  int64_t cached_scripts = 0;
  int64_t function_count = 0;
  int64_t library_count = 0;
};
class ScriptFigures {
 public:
  virtual ~ScriptFigures() = default;
  virtual ScriptMemory Memory() = 0;
};

// The current values of the Redis parameters without a field of their own (config/params.h),
// by index in config::GenericParams(). Texts are guarded by mu_; each parameter's integer value
// (ParamInteger) is an atomic that hot paths read without the lock.
class ParamValues {
 public:
  explicit ParamValues(const std::vector<std::string>& initial);
  std::string Text(int i) const;
  int64_t Int(int i) const { return ints_[i].load(std::memory_order_relaxed); }
  // Stores an already normalized value.
  void Set(int i, std::string normalized);
  // The index of a parameter by Redis name or alias (case-insensitive), or -1.
  static int Find(std::string_view name);

 private:
  mutable std::mutex mu_;
  std::vector<std::string> texts_;
  std::unique_ptr<std::atomic<int64_t>[]> ints_;
};

// Settings CONFIG SET may change while serving; read with relaxed loads.
struct RuntimeSettings {
  explicit RuntimeSettings(const std::vector<std::string>& params) : params(params) {}
  std::atomic<int64_t> maxclients;
  std::atomic<int64_t> timeout;
  std::atomic<int64_t> maxmemory;
  std::atomic<int64_t> hz;
  std::atomic<int64_t> max_bulk_len;
  std::atomic<int64_t> max_multibulk_len;
  std::atomic<int64_t> query_buffer_limit;
  std::atomic<int64_t> output_buffer_limit;
  std::atomic<int64_t> lazyfree_threshold;
  std::atomic<int> log_level;        // spdlog level
  std::atomic<int> eviction_policy;  // an EvictionPolicy
  std::atomic<int64_t> maxmemory_samples;
  // client-output-buffer-limit by client class (kObufNormal, kObufReplica, kObufPubsub): hard and
  // soft limits in bytes (0 = none), soft seconds. The normal class's hard limit is
  // output_buffer_limit (the [server] setting), not obuf[kObufNormal].hard.
  struct ObufLimit {
    std::atomic<int64_t> hard{0}, soft{0}, seconds{0};
  };
  static constexpr int kObufNormal = 0, kObufReplica = 1, kObufPubsub = 2;
  ObufLimit obuf[3];
  std::mutex mu;  // guards the strings below
  std::string maxmemory_policy;
  ParamValues params;
};

// Counters, one row per worker (single writer each, summed by readers).
struct alignas(64) WorkerStats {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> evicted_keys{0};
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> error_replies{0};
  std::atomic<uint64_t> expired_subkeys{0};  // parts of values expired (hash fields)
  std::atomic<uint64_t> dirty{0};            // key changes (Redis's server.dirty), never reset
  // Counters per command id (CommandSpec::id).
  std::unique_ptr<CommandCounters[]> by_command{new CommandCounters[kMaxCommandIds]};
  void Add(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

// State owned by one worker thread.
struct WorkerState {
  int index = 0;
  absl::flat_hash_map<uint64_t, Session*> sessions;  // touched only by this worker
  std::mt19937_64 rng;
  int world_depth = 0;  // nesting of WorkerScope on this worker
  // A script holds the whole keyspace and this worker's scope runs without its world slot
  // (WorkerScope::kNoScriptWait): kBusy past busy-reply-threshold (commands are answered BUSY,
  // Session::Execute), kHeld before (sessions postpone their input); the cron skips its work.
  ScriptHold world_hold = ScriptHold::kFree;
  // A script of this worker runs past busy-reply-threshold and its hook runs the worker's ready
  // handlers (Engine::PumpWhileBusy): commands are answered BUSY, posted work waits.
  bool pumping = false;
  bool pumped = false;  // Pump ran during the current script (EndPump is due when it ends)
  EvictionPool eviction_pool;
};

// The WorkerState of the WorkerScope open on this thread, or null (world.cc). Declared here so
// that Engine::current_worker, called several times per command, inlines to a load.
extern thread_local constinit WorkerState* t_current_worker;

class Engine {
 public:
  explicit Engine(const config::Config& config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // ---- setup, on the main thread before serving ----
  Registry& registry() { return registry_; }
  const vsl_api* api() const;
  // The executors of the worker threads, index = worker id. Sessions created with worker id
  // workers.size() belong to the external slot (tests, internal clients).
  void AttachWorkers(std::vector<WorkerExecutor*> workers);
  int worker_count() const { return static_cast<int>(executors_.size()); }
  WorkerExecutor& executor(int worker) { return *executors_[worker]; }
  int external_worker() const { return static_cast<int>(executors_.size()); }
  void set_shutdown_handler(std::function<void()> fn) { shutdown_ = std::move(fn); }
  void set_port(int port) { port_ = port; }
  int port() const { return port_; }
  void set_config_file(std::string path) { config_file_ = std::move(path); }
  // Persistence (host/persist), installed before serving; null when absent (unit tests).
  void set_persist(PersistHooks* p);
  PersistHooks* persist() const { return persist_; }
  // Replication (host/repl), installed before serving; null when absent (unit tests).
  void set_repl(ReplicationHooks* r) { repl_ = r; }
  // Cluster mode (host/cluster): the node, owned by the engine from here on; null outside
  // cluster mode. Installed before serving.
  void set_cluster(std::unique_ptr<ClusterHooks> c) { cluster_ = std::move(c); }
  ClusterHooks* cluster() const { return cluster_.get(); }
  ReplicationHooks* repl() const { return repl_; }
  // While the dataset loads at startup, commands without kCmdLoading get -LOADING.
  bool loading() const { return loading_.load(std::memory_order_relaxed); }
  void set_loading(bool on) { loading_.store(on, std::memory_order_relaxed); }
  // A disk error refuses write commands (and PING) with this -MISCONF text; "" accepts them.
  // Set by persistence (a failed save under stop-writes-on-bgsave-error, a failed AOF write).
  bool disk_error() const { return disk_error_.load(std::memory_order_relaxed); }
  void set_disk_error(std::string message);
  std::string disk_error_message() const;
  // Key changes since startup (summed over the workers; Redis's server.dirty).
  uint64_t Dirty() const;
  // CONFIG SET of a generic parameter (config/params.h) runs its filter, when one is installed,
  // with the normalized value before storing it: "" accepts it (the hook may rewrite the value,
  // e.g. into an absolute path, and apply it), anything else is the refusal reason. Installed
  // before serving, read-only after.
  using ParamFilter = std::function<std::string(std::string* value)>;
  void SetParamFilter(int index, ParamFilter filter) { param_filters_[index] = std::move(filter); }
  const ParamFilter* param_filter(int index) const {
    auto it = param_filters_.find(index);
    return it == param_filters_.end() ? nullptr : &it->second;
  }
  // The world-lock slot of the background snapshot thread (not a worker's).
  int snapshot_slot() const { return world_->slots() - 1; }
  // Access control (engine/access.h), installed before serving; null = everyone may do anything.
  void set_access(AccessControl* access) { access_ = access; }
  AccessControl* access() const { return access_; }
  // Runs `apply` after CONFIG SET changed the named generic parameter (config/params.h). Several
  // parameters may share one function: it runs once per CONFIG SET. It returns "" or why the new
  // values cannot take effect; CONFIG SET then restores the old values, runs it again and fails.
  // Setup only (before serving).
  using ParamApply = std::function<std::string()>;
  void OnParamSet(std::string_view name, std::shared_ptr<ParamApply> apply);
  const std::shared_ptr<ParamApply>& ParamHook(int generic) const;

  // ---- state and figures (engine.cc, stats.cc, memory.cc) ----
  // Number of connected clients; the transport enforces maxclients with it.
  std::atomic<int64_t>& connected_clients() { return connected_; }
  RuntimeSettings& settings() { return settings_; }
  WorkerStats& stats(int worker) { return *stats_[worker]; }
  const config::Config& config() const { return config_; }
  WorldLock& world() { return *world_; }
  // Scripting's probe for BUSY replies (null without scripting). Set before serving.
  void set_busy_probe(BusyProbe* probe) { busy_probe_ = probe; }
  BusyProbe* busy_probe() const { return busy_probe_; }
  // Scripting's FUNCTION libraries for snapshots (null without scripting). Set before serving.
  void set_function_libraries(FunctionLibraries* f) { function_libraries_ = f; }
  FunctionLibraries* function_libraries() const { return function_libraries_; }
  // Scripting's figures for INFO memory (null without scripting). Set before serving.
  void set_script_figures(ScriptFigures* f) { script_figures_ = f; }
  ScriptFigures* script_figures() const { return script_figures_; }
  int db_count() const { return static_cast<int>(dbs_.size()); }
  Database& db(int i) { return *dbs_[i]; }
  const std::vector<std::unique_ptr<Database>>& dbs() const { return dbs_; }
  int64_t Now() const { return clock_ ? clock_() : WallMs(); }
  static int64_t WallMs();
  // Tests inject time; production uses the wall clock.
  void set_clock(std::function<int64_t()> clock) { clock_ = std::move(clock); }
  // Tests inject the used-memory figure (sanitizer builds have no jemalloc statistics). Set at
  // most once (published by a release store; never unset); production reads jemalloc.
  void set_used_memory_source(std::function<int64_t()> fn) {
    used_memory_source_ = std::move(fn);
    has_used_memory_source_.store(true, std::memory_order_release);
  }
  WorkerState& worker_state(int worker) { return *workers_[worker]; }
  WorkerState& current_worker() {
    return t_current_worker != nullptr ? *t_current_worker : *workers_.back();
  }
  ErrorCounts& error_counts() { return errors_; }
  SlowLog& slowlog() { return slowlog_; }
  LatencyMonitor& latency_monitor() { return latency_monitor_; }
  // enable-debug-command (or another protected-action parameter such as enable-module-command):
  // "yes", or "local" for a client on a loopback address.
  bool DebugAllowed(std::string_view peer) const { return Allowed(p_enable_debug_, peer); }
  bool ModuleCommandAllowed(std::string_view peer) const {
    return Allowed(ParamValues::Find("enable-module-command"), peer);
  }
  // The integer value of a generic parameter (config/params.h) by index.
  int64_t ParamInt(int index) const { return settings_.params.Int(index); }
  int64_t blocked_clients() const { return blocked_count_.load(std::memory_order_relaxed); }
  void RefreshUsedMemory();
  void set_active_expire(bool on) { active_expire_.store(on, std::memory_order_relaxed); }
  int64_t start_ms() const { return start_ms_; }
  const std::string& config_file() const { return config_file_; }
  // The highest allocated-bytes figure seen (updated with `used`).
  int64_t PeakMemory(int64_t used);
  // Commands per second over the last ~1.6 s (sampled by the cron of worker 0).
  int64_t InstantaneousOps();
  void ResetStats();

  // ---- sessions (engine.cc) ----
  // Session registry for CLIENT LIST/KILL and INFO.
  void RegisterSession(Session* s);
  void UnregisterSession(Session* s);
  template <typename F>
  void ForEachSession(F&& f) {
    std::lock_guard l(sessions_mu_);
    for (auto& [id, s] : sessions_) f(s);
  }
  // Closes a session from any worker (posted to its own worker; a session of the external slot,
  // which no worker runs, has its I/O closed at once).
  void KillSession(uint64_t id, int worker);
  // Runs fn with the session on its worker's thread (at once when that is this thread); nothing
  // when the session is gone by then.
  void WithSession(uint64_t id, int worker, std::function<void(Session*)> fn);
  uint64_t NextSessionId() { return next_session_id_.fetch_add(1) + 1; }
  void RequestShutdown();

  // ---- SHUTDOWN and SIGTERM (shutdown.cc) ----
  // A shutdown waits for lagging replicas as Redis 7.0's does: unless NOW is given or
  // shutdown-timeout is 0, writes pause, the replicas are asked for their offsets, and a thread of
  // its own finishes the shutdown once every replica has acknowledged the whole stream or the
  // timeout has passed. SHUTDOWN clients block meanwhile; SHUTDOWN ABORT cancels (writes resume,
  // the blocked clients get Redis's error). No worker waits for any of it.
  struct ShutdownFlags {
    int save = -1;  // 1 SAVE, 0 NOSAVE, -1 the default (save when save rules exist)
    bool now = false;
    bool force = false;
  };
  // Starts a shutdown. False when the caller is to finish it at once (FinishShutdown); true when
  // one is now (or was already) waiting for replicas, whose generation is *generation: a client
  // waiting on it blocks and registers with AddShutdownWaiter.
  bool BeginShutdown(const ShutdownFlags& flags, uint64_t* generation);
  // The final steps: the final save, running scripts stopped, the server asked to stop. False
  // with *error (Redis's text) when the save failed and FORCE was not given: the server runs on.
  bool FinishShutdown(const ShutdownFlags& flags, std::string* error);
  // SHUTDOWN ABORT: true when a waiting shutdown was cancelled.
  bool AbortShutdown();
  // Whether the shutdown of this generation still waits (its blocked clients keep blocking).
  bool ShutdownWaiting(uint64_t generation);
  void AddShutdownWaiter(uint64_t session_id, int worker);
  // INFO's shutdown_in_milliseconds; -1 when no shutdown waits.
  int64_t ShutdownRemainingMs();
  // Stops and joins the waiting thread (the server stopping): before persistence and
  // replication go away.
  void StopShutdownWaiter();

  // ---- dispatch: running a command (dispatch.cc) ----
  // Executes cmd in ctx (keys extracted and locked here unless ctx->world or in_exec), and
  // accounts for it (INFO commandstats, errorstats, latencystats, SLOWLOG, LATENCY).
  void Run(CommandCtx* ctx);
  // True when this call of cmd must run with the whole keyspace held (kCmdGlobalWorld, or the
  // command's needs_world hook for these arguments).
  static bool NeedsWorld(const CommandSpec& cmd, const std::string_view* argv, int argc);
  // Runs a command for another one that is executing (SORT's lookups; later, scripts), under
  // the caller's locks: with the world held any key, otherwise only keys of shards the caller
  // holds (exclusively for keys the call may write). The reply is appended to *out in
  // `protocol`; false (with an error reply in *out) when the command is unknown, has the wrong
  // arity or would touch a key outside the caller's locks. Not accounted in INFO/SLOWLOG.
  bool Call(CommandCtx* parent, const std::vector<std::string_view>& argv, int protocol,
            std::string* out);
  // Accounts for a command refused before it ran (arity, OOM, ...) with its error reply line.
  void RecordRejected(const CommandSpec* cmd, std::string_view error_line);
  // The command running on this thread (the innermost one inside EXEC), or null.
  static const CommandCtx* running_command();
  // Fills ctx->keys from the command's key specs.
  void ResolveKeys(CommandCtx* ctx);
  void AddLocks(const CommandCtx& ctx, LockSet* locks) const;
  // Reports a change to a key (WATCH, blocked clients). Shard locked exclusively. It counts as a
  // change of the running command (CommandCtx::touches) and as a write the append-only file
  // records, unless it is the host's own (see HostChanges).
  void Touch(Database& db, Shard& shard, std::string_view key, uint64_t hash);
  // While one lives on this thread, key changes are the host's own (expiry, eviction): Redis's
  // server.dirty does not count them, and they do not make the running command a write.
  struct HostChanges {
    HostChanges();
    ~HostChanges();
    HostChanges(const HostChanges&) = delete;
    HostChanges& operator=(const HostChanges&) = delete;
  };
  // A change outside the keyspace that snapshots and the append-only file record (FUNCTION
  // LOAD, ...): counts as Redis's server.dirty++, so the command is logged and save rules see it.
  void AddDirty(uint64_t n = 1);

  // ---- key operations, under the key's shard lock (key_ops.cc) ----
  // The live entry of a key, or null. An expired entry is deleted when `writable` (the shard is
  // held exclusively), otherwise only hidden.
  Entry* Lookup(Database& db, Shard& shard, std::string_view key, uint64_t hash, int64_t now,
                bool writable);
  // Removes an entry and reports the change. The value is freed now, freed off the hot path
  // when large (kLazy), or left to the caller, who read it from the entry before (kKeepValue).
  enum class RemoveMode { kFree, kLazy, kKeepValue };
  void Remove(Database& db, Shard& shard, Entry* e, uint64_t hash,
              RemoveMode mode = RemoveMode::kFree);
  // Sets the value of a key, creating it when absent; the old value is freed.
  Entry* Store(Database& db, Shard& shard, std::string_view key, uint64_t hash, uint16_t type_id,
               void* value, bool keep_ttl);
  // The same, for a caller that looked the key up already: `found` is the key's entry in the
  // table (null: absent).
  Entry* Store(Database& db, Shard& shard, std::string_view key, uint64_t hash, uint16_t type_id,
               void* value, bool keep_ttl, Entry* found);
  void SetExpire(Database& db, Shard& shard, Entry* e, int64_t abs_ms);
  // Puts the key in (or out of) its shard's schedule of values with expiring parts, by its
  // type's next_due (shard held exclusively). Called on every store and in-place change.
  void ScheduleParts(Database& db, Shard& shard, Entry* e);
  // Frees a value with its type's callback (off the hot path when lazy and large).
  void FreeValue(uint16_t type_id, void* value, bool lazy);
  // Empties one database (world held exclusively by the caller).
  void FlushDb(Database& db, bool lazy);

  // ---- expiry and periodic work (cron.cc) ----
  // Periodic work of one worker: active expiry share, idle client timeouts.
  void Cron(int worker);

  // ---- messaging (host/pubsub, see messaging.h) ----
  void set_messaging(Messaging* m) { messaging_ = m; }
  Messaging* messaging() const { return messaging_; }
  // Fires keyspace event `event` of class `type` (kNotify*) for key in db, as Redis's
  // notifyKeyspaceEvent: one relaxed load when notify-keyspace-events does not enable the class.
  void NotifyKeyspaceEvent(int type, std::string_view event, std::string_view key, int db) {
    if ((ParamInt(p_notify_) & type) != 0 && messaging_ != nullptr && notify_muted_ == 0)
      messaging_->NotifyKeyspaceEvent(type, event, key, db);
  }
  // While one lives on this thread no keyspace event fires: a built-in that composes its write
  // from internal commands (SORT ... STORE: DEL and RPUSH) fires Redis's events itself.
  struct MuteNotifications {
    MuteNotifications() { ++notify_muted_; }
    ~MuteNotifications() { --notify_muted_; }
    MuteNotifications(const MuteNotifications&) = delete;
    MuteNotifications& operator=(const MuteNotifications&) = delete;
  };

  // ---- waiting for scripts without blocking an event loop, see ScriptHold (script_wait.cc) ----
  // Changes whenever a script ends or passes busy-reply-threshold. Read it before asking the
  // probe, and hand it to WhenScriptsChange, so that no change between the two is missed.
  uint64_t script_epoch() const { return script_epoch_.load(std::memory_order_acquire); }
  // Runs fn on `worker` (posted) once the scripts have changed since `epoch`: at once when they
  // already have. fn owns what it needs; it runs outside any WorkerScope.
  void WhenScriptsChange(uint64_t epoch, int worker, absl::AnyInvocable<void() &&> fn);
  // Scripting: a script ended or passed busy-reply-threshold; what waits for that runs again.
  void ScriptsChanged();
  // Scripting: a script's hook saw it pass busy-reply-threshold (+1), or such a script ended
  // (-1). While one is busy every client is answered BUSY, as in Redis, but for the allow-busy
  // commands (Session::Execute). One relaxed load per command.
  void CountBusyScript(int delta) {
    busy_scripts_.fetch_add(delta, std::memory_order_relaxed);
    ScriptsChanged();
  }
  bool scripts_busy() const { return busy_scripts_.load(std::memory_order_relaxed) > 0; }
  // Postpones the command at the head of s's input (it stays unread) until the scripts change
  // since `epoch`; the session then reads it again.
  void PostponeForScripts(Session* s, uint64_t epoch);
  // True when work for this context may wait for a script by being postponed (a client of a
  // worker), rather than by waiting for the lock (threads that are not workers).
  bool CanPostpone(const CommandCtx* ctx) const;
  // Posts fn to `worker`, to run inside the worker's WorkerScope; while a script holds the whole
  // keyspace it waits, without blocking the worker, until the scripts change.
  void PostToWorker(int worker, absl::AnyInvocable<void() &&> fn);
  // PostToWorker's task, on the worker's own thread: runs fn now or when the scripts change.
  void RunOnWorker(int worker, absl::AnyInvocable<void() &&> fn);
  // Locks `locks` unless a running script holds one of them (nothing held then): work that can
  // skip or retry a shard a script holds, instead of waiting for it.
  bool LockUnlessScript(LockSet* locks);
  // Locks `locks` for the command in ctx; false (nothing held) when a running script holds one:
  // *hold says kHeld (postpone ctx: CanPostpone) or kBusy (refuse with *busy). A context that
  // cannot postpone waits for a script under the threshold instead.
  bool LockForCommand(LockSet* locks, const CommandCtx* ctx, ScriptHold* hold, std::string* busy);
  // From a script's hook past busy-reply-threshold: runs this worker's ready I/O handlers once
  // (WorkerExecutor::Pump) with WorkerState::pumping set.
  void PumpWhileBusy();
  // After a script: lets the work Pump held back run (WorkerExecutor::EndPump).
  void EndPumpIfDue();

  // ---- blocking (blocking.cc) ----
  // Blocking (blocking.cc). BlockClient and FinishRetry run under the command's locks and
  // return true when the client is (still) parked, with nothing written for it.
  bool BlockClient(CommandCtx* ctx);
  bool FinishRetry(CommandCtx* ctx);
  // Removes a blocked session from its queues (disconnect, kill), taking the locks.
  void UnblockClient(Session* s, bool served);
  // Re-runs a parked command on its worker, inside that worker's WorkerScope (RunOnWorker).
  void RetryBlocked(int worker, uint64_t session_id, uint64_t seq, bool timed_out);
  // After a write to key (write = true), or when a waiter leaves or finishes a retry (false:
  // nothing new, only what is left is handed on): posts the retries the key's waiters are due.
  void WakeWaiters(Database& db, Shard& shard, std::string_view key, bool write = true);
  // Posts the retries WakeWaiters deferred during the command ending on this thread, after the
  // command's keyspace events went out (blocking.cc).
  void PostDeferredWakes();
  // Re-runs the command session `id` is blocked in, on its worker (posted): a command that
  // blocked without keys (WAIT) when what it waits for may have happened.
  void WakeBlocked(int worker, uint64_t id);
  // CLIENT UNBLOCK: true when the client was blocked (it is woken on its own worker).
  bool UnblockById(uint64_t id, bool with_error);
  // A master becoming a replica (Redis's disconnectAllBlockedClients): every blocked client but
  // the replication links gets -UNBLOCKED and is closed after that reply, on its own worker.
  void DisconnectBlockedClients();

  // ---- eviction (evict.cc) ----
  // Evicts keys by the maxmemory policy until used memory is under maxmemory (evict.cc); false
  // when it stays over (noeviction, or nothing left to evict). Called with no shard locks held.
  bool EvictToLimit();
  // Whether the running command `ctx` may grow memory by `bytes` more (vsl_api.may_allocate):
  // true without maxmemory or when used memory plus `bytes` fits under it, after evicting by
  // the policy when needed (keys of shards the command holds are never chosen, nor any key in a
  // transaction holding the whole keyspace, and shards other commands hold are skipped, so it
  // cannot deadlock); false when no eviction can make room.
  // An accepted request counts as used until the next reading of the allocator (evict.cc).
  bool MayGrow(const CommandCtx& ctx, uint64_t bytes);
  EvictionPolicy eviction_policy() const {
    return static_cast<EvictionPolicy>(settings_.eviction_policy.load(std::memory_order_relaxed));
  }
  // Records an access to a key (LRU clock or LFU counter, per the policy).
  void StampAccess(Entry* e, int64_t now_ms) {
    e->set_access(NextAccess(eviction_policy(), e->access(), now_ms));
  }

  // ---- transactions and WATCH (multi.cc) ----
  // Transactions (multi.cc).
  bool BeginMulti(Session* s);  // false when already in MULTI
  void DiscardMulti(Session* s);
  // EXEC for exec->session; sets exec->postponed (the transaction stays queued) when a running
  // script holds what it needs.
  void Exec(CommandCtx* exec);
  // RESET: leaves MULTI, unwatches, unblocks, back to db 0 and RESP2, no name.
  void ResetSession(Session* s);
  void Watch(Session* s, const std::string_view* keys, int n);
  // Drops s's watched keys at once; they leave the shards' lists now, or once the scripts
  // holding those shards end (WithShardsOrLater).
  void Unwatch(Session* s);
  // Runs fn with `shards` locked exclusively (inside a WorkerScope of `worker`): now, unless a
  // running script holds one of them or the whole keyspace; then on `worker` once the scripts
  // changed. Threads that are not workers wait instead. fn owns what it needs.
  struct ShardRef {
    int db;
    uint32_t shard;
    uint64_t chunks;  // snapshot chunks of the keys fn may change (EntryTable::ChunkBit)
  };
  void WithShardsOrLater(int worker, std::vector<ShardRef> shards,
                         absl::AnyInvocable<void() &&> fn);

  // ---- CLIENT PAUSE (pause.cc) ----
  // CLIENT PAUSE: commands (all, or those that write) wait until end of the pause; a later
  // pause extends and strengthens, never shortens or weakens, the current one.
  void Pause(int64_t timeout_ms, PauseType type);
  void Unpause();
  // True when s must wait before running cmd (for EXEC: when a queued command writes).
  bool Paused(const CommandSpec* cmd, const Session* s);
  // The pauses of writes that the server itself holds (Redis's PAUSE_DURING_FAILOVER and
  // PAUSE_DURING_SHUTDOWN): each on until turned off, whatever CLIENT PAUSE and CLIENT UNPAUSE do
  // meanwhile. Any thread.
  enum class WritePause : int { kFailover = 1, kShutdown = 2 };
  void SetWritePause(WritePause why, bool on);
  // Whether a pause (CLIENT PAUSE of either type, or one of the server's) is in effect. The
  // dataset then stays as it is, as Redis keeps it for a failover: no active expiry and no
  // eviction, and an expired key is hidden from reads but not deleted. One or two relaxed loads.
  bool DatasetPaused() const {
    if (write_pauses_.load(std::memory_order_relaxed) != 0) return true;
    return pause_type_.load(std::memory_order_relaxed) != 0 &&
           Now() < pause_end_ms_.load(std::memory_order_relaxed);
  }
  // Records a session whose command waits for the pause; it is woken when the pause ends.
  void Postpone(Session* s);
  void ForgetPostponed(Session* s);

  // ---- MONITOR (cmd_monitor.cc) ----
  // MONITOR: registers s as a monitor (false when it already is one); sessions leave on RESET
  // or disconnect.
  bool AddMonitor(Session* s);
  void RemoveMonitor(Session* s);

 private:
  void RegisterBuiltins();
  void ActiveExpire(int worker, int64_t now);
  void RefreshUsedMemoryIfStale(bool fresh);
  bool EvictDownTo(int64_t target, int64_t used, const CommandCtx* running);
  bool HeldBy(const CommandCtx& ctx, int db, uint32_t shard) const;
  void ActiveExpireParts(int worker, int64_t now);
  void Account(CommandCtx* ctx, int64_t duration_ns);
  static void LogHandlerStatus(const CommandSpec& cmd, int rc);

  config::Config config_;
  std::string config_file_;
  AccessControl* access_ = nullptr;
  std::vector<std::shared_ptr<ParamApply>> param_hooks_;  // by generic parameter index
  RuntimeSettings settings_;
  Registry registry_;
  std::vector<std::unique_ptr<Database>> dbs_;
  std::unique_ptr<WorldLock> world_;
  std::vector<WorkerExecutor*> executors_;
  std::vector<std::unique_ptr<WorkerState>> workers_;
  std::vector<std::unique_ptr<WorkerStats>> stats_;
  std::function<int64_t()> clock_;
  std::function<int64_t()> used_memory_source_;
  std::atomic<bool> has_used_memory_source_{false};
  std::function<void()> shutdown_;
  // The waiting shutdown: shutdown_mu_ guards every shutdown_* field; the thread only reads the
  // replication hooks and sleeps on shutdown_cv_.
  enum class ShutdownState { kIdle, kWaiting, kFinishing };
  std::mutex shutdown_mu_;
  std::condition_variable shutdown_cv_;
  ShutdownState shutdown_state_ = ShutdownState::kIdle;
  ShutdownFlags shutdown_flags_;
  uint64_t shutdown_generation_ = 0;
  int64_t shutdown_deadline_ms_ = 0;
  bool shutdown_stop_ = false;
  std::vector<std::pair<uint64_t, int>> shutdown_waiters_;  // (session id, worker)
  std::thread shutdown_thread_;
  void CancelShutdownLocked();
  BusyProbe* busy_probe_ = nullptr;
  std::atomic<uint64_t> script_epoch_{1};
  std::atomic<int> busy_scripts_{0};
  std::mutex script_waiters_mu_;  // guards script_waiters_
  std::vector<std::pair<int, absl::AnyInvocable<void() &&>>> script_waiters_;  // (worker, fn)
  FunctionLibraries* function_libraries_ = nullptr;
  ScriptFigures* script_figures_ = nullptr;
  std::atomic<int64_t> connected_{0};
  std::atomic<uint64_t> next_session_id_{0};
  std::mutex sessions_mu_;
  absl::flat_hash_map<uint64_t, Session*> sessions_;
  int64_t start_ms_;
  int port_ = 0;
  std::atomic<int64_t> blocked_count_{0};
  std::atomic<int64_t> used_memory_{0};
  std::atomic<int64_t> used_refreshed_ms_{0};
  std::atomic<bool> active_expire_{true};
  std::atomic<int64_t> peak_memory_{0};
  PersistHooks* persist_ = nullptr;
  ReplicationHooks* repl_ = nullptr;
  std::unique_ptr<ClusterHooks> cluster_;  // stopped in ~Engine before anything else goes
  absl::flat_hash_map<int, ParamFilter> param_filters_;
  std::atomic<bool> loading_{false};
  std::atomic<bool> disk_error_{false};
  mutable std::mutex disk_error_mu_;  // guards disk_error_text_
  std::string disk_error_text_;
  bool Allowed(int protected_param, std::string_view peer) const;
  void FeedMonitors(const CommandCtx& ctx);
  void EndPauseIfDue();
  std::mutex pause_mu_;                              // guards postponed_ and the pause timer
  std::vector<std::pair<uint64_t, int>> postponed_;  // (session id, worker)
  std::atomic<int> pause_type_{0};                   // a PauseType
  std::atomic<int64_t> pause_end_ms_{0};
  std::atomic<int> write_pauses_{0};  // WritePause bits
  // Resumes every postponed session on its worker (each reads its command again, and waits again
  // if a pause still holds it).
  void ResumePostponed();
  std::mutex monitors_mu_;                          // guards monitors_
  std::vector<std::pair<uint64_t, int>> monitors_;  // (session id, worker)
  std::atomic<int> monitor_count_{0};
  ErrorCounts errors_;
  SlowLog slowlog_;
  LatencyMonitor latency_monitor_;
  // Indexes of the generic parameters the accounting reads on every command.
  int p_latency_tracking_, p_slowlog_slower_, p_slowlog_max_len_, p_latency_threshold_,
      p_enable_debug_, p_notify_;
  Messaging* messaging_ = nullptr;
  static inline thread_local int notify_muted_ = 0;  // MuteNotifications on this thread
  // Removes key from db on this worker later if it is expired then (a reader found it expired
  // under a shared lock), so that it expires, and notifies, as if the read had deleted it.
  void ExpireLater(Database& db, std::string_view key);
  std::mutex ops_mu_;
  int64_t ops_samples_[16] = {};
  int ops_index_ = 0;
  int64_t ops_last_ms_ = 0;
  uint64_t ops_last_count_ = 0;
  void SampleOps(int64_t now);
};

// Holds the current worker's world-lock slot for a batch of work; nests. The outermost scope
// waits for the slot (kWait), which only ever waits for ordinary commands and world operations
// of other workers, never for a script, as long as callers on event loops use kNoScriptWait:
// while a script holds the whole keyspace that scope runs without the slot and records the
// script's hold in WorkerState::world_hold (the caller then touches no shard: Session::Process
// answers BUSY or postpones, the cron skips, posted work waits for the script, PostToWorker).
class WorkerScope {
 public:
  enum Mode { kWait, kNoScriptWait };
  WorkerScope(Engine* engine, int worker, Mode mode = kWait);
  ~WorkerScope();
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;
  // Whether the scope may touch shards: it holds the slot (or an outer scope does).
  bool held() const;

 private:
  Engine* engine_;
  int worker_;
};

// Inside a WorkerScope: takes the whole keyspace exclusively for the scope (releasing and
// retaking the worker's own slot around it).
class WorldExclusive {
 public:
  // Waits for every worker, scripts included: only for threads that are not event loops
  // (startup, the snapshot machinery's own threads) and for callers that know no script runs.
  explicit WorldExclusive(Engine* engine);
  ~WorldExclusive();
  // Takes the whole keyspace unless a script runs: null then, with *hold saying whether it is
  // past busy-reply-threshold (kBusy, the error line in *busy) or not (kHeld: postpone and try
  // again when the scripts change). With wait_held, a script under the threshold is waited for
  // instead (callers that cannot postpone). Without `changes` the holder changes no key (it only
  // waits for every command in flight to end): a running snapshot is not made to capture.
  static std::unique_ptr<WorldExclusive> TryTake(Engine* engine, std::string* busy,
                                                 ScriptHold* hold, bool wait_held = false,
                                                 bool changes = true);

 private:
  struct NoWait {};
  WorldExclusive(Engine* engine, NoWait);
  Engine* engine_;
  int worker_;
  bool held_own_;
  bool taken_ = true;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_ENGINE_H_
