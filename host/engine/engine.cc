// The engine's frame: construction, configuration parameters, the session registry and the
// server-wide state (persistence hooks, disk errors, shutdown). Command execution is in
// dispatch.cc, key operations in key_ops.cc, expiry and the cron in cron.cc, CLIENT PAUSE in
// pause.cc, waiting for scripts in script_wait.cc, the world lock scopes in world.cc.
#include "host/engine/engine.h"

#include <chrono>

#include "host/config/params.h"
#include "host/engine/builtins.h"
#include "host/engine/lazy_free.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

uint32_t Log2(uint64_t v) {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < v) ++bits;
  return bits;
}

}  // namespace

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
  // Before the databases: in cluster mode a key's hash carries its slot (entry_table.h).
  SetClusterHashing(settings_.params.Int(ParamValues::Find("cluster-enabled")) != 0);
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
  if (cluster_ != nullptr) cluster_->Stop();
  cluster_.reset();
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

bool Engine::Allowed(int protected_param, std::string_view peer) const {
  const int64_t v = ParamInt(protected_param);  // index in {no, yes, local}
  if (v == 1) return true;
  return v == 2 && (peer.starts_with("127.") || peer.starts_with("[::1]"));
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
  if (worker >= worker_count()) {
    // A session of the external slot (the replication link's) runs on a thread of its own,
    // which may be ending it now: only its I/O's Close, thread safe, is called, under the
    // registry's lock that its destructor takes too; the link's thread ends it.
    std::lock_guard l(sessions_mu_);
    auto it = sessions_.find(id);
    if (it != sessions_.end()) it->second->io()->Close();
    return;
  }
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

}  // namespace vessel::engine
