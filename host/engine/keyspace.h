// Databases, their shards and the locks that guard them.
//
// Locking rules (the heart of the concurrency design):
// The locks are the standard library's (pthread) so ThreadSanitizer sees them: Debian's abseil
// is not built with TSan annotations.
//  - Shard::mu guards everything in its Shard: the entry table, the values it points to, the
//    waiter and watcher maps and the counters. Read-only commands hold it shared, others
//    exclusive. Several shards are always locked in ascending global order (db * shards + shard),
//    which is what LockSet does, so multi-key commands cannot deadlock.
//  - WorldLock is held "shared" (its own slot) by a worker for every batch of work it does; an
//    operation over the whole keyspace (FLUSHALL, SWAPDB, a transaction containing one) takes
//    every slot and then touches shards without their locks. Slots keep workers from sharing a
//    cache line on the fast path.
//  - The *_hint atomics mirror counters for lock-free reads (DBSIZE, INFO, eviction sampling);
//    they are written under Shard::mu.
//  - An entry's access stamp (Entry::meta) is written by readers under a shared Shard::mu, so it
//    is a relaxed atomic; everything else in an entry changes only under an exclusive one.
//  - Eviction (evict.cc) runs before a command, holding no shard lock: it samples and deletes
//    under one shard's exclusive lock at a time.
//  - A running script holds its shards (or every slot) for as long as it runs. Nothing on a
//    worker's event loop waits for that: every lock wait there asks the scripting probe
//    (engine.h ScriptHold) and postpones or refuses the work instead (Engine::WhenScriptsChange).
//    The waits that remain are for ordinary commands and world operations, which are bounded.
#ifndef VESSEL_HOST_ENGINE_KEYSPACE_H_
#define VESSEL_HOST_ENGINE_KEYSPACE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "host/engine/entry_table.h"
#include "host/engine/persist_hooks.h"
#include "host/engine/strutil.h"

namespace vessel::engine {

class Session;
struct WatchState;

// A client blocked on a key (see blocking.cc). Lives in Shard::blocked, guarded by Shard::mu.
struct Waiter {
  uint64_t session_id;
  uint64_t block_seq;  // which blocking episode of the session this is
  int worker;
  uint16_t type_id;    // the value type the client waits for; 0 = any
  bool wake_pending;   // a retry is already posted to the client's worker
  uint32_t flags = 0;  // VSL_BLOCK_* (ABI 1.7): woken by every write, or when the key goes
  // VSL_BLOCK_EVERY_WRITE: a write came since its last retry; its retry is posted when the
  // retry of the waiter before it in the queue is done (Engine::WakeWaiters).
  bool wake_queued = false;
};

// Keys whose values have parts that expire on their own (vsl_type_desc.next_due), by the time the
// next part is due. Lives in Shard::due, guarded by Shard::mu.
struct PartsSchedule {
  std::set<std::pair<int64_t, std::string>> by_time;
  StrMap<int64_t> by_key;
  void Set(std::string_view key, int64_t due);  // due < 0 removes the key
  bool empty() const { return by_key.empty(); }
};

// Timed, so that lock waits can give up while a long-running script holds the shard (BUSY).
using ShardMutex = std::shared_timed_mutex;

struct alignas(64) Shard {
  mutable ShardMutex mu;
  EntryTable table;
  size_t volatile_keys = 0;    // entries with an expiry
  uint64_t expire_cursor = 0;  // active expiry scan position
  std::atomic<uint32_t> size_hint{0};
  std::atomic<uint32_t> volatile_hint{0};
  // Allocated on first use; most shards never have blocked or watching clients.
  std::unique_ptr<StrMap<std::deque<Waiter>>> blocked;
  std::unique_ptr<StrMap<std::vector<WatchState*>>> watched;
  std::unique_ptr<PartsSchedule> due;
  // The chunks (EntryTable::ChunkBit) a running background snapshot has not captured yet: all
  // of them when it starts, cleared as it captures them; whoever is about to change keys of a
  // pending chunk captures that chunk first (persist_hooks.h). Written under mu held exclusively
  // (or shared by the snapshot thread, which excludes writers), or under the world lock.
  std::atomic<uint64_t> snapshot_pending{0};
  // The earliest time in `due` (INT64_MAX when none), for the expiry cycle to skip the shard
  // without locking it; written under mu.
  std::atomic<int64_t> due_hint{INT64_MAX};
  // Cluster mode (ClusterHashing): the number of keys of each slot this shard holds, indexed by
  // slot & slot_mask (the shard's slots share their other bits). Written under mu held
  // exclusively; read without it (CLUSTER COUNTKEYSINSLOT), as the other hints.
  std::unique_ptr<std::atomic<uint32_t>[]> slot_keys;
  uint32_t slot_mask = 0;
  void CountSlotKey(uint64_t hash, int delta) {
    if (slot_keys == nullptr) return;
    std::atomic<uint32_t>& n = slot_keys[SlotOfHash(hash) & slot_mask];
    n.store(n.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  void SyncDueHint() {
    due_hint.store(due == nullptr || due->empty() ? INT64_MAX : due->by_time.begin()->first,
                   std::memory_order_relaxed);
  }

  void SyncHints() {
    size_hint.store(static_cast<uint32_t>(table.size()), std::memory_order_relaxed);
    volatile_hint.store(static_cast<uint32_t>(volatile_keys), std::memory_order_relaxed);
  }
};

class Database {
 public:
  Database(int index, uint32_t shard_bits);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int index() const { return index_; }
  uint32_t shard_count() const { return 1u << shard_bits_; }
  uint32_t ShardOf(uint64_t hash) const {
    return shard_bits_ == 0 ? 0 : static_cast<uint32_t>(hash >> (64 - shard_bits_));
  }
  Shard& shard(uint32_t i) { return shards_[i]; }
  const Shard& shard(uint32_t i) const { return shards_[i]; }
  // Cluster mode: the shards holding keys of `slot` (one, unless there are more shards than
  // slots), and the number of its keys, lock-free (exact when no writer runs; expired keys not
  // yet removed count, as in Redis).
  void ShardsOfSlot(uint32_t slot, uint32_t* first, uint32_t* last) const;
  uint64_t KeysInSlot(uint32_t slot) const;
  // Lock-free approximate counts (exact when no writer runs).
  uint64_t KeyCount() const;
  uint64_t VolatileCount() const;
  // Set once the database has held a key with an expiry (sticky): the active expiry cycle skips
  // databases that never had one without summing their shards.
  bool ever_volatile() const { return ever_volatile_.load(std::memory_order_relaxed); }
  void MarkVolatile() {
    if (!ever_volatile()) ever_volatile_.store(true, std::memory_order_relaxed);
  }
  // Set once a key of the database had expiring parts (sticky).
  bool ever_due() const { return ever_due_.load(std::memory_order_relaxed); }
  void MarkDue() {
    if (!ever_due()) ever_due_.store(true, std::memory_order_relaxed);
  }
  // Persistence hooks of the engine owning this database (null when absent): LockSet and the
  // other exclusive lockers call BeforeShardWrite for chunks a snapshot has not yet captured.
  PersistHooks* persist() const { return persist_; }
  void set_persist(PersistHooks* p) { persist_ = p; }
  // Captures the chunks of shard i whose keys the caller may change (all by default) first,
  // when a running snapshot still needs them. The shard is held exclusively by the caller. One
  // relaxed load when no snapshot runs.
  void BeforeWrite(uint32_t i, uint64_t chunks = ~uint64_t{0}) {
    if ((shards_[i].snapshot_pending.load(std::memory_order_relaxed) & chunks) != 0 &&
        persist_ != nullptr)
      persist_->BeforeShardWrite(*this, i, chunks);
  }
  // Set once the database has held a key (sticky): eviction skips databases never used.
  bool ever_used() const { return ever_used_.load(std::memory_order_relaxed); }
  void MarkUsed() {
    if (!ever_used()) ever_used_.store(true, std::memory_order_relaxed);
  }

 private:
  int index_;
  uint32_t shard_bits_;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<bool> ever_volatile_{false};
  std::atomic<bool> ever_used_{false};
  std::atomic<bool> ever_due_{false};
  PersistHooks* persist_ = nullptr;
};

// Per-worker reader slots of the world lock. Slot i is used only by worker i (the last slot by
// threads that are not workers: startup, tests).
class WorldLock {
 public:
  explicit WorldLock(int slots);
  int slots() const { return static_cast<int>(slots_.size()); }
  void LockShared(int slot) { slots_[slot]->mu.lock(); }
  // Waits for the slot unless give_up() is true when it is taken or turns true while it waits
  // (a script holds the world, see engine.h ScriptHold); false then, without the slot.
  bool LockSharedUnless(int slot, absl::FunctionRef<bool()> give_up);
  void UnlockShared(int slot) { slots_[slot]->mu.unlock(); }
  // Takes every slot in order. The caller must not hold its own slot. With give_up, stops
  // waiting (releasing what it took) and returns false once give_up() is true.
  void LockExclusive() { LockExclusiveImpl(nullptr); }
  bool LockExclusive(absl::FunctionRef<bool()> give_up) { return LockExclusiveImpl(&give_up); }
  void UnlockExclusive();

 private:
  bool LockExclusiveImpl(const absl::FunctionRef<bool()>* give_up);
  struct alignas(64) Slot {
    std::timed_mutex mu;
  };
  std::vector<std::unique_ptr<Slot>> slots_;
};

// The shards a command needs, deduplicated and sorted, locked in global order.
class LockSet {
 public:
  // `chunks`: the snapshot chunks of the keys the holder may change in that shard
  // (EntryTable::ChunkBit; all when unknown), captured first by a running snapshot.
  void Add(uint32_t db, uint32_t shard, bool exclusive, uint64_t chunks = ~uint64_t{0});
  // Locks every shard in ascending (db, shard) order. `dbs` resolves db indexes. With
  // give_up, a shard that is taken is not waited for once give_up(db, shard) is true (asked at
  // once, then between slices of waiting: a script holds it): everything taken is released and
  // Lock returns false.
  // (absl::FunctionRef: no allocation on the hot path.)
  bool Lock(const std::vector<std::unique_ptr<Database>>& dbs) { return LockImpl(dbs, nullptr); }
  bool Lock(const std::vector<std::unique_ptr<Database>>& dbs,
            absl::FunctionRef<bool(uint32_t db, uint32_t shard)> give_up) {
    return LockImpl(dbs, &give_up);
  }
  // Adds (db, shard) and locks it now if that does not wait (scripts reaching undeclared
  // keys); false, with nothing added, when it is taken. Only for a set already locked or empty.
  bool TryAdd(const std::vector<std::unique_ptr<Database>>& dbs, uint32_t db, uint32_t shard,
              bool exclusive);
  void Unlock();
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  // True when the set holds (db, shard), exclusively if asked.
  bool Holds(uint32_t db, uint32_t shard, bool exclusive) const {
    const uint64_t order = (uint64_t{db} << 32) | shard;
    for (const Item& it : items_)
      if (it.order == order) return it.exclusive || !exclusive;
    return false;
  }
  ~LockSet() { Unlock(); }

 private:
  bool LockImpl(const std::vector<std::unique_ptr<Database>>& dbs,
                const absl::FunctionRef<bool(uint32_t db, uint32_t shard)>* give_up);
  struct Item {
    uint64_t order;  // db << 32 | shard
    bool exclusive;
    ShardMutex* mu;
    uint64_t chunks;  // see Add
  };
  absl::InlinedVector<Item, 4> items_;
  bool locked_ = false;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_KEYSPACE_H_
