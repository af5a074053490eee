// Redis Cluster's key-to-slot mapping (see slots.h).
#include "host/cluster/slots.h"

#include <array>
#include <bit>
#include <cstring>

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

}  // namespace

// Keys are hashed on every command in cluster mode (routing, then the key's hash carries the slot):
// eight bytes per step with independent lookups, then byte by byte.
uint16_t Crc16(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  uint16_t crc = 0;
  for (; n >= 8; n -= 8, p += 8) crc = Step8(crc, p);
  for (; n > 0; --n, ++p) crc = Step1(crc, *p);
  return crc;
}

uint16_t Crc16Reference(std::string_view bytes) { return Crc16Bytewise(bytes); }

// Crc16's steps, each one also looking for a '{' (eight bytes: a zero byte of w ^ 0x7B...7B): a
// key with one has a hash tag to look for.
uint16_t KeySlot(std::string_view key) {
  const auto* p = reinterpret_cast<const unsigned char*>(key.data());
  size_t n = key.size();
  uint16_t crc = 0;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, sizeof(w));
    const uint64_t x = w ^ 0x7B7B7B7B7B7B7B7Bull;
    if (((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0)
      return Crc16(HashTag(key)) & (kSlots - 1);
    crc = Step8(crc, p);
  }
  for (; n > 0; --n, ++p) {
    if (*p == '{') return Crc16(HashTag(key)) & (kSlots - 1);
    crc = Step1(crc, *p);
  }
  return crc & (kSlots - 1);
}

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
