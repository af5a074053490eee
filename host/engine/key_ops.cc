// Key operations: lookup with lazy expiry, store, remove, TTLs, freeing values, flushing a
// database. Callers hold the key's shard lock (exclusive when writing).
#include "host/engine/engine.h"
#include "host/engine/lazy_free.h"
#include "host/engine/memory.h"

namespace vessel::engine {
Entry* Engine::Lookup(Database& db, Shard& shard, std::string_view key, uint64_t hash, int64_t now,
                      bool writable) {
  Entry* e = shard.table.Find(key, hash);
  if (e == nullptr || e->expire_ms == 0 || e->expire_ms > now) return e;
  if (repl_ != nullptr && repl_->IsReplica()) {
    // A replica expires nothing itself, as Redis: its master's DEL does. The master's commands
    // see the key; reads of other clients do not, and leave it in place.
    const CommandCtx* running = running_command();
    if (running != nullptr && running->session != nullptr &&
        running->session->repl_role() == kReplRoleMaster)
      return e;
    if (!writable) return nullptr;
  }
  // While writes are paused (CLIENT PAUSE, FAILOVER) the dataset stays as it is, as in Redis: the
  // key is hidden, and expires after the pause (or by the new master's DEL after a failover).
  if (DatasetPaused()) return nullptr;
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
  shard.CountSlotKey(hash, -1);
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
  return Store(db, shard, key, hash, type_id, value, keep_ttl, shard.table.Find(key, hash));
}

Entry* Engine::Store(Database& db, Shard& shard, std::string_view key, uint64_t hash,
                     uint16_t type_id, void* value, bool keep_ttl, Entry* e) {
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
    shard.CountSlotKey(hash, 1);
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
    if (shard.slot_keys != nullptr)
      for (uint32_t s = 0; s <= shard.slot_mask; ++s)
        shard.slot_keys[s].store(0, std::memory_order_relaxed);
    shard.volatile_keys = 0;
    shard.SyncHints();
    shard.due.reset();
    shard.SyncDueHint();
    // Clients parked until their key goes (VSL_BLOCK_KEY_GONE) learn that it went.
    if (shard.blocked != nullptr)
      for (auto& [key, waiters] : *shard.blocked) WakeWaiters(db, shard, key);
  }
}

}  // namespace vessel::engine
