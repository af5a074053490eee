// The list value type: a ring buffer of 16-byte elements with short strings stored inline, and
// the pure operations (Op-style methods) the list commands build on.
//
// Representation (chosen by measurement, see bench/lists_bench.cc):
//   - List: a header {ring, capacity, head, size, heap bytes} and one contiguous ring of Elem
//     with a power-of-two capacity, so index i is ring[(head + i) & (capacity - 1)]: LINDEX and
//     LSET are O(1), pushes and pops at both ends amortized O(1), LINSERT and LREM move the
//     shorter side only.
//   - Elem: 16 bytes. Up to 15 bytes inline (byte 15 holds the length); longer elements are a
//     pointer to exactly len bytes from the host allocator plus the length (byte 15 = kHeapTag).
// Every byte lives in the host allocator (accounted to the module). Values are only touched under
// the key's lock; nothing here is thread-aware. Operations that allocate throw std::bad_alloc and
// leave the list valid.
#ifndef VESSEL_MODULES_LISTS_LISTS_TYPE_H_
#define VESSEL_MODULES_LISTS_LISTS_TYPE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vessel/module.hpp"

namespace vessel::lists {

// One list element. Trivially copyable: the ring moves elements with plain copies. Ownership of
// a heap block travels with the value; whoever drops an element calls Release() once.
class Elem {
 public:
  static constexpr size_t kMaxInline = 15;

  // A new element holding s (allocates when s is longer than kMaxInline).
  static Elem Make(std::string_view s) {
    Elem e;
    if (s.size() <= kMaxInline) {
      std::memcpy(e.b_, s.data(), s.size());
      e.b_[15] = static_cast<unsigned char>(s.size());
      return e;
    }
    void* p = vsl::Alloc(s.size());
    std::memcpy(p, s.data(), s.size());
    std::memcpy(e.b_, &p, sizeof(p));
    const uint64_t len = s.size();
    if constexpr (std::endian::native == std::endian::little) {
      const uint64_t word = len | (uint64_t{kHeapTag} << 56);  // the tag lands in byte 15
      std::memcpy(e.b_ + 8, &word, sizeof(word));
    } else {
      for (int i = 0; i < 7; ++i) e.b_[8 + i] = static_cast<unsigned char>(len >> (8 * i));
      e.b_[15] = kHeapTag;
    }
    return e;
  }
  void Release() {
    if (is_heap()) vsl::Free(heap_ptr());
  }

  bool is_heap() const { return b_[15] == kHeapTag; }
  size_t size() const {
    if (!is_heap()) return b_[15];
    uint64_t len = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&len, b_ + 8, sizeof(len));
      return len & ((uint64_t{1} << 56) - 1);
    }
    for (int i = 0; i < 7; ++i) len |= uint64_t{b_[8 + i]} << (8 * i);
    return len;
  }
  const char* data() const { return is_heap() ? heap_ptr() : reinterpret_cast<const char*>(b_); }
  std::string_view view() const { return {data(), size()}; }
  bool Equals(std::string_view s) const {
    return size() == s.size() && (s.empty() || std::memcmp(data(), s.data(), s.size()) == 0);
  }
  // Bytes of the heap block as the allocator sized it; 0 for an inline element.
  size_t HeapBytes() const { return is_heap() ? vsl::Api().usable_size(heap_ptr()) : 0; }

 private:
  static constexpr unsigned char kHeapTag = 0xFF;
  char* heap_ptr() const {
    char* p;
    std::memcpy(&p, b_, sizeof(p));
    return p;
  }
  alignas(8) unsigned char b_[16];
};
static_assert(sizeof(Elem) == 16);

class List {
 public:
  List() = default;
  ~List();
  List(const List&) = delete;
  List& operator=(const List&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Elem& at(size_t i) const { return buf_[(head_ + i) & (cap_ - 1)]; }

  // Makes room for n elements in total (never shrinks).
  void Reserve(size_t n);
  void PushBack(std::string_view s) { PushBack(Elem::Make(s)); }
  void PushFront(std::string_view s) { PushFront(Elem::Make(s)); }
  // Take ownership of e (e.g. popped from another list by LMOVE: no copy). On failure e is
  // released and std::bad_alloc thrown; Reserve() first to make them nothrow.
  void PushBack(Elem e) {
    if (size_ == cap_) GrowFor(e);
    buf_[(head_ + size_) & (cap_ - 1)] = e;
    ++size_;
  }
  void PushFront(Elem e) {
    if (size_ == cap_) GrowFor(e);
    head_ = (head_ - 1) & (cap_ - 1);
    buf_[head_] = e;
    ++size_;
  }
  // Remove and return an end element (list not empty); the caller Release()s it.
  Elem PopFront() {
    const Elem e = buf_[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    if (size_ <= cap_ / 4 && cap_ > kMinCapacity && size_ != 0) MaybeShrink();
    return e;
  }
  Elem PopBack() {
    const Elem e = slot(size_ - 1);
    --size_;
    if (size_ <= cap_ / 4 && cap_ > kMinCapacity && size_ != 0) MaybeShrink();
    return e;
  }
  // Replaces element i (< size).
  void Set(size_t i, std::string_view s);
  // Inserts s before position i (i == size appends).
  void Insert(size_t i, std::string_view s);
  // Drops n elements from the front / the back (n <= size).
  void TrimFront(size_t n);
  void TrimBack(size_t n);
  // LREM: removes up to |count| elements equal to s (all when count is 0), from the tail when
  // count < 0. Returns how many were removed.
  size_t Remove(std::string_view s, int64_t count);
  // Index of the first element equal to s, or -1.
  int64_t Find(std::string_view s) const;

  // Type callbacks (vsl::Type<List>). MemUsage is exact and O(n) (it asks the allocator for
  // each out-of-line element: ~4 ms for a million, MEMORY USAGE only), so pushes and pops do not
  // pay two more usable_size calls per long element to keep a running total.
  size_t MemUsage() const;
  List* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static List* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size_; }
  // Redis 7.0 reports "quicklist" for every list (listpack-encoded lists came with 7.2).
  const char* Encoding() const { return "quicklist"; }
  // Calls fn for every element from head to tail until it returns nonzero (ABI 1.2).
  int Visit(vsl_visit_fn fn, void* ud) const {
    for (size_t i = 0; i < size_; ++i) {
      const std::string_view e = at(i).view();
      if (fn(ud, e.data(), e.size(), 0.0) != 0) break;
    }
    return VSL_OK;
  }

 private:
  static constexpr size_t kMinCapacity = 4;
  Elem& slot(size_t i) { return buf_[(head_ + i) & (cap_ - 1)]; }
  void Resize(size_t cap);  // moves the elements to a new ring of cap (>= size) slots, head 0
  void Grow() { Resize(cap_ == 0 ? kMinCapacity : cap_ * 2); }
  void GrowFor(Elem& e);  // grows the full ring; on failure releases e and throws
  void MaybeShrink() noexcept;

  Elem* buf_ = nullptr;
  size_t cap_ = 0;   // 0 or a power of two
  size_t head_ = 0;  // ring index of element 0
  size_t size_ = 0;
};

// The registered type (set once in vsl_module_init).
inline vsl::Type<List> g_list_type;

// RAII for a list not yet stored in a key.
struct ListDeleter {
  void operator()(List* l) const { vsl::Delete(l); }
};

}  // namespace vessel::lists

#endif  // VESSEL_MODULES_LISTS_LISTS_TYPE_H_
