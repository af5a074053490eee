// The set value type of the sets module: three representations behind one Set class, and the
// pure set operations (Op*) the commands build on.
//
// Representations (chosen like Redis 7.2, whose thresholds are the defaults of Redis's
// set-max-intset-entries, set-max-listpack-entries and set-max-listpack-value):
//   - intset: a sorted array of integers, 2, 4 or 8 bytes wide (the narrowest that fits every
//     member), binary search. Used while every member is a canonical int64 (Redis's string2ll)
//     and there are at most 512 of them.
//   - listpack: one packed block of [length byte][bytes] entries in insertion order, linear
//     search. Used for at most 128 members of at most 64 bytes.
//   - hashtable: HashSet (hash_set.h), beyond either limit. A set never converts back on its
//     own, as in Redis; SPOP of most of a set rebuilds it compactly, as Redis 7.0 does.
// A new set starts as an intset. Values are only touched under their key's lock.
#ifndef VESSEL_MODULES_SETS_SETS_TYPE_H_
#define VESSEL_MODULES_SETS_SETS_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hash_set.h"
#include "vessel/module.hpp"

namespace vessel::sets {

inline constexpr size_t kMaxIntsetEntries = 512;
inline constexpr size_t kMaxListpackEntries = 128;
inline constexpr size_t kMaxListpackValue = 64;

enum class Rep : uint8_t { kIntset, kListpack, kHashtable };

struct Intset;
struct Listpack;

// Room for a member formatted from an intset (an int64 in decimal).
struct NumBuf {
  char data[24];
};

class Set {
 public:
  // An empty set (intset encoding): fill it before storing it, the keyspace never holds an
  // empty set. Throws std::bad_alloc. New() allocates it from the host allocator.
  Set();
  static Set* New() { return vsl::New<Set>(); }
  ~Set();
  Set(const Set&) = delete;
  Set& operator=(const Set&) = delete;

  Rep rep() const { return rep_; }
  size_t size() const;
  bool empty() const { return size() == 0; }
  bool Contains(std::string_view m) const;
  // Adds m, converting the representation when a limit is crossed; false when already present.
  // Throws std::bad_alloc with the set unchanged.
  bool Add(std::string_view m);
  bool Remove(std::string_view m);

  // Positional access: 0 <= i < size(). O(1), except O(i) for a listpack (see Indexed).
  std::string_view At(size_t i, NumBuf& buf) const;
  // Removes the member at position i. In a hashtable the last member moves to position i.
  void RemoveAt(size_t i);

  // SPOP of most of a set (Redis's "case 3"): gives the remaining members the representation a
  // set built from scratch would have. Does not throw: on failure the set stays as it is.
  void Compact();
  // Makes this hashtable hold exactly the members of r (also a hashtable) without moving the
  // members it keeps: a replacement (SUNIONSTORE s s x) does not disturb an SSCAN of s.
  void AssignInPlace(const Set& r);

  // SSCAN: the positions [*lo, *hi) to return for `cursor` and `count`, and the next cursor.
  // A compact set is returned whole with cursor 0, as Redis does; a hashtable is walked from the
  // top position down (see hash_set.h for why no member present throughout is missed).
  uint64_t ScanStep(uint64_t cursor, uint64_t count, size_t* lo, size_t* hi) const;

  // The type callbacks (vsl::Type).
  size_t MemUsage() const;
  Set* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Set* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size(); }
  const char* Encoding() const;
  // Calls fn for every member (in no particular order) until it returns nonzero (ABI 1.2).
  int Visit(vsl_visit_fn fn, void* ud) const;

  // Integer members of an intset, for the fast paths of intersections.
  bool ContainsInt(int64_t v) const;

 private:
  friend class SetIter;
  friend class Indexed;
  void ToListpack();
  void ToHashtable(size_t reserve);
  void ClearData();

  Rep rep_ = Rep::kIntset;
  union {
    Intset* is_;
    Listpack* lp_;
    HashSet* ht_;
  };
};

// Walks the members of a set that does not change meanwhile.
class SetIter {
 public:
  explicit SetIter(const Set& s) : s_(s) {}
  bool Next(std::string_view* out);
  // The member last returned, as an integer, when the set is an intset.
  bool is_int() const { return s_.rep() == Rep::kIntset; }
  int64_t int_value() const { return int_; }

 private:
  const Set& s_;
  size_t i_ = 0;
  size_t off_ = 0;
  int64_t int_ = 0;
  NumBuf buf_;
};

// O(1) positional access to a set that does not change meanwhile (a listpack's entry offsets
// are collected once).
class Indexed {
 public:
  explicit Indexed(const Set& s);
  size_t size() const { return s_.size(); }
  std::string_view Get(size_t i, NumBuf& buf) const;

 private:
  const Set& s_;
  uint16_t offsets_[kMaxListpackEntries];
};

// ---- set algebra: sets[i] == nullptr is a missing key (an empty set) ----

// Calls emit(member) for every member of the intersection, up to `limit` members (0 = all);
// returns how many. Members come from the smallest set, so they are distinct.
template <class F>
size_t OpInter(std::span<const Set* const> sets, size_t limit, F&& emit);
// A new set (nullptr when empty) with the union / difference of sets.
Set* OpUnion(std::span<const Set* const> sets);
Set* OpDiff(std::span<const Set* const> sets);

// ---- implementation of the template ----

// Copies sets to out ordered by increasing size, as Redis's SINTER does; returns 0 (nothing
// to intersect) when one is missing or empty, else sets.size().
size_t SortBySize(std::span<const Set* const> sets, const Set** out);
bool MemberOf(const Set& s, const SetIter& it, std::string_view m);

template <class F>
size_t OpInter(std::span<const Set* const> sets, size_t limit, F&& emit) {
  std::vector<const Set*, vsl::Allocator<const Set*>> sorted(sets.size());
  if (SortBySize(sets, sorted.data()) == 0) return 0;
  size_t found = 0;
  SetIter it(*sorted[0]);
  std::string_view m;
  while ((limit == 0 || found < limit) && it.Next(&m)) {
    size_t j = 1;
    for (; j < sorted.size(); ++j) {
      if (sorted[j] != sorted[0] && !MemberOf(*sorted[j], it, m)) break;
    }
    if (j < sorted.size()) continue;
    emit(m);
    ++found;
  }
  return found;
}

}  // namespace vessel::sets

#endif  // VESSEL_MODULES_SETS_SETS_TYPE_H_
