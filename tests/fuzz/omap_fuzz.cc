// Fuzzes the omap value type on its own (modules/omap/omap_type.cc and the shared packed tree
// compiled in): the input is a serialized map (u64 count, then length-prefixed field and value
// pairs) followed by operation bytes. Deserialize must refuse malformed input cleanly; a map it
// accepts must be valid and serialize back to the same bytes, then stay equal to a std::map
// through sets, deletions, removals by rank and bound queries the remaining bytes choose, with
// the tree's invariants checked after each.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <string_view>

#include "omap_type.h"
#include "tests/support/type_fuzz.h"

namespace {

using vessel::omap::Omap;
using vessel::ordered::PackedTree;
using namespace vessel::fuzz;

using Model = std::map<std::string, std::string>;

void CheckEqual(const PackedTree& t, const Model& model) {
  Check(t.Valid());
  CheckPairs(t, model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view ops;
  Omap* m = DecodeInput<Omap>(data, size, 32, vessel::omap::kEncodingVersion, &ops);
  if (m == nullptr) return 0;
  Model model = PairsOf<Model>(m->tree);
  CheckEqual(m->tree, model);

  Op o;
  for (int step = 0; step < 64 && NextOp(&ops, &o); ++step) {
    const unsigned char op = o.code;
    const size_t a = o.arg;
    std::string key = std::to_string(a % 997);
    if (op & 0x10) key = std::string(a % 230, 'k') + key;
    std::string val =
        (op & 0x20) ? std::to_string(static_cast<int64_t>(a) - 30000) : std::string(a % 260, 'v');
    switch (op % 6) {
      case 0:
      case 1:
        Check(m->tree.Upsert(key, val) == (model.find(key) == model.end()));
        model[key] = val;
        break;
      case 2:
        Check(m->tree.Erase(key) == (model.erase(key) == 1));
        break;
      case 3:
        if (!model.empty()) {
          const size_t r = a % model.size();
          m->tree.EraseAt(r);
          model.erase(std::next(model.begin(), static_cast<long>(r)));
        }
        break;
      case 4:
        if (!model.empty()) {
          const size_t r = a % model.size();
          m->tree.SetValueAt(r, val);
          std::next(model.begin(), static_cast<long>(r))->second = val;
        }
        break;
      default:
        for (size_t k = 0; k < a % 300; ++k) {
          const std::string bulk = key + "/" + std::to_string(k);
          m->tree.Upsert(bulk, val);
          model[bulk] = val;
        }
    }
    Check(m->tree.LowerBound(key) ==
          static_cast<size_t>(std::distance(model.begin(), model.lower_bound(key))));
    Check(m->tree.UpperBound(key) ==
          static_cast<size_t>(std::distance(model.begin(), model.upper_bound(key))));
    CheckEqual(m->tree, model);
  }
  if (!model.empty()) {
    Omap* copy = m->Clone();
    CheckEqual(copy->tree, model);
    vsl::Delete(copy);
  }
  vsl::Delete(m);
  return 0;
}
