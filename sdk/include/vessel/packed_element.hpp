// Optional header-only codec of the tagged element encoding Vessel's packed containers share (the
// lists module's chunks, the deque module's pages, the values of vessel::ordered's PackedTree),
// over vessel/module.hpp. An element is stored as one entry, as a Redis listpack entry but without
// a back-length byte:
//   0xxxxxxx                  integer 0..127 (the element is its decimal text)
//   10llllll <l bytes>        string of 0..63 bytes
//   110xxxxx xxxxxxxx         integer -4096..4095 (13 bits, two's complement)
//   111000tt <2|3|4|8 bytes>  integer of 16/24/32/64 bits, little-endian (tt: 0..3)
//   11110000 <len> <bytes>    string of 64..255 bytes (kStr8)
//   11110001 ...              a longer string in a block of its own (kBlob)
//   11110010 <u16> <bytes>    string of 256..65535 bytes, length little-endian (kStr16), only
//                             from Encode with a larger inline limit (a container whose blocks
//                             are big enough to hold such strings inline)
// An element is an integer entry only when it is the canonical decimal text of one (no '+', no
// leading zero, not "-0", as Redis's string2ll), so it reads back as the same bytes and has
// exactly one encoding. The integer and short-string forms are common to every container; the
// block form below (a pointer to a block holding a u64 length and the bytes) is the lists' and
// the deque's, the PackedTree writes its own. Pure functions; Encode allocates a long string's
// block with vsl::Alloc (std::bad_alloc), which the caller owns until the entry is written.
#ifndef VESSEL_PACKED_ELEMENT_HPP_
#define VESSEL_PACKED_ELEMENT_HPP_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vessel/module.hpp"

namespace vsl::packed {

inline constexpr unsigned char kStr8 = 0xF0;   // string of 64..255 bytes: a length byte, the bytes
inline constexpr unsigned char kBlob = 0xF1;   // a longer string, in a block of its own
inline constexpr unsigned char kStr16 = 0xF2;  // string of 256..65535 bytes: a u16 length, bytes
inline constexpr size_t kInlineMax = 255;      // the longest string kept in the entry by default
inline constexpr size_t kStr16Max = 65535;     // the longest inline limit Encode accepts

// Room for an integer element formatted back to text.
struct TextBuf {
  char b[24];
};

// Redis's string2ll: whether s is the canonical decimal text of an int64, and which.
inline bool CanonicalInt(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *v = 0;
    return true;
  }
  const size_t start = s[0] == '-' ? 1 : 0;
  if (start >= s.size() || s[start] < '1' || s[start] > '9') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

inline void PutLe(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint64_t GetLe(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// Writes the entry of integer v, in its narrowest form, at out (room for 9 bytes); returns its
// size.
inline size_t EncodeInt(int64_t v, unsigned char* out) {
  if (v >= 0 && v <= 127) {
    out[0] = static_cast<unsigned char>(v);
    return 1;
  }
  if (v >= -4096 && v <= 4095) {
    const uint16_t u = static_cast<uint16_t>(v) & 0x1FFF;
    out[0] = static_cast<unsigned char>(0xC0 | (u >> 8));
    out[1] = static_cast<unsigned char>(u & 0xFF);
    return 2;
  }
  int t = 3, bytes = 8;
  if (v >= INT16_MIN && v <= INT16_MAX) {
    t = 0, bytes = 2;
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    t = 1, bytes = 3;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    t = 2, bytes = 4;
  }
  out[0] = static_cast<unsigned char>(0xE0 | t);
  PutLe(out + 1, static_cast<uint64_t>(v), bytes);
  return static_cast<size_t>(1 + bytes);
}

// The integer of the integer entry at p (tag 0xxxxxxx, 110xxxxx or 111000tt).
inline int64_t DecodeInt(const unsigned char* p) {
  const unsigned char t = *p;
  if (t < 0x80) return t;
  if (t < 0xE0) {
    const int u = ((t & 0x1F) << 8) | p[1];
    return u >= 4096 ? u - 8192 : u;
  }
  static constexpr int kBytes[] = {2, 3, 4, 8};
  const int bytes = kBytes[t & 3];
  const int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(GetLe(p + 1, bytes) << shift) >> shift;  // sign-extends
}

// v as its decimal text, in buf.
inline std::string_view IntText(int64_t v, TextBuf& buf) {
  auto [end, ec] = std::to_chars(buf.b, buf.b + sizeof(buf.b), v);
  return {buf.b, static_cast<size_t>(end - buf.b)};
}

// ---- entries whose long strings live in blocks (u64 length, then the bytes) ----

// Bytes of the entry whose tag is t; 0 for the strings whose length follows the tag (kStr8,
// kStr16).
constexpr unsigned char TagSize(int t) {
  constexpr unsigned char kIntBytes[] = {2, 3, 4, 8};
  if (t < 0x80) return 1;                     // integer 0..127
  if (t < 0xC0) return 1 + (t & 0x3F);        // string of 0..63 bytes
  if (t < 0xE0) return 2;                     // 13-bit integer
  if (t < 0xF0) return 1 + kIntBytes[t & 3];  // integer of 16, 24, 32 or 64 bits
  if (t == kStr8 || t == kStr16) return 0;    // string of 64..65535 bytes
  return 1 + sizeof(void*);                   // long string: a pointer to its block
}
struct TagSizes {
  unsigned char by_tag[256];
  constexpr TagSizes() : by_tag() {
    for (int t = 0; t < 256; ++t) by_tag[t] = TagSize(t);
  }
};
inline constexpr TagSizes kTagSizes;
// Bytes of the entry at p: inline and table-driven, as every walk calls it once per element.
inline size_t EntrySize(const unsigned char* p) {
  const size_t n = kTagSizes.by_tag[*p];
  if (n != 0) return n;
  return *p == kStr8 ? 2 + size_t{p[1]} : 3 + (size_t{p[1]} | size_t{p[2]} << 8);
}

// The block of the long-string entry at p.
inline unsigned char* BlobOf(const unsigned char* p) {
  unsigned char* b;
  std::memcpy(&b, p + 1, sizeof(b));
  return b;
}

// The element of the entry at p: a view into the entry or its block, or into buf for an integer.
inline std::string_view EntryView(const unsigned char* p, TextBuf& buf) {
  const unsigned char t = *p;
  if (t >= 0x80 && t < 0xC0) return {reinterpret_cast<const char*>(p + 1), size_t{t & 0x3Fu}};
  if (t < kStr8) return IntText(DecodeInt(p), buf);
  if (t == kStr8) return {reinterpret_cast<const char*>(p + 2), p[1]};
  if (t == kStr16) return {reinterpret_cast<const char*>(p + 3), size_t{p[1]} | size_t{p[2]} << 8};
  const unsigned char* b = BlobOf(p);
  return {reinterpret_cast<const char*>(b + 8), static_cast<size_t>(GetLe(b, 8))};
}

// An element encoded as an entry: the head (tag, length, integer bytes or a block pointer) and
// the bytes copied after it.
struct Encoded {
  unsigned char head[10];
  unsigned char head_len = 0;
  std::string_view body;          // "" for integers and blocks
  unsigned char* blob = nullptr;  // the block of a long string, the caller's until written
  size_t size() const { return head_len + body.size(); }
};

// Strings of 256 to inline_max (at most kStr16Max) bytes become kStr16 entries, longer ones
// blocks.
inline Encoded Encode(std::string_view s, size_t inline_max = kInlineMax) {
  Encoded e;
  int64_t v;
  if (CanonicalInt(s, &v)) {
    e.head_len = static_cast<unsigned char>(EncodeInt(v, e.head));
  } else if (s.size() <= 63) {
    e.head[0] = static_cast<unsigned char>(0x80 | s.size());
    e.head_len = 1;
    e.body = s;
  } else if (s.size() <= kInlineMax) {
    e.head[0] = kStr8;
    e.head[1] = static_cast<unsigned char>(s.size());
    e.head_len = 2;
    e.body = s;
  } else if (s.size() <= inline_max && s.size() <= kStr16Max) {
    e.head[0] = kStr16;
    PutLe(e.head + 1, s.size(), 2);
    e.head_len = 3;
    e.body = s;
  } else {
    auto* b = static_cast<unsigned char*>(Alloc(8 + s.size()));
    PutLe(b, s.size(), 8);
    std::memcpy(b + 8, s.data(), s.size());
    e.head[0] = kBlob;
    std::memcpy(e.head + 1, &b, sizeof(b));
    e.head_len = 1 + sizeof(b);
    e.blob = b;
  }
  return e;
}

// Writes the entry at dst (room for e.size() bytes); a block is then the entry's.
inline void Write(const Encoded& e, unsigned char* dst) {
  std::memcpy(dst, e.head, e.head_len);
  if (!e.body.empty()) std::memcpy(dst + e.head_len, e.body.data(), e.body.size());
}

}  // namespace vsl::packed

#endif  // VESSEL_PACKED_ELEMENT_HPP_
