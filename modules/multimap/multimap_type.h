// The multimap value type: (field, value) pairs, a field any number of times, ordered by field and
// then by insertion, held in a PackedTree (vessel/ordered/packed_tree.h) whose equal keys keep
// their insertion order; and the count of distinct fields, kept as pairs come and go.
//
// Serialized form (encoding version 1): u64 count, then count pairs of byte strings (field,
// value) in order. Deserialize refuses an empty multimap, fields out of order and input that ends
// early. Values are only touched under their key's lock; nothing here is thread-aware.
#ifndef VESSEL_MODULES_MULTIMAP_MULTIMAP_TYPE_H_
#define VESSEL_MODULES_MULTIMAP_MULTIMAP_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"
#include "vessel/util.hpp"

namespace vessel::multimap {

inline constexpr uint32_t kEncodingVersion = 1;

class Multimap {
 public:
  const ordered::PackedTree& pairs() const { return tree_; }
  size_t size() const { return tree_.size(); }
  bool empty() const { return tree_.empty(); }
  uint64_t distinct() const { return distinct_; }

  // The ranks [*lo, *hi) of the field's pairs.
  void Span(std::string_view field, size_t* lo, size_t* hi) const {
    *lo = tree_.LowerBound(field);
    *hi = tree_.UpperBound(field);
  }
  // Adds a pair after the field's others.
  void Add(std::string_view field, std::string_view value);
  // Removes every pair of the field / its first pair with this value; returns how many went.
  size_t EraseField(std::string_view field) noexcept;
  size_t EraseValue(std::string_view field, std::string_view value) noexcept;

  // Whether the tree is valid and the count of distinct fields right (tests, fuzzers).
  bool Valid() const;

  // The type callbacks (vsl::Type<Multimap>). MemUsage is exact.
  size_t MemUsage() const { return vsl::Api().usable_size(this) + tree_.bytes(); }
  Multimap* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Multimap* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return tree_.size(); }
  const char* Encoding() const { return tree_.small() ? "packed" : "btree"; }
  // Calls fn for every field and then its value, pair by pair, in order.
  int Visit(vsl_visit_fn fn, void* ud) const;

 private:
  ordered::PackedTree tree_;
  uint64_t distinct_ = 0;
};

// The registered type (set once in vsl_module_init).
inline vsl::Type<Multimap> g_multimap_type;

// A multimap not yet stored in a key.
using MultimapPtr = vsl::Owned<Multimap>;

}  // namespace vessel::multimap

#endif  // VESSEL_MODULES_MULTIMAP_MULTIMAP_TYPE_H_
