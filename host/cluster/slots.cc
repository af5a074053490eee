// Redis Cluster's key-to-slot mapping (see slots.h).
#include "host/cluster/slots.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace vessel::cluster {
namespace {

// The byte-at-a-time table of the polynomial, built at compile time from its definition.
constexpr std::array<uint16_t, 256> MakeTable() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kTable = MakeTable();
static_assert(kTable[1] == 0x1021 && kTable[255] == 0x1EF0);

// The register after 16 more zero bits, from register r (the CRC is linear: this is also what two
// bytes XORed into the register become after two byte steps).
constexpr uint16_t Shift16(uint16_t r) {
  const auto hi = static_cast<uint16_t>((kTable[r >> 8] << 8) ^ kTable[kTable[r >> 8] >> 8]);
  return static_cast<uint16_t>(hi ^ kTable[r & 0xFF]);
}

// Eight bytes at a time (slicing): for b0..b7 and register r, byte pair j (b0b1 XORed with r)
// goes through 16 * (4 - j) zero bits (Shift16 applied 4 - j times), split by byte into a table:
// kSlice8[2j] for its high byte and kSlice8[2j + 1] for its low byte.
constexpr std::array<std::array<uint16_t, 256>, 8> MakeSlices8() {
  std::array<std::array<uint16_t, 256>, 8> t{};
  for (int x = 0; x < 256; ++x) {
    auto hi = static_cast<uint16_t>(x << 8), lo = static_cast<uint16_t>(x);
    for (int j = 3; j >= 0; --j) {
      hi = Shift16(hi);
      lo = Shift16(lo);
      t[2 * j][x] = hi;
      t[2 * j + 1][x] = lo;
    }
  }
  return t;
}

constexpr std::array<std::array<uint16_t, 256>, 8> kSlice8 = MakeSlices8();

uint16_t Step8(uint16_t crc, const unsigned char* p) {
  return static_cast<uint16_t>(kSlice8[0][(crc >> 8) ^ p[0]] ^ kSlice8[1][(crc & 0xFF) ^ p[1]] ^
                               kSlice8[2][p[2]] ^ kSlice8[3][p[3]] ^ kSlice8[4][p[4]] ^
                               kSlice8[5][p[5]] ^ kSlice8[6][p[6]] ^ kSlice8[7][p[7]]);
}

uint16_t Step1(uint16_t crc, unsigned char b) {
  return static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ b)]);
}

constexpr uint16_t Crc16Bytewise(std::string_view bytes) {
  uint16_t crc = 0;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ c) & 0xFF]);
  }
  return crc;
}

// Whether a '{' is among the eight bytes of w: a zero byte of w ^ 0x7B...7B.
constexpr bool HasBrace(uint64_t w) {
  const uint64_t x = w ^ 0x7B7B7B7B7B7B7B7Bull;
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

uint64_t LoadWord(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

// The steps by table, eight bytes then one at a time, for machines without carry-less
// multiplication. KeySlot's steps also look for a '{': a key with one has a hash tag to look for.
uint16_t Crc16Tables(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  uint16_t crc = 0;
  for (; n >= 8; n -= 8, p += 8) crc = Step8(crc, p);
  for (; n > 0; --n, ++p) crc = Step1(crc, *p);
  return crc;
}

uint16_t KeySlotTables(std::string_view key) {
  const auto* p = reinterpret_cast<const unsigned char*>(key.data());
  size_t n = key.size();
  uint16_t crc = 0;
  for (; n >= 8; n -= 8, p += 8) {
    if (HasBrace(LoadWord(p))) return Crc16Tables(HashTag(key)) & (kSlots - 1);
    crc = Step8(crc, p);
  }
  for (; n > 0; --n, ++p) {
    if (*p == '{') return Crc16Tables(HashTag(key)) & (kSlots - 1);
    crc = Step1(crc, *p);
  }
  return crc & (kSlots - 1);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VESSEL_CRC16_CLMUL 1
// Carry-less multiplication (PCLMULQDQ): eight bytes in two multiplications. The CRC of message M
// is M(x)·x^16 mod P(x). With register r and U the next eight bytes as a big-endian word, the next
// register is (U + r·x^48)·x^16 mod P. Barrett reduction gives V·x^16 mod P for any V of degree
// below 64 as the low 16 bits of q·P, with q = floor(V·mu / x^64) and mu = floor(x^80 / P): exact
// over GF(2), where no carry crosses from the low half. Zero bytes in front of a message do not
// change this CRC (initial value 0), so a key's first n % 8 bytes are one shorter word.

// floor(x^80 / P) by long division, without its x^64 term (the reduction adds V·x^64 itself).
constexpr uint64_t BarrettMu() {
  uint32_t window = 0x10000;  // dividend bits i .. i-16
  uint64_t q = 0;
  for (int i = 80; i >= 16; --i) {
    if (window & 0x10000) {
      window ^= 0x11021;
      if (i - 16 < 64) q |= uint64_t{1} << (i - 16);
    }
    window <<= 1;
  }
  return q;
}

constexpr uint64_t kMu = BarrettMu();

__attribute__((target("pclmul"))) inline uint64_t Reduce(uint64_t v) {
  const __m128i k = _mm_set_epi64x(0x1021, static_cast<int64_t>(kMu));
  const __m128i vq = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<int64_t>(v)), k, 0x00);
  const uint64_t q = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(vq, vq))) ^ v;
  const __m128i qp = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<int64_t>(q)), k, 0x10);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(qp)) & 0xFFFF;
}

// The CRC of p[0, n); with kTags, -1 as soon as a '{' is seen.
template <bool kTags>
__attribute__((target("pclmul"), always_inline)) inline int32_t CrcClmul(const unsigned char* p,
                                                                         size_t n) {
  uint64_t crc = 0;
  if (n < 8) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      if (kTags && p[i] == '{') return -1;
      v = v << 8 | p[i];
    }
    return n == 0 ? 0 : static_cast<int32_t>(Reduce(v));
  }
  if (const size_t head = n & 7) {  // the first word's first `head` bytes
    const uint64_t w = LoadWord(p);
    if (kTags && HasBrace(w)) return -1;
    crc = Reduce(__builtin_bswap64(w) >> (64 - 8 * head));
    p += head;
    n -= head;
  }
  for (; n > 0; n -= 8, p += 8) {
    const uint64_t w = LoadWord(p);
    if (kTags && HasBrace(w)) return -1;
    crc = Reduce(__builtin_bswap64(w) ^ crc << 48);
  }
  return static_cast<int32_t>(crc);
}

// Only the carry-less paths below run PCLMULQDQ (the compiler emits it for the intrinsics alone),
// and they run only where the processor has it.
const bool kHasClmul = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") != 0;
}();
#define VESSEL_TARGET_CLMUL __attribute__((target("pclmul")))
#else
#define VESSEL_TARGET_CLMUL
#endif

}  // namespace

// Keys are hashed on every command in cluster mode (routing, then the key's hash carries the slot).
VESSEL_TARGET_CLMUL uint16_t Crc16(std::string_view bytes) {
#ifdef VESSEL_CRC16_CLMUL
  if (kHasClmul) {
    return static_cast<uint16_t>(
        CrcClmul<false>(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
  }
#endif
  return Crc16Tables(bytes);
}

uint16_t Crc16Reference(std::string_view bytes) { return Crc16Bytewise(bytes); }

// One pass over a key without '{'.
VESSEL_TARGET_CLMUL uint16_t KeySlot(std::string_view key) {
#ifdef VESSEL_CRC16_CLMUL
  if (kHasClmul) {
    const int32_t crc =
        CrcClmul<true>(reinterpret_cast<const unsigned char*>(key.data()), key.size());
    if (crc >= 0) return static_cast<uint16_t>(crc & (kSlots - 1));
    return Crc16(HashTag(key)) & (kSlots - 1);
  }
#endif
  return KeySlotTables(key);
}

uint16_t Crc16Portable(std::string_view bytes) { return Crc16Tables(bytes); }
uint16_t KeySlotPortable(std::string_view key) { return KeySlotTables(key); }

std::string_view HashTag(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  // An unclosed or empty tag does not count: the whole key decides.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

int SlotBitmap::Count() const {
  int n = 0;
  for (uint8_t b : bytes_) n += std::popcount(b);
  return n;
}

}  // namespace vessel::cluster
