// The vector value type of the vectors module: one contiguous array of 16-byte slots with short
// elements stored inline, and the pure operations the VEC.* commands build on.
//
// Representation:
//   - Vector: a header {slots, size, capacity, heap bytes} and one buffer of `capacity` Slots
//     from the host allocator, so element i is slots[i]: index, set and swap are O(1), push and
//     pop at the back amortized O(1), insert and erase move the tail. The buffer grows by
//     doubling and shrinks when three quarters of it are unused, so memory follows the content.
//   - Slot: 16 bytes. Up to 15 bytes inline (byte 15 holds the length); a longer element is a
//     pointer to exactly its bytes, in their own host allocation, plus its length in bytes 8-14
//     (byte 15 = kHeapTag).
// Every byte lives in the host allocator, accounted to the module; MemUsage() is exact (the sum
// of the allocator's usable sizes). Values are only touched under the key's lock: nothing here is
// thread-aware. Operations that allocate throw std::bad_alloc and leave the vector unchanged.
#ifndef VESSEL_MODULES_VECTORS_VECTORS_TYPE_H_
#define VESSEL_MODULES_VECTORS_VECTORS_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::vectors {

// The version of the serialized form (Vector::Serialize): u64 count, then count byte strings.
inline constexpr uint32_t kEncodingVersion = 1;
// The longest vector: 2^32 - 1 elements (64 GiB of slots). Commands refuse to grow past it.
inline constexpr size_t kMaxLen = (size_t{1} << 32) - 1;

// One element. Trivially copyable: the buffer moves slots with plain copies. A heap slot owns its
// block; the Vector that holds it frees it (see Vector::Drop).
class Slot {
 public:
  static constexpr size_t kMaxInline = 15;

  // A slot holding s; allocates when s is longer than kMaxInline (throws std::bad_alloc).
  static Slot Make(std::string_view s);

  bool is_heap() const { return b_[15] == kHeapTag; }
  size_t size() const {
    if (!is_heap()) return b_[15];
    uint64_t len = 0;
    for (int i = 0; i < 7; ++i) len |= uint64_t{b_[8 + i]} << (8 * i);
    return len;
  }
  const char* data() const { return is_heap() ? heap_ptr() : reinterpret_cast<const char*>(b_); }
  std::string_view view() const { return {data(), size()}; }
  bool Equals(std::string_view s) const {
    return size() == s.size() && (s.empty() || std::memcmp(data(), s.data(), s.size()) == 0);
  }
  // The allocator's usable size of the heap block; 0 for an inline slot.
  size_t HeapBytes() const { return is_heap() ? vsl::Api().usable_size(heap_ptr()) : 0; }
  // Frees the heap block, if any. The slot must not be used afterwards.
  void Release() const {
    if (is_heap()) vsl::Free(heap_ptr());
  }

 private:
  static constexpr unsigned char kHeapTag = 0xFF;
  char* heap_ptr() const {
    char* p;
    std::memcpy(&p, b_, sizeof(p));
    return p;
  }
  alignas(8) unsigned char b_[16];
};
static_assert(sizeof(Slot) == 16);

// n elements for the bulk operations, borrowed: a run of a command's arguments.
struct Elems {
  const vsl_slice* argv;
  size_t n;
  std::string_view operator()(size_t i) const { return vsl::View(argv[i]); }
};

class Vector {
 public:
  Vector() = default;
  ~Vector();
  Vector(const Vector&) = delete;
  Vector& operator=(const Vector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // 0 <= i < size().
  std::string_view at(size_t i) const { return slots_[i].view(); }
  const Slot& slot(size_t i) const { return slots_[i]; }

  // Room for n slots in all (never shrinks).
  void Reserve(size_t n);
  // Appends one element / every element of `elems`, all or nothing.
  void PushBack(std::string_view s);
  void Append(const Elems& elems) { Insert(size_, elems); }
  // Inserts the elements before position pos (0 <= pos <= size()), in order, all or nothing.
  void Insert(size_t pos, const Elems& elems);
  // Removes the last element (the vector is not empty).
  void PopBack();
  // Replaces element i (0 <= i < size()).
  void Set(size_t i, std::string_view s);
  // Replaces element positions[k] (< size()) by source(k) for k in [0, n), in order, so a
  // repeated position keeps the last; all or nothing.
  template <class Source>
  void SetEach(const size_t* positions, size_t n, const Source& source);
  void Swap(size_t i, size_t j);
  // Removes n elements from position pos (pos + n <= size()).
  void Erase(size_t pos, size_t n);
  // Keeps only the elements [first, last) (first <= last <= size()).
  void Keep(size_t first, size_t last);
  // Grows with copies of fill or shrinks to n elements (n <= kMaxLen), all or nothing.
  void Resize(size_t n, std::string_view fill);
  // The bytes one element holding s takes: its slot, and its own block when it is long.
  static size_t SlotBytes(std::string_view s) {
    return sizeof(Slot) + (s.size() > Slot::kMaxInline ? s.size() : 0);
  }
  // The first position >= from holding s, or -1.
  int64_t Find(std::string_view s, size_t from) const;

  // The type callbacks (vsl::Type).
  size_t MemUsage() const;
  Vector* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Vector* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size_; }
  const char* Encoding() const { return "vector"; }

 private:
  // Makes dst[0, n) from source(0) ... source(n - 1) (dst is spare room: nothing is released);
  // on failure releases the ones made and rethrows.
  template <class Source>
  void Construct(Slot* dst, size_t n, const Source& source);
  void Drop(const Slot& s);
  // Gives back most of a buffer that is mostly unused / all the unused room.
  void ShrinkIfSparse();
  void ShrinkToFit();
  void Realloc(size_t cap);

  Slot* slots_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
  size_t heap_bytes_ = 0;  // usable bytes of every heap slot's block
};

// ---- implementation of the templates ----

template <class Source>
void Vector::Construct(Slot* dst, size_t n, const Source& source) {
  size_t made = 0;
  try {
    for (; made < n; ++made) {
      dst[made] = Slot::Make(source(made));
      heap_bytes_ += dst[made].HeapBytes();
    }
  } catch (...) {
    for (size_t i = 0; i < made; ++i) Drop(dst[i]);
    throw;
  }
}

template <class Source>
void Vector::SetEach(const size_t* positions, size_t n, const Source& source) {
  Slot* fresh = static_cast<Slot*>(vsl::Alloc(n * sizeof(Slot)));
  try {
    Construct(fresh, n, source);
  } catch (...) {
    vsl::Free(fresh);
    throw;
  }
  for (size_t k = 0; k < n; ++k) {
    Drop(slots_[positions[k]]);
    slots_[positions[k]] = fresh[k];
  }
  vsl::Free(fresh);
}

// A vector not yet stored in a key.
using VectorPtr = vsl::Owned<Vector>;

}  // namespace vessel::vectors

#endif  // VESSEL_MODULES_VECTORS_VECTORS_TYPE_H_
