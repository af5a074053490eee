// The per-shard hash table: chained buckets, power-of-two sized, one allocation per key.
//
// Why not absl::flat_hash_map: SCAN must return every key present for the whole iteration even
// when the table grows or shrinks in between. Power-of-two chained buckets give that with Redis's
// reverse-binary cursor, and holding the key inside the entry costs one allocation per key.
// A shard is small (keys / shards), so resizing all at once costs microseconds.
#ifndef VESSEL_HOST_ENGINE_ENTRY_TABLE_H_
#define VESSEL_HOST_ENGINE_ENTRY_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace vessel::engine {

// A key, its value and its expiry. The key bytes follow the header in the same allocation.
struct Entry {
  Entry* next;
  void* value;        // owned by the value's type
  int64_t expire_ms;  // absolute unix ms; 0 = no expiry
  uint32_t key_len;
  // The type id (index in the type registry, below kMaxTypes) in the low 8 bits and the access
  // stamp (24 bits, LRU clock or LFU data as Redis keeps them; see evict.h) above. Atomic because
  // readers stamp the access under a shared shard lock; the type changes only under an
  // exclusive one.
  std::atomic<uint32_t> meta;

  static constexpr uint32_t kMaxTypes = 256;
  uint16_t type_id() const { return meta.load(std::memory_order_relaxed) & 0xff; }
  void set_type_id(uint16_t id) {
    meta.store((meta.load(std::memory_order_relaxed) & ~0xffu) | id, std::memory_order_relaxed);
  }
  uint32_t access() const { return meta.load(std::memory_order_relaxed) >> 8; }
  // Concurrent stamps race benignly: each writes the same type bits, the last access wins.
  void set_access(uint32_t a) {
    meta.store((a << 8) | (meta.load(std::memory_order_relaxed) & 0xff), std::memory_order_relaxed);
  }

  char* key_data() { return reinterpret_cast<char*>(this + 1); }
  const char* key_data() const { return reinterpret_cast<const char*>(this + 1); }
  std::string_view key() const { return {key_data(), key_len}; }

  // Allocates an entry holding a copy of key; value and type are set by the caller.
  static Entry* Create(std::string_view key);
  static void Destroy(Entry* e);
  size_t AllocatedBytes() const;
};
static_assert(sizeof(Entry) == 32);

// A key's hash. In cluster mode (SetClusterHashing, once at startup before any database exists)
// it carries the key's Redis Cluster slot (CRC16 of its hash tag) in its top 14 bits: a
// database's shard, the top bits of the hash, then holds whole slots, the keys of one hash tag
// share a shard, and a shard counts its keys per slot. The low bits, which place the key in its
// table's buckets and snapshot chunk, are the key's own hash in both modes.
uint64_t HashKey(std::string_view key);
// HashKey(key) in cluster mode for a key whose slot is known (routing computed it).
uint64_t HashKeyInSlot(std::string_view key, uint32_t slot);
void SetClusterHashing(bool on);
bool ClusterHashing();
inline constexpr int kSlotShift = 50;
inline uint32_t SlotOfHash(uint64_t hash) { return static_cast<uint32_t>(hash >> kSlotShift); }

inline uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  return __builtin_bswap64(v);
}

// Not thread safe: the owning shard's lock protects it.
class EntryTable {
 public:
  EntryTable() = default;
  ~EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;
  EntryTable(EntryTable&& other) noexcept;
  EntryTable& operator=(EntryTable&& other) noexcept;

  size_t size() const { return size_; }
  size_t buckets() const { return mask_ + (buckets_ ? 1 : 0); }
  // Changes whenever an entry is linked or unlinked (or the table is replaced): an Entry* found
  // while the generation was g is still the key's live entry, and a key found absent is still
  // absent, for as long as the generation is g (CommandKey caches lookups this way).
  uint64_t generation() const { return generation_; }

  Entry* Find(std::string_view key, uint64_t hash) const;
  // Links e (whose key is not present) into the table; may grow it.
  void Insert(Entry* e, uint64_t hash);
  // Unlinks and returns the entry for key (nullptr when absent); may shrink the table. The
  // caller owns the returned entry.
  Entry* Remove(std::string_view key, uint64_t hash);
  // Replaces `old` (present) by `fresh` with the same key, in place.
  void Replace(Entry* old, Entry* fresh, uint64_t hash);

  // Visits the entries of the bucket at `cursor` (and, as Redis does, its expansion in a larger
  // table) and returns the next cursor; 0 when the iteration is complete.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& visit) const;
  // A random bucket walk for sampling; nullptr when empty. `r` is a random number.
  Entry* Random(uint64_t r) const;
  // The first entry satisfying pred in bucket order from a random bucket, looking at no more
  // than max_visits entries; nullptr when none was found.
  template <typename Pred>
  Entry* RandomMatching(uint64_t r, size_t max_visits, Pred&& pred) const;
  template <typename F>
  void ForEach(F&& visit) const;
  // The low bits of HashKey(key) (all a bucket and a chunk need), without the slot.
  static uint64_t BucketHash(std::string_view key);
  // A key's snapshot chunk: the low 6 bits of its hash. With 64 buckets or more they are the low
  // bits of its bucket, whatever the table's size, so a chunk is found without hashing.
  static constexpr int kChunkBits = 6;
  static uint64_t ChunkBit(uint64_t hash) { return uint64_t{1} << (hash & 63); }
  // Visits the entries whose chunk bit is in `chunks`.
  template <typename F>
  void ForEachInChunks(uint64_t chunks, F&& visit) const;
  // Unlinks every entry and hands each to fn (which takes ownership).
  template <typename F>
  void Drain(F&& fn);

 private:
  void Resize(size_t new_buckets);
  size_t BucketOf(uint64_t hash) const { return hash & mask_; }

  Entry** buckets_ = nullptr;
  size_t mask_ = 0;  // buckets - 1
  size_t size_ = 0;
  uint64_t generation_ = 1;  // 0 is never a generation: a cache of none
};

template <typename F>
uint64_t EntryTable::Scan(uint64_t cursor, F&& visit) const {
  if (size_ == 0) return 0;
  for (const Entry* e = buckets_[cursor & mask_]; e != nullptr; e = e->next) visit(e);
  // Increment the cursor from its high bit down over the mask bits (Redis dictScan), so that
  // buckets already visited stay visited when the table grows or shrinks.
  cursor |= ~static_cast<uint64_t>(mask_);
  return ReverseBits(ReverseBits(cursor) + 1);
}

template <typename Pred>
Entry* EntryTable::RandomMatching(uint64_t r, size_t max_visits, Pred&& pred) const {
  if (size_ == 0) return nullptr;
  size_t visits = 0;
  for (size_t b = r & mask_, n = 0; n <= mask_ && visits < max_visits; b = (b + 1) & mask_, ++n) {
    for (Entry* e = buckets_[b]; e != nullptr && visits < max_visits; e = e->next, ++visits) {
      if (pred(*e)) return e;
    }
  }
  return nullptr;
}

template <typename F>
void EntryTable::ForEach(F&& visit) const {
  if (buckets_ == nullptr) return;
  for (size_t b = 0; b <= mask_; ++b)
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) visit(e);
}

template <typename F>
void EntryTable::ForEachInChunks(uint64_t chunks, F&& visit) const {
  if (buckets_ == nullptr || chunks == 0) return;
  if (chunks == ~uint64_t{0}) return ForEach(visit);
  if (mask_ >= 63) {
    for (size_t b = 0; b <= mask_; ++b) {
      if (!((chunks >> (b & 63)) & 1)) continue;
      for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) visit(e);
    }
    return;
  }
  for (size_t b = 0; b <= mask_; ++b)  // a small table: buckets mix chunks
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next)
      if (chunks & ChunkBit(BucketHash(e->key()))) visit(e);
}

template <typename F>
void EntryTable::Drain(F&& fn) {
  if (buckets_ == nullptr) return;
  for (size_t b = 0; b <= mask_; ++b) {
    Entry* e = buckets_[b];
    buckets_[b] = nullptr;
    while (e != nullptr) {
      Entry* next = e->next;
      fn(e);
      e = next;
    }
  }
  size_ = 0;
  ++generation_;
}

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_ENTRY_TABLE_H_
