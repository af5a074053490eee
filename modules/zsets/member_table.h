// MemberTable: the member -> score half of a large sorted set ("skiplist" to OBJECT ENCODING; the
// order half is OrderTree, order_tree.h).
//
// Entries are 24-byte slots {member cell, score} addressed by a position that never changes
// while the member is in the set; a removed member leaves a hole (NaN score, a link in the free
// list) that the next insertion reuses. The slots live in chunks of 4096 (96 KiB; the first
// chunk grows up to that size), so the table grows without copying and wastes at most one
// chunk. An open-addressing index (linear probing, 8-byte slots {32-bit hash, position + 1},
// any number of slots, 5/8 to 3/4 full) maps a member to its position, so ZSCORE and
// membership are O(1). When holes outnumber members the entries are compacted in place,
// keeping their relative order (positions only move down), and the caller remaps the positions
// it keeps (OrderTree::Remap).
//
// Stable positions give the sorted set O(1) random access by position (ZRANDMEMBER picks a
// position and retries on a hole, at most half of them) and a ZSCAN cursor with Redis's
// guarantee: positions are visited from the top down, insertions fill holes or append above
// the top, and compaction only moves members down, so a member present for the whole scan is
// returned at least once.
//
// Members of up to 15 bytes live inline in their cell; longer ones in their own host
// allocation. Members are hashed with vsl::HashBytes32 (seeded at random when the module loads:
// hash flooding). Not thread-safe: values are used under their key's lock.
#ifndef VESSEL_MODULES_ZSETS_MEMBER_TABLE_H_
#define VESSEL_MODULES_ZSETS_MEMBER_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "vessel/util.hpp"

namespace vessel::zsets {

// A member's bytes: inline when raw[15] has the top bit (length in its low bits), else a
// pointer in raw[0..8) and the length in raw[8..15).
struct Cell {
  unsigned char raw[16];

  static constexpr size_t kMaxInline = 15;
  bool is_inline() const { return (raw[15] & 0x80) != 0; }
  size_t size() const {
    if (is_inline()) return raw[15] & 0x7f;
    uint64_t n = 0;
    for (int i = 14; i >= 8; --i) n = (n << 8) | raw[i];
    return static_cast<size_t>(n);
  }
  const char* data() const {
    if (is_inline()) return reinterpret_cast<const char*>(raw);
    const char* p;
    std::memcpy(&p, raw, sizeof(p));
    return p;
  }
  std::string_view view() const { return {data(), size()}; }
};
static_assert(sizeof(Cell) == 16);

class MemberTable {
 public:
  static constexpr uint32_t kMaxSize = UINT32_MAX - 1;

  MemberTable() = default;
  ~MemberTable();
  MemberTable(const MemberTable&) = delete;
  MemberTable& operator=(const MemberTable&) = delete;

  size_t size() const { return live_; }
  // Positions are in [0, high()); some may be holes.
  uint32_t high() const { return high_; }
  bool Live(uint32_t pos) const { return !IsHole(At(pos)); }
  std::string_view Member(uint32_t pos) const { return At(pos).member.view(); }
  double Score(uint32_t pos) const { return At(pos).score; }
  void SetScore(uint32_t pos, double score) { At(pos).score = score; }

  // The position of m, or -1.
  int64_t Find(std::string_view m) const;
  // Adds m (not a member yet) with `score`; returns its position. Throws std::bad_alloc with
  // the table unchanged.
  uint32_t Insert(std::string_view m, double score);
  // Removes the member at pos. Never throws; never moves another member.
  void Erase(uint32_t pos);
  // Makes room for n members in all.
  void Reserve(size_t n);

  // True when holes outnumber members enough that Compact() should run.
  bool WantsCompaction() const { return high_ >= 64 && size_t{live_} * 2 < high_; }
  // Moves the members down over the holes, keeping their order; map[old] = new position for
  // every live old position (map has room for high() entries). Frees the chunks left empty
  // and shrinks the index. Never throws (shrinking is best effort).
  void Compact(uint32_t* map);

  // A uniformly random live position (the table is not empty); `random` is a source of
  // uniform 64-bit numbers.
  template <class R>
  uint32_t RandomLive(R&& random) const {
    for (;;) {
      const auto p =
          static_cast<uint32_t>((static_cast<unsigned __int128>(random()) * high_) >> 64);
      if (Live(p)) return p;
    }
  }

  // Bytes owned, as the host allocator counts them (excluding the table object itself).
  size_t MemUsage() const;
  // Makes this (empty) table a copy of `other`, positions included. Throws std::bad_alloc.
  void CopyFrom(const MemberTable& other);

 private:
  struct Entry {
    Cell member;
    double score;  // NaN marks a hole; its member raw[0..4) then holds the next hole + 1
  };
  static_assert(sizeof(Entry) == 24);
  static constexpr unsigned kChunkBits = 12;
  static constexpr uint32_t kChunk = uint32_t{1} << kChunkBits;  // entries per chunk

  static bool IsHole(const Entry& e) { return e.score != e.score; }
  Entry& At(uint32_t pos) const { return chunks_[pos >> kChunkBits][pos & (kChunk - 1)]; }

  static uint64_t Slot(uint32_t pos, uint32_t hash) { return (uint64_t{hash} << 32) | (pos + 1u); }
  static uint32_t SlotPos(uint64_t slot) { return static_cast<uint32_t>(slot) - 1u; }
  static uint32_t SlotHash(uint64_t slot) { return static_cast<uint32_t>(slot >> 32); }
  size_t Home(uint32_t hash) const { return static_cast<size_t>((uint64_t{hash} * slots_) >> 32); }
  size_t Next(size_t i) const { return i + 1 == slots_ ? 0 : i + 1; }
  static size_t SlotsFor(size_t n) { return n < 5 ? 8 : n * 8 / 5; }
  bool IndexFull(size_t n) const { return n > slots_ * 3 / 4; }

  ptrdiff_t FindSlot(std::string_view m, uint32_t hash) const;
  void PlaceInIndex(uint64_t slot);
  void ClearSlot(size_t i);
  void RebuildIndex(size_t slots);
  // Room for one more entry at position high_.
  void Grow();
  void GrowTo(size_t n);
  void FreeChunks();

  Entry** chunks_ = nullptr;  // chunk i holds positions [i * kChunk, (i + 1) * kChunk)
  uint32_t n_chunks_ = 0;
  uint32_t table_cap_ = 0;  // room in chunks_ for chunk pointers
  uint32_t high_ = 0;       // positions [0, high_) are members or holes
  uint32_t cap_ = 0;        // positions with storage
  uint32_t live_ = 0;
  uint32_t free_ = 0;  // first hole + 1, 0 = none
  uint64_t* index_ = nullptr;
  size_t slots_ = 0;
  size_t heap_bytes_ = 0;  // usable bytes of the out-of-line members
};

}  // namespace vessel::zsets

#endif  // VESSEL_MODULES_ZSETS_MEMBER_TABLE_H_
