// The multimap value type (see multimap_type.h).
#include "multimap_type.h"

namespace vessel::multimap {

using ordered::CompareKeys;
using ordered::PackedTree;
using ordered::ValueBuf;

void Multimap::Add(std::string_view field, std::string_view value) {
  const bool had = tree_.Find(field).valid();
  tree_.InsertAfterEquals(field, value);
  if (!had) ++distinct_;
}

size_t Multimap::EraseField(std::string_view field) noexcept {
  size_t lo, hi;
  Span(field, &lo, &hi);
  for (size_t r = lo; r < hi; ++r) tree_.EraseAt(lo);
  if (hi > lo) --distinct_;
  return hi - lo;
}

size_t Multimap::EraseValue(std::string_view field, std::string_view value) noexcept {
  size_t lo, hi;
  Span(field, &lo, &hi);
  if (lo == hi) return 0;
  ValueBuf buf;
  PackedTree::Cursor c = tree_.At(lo);
  for (size_t r = lo; r < hi; ++r, c.Next()) {
    if (c.value(buf) != value) continue;
    tree_.EraseAt(r);
    if (hi - lo == 1) --distinct_;
    return 1;
  }
  return 0;
}

bool Multimap::Valid() const {
  if (!tree_.Valid()) return false;
  uint64_t distinct = 0;
  std::string_view prev;
  for (PackedTree::Cursor c = tree_.First(); c.valid(); c.Next()) {
    if (c.rank() == 0 || c.key() != prev) ++distinct;
    prev = c.key();
  }
  return distinct == distinct_;
}

Multimap* Multimap::Clone() const {
  MultimapPtr copy(vsl::New<Multimap>());
  copy->tree_.CopyFrom(tree_);
  copy->distinct_ = distinct_;
  return copy.release();
}

void Multimap::Serialize(vsl::Writer& w) const {
  w.U64(tree_.size());
  ValueBuf buf;
  for (PackedTree::Cursor c = tree_.First(); c.valid(); c.Next()) {
    w.Bytes(c.key());
    w.Bytes(c.value(buf));
  }
}

Multimap* Multimap::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != kEncodingVersion || !r.U64(&n) || n == 0) return nullptr;
  MultimapPtr m(vsl::New<Multimap>());
  std::string_view prev;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view field, value;
    if (!r.Bytes(&field) || !r.Bytes(&value)) return nullptr;
    // In field order (equal fields in the order they were added): appending is where each goes.
    const int c = i == 0 ? 1 : CompareKeys(prev, field);
    if (c > 0 && i > 0) return nullptr;
    m->tree_.InsertAfterEquals(field, value);
    if (i == 0 || c != 0) ++m->distinct_;
    prev = field;  // the reader's bytes stay valid until the callback returns
  }
  return m.release();
}

int Multimap::Visit(vsl_visit_fn fn, void* ud) const {
  ValueBuf buf;
  for (PackedTree::Cursor c = tree_.First(); c.valid(); c.Next()) {
    const std::string_view f = c.key(), v = c.value(buf);
    if (fn(ud, f.data(), f.size(), 0.0) != 0 || fn(ud, v.data(), v.size(), 0.0) != 0) break;
  }
  return VSL_OK;
}

}  // namespace vessel::multimap
