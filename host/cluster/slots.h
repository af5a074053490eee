// Redis Cluster's key-to-slot mapping: CRC16 (the XMODEM variant) of the key, or of its hash tag,
// modulo 16384, and the slot bitmap of the bus. Pure functions, safe from any thread.
#ifndef VESSEL_HOST_CLUSTER_SLOTS_H_
#define VESSEL_HOST_CLUSTER_SLOTS_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace vessel::cluster {

inline constexpr int kSlots = 16384;

// CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor ("123456789"
// gives 0x31C3).
uint16_t Crc16(std::string_view bytes);
// The same, one byte at a time (the definition Crc16's faster steps are tested against).
uint16_t Crc16Reference(std::string_view bytes);
// Crc16 and KeySlot by table steps, as they run on a machine without carry-less multiplication
// (x86-64 uses PCLMULQDQ when the processor has it); for the tests.
uint16_t Crc16Portable(std::string_view bytes);
uint16_t KeySlotPortable(std::string_view key);

// The part of `key` that decides its slot: the bytes between the first '{' and the first '}'
// after it when that is not empty, otherwise the whole key ("{user}.a" -> "user",
// "foo{}{bar}" -> "foo{}{bar}", "foo{{bar}}" -> "{bar").
std::string_view HashTag(std::string_view key);

// The slot of `key`, in [0, kSlots), as CLUSTER KEYSLOT answers it: Crc16(HashTag(key)) modulo
// kSlots, in one pass over a key without '{'.
uint16_t KeySlot(std::string_view key);

// A 16384-bit slot bitmap as Redis lays it out: slot s is bit (s % 8) of byte s / 8.
class SlotBitmap {
 public:
  bool Test(int slot) const { return bytes_[slot >> 3] & (1u << (slot & 7)); }
  void Set(int slot) { bytes_[slot >> 3] |= static_cast<uint8_t>(1u << (slot & 7)); }
  void Clear(int slot) { bytes_[slot >> 3] &= static_cast<uint8_t>(~(1u << (slot & 7))); }
  void SetRange(int first, int last) {
    for (int s = first; s <= last; ++s) Set(s);
  }
  int Count() const;
  std::array<uint8_t, kSlots / 8>& bytes() { return bytes_; }
  const std::array<uint8_t, kSlots / 8>& bytes() const { return bytes_; }
  bool operator==(const SlotBitmap&) const = default;

 private:
  std::array<uint8_t, kSlots / 8> bytes_{};
};

}  // namespace vessel::cluster

#endif  // VESSEL_HOST_CLUSTER_SLOTS_H_
