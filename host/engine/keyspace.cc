// Databases, their shards and the locks that guard them.
#include "host/engine/keyspace.h"

#include <algorithm>
#include <chrono>

namespace vessel::engine {

Database::Database(int index, uint32_t shard_bits)
    : index_(index), shard_bits_(shard_bits), shards_(new Shard[size_t{1} << shard_bits]) {
  if (!ClusterHashing()) return;
  const uint32_t per_shard = shard_bits >= 14 ? 1 : (uint32_t{1} << (14 - shard_bits));
  for (uint32_t i = 0; i < shard_count(); ++i) {
    shards_[i].slot_keys = std::make_unique<std::atomic<uint32_t>[]>(per_shard);
    shards_[i].slot_mask = per_shard - 1;
  }
}

void Database::ShardsOfSlot(uint32_t slot, uint32_t* first, uint32_t* last) const {
  if (shard_bits_ <= 14) {
    *first = *last = slot >> (14 - shard_bits_);
  } else {
    *first = slot << (shard_bits_ - 14);
    *last = *first + (uint32_t{1} << (shard_bits_ - 14)) - 1;
  }
}

uint64_t Database::KeysInSlot(uint32_t slot) const {
  uint32_t first, last;
  ShardsOfSlot(slot, &first, &last);
  uint64_t n = 0;
  for (uint32_t i = first; i <= last; ++i) {
    const Shard& s = shards_[i];
    if (s.slot_keys != nullptr)
      n += s.slot_keys[slot & s.slot_mask].load(std::memory_order_relaxed);
  }
  return n;
}

Database::~Database() = default;

uint64_t Database::KeyCount() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count(); ++i)
    n += shards_[i].size_hint.load(std::memory_order_relaxed);
  return n;
}

uint64_t Database::VolatileCount() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count(); ++i)
    n += shards_[i].volatile_hint.load(std::memory_order_relaxed);
  return n;
}

WorldLock::WorldLock(int slots) {
  slots_.reserve(slots);
  for (int i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Slot>());
}

namespace {
constexpr auto kLockPoll = std::chrono::milliseconds(5);
// Deadlines on the system clock: libstdc++ then waits with pthread_*_timedlock, which
// ThreadSanitizer intercepts (the steady-clock variants use pthread_*_clocklock, which the
// toolchain's TSan may not know, hiding the lock from it). A clock jump only shortens or
// lengthens one polling slice.
std::chrono::system_clock::time_point PollDeadline() {
  return std::chrono::system_clock::now() + kLockPoll;
}
}  // namespace

bool WorldLock::LockSharedUnless(int slot, absl::FunctionRef<bool()> give_up) {
  std::timed_mutex& mu = slots_[slot]->mu;
  if (mu.try_lock()) return true;
  if (give_up()) return false;  // a script holds it: no wait at all
  while (!mu.try_lock_until(PollDeadline())) {
    if (give_up()) return false;
  }
  return true;
}

bool WorldLock::LockExclusiveImpl(const absl::FunctionRef<bool()>* give_up) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!give_up) {
      slots_[i]->mu.lock();
      continue;
    }
    if (slots_[i]->mu.try_lock()) continue;
    bool first = true;  // asked at once, then between slices of waiting
    while (first || !slots_[i]->mu.try_lock_until(PollDeadline())) {
      first = false;
      if ((*give_up)()) {
        while (i > 0) slots_[--i]->mu.unlock();
        return false;
      }
    }
  }
  return true;
}

void WorldLock::UnlockExclusive() {
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) (*it)->mu.unlock();
}

void LockSet::Add(uint32_t db, uint32_t shard, bool exclusive, uint64_t chunks) {
  const uint64_t order = (uint64_t{db} << 32) | shard;
  if (!exclusive) chunks = 0;
  for (Item& it : items_) {
    if (it.order == order) {
      it.exclusive |= exclusive;
      it.chunks |= chunks;
      return;
    }
  }
  items_.push_back({order, exclusive, nullptr, chunks});
}

bool LockSet::LockImpl(const std::vector<std::unique_ptr<Database>>& dbs,
                       const absl::FunctionRef<bool(uint32_t db, uint32_t shard)>* give_up) {
  if (items_.size() > 1) {
    std::sort(items_.begin(), items_.end(),
              [](const Item& a, const Item& b) { return a.order < b.order; });
  }
  for (size_t i = 0; i < items_.size(); ++i) {
    Item& it = items_[i];
    it.mu = &dbs[it.order >> 32]->shard(static_cast<uint32_t>(it.order)).mu;
    if (!give_up) {
      if (it.exclusive) {
        it.mu->lock();
      } else {
        it.mu->lock_shared();
      }
      continue;
    }
    if (it.exclusive ? it.mu->try_lock() : it.mu->try_lock_shared()) continue;  // no clock read
    // Asks at once, then between slices of waiting, whether a script holds the shard.
    bool first = true;
    while (first || (it.exclusive ? !it.mu->try_lock_until(PollDeadline())
                                  : !it.mu->try_lock_shared_until(PollDeadline()))) {
      first = false;
      if ((*give_up)(static_cast<uint32_t>(it.order >> 32), static_cast<uint32_t>(it.order))) {
        while (i > 0) {
          Item& held = items_[--i];
          held.exclusive ? held.mu->unlock() : held.mu->unlock_shared();
        }
        return false;
      }
    }
  }
  // A running background snapshot captures the chunks it has not reached before a writer changes
  // them (persist_hooks.h).
  for (const Item& it : items_)
    if (it.exclusive) dbs[it.order >> 32]->BeforeWrite(static_cast<uint32_t>(it.order), it.chunks);
  locked_ = true;
  return true;
}

bool LockSet::TryAdd(const std::vector<std::unique_ptr<Database>>& dbs, uint32_t db, uint32_t shard,
                     bool exclusive) {
  ShardMutex* mu = &dbs[db]->shard(shard).mu;
  if (exclusive ? !mu->try_lock() : !mu->try_lock_shared()) return false;
  if (exclusive) dbs[db]->BeforeWrite(shard);
  items_.push_back({(uint64_t{db} << 32) | shard, exclusive, mu, ~uint64_t{0}});
  locked_ = true;
  return true;
}

void LockSet::Unlock() {
  if (!locked_) return;
  for (auto it = items_.rbegin(); it != items_.rend(); ++it) {
    if (it->exclusive) {
      it->mu->unlock();
    } else {
      it->mu->unlock_shared();
    }
  }
  locked_ = false;
  items_.clear();
}

void PartsSchedule::Set(std::string_view key, int64_t due) {
  auto it = by_key.find(key);
  if (it != by_key.end()) {
    if (it->second == due) return;
    by_time.erase({it->second, std::string(key)});
    if (due < 0) {
      by_key.erase(it);
      return;
    }
    it->second = due;
  } else {
    if (due < 0) return;
    by_key.emplace(std::string(key), due);
  }
  by_time.emplace(due, std::string(key));
}

}  // namespace vessel::engine
