// EntryTable: the dense entry array with stable positions, the free list of holes and the
// open-addressing member index.
#include "entry_table.h"

#include <algorithm>
#include <new>

#include "vessel/module.hpp"

namespace vessel::zsets {
namespace {

uint64_t g_hash_seed = 0x243F6A8885A308D3ull;

uint64_t Mix(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

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

void SetHashSeed(uint64_t seed) { g_hash_seed = seed; }

uint32_t HashMember(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  uint64_t h = g_hash_seed ^ Mix(n, 0x9E3779B97F4A7C15ull);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = Mix(h ^ v, 0xa0761d6478bd642full);
    p += 8;
    n -= 8;
  }
  uint64_t v = 0;
  if (n > 0) std::memcpy(&v, p, n);
  h = Mix(h ^ v, 0xe7037ed1a0b428dbull);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

EntryTable::~EntryTable() {
  for (uint32_t i = 0; i < high_; ++i) {
    const Entry& e = entries_[i];
    if (!IsHole(e) && !e.member.is_inline()) vsl::Free(const_cast<char*>(e.member.data()));
  }
  vsl::Free(entries_);
  vsl::Free(index_);
}

unsigned EntryTable::BitsFor(size_t n) const {
  unsigned bits = 3;
  while ((size_t{3} << bits) / 4 < n) ++bits;
  return bits;
}

ptrdiff_t EntryTable::FindSlot(std::string_view m, uint32_t hash) const {
  if (index_ == nullptr) return -1;
  for (size_t i = Home(hash);; i = (i + 1) & mask()) {
    const uint64_t s = index_[i];
    if (s == 0) return -1;
    if (SlotHash(s) == hash && entries_[SlotPos(s)].member.view() == m) {
      return static_cast<ptrdiff_t>(i);
    }
  }
}

int64_t EntryTable::Find(std::string_view m) const {
  const ptrdiff_t i = FindSlot(m, HashMember(m));
  return i < 0 ? int64_t{-1} : int64_t{SlotPos(index_[i])};
}

void EntryTable::PlaceInIndex(uint64_t slot) {
  size_t i = Home(SlotHash(slot));
  while (index_[i] != 0) i = (i + 1) & mask();
  index_[i] = slot;
}

// Backward-shift deletion: later entries of the probe run move back so no lookup stops early.
void EntryTable::ClearSlot(size_t i) {
  size_t j = i;
  for (;;) {
    index_[i] = 0;
    for (;;) {
      j = (j + 1) & mask();
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

// Rebuilds the index with 2^bits slots from the old slots (their hashes are kept): allocates
// first, so a failure leaves the index as it was.
void EntryTable::RebuildIndex(unsigned bits) {
  auto* fresh = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << bits));
  std::memset(fresh, 0, sizeof(uint64_t) << bits);
  uint64_t* old = index_;
  const size_t old_slots = old == nullptr ? 0 : size_t{1} << bits_;
  index_ = fresh;
  bits_ = bits;
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i] != 0) PlaceInIndex(old[i]);
  }
  vsl::Free(old);
}

void EntryTable::ResizeEntries(uint32_t cap) {
  void* p = vsl::Api().realloc(entries_, sizeof(Entry) * size_t{cap});
  if (p == nullptr) throw std::bad_alloc();
  entries_ = static_cast<Entry*>(p);
  cap_ = cap;
}

void EntryTable::Reserve(size_t n) {
  if (n > kMaxSize) throw std::bad_alloc();
  if (index_ == nullptr || n > (size_t{3} << bits_) / 4) RebuildIndex(BitsFor(n));
  if (n > cap_) ResizeEntries(static_cast<uint32_t>(n));
}

uint32_t EntryTable::Insert(std::string_view m, double score) {
  if (live_ >= kMaxSize) throw std::bad_alloc();
  const uint32_t hash = HashMember(m);
  if (index_ == nullptr || size_t{live_} + 1 > (size_t{3} << bits_) / 4) {
    RebuildIndex(BitsFor(size_t{live_} + 1));
  }
  if (free_ == 0 && high_ == cap_) {
    const uint64_t grown = std::max<uint64_t>(8, uint64_t{cap_} + cap_ / 2);
    ResizeEntries(static_cast<uint32_t>(std::min<uint64_t>(grown, kMaxSize)));
  }
  const Cell cell = MakeCell(m);
  if (!cell.is_inline()) heap_bytes_ += Usable(cell.data());
  uint32_t pos;
  if (free_ != 0) {
    pos = free_ - 1;
    std::memcpy(&free_, entries_[pos].member.raw, sizeof(free_));
  } else {
    pos = high_++;
  }
  entries_[pos] = Entry{cell, score};
  ++live_;
  PlaceInIndex(Slot(pos, hash));
  return pos;
}

void EntryTable::Erase(uint32_t pos) {
  Entry& e = entries_[pos];
  const std::string_view m = e.member.view();
  for (size_t i = Home(HashMember(m));; i = (i + 1) & mask()) {
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

void EntryTable::Compact(uint32_t* map) {
  uint32_t w = 0;
  for (uint32_t r = 0; r < high_; ++r) {
    if (IsHole(entries_[r])) continue;
    map[r] = w;
    if (r != w) entries_[w] = entries_[r];
    ++w;
  }
  high_ = w;
  free_ = 0;
  const size_t slots = size_t{1} << bits_;
  for (size_t i = 0; i < slots; ++i) {
    if (index_[i] != 0) index_[i] = Slot(map[SlotPos(index_[i])], SlotHash(index_[i]));
  }
  try {  // best effort: a failed shrink keeps the larger arrays
    const unsigned bits = BitsFor(live_);
    if (bits + 1 < bits_) RebuildIndex(bits);
    const uint32_t cap = std::max<uint32_t>(8, live_ + live_ / 4);
    if (cap < cap_) ResizeEntries(cap);
  } catch (const std::bad_alloc&) {
  }
}

size_t EntryTable::MemUsage() const { return Usable(entries_) + Usable(index_) + heap_bytes_; }

void EntryTable::CopyFrom(const EntryTable& o) {
  if (o.cap_ == 0) return;
  auto* entries = static_cast<Entry*>(vsl::Alloc(sizeof(Entry) * size_t{o.cap_}));
  auto* index = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << o.bits_));
  uint32_t copied = 0;
  size_t heap = 0;
  try {
    for (; copied < o.high_; ++copied) {
      const Entry& e = o.entries_[copied];
      entries[copied] = e;
      if (IsHole(e) || e.member.is_inline()) continue;
      entries[copied].member = MakeCell(e.member.view());
      heap += Usable(entries[copied].member.data());
    }
  } catch (...) {
    for (uint32_t i = 0; i < copied; ++i) {
      if (!IsHole(entries[i]) && !entries[i].member.is_inline()) {
        vsl::Free(const_cast<char*>(entries[i].member.data()));
      }
    }
    vsl::Free(entries);
    vsl::Free(index);
    throw;
  }
  std::memcpy(index, o.index_, sizeof(uint64_t) << o.bits_);
  entries_ = entries;
  index_ = index;
  high_ = o.high_;
  cap_ = o.cap_;
  live_ = o.live_;
  free_ = o.free_;
  bits_ = o.bits_;
  heap_bytes_ = heap;
}

}  // namespace vessel::zsets
