// The multi_index value type: records (field -> value) stored by id, and the declared indexes
// kept in step with them; the pure operations (Op*) the MI.* commands build on.
//
// Representation:
//   - records: an absl::flat_hash_map id -> one block per record, [u32 field count][u32 payload
//     bytes] then per field [u32 name length][u32 value length][name][value], fields in the order
//     they were first set.
//   - HASH index: an absl::flat_hash_set of buckets {value, ids}; the value is a view into one of
//     the bucket's records (values are not copied), ids are one inline id or an absl::btree_set.
//   - ORDERED index: an absl::btree_set of (value, id), the value a view into the entry's own
//     record compared as bytes (memcmp order, as ZRANGEBYLEX), or of (double, id) when NUMERIC.
//   - Every allocation a value owns goes through the host allocator and is counted in the
//     value's Accounting, so MemUsage is exact and O(1).
// A record's block is replaced (MI.UPDATE) and freed only after every view into it has been
// moved to the new block or to another record, so an index never refers to freed memory.
// Values are only touched under their key's lock; readers (shared lock) only call const members,
// which never allocate through the value.
#ifndef VESSEL_MODULES_MULTI_INDEX_MULTI_INDEX_TYPE_H_
#define VESSEL_MODULES_MULTI_INDEX_MULTI_INDEX_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "vessel/module.hpp"

namespace vessel::multi_index {

inline constexpr size_t kMaxIndexes = 64;

using Id = uint64_t;  // 1, 2, 3, ...: never reused within a key
template <class T>
using Vec = std::vector<T, vsl::Allocator<T>>;  // scratch space (not part of a value)

// ---- memory ----

// The bytes a value owns (usable sizes of its host allocations).
struct Accounting {
  size_t bytes = 0;
};
void* Allocate(Accounting* a, size_t n);  // throws std::bad_alloc
void Deallocate(Accounting* a, void* p) noexcept;

// An STL allocator over the host allocator that counts into one value's Accounting.
template <class T>
class CountingAllocator {
 public:
  using value_type = T;
  explicit CountingAllocator(Accounting* a) noexcept : a_(a) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& o) noexcept : a_(o.accounting()) {}
  T* allocate(size_t n) { return static_cast<T*>(Allocate(a_, n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { Deallocate(a_, p); }
  Accounting* accounting() const { return a_; }
  template <class U>
  bool operator==(const CountingAllocator<U>& o) const noexcept {
    return a_ == o.accounting();
  }

 private:
  Accounting* a_;
};

using String = std::basic_string<char, std::char_traits<char>, CountingAllocator<char>>;

// ---- records ----

struct FieldValue {
  std::string_view field;
  std::string_view value;
};

// Distinct fields of `pairs`, the last value of a repeated field winning at the position of its
// first occurrence (HSET's rule).
Vec<FieldValue> DistinctFields(std::span<const FieldValue> pairs);

// A read-only view of a record's block.
class RecordRef {
 public:
  explicit RecordRef(const char* p = nullptr) : p_(p) {}
  explicit operator bool() const { return p_ != nullptr; }
  const char* data() const { return p_; }
  uint32_t field_count() const { return U32(p_); }
  uint32_t payload_bytes() const { return U32(p_ + 4); }
  // The value of `field`; false when the record does not have it.
  bool Find(std::string_view field, std::string_view* value) const;
  // Calls f(name, value) for every field, in order.
  template <class F>
  void ForEach(F&& f) const {
    const char* q = p_ + 8;
    for (uint32_t i = 0, n = field_count(); i < n; ++i) {
      const uint32_t fl = U32(q), vl = U32(q + 4);
      f(std::string_view(q + 8, fl), std::string_view(q + 8 + fl, vl));
      q += 8 + fl + vl;
    }
  }

  static uint32_t U32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

 private:
  const char* p_;
};

// A new block with `fields` (distinct). Throws std::bad_alloc, or vsl::Error past 4 GiB.
char* BuildRecord(Accounting* a, std::span<const FieldValue> fields);
// A new block: `old` with `changes` (distinct) set, new fields appended.
char* BuildUpdated(Accounting* a, RecordRef old, std::span<const FieldValue> changes);

// ---- indexes ----

enum class Kind : uint8_t { kHash, kOrdered };

// An index as MI.CREATE declares it (views into the command's arguments).
struct IndexDef {
  std::string_view name;
  std::string_view field;
  Kind kind = Kind::kHash;
  bool unique = false;
  bool numeric = false;
};

// The schema rules: at least one index, at most kMaxIndexes, distinct names, NUMERIC only on
// ORDERED. Returns an error message, empty when the schema is valid.
std::string CheckSchema(std::span<const IndexDef> defs);

// A value as one index sees it: bytes (s) or, for a NUMERIC index, a number (d).
struct IndexKey {
  std::string_view s;
  double d = 0;
};

// One end of a range: a value, inclusive or exclusive, or an open end (lexicographic "-", "+";
// numeric ends are the doubles -inf and +inf).
struct Bound {
  enum class Open : uint8_t { kNone, kMin, kMax };
  IndexKey key;
  bool exclusive = false;
  Open open = Open::kNone;
};

// The ids of a HASH bucket, ascending: one inline id, or a btree for more.
class IdSet {
 public:
  explicit IdSet(Id id) : one_(id) {}
  IdSet(IdSet&& o) noexcept : one_(o.one_), many_(o.many_) { o.many_ = nullptr; }
  IdSet& operator=(IdSet&& o) noexcept;
  ~IdSet();
  size_t size() const;
  Id first() const;
  // Throws std::bad_alloc with the set unchanged.
  void Add(Accounting* a, Id id);
  // False when id was not in.
  bool Remove(Id id);
  // Calls f(id) in ascending order while it returns true.
  void ForEach(absl::FunctionRef<bool(Id)> f) const;

 private:
  using Many = absl::btree_set<Id, std::less<Id>, CountingAllocator<Id>>;
  void FreeMany();  // many_ = nullptr
  Id one_ = 0;
  Many* many_ = nullptr;
};

class Index {
 public:
  Index(Accounting* a, const IndexDef& def);
  Index(Index&&) noexcept = default;
  Index& operator=(Index&&) noexcept = default;

  std::string_view name() const { return name_; }
  std::string_view field() const { return field_; }
  Kind kind() const { return kind_; }
  bool unique() const { return unique_; }
  bool numeric() const { return numeric_; }
  size_t entries() const { return entries_; }

  // The key of value v; false when the index is NUMERIC and v is not a number.
  bool MakeKey(std::string_view v, IndexKey* k) const;
  bool SameKey(const IndexKey& a, const IndexKey& b) const;
  // A record holding k, 0 when none.
  Id AnyHolder(const IndexKey& k) const;
  // Adds (k, id); k.s must be a view into record id's block. Throws std::bad_alloc, unchanged.
  void Insert(const IndexKey& k, Id id);
  // Removes (k, id), k.s being the view into record id's block. A HASH bucket whose value pointed
  // there is repointed to another member's value, given by field_of(member).
  void Erase(const IndexKey& k, Id id, absl::FunctionRef<std::string_view(Id)> field_of);
  // Record id's block moves from old_view to new_view, same content: repoints the views.
  void Repoint(const IndexKey& k, Id id, std::string_view old_view, std::string_view new_view);

  // Calls emit(id) for every record with key k, ascending ids, while it returns true.
  void Equal(const IndexKey& k, absl::FunctionRef<bool(Id)> emit) const;
  // Calls emit(id) for the ORDERED entries within [lo, hi], in order (or reversed), while it
  // returns true.
  void Range(const Bound& lo, const Bound& hi, bool rev, absl::FunctionRef<bool(Id)> emit) const;

 private:
  struct Bucket {
    mutable std::string_view key;  // a view into a member's record; same content when moved
    mutable IdSet ids;
  };
  struct BucketHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
    size_t operator()(const Bucket& b) const { return (*this)(b.key); }
  };
  struct BucketEq {
    using is_transparent = void;
    static std::string_view K(std::string_view s) { return s; }
    static std::string_view K(const Bucket& b) { return b.key; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return K(a) == K(b);
    }
  };
  struct LexEntry {
    mutable std::string_view key;  // a view into record id's block; same content when moved
    Id id;
  };
  struct LexLess {
    bool operator()(const LexEntry& a, const LexEntry& b) const {
      const int c = a.key.compare(b.key);
      return c < 0 || (c == 0 && a.id < b.id);
    }
  };
  struct NumEntry {
    double key;
    Id id;
  };
  struct NumLess {
    bool operator()(const NumEntry& a, const NumEntry& b) const {
      return a.key < b.key || (a.key == b.key && a.id < b.id);
    }
  };
  using HashData = absl::flat_hash_set<Bucket, BucketHash, BucketEq, CountingAllocator<Bucket>>;
  using LexData = absl::btree_set<LexEntry, LexLess, CountingAllocator<LexEntry>>;
  using NumData = absl::btree_set<NumEntry, NumLess, CountingAllocator<NumEntry>>;

  static int Compare(const LexEntry& e, const IndexKey& k);
  static int Compare(const NumEntry& e, const IndexKey& k);
  static LexEntry Probe(const LexEntry*, const IndexKey& k, Id id);
  static NumEntry Probe(const NumEntry*, const IndexKey& k, Id id);
  template <class Data, class Entry>
  static void RangeOf(const Data& data, const Bound& lo, const Bound& hi, bool rev,
                      absl::FunctionRef<bool(Id)> emit);

  Accounting* acct_;
  String name_;
  String field_;
  Kind kind_;
  bool unique_;
  bool numeric_;
  size_t entries_ = 0;
  std::variant<HashData, LexData, NumData> data_;
};

// ---- the value ----

class MultiIndex {
 public:
  // A key with this schema (checked with CheckSchema) and no records. Throws std::bad_alloc.
  explicit MultiIndex(std::span<const IndexDef> schema);
  ~MultiIndex();
  MultiIndex(const MultiIndex&) = delete;
  MultiIndex& operator=(const MultiIndex&) = delete;

  size_t size() const { return records_.size(); }
  Id next_id() const { return next_id_; }
  std::span<const Index> indexes() const { return {indexes_.data(), indexes_.size()}; }
  const Index* FindIndex(std::string_view name) const;
  RecordRef Get(Id id) const;

  // MI.INSERT: adds a record with `fields` (distinct) and returns its id. Throws vsl::Error (a
  // NUMERIC field that is not a number, a UNIQUE violation) or std::bad_alloc, unchanged.
  Id OpInsert(std::span<const FieldValue> fields);
  // MI.UPDATE: sets `changes` (distinct) in the records `ids` (existing, distinct); all of them
  // or, when it throws (vsl::Error or std::bad_alloc), none. A NUMERIC field of `changes` that
  // is not a number is refused even when ids is empty.
  void OpUpdate(std::span<const Id> ids, std::span<const FieldValue> changes);
  // MI.DEL: deletes the records `ids` (existing, distinct). Does not throw.
  void OpDelete(std::span<const Id> ids);

  // The type callbacks (vsl::Type).
  size_t MemUsage() const;
  MultiIndex* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static MultiIndex* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return records_.size(); }
  const char* Encoding() const { return "hashtable+btree"; }

 private:
  using RecordMap = absl::flat_hash_map<Id, char*, absl::Hash<Id>, std::equal_to<Id>,
                                        CountingAllocator<std::pair<const Id, char*>>>;

  Vec<IndexDef> Defs() const;
  // Adds a record with a given id (not present), checking NUMERIC and UNIQUE; unchanged when it
  // throws. InsertBlock takes ownership of the block (freed on failure).
  void InsertAs(Id id, std::span<const FieldValue> fields);
  void InsertBlock(Id id, char* block);
  // The value of index ix's field in record id (present in it).
  std::string_view FieldOf(Id id, const Index& ix) const;

  Accounting acct_;  // first: the containers below count into it
  std::vector<Index, CountingAllocator<Index>> indexes_;
  RecordMap records_;
  Id next_id_ = 1;
};

}  // namespace vessel::multi_index

#endif  // VESSEL_MODULES_MULTI_INDEX_MULTI_INDEX_TYPE_H_
