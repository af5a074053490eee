// The multimap value type (see multimap_type.h).
#include "multimap_type.h"

#include "vessel/ordered/pairs.h"

namespace vessel::multimap {

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

void Multimap::Serialize(vsl::Writer& w) const { ordered::SavePairs(tree_, w); }

Multimap* Multimap::Deserialize(vsl::Reader& r, uint32_t encver) {
  if (encver != kEncodingVersion) return nullptr;
  MultimapPtr m(vsl::New<Multimap>());
  // Equal fields follow each other in the order they were added.
  if (!ordered::LoadPairs(r, true, &m->tree_, &m->distinct_)) return nullptr;
  return m.release();
}

int Multimap::Visit(vsl_visit_fn fn, void* ud) const { return ordered::VisitPairs(tree_, fn, ud); }

}  // namespace vessel::multimap
