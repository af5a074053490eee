// The persistence subsystem (persistence.h): settings, startup loading, SAVE/BGSAVE state, save
// rules, INFO persistence and the engine's hooks.
#include "host/persist/persistence.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "host/config/params.h"
#include "host/engine/memory.h"
#include "host/persist/rdb_file.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {
namespace {

using engine::Cat;

constexpr int64_t kBgsaveRetryDelayS = 5;  // Redis's CONFIG_BGSAVE_RETRY_DELAY

const char kMisconf[] =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";

// An absolute path for `dir`, or the reason it cannot be used (what chdir would say).
bool ResolveDir(const std::string& dir, std::string* abs, std::string* why) {
  char buf[PATH_MAX];
  if (realpath(dir.c_str(), buf) == nullptr) {
    *why = std::strerror(errno);
    return false;
  }
  struct stat st;
  if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    *why = std::strerror(ENOTDIR);
    return false;
  }
  *abs = buf;
  return true;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

bool ParseSaveRules(std::string_view text, std::vector<std::pair<int64_t, int64_t>>* rules,
                    std::string* normalized) {
  const std::vector<std::string> words = engine::SplitWords(text);
  rules->clear();
  if (words.size() % 2 != 0) return false;
  for (size_t i = 0; i < words.size(); i += 2) {
    int64_t seconds, changes;
    if (!engine::ParseInt64(words[i], &seconds) || !engine::ParseInt64(words[i + 1], &changes) ||
        seconds < 1 || changes < 0)
      return false;
    rules->emplace_back(seconds, changes);
  }
  normalized->clear();
  for (const auto& [s, c] : *rules)
    *normalized = Cat(*normalized, normalized->empty() ? "" : " ", s, " ", c);
  return true;
}

Persistence::Persistence(engine::Engine* e) : e_(e) {
  lastsave_s_.store(engine::Engine::WallMs() / 1000, std::memory_order_relaxed);
}

Persistence::~Persistence() { StopSnapshot(); }

std::string Persistence::Text(const char* name) const {
  return e_->settings().params.Text(engine::ParamValues::Find(name));
}

int64_t Persistence::Int(const char* name) const {
  return e_->settings().params.Int(engine::ParamValues::Find(name));
}

std::string Persistence::dir() const { return Text("dir"); }

bool Persistence::SaveRulesActive() const {
  std::lock_guard l(mu_);
  return !rules_.empty();
}

bool Persistence::Init(std::string* error) {
  std::string normalized;
  {
    std::lock_guard l(mu_);
    if (!ParseSaveRules(Text("save"), &rules_, &normalized)) {
      *error = "save: Invalid save parameters";
      return false;
    }
  }
  e_->settings().params.Set(engine::ParamValues::Find("save"), normalized);
  std::string abs, why;
  if (!ResolveDir(Text("dir"), &abs, &why)) {
    *error = Cat("Can't chdir to '", Text("dir"), "': ", why);
    return false;
  }
  e_->settings().params.Set(engine::ParamValues::Find("dir"), abs);

  e_->SetParamFilter(engine::ParamValues::Find("save"), [this](std::string* v) -> std::string {
    std::vector<std::pair<int64_t, int64_t>> rules;
    std::string normalized;
    if (!ParseSaveRules(*v, &rules, &normalized)) return "Invalid save parameters";
    *v = normalized;
    {
      std::lock_guard l(mu_);
      rules_ = std::move(rules);
    }
    UpdateDiskError();
    return "";
  });
  auto aof_apply =
      std::make_shared<engine::Engine::ParamApply>([this] { return ApplyAppendOnly(); });
  e_->OnParamSet("appendonly", aof_apply);
  e_->OnParamSet("appendfsync", aof_apply);
  e_->OnParamSet("stop-writes-on-bgsave-error",
                 std::make_shared<engine::Engine::ParamApply>([this] {
                   UpdateDiskError();
                   return std::string();
                 }));
  e_->SetParamFilter(engine::ParamValues::Find("dbfilename"), [](std::string* v) -> std::string {
    if (v->find('/') != std::string::npos) return "dbfilename can't be a path, just a filename";
    return "";
  });
  e_->SetParamFilter(engine::ParamValues::Find("dir"), [](std::string* v) -> std::string {
    std::string abs, why;
    if (!ResolveDir(*v, &abs, &why)) return why;
    *v = abs;
    return "";
  });
  return true;
}

bool Persistence::LoadAtStartup(std::string* error,
                                const std::function<bool(std::string*)>& verify) {
  // Commands get -LOADING until the dataset is in memory and the AOF (if on) records writes; the
  // server set the flag before it started serving.
  struct Done {
    engine::Engine* e;
    ~Done() { e->set_loading(false); }
  } done{e_};
  e_->set_loading(true);
  const std::string path = Cat(dir(), "/", Text("dbfilename"));
  if (Int("appendonly") != 0) {
    // As Redis: with appendonly on, the append-only file is the dataset (the RDB file is not read).
    if (!LoadAof(error)) return false;
  } else if (FileExists(path)) {
    LoadStats stats;
    const int64_t start = engine::Engine::WallMs();
    if (!LoadRdbFile(*e_, path, false, &stats, error)) return false;
    spdlog::info("DB loaded from disk: {:.3f} seconds keys={} expired={}",
                 (engine::Engine::WallMs() - start) / 1000.0, stats.loaded, stats.expired);
    std::lock_guard l(mu_);
    last_load_loaded_ = stats.loaded;
    last_load_expired_ = stats.expired;
    startup_load_ = stats;
  }
  if (verify != nullptr && !verify(error)) return false;
  std::lock_guard l(mu_);
  dirty_at_save_ = e_->Dirty();
  return true;
}

bool Persistence::SaveNow(std::string* error) {
  const int64_t now = e_->Now();
  const uint64_t dirty = e_->Dirty();
  const EncodeOptions opt = EncodeOptions::FromEngine(*e_);
  RdbFileWriter file;
  if (!file.Open(dir(), Text("dbfilename"), error)) return false;
  std::vector<std::pair<std::string, std::string>> aux;
  if (save_info_ != nullptr) save_info_(&aux);
  file.Header(false, static_cast<int64_t>(engine::memory::ReadStats().allocated),
              FunctionLibrarySources(*e_), &aux);
  std::string buf;
  SkippedKeys skipped;
  for (int d = 0; d < e_->db_count(); ++d) {
    engine::Database& db = e_->db(d);
    if (db.KeyCount() == 0) continue;
    file.BeginDb(d, db.KeyCount(), db.VolatileCount());
    for (uint32_t i = 0; i < db.shard_count(); ++i) {
      buf.clear();
      uint64_t keys = 0;
      if (!SerializeShard(*e_, db.shard(i), opt, now, &buf, &keys, &skipped, error)) {
        file.Abort();
        return false;
      }
      file.Append(buf);
    }
  }
  if (!file.Finish(error)) return false;
  skipped.Warn("DB saved on disk");
  spdlog::info("DB saved on disk");
  std::lock_guard l(mu_);
  dirty_at_save_ = dirty;
  lastsave_s_.store(now / 1000, std::memory_order_relaxed);
  last_bgsave_ok_ = true;
  return true;
}

bool Persistence::snapshot_running() const {
  std::lock_guard l(mu_);
  return snapshot_ != nullptr && !snapshot_->finished();
}

bool Persistence::ScriptRunning() const {
  std::string busy;
  engine::BusyProbe* probe = e_->busy_probe();
  return probe != nullptr && probe->AnyHold(&busy) != engine::ScriptHold::kFree;
}

bool Persistence::StartSnapshot(Snapshot::Target target,
                                std::function<void(const Snapshot::Result&)> done,
                                std::string* error, std::function<bool(std::string*)> on_begin,
                                engine::ScriptHold* hold) {
  std::unique_ptr<Snapshot> old;
  {
    std::lock_guard l(mu_);
    if (snapshot_ != nullptr && !snapshot_->finished()) {
      *error = "a snapshot is already in progress";
      return false;
    }
    old = std::move(snapshot_);
  }
  if (old != nullptr) old->Join();  // finished: only its thread's exit is left
  auto snap = std::make_unique<Snapshot>(*e_, std::move(target), std::move(done));
  {
    // Its point in time needs the whole keyspace, which a running script holds part of: not
    // waited for (the caller tries again when the scripts change).
    engine::ScriptHold h;
    std::string busy;
    auto world = engine::WorldExclusive::TryTake(e_, &busy, &h);
    if (world == nullptr) {
      if (hold != nullptr) *hold = h;
      *error = busy.empty() ? "a script is running" : busy;
      return false;
    }
    old.reset();  // no lock hook can be using it: every hook runs under a world slot
    if (on_begin != nullptr && !on_begin(error)) return false;
    snap->Begin();
    active_.store(snap.get(), std::memory_order_release);
  }
  Snapshot* raw = snap.get();
  {
    std::lock_guard l(mu_);
    snapshot_ = std::move(snap);
  }
  raw->Start();
  return true;
}

bool Persistence::StartReplicationSnapshot(
    const std::string& name, std::function<void(const Snapshot::Result&)> done, std::string* error,
    std::function<bool(std::string*)> on_begin, engine::ScriptHold* hold,
    std::shared_ptr<std::vector<std::pair<std::string, std::string>>> aux,
    decltype(Snapshot::Target::sink) sink) {
  // A snapshot to a file counts in rdb_saves as Redis's BGSAVE for replication does (one to
  // replicas' sockets does not).
  auto begin = [this, on_begin = std::move(on_begin), disk = sink == nullptr](std::string* why) {
    {
      std::lock_guard l(mu_);
      snapshot_is_bgsave_ = false;
      if (disk) ++rdb_saves_;
    }
    return on_begin == nullptr || on_begin(why);
  };
  auto finish = [this, done = std::move(done)](const Snapshot::Result& r) {
    active_.store(nullptr, std::memory_order_release);
    done(r);
  };
  return StartSnapshot(
      Snapshot::Target{dir(), name, /*aof_base=*/false, std::move(aux), std::move(sink)},
      std::move(finish), error, std::move(begin), hold);
}

void Persistence::StopSnapshot() {
  std::unique_ptr<Snapshot> snap;
  {
    std::lock_guard l(mu_);
    if (snapshot_ == nullptr) return;
    snapshot_->Cancel();
  }
  // Joined without any lock: the thread needs its world slot and shard locks to reach the end.
  Snapshot* raw;
  {
    std::lock_guard l(mu_);
    raw = snapshot_.get();
  }
  raw->Join();
  engine::WorldExclusive world(e_);
  active_.store(nullptr, std::memory_order_release);
  std::lock_guard l(mu_);
  snap = std::move(snapshot_);
}

std::string Persistence::BgSave(bool schedule, bool in_exec, engine::ScriptHold* hold) {
  {
    std::lock_guard l(mu_);
    const bool running = snapshot_ != nullptr && !snapshot_->finished();
    if (running && snapshot_is_bgsave_) return "-ERR Background save already in progress";
    if (running || in_exec) {
      if (schedule || in_exec) {
        bgsave_scheduled_ = true;
        return "+Background saving scheduled";
      }
      return "-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
             "SCHEDULE in order to schedule a BGSAVE whenever possible.";
    }
  }
  std::string error;
  Snapshot::Target target{dir(), Text("dbfilename"), false,
                          std::make_shared<std::vector<std::pair<std::string, std::string>>>()};
  auto on_begin = [this, aux = target.aux](std::string*) {  // the snapshot's instant, world lock
    if (save_info_ != nullptr) save_info_(aux.get());
    std::lock_guard l(mu_);
    ++rdb_saves_;
    dirty_at_bgsave_ = e_->Dirty();
    last_bgsave_try_s_ = engine::Engine::WallMs() / 1000;
    snapshot_is_bgsave_ = true;
    return true;
  };
  engine::ScriptHold h = engine::ScriptHold::kFree;
  if (!StartSnapshot(
          std::move(target), [this](const Snapshot::Result& r) { BgSaveDone(r); }, &error, on_begin,
          &h)) {
    if (hold != nullptr) *hold = h;
    if (h == engine::ScriptHold::kHeld) return "";
    if (h == engine::ScriptHold::kBusy) return Cat("-", error);
    return Cat("-ERR ", error);
  }
  spdlog::info("Background saving started");
  return "+Background saving started";
}

void Persistence::BgSaveDone(const Snapshot::Result& r) {
  active_.store(nullptr, std::memory_order_release);
  {
    std::lock_guard l(mu_);
    last_cow_ = r.peak_buffered;
    if (r.cancelled) {
      spdlog::warn("Background saving cancelled");
    } else {
      last_bgsave_ok_ = r.ok;
      last_bgsave_time_s_ = (r.end_ms - r.start_ms + 500) / 1000;
      if (r.ok) {
        dirty_at_save_ = dirty_at_bgsave_;
        lastsave_s_.store(r.start_ms / 1000, std::memory_order_relaxed);
        spdlog::info(
            "Background saving terminated with success keys={} bytes={} ms={} "
            "peak_buffered={}",
            r.keys, r.bytes, r.end_ms - r.start_ms, r.peak_buffered);
      } else {
        spdlog::error("Background saving error: {}", r.error);
      }
    }
  }
  UpdateDiskError();
}

void Persistence::UpdateDiskError() {
  bool refuse;
  {
    std::lock_guard l(mu_);
    refuse = !last_bgsave_ok_ && !rules_.empty();
  }
  refuse = refuse && Int("stop-writes-on-bgsave-error") != 0;
  if (refuse) {
    e_->set_disk_error(kMisconf);
  } else if (e_->disk_error() && e_->disk_error_message() == kMisconf) {
    e_->set_disk_error("");
  }
}

// ---- hooks ----

void Persistence::BeforeShardWrite(engine::Database& db, uint32_t shard, uint64_t chunks) {
  if (Snapshot* s = active_.load(std::memory_order_acquire)) {
    s->CaptureShard(db, shard, chunks);
  } else {
    db.shard(shard).snapshot_pending.store(0, std::memory_order_relaxed);  // cancelled
  }
}

void Persistence::BeforeWorldWrite() {
  if (Snapshot* s = active_.load(std::memory_order_acquire)) s->CaptureAll();
}

void Persistence::AfterFlushAll() {
  {
    std::lock_guard l(mu_);
    if (snapshot_ != nullptr && !snapshot_->finished() && snapshot_is_bgsave_) {
      snapshot_->Cancel();  // Redis 7.0 kills its child; the cron joins the thread
      active_.store(nullptr, std::memory_order_release);
    }
  }
  if (!SaveRulesActive()) return;
  // Redis writes the (empty) dataset at once, keeping the dirty count so the flush still counts
  // as a change.
  uint64_t keep;
  {
    std::lock_guard l(mu_);
    keep = dirty_at_save_;
  }
  std::string error;
  if (!SaveNow(&error)) spdlog::error("FLUSHALL save failed: {}", error);
  std::lock_guard l(mu_);
  dirty_at_save_ = keep;
}

void Persistence::Cron(int64_t now_ms) {
  UpdateDiskError();  // stop-writes-on-bgsave-error may have changed
  AofCron(now_ms);
  const int64_t now_s = now_ms / 1000;
  bool start = false;
  {
    std::lock_guard l(mu_);
    const bool running = snapshot_ != nullptr && !snapshot_->finished();
    if (running) return;
  }
  // A running script holds part of the keyspace a snapshot needs: a later tick starts it.
  if (ScriptRunning()) return;
  {
    std::lock_guard l(mu_);
    if (bgsave_scheduled_) {
      start = true;
      bgsave_scheduled_ = false;
    }
    const uint64_t changes = e_->Dirty() - dirty_at_save_;
    for (const auto& [seconds, min_changes] : rules_) {
      if (start) break;
      if (changes >= static_cast<uint64_t>(min_changes) &&
          now_s - lastsave_s_.load(std::memory_order_relaxed) > seconds &&
          (now_s - last_bgsave_try_s_ > kBgsaveRetryDelayS || last_bgsave_ok_)) {
        spdlog::info("{} changes in {} seconds. Saving...", changes, seconds);
        start = true;
      }
    }
  }
  if (!start) return;
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  BgSave(false, false, &hold);
  if (hold != engine::ScriptHold::kFree) {  // a script started meanwhile: the next tick
    std::lock_guard l(mu_);
    bgsave_scheduled_ = true;
  }
}

bool Persistence::Shutdown(int save, bool force, std::string* error) {
  StopSnapshot();
  if (save == 1 || (save == -1 && SaveRulesActive())) {
    spdlog::info("Saving the final RDB snapshot before exiting.");
    engine::WorldExclusive world(e_);
    std::string why;
    if (!SaveNow(&why)) {
      // As Redis's finishShutdown: the server keeps running (with its AOF open) unless forced.
      if (!force) {
        spdlog::error("Error trying to save the DB, can't exit. reason={}", why);
        spdlog::error(
            "Errors trying to shut down the server. Check the logs for more information.");
        *error = "ERR Errors trying to SHUTDOWN. Check logs.";
        return false;
      }
      spdlog::error("Error trying to save the DB. Exit anyway. reason={}", why);
    }
  }
  if (aof_on_.load()) {
    spdlog::info("Calling fsync() on the AOF file.");
    aof_.Close();
    aof_on_.store(false);
  }
  return true;
}

void Persistence::Info(std::string* out) {
  std::lock_guard l(mu_);
  const bool running = snapshot_ != nullptr && !snapshot_->finished();
  const bool bgsave = running && snapshot_is_bgsave_;
  const int64_t now_s = engine::Engine::WallMs() / 1000;
  auto line = [&](std::string_view k, auto v) { *out += Cat(k, ":", v, "\r\n"); };
  line("loading", e_->loading() ? 1 : 0);
  line("async_loading", 0);
  line("current_cow_peak", running ? static_cast<int64_t>(snapshot_->buffered()) : 0);
  line("current_cow_size", running ? static_cast<int64_t>(snapshot_->buffered()) : 0);
  line("current_cow_size_age", 0);
  line("current_fork_perc", std::string_view("0.00"));
  line("current_save_keys_processed", running ? snapshot_->keys_done() : 0);
  line("current_save_keys_total", running ? snapshot_->keys_total() : 0);
  line("rdb_changes_since_last_save", e_->Dirty() - dirty_at_save_);
  line("rdb_bgsave_in_progress", bgsave ? 1 : 0);
  line("rdb_last_save_time", lastsave_s_.load(std::memory_order_relaxed));
  line("rdb_last_bgsave_status", std::string_view(last_bgsave_ok_ ? "ok" : "err"));
  line("rdb_last_bgsave_time_sec", last_bgsave_time_s_);
  line("rdb_current_bgsave_time_sec", bgsave ? now_s - snapshot_->start_ms() / 1000 : -1);
  line("rdb_saves", rdb_saves_);
  line("rdb_last_cow_size", static_cast<int64_t>(last_cow_));
  line("rdb_last_load_keys_expired", last_load_expired_);
  line("rdb_last_load_keys_loaded", last_load_loaded_);
  AofInfo(out);
  line("module_fork_in_progress", 0);
  line("module_fork_last_cow_size", 0);
}

}  // namespace vessel::persist
