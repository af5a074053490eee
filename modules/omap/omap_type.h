// The omap value type: fields with values in field order, held in a PackedTree (see
// vessel/ordered/packed_tree.h), and its type callbacks.
//
// Serialized form (encoding version 1): u64 count, then count pairs of byte strings (field,
// value) in field order. Deserialize refuses an empty map, a field out of order or repeated, and
// input that ends early; the fields arrive in order, so loading fills every leaf.
// Values are only touched under their key's lock; nothing here is thread-aware.
#ifndef VESSEL_MODULES_OMAP_OMAP_TYPE_H_
#define VESSEL_MODULES_OMAP_OMAP_TYPE_H_

#include <cstddef>
#include <cstdint>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"
#include "vessel/util.hpp"

namespace vessel::omap {

inline constexpr uint32_t kEncodingVersion = 1;

class Omap {
 public:
  ordered::PackedTree tree;

  // The type callbacks (vsl::Type<Omap>). MemUsage is exact and O(1).
  size_t MemUsage() const { return vsl::Api().usable_size(this) + tree.bytes(); }
  Omap* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Omap* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return tree.size(); }
  // "packed" while the map is one leaf (up to 128 fields), "btree" beyond.
  const char* Encoding() const { return tree.small() ? "packed" : "btree"; }
  // Calls fn for every field and then its value, in field order (as a hash's visit hands over
  // field, value pairs), until it returns nonzero.
  int Visit(vsl_visit_fn fn, void* ud) const;
};

// The registered type (set once in vsl_module_init).
inline vsl::Type<Omap> g_omap_type;

// An omap not yet stored in a key.
using OmapPtr = vsl::Owned<Omap>;

}  // namespace vessel::omap

#endif  // VESSEL_MODULES_OMAP_OMAP_TYPE_H_
