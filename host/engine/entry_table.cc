// The per-shard hash table: chained buckets, power-of-two sized, one allocation per key.
#include "host/engine/entry_table.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include "absl/hash/hash.h"
#include "host/cluster/slots.h"

namespace vessel::engine {

namespace {
constexpr size_t kMinBuckets = 4;
}

namespace {
// Written before the workers start (Engine's constructor); relaxed: only its own value matters.
std::atomic<bool> cluster_hashing{false};
}  // namespace

uint64_t EntryTable::BucketHash(std::string_view key) {
  return absl::Hash<absl::string_view>{}(absl::string_view(key.data(), key.size()));
}

uint64_t HashKeyInSlot(std::string_view key, uint32_t slot) {
  return (uint64_t{slot} << kSlotShift) |
         (EntryTable::BucketHash(key) & ((uint64_t{1} << kSlotShift) - 1));
}

uint64_t HashKey(std::string_view key) {
  if (!cluster_hashing.load(std::memory_order_relaxed)) return EntryTable::BucketHash(key);
  return HashKeyInSlot(key, cluster::KeySlot(key));
}

void SetClusterHashing(bool on) { cluster_hashing.store(on, std::memory_order_relaxed); }

bool ClusterHashing() { return cluster_hashing.load(std::memory_order_relaxed); }

Entry* Entry::Create(std::string_view key) {
  void* mem = std::malloc(sizeof(Entry) + key.size());
  if (mem == nullptr) throw std::bad_alloc();
  Entry* e = new (mem) Entry;
  e->next = nullptr;
  e->value = nullptr;
  e->expire_ms = 0;
  e->key_len = static_cast<uint32_t>(key.size());
  e->meta.store(0, std::memory_order_relaxed);
  if (!key.empty()) std::memcpy(e->key_data(), key.data(), key.size());
  return e;
}

void Entry::Destroy(Entry* e) { std::free(e); }

size_t Entry::AllocatedBytes() const { return malloc_usable_size(const_cast<Entry*>(this)); }

EntryTable::~EntryTable() {
  // Entries are owned by the shard, which drains the table first; only the array is freed here.
  std::free(buckets_);
}

EntryTable::EntryTable(EntryTable&& other) noexcept
    : buckets_(std::exchange(other.buckets_, nullptr)),
      mask_(std::exchange(other.mask_, 0)),
      size_(std::exchange(other.size_, 0)),
      generation_(other.generation_++) {}

EntryTable& EntryTable::operator=(EntryTable&& other) noexcept {
  if (this != &other) {
    std::free(buckets_);
    buckets_ = std::exchange(other.buckets_, nullptr);
    mask_ = std::exchange(other.mask_, 0);
    size_ = std::exchange(other.size_, 0);
    // Never a generation this table had: what was cached before the move is stale.
    generation_ = std::max(generation_, other.generation_) + 1;
    ++other.generation_;
  }
  return *this;
}

Entry* EntryTable::Find(std::string_view key, uint64_t hash) const {
  if (buckets_ == nullptr) return nullptr;
  for (Entry* e = buckets_[BucketOf(hash)]; e != nullptr; e = e->next) {
    if (e->key_len == key.size() && std::memcmp(e->key_data(), key.data(), key.size()) == 0)
      return e;
  }
  return nullptr;
}

void EntryTable::Insert(Entry* e, uint64_t hash) {
  if (buckets_ == nullptr) {
    Resize(kMinBuckets);
  } else if (size_ >= mask_ + 1) {
    Resize((mask_ + 1) * 2);
  }
  Entry** slot = &buckets_[BucketOf(hash)];
  e->next = *slot;
  *slot = e;
  ++size_;
  ++generation_;
}

Entry* EntryTable::Remove(std::string_view key, uint64_t hash) {
  if (buckets_ == nullptr) return nullptr;
  for (Entry** link = &buckets_[BucketOf(hash)]; *link != nullptr; link = &(*link)->next) {
    Entry* e = *link;
    if (e->key_len == key.size() && std::memcmp(e->key_data(), key.data(), key.size()) == 0) {
      *link = e->next;
      e->next = nullptr;
      --size_;
      ++generation_;
      // Shrink below 1/8 load, as Redis does below 1/10, keeping a small minimum.
      if (mask_ + 1 > kMinBuckets && size_ * 8 < mask_ + 1) Resize((mask_ + 1) / 2);
      return e;
    }
  }
  return nullptr;
}

void EntryTable::Replace(Entry* old, Entry* fresh, uint64_t hash) {
  for (Entry** link = &buckets_[BucketOf(hash)]; *link != nullptr; link = &(*link)->next) {
    if (*link == old) {
      fresh->next = old->next;
      *link = fresh;
      old->next = nullptr;
      ++generation_;
      return;
    }
  }
}

Entry* EntryTable::Random(uint64_t r) const {
  if (size_ == 0) return nullptr;
  // Probe buckets from a random start; then pick uniformly inside the chain found.
  size_t b = r & mask_;
  while (buckets_[b] == nullptr) b = (b + 1) & mask_;
  size_t len = 0;
  for (Entry* e = buckets_[b]; e != nullptr; e = e->next) ++len;
  size_t pick = (r >> 32) % len;
  Entry* e = buckets_[b];
  while (pick-- > 0) e = e->next;
  return e;
}

void EntryTable::Resize(size_t new_buckets) {
  auto** fresh = static_cast<Entry**>(std::calloc(new_buckets, sizeof(Entry*)));
  if (fresh == nullptr) throw std::bad_alloc();
  const size_t new_mask = new_buckets - 1;
  if (buckets_ != nullptr) {
    for (size_t b = 0; b <= mask_; ++b) {
      Entry* e = buckets_[b];
      while (e != nullptr) {
        Entry* next = e->next;
        Entry** slot = &fresh[BucketHash(e->key()) & new_mask];
        e->next = *slot;
        *slot = e;
        e = next;
      }
    }
    std::free(buckets_);
  }
  buckets_ = fresh;
  mask_ = new_mask;
}

}  // namespace vessel::engine
