// HashTable: the large-hash representation of the hashes module ("hashtable" to OBJECT ENCODING).
//
// Each field-value pair is one record (hash_entry.h: lengths, optional expiry, field, value) in
// its own host allocation, and one open-addressing array (linear probing, at most 3/4 full)
// holds a 64-bit slot per record: the record's address >> 3 in the low 45 bits and the top 19
// bits of the field's 64-bit hash above it, so a probe compares hash bits before it touches a
// record. For 1M short pairs that is about 14 bytes of table per field plus the record
// (Redis 7.0: a 24-byte dictEntry, two sds strings and an 8-byte bucket).
//
// The home slot of a field is the top `bits` bits of its hash, so the buckets of a table of any
// size are contiguous ranges of the hash space, and a bucket of a larger table lies inside one
// bucket of a smaller one. HSCAN's cursor is a position in the hash space; each step returns the
// records whose home bucket starts there (they sit in the probe run from that bucket to the
// next empty slot). Growth, shrinking and backward-shift deletion never move a record out of
// the run of its home bucket, so every field present for a whole iteration is returned at
// least once, whatever happens to the table between the steps (as Redis's reverse-binary cursor
// guarantees for its dict).
//
// Fields are hashed with vsl::HashBytes (seeded at random when the module loads: hash flooding).
// All memory comes from the host allocator. Not thread-safe: values are used under key locks.
#ifndef VESSEL_MODULES_HASHES_HASH_TABLE_H_
#define VESSEL_MODULES_HASHES_HASH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hash_entry.h"
#include "vessel/util.hpp"

namespace vessel::hashes {

class HashTable {
 public:
  static constexpr size_t kMaxSize = (size_t{1} << 32) - 2;
  // HSCAN cursors are positions in the hash space scaled to this many bits, so that they stay
  // below 2^53 (exact in every client's number type).
  static constexpr unsigned kCursorBits = 44;

  HashTable() = default;
  ~HashTable();
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  // Records held, including expired ones not yet removed.
  size_t size() const { return size_; }
  // The slot holding field f, or -1.
  ptrdiff_t Locate(std::string_view f) const { return Locate(f, vsl::HashBytes(f)); }
  const unsigned char* Find(std::string_view f) const {
    const ptrdiff_t s = Locate(f);
    return s < 0 ? nullptr : Record(slots_[s]);
  }
  // Adds a record for a field that is not in the table. Throws std::bad_alloc (unchanged).
  void Insert(std::string_view f, std::string_view v, int64_t expire);
  // Replaces the value and expiry of the record in `slot` (its field stays). Throws
  // std::bad_alloc with the record unchanged.
  void Assign(size_t slot, std::string_view v, int64_t expire);
  // Removes the record in `slot`.
  void EraseSlot(size_t slot);
  bool Erase(std::string_view f) {
    const ptrdiff_t s = Locate(f);
    if (s < 0) return false;
    EraseSlot(static_cast<size_t>(s));
    return true;
  }
  // Makes room for n records without growing again.
  void Reserve(size_t n);

  // Slot-wise iteration: slot_count() slots, At(i) is a record or nullptr. Valid until a change.
  size_t slot_count() const { return slots_ == nullptr ? 0 : size_t{1} << bits_; }
  const unsigned char* At(size_t i) const { return slots_[i] == 0 ? nullptr : Record(slots_[i]); }
  // A uniformly random record (size() > 0).
  const unsigned char* Random() const;

  // One HSCAN step: calls visit(record) for the records whose home bucket starts at `cursor`
  // (a kCursorBits-bit hash-space position); returns the next cursor, 0 after the last bucket.
  template <class F>
  uint64_t ScanBucket(uint64_t cursor, F&& visit) const;

  // Records with an expiry, and a lower bound of the earliest one (INT64_MAX when none).
  size_t expiring() const { return expiring_; }
  int64_t min_expire() const { return min_expire_; }
  // After a full pass over the records: the exact earliest expiry.
  void set_min_expire(int64_t v) { min_expire_ = v; }

  // Bytes owned (excluding the HashTable object itself), as the host allocator counts them.
  size_t MemUsage() const;
  HashTable* Clone() const;

 private:
  static constexpr unsigned kTagBits = 19;
  static constexpr unsigned kPtrBits = 45;
  static constexpr unsigned kMinBits = 3;

  static const unsigned char* Record(uint64_t s) {
    return reinterpret_cast<const unsigned char*>((s & ((uint64_t{1} << kPtrBits) - 1)) << 3);
  }
  static uint64_t MakeSlot(const unsigned char* rec, uint64_t hash) {
    return (hash >> (64 - kTagBits)) << kPtrBits | reinterpret_cast<uintptr_t>(rec) >> 3;
  }
  size_t mask() const { return (size_t{1} << bits_) - 1; }
  size_t Home(uint64_t hash) const { return static_cast<size_t>(hash >> (64 - bits_)); }
  // The home bucket of the record in slot value s at the current size.
  size_t HomeOf(uint64_t s) const;

  ptrdiff_t Locate(std::string_view f, uint64_t hash) const;
  void Place(uint64_t s, size_t home);
  void Rebuild(unsigned bits);
  void MaybeShrink();
  unsigned char* MakeRecord(std::string_view f, std::string_view v, int64_t expire);
  void FreeRecord(const unsigned char* rec);
  void NoteExpire(int64_t expire) {
    if (expire == 0) return;
    ++expiring_;
    if (expire < min_expire_) min_expire_ = expire;
  }

  uint64_t* slots_ = nullptr;
  uint32_t size_ = 0;
  uint32_t expiring_ = 0;
  unsigned bits_ = 0;
  int64_t min_expire_ = INT64_MAX;
  size_t heap_bytes_ = 0;  // usable bytes of the records
};

template <class F>
uint64_t HashTable::ScanBucket(uint64_t cursor, F&& visit) const {
  if (slots_ == nullptr) return 0;
  cursor &= (uint64_t{1} << kCursorBits) - 1;
  const size_t bucket = static_cast<size_t>(cursor >> (kCursorBits - bits_));
  for (size_t i = bucket, n = 0; slots_[i] != 0 && n <= mask(); i = (i + 1) & mask(), ++n) {
    if (HomeOf(slots_[i]) == bucket) visit(Record(slots_[i]));
  }
  const size_t next = bucket + 1;
  return next > mask() ? 0 : uint64_t{next} << (kCursorBits - bits_);
}

}  // namespace vessel::hashes

#endif  // VESSEL_MODULES_HASHES_HASH_TABLE_H_
