// Access stamps and eviction at maxmemory (see evict.h).
#include "host/engine/evict.h"

#include <algorithm>
#include <random>
#include <string>

#include "absl/container/inlined_vector.h"
#include "host/engine/engine.h"
#include "host/engine/memory.h"
#include "host/engine/strutil.h"

namespace vessel::engine {

namespace {

constexpr uint32_t kLruMax = (1u << 24) - 1;
constexpr uint32_t kLfuInit = 5;
constexpr int kLfuLogFactor = 10;
constexpr int kLfuDecayMinutes = 1;

uint32_t LruClock(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000) & kLruMax; }
uint32_t Minutes(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 60000) & 0xffff; }

// The counter after the decay due since its last decrement time (Redis's LFUDecrAndReturn).
uint32_t LfuDecayed(uint32_t access, int64_t now_ms) {
  const uint32_t ldt = access >> 8;
  const uint32_t counter = access & 0xff;
  const uint32_t now = Minutes(now_ms);
  const uint32_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
  const uint32_t periods = elapsed / kLfuDecayMinutes;
  return periods > counter ? 0 : counter - periods;
}

// One access: the counter grows with probability 1 / ((counter - 5) * factor + 1).
uint32_t LfuIncremented(uint32_t counter) {
  if (counter == 255) return counter;
  thread_local std::minstd_rand rng(std::random_device{}());
  const double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  const double base = counter > kLfuInit ? counter - kLfuInit : 0;
  return r < 1.0 / (base * kLfuLogFactor + 1) ? counter + 1 : counter;
}

}  // namespace

void EvictionPool::Offer(uint64_t score, int db, uint32_t shard, std::string_view key) {
  if (best.size() == kSize && score <= best.front().score) return;
  for (const EvictionCandidate& c : best) {
    if (c.db == db && c.key == key) return;  // already pooled
  }
  auto at = std::upper_bound(best.begin(), best.end(), score,
                             [](uint64_t s, const EvictionCandidate& c) { return s < c.score; });
  best.insert(at, EvictionCandidate{score, db, shard, std::string(key)});
  if (best.size() > kSize) best.erase(best.begin());
}

bool ParsePolicy(std::string_view name, EvictionPolicy* out) {
  static constexpr EvictionPolicy kByName[] = {
      EvictionPolicy::kVolatileLru,   EvictionPolicy::kVolatileLfu, EvictionPolicy::kVolatileRandom,
      EvictionPolicy::kVolatileTtl,   EvictionPolicy::kAllKeysLru,  EvictionPolicy::kAllKeysLfu,
      EvictionPolicy::kAllKeysRandom, EvictionPolicy::kNoEviction,
  };
  for (size_t i = 0; i < std::size(kPolicyNames); ++i) {
    if (EqualsIgnoreCase(name, kPolicyNames[i])) {
      *out = kByName[i];
      return true;
    }
  }
  return false;
}

uint32_t InitialAccess(EvictionPolicy p, int64_t now_ms) {
  return IsLfu(p) ? (Minutes(now_ms) << 8) | kLfuInit : LruClock(now_ms);
}

uint32_t NextAccess(EvictionPolicy p, uint32_t prev, int64_t now_ms) {
  if (!IsLfu(p)) return LruClock(now_ms);
  return (Minutes(now_ms) << 8) | LfuIncremented(LfuDecayed(prev, now_ms));
}

uint32_t RestoredAccess(EvictionPolicy p, int64_t idle_s, int64_t freq, int64_t now_ms,
                        uint32_t current) {
  if (IsLfu(p)) return freq >= 0 ? (Minutes(now_ms) << 8) | static_cast<uint32_t>(freq) : current;
  if (idle_s < 0) return current;
  const int64_t clock = LruClock(now_ms);
  const int64_t idle = std::min<int64_t>(idle_s, kLruMax);
  return static_cast<uint32_t>(clock >= idle ? clock - idle : clock + kLruMax - idle);
}

int64_t IdleMs(uint32_t access, int64_t now_ms) {
  const uint32_t clock = LruClock(now_ms);
  const uint32_t lru = access & kLruMax;
  const uint32_t idle = clock >= lru ? clock - lru : kLruMax - lru + clock;
  return int64_t{idle} * 1000;
}

int LfuFrequency(uint32_t access, int64_t now_ms) {
  return static_cast<int>(LfuDecayed(access, now_ms));
}

// ---- eviction ----

namespace {

uint64_t Score(EvictionPolicy p, const Entry& e, int64_t now_ms, uint64_t random) {
  switch (p) {
    case EvictionPolicy::kAllKeysLru:
    case EvictionPolicy::kVolatileLru:
      return static_cast<uint64_t>(IdleMs(e.access(), now_ms));
    case EvictionPolicy::kAllKeysLfu:
    case EvictionPolicy::kVolatileLfu:
      return 255 - static_cast<uint64_t>(LfuDecayed(e.access(), now_ms));
    case EvictionPolicy::kVolatileTtl:
      return UINT64_MAX - static_cast<uint64_t>(e.expire_ms);  // the soonest expiry first
    default:
      return random;
  }
}

}  // namespace

// Reads the allocator's figure at most once a millisecond (jemalloc's statistics cost ~100k
// instructions), or now when `fresh`.
void Engine::RefreshUsedMemoryIfStale(bool fresh) {
  const int64_t now = Now();
  int64_t last = used_refreshed_ms_.load(std::memory_order_relaxed);
  if (fresh) {
    used_refreshed_ms_.store(now, std::memory_order_relaxed);
    RefreshUsedMemory();
  } else if (now > last && used_refreshed_ms_.compare_exchange_strong(last, now)) {
    RefreshUsedMemory();
  }
}

bool Engine::EvictToLimit() {
  const int64_t max = settings_.maxmemory.load(std::memory_order_relaxed);
  if (max <= 0) return true;
  // Nothing is evicted while writes are paused (the dataset stays as it is), and nothing is
  // refused for memory then either, as in Redis.
  if (DatasetPaused()) return true;
  RefreshUsedMemoryIfStale(false);
  const int64_t used = used_memory_.load(std::memory_order_relaxed);
  if (used <= max) return true;
  return EvictDownTo(max, used, nullptr);
}

bool Engine::MayGrow(const CommandCtx& ctx, uint64_t bytes) {
  const int64_t max = settings_.maxmemory.load(std::memory_order_relaxed);
  if (max <= 0 || bytes == 0) return true;
  if (bytes > static_cast<uint64_t>(max)) return false;  // evicting everything would not do
  const auto need = static_cast<int64_t>(bytes);
  // A large request reads the allocator now: a figure from a moment ago misses what the last
  // commands allocated, and one such request costs far more than the reading.
  constexpr int64_t kFreshReadBytes = int64_t{1} << 20;
  RefreshUsedMemoryIfStale(need >= kFreshReadBytes);
  int64_t used = used_memory_.load(std::memory_order_relaxed);
  if (used + need > max) {
    if (eviction_policy() == EvictionPolicy::kNoEviction) return false;
    EvictDownTo(max - need, used, &ctx);
    used = used_memory_.load(std::memory_order_relaxed);
    if (used + need > max) return false;
  }
  // Counted as used until the next reading, so that requests in quick succession add up.
  used_memory_.fetch_add(need, std::memory_order_relaxed);
  return true;
}

// True when the running command holds shard (db, shard) or declared a key in it: its values may
// be in use by the handler, and locking it again would deadlock.
bool Engine::HeldBy(const CommandCtx& ctx, int db, uint32_t shard) const {
  const Shard* s = &dbs_[db]->shard(shard);
  for (const CommandKey& k : ctx.keys)
    if (k.shard == s) return true;
  // With the whole keyspace held no one else holds a shard lock; but a transaction holding it
  // keeps every key, or its later commands would see a key vanish midway.
  if (ctx.world) return ctx.in_exec;
  const auto d = static_cast<uint32_t>(db);
  return (ctx.locks != nullptr && ctx.locks->Holds(d, shard, false)) ||
         (ctx.extra_locks != nullptr && ctx.extra_locks->Holds(d, shard, false));
}

// Evicts by the policy until this call's estimate of used memory (starting at `used`) is at most
// `target`. With `running` (a command asking to grow, holding its shard locks), shards that
// command holds or declared are skipped and others are only tried, never waited for.
bool Engine::EvictDownTo(int64_t target, int64_t used, const CommandCtx* running) {
  const int64_t now = Now();
  const auto policy =
      static_cast<EvictionPolicy>(settings_.eviction_policy.load(std::memory_order_relaxed));
  if (policy == EvictionPolicy::kNoEviction) return false;
  const bool volatile_only = IsVolatile(policy);
  const int64_t samples = std::max<int64_t>(1, settings_.maxmemory_samples.load());
  std::mt19937_64& rng = current_worker().rng;

  // The databases to sample from, weighted by their (approximate) number of candidates. Most
  // deployments use one database: then counting its keys (a load per shard) is not needed.
  absl::InlinedVector<std::pair<int, uint64_t>, 4> weights;
  for (const auto& db : dbs_) {
    if (db->ever_used() && (!volatile_only || db->ever_volatile()))
      weights.push_back({db->index(), 1});
  }
  uint64_t total = weights.size();
  if (weights.size() > 1) {
    total = 0;
    for (auto& [index, n] : weights) {
      n = volatile_only ? dbs_[index]->VolatileCount() : dbs_[index]->KeyCount();
      total += n;
    }
  }
  if (total == 0) return false;

  // `current` is this call's view of used memory: the figure read above minus the size of what
  // it evicted, re-read every few evictions (the smaller of the two counts: jemalloc's figure
  // lags behind frees kept in thread caches, the estimate misses what other threads allocate).
  int64_t current = used;
  uint64_t evicted = 0;
  bool stuck = false;
  EvictionPool& pool = current_worker().eviction_pool;
  if (pool.policy != static_cast<int>(policy)) {
    pool.best.clear();  // scores of another policy mean nothing now
    pool.policy = static_cast<int>(policy);
  }
  // Locks a shard to sample (shared) or evict from (exclusive): before a command, unless a
  // running script holds it; from inside one (`running`), only a shard it does not hold, and
  // only when that lock is free now.
  auto lock_for_eviction = [&](LockSet* set, int db, uint32_t si, bool exclusive, uint64_t chunks) {
    if (running == nullptr) {
      set->Add(static_cast<uint32_t>(db), si, exclusive, chunks);
      return LockUnlessScript(set);
    }
    return !HeldBy(*running, db, si) && set->TryAdd(dbs_, static_cast<uint32_t>(db), si, exclusive);
  };
  constexpr int64_t kMaxVisits = 256;  // per shard: volatile keys may be rare among many
  constexpr int kMaxRounds = 1024;     // bounds the latency one command pays
  constexpr int kRefreshEvery = 32;
  for (int round = 0; current > target && round < kMaxRounds; ++round) {
    uint64_t pick = rng() % total;
    size_t w = 0;
    while (pick >= weights[w].second) pick -= weights[w++].second;  // zero weights are skipped
    Database& db = *dbs_[weights[w].first];
    // As Redis's dictGetSomeKeys: the candidates are consecutive entries from a random bucket of
    // a random shard (hash-partitioned, so a random sample), continuing into the next shards
    // when one holds fewer, each examined under its shard's shared lock.
    uint32_t si = static_cast<uint32_t>(rng() % db.shard_count());
    int64_t found = 0;
    for (uint32_t n = 0; n < db.shard_count() && found < samples;
         ++n, si = (si + 1) % db.shard_count()) {
      Shard& s = db.shard(si);
      if ((volatile_only ? s.volatile_hint : s.size_hint).load(std::memory_order_relaxed) == 0)
        continue;
      LockSet lock;
      if (!lock_for_eviction(&lock, db.index(), si, /*exclusive=*/false, 0)) continue;
      s.table.RandomMatching(rng(), std::max(kMaxVisits, samples), [&](const Entry& e) {
        if (volatile_only && e.expire_ms == 0) return false;
        pool.Offer(Score(policy, e, now, rng()), db.index(), si, e.key());
        return ++found >= samples;
      });
    }
    if (pool.best.empty()) {
      stuck = true;  // no candidate (e.g. no key with an expiry under volatile-*)
      break;
    }
    const EvictionCandidate victim = std::move(pool.best.back());
    pool.best.pop_back();
    Database& vdb = *dbs_[victim.db];
    Shard& shard = vdb.shard(victim.shard);
    const uint64_t hash = HashKey(victim.key);
    LockSet lock;  // a snapshot captures the key's chunk first
    if (!lock_for_eviction(&lock, victim.db, victim.shard, true, EntryTable::ChunkBit(hash)))
      continue;  // the next candidate
    Entry* best = shard.table.Find(victim.key, hash);
    if (best == nullptr) continue;  // deleted since it was pooled: the next round tries again
    int64_t bytes = static_cast<int64_t>(best->AllocatedBytes());
    if (const vsl_type* t = registry_.TypeById(best->type_id())) {
      memory::ModuleScope scope(t->module->id);
      bytes += static_cast<int64_t>(t->desc.mem_usage(nullptr, best->value));
    }
    if (persist_ != nullptr) persist_->KeyDeleted(victim.db, victim.key);
    {
      HostChanges eviction;  // not a change of the running command (Redis's dirty ignores it)
      Remove(vdb, shard, best, hash, RemoveMode::kFree);
    }
    NotifyKeyspaceEvent(kNotifyEvicted, "evicted", victim.key, victim.db);
    lock.Unlock();
    current -= bytes;
    if (++evicted % kRefreshEvery == 0) {
      RefreshUsedMemory();
      current = std::min(current, used_memory_.load(std::memory_order_relaxed));
    }
  }
  if (evicted > 0) {
    WorkerStats& st = *stats_[current_worker().index];
    st.Add(st.evicted_keys, evicted);
    used_memory_.store(current, std::memory_order_relaxed);  // until the next refresh
  }
  // As Redis: a command is refused only when nothing at all could be evicted, not when eviction
  // is still under way (the next commands continue it).
  return !stuck || evicted > 0;
}

}  // namespace vessel::engine
