// The list value type: packed chunks (see lists_type.h) and the type callbacks.
#include "lists_type.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <new>
#include <vector>

namespace vessel::lists {
namespace {

using vsl::packed::BlobOf;
using vsl::packed::Encode;
using vsl::packed::Encoded;
using vsl::packed::GetLe;
using vsl::packed::kBlob;
using vsl::packed::kInlineMax;
using vsl::packed::Write;

constexpr size_t kHeader = offsetof(Chunk, data);

// Frees what the entry at p points to (a long string's block).
void ReleaseEntry(const unsigned char* p) {
  if (*p == kBlob) vsl::Free(BlobOf(p));
}

// Guards an encoded long string until it is written into a chunk.
struct BlobGuard {
  Encoded* e;
  ~BlobGuard() {
    if (e != nullptr && e->blob != nullptr) vsl::Free(e->blob);
  }
  void Release() { e = nullptr; }
};

// A chunk with room for at least `need` bytes of entries (all the allocator gives).
Chunk* NewChunk(size_t need) {
  auto* c = static_cast<Chunk*>(vsl::Alloc(kHeader + need));
  c->used = 0;
  c->count = 0;
  c->cap = static_cast<uint32_t>(vsl::Api().usable_size(c) - kHeader);
  return c;
}

// Grows c (which may move) to hold `extra` more bytes.
Chunk* Room(Chunk* c, size_t extra) {
  if (c->used + extra <= c->cap) return c;
  const size_t want = std::max<size_t>(c->used + extra, c->cap + c->cap / 2);
  auto* n = static_cast<Chunk*>(vsl::Realloc(c, kHeader + want));
  n->cap = static_cast<uint32_t>(vsl::Api().usable_size(n) - kHeader);
  return n;
}

}  // namespace

// ---- the ring of chunks ----

List::~List() { FreeAll(); }

void List::FreeAll() noexcept {
  for (size_t ci = 0; ci < chunks_; ++ci) {
    Chunk* c = chunk(ci);
    for (size_t off = 0; off < c->used; off += EntrySize(c->data + off))
      ReleaseEntry(c->data + off);
    vsl::Free(c);
  }
  vsl::Free(ring_);
  ring_ = nullptr;
  ring_cap_ = head_ = chunks_ = 0;
  size_ = 0;
}

void List::RingReserve(size_t n) {
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

void List::Resize(size_t ci, size_t cap) noexcept {
  void* n = vsl::Api().realloc(chunk(ci), kHeader + cap);
  if (n == nullptr) return;  // keeps the larger block
  Chunk* c = static_cast<Chunk*>(n);
  c->cap = static_cast<uint32_t>(vsl::Api().usable_size(c) - kHeader);
  slot(ci) = c;
}

void List::MaybeShrink(size_t ci) noexcept {
  const Chunk* c = chunk(ci);
  if (c->cap > 256 && c->used <= c->cap / 4) Resize(ci, c->used + c->used / 2);
}

// A chunk that became full (a middle chunk from now on, changed only by LSET and LINSERT) keeps
// no room for growth.
void List::Fit(size_t ci) noexcept {
  const Chunk* c = chunk(ci);
  if (c->cap > c->used + 16) Resize(ci, c->used);
}

void List::RingPushBack(Chunk* c) {
  RingReserve(chunks_ + 1);
  ring_[(head_ + chunks_) & (ring_cap_ - 1)] = c;
  ++chunks_;
}

void List::RingPushFront(Chunk* c) {
  RingReserve(chunks_ + 1);
  head_ = (head_ - 1) & (ring_cap_ - 1);
  ring_[head_] = c;
  ++chunks_;
}

void List::RingPopFront() {
  vsl::Free(chunk(0));
  head_ = (head_ + 1) & (ring_cap_ - 1);
  --chunks_;
}

void List::RingPopBack() {
  vsl::Free(chunk(chunks_ - 1));
  --chunks_;
}

// ---- elements ----

std::string_view List::At(size_t i, ElemBuf& buf) const {
  size_t ci, pos;
  Locate(i, &ci, &pos);
  const Chunk* c = chunk(ci);
  return EntryView(c->data + EntryOffset(c, pos), buf);
}

void List::InsertEntry(size_t ci, size_t off, const unsigned char* e, size_t len) {
  Chunk* c = Room(chunk(ci), len);
  slot(ci) = c;
  std::memmove(c->data + off + len, c->data + off, c->used - off);
  std::memcpy(c->data + off, e, len);
  c->used += static_cast<uint32_t>(len);
  ++c->count;
}

void List::TakeEntry(size_t ci, size_t off, std::string* out) {
  Chunk* c = chunk(ci);
  const size_t len = EntrySize(c->data + off);
  out->assign(reinterpret_cast<const char*>(c->data + off), len);
  std::memmove(c->data + off, c->data + off + len, c->used - off - len);
  c->used -= static_cast<uint32_t>(len);
  --c->count;
}

void List::PushBack(std::string_view s) {
  Encoded e = Encode(s);
  BlobGuard guard{&e};
  if (chunks_ == 0 || chunk(chunks_ - 1)->count == kChunk) {
    Chunk* c = NewChunk(e.size());
    try {
      RingPushBack(c);
    } catch (...) {
      vsl::Free(c);
      throw;
    }
  }
  Chunk* c = Room(chunk(chunks_ - 1), e.size());
  slot(chunks_ - 1) = c;
  Write(e, c->data + c->used);
  guard.Release();
  c->used += static_cast<uint32_t>(e.size());
  ++c->count;
  ++size_;
  if (c->count == kChunk) Fit(chunks_ - 1);
}

void List::PushFront(std::string_view s) {
  Encoded e = Encode(s);
  BlobGuard guard{&e};
  if (chunks_ == 0 || chunk(0)->count == kChunk) {
    Chunk* c = NewChunk(e.size());
    try {
      RingPushFront(c);
    } catch (...) {
      vsl::Free(c);
      throw;
    }
  }
  Chunk* c = Room(chunk(0), e.size());
  slot(0) = c;
  std::memmove(c->data + e.size(), c->data, c->used);
  Write(e, c->data);
  guard.Release();
  c->used += static_cast<uint32_t>(e.size());
  ++c->count;
  ++size_;
  if (c->count == kChunk) Fit(0);
}

void List::PopFront() {
  Chunk* c = chunk(0);
  const size_t len = EntrySize(c->data);
  ReleaseEntry(c->data);
  std::memmove(c->data, c->data + len, c->used - len);
  c->used -= static_cast<uint32_t>(len);
  --size_;
  if (--c->count == 0) return RingPopFront();
  MaybeShrink(0);
}

void List::PopBack() {
  const Chunk* c = chunk(chunks_ - 1);
  DropBack(EntryOffset(c, c->count - 1));
}

void List::DropBack(size_t off) {
  Chunk* c = chunk(chunks_ - 1);
  ReleaseEntry(c->data + off);
  c->used = static_cast<uint32_t>(off);
  --size_;
  if (--c->count == 0) return RingPopBack();
  MaybeShrink(chunks_ - 1);
}

void List::Set(size_t i, std::string_view s) {
  size_t ci, pos;
  Locate(i, &ci, &pos);
  Encoded e = Encode(s);
  BlobGuard guard{&e};
  const size_t off = EntryOffset(chunk(ci), pos);
  const size_t old_len = EntrySize(chunk(ci)->data + off);
  if (e.size() > old_len) slot(ci) = Room(chunk(ci), e.size() - old_len);
  Chunk* c = chunk(ci);
  ReleaseEntry(c->data + off);
  std::memmove(c->data + off + e.size(), c->data + off + old_len, c->used - off - old_len);
  Write(e, c->data + off);
  guard.Release();
  c->used = static_cast<uint32_t>(c->used - old_len + e.size());
  MaybeShrink(ci);
}

// Inserting in the middle keeps every chunk but the ends full: the chunk that received the entry
// passes one entry on to its neighbour, and so on towards the nearer end of the list.
void List::Insert(size_t i, std::string_view s) {
  if (i == 0) return PushFront(s);
  if (i >= size_) return PushBack(s);
  size_t ci, pos;
  Locate(i, &ci, &pos);
  Encoded e = Encode(s);
  BlobGuard guard{&e};
  unsigned char raw[10];
  std::string entry;
  if (e.body.empty()) {
    std::memcpy(raw, e.head, e.head_len);
  } else {
    entry.assign(reinterpret_cast<const char*>(e.head), e.head_len);
    entry.append(e.body);
  }
  const auto* bytes = e.body.empty() ? raw : reinterpret_cast<const unsigned char*>(entry.data());
  // Make room first, so that nothing below can fail half way: a new end chunk if one may be
  // needed, and the ring slot for it.
  RingReserve(chunks_ + 1);
  InsertEntry(ci, EntryOffset(chunk(ci), pos), bytes, e.size());
  guard.Release();
  ++size_;
  std::string moved;
  if (i < size_ / 2) {
    // Towards the head: a full chunk hands its first entry to the end of the previous one.
    for (size_t c = ci; c > 0 && chunk(c)->count > kChunk; --c) {
      TakeEntry(c, 0, &moved);
      InsertEntry(c - 1, chunk(c - 1)->used, reinterpret_cast<const unsigned char*>(moved.data()),
                  moved.size());
    }
    if (chunk(0)->count > kChunk) {
      TakeEntry(0, 0, &moved);
      Chunk* n = NewChunk(moved.size());
      std::memcpy(n->data, moved.data(), moved.size());
      n->used = static_cast<uint32_t>(moved.size());
      n->count = 1;
      RingPushFront(n);
    }
  } else {
    // Towards the tail: a full chunk hands its last entry to the front of the next one.
    for (size_t c = ci; c + 1 < chunks_ && chunk(c)->count > kChunk; ++c) {
      Chunk* ch = chunk(c);
      TakeEntry(c, EntryOffset(ch, ch->count - 1), &moved);
      InsertEntry(c + 1, 0, reinterpret_cast<const unsigned char*>(moved.data()), moved.size());
    }
    if (chunk(chunks_ - 1)->count > kChunk) {
      Chunk* last = chunk(chunks_ - 1);
      TakeEntry(chunks_ - 1, EntryOffset(last, last->count - 1), &moved);
      Chunk* n = NewChunk(moved.size());
      std::memcpy(n->data, moved.data(), moved.size());
      n->used = static_cast<uint32_t>(moved.size());
      n->count = 1;
      RingPushBack(n);
    }
  }
}

void List::TrimFront(size_t n) {
  size_ -= n;
  while (n > 0) {
    Chunk* c = chunk(0);
    if (n >= c->count) {
      n -= c->count;
      for (size_t off = 0; off < c->used; off += EntrySize(c->data + off))
        ReleaseEntry(c->data + off);
      RingPopFront();
      continue;
    }
    size_t off = 0;
    for (size_t k = 0; k < n; ++k) {
      ReleaseEntry(c->data + off);
      off += EntrySize(c->data + off);
    }
    std::memmove(c->data, c->data + off, c->used - off);
    c->used -= static_cast<uint32_t>(off);
    c->count -= static_cast<uint32_t>(n);
    n = 0;
    MaybeShrink(0);
  }
  if (size_ == 0) FreeAll();
}

void List::TrimBack(size_t n) {
  size_ -= n;
  while (n > 0) {
    Chunk* c = chunk(chunks_ - 1);
    const size_t keep = n >= c->count ? 0 : c->count - n;
    const size_t off = EntryOffset(c, keep);
    for (size_t o = off; o < c->used; o += EntrySize(c->data + o)) ReleaseEntry(c->data + o);
    n -= c->count - keep;
    if (keep == 0) {
      RingPopBack();
    } else {
      c->used = static_cast<uint32_t>(off);
      c->count = static_cast<uint32_t>(keep);
      MaybeShrink(chunks_ - 1);
    }
  }
  if (size_ == 0) FreeAll();
}

Needle::Needle(std::string_view s) {
  if (s.size() > kInlineMax) {
    long_ = true;
    text_ = s;
    bytes_[0] = kBlob;
    len_ = 1;
    return;
  }
  const Encoded e = Encode(s);  // no block: the element is short
  Write(e, bytes_);
  len_ = e.size();
}

bool Needle::LongMatches(const unsigned char* p) const {
  const unsigned char* b = BlobOf(p);
  return GetLe(b, 8) == text_.size() && std::memcmp(b + 8, text_.data(), text_.size()) == 0;
}

int64_t List::Find(std::string_view s) const {
  const Needle needle(s);
  int64_t found = -1;
  ForEachEntry(0, [&](size_t i, const unsigned char* p) {
    if (!needle.Matches(p)) return true;
    found = static_cast<int64_t>(i);
    return false;
  });
  return found;
}

// Rebuilds the list without the matching elements chosen by count; entries move as they are, so
// long strings keep their blocks. On failure the list is unchanged.
size_t List::Remove(std::string_view s, int64_t count) {
  std::vector<size_t, vsl::Allocator<size_t>> hits;
  const Needle needle(s);
  ForEachEntry(0, [&](size_t i, const unsigned char* p) {
    if (needle.Matches(p)) hits.push_back(i);
    return count <= 0 || hits.size() < static_cast<uint64_t>(count);
  });
  if (hits.empty()) return 0;
  if (count < 0 && hits.size() > static_cast<uint64_t>(-(count + 1)) + 1)
    hits.erase(hits.begin(), hits.end() - static_cast<std::ptrdiff_t>(-(count + 1)) - 1);
  List kept;
  size_t h = 0, index = 0;
  try {
    for (size_t ci = 0; ci < chunks_; ++ci) {
      const Chunk* c = chunk(ci);
      for (size_t off = 0; off < c->used; ++index) {
        const size_t len = EntrySize(c->data + off);
        if (h < hits.size() && hits[h] == index) {
          ++h;
        } else {
          if (kept.chunks_ == 0 || kept.chunk(kept.chunks_ - 1)->count == kChunk) {
            Chunk* n = NewChunk(len);
            try {
              kept.RingPushBack(n);
            } catch (...) {
              vsl::Free(n);
              throw;
            }
          }
          kept.InsertEntry(kept.chunks_ - 1, kept.chunk(kept.chunks_ - 1)->used, c->data + off,
                           len);
          ++kept.size_;
        }
        off += len;
      }
    }
  } catch (...) {
    // The copies share the long strings' blocks with this list: free only kept's chunks.
    for (size_t ci = 0; ci < kept.chunks_; ++ci) vsl::Free(kept.chunk(ci));
    vsl::Free(kept.ring_);
    kept.ring_ = nullptr;
    kept.chunks_ = 0;
    kept.size_ = 0;
    throw;
  }
  // Success: release the removed elements' blocks, drop the old chunks, take kept's.
  h = 0;
  index = 0;
  for (size_t ci = 0; ci < chunks_; ++ci) {
    Chunk* c = chunk(ci);
    for (size_t off = 0; off < c->used; off += EntrySize(c->data + off), ++index) {
      if (h < hits.size() && hits[h] == index) {
        ReleaseEntry(c->data + off);
        ++h;
      }
    }
    vsl::Free(c);
  }
  vsl::Free(ring_);
  ring_ = kept.ring_;
  ring_cap_ = kept.ring_cap_;
  head_ = kept.head_;
  chunks_ = kept.chunks_;
  size_ = kept.size_;
  kept.ring_ = nullptr;
  kept.ring_cap_ = kept.head_ = kept.chunks_ = 0;
  kept.size_ = 0;
  return hits.size();
}

// ---- type callbacks ----

size_t List::MemUsage() const {
  size_t bytes = sizeof(List);
  if (ring_ != nullptr) bytes += vsl::Api().usable_size(ring_);
  for (size_t ci = 0; ci < chunks_; ++ci) {
    const Chunk* c = chunk(ci);
    bytes += vsl::Api().usable_size(c);
    for (size_t off = 0; off < c->used; off += EntrySize(c->data + off)) {
      if (c->data[off] == kBlob) bytes += vsl::Api().usable_size(BlobOf(c->data + off));
    }
  }
  return bytes;
}

List* List::Clone() const {
  ListPtr copy(vsl::New<List>());
  ForEach(0, [&](size_t, std::string_view e) {
    copy->PushBack(e);
    return true;
  });
  return copy.release();
}

void List::Serialize(vsl::Writer& w) const {
  w.U64(size_);
  ForEach(0, [&](size_t, std::string_view e) {
    w.Bytes(e);
    return true;
  });
}

List* List::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != 1 || !r.U64(&n) || n == 0) return nullptr;
  ListPtr list(vsl::New<List>());
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    if (!r.Bytes(&s)) return nullptr;
    list->PushBack(s);
  }
  return list.release();
}

}  // namespace vessel::lists
