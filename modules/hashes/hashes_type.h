// The hash value type of the hashes module: two representations behind one tagged pointer, the
// read helpers every command uses, and the HashEditor through which every write goes.
//
// Representations (Redis 7.0's, with its default thresholds hash-max-listpack-entries = 512 and
// hash-max-listpack-value = 64, read through ctx.Setting at each write that may convert):
//   - compact ("listpack"): one block, an 8-byte header {used bytes, count, flags} followed by
//     the entries (hash_entry.h) in insertion order; linear search. The stored value *is* the
//     block, so a small hash costs its block and nothing else.
//   - hashtable: HashTable (hash_table.h), beyond either limit. A hash never converts back, as in
//     Redis.
// The stored pointer is tagged: bit 0 set means a HashTable. A block is never realloc'ed while
// it is stored (the host would free the old pointer): the HashEditor moves it to a new block and
// stores that one (key_set with KEEPTTL), and the host frees the old one.
//
// Field expiry (Redis 7.4's HEXPIRE family): an entry carries an absolute expiry only when it
// has one. Reads never change a value (they run under a shared lock): they skip expired
// entries. Writes remove expired entries first (HashEditor's constructor); a hash left empty is
// deleted. ExpireDue/NextFieldExpiry are what an active-expiry cycle would call.
#ifndef VESSEL_MODULES_HASHES_HASHES_TYPE_H_
#define VESSEL_MODULES_HASHES_HASHES_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash_entry.h"
#include "hash_table.h"
#include "vessel/module.hpp"

namespace vessel::hashes {

// The hash type's handle (registered in hashes.cc's init).
const vsl_type* HashType();
bool RegisterHashType(vsl_module* m);

// The compact block.
struct HashPack {
  uint32_t used;   // bytes of entries after the header
  uint16_t count;  // entries, expired ones included
  uint8_t flags;   // kPackExpiry | kPackEx
  uint8_t reserved;
  unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
  const unsigned char* data() const { return reinterpret_cast<const unsigned char*>(this + 1); }
};
static_assert(sizeof(HashPack) == 8);
inline constexpr uint8_t kPackExpiry = 1;  // some entry may carry an expiry
inline constexpr uint8_t kPackEx = 2;      // a field-expiry command touched it ("listpackex")
inline constexpr size_t kMaxPackEntries = UINT16_MAX;
inline constexpr size_t kMaxPackBytes = size_t{1} << 30;  // Redis's listpack safety limit

// Redis's defaults for the conversion thresholds.
inline constexpr int64_t kDefaultMaxEntries = 512;  // Redis 7.0's compiled default
inline constexpr int64_t kDefaultMaxValue = 64;

// A read-only view of a stored hash (a tagged pointer).
class HashView {
 public:
  explicit HashView(const void* v) : raw_(reinterpret_cast<uintptr_t>(v)) {}
  bool is_table() const { return (raw_ & 1) != 0; }
  const HashPack* pack() const { return reinterpret_cast<const HashPack*>(raw_); }
  const HashTable* table() const {
    return reinterpret_cast<const HashTable*>(raw_ & ~uintptr_t{1});
  }

  // Entries held, expired ones included.
  size_t raw_size() const { return is_table() ? table()->size() : pack()->count; }
  // True when some entry may have expired by `now` (reads must filter).
  bool MayHaveExpired(int64_t now) const;
  // Live fields at `now`.
  size_t Size(int64_t now) const;
  // The live entry of field f.
  bool Find(std::string_view f, int64_t now, HashEntry* out) const;
  // Calls fn(const HashEntry&) for every entry, live or not, in storage order.
  template <class F>
  void ForEachRaw(F&& fn) const;
  // Calls fn(const HashEntry&) for every live entry.
  template <class F>
  void ForEach(int64_t now, F&& fn) const {
    const bool filter = MayHaveExpired(now);
    ForEachRaw([&](const HashEntry& e) {
      if (!filter || Alive(e, now)) fn(e);
    });
  }
  // When to look again for expired fields: -1 when no entry has an expiry, else the earliest
  // expiry (exact for a compact hash; for a table a lower bound, exact after ExpireDue).
  int64_t NextFieldExpiry() const;
  const char* Encoding() const;

 private:
  uintptr_t raw_;
};

template <class F>
void HashView::ForEachRaw(F&& fn) const {
  if (is_table()) {
    const HashTable* t = table();
    for (size_t i = 0; i < t->slot_count(); ++i) {
      if (const unsigned char* rec = t->At(i)) fn(GetEntry(rec));
    }
    return;
  }
  const HashPack* p = pack();
  for (size_t off = 0; off < p->used;) {
    const HashEntry e = GetEntry(p->data() + off);
    fn(e);
    off += e.size;
  }
}

// The live entries of a hash, for positional access (HRANDFIELD). Collects them once.
class FieldSnapshot {
 public:
  FieldSnapshot(HashView h, int64_t now);
  size_t size() const { return entries_.size(); }
  const HashEntry& operator[](size_t i) const { return entries_[i]; }

 private:
  std::vector<HashEntry, vsl::Allocator<HashEntry>> entries_;
};

// Conversion thresholds, as the host's settings say at the time of the write.
struct HashLimits {
  size_t max_entries = kDefaultMaxEntries;
  size_t max_value = kDefaultMaxValue;
};
HashLimits ReadLimits(const vsl::Ctx& ctx);

// Conditions of HEXPIRE and friends.
enum class ExpireCond { kNone, kNx, kXx, kGt, kLt };
// Per-field results of HEXPIRE (Redis's codes) and HPERSIST.
inline constexpr int kNoField = -2;
inline constexpr int kNoExpiry = -1;
inline constexpr int kCondNotMet = 0;
inline constexpr int kUpdated = 1;
inline constexpr int kDeleted = 2;

// Every write to a hash goes through one HashEditor: it opens the key's hash (or none), removes
// expired fields, applies changes (moving a compact block or converting it to a table when
// needed), and Commit() stores a new hash, deletes an emptied one or reports the change. A view
// returned by Get is valid until the next change.
class HashEditor {
 public:
  // Throws WRONGTYPE. `now` is the command's clock (expired fields go first).
  HashEditor(vsl::Ctx& ctx, vsl::Key key);
  ~HashEditor();
  HashEditor(const HashEditor&) = delete;
  HashEditor& operator=(const HashEditor&) = delete;

  bool exists() const { return v_ != nullptr && HashView(v_).raw_size() > 0; }
  size_t size() const { return v_ == nullptr ? 0 : HashView(v_).raw_size(); }
  HashView view() const { return HashView(v_); }
  bool Get(std::string_view f, HashEntry* out) const;

  // Converts a compact hash to a table when one of args is longer than the value limit, and
  // makes room for them (Redis's hashTypeTryConversion before HSET).
  void Prepare(const vsl::Ctx& ctx, int first, int last);
  // Sets f to v; keep_expiry keeps an existing field's expiry, else it goes. True when f is new.
  bool Set(std::string_view f, std::string_view v, bool keep_expiry = false);
  bool Delete(std::string_view f);
  // HEXPIRE on one field: kNoField, kCondNotMet, kUpdated or kDeleted (at <= now).
  int SetExpire(std::string_view f, int64_t at, ExpireCond cond);
  // HPERSIST on one field: kNoField, kNoExpiry or kUpdated.
  int Persist(std::string_view f);
  // A field-expiry command touched the hash: a compact one reports "listpackex" from now on.
  void MarkExpiryUsed();

  // Stores, deletes or reports the change. Call once, after the last change. True when the hash
  // was left empty and its key deleted (the caller fires "del" after its own event).
  bool Commit();

 private:
  void Open();
  void PurgeExpired();
  void Replace(void* fresh);
  void ToTable(size_t reserve);
  void EnsureRoom(size_t extra);
  void MaybeConvert(std::string_view f, std::string_view v);
  // Writes entry (f, v, expire) over the entry at off (old_size bytes) of the compact block.
  void PackAssign(size_t off, size_t old_size, std::string_view f, std::string_view v,
                  int64_t expire);
  void PackRemove(size_t off, size_t size);
  ptrdiff_t PackFind(std::string_view f, HashEntry* out) const;
  HashPack* pack() const { return static_cast<HashPack*>(v_); }
  HashTable* table() const {
    return reinterpret_cast<HashTable*>(reinterpret_cast<uintptr_t>(v_) & ~uintptr_t{1});
  }
  bool is_table() const { return (reinterpret_cast<uintptr_t>(v_) & 1) != 0; }

  vsl::Ctx& ctx_;
  vsl::Key key_;
  void* v_ = nullptr;
  bool stored_ = false;   // v_ is the key's value
  bool changed_ = false;  // changed in place since opened
  bool limits_read_ = false;
  HashLimits limits_;
  int64_t now_;
};

// The value callbacks, on a stored value.
size_t MemUsage(const void* v);
void* Clone(const void* v);
void FreeHash(void* v);

// Active field expiry (the type's expire_due, ABI 1.3): removes in place the fields whose expiry
// is before now_ms (the value never moves) and returns how many. A hash left without fields is
// then deleted by the host (HashView::raw_size() == 0). The host schedules the next call with
// HashView::NextFieldExpiry() (the type's next_due).
size_t ExpireDue(void* v, int64_t now_ms);

// ---- numbers, as Redis formats and parses them ----

// Redis's string2ld: strtold over all the bytes (no embedded NUL), no leading space, not NaN.
// Redis's ld2string(LD_STR_HUMAN): "%.17Lf" without trailing zeros; "-0" is "0".

}  // namespace vessel::hashes

#endif  // VESSEL_MODULES_HASHES_HASHES_TYPE_H_
