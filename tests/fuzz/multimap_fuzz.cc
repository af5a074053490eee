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
#include "tests/support/fake_vsl_api.h"

namespace {

using vessel::multimap::Multimap;
using vessel::ordered::PackedTree;
using vessel::ordered::ValueBuf;

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckEqual(const Multimap& m, const std::multimap<std::string, std::string>& model) {
  Check(m.Valid() && m.size() == model.size());
  ValueBuf buf;
  auto it = model.begin();
  for (PackedTree::Cursor c = m.pairs().First(); c.valid(); c.Next(), ++it)
    Check(it != model.end() && c.key() == it->first && c.value(buf) == it->second);
  Check(it == model.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = (vessel::fuzz::InstallFakeApi(), true);
  (void)installed;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.empty()) return 0;
  const size_t split =
      std::min<size_t>(input.size() - 1, size_t{static_cast<unsigned char>(input[0])} * 32);
  const std::string_view value = input.substr(1, split);
  std::string_view ops = input.substr(1 + split);

  Multimap* m = vessel::fuzz::Decode<Multimap>(value, vessel::multimap::kEncodingVersion);
  if (m == nullptr) return 0;
  std::multimap<std::string, std::string> model;
  ValueBuf buf;
  for (PackedTree::Cursor c = m->pairs().First(); c.valid(); c.Next())
    model.emplace(std::string(c.key()), std::string(c.value(buf)));
  CheckEqual(*m, model);
  const std::string bytes = vessel::fuzz::Encode(*m);
  Check(bytes == value.substr(0, bytes.size()));

  for (int step = 0; ops.size() >= 3 && step < 64; ++step) {
    const unsigned char op = static_cast<unsigned char>(ops[0]);
    const size_t a = static_cast<unsigned char>(ops[1]) | size_t{static_cast<unsigned char>(ops[2])}
                                                              << 8;
    ops.remove_prefix(3);
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
