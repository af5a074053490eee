// The deque value type: the ring of chunks and the type callbacks (see deque_type.h); the entries
// are vessel/packed_element.hpp's.
#include "deque_type.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <vector>

namespace vessel::deque {
namespace {

using vsl::packed::BlobOf;
using vsl::packed::Encode;
using vsl::packed::kBlob;
using vsl::packed::kStr8;
using vsl::packed::Write;

constexpr size_t kHeader = offsetof(Chunk, data);
constexpr size_t kMaxCap = UINT16_MAX;

size_t Usable(const void* p) { return vsl::Api().usable_size(p); }

}  // namespace

// ---- entries ----

void Deque::ReleaseEntry(const unsigned char* p) noexcept {
  if (*p != kBlob) return;
  unsigned char* b = BlobOf(p);
  bytes_ -= Usable(b);
  vsl::Free(b);
}

// ---- chunks and the ring ----

Deque::~Deque() { FreeAll(); }

void Deque::FreeAll() noexcept {
  for (size_t ci = 0; ci < chunks_; ++ci) {
    Chunk* c = chunk(ci);
    for (size_t off = 0; off < c->used; off += EntrySize(c->data + off))
      ReleaseEntry(c->data + off);
    FreeChunk(c);
  }
  vsl::Free(ring_);
  ring_ = nullptr;
  ring_cap_ = head_ = 0;
  chunks_ = size_ = 0;
}

Chunk* Deque::NewChunk(size_t bytes) {
  auto* c = static_cast<Chunk*>(vsl::Alloc(kHeader + bytes));
  const size_t usable = Usable(c);
  bytes_ += usable;
  c->used = 0;
  c->count = 0;
  c->cap = static_cast<uint16_t>(std::min(usable - kHeader, kMaxCap));
  return c;
}

void Deque::FreeChunk(Chunk* c) noexcept {
  bytes_ -= Usable(c);
  vsl::Free(c);
}

Chunk* Deque::Room(size_t ci, size_t extra) {
  Chunk* c = chunk(ci);
  if (c->used + extra <= c->cap) return c;
  const size_t want = std::min(std::max<size_t>(c->used + extra, c->cap + c->cap / 2), kMaxCap);
  const size_t before = Usable(c);
  auto* n = static_cast<Chunk*>(vsl::Realloc(c, kHeader + want));
  const size_t usable = Usable(n);
  bytes_ = bytes_ - before + usable;
  n->cap = static_cast<uint16_t>(std::min(usable - kHeader, kMaxCap));
  slot(ci) = n;
  return n;
}

void Deque::Trim(size_t ci) noexcept {
  Chunk* c = chunk(ci);
  // A full chunk changes only by Set and Splice from now on: it keeps no room. An end chunk keeps
  // room for growth unless three quarters of it are unused.
  const size_t want = c->count == kChunk ? c->used : (c->used <= c->cap / 4 ? c->used * 2 : c->cap);
  if (want + 16 > c->cap) return;
  const size_t before = Usable(c);
  void* n = vsl::Api().realloc(c, kHeader + want);
  if (n == nullptr) return;  // keeps the larger block
  c = static_cast<Chunk*>(n);
  const size_t usable = Usable(c);
  bytes_ = bytes_ - before + usable;
  c->cap = static_cast<uint16_t>(std::min(usable - kHeader, kMaxCap));
  slot(ci) = c;
}

void Deque::RingReserve(size_t n) {
  if (n <= ring_cap_) return;
  size_t cap = ring_cap_ == 0 ? 1 : ring_cap_;
  while (cap < n) cap *= 2;
  auto** ring = static_cast<Chunk**>(vsl::Alloc(cap * sizeof(Chunk*)));
  for (size_t ci = 0; ci < chunks_; ++ci) ring[ci] = chunk(ci);
  vsl::Free(ring_);
  ring_ = ring;
  ring_cap_ = static_cast<uint32_t>(cap);
  head_ = 0;
}

// ---- the ends ----

void Deque::PushEncoded(Encoded& e, bool front) {
  const size_t end = front ? 0 : chunks_ - 1;
  Chunk* c;
  if (chunks_ == 0 || chunk(end)->count == kChunk) {
    RingReserve(chunks_ + 1);
    c = NewChunk(e.size());
    if (front) {
      head_ = (head_ - 1) & (ring_cap_ - 1);
      ring_[head_] = c;
    } else {
      ring_[(head_ + chunks_) & (ring_cap_ - 1)] = c;
    }
    ++chunks_;
  } else {
    c = Room(end, e.size());
  }
  const size_t at = front ? 0 : chunks_ - 1;
  if (front) {
    std::memmove(c->data + e.size(), c->data, c->used);
    Write(e, c->data);
  } else {
    Write(e, c->data + c->used);
  }
  if (e.blob != nullptr) bytes_ += Usable(e.blob);
  e.blob = nullptr;  // the deque owns it now
  c->used = static_cast<uint16_t>(c->used + e.size());
  ++c->count;
  ++size_;
  if (c->count == kChunk) Trim(at);
}

void Deque::PushBack(std::string_view s) {
  Encoded e = Encode(s);
  try {
    PushEncoded(e, false);
  } catch (...) {
    vsl::Free(e.blob);
    throw;
  }
}

void Deque::PushFront(std::string_view s) {
  Encoded e = Encode(s);
  try {
    PushEncoded(e, true);
  } catch (...) {
    vsl::Free(e.blob);
    throw;
  }
}

void Deque::DropFront() noexcept {
  Chunk* c = chunk(0);
  const size_t len = EntrySize(c->data);
  ReleaseEntry(c->data);
  std::memmove(c->data, c->data + len, c->used - len);
  c->used = static_cast<uint16_t>(c->used - len);
  --size_;
  if (--c->count == 0) {
    FreeChunk(c);
    head_ = (head_ + 1) & (ring_cap_ - 1);
    --chunks_;
    return;
  }
  Trim(0);
}

void Deque::DropBack(size_t off) noexcept {
  Chunk* c = chunk(chunks_ - 1);
  ReleaseEntry(c->data + off);
  c->used = static_cast<uint16_t>(off);
  --size_;
  if (--c->count == 0) {
    FreeChunk(c);
    --chunks_;
    return;
  }
  Trim(chunks_ - 1);
}

// ---- by position ----

std::string_view Deque::At(size_t i, ElemBuf& buf) const {
  size_t ci, pos;
  Locate(i, &ci, &pos);
  const Chunk* c = chunk(ci);
  return EntryView(c->data + Offset(c, pos), buf);
}

void Deque::Set(size_t i, std::string_view s) {
  Encoded e = Encode(s);
  size_t ci, pos;
  Locate(i, &ci, &pos);
  Chunk* c = chunk(ci);
  const size_t off = Offset(c, pos);
  const size_t old = EntrySize(c->data + off);
  if (e.size() > old) {
    try {
      c = Room(ci, e.size() - old);
    } catch (...) {
      vsl::Free(e.blob);
      throw;
    }
  }
  ReleaseEntry(c->data + off);
  std::memmove(c->data + off + e.size(), c->data + off + old, c->used - off - old);
  Write(e, c->data + off);
  if (e.blob != nullptr) bytes_ += Usable(e.blob);
  c->used = static_cast<uint16_t>(c->used + e.size() - old);
  if (e.size() < old) Trim(ci);
}

// Re-lays the chunks on the shorter side of the splice (see deque_type.h). The sequence of
// entries the new chunks hold is: the kept entries of the replaced chunks before position i, the
// fresh ones, the kept entries after the erased range. Two passes over it: one to size the new
// chunks, one to fill them, so everything is allocated before anything changes.
void Deque::SpliceEncoded(size_t i, size_t erase, Encoded* fresh, size_t n) {
  if (erase == 0 && n == 0) return;
  if (erase == 0 && n == 1 && (i == 0 || i == size_)) return PushEncoded(fresh[0], i == 0);
  const size_t e = i + erase;
  const bool front = i <= size_ - e;
  // The replaced chunks [lo, lo + replaced) and the index of the first element they hold.
  size_t lo = 0, replaced = 0, base = 0;
  if (chunks_ != 0) {
    size_t ci, pos;
    if (front) {
      replaced = chunks_;
      if (e < size_) {
        Locate(e, &ci, &pos);
        replaced = ci + 1;
      }
    } else {
      if (i > 0) {
        Locate(i - 1, &ci, &pos);
        lo = ci;
        base = i - 1 - pos;
      }
      replaced = chunks_ - lo;
    }
  }
  size_t held = 0;  // elements in the replaced chunks
  for (size_t k = 0; k < replaced; ++k) held += chunk(lo + k)->count;
  const size_t total = held - erase + n;
  const size_t fill = total == 0 ? 0 : (total - 1) % kChunk + 1;  // the odd chunk's count
  const size_t made = (total + kChunk - 1) / kChunk;
  // The new chunk of the j-th entry of the sequence: the odd one first (front) or last (back).
  auto chunk_of = [&](size_t j) {
    if (!front) return j / kChunk;
    return j < fill ? 0 : 1 + (j - fill) / kChunk;
  };
  // Calls entry(j, bytes) or add(j, fresh entry) for the j-th entry of the sequence.
  auto walk = [&](auto&& entry, auto&& add) {
    size_t j = 0, g = base;
    bool fresh_done = false;
    auto add_fresh = [&] {
      for (size_t k = 0; k < n; ++k) add(j++, &fresh[k]);
      fresh_done = true;
    };
    for (size_t k = 0; k < replaced; ++k) {
      const Chunk* c = chunk(lo + k);
      const unsigned char* p = c->data;
      for (size_t m = 0; m < c->count; ++m, ++g) {
        const size_t len = EntrySize(p);
        if (g == i && !fresh_done) add_fresh();
        if (g < i || g >= e) entry(j++, p);
        p += len;
      }
    }
    if (!fresh_done) add_fresh();
  };

  using SizeVec = std::vector<size_t, vsl::Allocator<size_t>>;
  SizeVec sizes(made, 0);
  walk([&](size_t j, const unsigned char* p) { sizes[chunk_of(j)] += EntrySize(p); },
       [&](size_t j, const Encoded* f) { sizes[chunk_of(j)] += f->size(); });
  RingReserve(chunks_ - replaced + made);
  std::vector<Chunk*, vsl::Allocator<Chunk*>> fresh_chunks;
  fresh_chunks.reserve(made);
  try {
    for (size_t r = 0; r < made; ++r) fresh_chunks.push_back(NewChunk(sizes[r]));
  } catch (...) {
    for (Chunk* c : fresh_chunks) FreeChunk(c);
    throw;
  }
  // Nothing below allocates.
  walk(
      [&](size_t j, const unsigned char* p) {
        Chunk* c = fresh_chunks[chunk_of(j)];
        const size_t len = EntrySize(p);
        std::memcpy(c->data + c->used, p, len);
        c->used = static_cast<uint16_t>(c->used + len);
        ++c->count;
      },
      [&](size_t j, Encoded* f) {
        Chunk* c = fresh_chunks[chunk_of(j)];
        Write(*f, c->data + c->used);
        c->used = static_cast<uint16_t>(c->used + f->size());
        if (f->blob != nullptr) bytes_ += Usable(f->blob);
        f->blob = nullptr;  // the deque owns it now
        ++c->count;
      });
  // The erased entries' blocks, then the old chunks.
  size_t g = base;
  for (size_t k = 0; k < replaced; ++k) {
    Chunk* c = chunk(lo + k);
    const unsigned char* p = c->data;
    for (size_t m = 0; m < c->count; ++m, ++g) {
      if (g >= i && g < e) ReleaseEntry(p);
      p += EntrySize(p);
    }
    FreeChunk(c);
  }
  const uint32_t mask = ring_cap_ - 1;
  if (front) {
    head_ = static_cast<uint32_t>((head_ + replaced - made) & mask);
    for (size_t r = 0; r < made; ++r) ring_[(head_ + r) & mask] = fresh_chunks[r];
  } else {
    for (size_t r = 0; r < made; ++r) ring_[(head_ + lo + r) & mask] = fresh_chunks[r];
  }
  chunks_ = chunks_ - replaced + made;
  size_ = total + (size_ - held);
}

// ---- checks and the type callbacks ----

bool Deque::Valid() const {
  if (chunks_ > ring_cap_ || (chunks_ == 0) != (size_ == 0)) return false;
  size_t count = 0, bytes = 0;
  for (size_t ci = 0; ci < chunks_; ++ci) {
    const Chunk* c = chunk(ci);
    if (c->count == 0 || c->count > kChunk) return false;
    if (ci != 0 && ci + 1 != chunks_ && c->count != kChunk) return false;
    if (c->used > c->cap || c->cap > Usable(c) - kHeader) return false;
    size_t off = 0;
    for (size_t k = 0; k < c->count; ++k) {
      if (off >= c->used) return false;
      const unsigned char t = c->data[off];
      if (t > kBlob || (t > 0xE3 && t < kStr8)) return false;
      if (t == kBlob) bytes += Usable(BlobOf(c->data + off));
      off += EntrySize(c->data + off);
    }
    if (off != c->used) return false;
    count += c->count;
    bytes += Usable(c);
  }
  return count == size_ && bytes == bytes_;
}

size_t Deque::MemUsage() const {
  size_t n = Usable(this) + bytes_;
  if (ring_ != nullptr) n += Usable(ring_);
  return n;
}

Deque* Deque::Clone() const {
  DequePtr copy(vsl::New<Deque>());
  copy->RingReserve(chunks_);
  ForEach(0, [&](size_t, std::string_view s) {
    copy->PushBack(s);
    return true;
  });
  return copy.release();
}

void Deque::Serialize(vsl::Writer& w) const {
  w.U64(size_);
  ForEach(0, [&](size_t, std::string_view s) {
    w.Bytes(s);
    return true;
  });
}

Deque* Deque::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != kEncodingVersion || !r.U64(&n) || n == 0) return nullptr;
  DequePtr d(vsl::New<Deque>());
  for (uint64_t k = 0; k < n; ++k) {
    std::string_view s;
    if (!r.Bytes(&s)) return nullptr;  // the count promised more than the input holds
    d->PushBack(s);
  }
  return d.release();
}

}  // namespace vessel::deque
