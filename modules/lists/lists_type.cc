// The list value type: ring buffer operations and the type callbacks.
#include "lists_type.h"

#include <algorithm>
#include <memory>

namespace vessel::lists {

List::~List() {
  for (size_t i = 0; i < size_; ++i) slot(i).Release();
  vsl::Free(buf_);
}

void List::Resize(size_t cap) {
  Elem* ring = static_cast<Elem*>(vsl::Alloc(cap * sizeof(Elem)));
  if (size_ != 0) {
    // At most two contiguous runs: [head, end of ring) and [0, rest).
    const size_t first = std::min(size_, cap_ - head_);
    std::memcpy(ring, buf_ + head_, first * sizeof(Elem));
    std::memcpy(ring + first, buf_, (size_ - first) * sizeof(Elem));
  }
  vsl::Free(buf_);
  buf_ = ring;
  cap_ = cap;
  head_ = 0;
}

void List::Reserve(size_t n) {
  if (n <= cap_) return;
  size_t cap = cap_ == 0 ? kMinCapacity : cap_;
  while (cap < n) cap *= 2;
  Resize(cap);
}

// Halves the ring while it is at most a quarter full, so a list that shrank gives its memory
// back, and a push/pop pair at the boundary cannot make it resize every time. Never throws: when
// the smaller ring cannot be allocated the list keeps the larger one.
void List::MaybeShrink() noexcept {
  if (cap_ <= kMinCapacity || size_ == 0 || size_ > cap_ / 4) return;
  size_t cap = cap_;
  while (cap > kMinCapacity && size_ <= cap / 4) cap /= 2;
  try {
    Resize(cap);
  } catch (...) {
  }
}

void List::GrowFor(Elem& e) {
  try {
    Grow();
  } catch (...) {
    e.Release();
    throw;
  }
}

void List::Set(size_t i, std::string_view s) {
  const Elem e = Elem::Make(s);
  slot(i).Release();
  slot(i) = e;
}

void List::Insert(size_t i, std::string_view s) {
  Elem e = Elem::Make(s);
  if (size_ == cap_) GrowFor(e);
  if (i < size_ / 2) {
    // Move the front part one slot to the left.
    head_ = (head_ - 1) & (cap_ - 1);
    for (size_t j = 0; j < i; ++j) slot(j) = slot(j + 1);
  } else {
    // Move the back part one slot to the right.
    for (size_t j = size_; j > i; --j) slot(j) = slot(j - 1);
  }
  slot(i) = e;
  ++size_;
}

void List::TrimFront(size_t n) {
  for (size_t i = 0; i < n; ++i) slot(i).Release();
  head_ = (head_ + n) & (cap_ - 1);
  size_ -= n;
  MaybeShrink();
}

void List::TrimBack(size_t n) {
  for (size_t i = size_ - n; i < size_; ++i) slot(i).Release();
  size_ -= n;
  MaybeShrink();
}

size_t List::Remove(std::string_view s, int64_t count) {
  const uint64_t magnitude =
      count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  const uint64_t limit = count == 0 ? UINT64_MAX : magnitude;
  size_t removed = 0;
  if (count >= 0) {
    // Compact towards the head: keep[w++] = element r.
    size_t w = 0;
    for (size_t r = 0; r < size_; ++r) {
      Elem& e = slot(r);
      if (removed < limit && e.Equals(s)) {
        e.Release();
        ++removed;
      } else {
        if (w != r) slot(w) = e;
        ++w;
      }
    }
  } else {
    // Compact towards the tail, then move the head past the freed slots.
    size_t w = size_;
    for (size_t r = size_; r-- > 0;) {
      Elem& e = slot(r);
      if (removed < limit && e.Equals(s)) {
        e.Release();
        ++removed;
      } else {
        --w;
        if (w != r) slot(w) = e;
      }
    }
    head_ = (head_ + removed) & (cap_ - 1);
  }
  size_ -= removed;
  if (removed != 0) MaybeShrink();
  return removed;
}

int64_t List::Find(std::string_view s) const {
  for (size_t i = 0; i < size_; ++i) {
    if (at(i).Equals(s)) return static_cast<int64_t>(i);
  }
  return -1;
}

size_t List::MemUsage() const {
  const vsl_api& api = vsl::Api();
  size_t bytes = api.usable_size(const_cast<List*>(this));
  if (buf_ != nullptr) bytes += api.usable_size(buf_);
  for (size_t i = 0; i < size_; ++i) bytes += at(i).HeapBytes();
  return bytes;
}

List* List::Clone() const {
  std::unique_ptr<List, ListDeleter> copy(vsl::New<List>());
  copy->Reserve(size_);
  for (size_t i = 0; i < size_; ++i) {
    const Elem& e = at(i);
    copy->PushBack(e.is_heap() ? Elem::Make(e.view()) : e);
  }
  return copy.release();
}

// Format (encoding version 1): u64 count, then each element as bytes, head to tail.
void List::Serialize(vsl::Writer& w) const {
  w.U64(size_);
  for (size_t i = 0; i < size_; ++i) w.Bytes(at(i).view());
}

List* List::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != 1 || !r.U64(&n) || n == 0) return nullptr;
  std::unique_ptr<List, ListDeleter> list(vsl::New<List>());
  // Each element takes at least 8 bytes of input: do not trust a huge count up front.
  list->Reserve(static_cast<size_t>(std::min<uint64_t>(n, 1 << 16)));
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    if (!r.Bytes(&s)) return nullptr;
    list->PushBack(s);
  }
  return list.release();
}

}  // namespace vessel::lists
