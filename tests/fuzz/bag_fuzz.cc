// Fuzzes the bag value type on its own (modules/bag/bag_type.cc and the shared packed tree
// compiled in): the input is a serialized bag (u64 count, then member bytes and u64 count pairs)
// followed by operation bytes. Deserialize must refuse malformed input cleanly; a bag it accepts
// must be valid (both trees agree) and serialize back to the same bytes, then stay equal to a
// std::map of counts, its most frequent members included, through the additions and removals the
// remaining bytes choose.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bag_type.h"
#include "tests/support/type_fuzz.h"

namespace {

using vessel::bag::Bag;
using namespace vessel::fuzz;

void CheckEqual(const Bag& b, const std::map<std::string, uint64_t>& model) {
  Check(b.Valid() && b.distinct() == model.size());
  for (const auto& [m, n] : model) Check(b.Count(m) == n);
  std::vector<std::pair<std::string, uint64_t>> want(model.begin(), model.end());
  std::stable_sort(want.begin(), want.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  const size_t k = std::min<size_t>(want.size(), 20);
  size_t i = 0;
  b.Top(k, [&](std::string_view member, uint64_t count) {
    Check(i < k && member == want[i].first && count == want[i].second);
    ++i;
  });
  Check(i == k);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view ops;
  Bag* b = DecodeInput<Bag>(data, size, 32, vessel::bag::kEncodingVersion, &ops);
  if (b == nullptr) return 0;
  std::map<std::string, uint64_t> model;
  for (auto c = b->members().First(); c.valid(); c.Next())
    model.emplace(std::string(c.key()), b->Count(c.key()));
  CheckEqual(*b, model);

  Op o;
  for (int step = 0; step < 64 && NextOp(&ops, &o); ++step) {
    const unsigned char op = o.code;
    const size_t a = o.arg;
    std::string member = "m" + std::to_string(a % 701);
    if (op & 0x10) member = std::string(a % 230, 'k') + member;
    const uint64_t have = model.count(member) ? model[member] : 0;
    switch (op % 4) {
      case 0:
        b->Add(member, 1 + static_cast<int64_t>(op >> 5));
        model[member] = have + 1 + (op >> 5);
        break;
      case 1:
        if (have != 0) {
          const uint64_t take = std::min<uint64_t>(have, 1 + (op >> 5));
          b->Add(member, -static_cast<int64_t>(take));
          if (have == take) {
            model.erase(member);
          } else {
            model[member] = have - take;
          }
        }
        break;
      case 2:
        for (size_t k = 0; k < a % 250; ++k) {
          const std::string m = member + "/" + std::to_string(k);
          b->Add(m, 1);
          ++model[m];
        }
        break;
      default:
        for (auto it = model.begin(); it != model.end() && model.size() > a % 50;) {
          b->Add(it->first, -static_cast<int64_t>(it->second));
          it = model.erase(it);
        }
    }
    CheckEqual(*b, model);
  }
  if (!model.empty()) {
    Bag* copy = b->Clone();
    CheckEqual(*copy, model);
    vsl::Delete(copy);
  }
  vsl::Delete(b);
  return 0;
}
