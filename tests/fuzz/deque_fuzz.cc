// Fuzzes the deque value type on its own (modules/deque/deque_type.cc compiled in): the input is
// a serialized deque (u64 count, then length-prefixed elements) followed by operation bytes.
// Deserialize must refuse malformed input cleanly; a deque it accepts must be valid, serialize
// back to the same bytes, and stay equal to a std::deque model through pushes, pops, sets,
// inserts and erases the remaining bytes choose (each followed by Deque::Valid()).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string>
#include <string_view>

#include "deque_type.h"
#include "tests/support/type_fuzz.h"

namespace {

using vessel::deque::Deque;
using namespace vessel::fuzz;

void CheckEqual(const Deque& d, const std::deque<std::string>& model) {
  Check(d.Valid() && d.size() == model.size());
  size_t i = 0;
  d.ForEach(0, [&](size_t, std::string_view e) {
    Check(e == model[i++]);
    return true;
  });
  Check(i == model.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view ops;
  Deque* d = DecodeInput<Deque>(data, size, 16, vessel::deque::kEncodingVersion, &ops);
  if (d == nullptr) return 0;
  std::deque<std::string> model;
  d->ForEach(0, [&](size_t, std::string_view e) {
    model.emplace_back(e);
    return true;
  });
  CheckEqual(*d, model);

  size_t counter = 0;
  Op o;
  while (!model.empty() && counter < 64 && NextOp(&ops, &o)) {
    const unsigned char op = o.code;
    const size_t a = o.arg;
    std::string elem = std::to_string(counter++ * 7919 % 5000);
    // Long strings up to 9,000 bytes (inline in their page up to Deque::kInlineMax, then blocks)
    // when bit 3 is set.
    if (op & 0x10) elem.append(a % (op & 0x08 ? 9000 : 300), 'x');
    if (op & 0x20) elem = std::to_string(static_cast<int64_t>(a) - 30000);
    switch (op % 8) {
      case 0:
        d->PushFront(elem);
        model.push_front(elem);
        break;
      case 1:
        d->PushBack(elem);
        model.push_back(elem);
        break;
      case 2:
        d->PopFront([](std::string_view) {});
        model.pop_front();
        break;
      case 3:
        d->PopBack([](std::string_view) {});
        model.pop_back();
        break;
      case 4:
        d->Set(a % model.size(), elem);
        model[a % model.size()] = elem;
        break;
      case 5: {
        const size_t at = a % (model.size() + 1);
        d->Insert(at, elem);
        model.insert(model.begin() + static_cast<long>(at), elem);
        break;
      }
      case 6: {
        const size_t at = a % model.size();
        const size_t n = std::min<size_t>(op >> 6 == 3 ? a : op >> 6, model.size() - at);
        d->Erase(at, n);
        model.erase(model.begin() + static_cast<long>(at),
                    model.begin() + static_cast<long>(at + n));
        break;
      }
      default:
        for (size_t k = 0; k < a % 130; ++k) {
          d->PushBack(elem);
          model.push_back(elem);
        }
    }
    CheckEqual(*d, model);
  }
  Deque* copy = d->Clone();
  CheckEqual(*copy, model);
  vsl::Delete(copy);
  vsl::Delete(d);
  return 0;
}
