// libFuzzer target for the strings module's BITFIELD argument parser and bit operations
// (modules/strings/bits.cc): parsing arbitrary arguments, then running the operations on a
// buffer of exactly the size the command needs, checked against Redis's bit-by-bit definitions.
//
// Input layout: byte 0 picks proto-max-bulk-len (1 to 256 bytes), the rest is the arguments after
// the key, separated by 0xFF bytes (an argument may hold any other byte, NUL included).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "bits.h"

namespace {

namespace bits = vessel::strings::bits;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant failed: %s\n", what);
    std::abort();
  }
}

// Redis's getUnsignedBitfield / setUnsignedBitfield, one bit at a time.
uint64_t SlowGet(const std::vector<uint8_t>& p, uint64_t offset, int width) {
  uint64_t v = 0;
  for (int j = 0; j < width; ++j, ++offset) {
    const uint64_t byte = offset >> 3;
    const int bit = byte < p.size() ? (p[byte] >> (7 - (offset & 7))) & 1 : 0;
    v = v << 1 | static_cast<uint64_t>(bit);
  }
  return v;
}

void SlowSet(std::vector<uint8_t>& p, uint64_t offset, int width, uint64_t value) {
  for (int j = 0; j < width; ++j, ++offset) {
    const int bit = (value >> (width - 1 - j)) & 1;
    uint8_t& b = p[offset >> 3];
    b = static_cast<uint8_t>((b & ~(1 << (7 - (offset & 7)))) | (bit << (7 - (offset & 7))));
  }
}

int64_t SignExtend(uint64_t v, int width) {
  if (width < 64 && (v >> (width - 1)) & 1) v |= ~uint64_t{0} << width;
  return static_cast<int64_t>(v);
}

// Counting and searching against the naive definitions, on the buffer's bytes.
void CheckRanges(const std::vector<uint8_t>& p, uint64_t seed) {
  if (p.empty()) return;
  const uint64_t nbits = p.size() * 8;
  uint64_t first = seed % nbits, last = (seed >> 20) % nbits;
  if (first > last) std::swap(first, last);
  uint64_t ones = 0;
  int64_t first_one = -1, first_zero = -1;
  for (uint64_t i = first; i <= last; ++i) {
    const int b = (p[i >> 3] >> (7 - (i & 7))) & 1;
    ones += static_cast<uint64_t>(b);
    if (b && first_one < 0) first_one = static_cast<int64_t>(i);
    if (!b && first_zero < 0) first_zero = static_cast<int64_t>(i);
  }
  Check(bits::CountBits(p.data(), first, last) == ones, "CountBits");
  Check(bits::FindBit(p.data(), first, last, 1) == first_one, "FindBit(1)");
  Check(bits::FindBit(p.data(), first, last, 0) == first_zero, "FindBit(0)");
  uint64_t all = 0;
  for (uint8_t b : p) all += static_cast<uint64_t>(__builtin_popcount(b));
  Check(bits::PopCount(p.data(), p.size()) == all, "PopCount");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const uint64_t max_bulk_len = 1 + data[0];
  std::vector<std::string_view> args;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (size_t at = 0; at <= rest.size();) {
    const size_t end = std::min(rest.find('\xff', at), rest.size());
    args.push_back(rest.substr(at, end - at));
    at = end + 1;
  }

  bits::FieldCommand cmd;
  if (!bits::ParseBitfield(args, max_bulk_len, &cmd)) {
    Check(!cmd.error.empty(), "failure without an error");
    return 0;
  }
  bool any_write = false;
  for (const bits::FieldOp& op : cmd.ops) {
    Check(op.bits >= 1 && op.bits <= (op.is_signed ? 64 : 63), "width out of range");
    Check((op.offset >> 3) < max_bulk_len, "offset past proto-max-bulk-len");
    any_write |= op.kind != bits::FieldOp::Kind::kGet;
  }
  Check(any_write != cmd.readonly, "readonly flag wrong");

  // The buffer a write needs, exactly (so ASan sees any access past it); GETs also read past it.
  std::vector<uint8_t> buf(cmd.readonly ? 0 : (cmd.highest_write_bit >> 3) + 1);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 37 + size);
  for (const bits::FieldOp& op : cmd.ops) {
    const uint64_t raw = SlowGet(buf, op.offset, op.bits);
    if (op.kind == bits::FieldOp::Kind::kGet) {
      if (op.is_signed) {
        Check(
            bits::GetSigned(buf.data(), buf.size(), op.offset, op.bits) == SignExtend(raw, op.bits),
            "GetSigned");
      } else {
        Check(bits::GetUnsigned(buf.data(), buf.size(), op.offset, op.bits) == raw, "GetUnsigned");
      }
      continue;
    }
    std::vector<uint8_t> before = buf;
    int64_t reply;
    bool changed;
    const bool written = bits::ApplyField(buf.data(), buf.size(), op, &reply, &changed);
    if (!written) {
      Check(op.overflow == bits::Overflow::kFail, "nothing written without FAIL");
      Check(buf == before, "a failed operation wrote");
      continue;
    }
    const uint64_t now = SlowGet(buf, op.offset, op.bits);
    const int64_t old_value = op.is_signed ? SignExtend(raw, op.bits) : static_cast<int64_t>(raw);
    const int64_t new_value = op.is_signed ? SignExtend(now, op.bits) : static_cast<int64_t>(now);
    Check(changed == (raw != now), "changed flag wrong");
    Check(reply == (op.kind == bits::FieldOp::Kind::kSet ? old_value : new_value), "reply");
    if (op.overflow == bits::Overflow::kWrap) {
      const uint64_t base = op.kind == bits::FieldOp::Kind::kSet ? 0 : raw;
      const uint64_t mask = op.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << op.bits) - 1;
      Check(now == ((base + static_cast<uint64_t>(op.value)) & mask), "WRAP arithmetic");
    }
    SlowSet(before, op.offset, op.bits, now);  // every other bit is unchanged
    Check(buf == before, "bits outside the field changed");
  }
  CheckRanges(buf, size * 2654435761u);
  CheckRanges(std::vector<uint8_t>(data, data + size), size * 40503u + data[0]);
  return 0;
}
