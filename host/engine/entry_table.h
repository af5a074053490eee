// The per-shard hash table: chained buckets, power-of-two sized, one allocation per key.
//
// Why not absl::flat_hash_map: SCAN must return every key present for the whole iteration even
// when the table grows or shrinks in between. Power-of-two chained buckets give that with Redis's
// reverse-binary cursor, and holding the key inside the entry costs one allocation per key.
// A shard is small (keys / shards), so resizing all at once costs microseconds.
#ifndef VESSEL_HOST_ENGINE_ENTRY_TABLE_H_
#define VESSEL_HOST_ENGINE_ENTRY_TABLE_H_

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
  uint16_t type_id;  // index in the type registry
  uint16_t reserved;

  char* key_data() { return reinterpret_cast<char*>(this + 1); }
  const char* key_data() const { return reinterpret_cast<const char*>(this + 1); }
  std::string_view key() const { return {key_data(), key_len}; }

  // Allocates an entry holding a copy of key; value and type are set by the caller.
  static Entry* Create(std::string_view key);
  static void Destroy(Entry* e);
  size_t AllocatedBytes() const;
};
static_assert(sizeof(Entry) == 32);

uint64_t HashKey(std::string_view key);

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
  template <typename F>
  void ForEach(F&& visit) const;
  // Unlinks every entry and hands each to fn (which takes ownership).
  template <typename F>
  void Drain(F&& fn);

 private:
  void Resize(size_t new_buckets);
  size_t BucketOf(uint64_t hash) const { return hash & mask_; }

  Entry** buckets_ = nullptr;
  size_t mask_ = 0;  // buckets - 1
  size_t size_ = 0;
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

template <typename F>
void EntryTable::ForEach(F&& visit) const {
  if (buckets_ == nullptr) return;
  for (size_t b = 0; b <= mask_; ++b)
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) visit(e);
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
}

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_ENTRY_TABLE_H_
