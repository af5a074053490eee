// MemberTable: the dense entry array with stable positions, the free list of holes and the
// open-addressing member index.
#include "member_table.h"

#include <algorithm>
#include <new>

#include "vessel/module.hpp"

namespace vessel::zsets {
namespace {

size_t Usable(const void* p) {
  return p == nullptr ? 0 : vsl::Api().usable_size(const_cast<void*>(p));
}

Cell MakeCell(std::string_view s) {
  Cell c{};
  if (s.size() <= Cell::kMaxInline) {
    if (!s.empty()) std::memcpy(c.raw, s.data(), s.size());
    c.raw[15] = static_cast<unsigned char>(0x80 | s.size());
    return c;
  }
  void* p = vsl::Alloc(s.size());
  std::memcpy(p, s.data(), s.size());
  std::memcpy(c.raw, &p, sizeof(p));
  uint64_t n = s.size();
  for (int i = 8; i < 15; ++i, n >>= 8) c.raw[i] = static_cast<unsigned char>(n);
  return c;
}

}  // namespace

MemberTable::~MemberTable() {
  for (uint32_t i = 0; i < high_; ++i) {
    const Entry& e = At(i);
    if (!IsHole(e) && !e.member.is_inline()) vsl::Free(const_cast<char*>(e.member.data()));
  }
  FreeChunks();
  vsl::Free(index_);
}

void MemberTable::FreeChunks() {
  for (uint32_t i = 0; i < n_chunks_; ++i) vsl::Free(chunks_[i]);
  vsl::Free(chunks_);
  chunks_ = nullptr;
  n_chunks_ = table_cap_ = cap_ = 0;
}

ptrdiff_t MemberTable::FindSlot(std::string_view m, uint32_t hash) const {
  if (index_ == nullptr) return -1;
  for (size_t i = Home(hash);; i = Next(i)) {
    const uint64_t s = index_[i];
    if (s == 0) return -1;
    if (SlotHash(s) == hash && At(SlotPos(s)).member.view() == m) {
      return static_cast<ptrdiff_t>(i);
    }
  }
}

int64_t MemberTable::Find(std::string_view m) const {
  const ptrdiff_t i = FindSlot(m, vsl::HashBytes32(m));
  return i < 0 ? int64_t{-1} : int64_t{SlotPos(index_[i])};
}

void MemberTable::PlaceInIndex(uint64_t slot) {
  size_t i = Home(SlotHash(slot));
  while (index_[i] != 0) i = Next(i);
  index_[i] = slot;
}

// Backward-shift deletion: later entries of the probe run move back so no lookup stops early.
void MemberTable::ClearSlot(size_t i) {
  size_t j = i;
  for (;;) {
    index_[i] = 0;
    for (;;) {
      j = Next(j);
      if (index_[j] == 0) return;
      const size_t home = Home(SlotHash(index_[j]));
      // index_[j] may move to i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) break;
    }
    index_[i] = index_[j];
    i = j;
  }
}

// Rebuilds the index with `slots` slots from the old slots (their hashes are kept): allocates
// first, so a failure leaves the index as it was.
void MemberTable::RebuildIndex(size_t slots) {
  auto* fresh = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) * slots));
  std::memset(fresh, 0, sizeof(uint64_t) * slots);
  uint64_t* old = index_;
  const size_t old_slots = old == nullptr ? 0 : slots_;
  index_ = fresh;
  slots_ = slots;
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i] != 0) PlaceInIndex(old[i]);
  }
  vsl::Free(old);
}

// Storage for positions [0, n): the first chunk grows by half up to a full chunk, then whole
// chunks are added. Throws std::bad_alloc with the storage as it was (or larger).
void MemberTable::GrowTo(size_t n) {
  if (n > kMaxSize) throw std::bad_alloc();
  while (cap_ < n) {
    if (n_chunks_ <= 1 && cap_ < kChunk) {  // the first chunk, still growing
      const size_t want = std::min<size_t>(kChunk, std::max<size_t>({8, n, cap_ + cap_ / 2}));
      if (n_chunks_ == 0) {
        chunks_ = static_cast<Entry**>(vsl::Alloc(sizeof(Entry*) * 4));
        table_cap_ = 4;
        chunks_[0] = nullptr;
      }
      void* p = vsl::Api().realloc(chunks_[0], sizeof(Entry) * want);
      if (p == nullptr) throw std::bad_alloc();
      chunks_[0] = static_cast<Entry*>(p);
      n_chunks_ = 1;
      cap_ = static_cast<uint32_t>(want);
      continue;
    }
    if (n_chunks_ == table_cap_) {
      void* p = vsl::Api().realloc(chunks_, sizeof(Entry*) * table_cap_ * 2);
      if (p == nullptr) throw std::bad_alloc();
      chunks_ = static_cast<Entry**>(p);
      table_cap_ *= 2;
    }
    chunks_[n_chunks_] = static_cast<Entry*>(vsl::Alloc(sizeof(Entry) * kChunk));
    ++n_chunks_;
    cap_ = n_chunks_ * kChunk;
  }
}

void MemberTable::Reserve(size_t n) {
  if (n > kMaxSize) throw std::bad_alloc();
  if (index_ == nullptr || IndexFull(n)) RebuildIndex(SlotsFor(n));
  GrowTo(n);
}

uint32_t MemberTable::Insert(std::string_view m, double score) {
  if (live_ >= kMaxSize) throw std::bad_alloc();
  const uint32_t hash = vsl::HashBytes32(m);
  if (index_ == nullptr || IndexFull(size_t{live_} + 1)) RebuildIndex(SlotsFor(size_t{live_} + 1));
  if (free_ == 0 && high_ == cap_) GrowTo(size_t{high_} + 1);
  const Cell cell = MakeCell(m);
  if (!cell.is_inline()) heap_bytes_ += Usable(cell.data());
  uint32_t pos;
  if (free_ != 0) {
    pos = free_ - 1;
    std::memcpy(&free_, At(pos).member.raw, sizeof(free_));
  } else {
    pos = high_++;
  }
  At(pos) = Entry{cell, score};
  ++live_;
  PlaceInIndex(Slot(pos, hash));
  return pos;
}

void MemberTable::Erase(uint32_t pos) {
  Entry& e = At(pos);
  const std::string_view m = e.member.view();
  for (size_t i = Home(vsl::HashBytes32(m));; i = Next(i)) {
    if (index_[i] != 0 && SlotPos(index_[i]) == pos) {
      ClearSlot(i);
      break;
    }
  }
  if (!e.member.is_inline()) {
    heap_bytes_ -= Usable(e.member.data());
    vsl::Free(const_cast<char*>(e.member.data()));
  }
  std::memset(&e.member, 0, sizeof(e.member));
  e.member.raw[15] = 0x80;
  std::memcpy(e.member.raw, &free_, sizeof(free_));
  e.score = std::numeric_limits<double>::quiet_NaN();
  free_ = pos + 1;
  --live_;
}

void MemberTable::Compact(uint32_t* map) {
  uint32_t w = 0;
  for (uint32_t r = 0; r < high_; ++r) {
    if (IsHole(At(r))) continue;
    map[r] = w;
    if (r != w) At(w) = At(r);
    ++w;
  }
  high_ = w;
  free_ = 0;
  for (size_t i = 0; i < slots_; ++i) {
    if (index_[i] != 0) index_[i] = Slot(map[SlotPos(index_[i])], SlotHash(index_[i]));
  }
  // Chunks past the last member go; a single chunk shrinks to what it holds (best effort).
  const uint32_t keep = std::max<uint32_t>(1, (w + kChunk - 1) >> kChunkBits);
  while (n_chunks_ > keep) vsl::Free(chunks_[--n_chunks_]);
  cap_ = n_chunks_ == 1 && cap_ < kChunk ? cap_ : n_chunks_ * kChunk;
  if (n_chunks_ == 1) {
    const uint32_t want = std::max<uint32_t>(8, w + w / 4);
    if (want < cap_) {
      void* p = vsl::Api().realloc(chunks_[0], sizeof(Entry) * want);
      if (p != nullptr) {
        chunks_[0] = static_cast<Entry*>(p);
        cap_ = want;
      }
    }
  }
  try {
    if (slots_ > SlotsFor(live_) * 2) RebuildIndex(SlotsFor(live_));
  } catch (const std::bad_alloc&) {
  }
}

size_t MemberTable::MemUsage() const {
  size_t bytes = Usable(index_) + heap_bytes_;
  if (chunks_ != nullptr) bytes += Usable(chunks_);
  for (uint32_t i = 0; i < n_chunks_; ++i) bytes += Usable(chunks_[i]);
  return bytes;
}

void MemberTable::CopyFrom(const MemberTable& o) {
  if (o.n_chunks_ == 0) return;
  try {
    GrowTo(o.high_ == 0 ? 1 : o.high_);
    index_ = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) * o.slots_));
    slots_ = o.slots_;
    std::memcpy(index_, o.index_, sizeof(uint64_t) * o.slots_);
    for (; high_ < o.high_; ++high_) {
      const Entry& e = o.At(high_);
      At(high_) = e;
      if (IsHole(e) || e.member.is_inline()) continue;
      At(high_).member = MakeCell(e.member.view());
      heap_bytes_ += Usable(At(high_).member.data());
    }
  } catch (...) {
    // Release what was copied, leaving the table empty.
    for (uint32_t i = 0; i < high_; ++i) {
      const Entry& e = At(i);
      if (!IsHole(e) && !e.member.is_inline()) vsl::Free(const_cast<char*>(e.member.data()));
    }
    high_ = 0;
    heap_bytes_ = 0;
    FreeChunks();
    vsl::Free(index_);
    index_ = nullptr;
    slots_ = 0;
    throw;
  }
  live_ = o.live_;
  free_ = o.free_;
}

}  // namespace vessel::zsets
