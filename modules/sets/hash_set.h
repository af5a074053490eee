// HashSet: the large-set representation of the sets module ("hashtable" to OBJECT ENCODING).
//
// Members live in a dense array (16 bytes each: up to 15 bytes inline, longer ones in their own
// host allocation), and an open-addressing index (linear probing, 8-byte slots {position + 1,
// 32-bit hash}, at most 3/4 full) maps a member to its position. Removing a member
// moves the last one into its place. This gives:
//   - O(1) expected Insert/Erase/Contains, and O(1) uniform random access by position (SPOP,
//     SRANDMEMBER pick a position; no sampling of buckets, no copy of the set);
//   - a scan that never misses a member present for the whole iteration, across any number of
//     index resizes: positions are visited from the top down, a removal only moves the member at
//     the top into a lower hole (the top one was already visited, or both are still ahead),
//     insertions append above the cursor, and index rebuilds never move members;
//   - no per-member allocation for members up to 15 bytes: about 42 bytes per member for 1M
//     short members, where Redis 7.0 takes 56 (used_memory growth; bench/sets_bench.cc has the
//     per-representation numbers).
// Members are hashed with vsl::HashBytes32 (seeded at random when the module loads: hash
// flooding). All memory comes from the host allocator. Not thread-safe: values are used under key
// locks.
#ifndef VESSEL_MODULES_SETS_HASH_SET_H_
#define VESSEL_MODULES_SETS_HASH_SET_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vessel/util.hpp"

namespace vessel::sets {

class HashSet {
 public:
  // The largest member and the largest number of members a HashSet holds.
  static constexpr size_t kMaxMemberLen = (size_t{1} << 31) - 1;
  static constexpr size_t kMaxSize = UINT32_MAX - 1;

  HashSet() = default;
  ~HashSet();
  HashSet(const HashSet&) = delete;
  HashSet& operator=(const HashSet&) = delete;

  size_t size() const { return size_; }
  bool Contains(std::string_view s) const { return FindSlot(s, vsl::HashBytes32(s)) >= 0; }
  // Adds s; false when it was already a member. Throws std::bad_alloc (the set is unchanged).
  bool Insert(std::string_view s);
  // Removes s; false when it was not a member.
  bool Erase(std::string_view s);
  // The member at position i < size(); valid until the set changes.
  std::string_view At(size_t i) const { return members_[i].view(); }
  // Removes the member at position i < size(): the last member moves to position i.
  void EraseAt(size_t i);
  // Makes room for n members without growing again.
  void Reserve(size_t n);
  // Bytes owned (excluding the HashSet object itself), as the host allocator counts them.
  size_t MemUsage() const;
  HashSet* Clone() const;

 private:
  // A member: inline when raw[15] has the top bit set (length in its low bits, bytes in
  // raw[0..len)), else a pointer in raw[0..8), the length in raw[8..12) (little-endian by
  // shifts) and zeros after. Its hash lives only in the index.
  struct Member {
    unsigned char raw[16];

    bool is_inline() const { return (raw[15] & 0x80) != 0; }
    size_t len() const {
      if (is_inline()) return raw[15] & 0x7f;
      return size_t{raw[8]} | size_t{raw[9]} << 8 | size_t{raw[10]} << 16 | size_t{raw[11]} << 24;
    }
    const char* ptr() const {
      if (is_inline()) return reinterpret_cast<const char*>(raw);
      const char* p;
      std::memcpy(&p, raw, sizeof(p));
      return p;
    }
    std::string_view view() const { return {ptr(), len()}; }
  };
  static_assert(sizeof(Member) == 16);
  static constexpr size_t kMaxInline = 15;

  static uint64_t Slot(size_t pos, uint32_t hash) { return (uint64_t{hash} << 32) | (pos + 1); }
  static size_t SlotPos(uint64_t slot) { return static_cast<size_t>(slot & UINT32_MAX) - 1; }
  static uint32_t SlotHash(uint64_t slot) { return static_cast<uint32_t>(slot >> 32); }
  size_t Home(uint32_t hash) const {
    return static_cast<size_t>((uint64_t{hash} * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
  }
  size_t mask() const { return (size_t{1} << bits_) - 1; }
  size_t slots() const { return index_ == nullptr ? 0 : size_t{1} << bits_; }

  // The index slot holding s, or -1.
  ptrdiff_t FindSlot(std::string_view s, uint32_t hash) const;
  // The index slot pointing at position pos (found by hashing the member again).
  size_t SlotOf(size_t pos) const;
  void PlaceInIndex(uint64_t slot);
  // Empties index slot i, shifting later entries of its probe run back.
  void ClearSlot(size_t i);
  // Removes the member at pos whose index slot is `slot`.
  void Remove(size_t pos, size_t slot);
  void RebuildIndex(unsigned bits);
  void ResizeMembers(size_t cap);
  void MaybeShrink();
  Member MakeMember(std::string_view s);
  void FreeMember(const Member& m);

  Member* members_ = nullptr;
  uint32_t size_ = 0;
  uint32_t cap_ = 0;
  uint64_t* index_ = nullptr;  // 1 << bits_ slots; 0 = empty
  unsigned bits_ = 0;
  size_t heap_bytes_ = 0;  // usable bytes of the out-of-line members
};

}  // namespace vessel::sets

#endif  // VESSEL_MODULES_SETS_HASH_SET_H_
