// HashTable: records in their own allocations behind a linear-probing slot array (see
// hash_table.h).
#include "hash_table.h"

#include <new>
#include <utility>

#include "vessel/module.hpp"

namespace vessel::hashes {
namespace {

// The smallest table (in bits) that holds n records at most 3/4 full.
unsigned BitsFor(size_t n) {
  unsigned b = 3;
  while ((size_t{3} << b) < n * 4) ++b;
  return b;
}

size_t Usable(const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); }

}  // namespace

HashTable::~HashTable() {
  for (size_t i = 0; i < slot_count(); ++i) {
    if (slots_[i] != 0) vsl::Free(const_cast<unsigned char*>(Record(slots_[i])));
  }
  vsl::Free(slots_);
}

unsigned char* HashTable::MakeRecord(std::string_view f, std::string_view v, int64_t expire) {
  auto* rec = static_cast<unsigned char*>(vsl::Alloc(EntrySize(f.size(), v.size(), expire != 0)));
  // A slot keeps 45 bits of the address: every allocator we run on returns 8-aligned addresses
  // below 2^48. Refuse (as out of memory) rather than corrupt if one ever does not.
  if ((reinterpret_cast<uintptr_t>(rec) & 7) != 0 || reinterpret_cast<uintptr_t>(rec) >> 48 != 0) {
    vsl::Free(rec);
    throw std::bad_alloc();
  }
  PutEntry(rec, f, v, expire);
  heap_bytes_ += Usable(rec);
  return rec;
}

void HashTable::FreeRecord(const unsigned char* rec) {
  heap_bytes_ -= Usable(rec);
  vsl::Free(const_cast<unsigned char*>(rec));
}

size_t HashTable::HomeOf(uint64_t s) const {
  if (bits_ <= kTagBits) return static_cast<size_t>((s >> kPtrBits) >> (kTagBits - bits_));
  return Home(vsl::HashBytes(GetEntry(Record(s)).field));
}

ptrdiff_t HashTable::Locate(std::string_view f, uint64_t hash) const {
  if (slots_ == nullptr) return -1;
  const uint64_t tag = hash >> (64 - kTagBits);
  for (size_t i = Home(hash);; i = (i + 1) & mask()) {
    const uint64_t s = slots_[i];
    if (s == 0) return -1;
    if ((s >> kPtrBits) != tag) continue;
    const HashEntry e = GetEntry(Record(s));
    if (e.field.size() == f.size() && std::memcmp(e.field.data(), f.data(), f.size()) == 0) {
      return static_cast<ptrdiff_t>(i);
    }
  }
}

void HashTable::Place(uint64_t s, size_t home) {
  size_t i = home;
  while (slots_[i] != 0) i = (i + 1) & mask();
  slots_[i] = s;
}

void HashTable::Rebuild(unsigned bits) {
  auto* fresh = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << bits));
  std::memset(fresh, 0, sizeof(uint64_t) << bits);
  uint64_t* old = std::exchange(slots_, fresh);
  const size_t old_slots = old == nullptr ? 0 : size_t{1} << bits_;
  bits_ = bits;
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i] != 0) Place(old[i], HomeOf(old[i]));
  }
  vsl::Free(old);
}

void HashTable::Reserve(size_t n) {
  if (n > kMaxSize) vsl::Fail("hash is too large");
  if (n * 4 > slot_count() * 3) Rebuild(BitsFor(n));
}

void HashTable::Insert(std::string_view f, std::string_view v, int64_t expire) {
  if (size_ >= kMaxSize) vsl::Fail("hash is too large");
  if ((size_t{size_} + 1) * 4 > slot_count() * 3) Rebuild(BitsFor(size_t{size_} + 1));
  const uint64_t hash = vsl::HashBytes(f);
  const unsigned char* rec = MakeRecord(f, v, expire);
  Place(MakeSlot(rec, hash), Home(hash));
  ++size_;
  NoteExpire(expire);
}

void HashTable::Assign(size_t slot, std::string_view v, int64_t expire) {
  auto* rec = const_cast<unsigned char*>(Record(slots_[slot]));
  const HashEntry old = GetEntry(rec);
  const size_t need = EntrySize(old.field.size(), v.size(), expire != 0);
  if (old.expire != 0) --expiring_;
  // In place when the block fits and v is not read from it (SetExpire passes the record's own
  // value: a new record is built from the old one then).
  const auto* lo = reinterpret_cast<const char*>(rec);
  const bool alias = v.data() >= lo && v.data() < lo + Usable(rec);
  if (!alias && need <= Usable(rec) && need * 2 >= Usable(rec)) {
    // Move the field to where the new header puts it, then write header and value.
    const size_t field_at = static_cast<size_t>(old.field.data() - reinterpret_cast<char*>(rec));
    const size_t new_field_at = need - old.field.size() - v.size();
    std::memmove(rec + new_field_at, rec + field_at, old.field.size());
    unsigned char* p = PutVarint(rec, uint64_t{old.field.size()} << 1 | (expire != 0 ? 1u : 0u));
    p = PutVarint(p, v.size());
    if (expire != 0) std::memcpy(p, &expire, 8);
    if (!v.empty()) std::memcpy(rec + new_field_at + old.field.size(), v.data(), v.size());
  } else {
    const unsigned char* fresh;
    try {
      fresh = MakeRecord(old.field, v, expire);
    } catch (...) {
      if (old.expire != 0) ++expiring_;
      throw;
    }
    slots_[slot] = (slots_[slot] >> kPtrBits) << kPtrBits | reinterpret_cast<uintptr_t>(fresh) >> 3;
    FreeRecord(rec);
  }
  NoteExpire(expire);
}

void HashTable::EraseSlot(size_t i) {
  const unsigned char* rec = Record(slots_[i]);
  if (GetEntry(rec).expire != 0) --expiring_;
  if (expiring_ == 0) min_expire_ = INT64_MAX;
  FreeRecord(rec);
  // Backward-shift deletion: later entries of the probe run move back unless their home lies
  // cyclically in (i, j]. A record never leaves the run that starts at its home bucket.
  for (size_t j = i;;) {
    j = (j + 1) & mask();
    if (slots_[j] == 0) break;
    const size_t k = HomeOf(slots_[j]);
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = 0;
  --size_;
  MaybeShrink();
}

// Gives memory back once the table is much larger than its records; only an optimisation, so an
// allocation failure here is ignored.
void HashTable::MaybeShrink() {
  if (bits_ <= kMinBits || size_t{size_} * 8 >= slot_count()) return;
  try {
    Rebuild(BitsFor(size_t{size_} * 2));
  } catch (const std::bad_alloc&) {
  }
}

const unsigned char* HashTable::Random() const {
  for (;;) {
    const uint64_t s = slots_[vsl::RandomBelow(slot_count())];
    if (s != 0) return Record(s);
  }
}

size_t HashTable::MemUsage() const {
  return (slots_ == nullptr ? 0 : Usable(slots_)) + heap_bytes_;
}

HashTable* HashTable::Clone() const {
  HashTable* c = vsl::New<HashTable>();
  try {
    if (slots_ != nullptr) {
      c->slots_ = static_cast<uint64_t*>(vsl::Alloc(sizeof(uint64_t) << bits_));
      std::memset(c->slots_, 0, sizeof(uint64_t) << bits_);
      c->bits_ = bits_;
    }
    for (size_t i = 0; i < slot_count(); ++i) {
      if (slots_[i] == 0) continue;
      const HashEntry e = GetEntry(Record(slots_[i]));
      const unsigned char* rec = c->MakeRecord(e.field, e.value, e.expire);
      c->slots_[i] = (slots_[i] >> kPtrBits) << kPtrBits | reinterpret_cast<uintptr_t>(rec) >> 3;
      ++c->size_;
    }
    c->expiring_ = expiring_;
    c->min_expire_ = min_expire_;
  } catch (...) {
    vsl::Delete(c);
    throw;
  }
  return c;
}

}  // namespace vessel::hashes
