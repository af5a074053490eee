// Fuzzes the multimap value type on its own (modules/multimap/multimap_type.cc and the shared
// packed tree compiled in): the input is a serialized multimap (u64 count, then length-prefixed
// field and value pairs) followed by operation bytes. Deserialize must refuse malformed input
// cleanly; a multimap it accepts must be valid and serialize back to the same bytes, then stay
// equal to a std::multimap (equal fields in insertion order) through the additions and removals
// the remaining bytes choose.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <string_view>

#include "multimap_type.h"
#include "tests/support/type_fuzz.h"

namespace {

using vessel::multimap::Multimap;
using namespace vessel::fuzz;

using Model = std::multimap<std::string, std::string>;

void CheckEqual(const Multimap& m, const Model& model) {
  Check(m.Valid());
  CheckPairs(m.pairs(), model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view ops;
  Multimap* m = DecodeInput<Multimap>(data, size, 32, vessel::multimap::kEncodingVersion, &ops);
  if (m == nullptr) return 0;
  Model model = PairsOf<Model>(m->pairs());
  CheckEqual(*m, model);

  Op o;
  for (int step = 0; step < 64 && NextOp(&ops, &o); ++step) {
    const unsigned char op = o.code;
    const size_t a = o.arg;
    std::string field = "f" + std::to_string(a % 37);
    if (op & 0x10) field = std::string(a % 230, 'k') + field;
    const std::string val = (op & 0x20) ? std::to_string(a % 5) : std::string(a % 260, 'v');
    switch (op % 4) {
      case 0:
        m->Add(field, val);
        model.emplace(field, val);
        break;
      case 1: {
        auto [lo, hi] = model.equal_range(field);
        Check(m->EraseField(field) == static_cast<size_t>(std::distance(lo, hi)));
        model.erase(lo, hi);
        break;
      }
      case 2: {
        size_t removed = 0;
        for (auto [lo, hi] = model.equal_range(field); lo != hi; ++lo) {
          if (lo->second == val) {
            model.erase(lo);
            removed = 1;
            break;
          }
        }
        Check(m->EraseValue(field, val) == removed);
        break;
      }
      default:
        for (size_t k = 0; k < a % 250; ++k) {
          const std::string f = field + "/" + std::to_string(k % 17);
          m->Add(f, val);
          model.emplace(f, val);
        }
    }
    if (model.empty()) break;  // the command would delete the key
    CheckEqual(*m, model);
  }
  if (!model.empty()) {
    Multimap* copy = m->Clone();
    CheckEqual(*copy, model);
    vsl::Delete(copy);
  }
  vsl::Delete(m);
  return 0;
}
