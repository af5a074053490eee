// HashSet: dense member array plus a linear-probing index (see hash_set.h).
#include "hash_set.h"

#include <algorithm>
#include <new>
#include <utility>

#include "vessel/module.hpp"

namespace vessel::sets {
namespace {

constexpr unsigned kMinBits = 3;

// The smallest index (in bits) that holds n members at most 3/4 full.
unsigned BitsFor(size_t n) {
  unsigned b = kMinBits;
  while ((size_t{3} << b) < n * 4) ++b;
  return b;
}

}  // namespace

HashSet::~HashSet() {
  for (size_t i = 0; i < size_; ++i) FreeMember(members_[i]);
  vsl::Free(members_);
  vsl::Free(index_);
}

HashSet::Member HashSet::MakeMember(std::string_view s) {
  Member m;
  std::memset(m.raw, 0, sizeof(m.raw));
  const size_t n = s.size();
  if (n <= kMaxInline) {
    if (n > 0) std::memcpy(m.raw, s.data(), n);
    m.raw[15] = static_cast<unsigned char>(0x80 | n);
    return m;
  }
  char* p = static_cast<char*>(vsl::Alloc(n));
  std::memcpy(p, s.data(), n);
  heap_bytes_ += vsl::Api().usable_size(p);
  std::memcpy(m.raw, &p, sizeof(p));
  for (int i = 0; i < 4; ++i) m.raw[8 + i] = static_cast<unsigned char>(n >> (8 * i));
  return m;
}

void HashSet::FreeMember(const Member& m) {
  if (m.is_inline()) return;
  void* p = const_cast<char*>(m.ptr());
  heap_bytes_ -= vsl::Api().usable_size(p);
  vsl::Free(p);
}

ptrdiff_t HashSet::FindSlot(std::string_view s, uint32_t hash) const {
  if (index_ == nullptr) return -1;
  for (size_t i = Home(hash);; i = (i + 1) & mask()) {
    const uint64_t e = index_[i];
    if (e == 0) return -1;
    if (SlotHash(e) != hash) continue;
    const Member& m = members_[SlotPos(e)];
    if (m.len() == s.size() && std::memcmp(m.ptr(), s.data(), s.size()) == 0) {
      return static_cast<ptrdiff_t>(i);
    }
  }
}

size_t HashSet::SlotOf(size_t pos) const {
  size_t i = Home(vsl::HashBytes32(members_[pos].view()));
  while ((index_[i] & UINT32_MAX) != pos + 1) i = (i + 1) & mask();
  return i;
}

void HashSet::PlaceInIndex(uint64_t slot) {
  size_t i = Home(SlotHash(slot));
  while (index_[i] != 0) i = (i + 1) & mask();
  index_[i] = slot;
}

void HashSet::ClearSlot(size_t i) {
  for (size_t j = i;;) {
    j = (j + 1) & mask();
    if (index_[j] == 0) break;
    const size_t k = Home(SlotHash(index_[j]));
    // The entry at j stays when its home lies cyclically in (i, j].
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    index_[i] = index_[j];
    i = j;
  }
  index_[i] = 0;
}

void HashSet::RebuildIndex(unsigned bits) {
  auto* fresh = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << bits));
  std::memset(fresh, 0, sizeof(uint64_t) << bits);
  uint64_t* old = std::exchange(index_, fresh);
  const size_t old_slots = old == nullptr ? 0 : size_t{1} << bits_;
  bits_ = bits;
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i] != 0) PlaceInIndex(old[i]);
  }
  vsl::Free(old);
}

void HashSet::ResizeMembers(size_t cap) {
  members_ = static_cast<Member*>(vsl::Realloc(members_, cap * sizeof(Member)));
  cap_ = static_cast<uint32_t>(cap);
}

void HashSet::Reserve(size_t n) {
  if (n > kMaxSize) vsl::Fail("set is too large");
  if (n > cap_) ResizeMembers(n);
  if (n * 4 > slots() * 3) RebuildIndex(BitsFor(n));
}

bool HashSet::Insert(std::string_view s) {
  const uint32_t hash = vsl::HashBytes32(s);
  if (FindSlot(s, hash) >= 0) return false;
  if (size_ >= kMaxSize) vsl::Fail("set is too large");
  if (size_ == cap_) ResizeMembers(std::max<size_t>(8, size_t{cap_} + cap_ / 2));
  if ((size_t{size_} + 1) * 4 > slots() * 3) RebuildIndex(BitsFor(size_t{size_} + 1));
  members_[size_] = MakeMember(s);
  PlaceInIndex(Slot(size_, hash));
  ++size_;
  return true;
}

void HashSet::Remove(size_t pos, size_t slot) {
  FreeMember(members_[pos]);
  ClearSlot(slot);
  const size_t last = size_ - 1;
  if (pos != last) {
    uint64_t& e = index_[SlotOf(last)];
    e = Slot(pos, SlotHash(e));
    members_[pos] = members_[last];
  }
  --size_;
  MaybeShrink();
}

bool HashSet::Erase(std::string_view s) {
  const ptrdiff_t slot = FindSlot(s, vsl::HashBytes32(s));
  if (slot < 0) return false;
  Remove(SlotPos(index_[slot]), static_cast<size_t>(slot));
  return true;
}

void HashSet::EraseAt(size_t i) { Remove(i, SlotOf(i)); }

// Gives memory back once the set is much smaller than its tables; shrinking is only an
// optimisation, so an allocation failure here is ignored.
void HashSet::MaybeShrink() {
  try {
    if (bits_ > kMinBits && size_t{size_} * 8 < slots()) RebuildIndex(BitsFor(size_t{size_} * 2));
    if (cap_ > 8 && size_t{size_} * 4 < cap_) ResizeMembers(std::max<size_t>(8, size_t{size_} * 2));
  } catch (const std::bad_alloc&) {
  }
}

size_t HashSet::MemUsage() const {
  auto usable = [](void* p) { return p == nullptr ? 0 : vsl::Api().usable_size(p); };
  return usable(members_) + usable(index_) + heap_bytes_;
}

HashSet* HashSet::Clone() const {
  HashSet* c = vsl::New<HashSet>();
  try {
    c->ResizeMembers(std::max<size_t>(cap_, 1));
    for (; c->size_ < size_; ++c->size_) {
      const Member& m = members_[c->size_];
      c->members_[c->size_] = m.is_inline() ? m : c->MakeMember(m.view());
    }
    if (index_ != nullptr) {
      c->index_ = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << bits_));
      std::memcpy(c->index_, index_, sizeof(uint64_t) << bits_);
      c->bits_ = bits_;
    }
  } catch (...) {
    vsl::Delete(c);
    throw;
  }
  return c;
}

}  // namespace vessel::sets
