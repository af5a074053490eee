// Databases, their shards and the locks that guard them.
#include "host/engine/keyspace.h"

#include <algorithm>

namespace vessel::engine {

Database::Database(int index, uint32_t shard_bits)
    : index_(index), shard_bits_(shard_bits), shards_(new Shard[size_t{1} << shard_bits]) {}

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

void WorldLock::LockExclusive() {
  for (auto& s : slots_) s->mu.lock();
}

void WorldLock::UnlockExclusive() {
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) (*it)->mu.unlock();
}

void LockSet::Add(uint32_t db, uint32_t shard, bool exclusive) {
  const uint64_t order = (uint64_t{db} << 32) | shard;
  for (Item& it : items_) {
    if (it.order == order) {
      it.exclusive |= exclusive;
      return;
    }
  }
  items_.push_back({order, exclusive, nullptr});
}

void LockSet::Lock(const std::vector<std::unique_ptr<Database>>& dbs) {
  if (items_.size() > 1) {
    std::sort(items_.begin(), items_.end(),
              [](const Item& a, const Item& b) { return a.order < b.order; });
  }
  for (Item& it : items_) {
    Database& db = *dbs[it.order >> 32];
    it.mu = &db.shard(static_cast<uint32_t>(it.order)).mu;
    if (it.exclusive) {
      it.mu->lock();
      db.BeforeWrite(static_cast<uint32_t>(it.order));  // a running snapshot captures it first
    } else {
      it.mu->lock_shared();
    }
  }
  locked_ = true;
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
