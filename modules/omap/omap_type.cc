// The omap value type's callbacks (see omap_type.h).
#include "omap_type.h"

#include <string_view>

namespace vessel::omap {

using ordered::CompareKeys;
using ordered::PackedTree;
using ordered::ValueBuf;

Omap* Omap::Clone() const {
  OmapPtr copy(vsl::New<Omap>());
  copy->tree.CopyFrom(tree);
  return copy.release();
}

void Omap::Serialize(vsl::Writer& w) const {
  w.U64(tree.size());
  ValueBuf buf;
  for (PackedTree::Cursor c = tree.First(); c.valid(); c.Next()) {
    w.Bytes(c.key());
    w.Bytes(c.value(buf));
  }
}

Omap* Omap::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != kEncodingVersion || !r.U64(&n) || n == 0) return nullptr;
  OmapPtr m(vsl::New<Omap>());
  std::string_view prev;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view field, value;
    if (!r.Bytes(&field) || !r.Bytes(&value)) return nullptr;
    // In order and unique: appending is then where each field belongs.
    if (i > 0 && CompareKeys(prev, field) >= 0) return nullptr;
    m->tree.InsertAfterEquals(field, value);
    prev = field;  // the reader's bytes stay valid until the callback returns
  }
  return m.release();
}

int Omap::Visit(vsl_visit_fn fn, void* ud) const {
  ValueBuf buf;
  for (PackedTree::Cursor c = tree.First(); c.valid(); c.Next()) {
    const std::string_view f = c.key(), v = c.value(buf);
    if (fn(ud, f.data(), f.size(), 0.0) != 0 || fn(ud, v.data(), v.size(), 0.0) != 0) break;
  }
  return VSL_OK;
}

}  // namespace vessel::omap
