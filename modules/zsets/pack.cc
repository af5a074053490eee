// Pack: entry encoding, ordered insertion and removal in one host block.
#include "pack.h"

#include <cmath>
#include <cstring>
#include <new>

#include "order_tree.h"  // CompareMembers
#include "vessel/module.hpp"

namespace vessel::zsets {
namespace {

struct PackHeader {
  uint32_t count;
  uint32_t used;  // bytes of entries after the header
};
constexpr size_t kHeader = sizeof(PackHeader);

PackHeader* H(unsigned char* b) { return reinterpret_cast<PackHeader*>(b); }

enum Kind : unsigned { kInt8 = 0, kInt16 = 1, kInt32 = 2, kDouble = 3 };
constexpr unsigned kLongLen = 63;

Kind KindOf(double s) {
  if (!(s >= -2147483648.0 && s <= 2147483647.0) || s != std::trunc(s)) return kDouble;
  const auto v = static_cast<int32_t>(s);
  if (v >= INT8_MIN && v <= INT8_MAX) return kInt8;
  if (v >= INT16_MIN && v <= INT16_MAX) return kInt16;
  return kInt32;
}
size_t ScoreBytes(Kind k) { return k == kInt8 ? 1 : k == kInt16 ? 2 : k == kInt32 ? 4 : 8; }
size_t VarintBytes(size_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

unsigned char* Resize(unsigned char* b, size_t bytes) {
  void* p = vsl::Api().realloc(b, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<unsigned char*>(p);
}

void Shrink(unsigned char*& b) {
  void* p = vsl::Api().realloc(b, kHeader + H(b)->used);
  if (p != nullptr) b = static_cast<unsigned char*>(p);
}

// Writes the entry at p; returns the bytes written.
size_t Encode(unsigned char* p, std::string_view m, double score) {
  const Kind k = KindOf(score);
  unsigned char* w = p;
  const size_t len = m.size();
  *w++ = static_cast<unsigned char>(k << 6 | (len < kLongLen ? len : kLongLen));
  if (len >= kLongLen) {
    size_t v = len - kLongLen;
    while (v >= 0x80) {
      *w++ = static_cast<unsigned char>(v | 0x80);
      v >>= 7;
    }
    *w++ = static_cast<unsigned char>(v);
  }
  if (len > 0) std::memcpy(w, m.data(), len);
  w += len;
  switch (k) {
    case kInt8: {
      const auto v = static_cast<int8_t>(score);
      std::memcpy(w, &v, 1);
      break;
    }
    case kInt16: {
      const auto v = static_cast<int16_t>(score);
      std::memcpy(w, &v, 2);
      break;
    }
    case kInt32: {
      const auto v = static_cast<int32_t>(score);
      std::memcpy(w, &v, 4);
      break;
    }
    case kDouble:
      std::memcpy(w, &score, 8);
      break;
  }
  return static_cast<size_t>(w - p) + ScoreBytes(k);
}

}  // namespace

Pack::Pack() {
  block_ = static_cast<unsigned char*>(vsl::Alloc(kHeader));
  *H(block_) = PackHeader{0, 0};
}

Pack::~Pack() { vsl::Free(block_); }

void Pack::Free() {
  vsl::Free(block_);
  block_ = nullptr;
}

void Pack::Swap(Pack& other) noexcept { std::swap(block_, other.block_); }

size_t Pack::size() const { return H(block_)->count; }
size_t Pack::bytes() const { return H(block_)->used; }
size_t Pack::begin() const { return kHeader; }
size_t Pack::end() const { return kHeader + H(block_)->used; }

Pack::Item Pack::Decode(size_t off, size_t* next) const {
  const unsigned char* p = block_ + off;
  const unsigned head = *p++;
  size_t len = head & 0x3f;
  if (len == kLongLen) {
    size_t v = 0;
    for (int shift = 0;; shift += 7) {
      const unsigned char b = *p++;
      v |= size_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    len += v;
  }
  Item it{{reinterpret_cast<const char*>(p), len}, 0};
  p += len;
  switch (static_cast<Kind>(head >> 6)) {
    case kInt8: {
      int8_t v;
      std::memcpy(&v, p, 1);
      it.score = v;
      p += 1;
      break;
    }
    case kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      it.score = v;
      p += 2;
      break;
    }
    case kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      it.score = v;
      p += 4;
      break;
    }
    case kDouble:
      std::memcpy(&it.score, p, 8);
      p += 8;
      break;
  }
  *next = static_cast<size_t>(p - block_);
  return it;
}

bool Pack::Find(std::string_view m, size_t* off, double* score) const {
  for (size_t o = begin(), e = end(), next; o < e; o = next) {
    const Item it = Decode(o, &next);
    if (it.member == m) {
      *off = o;
      *score = it.score;
      return true;
    }
  }
  return false;
}

size_t Pack::EntryBytes(std::string_view m, double score) {
  const size_t len = m.size();
  return 1 + (len >= kLongLen ? VarintBytes(len - kLongLen) : 0) + len + ScoreBytes(KindOf(score));
}

void Pack::Reserve(size_t bytes) {
  if (bytes > H(block_)->used) block_ = Resize(block_, kHeader + bytes);
}

void Pack::Insert(std::string_view m, double score) {
  const size_t need = EntryBytes(m, score);
  if (H(block_)->used + need > kMaxBytes) throw std::bad_alloc();
  block_ = Resize(block_, kHeader + H(block_)->used + need);
  InsertInPlace(m, score, need);
}

// Inserts in order into a block with room for `need` more bytes.
void Pack::InsertInPlace(std::string_view m, double score, size_t need) {
  // The first entry above (score, m), as Redis's zzlInsert finds it.
  size_t at = begin();
  for (size_t e = end(), next; at < e; at = next) {
    const Item it = Decode(at, &next);
    if (it.score > score || (it.score == score && CompareMembers(it.member, m) > 0)) break;
  }
  std::memmove(block_ + at + need, block_ + at, end() - at);
  Encode(block_ + at, m, score);
  H(block_)->used += static_cast<uint32_t>(need);
  ++H(block_)->count;
}

void Pack::Update(size_t off, std::string_view m, double score) {
  size_t next;
  Decode(off, &next);
  const size_t old_bytes = next - off;
  const size_t need = EntryBytes(m, score);
  // Room first (nothing changes on failure), and m copied if it lives in the bytes that move.
  if (need > old_bytes) block_ = Resize(block_, kHeader + H(block_)->used + need - old_bytes);
  char stack[64];
  char* copy = nullptr;
  const auto* mp = reinterpret_cast<const unsigned char*>(m.data());
  if (!m.empty() && mp >= block_ && mp < block_ + end()) {
    copy = m.size() <= sizeof(stack) ? stack : static_cast<char*>(vsl::Alloc(m.size()));
    std::memcpy(copy, m.data(), m.size());
    m = std::string_view(copy, m.size());
  }
  std::memmove(block_ + off, block_ + next, end() - next);
  H(block_)->used -= static_cast<uint32_t>(old_bytes);
  --H(block_)->count;
  InsertInPlace(m, score, need);
  if (copy != nullptr && copy != stack) vsl::Free(copy);
  Shrink(block_);
}

void Pack::Erase(size_t from, size_t to, size_t n) {
  std::memmove(block_ + from, block_ + to, end() - to);
  H(block_)->used -= static_cast<uint32_t>(to - from);
  H(block_)->count -= static_cast<uint32_t>(n);
  Shrink(block_);
}

void Pack::Append(std::string_view m, double score) {
  const size_t need = EntryBytes(m, score);
  if (H(block_)->used + need > kMaxBytes) throw std::bad_alloc();
  block_ = Resize(block_, kHeader + H(block_)->used + need);
  Encode(block_ + end(), m, score);
  H(block_)->used += static_cast<uint32_t>(need);
  ++H(block_)->count;
}

size_t Pack::MemUsage() const { return vsl::Api().usable_size(block_); }

void Pack::CopyFrom(const Pack& other) {
  if (other.block_ == nullptr) return Free();
  auto* b = static_cast<unsigned char*>(vsl::Alloc(kHeader + H(other.block_)->used));
  std::memcpy(b, other.block_, kHeader + H(other.block_)->used);
  vsl::Free(block_);
  block_ = b;
}

}  // namespace vessel::zsets
