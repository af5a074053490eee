// Pure bit-string operations: popcount kernels chosen at startup for the CPU (AVX2, POPCNT or
// portable SWAR), bit search, BITOP, the bitfield codec with Redis's overflow rules, and the
// BITFIELD argument parser.
#include "bits.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace vessel::strings::bits {
namespace {

uint64_t Load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

// Portable: SWAR popcount of 8-byte words.
uint64_t Swar(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return (x * 0x0101010101010101ull) >> 56;
}

uint64_t PopCountPortable(const uint8_t* p, size_t n) {
  uint64_t a = 0, b = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a += Swar(Load64(p + i));
    b += Swar(Load64(p + i + 8));
  }
  for (; i < n; ++i) a += Swar(p[i]);
  return a + b;
}

// The POPCNT instruction over 8-byte words, four independent sums.
__attribute__((target("popcnt"))) uint64_t PopCountPopcnt(const uint8_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a += __builtin_popcountll(Load64(p + i));
    b += __builtin_popcountll(Load64(p + i + 8));
    c += __builtin_popcountll(Load64(p + i + 16));
    d += __builtin_popcountll(Load64(p + i + 24));
  }
  for (; i + 8 <= n; i += 8) a += __builtin_popcountll(Load64(p + i));
  for (; i < n; ++i) a += __builtin_popcount(p[i]);
  return a + b + c + d;
}

// AVX2: a nibble lookup table per byte (VPSHUFB), byte sums folded with VPSADBW every 31
// blocks of 32 bytes (a byte lane then holds at most 8 * 31 = 248).
__attribute__((target("avx2,popcnt"))) uint64_t PopCountAvx2(const uint8_t* p, size_t n) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0F);
  __m256i total = _mm256_setzero_si256();
  size_t i = 0;
  while (i + 32 <= n) {
    const size_t blocks = std::min<size_t>((n - i) / 32, 31);
    __m256i acc = _mm256_setzero_si256();
    for (size_t k = 0; k < blocks; ++k, i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
      const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
      acc = _mm256_add_epi8(acc, _mm256_add_epi8(lo, hi));
    }
    total = _mm256_add_epi64(total, _mm256_sad_epu8(acc, _mm256_setzero_si256()));
  }
  uint64_t sum = static_cast<uint64_t>(_mm256_extract_epi64(total, 0)) +
                 static_cast<uint64_t>(_mm256_extract_epi64(total, 1)) +
                 static_cast<uint64_t>(_mm256_extract_epi64(total, 2)) +
                 static_cast<uint64_t>(_mm256_extract_epi64(total, 3));
  return sum + PopCountPopcnt(p + i, n - i);
}

using PopCountFn = uint64_t (*)(const uint8_t*, size_t);

PopCountFn PickPopCount() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) return PopCountAvx2;
  if (__builtin_cpu_supports("popcnt")) return PopCountPopcnt;
  return PopCountPortable;
}

const PopCountFn kPopCount = PickPopCount();

// The bits of byte b from bit `from` to bit `to` (inclusive, 0 = MSB).
uint8_t ByteMask(int from, int to) {
  return static_cast<uint8_t>((0xFF >> from) & (0xFF << (7 - to)));
}

}  // namespace

bool WordIs(std::string_view arg, std::string_view word) {
  arg = arg.substr(0, arg.find('\0'));
  if (arg.size() != word.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i) {
    char a = arg[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a + 32);
    if (a != word[i]) return false;
  }
  return true;
}

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() >= 21) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == s.size()) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

uint64_t PopCount(const uint8_t* p, size_t n) { return kPopCount(p, n); }

uint64_t CountBits(const uint8_t* p, uint64_t first, uint64_t last) {
  const uint64_t fb = first >> 3, lb = last >> 3;
  const int fo = static_cast<int>(first & 7), lo = static_cast<int>(last & 7);
  if (fb == lb) return static_cast<uint64_t>(__builtin_popcount(p[fb] & ByteMask(fo, lo)));
  uint64_t n = static_cast<uint64_t>(__builtin_popcount(p[fb] & ByteMask(fo, 7))) +
               static_cast<uint64_t>(__builtin_popcount(p[lb] & ByteMask(0, lo)));
  return n + PopCount(p + fb + 1, lb - fb - 1);
}

int64_t FindBit(const uint8_t* p, uint64_t first, uint64_t last, int bit) {
  const uint8_t flip8 = bit ? 0 : 0xFF;
  const uint64_t flip64 = bit ? 0 : ~uint64_t{0};
  uint64_t pos = first;
  // Bit by bit up to a byte boundary, then words, bytes, and the last bits.
  for (; pos <= last && (pos & 7) != 0; ++pos) {
    if (((p[pos >> 3] >> (7 - (pos & 7))) & 1) == bit) return static_cast<int64_t>(pos);
  }
  for (; pos + 63 <= last && pos <= last; pos += 64) {
    const uint64_t w = __builtin_bswap64(Load64(p + (pos >> 3))) ^ flip64;
    if (w != 0) return static_cast<int64_t>(pos + __builtin_clzll(w));
  }
  for (; pos + 7 <= last && pos <= last; pos += 8) {
    const unsigned b = static_cast<uint8_t>(p[pos >> 3] ^ flip8);
    if (b != 0) return static_cast<int64_t>(pos + __builtin_clz(b) - 24);
  }
  for (; pos <= last; ++pos) {
    if (((p[pos >> 3] >> (7 - (pos & 7))) & 1) == bit) return static_cast<int64_t>(pos);
  }
  return -1;
}

namespace {

// 16 bytes at a time through GCC/Clang vector types: SSE2 on x86-64, whatever the target has
// elsewhere (the compiler does not vectorise byte loops at -O2).
using Block = uint8_t __attribute__((vector_size(16)));

// out[i] = a[i] op b[i] for i < n (NOT: out[i] = ~b[i]); out may be a itself.
template <BitOp kOp>
void Apply(uint8_t* out, const uint8_t* a, const uint8_t* b, size_t n) {
  auto op = [](auto x, auto y) {
    if constexpr (kOp == BitOp::kAnd) return x & y;
    if constexpr (kOp == BitOp::kOr) return x | y;
    if constexpr (kOp == BitOp::kXor) return x ^ y;
    if constexpr (kOp == BitOp::kNot) return ~y;
  };
  auto load = [](const uint8_t* p) {
    Block v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  auto store = [](uint8_t* p, Block v) { std::memcpy(p, &v, sizeof(v)); };
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {  // four independent blocks (registers, not memory)
    const Block r0 = op(load(a + i), load(b + i));
    const Block r1 = op(load(a + i + 16), load(b + i + 16));
    const Block r2 = op(load(a + i + 32), load(b + i + 32));
    const Block r3 = op(load(a + i + 48), load(b + i + 48));
    store(out + i, r0);
    store(out + i + 16, r1);
    store(out + i + 32, r2);
    store(out + i + 48, r3);
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(op(a[i], b[i]));
}

void Apply(BitOp op, uint8_t* out, const uint8_t* a, const uint8_t* b, size_t n) {
  switch (op) {
    case BitOp::kAnd:
      return Apply<BitOp::kAnd>(out, a, b, n);
    case BitOp::kOr:
      return Apply<BitOp::kOr>(out, a, b, n);
    case BitOp::kXor:
      return Apply<BitOp::kXor>(out, a, b, n);
    case BitOp::kNot:
      return Apply<BitOp::kNot>(out, a, b, n);
  }
}

const uint8_t* Data(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

}  // namespace

void Combine(BitOp op, std::span<const std::string_view> srcs, uint8_t* out, size_t n) {
  const std::string_view first = srcs[0];
  if (op == BitOp::kNot) return Apply(op, out, out, Data(first), n);
  // The first two sources in one pass; past the shorter one, AND gives zeros and OR/XOR the
  // longer one's bytes.
  size_t k = 1;
  if (srcs.size() >= 2) {
    const std::string_view second = srcs[1];
    const std::string_view longer = first.size() >= second.size() ? first : second;
    const size_t m = std::min(first.size(), second.size());
    Apply(op, out, Data(first), Data(second), m);
    const size_t tail = op == BitOp::kAnd ? 0 : longer.size() - m;
    if (tail != 0) std::memcpy(out + m, longer.data() + m, tail);
    std::memset(out + m + tail, 0, n - m - tail);
    k = 2;
  } else {
    if (!first.empty()) std::memcpy(out, first.data(), first.size());
    std::memset(out + first.size(), 0, n - first.size());
  }
  for (; k < srcs.size(); ++k) {
    const size_t m = srcs[k].size();
    Apply(op, out, out, Data(srcs[k]), m);
    if (op == BitOp::kAnd) std::memset(out + m, 0, n - m);
  }
}

uint64_t GetUnsigned(const uint8_t* p, size_t len, uint64_t offset, int bits) {
  // The (at most) 9 bytes holding the field, as one big-endian 72-bit number.
  const uint64_t byte = offset >> 3;
  const int shift = static_cast<int>(offset & 7);
  unsigned __int128 x = 0;
  for (uint64_t i = 0; i < 9; ++i) {
    x <<= 8;
    if (byte + i < len) x |= p[byte + i];
  }
  x >>= 72 - shift - bits;
  return bits == 64 ? static_cast<uint64_t>(x)
                    : static_cast<uint64_t>(x) & ((uint64_t{1} << bits) - 1);
}

int64_t GetSigned(const uint8_t* p, size_t len, uint64_t offset, int bits) {
  uint64_t v = GetUnsigned(p, len, offset, bits);
  if (bits < 64 && (v & (uint64_t{1} << (bits - 1)))) v |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(v);
}

void SetUnsigned(uint8_t* p, uint64_t offset, int bits, uint64_t value) {
  const uint64_t byte = offset >> 3;
  const int shift = static_cast<int>(offset & 7);
  const int nbytes = (shift + bits + 7) / 8;
  const int pad = nbytes * 8 - shift - bits;  // unused low bits of the last byte
  const unsigned __int128 ones = (static_cast<unsigned __int128>(1) << bits) - 1;
  unsigned __int128 mask = ones << pad;
  unsigned __int128 v = (static_cast<unsigned __int128>(value) & ones) << pad;
  for (int i = nbytes - 1; i >= 0; --i) {
    const auto m = static_cast<uint8_t>(mask);
    p[byte + i] = static_cast<uint8_t>((p[byte + i] & ~m) | (static_cast<uint8_t>(v) & m));
    mask >>= 8;
    v >>= 8;
  }
}

int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, Overflow ow, uint64_t* limit) {
  const uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  const auto maxincr = static_cast<int64_t>(max - value);
  const auto minincr = static_cast<int64_t>(0 - value);
  int r = 0;
  if (value > max || (incr > 0 && incr > maxincr)) {
    r = 1;
  } else if (incr < 0 && incr < minincr) {
    r = -1;
  }
  if (r != 0 && limit != nullptr) {
    if (ow == Overflow::kWrap) *limit = (value + static_cast<uint64_t>(incr)) & max;
    if (ow == Overflow::kSat) *limit = r > 0 ? max : 0;
  }
  return r;
}

int CheckSignedOverflow(int64_t value, int64_t incr, int bits, Overflow ow, int64_t* limit) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // As in Redis, computed with wrap-around: only used once value is known to be in range,
  // except for the out-of-range SET values whose quirks Redis has too.
  const auto maxincr =
      static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const auto minincr =
      static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  int r = 0;
  if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) {
    r = 1;
  } else if (value < min || (bits != 64 && incr < minincr) ||
             (value < 0 && incr < 0 && incr < minincr)) {
    r = -1;
  }
  if (r != 0 && limit != nullptr) {
    if (ow == Overflow::kWrap) {
      uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
      if (bits < 64) {
        const uint64_t high = ~uint64_t{0} << bits;
        c = (c & (uint64_t{1} << (bits - 1))) ? (c | high) : (c & ~high);
      }
      *limit = static_cast<int64_t>(c);
    }
    if (ow == Overflow::kSat) *limit = r > 0 ? max : min;
  }
  return r;
}

bool ApplyField(uint8_t* p, size_t len, const FieldOp& op, int64_t* reply, bool* changed) {
  const bool incr = op.kind == FieldOp::Kind::kIncrBy;
  int overflow;
  uint64_t stored;
  if (op.is_signed) {
    const int64_t old = GetSigned(p, len, op.offset, op.bits);
    int64_t limit = 0;
    int64_t v;
    if (incr) {
      overflow = CheckSignedOverflow(old, op.value, op.bits, op.overflow, &limit);
      v = overflow
              ? limit
              : static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value));
    } else {
      overflow = CheckSignedOverflow(op.value, 0, op.bits, op.overflow, &limit);
      v = overflow ? limit : op.value;
    }
    *reply = incr ? v : old;
    *changed = v != old;
    stored = static_cast<uint64_t>(v);
  } else {
    const uint64_t old = GetUnsigned(p, len, op.offset, op.bits);
    uint64_t limit = 0;
    uint64_t v;
    if (incr) {
      overflow = CheckUnsignedOverflow(old, op.value, op.bits, op.overflow, &limit);
      v = overflow ? limit : old + static_cast<uint64_t>(op.value);
    } else {
      overflow =
          CheckUnsignedOverflow(static_cast<uint64_t>(op.value), 0, op.bits, op.overflow, &limit);
      v = overflow ? limit : static_cast<uint64_t>(op.value);
    }
    *reply = static_cast<int64_t>(incr ? v : old);
    *changed = v != old;
    stored = v;
  }
  if (overflow != 0 && op.overflow == Overflow::kFail) return false;
  SetUnsigned(p, op.offset, op.bits, stored);
  return true;
}

bool ParseBitOffset(std::string_view s, bool hash, int bits, uint64_t max_bulk_len, uint64_t* out) {
  const bool use_hash = hash && bits > 0 && !s.empty() && s[0] == '#';
  int64_t v;
  if (!ParseInt64(use_hash ? s.substr(1) : s, &v)) return false;
  if (use_hash) v = static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(bits));
  if (v < 0 || static_cast<uint64_t>(v >> 3) >= max_bulk_len) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

namespace {

// A bitfield type: 'i' or 'u', then the width; the width stops at a NUL, as strlen does there.
bool ParseFieldType(std::string_view s, bool* is_signed, int* bits) {
  if (s.empty() || (s[0] != 'i' && s[0] != 'u')) return false;
  *is_signed = s[0] == 'i';
  std::string_view width = s.substr(1);
  width = width.substr(0, width.find('\0'));
  int64_t v;
  if (!ParseInt64(width, &v) || v < 1 || v > (*is_signed ? 64 : 63)) return false;
  *bits = static_cast<int>(v);
  return true;
}

}  // namespace

bool ParseBitfield(std::span<const std::string_view> args, uint64_t max_bulk_len,
                   FieldCommand* out) {
  Overflow overflow = Overflow::kWrap;
  const size_t n = args.size();
  for (size_t j = 0; j < n; ++j) {
    const size_t remaining = n - j - 1;
    FieldOp op{};
    if (WordIs(args[j], "get") && remaining >= 2) {
      op.kind = FieldOp::Kind::kGet;
    } else if (WordIs(args[j], "set") && remaining >= 3) {
      op.kind = FieldOp::Kind::kSet;
    } else if (WordIs(args[j], "incrby") && remaining >= 3) {
      op.kind = FieldOp::Kind::kIncrBy;
    } else if (WordIs(args[j], "overflow") && remaining >= 1) {
      const std::string_view type = args[++j];
      if (WordIs(type, "wrap")) {
        overflow = Overflow::kWrap;
      } else if (WordIs(type, "sat")) {
        overflow = Overflow::kSat;
      } else if (WordIs(type, "fail")) {
        overflow = Overflow::kFail;
      } else {
        out->error = "Invalid OVERFLOW type specified";
        return false;
      }
      continue;
    } else {
      out->error = "syntax error";
      return false;
    }
    if (!ParseFieldType(args[j + 1], &op.is_signed, &op.bits)) {
      out->error = kTypeError;
      return false;
    }
    if (!ParseBitOffset(args[j + 2], true, op.bits, max_bulk_len, &op.offset)) {
      out->error = kOffsetError;
      return false;
    }
    if (op.kind != FieldOp::Kind::kGet) {
      out->readonly = false;
      out->highest_write_bit =
          std::max(out->highest_write_bit, op.offset + static_cast<uint64_t>(op.bits) - 1);
      if (!ParseInt64(args[j + 3], &op.value)) {
        out->error = "value is not an integer or out of range";
        return false;
      }
    }
    op.overflow = overflow;
    out->ops.push_back(op);
    j += op.kind == FieldOp::Kind::kGet ? 2 : 3;
  }
  return true;
}

}  // namespace vessel::strings::bits
