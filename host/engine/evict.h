// Access tracking and eviction at maxmemory, with Redis's policies and Redis's approximations.
//
// Every entry carries a 24-bit access stamp (Entry::access). Under an LRU or non-LFU policy it is
// Redis's LRU clock: unix seconds modulo 2^24 (idle times wrap after 194 days, as in Redis).
// Under an LFU policy it is Redis's LFU data: the last decrement time in minutes (16 bits) and a
// logarithmic access counter (8 bits, new keys start at 5, lfu-log-factor 10, decay of one per
// minute of lfu-decay-time 1). A command that reads or writes a key through the SDK stamps it;
// TYPE, TTL, EXISTS, OBJECT, SCAN and KEYS do not (as Redis's LOOKUP_NOTOUCH).
//
// Eviction runs before a command when used memory is over maxmemory. Each round picks a database
// (weighted by its keys), a random non-empty shard and, under that shard's exclusive lock,
// examines maxmemory-samples consecutive entries from a random bucket (only keys with an expiry
// for volatile-* policies), as Redis's dictGetSomeKeys does;
// rounds repeat until the estimate of used memory is under the limit. As in Redis, the samples
// go through a pool of the best candidates seen so far (per worker), and the pool's best is
// evicted if it still exists. It never holds two shard locks at once, so it cannot deadlock with
// commands. A command that asks to grow memory while it runs (Engine::MayGrow, vsl_api
// may_allocate) evicts the same way, skipping the shards it holds and only trying the others.
#ifndef VESSEL_HOST_ENGINE_EVICT_H_
#define VESSEL_HOST_ENGINE_EVICT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::engine {

enum class EvictionPolicy : int {
  kNoEviction,
  kAllKeysLru,
  kVolatileLru,
  kAllKeysLfu,
  kVolatileLfu,
  kAllKeysRandom,
  kVolatileRandom,
  kVolatileTtl,
};

// Redis's eviction pool: the best candidates seen so far by one worker, by ascending score
// (better victims last), carried from one eviction to the next. Touched only by its worker.
struct EvictionCandidate {
  uint64_t score;
  int db;
  uint32_t shard;
  std::string key;
};
struct EvictionPool {
  static constexpr size_t kSize = 16;
  int policy = -1;  // the policy the scores were computed for
  std::vector<EvictionCandidate> best;
  // Keeps the candidate when the pool has room or it beats the worst one.
  void Offer(uint64_t score, int db, uint32_t shard, std::string_view key);
};

// Redis's names, in the order of its CONFIG SET error message.
inline constexpr std::string_view kPolicyNames[] = {
    "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
    "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction",
};
bool ParsePolicy(std::string_view name, EvictionPolicy* out);
inline bool IsLfu(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}
inline bool IsVolatile(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}

// The stamp of a new key, and of an accessed key given its previous stamp.
uint32_t InitialAccess(EvictionPolicy p, int64_t now_ms);
uint32_t NextAccess(EvictionPolicy p, uint32_t prev, int64_t now_ms);
// The stamp RESTORE gives a key with IDLETIME seconds / FREQ counter (-1 when absent), as
// Redis's objectSetLRUOrLFU: FREQ under an LFU policy, IDLETIME otherwise, else `current`.
uint32_t RestoredAccess(EvictionPolicy p, int64_t idle_s, int64_t freq, int64_t now_ms,
                        uint32_t current);
// OBJECT IDLETIME (milliseconds) under an LRU stamp; OBJECT FREQ under an LFU stamp.
int64_t IdleMs(uint32_t access, int64_t now_ms);
int LfuFrequency(uint32_t access, int64_t now_ms);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_EVICT_H_
