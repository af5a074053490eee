// The omap value type's callbacks (see omap_type.h).
#include "omap_type.h"

#include "vessel/ordered/pairs.h"

namespace vessel::omap {

Omap* Omap::Clone() const {
  OmapPtr copy(vsl::New<Omap>());
  copy->tree.CopyFrom(tree);
  return copy.release();
}

void Omap::Serialize(vsl::Writer& w) const { ordered::SavePairs(tree, w); }

Omap* Omap::Deserialize(vsl::Reader& r, uint32_t encver) {
  if (encver != kEncodingVersion) return nullptr;
  OmapPtr m(vsl::New<Omap>());
  if (!ordered::LoadPairs(r, false, &m->tree)) return nullptr;
  return m.release();
}

int Omap::Visit(vsl_visit_fn fn, void* ud) const { return ordered::VisitPairs(tree, fn, ud); }

}  // namespace vessel::omap
