// HashTable: records in their own allocations behind a linear-probing slot array (see
// hash_table.h); the field hash and the per-thread random generator.
#include "hash_table.h"

#include <atomic>
#include <new>
#include <utility>

#include "vessel/module.hpp"

namespace vessel::hashes {
namespace {

uint64_t g_seed = 0x2d358dccaa6c78a5ull;

constexpr uint64_t kK0 = 0xa0761d6478bd642full;
constexpr uint64_t kK1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kK2 = 0x8ebc6af09c88c6e3ull;

// 64x64 -> 128-bit multiply folded to 64 bits: the mixing step of wyhash-style hashes.
uint64_t Mum(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The smallest table (in bits) that holds n records at most 3/4 full.
unsigned BitsFor(size_t n) {
  unsigned b = 3;
  while ((size_t{3} << b) < n * 4) ++b;
  return b;
}

size_t Usable(const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); }

std::atomic<uint64_t> g_random_seed{0x9E3779B97F4A7C15ull};
thread_local uint64_t t_state = 0;
thread_local bool t_seeded = false;

uint64_t NextRandom() {
  if (!t_seeded) {
    t_state = g_random_seed.fetch_add(0x6A09E667F3BCC909ull, std::memory_order_relaxed);
    t_seeded = true;
  }
  t_state += kK0;
  return Mum(t_state ^ kK1, t_state);
}

}  // namespace

void SetHashSeed(uint64_t seed) { g_seed = seed; }

uint64_t HashField(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = g_seed ^ Mum(n ^ kK0, kK1);
  for (; n > 16; p += 16, n -= 16) h = Mum(Load64(p) ^ kK1 ^ h, Load64(p + 8) ^ kK2);
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = uint64_t{static_cast<unsigned char>(p[0])} << 16 |
        uint64_t{static_cast<unsigned char>(p[n >> 1])} << 8 | static_cast<unsigned char>(p[n - 1]);
  }
  h = Mum(a ^ kK2 ^ h, b ^ kK0 ^ s.size());
  return Mum(h ^ kK1, h ^ kK0);
}

void SeedRandom(uint64_t seed) { g_random_seed.store(seed, std::memory_order_relaxed); }

uint64_t RandomBelow(uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(NextRandom()) * n) >> 64);
}

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
  return Home(HashField(GetEntry(Record(s)).field));
}

ptrdiff_t HashTable::Locate(std::string_view f, uint64_t hash) const {
  if (slots_ == nullptr) return -1;
  const uint64_t tag = hash >> (64 - kTagBits);
  for (size_t i = Home(hash);; i = (i + 1) & mask()) {
    const uint64_t s = slots_[i];
    if (s == 0) return -1;
    if ((s >> kPtrBits) != tag) continue;
    const Entry e = GetEntry(Record(s));
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
  const uint64_t hash = HashField(f);
  const unsigned char* rec = MakeRecord(f, v, expire);
  Place(MakeSlot(rec, hash), Home(hash));
  ++size_;
  NoteExpire(expire);
}

void HashTable::Assign(size_t slot, std::string_view v, int64_t expire) {
  auto* rec = const_cast<unsigned char*>(Record(slots_[slot]));
  const Entry old = GetEntry(rec);
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
    const uint64_t s = slots_[RandomBelow(slot_count())];
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
      const Entry e = GetEntry(Record(slots_[i]));
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
