// One field-value pair as bytes: the unit both representations of a hash store.
//
//   varint(field_len << 1 | has_expiry)  varint(value_len)  [expiry: 8 bytes]  field  value
//
// Varints are LEB128 (7 bits a byte, low bits first), so a field of up to 63 bytes and a value of
// up to 127 bytes cost one length byte each. The expiry (absolute unix milliseconds, host byte
// order) is present only for a field that has one: a hash that never uses field expiry pays
// nothing for it. The compact representation concatenates entries in one block; the hashtable
// holds each entry in its own allocation (a "record").
#ifndef VESSEL_MODULES_HASHES_HASH_ENTRY_H_
#define VESSEL_MODULES_HASHES_HASH_ENTRY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace vessel::hashes {

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

inline unsigned char* PutVarint(unsigned char* p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<unsigned char>(v | 0x80);
  *p++ = static_cast<unsigned char>(v);
  return p;
}

inline const unsigned char* GetVarint(const unsigned char* p, uint64_t* v) {
  if (*p < 0x80) {
    *v = *p;
    return p + 1;
  }
  uint64_t r = 0;
  for (unsigned shift = 0;; shift += 7) {
    const unsigned char b = *p++;
    r |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) break;
  }
  *v = r;
  return p;
}

// A decoded entry; the views point into the entry's bytes.
struct HashEntry {
  std::string_view field;
  std::string_view value;
  int64_t expire = 0;  // absolute unix ms; 0 = no expiry
  size_t size = 0;     // encoded bytes
};

inline size_t EntrySize(size_t field_len, size_t value_len, bool expiry) {
  return VarintSize(uint64_t{field_len} << 1) + VarintSize(value_len) + (expiry ? 8 : 0) +
         field_len + value_len;
}

// Writes an entry at p (EntrySize bytes); expire 0 = none. Returns the end.
inline unsigned char* PutEntry(unsigned char* p, std::string_view f, std::string_view v,
                               int64_t expire) {
  p = PutVarint(p, uint64_t{f.size()} << 1 | (expire != 0 ? 1u : 0u));
  p = PutVarint(p, v.size());
  if (expire != 0) {
    std::memcpy(p, &expire, 8);
    p += 8;
  }
  if (!f.empty()) std::memcpy(p, f.data(), f.size());
  p += f.size();
  if (!v.empty()) std::memcpy(p, v.data(), v.size());
  return p + v.size();
}

inline HashEntry GetEntry(const unsigned char* p) {
  const unsigned char* start = p;
  uint64_t head, vlen;
  p = GetVarint(p, &head);
  p = GetVarint(p, &vlen);
  HashEntry e;
  if (head & 1) {
    std::memcpy(&e.expire, p, 8);
    p += 8;
  }
  const size_t flen = static_cast<size_t>(head >> 1);
  e.field = {reinterpret_cast<const char*>(p), flen};
  e.value = {reinterpret_cast<const char*>(p + flen), static_cast<size_t>(vlen)};
  e.size = static_cast<size_t>(p + flen + vlen - start);
  return e;
}

// An entry is alive at `now` unless its expiry has passed (Redis: expired when expire < now).
inline bool Alive(const HashEntry& e, int64_t now) { return e.expire == 0 || e.expire >= now; }

}  // namespace vessel::hashes

#endif  // VESSEL_MODULES_HASHES_HASH_ENTRY_H_
