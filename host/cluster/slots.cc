// Redis Cluster's key-to-slot mapping (see slots.h).
#include "host/cluster/slots.h"

#include <array>
#include <bit>

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

// Four bytes at a time (slicing): for b0..b3 and register r,
//   r' = Shift32(r ^ b0b1) ^ Shift16(b2b3),
// each Shift split by byte into a table: kSlice[0..1] the high and low byte through 32 zero bits,
// kSlice[2..3] through 16.
constexpr std::array<std::array<uint16_t, 256>, 4> MakeSlices() {
  std::array<std::array<uint16_t, 256>, 4> t{};
  for (int x = 0; x < 256; ++x) {
    const auto hi = static_cast<uint16_t>(x << 8), lo = static_cast<uint16_t>(x);
    t[0][x] = Shift16(Shift16(hi));
    t[1][x] = Shift16(Shift16(lo));
    t[2][x] = Shift16(hi);
    t[3][x] = Shift16(lo);
  }
  return t;
}

constexpr std::array<std::array<uint16_t, 256>, 4> kSlice = MakeSlices();

constexpr uint16_t Crc16Bytewise(std::string_view bytes) {
  uint16_t crc = 0;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ c) & 0xFF]);
  }
  return crc;
}

}  // namespace

// Keys are hashed on every command in cluster mode (routing and the key's hash): four bytes per
// step with independent lookups, then byte by byte.
uint16_t Crc16(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  uint16_t crc = 0;
  for (; n >= 4; n -= 4, p += 4) {
    crc = static_cast<uint16_t>(kSlice[0][(crc >> 8) ^ p[0]] ^ kSlice[1][(crc & 0xFF) ^ p[1]] ^
                                kSlice[2][p[2]] ^ kSlice[3][p[3]]);
  }
  for (; n > 0; --n, ++p) crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ *p)]);
  return crc;
}

uint16_t Crc16Reference(std::string_view bytes) { return Crc16Bytewise(bytes); }

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
