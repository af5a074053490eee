// Periodic work on every worker: active expiry of keys and of parts of values (hash fields
// with a TTL), idle-client timeouts, and on worker 0 memory figures, ops samples and the
// persistence cron.
#include <chrono>

#include "host/engine/engine.h"
#include "host/engine/memory.h"

namespace vessel::engine {
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
    if (repl_ != nullptr) repl_->Cron(now);
  }
  // A replica expires nothing itself: its master's DELs do (Redis's replicas hide expired keys
  // from reads until then). Nor does a paused server: its dataset stays as the pause found it.
  if (active_expire_.load(std::memory_order_relaxed) && (repl_ == nullptr || !repl_->IsReplica()) &&
      !DatasetPaused()) {
    ActiveExpire(worker, now);
    ActiveExpireParts(worker, now);
  }
  const int64_t idle = settings_.timeout.load(std::memory_order_relaxed);
  if (idle > 0) {
    for (auto& [id, s] : workers_[worker]->sessions) {
      if (s->blocked() || s->info().in_multi.load(std::memory_order_relaxed)) continue;
      if (s->repl_role() != kReplRoleNone) continue;  // replication links have repl-timeout
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

}  // namespace vessel::engine
