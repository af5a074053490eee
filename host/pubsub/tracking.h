// Client-side caching (CLIENT TRACKING): which clients may hold which keys, and the invalidation
// messages sent when those keys change, as Redis 7.0's tracking.c.
//
// Locking rules:
//  - The tracking table (key -> the clients that read it, across all databases as in Redis) is
//    split in 256 shards by the key's hash, each under its own std::mutex. Remember runs after a
//    read-only command under the command's key locks, Take when the key is written (under the
//    key's exclusive shard lock): so a read that returned the old value is always recorded
//    before the write that must invalidate it looks. A shard mutex is never held while taking
//    any other lock.
//  - The BCAST prefix table is under prefixes_mu_ (shared when a key changes, exclusive when a
//    client enables or disables BCAST). The keys each worker slot changed during the current
//    event-loop turn wait in that slot's Pending, under its own mutex, and are sent once per turn
//    (Hub's before-flush step), one message per prefix, keys sorted.
//  - trackers_ (every tracking client, for FLUSHALL's null invalidation) is under trackers_mu_.
//  - A client's own flags live in its SessionState, on its worker: invalidations are routed to
//    the client's worker and checked there (tracking still on, BCAST or not, NOLOOP).
#ifndef VESSEL_HOST_PUBSUB_TRACKING_H_
#define VESSEL_HOST_PUBSUB_TRACKING_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "host/engine/engine.h"
#include "host/pubsub/hub.h"
#include "host/pubsub/state.h"

namespace vessel::pubsub {

struct Tracker {
  uint64_t id;
  int worker;
};

class Tracking {
 public:
  Tracking(engine::Engine* engine, Hub* hub);
  ~Tracking();

  // CLIENT TRACKING ON/OFF (on the client's worker): "" or the error line.
  std::string Enable(engine::Session* s, SessionState* st, const engine::TrackingOptions& o);
  void Disable(engine::Session* s, SessionState* st);
  // After a command of a tracking client, under its locks: remembers the keys it read.
  void Remember(const engine::CommandCtx* ctx, SessionState* st);
  // A key changed (under its exclusive shard lock).
  void KeyModified(std::string_view key, uint64_t hash);
  // FLUSHDB / FLUSHALL.
  void Flushed();
  // tracking-table-max-keys: forgets keys (invalidating them) while the table is over the limit.
  void EnforceLimit();
  // BCAST: sends the keys slot changed this turn (the Hub's before-flush step).
  void Broadcast(int slot);

  int64_t keys() const { return keys_.load(std::memory_order_relaxed); }
  int64_t items() const { return items_.load(std::memory_order_relaxed); }
  int64_t prefixes() const { return prefix_count_.load(std::memory_order_relaxed); }

 private:
  struct Shard;
  struct Pending;
  using BcastKeys = std::vector<std::pair<std::string, uint64_t>>;  // key, last modifier

  Shard& ShardOf(uint64_t hash);
  void Invalidate(std::string_view key, const std::vector<Tracker>& trackers, uint64_t modifier);
  // On the tracking client's worker.
  void DeliverKey(uint64_t id, uint64_t modifier, const std::string& key);
  void DeliverBcast(uint64_t id, const std::shared_ptr<const BcastKeys>& keys);
  void DeliverFlush(uint64_t id);
  // Sends payload (the RESP value: an array of keys, or null) to s or its redirection target.
  void Send(engine::Session* s, SessionState* st, const std::string& payload, bool hold);
  void SendTo(engine::Session* r, const std::string& payload, bool redirected, bool hold);
  void BrokenRedirect(engine::Session* s, SessionState* st);
  engine::Session* Local(uint64_t id);

  engine::Engine* engine_;
  Hub* hub_;
  static constexpr int kShards = 256;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<int64_t> keys_{0}, items_{0};
  std::atomic<uint32_t> evict_cursor_{0};
  std::atomic<int> evict_rounds_{0};  // consecutive calls that stayed over the limit
  int p_max_keys_;

  std::shared_mutex prefixes_mu_;
  std::map<std::string, std::vector<Tracker>> prefixes_;  // BCAST prefix -> its clients
  std::atomic<int64_t> prefix_count_{0};
  std::vector<std::unique_ptr<Pending>> pending_;  // by slot

  std::mutex trackers_mu_;
  absl::flat_hash_map<uint64_t, int> trackers_;  // tracking client id -> worker
};

}  // namespace vessel::pubsub

#endif  // VESSEL_HOST_PUBSUB_TRACKING_H_
