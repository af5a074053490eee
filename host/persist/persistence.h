// The persistence subsystem: RDB snapshots (SAVE, BGSAVE, save rules, SHUTDOWN and FLUSHALL
// behaviour), loading at startup (the AOF wins over the RDB file, as in Redis), INFO
// persistence, and the append-only file (aof.h). It makes Redis's persistence settings real:
// save, dir, dbfilename, rdbcompression, rdbchecksum, stop-writes-on-bgsave-error, appendonly,
// appendfsync, appendfilename, appenddirname, auto-aof-rewrite-*, aof-use-rdb-preamble,
// aof-load-truncated.
//
// Threads and locks: the engine calls the PersistHooks methods (persist_hooks.h). State shared
// between the commands, the cron (worker 0) and the snapshot thread is guarded by mu_; the
// running snapshot is owned through snapshot_ (guarded by mu_, joined by whoever replaces it).
// `dir` is kept as an absolute path and files are written there; the process never chdirs (it
// hosts several servers in tests).
#ifndef VESSEL_HOST_PERSIST_PERSISTENCE_H_
#define VESSEL_HOST_PERSIST_PERSISTENCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host/engine/engine.h"
#include "host/persist/aof.h"
#include "host/persist/rdb_file.h"
#include "host/persist/snapshot.h"

namespace vessel::persist {

// Parses Redis's `save` value ("3600 1 300 100", "" for none) into (seconds, changes) rules;
// false on Redis's "Invalid save parameters". *normalized is the value as CONFIG GET shows it.
bool ParseSaveRules(std::string_view text, std::vector<std::pair<int64_t, int64_t>>* rules,
                    std::string* normalized);

class Persistence : public engine::PersistHooks {
 public:
  explicit Persistence(engine::Engine* e);
  ~Persistence() override;
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Registers SAVE BGSAVE LASTSAVE BGREWRITEAOF DEBUG-side helpers into the engine's table.
  static void RegisterCommands(engine::Registry& r);
  static Persistence& Of(engine::CommandCtx* ctx) {
    return *static_cast<Persistence*>(ctx->engine->persist());
  }

  // Validates the settings (dir exists, save rules) and installs the CONFIG SET hooks. Before
  // serving.
  bool Init(std::string* error);
  // Loads the dataset: the AOF when appendonly is on, else dir/dbfilename when it exists. Runs
  // on the startup thread while the workers answer -LOADING; opens the AOF afterwards.
  // `verify`, when given, checks the loaded dataset before commands are served (false: the
  // server does not start, with its *error).
  bool LoadAtStartup(std::string* error, const std::function<bool(std::string*)>& verify = nullptr);

  // SAVE: writes the keyspace now; the caller holds the whole keyspace.
  bool SaveNow(std::string* error);
  // BGSAVE [SCHEDULE]: the reply line (status or error), as Redis words it. A running script
  // is never waited for: with *hold set to kHeld the reply is "" (try again when the scripts
  // change), with kBusy it is the BUSY error.
  std::string BgSave(bool schedule, bool in_exec, engine::ScriptHold* hold = nullptr);
  int64_t lastsave() const { return lastsave_s_.load(std::memory_order_relaxed); }
  std::string dir() const;
  engine::Engine& engine() { return *e_; }
  // Starts a background snapshot to `target` (an RDB file or an AOF base); false with *error
  // when one already runs. Takes the world lock briefly (the caller must not hold it), unless a
  // script runs: false then, with *hold (when given) saying kHeld or kBusy (*error: the BUSY
  // line). on_begin (optional) runs at the snapshot's point in time, under the world lock; its
  // failure (false with *error) cancels the snapshot.
  bool StartSnapshot(Snapshot::Target target, std::function<void(const Snapshot::Result&)> done,
                     std::string* error, std::function<bool(std::string*)> on_begin = nullptr,
                     engine::ScriptHold* hold = nullptr);
  bool snapshot_running() const;
  // Cancels a running snapshot and waits for its thread (the caller holds no shard lock and not
  // the world lock).
  void StopSnapshot();

  // ---- PersistHooks ----
  void Info(std::string* out) override;
  void Cron(int64_t now_ms) override;
  void BeforeShardWrite(engine::Database& db, uint32_t shard, uint64_t chunks) override;
  void BeforeWorldWrite() override;
  void AfterFlushAll() override;
  void AfterWrite(engine::CommandCtx* ctx) override;
  bool Shutdown(int save, bool force, std::string* error) override;
  bool DumpValue(const vsl_type* t, const void* value, int64_t now_ms, std::string* out,
                 std::string* error) override;
  void* DecodePayload(std::string_view payload, std::string* error) override;
  bool BuildDecoded(engine::CommandCtx* ctx, std::string_view key, void* decoded,
                    std::string* error) override;
  void FreeDecoded(void* decoded) override;
  void KeyDeleted(int db, std::string_view key) override;
  bool DurabilityPending() override {
    return aof_on_.load(std::memory_order_relaxed) && aof_.Pending();
  }
  void MakeDurable() override { aof_.MakeDurable(); }
  void BeginExec() override;
  void EndExec() override;

  // A snapshot for a replica's full synchronization (host/repl): dir/name as an RDB file, with
  // StartSnapshot's contract; `done` runs on the snapshot thread.
  // `aux`: extra aux fields (Snapshot::Target::aux), which on_begin may fill; `sink`: where the
  // RDB goes instead of the file (Snapshot::Target::sink, a diskless synchronization).
  bool StartReplicationSnapshot(
      const std::string& name, std::function<void(const Snapshot::Result&)> done,
      std::string* error, std::function<bool(std::string*)> on_begin, engine::ScriptHold* hold,
      std::shared_ptr<std::vector<std::pair<std::string, std::string>>> aux = nullptr,
      decltype(Snapshot::Target::sink) sink = nullptr);

  // Replication's part of every saved RDB (repl-stream-db, repl-id and repl-offset, as Redis's
  // rdbPopulateSaveInfo), asked at the save's point in time (any locks held; it must only take
  // its own). Set once by host/repl before serving.
  using SaveInfoFn = std::function<void(std::vector<std::pair<std::string, std::string>>*)>;
  void SetSaveInfo(SaveInfoFn f) { save_info_ = std::move(f); }
  // What the RDB loaded at startup said of replication (LoadStats: repl_id empty when nothing).
  const LoadStats& startup_load() const { return startup_load_; }

  // ---- append-only file (persistence_aof.cc) ----
  bool AofEnabled() const { return aof_on_.load(std::memory_order_relaxed); }
  // BGREWRITEAOF: the reply line (status or error); a running script as BgSave.
  std::string BgRewriteAof(engine::ScriptHold* hold = nullptr);

 private:
  std::string Text(const char* name) const;
  int64_t Int(const char* name) const;
  // Whether writes are recorded: for the AOF, the replication stream, or both.
  bool Recording() const;
  // Hands records to the AOF and to the replication stream under emit_mu_ (one order for both).
  void Emit(int db, std::string_view records, int end_db = -2);
  // The same for a unit whose records differ between the sinks (PUBLISH goes to replicas only):
  // aof_records (none when empty) start in aof_db and leave the file in aof_end_db.
  void EmitEach(int aof_db, std::string_view aof_records, int aof_end_db, int db,
                std::string_view records, int end_db);
  std::mutex emit_mu_;
  bool SaveRulesActive() const;
  void BgSaveDone(const Snapshot::Result& r);
  void UpdateDiskError();
  // AOF: startup loading (or creating the files), rewrites, CONFIG SET appendonly.
  std::string AofDir() const;
  bool LoadAof(std::string* error);
  bool CreateAofNow(std::string* error);
  bool StartAofRewrite(std::string* error, engine::ScriptHold* hold = nullptr);
  // Whether a script runs now (the cron then leaves its saves and rewrites for a later tick).
  bool ScriptRunning() const;
  void AofRewriteDone(const Snapshot::Result& r, const std::string& base, uint64_t incr_seq);
  std::string ApplyAppendOnly();
  void AofCron(int64_t now_ms);
  void AofInfo(std::string* out);
  FsyncPolicy Policy() const;

  engine::Engine* e_;

  mutable std::mutex mu_;  // guards the fields below
  std::vector<std::pair<int64_t, int64_t>> rules_;
  std::unique_ptr<Snapshot> snapshot_;      // the running (or finished, not yet joined) one
  std::atomic<Snapshot*> active_{nullptr};  // the running snapshot, for the lock hooks
  bool snapshot_is_bgsave_ = false;
  bool bgsave_scheduled_ = false;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_try_s_ = 0;
  int64_t last_bgsave_time_s_ = -1;
  int64_t rdb_saves_ = 0;
  size_t last_cow_ = 0;
  uint64_t dirty_at_save_ = 0;    // Dirty() when the last save's point in time was taken
  uint64_t dirty_at_bgsave_ = 0;  // Dirty() at the running bgsave's start
  uint64_t last_load_loaded_ = 0, last_load_expired_ = 0;
  SaveInfoFn save_info_;
  LoadStats startup_load_;  // written before serving, read-only after
  std::atomic<int64_t> lastsave_s_{0};

  // AOF state (guarded by mu_ except where atomic; aof_ has its own lock).
  AofWriter aof_;
  std::atomic<bool> aof_on_{false};
  AofManifest manifest_;
  bool aof_rewrite_scheduled_ = false;
  bool aof_last_rewrite_ok_ = true;
  int64_t aof_last_rewrite_time_s_ = -1;
  int64_t aof_rewrites_ = 0;
  int64_t aof_rewrite_failures_ = 0;
  uint64_t aof_base_size_ = 0;  // base + incremental bytes after the last rewrite
  int64_t last_aof_retry_ms_ = 0;
};

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_PERSISTENCE_H_
