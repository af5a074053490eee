// Transactions: EXEC runs the queued commands atomically under the union of their locks; WATCH
// registers the session on its keys so any modification (Engine::Touch) dirties it.
#include <algorithm>

#include "host/engine/engine.h"

namespace vessel::engine {
namespace {

void ClearMulti(Session* s, bool* in_multi, bool* dirty, std::vector<QueuedCommand>* queued) {
  *in_multi = false;
  *dirty = false;
  queued->clear();
  s->info().in_multi.store(false, std::memory_order_relaxed);
  s->info().multi_count.store(-1, std::memory_order_relaxed);
  s->info().multi_bytes.store(0, std::memory_order_relaxed);
}

}  // namespace

bool Engine::BeginMulti(Session* s) {
  if (s->in_multi_) return false;
  s->in_multi_ = true;
  s->multi_dirty_ = false;
  s->info().in_multi.store(true, std::memory_order_relaxed);
  s->info().multi_count.store(0, std::memory_order_relaxed);
  return true;
}

void Engine::DiscardMulti(Session* s) {
  ClearMulti(s, &s->in_multi_, &s->multi_dirty_, &s->queued_);
}

void Engine::ResetSession(Session* s) {
  DiscardMulti(s);
  Unwatch(s);
  RemoveMonitor(s);
  if (s->messaging() != nullptr) messaging_->ResetSession(s);  // unsubscribes, tracking off
  s->set_db(0);
  s->set_protocol(2);
  s->ResetUser();
  // As Redis's clearClientConnectionState: replies back on (a SKIP in force still drops RESET's).
  s->reply_off_ = s->skip_next_ = false;
  std::lock_guard l(s->info().mu);
  s->info().name.clear();
}

void Engine::Exec(Session* s) {
  std::vector<QueuedCommand> queued = std::move(s->queued_);
  const bool aborted = s->multi_dirty_;
  ClearMulti(s, &s->in_multi_, &s->multi_dirty_, &s->queued_);
  if (aborted) {
    s->writer_.ErrorLine("EXECABORT Transaction discarded because of previous errors.");
    Unwatch(s);
    return;
  }

  // Argument views of each queued command, and its context (keys resolved for locking).
  std::vector<std::vector<std::string_view>> argvs(queued.size());
  for (size_t i = 0; i < queued.size(); ++i)
    argvs[i].assign(queued[i].args.begin(), queued[i].args.end());

  bool global = false;
  for (size_t i = 0; i < queued.size(); ++i) {
    global |= (queued[i].cmd->flags & kCmdTxWorld) != 0 ||
              NeedsWorld(*queued[i].cmd, argvs[i].data(), static_cast<int>(argvs[i].size()));
  }

  std::unique_ptr<WorldExclusive> world;
  LockSet locks;
  if (global) {
    world = std::make_unique<WorldExclusive>(this);
  } else {
    for (size_t i = 0; i < queued.size(); ++i) {
      CommandCtx probe;
      probe.engine = this;
      probe.cmd = queued[i].cmd;
      probe.argv = argvs[i].data();
      probe.argc = static_cast<int>(argvs[i].size());
      probe.db = dbs_[s->db_].get();
      ResolveKeys(&probe);
      AddLocks(probe, &locks);
    }
    if (s->watch_ != nullptr) {
      for (const auto& w : s->watch_->keys) {
        Database& d = *dbs_[w.db];
        locks.Add(static_cast<uint32_t>(w.db), d.ShardOf(HashKey(w.key)), false);
      }
    }
    locks.Lock(dbs_);
  }

  // WATCH: any modification since WATCH, or a watched key that expired since, aborts.
  const int64_t now = Now();
  bool abort = false;
  if (s->watch_ != nullptr) {
    abort = s->watch_->dirty.load(std::memory_order_relaxed);
    for (const auto& w : s->watch_->keys) {
      if (abort) break;
      Database& d = *dbs_[w.db];
      const Entry* e = d.shard(d.ShardOf(HashKey(w.key))).table.Find(w.key, HashKey(w.key));
      const bool expired_now = e != nullptr && e->expire_ms != 0 && e->expire_ms <= now;
      abort = expired_now && w.expire_at_watch >= 0;  // it was live when watched
    }
  }
  if (abort) {
    s->writer_.NullArray();
  } else {
    s->writer_.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(queued.size()));
    if (persist_ != nullptr) persist_->BeginExec();  // the writes form one AOF group
    for (size_t i = 0; i < queued.size(); ++i) {
      CommandCtx ctx;
      ctx.engine = this;
      ctx.session = s;
      ctx.cmd = queued[i].cmd;
      ctx.argv = argvs[i].data();
      ctx.argc = static_cast<int>(argvs[i].size());
      ctx.db = dbs_[s->db_].get();
      ctx.w = &s->writer_;
      ctx.now_ms = now;
      ctx.in_exec = true;
      ctx.world = global;
      ctx.locks = global ? nullptr : &locks;
      // Permissions may have changed since the command was queued (Redis checks again).
      if (std::string denied = s->CheckAccess(ctx.cmd, ctx.argv, ctx.argc, /*in_exec=*/true);
          !denied.empty()) {
        s->writer_.ErrorLine(denied);
        RecordRejected(nullptr, denied);
        continue;
      }
      Run(&ctx);
    }
    if (persist_ != nullptr) persist_->EndExec();
  }
  locks.Unlock();
  world.reset();
  Unwatch(s);
}

void Engine::Watch(Session* s, const std::string_view* keys, int n) {
  if (s->watch_ == nullptr) s->watch_ = std::make_unique<WatchState>();
  WatchState* ws = s->watch_.get();
  const int64_t now = Now();
  for (int i = 0; i < n; ++i) {
    bool already = false;
    for (const auto& w : ws->keys) already |= (w.db == s->db_ && w.key == keys[i]);
    if (already) continue;
    Database& d = *dbs_[s->db_];
    const uint64_t hash = HashKey(keys[i]);
    Shard& shard = d.shard(d.ShardOf(hash));
    // The command's locks hold this shard exclusively (WATCH has kCmdExclusiveKeys).
    if (shard.watched == nullptr)
      shard.watched = std::make_unique<StrMap<std::vector<WatchState*>>>();
    (*shard.watched)[std::string(keys[i])].push_back(ws);
    const Entry* e = shard.table.Find(keys[i], hash);
    int64_t state = -1;  // absent
    if (e != nullptr) state = (e->expire_ms != 0 && e->expire_ms <= now) ? -1 : e->expire_ms;
    ws->keys.push_back({s->db_, std::string(keys[i]), state});
  }
}

void Engine::Unwatch(Session* s) {
  if (s->watch_ == nullptr) return;
  WatchState* ws = s->watch_.get();
  for (const auto& w : ws->keys) {
    Database& d = *dbs_[w.db];
    Shard& shard = d.shard(d.ShardOf(HashKey(w.key)));
    std::unique_lock l(shard.mu);
    if (shard.watched == nullptr) continue;
    auto it = shard.watched->find(w.key);
    if (it == shard.watched->end()) continue;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), ws), v.end());
    if (v.empty()) shard.watched->erase(it);
  }
  s->watch_.reset();
}

}  // namespace vessel::engine
