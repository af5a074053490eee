// The bag value type (a multiset): each distinct member with its count, in member order, and the
// operations the BAG.* commands build on.
//
// Representation: two PackedTrees (vessel/ordered/packed_tree.h).
//   - members: member -> count (the count a canonical integer value, 1 to 9 bytes), unique, in
//     member order: lookups, ranks and lexicographic ranges are O(log n).
//   - by_count (only for bags of more than kIndexed distinct members): one entry per member whose
//     key is the count, encoded so that keys sort by count downwards, followed by the member; so
//     the first k entries are the k most frequent members, ties in member order, in O(log n + k).
//     A smaller bag has no such index (it costs memory a listpack-sized bag should not pay): its
//     most frequent members come from one bounded walk of at most kIndexed members, as Redis's
//     small encodings answer everything. The index is built past kIndexed members and dropped
//     under kIndexed / 2.
// The index and the sum of the counts (BAG.LEN) hang off the bag in one block that only large bags
// have; a small bag sums its at most kIndexed counts when asked, so its header is 16 bytes. Counts
// are at least 1 (a member whose count reaches 0
// is removed) and the total stays within int64, so every count does too.
// Changes are all or nothing: what can fail (std::bad_alloc) happens first and is undone if the
// second tree fails; removals never fail. Values are only touched under their key's lock.
#ifndef VESSEL_MODULES_BAG_BAG_TYPE_H_
#define VESSEL_MODULES_BAG_BAG_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"
#include "vessel/util.hpp"

namespace vessel::bag {

// Serialized form: u64 distinct count, then pairs (member bytes, u64 count) in member order.
inline constexpr uint32_t kEncodingVersion = 1;
inline constexpr size_t kIndexed = 128;

class Bag {
 public:
  Bag() = default;
  ~Bag();
  Bag(const Bag&) = delete;
  Bag& operator=(const Bag&) = delete;

  const ordered::PackedTree& members() const { return members_; }
  size_t distinct() const { return members_.size(); }
  uint64_t total() const;
  bool empty() const { return members_.empty(); }

  // The count of member (0 when absent).
  uint64_t Count(std::string_view member) const;
  // Adds delta (which may be negative) to member's count and returns the new count; the caller
  // has checked that the count stays >= 0 and the total within int64. A count of 0 removes the
  // member.
  uint64_t Add(std::string_view member, int64_t delta);
  // The k most frequent members with their counts (ties in member order), k <= distinct().
  template <class F>
  void Top(size_t k, F&& fn) const;

  // Whether both trees agree with each other and with total (tests, fuzzers).
  bool Valid() const;

  // The type callbacks (vsl::Type<Bag>). MemUsage is O(1) for large bags.
  size_t MemUsage() const;
  Bag* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Bag* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return members_.size(); }
  const char* Encoding() const {
    return members_.small() && index_ == nullptr ? "packed" : "btree";
  }
  // Calls fn for every member with its count as the score, in member order.
  int Visit(vsl_visit_fn fn, void* ud) const;

 private:
  // Builds or drops the count index as the number of members crosses its thresholds.
  void Reindex();
  void TopByWalk(size_t k, vsl::Vec<std::pair<uint64_t, std::string_view>>* out) const;

  struct Index {
    ordered::PackedTree by_count;
    uint64_t total = 0;
  };
  // The sum of the counts, walking the members.
  uint64_t SumCounts() const;

  ordered::PackedTree members_;
  Index* index_ = nullptr;
};

// The count of a members_ value (its canonical decimal text).
uint64_t ParseCount(std::string_view text);
// The by_count key of (count, member), and back.
vsl::String CountKey(uint64_t count, std::string_view member);
std::pair<uint64_t, std::string_view> FromCountKey(std::string_view key);

template <class F>
void Bag::Top(size_t k, F&& fn) const {
  if (k == 0) return;
  if (index_ != nullptr) {
    size_t i = 0;
    for (auto c = index_->by_count.First(); c.valid() && i < k; c.Next(), ++i) {
      const auto [count, member] = FromCountKey(c.key());
      fn(member, count);
    }
    return;
  }
  vsl::Vec<std::pair<uint64_t, std::string_view>> top;
  TopByWalk(k, &top);
  for (const auto& [count, member] : top) fn(member, count);
}

// The registered type (set once in vsl_module_init).
inline vsl::Type<Bag> g_bag_type;

// A bag not yet stored in a key.
using BagPtr = vsl::Owned<Bag>;

}  // namespace vessel::bag

#endif  // VESSEL_MODULES_BAG_BAG_TYPE_H_
