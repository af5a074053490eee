// The serialized form and visit of a PackedTree of (key, value) pairs (see pairs.h).
#include "vessel/ordered/pairs.h"

#include <string_view>

namespace vessel::ordered {

void SavePairs(const PackedTree& t, vsl::Writer& w) {
  w.U64(t.size());
  ValueBuf buf;
  for (PackedTree::Cursor c = t.First(); c.valid(); c.Next()) {
    w.Bytes(c.key());
    w.Bytes(c.value(buf));
  }
}

bool LoadPairs(vsl::Reader& r, bool repeats, PackedTree* t, uint64_t* distinct) {
  uint64_t n;
  if (!r.U64(&n) || n == 0) return false;
  uint64_t keys = 0;
  std::string_view prev;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key, value;
    if (!r.Bytes(&key) || !r.Bytes(&value)) return false;
    // In order: appending is then where each entry belongs.
    const int c = i == 0 ? -1 : CompareKeys(prev, key);
    if (c > 0 || (c == 0 && !repeats)) return false;
    t->InsertAfterEquals(key, value);
    if (c != 0) ++keys;
    prev = key;  // the reader's bytes stay valid until the callback returns
  }
  if (distinct != nullptr) *distinct = keys;
  return true;
}

int VisitPairs(const PackedTree& t, vsl_visit_fn fn, void* ud) {
  ValueBuf buf;
  for (PackedTree::Cursor c = t.First(); c.valid(); c.Next()) {
    const std::string_view k = c.key(), v = c.value(buf);
    if (fn(ud, k.data(), k.size(), 0.0) != 0 || fn(ud, v.data(), v.size(), 0.0) != 0) break;
  }
  return VSL_OK;
}

}  // namespace vessel::ordered
