// The append-only file side of the persistence subsystem (persistence.h, aof.h): what each write
// records, loading or creating the files at startup, BGREWRITEAOF and automatic rewrites,
// CONFIG SET appendonly/appendfsync, INFO.
//
// A rewrite is a background snapshot (snapshot.h) written as the new base file. At its point in
// time (under the world lock, so no write is in flight) new records switch to a new incremental
// file, which is added to the manifest at once; when the base is complete, the manifest becomes
// new base + new incremental file and the older files are deleted. A failed rewrite leaves the
// old base and every incremental file in the manifest, so nothing is lost either way.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host/config/params.h"
#include "host/engine/strutil.h"
#include "host/persist/persistence.h"
#include "host/persist/rdb_file.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {
namespace {

using engine::Cat;

// One command's record (`ops` commands in RESP) in database db; a repl_only record (PUBLISH)
// goes to the replication stream and not to the append-only file, as Redis propagates it.
struct Record {
  int db;
  std::string rec;
  int ops = 1;
  bool repl_only = false;
};
// The records of the running EXEC on this thread (BeginExec .. EndExec).
thread_local bool t_in_exec = false;
thread_local std::vector<Record> t_group;
// The writes of the running script on this thread, recorded when the script's command ends.
thread_local std::vector<Record> t_script;

// The records of `group` (all, or all but the repl_only ones) as one unit in *out: as they are
// when they make one command, else wrapped in MULTI/EXEC as Redis 7.0 propagates a transaction
// or a script (`wrap`); SELECTs between them keep the unit atomic whatever databases they touch.
// *first is the database the unit starts in, *end the one it leaves the stream in; *out stays
// empty when there is nothing to record.
void Unit(const std::vector<Record>& group, bool with_repl_only, bool wrap, std::string* out,
          int* first, int* end) {
  int db = -1;
  for (const Record& r : group) {
    if (r.repl_only && !with_repl_only) continue;
    if (db == -1) {
      *first = db = r.db;
      if (wrap) AppendResp(out, {"MULTI"});
    } else if (r.db != db) {
      const std::string n = std::to_string(r.db);
      AppendResp(out, {"SELECT", n});
      db = r.db;
    }
    *out += r.rec;
  }
  if (db == -1) return;
  if (wrap) AppendResp(out, {"EXEC"});
  *end = db;
}

// A transaction's or a script's records for each sink, wrapped in MULTI/EXEC when they are more
// than one command (Redis 7.0 leaves a lone command as it is). Without a replication-only record
// both sinks get the same text, built once (`aof` stays empty and `same` is set).
struct UnitText {
  std::string aof, all;
  bool same = false;
  int aof_first = 0, aof_end = 0, first = 0, end = 0;
};
UnitText MakeUnit(const std::vector<Record>& group) {
  int ops = 0;
  bool repl_only = false;
  for (const Record& r : group) {
    ops += r.ops;
    repl_only = repl_only || r.repl_only;
  }
  UnitText u;
  Unit(group, true, ops > 1, &u.all, &u.first, &u.end);
  u.same = !repl_only;
  if (!u.same) Unit(group, false, ops > 1, &u.aof, &u.aof_first, &u.aof_end);
  return u;
}

bool IsScriptCommand(std::string_view name) {
  return name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
         name == "fcall" || name == "fcall_ro";
}

// Commands whose relative times would expire later on replay: their key's absolute expiry is
// recorded after them (PEXPIREAT), or they are replaced by it (the EXPIRE family), as Redis does.
// The host's commands whose relative times are recorded as absolute ones, as Redis 7.0
// propagates them (the modules' commands say it themselves through vsl_api.propagate).
bool RelativeTimeCommand(std::string_view name) {
  return name == "expire" || name == "pexpire" || name == "expireat" || name == "restore";
}

// EXPIRE / PEXPIRE / EXPIREAT key time [NX | XX | GT | LT] as PEXPIREAT key ms [option], DEL
// when the time had passed; RESTORE key ttl payload [...] with the absolute time and ABSTTL.
void AppendAbsolute(std::string* rec, const engine::CommandCtx* ctx, const engine::Entry* entry) {
  const std::string_view key = ctx->keys[0].name;
  if (entry == nullptr) return AppendResp(rec, {"DEL", key});
  std::vector<std::string_view> argv(ctx->argv, ctx->argv + ctx->argc);
  const std::string at = std::to_string(entry->expire_ms);
  if (ctx->cmd->name == "restore") {
    if (entry->expire_ms == 0) return AppendResp(rec, argv);
    argv[2] = at;
    bool abs = false;
    for (size_t i = 4; i < argv.size(); ++i)
      abs = abs || engine::EqualsIgnoreCase(argv[i], "absttl");
    if (!abs) argv.push_back("ABSTTL");
    return AppendResp(rec, argv);
  }
  argv[0] = "PEXPIREAT";
  argv[2] = at;
  AppendResp(rec, argv);
}

std::string BaseName(const std::string& prefix, uint64_t seq) {
  return Cat(prefix, ".", seq, ".base.rdb");
}
std::string IncrName(const std::string& prefix, uint64_t seq) {
  return Cat(prefix, ".", seq, ".incr.aof");
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

FsyncPolicy Persistence::Policy() const {
  const std::string p = Text("appendfsync");
  return p == "always" ? FsyncPolicy::kAlways
                       : (p == "no" ? FsyncPolicy::kNo : FsyncPolicy::kEverySec);
}

std::string Persistence::AofDir() const { return Cat(dir(), "/", Text("appenddirname")); }

// ---- recording ----

bool Persistence::Recording() const {
  if (aof_on_.load(std::memory_order_relaxed)) return true;
  engine::ReplicationHooks* r = e_->repl();
  return r != nullptr && r->Recording();
}

void Persistence::Emit(int db, std::string_view records, int end_db) {
  // One order for both sinks: the AOF file and the replication stream see the records in the
  // same sequence (see host/repl/replication.h).
  EmitEach(db, records, end_db, db, records, end_db);
}

void Persistence::EmitEach(int aof_db, std::string_view aof_records, int aof_end_db, int db,
                           std::string_view records, int end_db) {
  std::lock_guard l(emit_mu_);
  if (!aof_records.empty() && aof_on_.load(std::memory_order_relaxed))
    aof_.Append(aof_db, aof_records, aof_end_db);
  engine::ReplicationHooks* r = e_->repl();
  if (r != nullptr && r->Recording()) r->Feed(db, records, end_db);
}

void Persistence::BeginExec() {
  t_in_exec = true;
  t_group.clear();
}

void Persistence::EndExec() {
  t_in_exec = false;
  if (t_group.empty() || !Recording()) {
    t_group.clear();
    return;
  }
  const UnitText u = MakeUnit(t_group);
  t_group.clear();
  if (u.same) return Emit(u.first, u.all, u.end);
  EmitEach(u.aof_first, u.aof, u.aof_end, u.first, u.all, u.end);
}

void Persistence::AfterWrite(engine::CommandCtx* ctx) {
  if (!Recording()) {
    t_script.clear();
    return;
  }
  const std::string_view name = ctx->cmd->name;
  if (name == "exec") return;  // its commands were recorded as a group (EndExec)
  if (IsScriptCommand(name) && !ctx->script_effect) {
    // The script's writes, as one unit (inside a transaction: part of its group).
    std::vector<Record> writes;
    writes.swap(t_script);
    if (writes.empty()) return;
    if (t_in_exec) {
      for (auto& w : writes) t_group.push_back(std::move(w));
      return;
    }
    const UnitText u = MakeUnit(writes);
    if (u.same) return Emit(u.first, u.all, u.end);
    EmitEach(u.aof_first, u.aof, u.aof_end, u.first, u.all, u.end);
    return;
  }
  const int db = ctx->db != nullptr ? ctx->db->index() : 0;
  // A command on its own builds its record in this thread's buffer, which keeps its capacity
  // from one write to the next; a record kept for a transaction or a script owns its string.
  static thread_local std::string t_rec;
  const bool kept = ctx->script_effect || t_in_exec;
  Record record{.db = db};
  std::string& rec = kept ? record.rec : t_rec;
  rec.clear();
  if (name == "publish" || name == "spublish") {
    // To replicas only (their subscribers get the message), in its place in a transaction.
    engine::ReplicationHooks* r = e_->repl();
    if (r == nullptr || !r->Recording()) return;
    record.repl_only = true;
    AppendResp(&rec, ctx->argv, static_cast<size_t>(ctx->argc));
  } else if (ctx->propagate_set) {
    // Several commands for one call are one atomic unit, as Redis 7.0 propagates them (an
    // XREADGROUP's XCLAIMs); inside EXEC or a script they already are.
    const bool wrap = ctx->propagated.size() > 1 && !ctx->script_effect && !t_in_exec;
    if (!wrap) record.ops = static_cast<int>(ctx->propagated.size());
    if (wrap) AppendResp(&rec, {"MULTI"});
    for (const auto& cmd : ctx->propagated) {
      const std::vector<std::string_view> argv(cmd.begin(), cmd.end());
      AppendResp(&rec, argv);
    }
    if (wrap) AppendResp(&rec, {"EXEC"});
  } else {
    if (RelativeTimeCommand(name) && !ctx->keys.empty()) {
      const engine::CommandKey& k = ctx->keys[0];
      AppendAbsolute(&rec, ctx, k.shard->table.Find(k.name, k.hash));
    } else {
      AppendResp(&rec, ctx->argv, static_cast<size_t>(ctx->argc));
    }
  }
  if (rec.empty()) return;
  if (ctx->script_effect) {
    t_script.push_back(std::move(record));
    return;
  }
  if (t_in_exec) {
    t_group.push_back(std::move(record));
    return;
  }
  if (record.repl_only) {
    EmitEach(db, "", db, db, rec, db);
  } else {
    Emit(db, rec);
  }
  if (rec.capacity() > (size_t{1} << 20)) std::string().swap(rec);  // after a huge value
}

void Persistence::KeyDeleted(int db, std::string_view key) {
  if (!Recording()) return;
  std::string rec;
  AppendResp(&rec, {"DEL", key});
  Emit(db, rec);
}

// ---- startup ----

bool Persistence::LoadAof(std::string* error) {
  const std::string adir = AofDir();
  const std::string prefix = Text("appendfilename");
  std::string text, why;
  if (!ReadWholeFile(Cat(adir, "/", prefix, ".manifest"), &text, &why)) {
    if (!why.empty()) {
      *error = why;
      return false;
    }
    return CreateAofNow(error);  // no AOF yet: an empty base and incremental file, as Redis 7
  }
  AofManifest m;
  if (!AofManifest::Parse(text, &m, &why)) {
    *error = Cat(adir, "/", prefix, ".manifest: ", why);
    return false;
  }
  const int64_t start = engine::Engine::WallMs();
  const bool truncate_ok = Int("aof-load-truncated") != 0;
  uint64_t commands = 0;
  bool ok = true;
  for (size_t i = 0; ok && i < m.files.size(); ++i) {
    const AofFile& f = m.files[i];
    const std::string path = Cat(adir, "/", f.name);
    if (f.type == 'b' && f.name.ends_with(".rdb")) {
      LoadStats stats;
      ok = LoadRdbFile(*e_, path, /*aof_base=*/true, &stats, error);
      continue;
    }
    AofLoadResult r;
    ok = ReplayAofFile(*e_, path, i + 1 == m.files.size(), truncate_ok, &r, error);
    commands += r.commands;
  }
  if (!ok) return false;
  spdlog::info("DB loaded from append only file: {:.3f} seconds commands={}",
               (engine::Engine::WallMs() - start) / 1000.0, commands);
  // Appends go on in the last incremental file (a new one when the manifest has none).
  uint64_t seq = m.last_incr_seq();
  if (seq == 0) {
    seq = 1;
    for (const AofFile& f : m.files) seq = std::max(seq, f.seq + 1);
    m.files.push_back({IncrName(prefix, seq), seq, 'i'});
    if (!WriteFileAtomic(adir, Cat(prefix, ".manifest"), m.Text(), error)) return false;
  }
  if (!aof_.Open(Cat(adir, "/", IncrName(prefix, seq)), Policy(), error)) return false;
  uint64_t total = 0;
  for (const AofFile& f : m.files) total += FileSize(Cat(adir, "/", f.name));
  std::lock_guard l(mu_);
  manifest_ = std::move(m);
  aof_base_size_ = total;
  aof_on_.store(true);
  return true;
}

bool Persistence::CreateAofNow(std::string* error) {
  const std::string adir = AofDir();
  const std::string prefix = Text("appendfilename");
  if (mkdir(adir.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = Cat("Can't create the append-only file directory ", adir, ": ", std::strerror(errno));
    return false;
  }
  // The base: the dataset now (empty at startup), written synchronously.
  {
    engine::WorldExclusive world(e_);
    RdbFileWriter file;
    if (!file.Open(adir, BaseName(prefix, 1), error)) return false;
    file.Header(/*aof_base=*/true, 0, FunctionLibrarySources(*e_));
    const EncodeOptions opt = EncodeOptions::FromEngine(*e_);
    const int64_t now = e_->Now();
    std::string buf;
    SkippedKeys skipped;
    for (int d = 0; d < e_->db_count(); ++d) {
      engine::Database& db = e_->db(d);
      if (db.KeyCount() == 0) continue;
      file.BeginDb(d, db.KeyCount(), db.VolatileCount());
      for (uint32_t i = 0; i < db.shard_count(); ++i) {
        buf.clear();
        uint64_t keys = 0;
        if (!SerializeShard(*e_, db.shard(i), opt, now, &buf, &keys, &skipped, error)) return false;
        file.Append(buf);
      }
    }
    if (!file.Finish(error)) return false;
    skipped.Warn("AOF base file written");
  }
  AofManifest m;
  m.files.push_back({BaseName(prefix, 1), 1, 'b'});
  m.files.push_back({IncrName(prefix, 1), 1, 'i'});
  if (!aof_.Open(Cat(adir, "/", IncrName(prefix, 1)), Policy(), error)) return false;
  if (!WriteFileAtomic(adir, Cat(prefix, ".manifest"), m.Text(), error)) return false;
  spdlog::info("Creating AOF base file {} on server start", BaseName(prefix, 1));
  std::lock_guard l(mu_);
  manifest_ = std::move(m);
  aof_base_size_ = FileSize(Cat(adir, "/", BaseName(prefix, 1)));
  aof_on_.store(true);
  return true;
}

// ---- rewrites ----

std::string Persistence::BgRewriteAof(engine::ScriptHold* hold) {
  {
    std::lock_guard l(mu_);
    const bool running = snapshot_ != nullptr && !snapshot_->finished();
    if (running && !snapshot_is_bgsave_)
      return "-ERR Background append only file rewriting already in progress";
    if (running) {
      aof_rewrite_scheduled_ = true;
      return "+Background append only file rewriting scheduled";
    }
  }
  std::string error;
  engine::ScriptHold h = engine::ScriptHold::kFree;
  if (!StartAofRewrite(&error, &h)) {
    if (hold != nullptr) *hold = h;
    if (h == engine::ScriptHold::kHeld) return "";
    if (h == engine::ScriptHold::kBusy) return Cat("-", error);
    return Cat("-ERR ", error);
  }
  return "+Background append only file rewriting started";
}

bool Persistence::StartAofRewrite(std::string* error, engine::ScriptHold* hold) {
  const std::string adir = AofDir();
  const std::string prefix = Text("appendfilename");
  if (mkdir(adir.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = Cat("Can't create the append-only file directory ", adir, ": ", std::strerror(errno));
    return false;
  }
  uint64_t seq = 1;
  {
    std::lock_guard l(mu_);
    for (const AofFile& f : manifest_.files) seq = std::max(seq, f.seq + 1);
  }
  const std::string base = BaseName(prefix, seq);
  auto on_begin = [this, adir, prefix, seq](std::string* why) {
    // The point in time: new records go to a new incremental file, listed in the manifest now.
    const std::string incr = Cat(adir, "/", IncrName(prefix, seq));
    const bool ok = aof_.is_open() ? aof_.SwitchTo(incr, why) : aof_.Open(incr, Policy(), why);
    if (!ok) return false;
    std::lock_guard l(mu_);
    snapshot_is_bgsave_ = false;
    manifest_.files.push_back({IncrName(prefix, seq), seq, 'i'});
    if (!WriteFileAtomic(adir, Cat(prefix, ".manifest"), manifest_.Text(), why)) return false;
    aof_on_.store(Int("appendonly") != 0);
    return true;
  };
  Snapshot::Target target{adir, base, /*aof_base=*/true};
  if (!StartSnapshot(
          std::move(target),
          [this, base, seq](const Snapshot::Result& r) { AofRewriteDone(r, base, seq); }, error,
          on_begin, hold)) {
    return false;
  }
  spdlog::info("Background append only file rewriting started");
  return true;
}

void Persistence::AofRewriteDone(const Snapshot::Result& r, const std::string& base,
                                 uint64_t incr_seq) {
  active_.store(nullptr, std::memory_order_release);
  const std::string adir = AofDir();
  const std::string prefix = Text("appendfilename");
  std::lock_guard l(mu_);
  aof_last_rewrite_time_s_ = (r.end_ms - r.start_ms + 500) / 1000;
  if (!r.ok) {
    aof_last_rewrite_ok_ = false;
    ++aof_rewrite_failures_;
    spdlog::error("Background AOF rewrite failed: {}", r.error);
    return;
  }
  AofManifest next;
  next.files.push_back({base, incr_seq, 'b'});
  std::vector<std::string> obsolete;
  for (const AofFile& f : manifest_.files) {
    if (f.type == 'i' && f.seq >= incr_seq) {
      next.files.push_back(f);
    } else {
      obsolete.push_back(f.name);
    }
  }
  std::string error;
  if (!WriteFileAtomic(adir, Cat(prefix, ".manifest"), next.Text(), &error)) {
    aof_last_rewrite_ok_ = false;
    ++aof_rewrite_failures_;
    spdlog::error("Background AOF rewrite failed: {}", error);
    return;
  }
  for (const std::string& f : obsolete) unlink(Cat(adir, "/", f).c_str());
  manifest_ = std::move(next);
  aof_base_size_ = FileSize(Cat(adir, "/", base)) + aof_.size();
  aof_last_rewrite_ok_ = true;
  aof_rewrite_failures_ = 0;
  ++aof_rewrites_;
  spdlog::info("Background AOF rewrite terminated with success");
}

std::string Persistence::ApplyAppendOnly() {
  aof_.set_policy(Policy());
  const bool want = Int("appendonly") != 0;
  if (want == aof_on_.load()) return "";
  if (!want) {
    aof_on_.store(false);
    aof_.Close();
    return "";
  }
  // Turned on: a rewrite creates the base; records go to the new incremental file from its start.
  std::string error;
  if (!StartAofRewrite(&error)) return error;
  return "";
}

void Persistence::AofCron(int64_t now_ms) {
  // A failed AOF write refuses writes until a retry succeeds, as Redis.
  if (aof_on_.load() && !aof_.write_ok()) {
    if (now_ms - last_aof_retry_ms_ >= 1000) {
      last_aof_retry_ms_ = now_ms;
      aof_.Retry();
    }
    if (!aof_.write_ok()) {
      e_->set_disk_error(Cat("MISCONF Errors writing to the AOF file: ", aof_.last_error()));
      return;
    }
  }
  if (e_->disk_error() && e_->disk_error_message().starts_with("MISCONF Errors writing to the AOF"))
    e_->set_disk_error("");
  bool start = false;
  if (ScriptRunning()) return;  // a script holds part of the keyspace: a later tick
  {
    std::lock_guard l(mu_);
    if (snapshot_ != nullptr && !snapshot_->finished()) return;
    if (aof_rewrite_scheduled_) {
      start = true;
      aof_rewrite_scheduled_ = false;
    } else if (aof_on_.load()) {
      const int64_t pct = Int("auto-aof-rewrite-percentage");
      const uint64_t min = static_cast<uint64_t>(Int("auto-aof-rewrite-min-size"));
      uint64_t size = aof_.size();
      for (const AofFile& f : manifest_.files)
        if (f.type == 'b') size += FileSize(Cat(AofDir(), "/", f.name));
      const uint64_t base = std::max<uint64_t>(aof_base_size_, 1);
      if (pct > 0 && size > min &&
          (size - std::min(size, base)) * 100 / base >= static_cast<uint64_t>(pct)) {
        spdlog::info("Starting automatic rewriting of AOF on {}% growth",
                     (size - std::min(size, base)) * 100 / base);
        start = true;
      }
    }
  }
  std::string error;
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  if (!start || StartAofRewrite(&error, &hold)) return;
  if (hold != engine::ScriptHold::kFree) {  // a script started meanwhile: the next tick
    std::lock_guard l(mu_);
    aof_rewrite_scheduled_ = true;
    return;
  }
  spdlog::error("AOF rewrite: {}", error);
}

void Persistence::AofInfo(std::string* out) {
  // Called by Info with mu_ held.
  const bool running = snapshot_ != nullptr && !snapshot_->finished() && !snapshot_is_bgsave_;
  auto line = [&](std::string_view k, auto v) { *out += Cat(k, ":", v, "\r\n"); };
  const bool on = aof_on_.load();
  line("aof_enabled", on ? 1 : 0);
  line("aof_rewrite_in_progress", running ? 1 : 0);
  line("aof_rewrite_scheduled", aof_rewrite_scheduled_ ? 1 : 0);
  line("aof_last_rewrite_time_sec", aof_last_rewrite_time_s_);
  line("aof_current_rewrite_time_sec",
       running ? (engine::Engine::WallMs() - snapshot_->start_ms()) / 1000 : -1);
  line("aof_last_bgrewrite_status", std::string_view(aof_last_rewrite_ok_ ? "ok" : "err"));
  line("aof_rewrites", aof_rewrites_);
  line("aof_rewrites_consecutive_failures", aof_rewrite_failures_);
  line("aof_last_write_status", std::string_view(aof_.write_ok() ? "ok" : "err"));
  line("aof_last_cow_size", 0);
  if (!on) return;
  uint64_t size = aof_.size();
  for (const AofFile& f : manifest_.files)
    if (f.type == 'b') size += FileSize(Cat(AofDir(), "/", f.name));
  line("aof_current_size", size);
  line("aof_base_size", aof_base_size_);
  line("aof_pending_rewrite", aof_rewrite_scheduled_ ? 1 : 0);
  line("aof_buffer_length", 0);
  line("aof_pending_bio_fsync", 0);
  line("aof_delayed_fsync", 0);
}

}  // namespace vessel::persist
