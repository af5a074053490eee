// libFuzzer target for the strings module's HyperLogLog representation (modules/strings/hll.cc)
// on arbitrary bytes: validation, counting, merging, sparse-to-dense conversion, decoding and
// register updates must never read or write out of bounds, and must agree with each other.
//
// Input layout: byte 0 holds options (bit 0: prefix a sparse header, bit 1: prefix a dense header,
// bit 2: a small hll-sparse-max-bytes), the rest is the value (after the optional header) followed
// by nothing else: the elements added are slices of the value itself.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "hll.h"

namespace {

namespace hll = vessel::strings::hll;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant failed: %s\n", what);
    std::abort();
  }
}

// The value as the module holds it: bytes plus room, growing as the Editor does.
struct Value {
  std::vector<uint8_t> buf;
  size_t len = 0;

  // hllAdd's register step as strings_hyperloglog.cc runs it: 1 raised, 0 not, -1 corrupt.
  int Set(uint32_t index, uint8_t count, size_t max_bytes) {
    if (hll::Encoding(buf.data()) == hll::kDense)
      return hll::DenseSet(buf.data() + hll::kHeaderSize, index, count) ? 1 : 0;
    size_t n = len;
    hll::SparseResult r = hll::SparseSet(buf.data(), &n, buf.size(), index, count, max_bytes);
    if (r == hll::kNeedRoom) {
      buf.resize(len + 3);  // exactly the room promised, so overruns show under ASan
      r = hll::SparseSet(buf.data(), &n, buf.size(), index, count, max_bytes);
      Check(r != hll::kNeedRoom, "room for 3 more bytes was not enough");
    }
    Check(n <= buf.size(), "sparse length past its buffer");
    if (r == hll::kInvalid) return -1;
    if (r != hll::kPromote) {
      Check(r == hll::kUnchanged || n <= std::max(max_bytes, len), "grew past the sparse limit");
      len = n;
      buf.resize(len);  // no slack: the next write past the end is caught
      return r == hll::kUpdated ? 1 : 0;
    }
    std::vector<uint8_t> dense(hll::kDenseSize);
    if (!hll::SparseToDense(buf.data(), len, dense.data())) return -1;
    buf = std::move(dense);
    len = hll::kDenseSize;
    return hll::DenseSet(buf.data() + hll::kHeaderSize, index, count) ? 1 : 0;
  }
};

// A sparse value whose last opcode is an XZERO missing its second byte: reads take that byte as
// zero (Redis reads the byte after the string), and a register update that splits the run cannot
// keep the count of registers (Redis leaves the byte it needs after the string's end).
bool EndsInsideXZero(const std::vector<uint8_t>& v) {
  size_t at = hll::kHeaderSize;
  while (at < v.size()) at += (v[at] & 0xC0) == 0x40 ? 2 : 1;
  return at > v.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 64 * 1024) return 0;
  const uint8_t options = data[0];
  std::string s;
  if (options & 1) s = std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80", hll::kHeaderSize);
  if (options & 2) s = std::string("HYLL\0\0\0\0\0\0\0\0\0\0\0\x80", hll::kHeaderSize);
  s.append(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t max_bytes = (options & 4) ? 40 : hll::kDefaultSparseMaxBytes;

  if (!hll::IsHll(s)) return 0;
  // Exactly sized copies, so that any read past the value is an ASan error.
  const std::vector<uint8_t> value(s.begin(), s.end());
  const uint8_t* p = value.data();
  const bool dense = hll::Encoding(p) == hll::kDense;

  bool invalid = false;
  const uint64_t count = hll::Count(p, value.size(), &invalid);
  std::vector<uint8_t> max(hll::kRegisters, 0);
  const bool merged = hll::Merge(max.data(), p, value.size());
  if (dense) Check(merged && !invalid, "a dense value is always valid");
  if (!dense) {
    (void)hll::DecodeSparse(p, value.size());
    std::vector<uint8_t> converted(hll::kDenseSize);
    const bool ok = hll::SparseToDense(p, value.size(), converted.data());
    Check(ok == merged, "sparse-to-dense and merge disagree on validity");
    if (ok) {
      Check(!invalid, "a convertible value counted as invalid");
      bool dense_invalid = false;
      Check(hll::Count(converted.data(), converted.size(), &dense_invalid) == count,
            "sparse and dense counts differ");
      for (uint32_t i = 0; i < hll::kRegisters; ++i)
        Check(hll::DenseGet(converted.data() + hll::kHeaderSize, i) == max[i],
              "sparse-to-dense and merge registers differ");
    }
  }
  if (merged) Check(hll::CountRaw(max.data()) == count, "raw and encoded counts differ");

  // Add elements (slices of the input); a valid value stays valid with the registers raised.
  const bool exact = merged && (dense || !EndsInsideXZero(value));
  Value v{value, value.size()};
  for (size_t at = 0; at + 4 <= s.size() && at < 64 * 8; at += 8) {
    uint32_t index;
    const uint8_t c = hll::PatLen(std::string_view(s).substr(at, 4), &index);
    Check(index < hll::kRegisters && c >= 1 && c <= 51, "pattern out of range");
    const int r = v.Set(index, c, max_bytes);
    if (r < 0) {
      Check(!exact, "a valid value reported corrupt");
      break;
    }
    Check((r == 1) == (c > max[index]) || !exact, "raised flag wrong");
    max[index] = std::max(max[index], c);
  }
  if (exact) {
    std::vector<uint8_t> now(hll::kRegisters, 0);
    Check(hll::Merge(now.data(), v.buf.data(), v.len), "a valid value became corrupt");
    Check(now == max, "registers differ from the expected maximum");
    bool now_invalid = false;
    Check(
        hll::Count(v.buf.data(), v.len, &now_invalid) == hll::CountRaw(max.data()) && !now_invalid,
        "count after adding differs");
  }
  return 0;
}
