// What the fuzz targets of a module's value type share beside the stand-in API (fake_vsl_api.h):
// the split of an input into a serialized value and operation bytes, the decoding of one
// operation, the round-trip check of what was decoded, and for the values kept in a PackedTree of
// (key, value) pairs their comparison with a std::map or std::multimap model. A failed check
// aborts: that is the fuzzer's crash.
#ifndef VESSEL_TESTS_SUPPORT_TYPE_FUZZ_H_
#define VESSEL_TESTS_SUPPORT_TYPE_FUZZ_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/support/fake_vsl_api.h"
#include "vessel/ordered/packed_tree.h"

namespace vessel::fuzz {

inline void Check(bool ok) {
  if (!ok) std::abort();
}

// An input: its first byte says where the serialized value ends (`scale` bytes per unit) and the
// operation bytes begin. False for an empty input.
struct TypeInput {
  std::string_view value;
  std::string_view ops;
};
inline bool SplitInput(const uint8_t* data, size_t size, size_t scale, TypeInput* in) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.empty()) return false;
  const size_t split =
      std::min<size_t>(input.size() - 1, size_t{static_cast<unsigned char>(input[0])} * scale);
  in->value = input.substr(1, split);
  in->ops = input.substr(1 + split);
  return true;
}

// One operation: a code byte and a 16-bit little-endian argument. False when fewer than three
// bytes are left.
struct Op {
  unsigned char code;
  size_t arg;
};
inline bool NextOp(std::string_view* ops, Op* op) {
  if (ops->size() < 3) return false;
  const auto byte = [&](size_t i) { return size_t{static_cast<unsigned char>((*ops)[i])}; };
  op->code = static_cast<unsigned char>(byte(0));
  op->arg = byte(1) | byte(2) << 8;
  ops->remove_prefix(3);
  return true;
}

// A value decoded from `bytes` serializes back to the bytes it used.
template <class T>
void CheckRoundTrip(const T& value, std::string_view bytes) {
  const std::string out = Encode(value);
  Check(out == bytes.substr(0, out.size()));
}

// The value an input starts with (see SplitInput), decoded with T::Deserialize and checked to
// serialize back to the bytes it used; nullptr when the input is empty or the value refused.
// *ops receives the operation bytes. Installs the stand-in API on first use.
template <class T>
T* DecodeInput(const uint8_t* data, size_t size, size_t scale, uint32_t encver,
               std::string_view* ops) {
  static const bool installed = (InstallFakeApi(), true);
  (void)installed;
  TypeInput in;
  if (!SplitInput(data, size, scale, &in)) return nullptr;
  T* value = Decode<T>(in.value, encver);
  if (value == nullptr) return nullptr;
  CheckRoundTrip(*value, in.value);
  *ops = in.ops;
  return value;
}

// The pairs of t as a model (a std::map or std::multimap of strings).
template <class Map>
Map PairsOf(const ordered::PackedTree& t) {
  Map model;
  ordered::ValueBuf buf;
  for (ordered::PackedTree::Cursor c = t.First(); c.valid(); c.Next())
    model.emplace(std::string(c.key()), std::string(c.value(buf)));
  return model;
}
// t holds exactly the model's pairs, in its order.
template <class Map>
void CheckPairs(const ordered::PackedTree& t, const Map& model) {
  Check(t.size() == model.size());
  ordered::ValueBuf buf;
  auto it = model.begin();
  for (ordered::PackedTree::Cursor c = t.First(); c.valid(); c.Next(), ++it)
    Check(it != model.end() && c.key() == it->first && c.value(buf) == it->second);
  Check(it == model.end());
}

}  // namespace vessel::fuzz

#endif  // VESSEL_TESTS_SUPPORT_TYPE_FUZZ_H_
