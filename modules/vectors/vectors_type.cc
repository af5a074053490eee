// The vector value type: slots, the buffer's growth and shrinking, and the type callbacks.
#include "vectors_type.h"

#include <algorithm>
#include <new>

namespace vessel::vectors {
namespace {

// Slots reserved up front when loading: a corrupt count must not allocate a huge buffer before
// the input runs out.
constexpr size_t kMaxLoadReserve = 4096;
constexpr size_t kMinCapacity = 4;

}  // namespace

Slot Slot::Make(std::string_view s) {
  Slot e{};
  if (s.size() <= kMaxInline) {
    if (!s.empty()) std::memcpy(e.b_, s.data(), s.size());
    e.b_[15] = static_cast<unsigned char>(s.size());
    return e;
  }
  void* p = vsl::Alloc(s.size());
  std::memcpy(p, s.data(), s.size());
  std::memcpy(e.b_, &p, sizeof(p));
  const uint64_t len = s.size();
  for (int i = 0; i < 7; ++i) e.b_[8 + i] = static_cast<unsigned char>(len >> (8 * i));
  e.b_[15] = kHeapTag;
  return e;
}

Vector::~Vector() {
  for (size_t i = 0; i < size_; ++i) slots_[i].Release();
  vsl::Free(slots_);
}

void Vector::Drop(const Slot& s) {
  heap_bytes_ -= s.HeapBytes();
  s.Release();
}

void Vector::Realloc(size_t cap) {
  void* p = vsl::Realloc(slots_, cap * sizeof(Slot));
  slots_ = static_cast<Slot*>(p);
  cap_ = std::min(vsl::Api().usable_size(p) / sizeof(Slot), kMaxLen);
}

void Vector::Reserve(size_t n) {
  if (n <= cap_) return;
  Realloc(std::max({n, std::min(cap_ * 2, kMaxLen), kMinCapacity}));
}

void Vector::ShrinkIfSparse() {
  if (size_ == 0) {
    vsl::Free(slots_);
    slots_ = nullptr;
    cap_ = 0;
    return;
  }
  if (cap_ <= 2 * kMinCapacity || size_ >= cap_ / 4) return;
  try {
    Realloc(std::max(size_ * 2, kMinCapacity));
  } catch (const std::bad_alloc&) {
    // Keeping the larger buffer is harmless.
  }
}

void Vector::ShrinkToFit() {
  if (size_ == 0 || size_ == cap_) return;
  try {
    Realloc(size_);
  } catch (const std::bad_alloc&) {
    // Keeping the larger buffer is harmless.
  }
}

void Vector::PushBack(std::string_view s) {
  Reserve(size_ + 1);
  Construct(slots_ + size_, 1, [s](size_t) { return s; });
  ++size_;
}

void Vector::Insert(size_t pos, const Elems& elems) {
  if (elems.n == 0) return;
  Reserve(size_ + elems.n);
  Slot* gap = slots_ + pos;
  const size_t tail = size_ - pos;
  if (tail != 0) std::memmove(gap + elems.n, gap, tail * sizeof(Slot));
  try {
    Construct(gap, elems.n, elems);
  } catch (...) {
    if (tail != 0) std::memmove(gap, gap + elems.n, tail * sizeof(Slot));
    throw;
  }
  size_ += elems.n;
}

void Vector::PopBack() {
  Drop(slots_[--size_]);
  ShrinkIfSparse();
}

void Vector::Set(size_t i, std::string_view s) {
  Slot fresh{};
  Construct(&fresh, 1, [s](size_t) { return s; });
  Drop(slots_[i]);
  slots_[i] = fresh;
}

void Vector::Swap(size_t i, size_t j) { std::swap(slots_[i], slots_[j]); }

void Vector::Erase(size_t pos, size_t n) {
  if (n == 0) return;
  for (size_t i = pos; i < pos + n; ++i) Drop(slots_[i]);
  const size_t tail = size_ - pos - n;
  if (tail != 0) std::memmove(slots_ + pos, slots_ + pos + n, tail * sizeof(Slot));
  size_ -= n;
  ShrinkIfSparse();
}

void Vector::Keep(size_t first, size_t last) {
  for (size_t i = 0; i < first; ++i) Drop(slots_[i]);
  for (size_t i = last; i < size_; ++i) Drop(slots_[i]);
  if (first != 0 && last != first) {
    std::memmove(slots_, slots_ + first, (last - first) * sizeof(Slot));
  }
  size_ = last - first;
  ShrinkIfSparse();
}

void Vector::Resize(size_t n, std::string_view fill) {
  if (n <= size_) return Erase(n, size_ - n);
  Reserve(n);
  Construct(slots_ + size_, n - size_, [fill](size_t) { return fill; });
  size_ = n;
}

int64_t Vector::Find(std::string_view s, size_t from) const {
  for (size_t i = from; i < size_; ++i) {
    if (slots_[i].Equals(s)) return static_cast<int64_t>(i);
  }
  return -1;
}

size_t Vector::MemUsage() const {
  size_t bytes = vsl::Api().usable_size(const_cast<Vector*>(this)) + heap_bytes_;
  if (slots_ != nullptr) bytes += vsl::Api().usable_size(slots_);
  return bytes;
}

Vector* Vector::Clone() const {
  VectorPtr copy(vsl::New<Vector>());
  copy->Reserve(size_);
  copy->Construct(copy->slots_, size_, [this](size_t i) { return at(i); });
  copy->size_ = size_;
  return copy.release();
}

void Vector::Serialize(vsl::Writer& w) const {
  w.U64(size_);
  for (size_t i = 0; i < size_; ++i) w.Bytes(at(i));
}

Vector* Vector::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t count;
  if (encver != kEncodingVersion || !r.U64(&count) || count == 0 || count > kMaxLen) {
    return nullptr;
  }
  VectorPtr v(vsl::New<Vector>());
  v->Reserve(std::min<size_t>(count, kMaxLoadReserve));
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view b;
    if (!r.Bytes(&b)) return nullptr;
    v->PushBack(b);
  }
  v->ShrinkToFit();  // the count was not trusted for the reservation: give back the slack
  return v.release();
}

}  // namespace vessel::vectors
