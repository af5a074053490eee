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
  s->asking_ = s->readonly_ = false;  // cluster: ASKING and READONLY
  std::lock_guard l(s->info().mu);
  s->info().name.clear();
}

void Engine::Exec(CommandCtx* exec) {
  Session* s = exec->session;
  if (s->multi_dirty_) {
    ClearMulti(s, &s->in_multi_, &s->multi_dirty_, &s->queued_);
    s->writer_.ErrorLine("EXECABORT Transaction discarded because of previous errors.");
    Unwatch(s);
    return;
  }

  // Argument views of each queued command, and its context (keys resolved for locking). The
  // views point into s->queued_'s strings, which keep their place when the vector moves.
  std::vector<std::vector<std::string_view>> argvs(s->queued_.size());
  for (size_t i = 0; i < s->queued_.size(); ++i)
    argvs[i].assign(s->queued_[i].args.begin(), s->queued_[i].args.end());

  bool global = false;
  for (size_t i = 0; i < s->queued_.size(); ++i) {
    global |= (s->queued_[i].cmd->flags & kCmdTxWorld) != 0 ||
              NeedsWorld(*s->queued_[i].cmd, argvs[i].data(), static_cast<int>(argvs[i].size()));
  }

  // A lock a running script holds is not waited for: EXEC is postponed, the transaction still
  // queued, until the scripts change; past busy-reply-threshold it is discarded with the BUSY
  // error (Redis's EXECABORT).
  exec->script_epoch = script_epoch();
  const bool can_postpone = CanPostpone(exec);
  std::string busy;
  ScriptHold hold = ScriptHold::kFree;
  std::unique_ptr<WorldExclusive> world;
  LockSet locks;
  bool locked;
  if (global) {
    world = WorldExclusive::TryTake(this, &busy, &hold, /*wait_held=*/!can_postpone);
    locked = world != nullptr;
  } else {
    for (size_t i = 0; i < s->queued_.size(); ++i) {
      CommandCtx probe;
      probe.engine = this;
      probe.cmd = s->queued_[i].cmd;
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
    locked = LockForCommand(&locks, exec, &hold, &busy);
  }
  if (!locked) {
    if (hold == ScriptHold::kHeld) {
      exec->postponed = true;
      return;
    }
    ClearMulti(s, &s->in_multi_, &s->multi_dirty_, &s->queued_);
    s->writer_.ErrorLine(Cat("EXECABORT Transaction discarded because of: ", busy));
    Unwatch(s);
    return;
  }
  std::vector<QueuedCommand> queued = std::move(s->queued_);
  ClearMulti(s, &s->in_multi_, &s->multi_dirty_, &s->queued_);

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
      ctx.oom = exec->oom;  // Redis's pre_command_oom_state is EXEC's
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
  // The state leaves its keys' lists under their shards' locks, later when a script holds one;
  // until then writers may still mark it dirty, so the lists keep it alive (shared_ptr).
  std::shared_ptr<WatchState> ws(std::move(s->watch_));
  std::vector<ShardRef> shards;
  for (const auto& w : ws->keys)
    shards.push_back({w.db, dbs_[w.db]->ShardOf(HashKey(w.key)), /*chunks=*/0});
  WithShardsOrLater(s->worker(), std::move(shards), [this, ws] {
    for (const auto& w : ws->keys) {
      Database& d = *dbs_[w.db];
      Shard& shard = d.shard(d.ShardOf(HashKey(w.key)));
      if (shard.watched == nullptr) continue;
      auto it = shard.watched->find(w.key);
      if (it == shard.watched->end()) continue;
      auto& v = it->second;
      v.erase(std::remove(v.begin(), v.end(), ws.get()), v.end());
      if (v.empty()) shard.watched->erase(it);
    }
  });
}

void Engine::WithShardsOrLater(int worker, std::vector<ShardRef> shards,
                               absl::AnyInvocable<void() &&> fn) {
  auto lock_set = [&] {
    LockSet locks;
    for (const ShardRef& r : shards)
      locks.Add(static_cast<uint32_t>(r.db), r.shard, /*exclusive=*/true, r.chunks);
    return locks;
  };
  if (worker >= worker_count()) {  // no event loop to come back on: wait
    WorkerScope scope(this, worker);
    LockSet locks = lock_set();
    locks.Lock(dbs_);
    return std::move(fn)();
  }
  const uint64_t epoch = script_epoch();
  {
    WorkerScope scope(this, worker, WorkerScope::kNoScriptWait);
    // While this worker serves clients from its script's hook, the script holds shards on this
    // very thread: whatever they are, wait for the script's end.
    if (scope.held() && !current_worker().pumping) {
      LockSet locks = lock_set();
      if (LockUnlessScript(&locks)) return std::move(fn)();
    }
  }
  WhenScriptsChange(epoch, worker,
                    [this, worker, shards = std::move(shards), fn = std::move(fn)]() mutable {
                      WithShardsOrLater(worker, std::move(shards), std::move(fn));
                    });
}

}  // namespace vessel::engine
