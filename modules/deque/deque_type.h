// The deque value type: a ring of packed chunks of a fixed element count, and the operations the
// DEQ.* commands build on.
//
// Representation:
//   - A Deque is a ring (a power-of-two array used circularly) of pointers to Chunks. Every chunk
//     holds exactly kChunk elements except the first and the last, which hold 1 to kChunk. So
//     element i lies in chunk 0 when i is below the first chunk's count, else in chunk
//     1 + (i - first) / kChunk at (i - first) % kChunk: an index finds its chunk in O(1) and walks
//     at most kChunk - 1 entries inside it. A push or pop at either end touches one chunk and at
//     most one ring slot.
//   - Insertion and erasure at a position (Splice) rebuild the chunks on the shorter side of the
//     position: the elements between the nearer end and the position are re-laid into new chunks
//     (kChunk per chunk, the odd count at that end), the chunks on the other side stay as they
//     are. So inserting at i costs O(min(i, n - i)) and erasing c elements O(min(i, n - i - c) +
//     c).
//   - A Chunk is one allocation: a 6-byte header and its entries packed back to back, in the
//     encoding of vessel/packed_element.hpp (shared with the lists module's chunks):
//       0xxxxxxx                 integer 0..127 (the element is its decimal text)
//       10llllll <l bytes>       string of 0..63 bytes
//       110xxxxx xxxxxxxx        integer -4096..4095 (13 bits, two's complement)
//       111000tt <2|3|4|8 bytes> integer of 16/24/32/64 bits, little-endian (tt: 0..3)
//       11110000 <len> <bytes>   string of 64..255 bytes
//       11110001 <pointer>       string of 256 bytes or more in its own block: u64 length, bytes
//     An element is stored as an integer only when it is the canonical decimal text of one (no
//     sign but '-', no leading zero, not "-0"), so reading it back gives the same bytes and an
//     element has exactly one encoding. A chunk holds at most 64 entries of at most 257 bytes, so
//     16-bit offsets suffice. A short element costs its bytes and one tag byte (a Redis listpack
//     entry costs a tag and a back-length byte), a chunk 6 bytes and a ring slot.
// The ring of chunks is the lists module's structure (modules/lists/lists_type.h): the same
// layout of chunk 0 and full middle chunks, the same entries. Only the entry codec is shared (in
// the SDK); the ring stays in each module, since a module includes only sdk/ and the two rings
// differ where it matters: 16-bit chunk counters here, 32-bit there; Splice rebuilds the shorter
// side here where LINSERT shifts one entry per chunk there; exact byte accounting here.
// Every byte lives in the host allocator (accounted to the module); MemUsage() is exact and O(1)
// (the usable sizes of every block are kept as they change). Values are only touched under their
// key's lock; nothing here is thread-aware. Every operation that allocates does so before it
// changes anything, so std::bad_alloc leaves the deque as it was.
#ifndef VESSEL_MODULES_DEQUE_DEQUE_TYPE_H_
#define VESSEL_MODULES_DEQUE_DEQUE_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vessel/module.hpp"
#include "vessel/packed_element.hpp"
#include "vessel/util.hpp"

namespace vessel::deque {

// The version of the serialized form (Deque::Serialize): u64 count, then count byte strings.
inline constexpr uint32_t kEncodingVersion = 1;

// Room for an integer element formatted back to text.
using ElemBuf = vsl::packed::TextBuf;

// n elements borrowed from a command's arguments (or any other source of views).
struct Elems {
  const vsl_slice* argv;
  size_t n;
  std::string_view operator()(size_t i) const { return vsl::View(argv[i]); }
};

struct Chunk {
  uint16_t used;   // bytes of entries
  uint16_t cap;    // bytes available for entries
  uint16_t count;  // entries
  unsigned char data[];
};

// ---- entries ----

// Bytes of the entry at p and the element it holds (integers formatted into buf).
using vsl::packed::EntrySize;
using vsl::packed::EntryView;

class Deque {
 public:
  static constexpr size_t kChunk = 64;  // elements per full chunk

  Deque() = default;
  ~Deque();
  Deque(const Deque&) = delete;
  Deque& operator=(const Deque&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Element i (< size()): a view into the deque, or into buf for an integer; valid until the
  // deque changes.
  std::string_view At(size_t i, ElemBuf& buf) const;

  void PushBack(std::string_view s);
  void PushFront(std::string_view s);
  // Pass the end element to take(view), then remove it (the deque is not empty). Never throw
  // unless take does, before anything is removed.
  template <class F>
  void PopFront(F&& take);
  template <class F>
  void PopBack(F&& take);
  // Replaces element i (< size()).
  void Set(size_t i, std::string_view s);
  // Replaces the elements [i, i + erase) (i + erase <= size()) by elems(0) ... elems(n - 1).
  template <class Source>
  void Splice(size_t i, size_t erase, size_t n, const Source& elems);
  void Insert(size_t i, std::string_view s) {
    Splice(i, 0, 1, [s](size_t) { return s; });
  }
  void Erase(size_t i, size_t n) {
    Splice(i, n, 0, [](size_t) { return std::string_view(); });
  }

  // Calls fn(index, element) for the elements from `from` on until fn returns false.
  template <class F>
  void ForEach(size_t from, F&& fn) const;

  // Whether the chunk layout and every byte count agree (tests and the fuzzer).
  bool Valid() const;

  // Type callbacks (vsl::Type<Deque>).
  size_t MemUsage() const;
  Deque* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Deque* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size_; }  // freeing walks every entry (long ones own blocks)
  const char* Encoding() const { return "chunkring"; }
  // Calls fn for every element from front to back until it returns nonzero (ABI 1.2).
  int Visit(vsl_visit_fn fn, void* ud) const {
    ForEach(0, [&](size_t, std::string_view e) { return fn(ud, e.data(), e.size(), 0.0) == 0; });
    return VSL_OK;
  }

 private:
  // An element encoded as an entry (its long string's block owned until written).
  using Encoded = vsl::packed::Encoded;

  Chunk* chunk(size_t ci) const { return ring_[(head_ + ci) & (ring_cap_ - 1)]; }
  Chunk*& slot(size_t ci) { return ring_[(head_ + ci) & (ring_cap_ - 1)]; }
  // The chunk and the position in it of element i (< size()).
  void Locate(size_t i, size_t* ci, size_t* pos) const {
    const size_t first = chunk(0)->count;
    if (i < first) {
      *ci = 0;
      *pos = i;
    } else {
      *ci = 1 + (i - first) / kChunk;
      *pos = (i - first) % kChunk;
    }
  }
  static size_t Offset(const Chunk* c, size_t k) {
    size_t off = 0;
    for (size_t j = 0; j < k; ++j) off += EntrySize(c->data + off);
    return off;
  }

  Chunk* NewChunk(size_t bytes);
  void FreeChunk(Chunk* c) noexcept;
  // Makes room for `extra` more bytes in chunk ci (which may move).
  Chunk* Room(size_t ci, size_t extra);
  // Gives back the spare room of chunk ci when it is large (never throws).
  void Trim(size_t ci) noexcept;
  void RingReserve(size_t n);
  void ReleaseEntry(const unsigned char* p) noexcept;
  void PushEncoded(Encoded& e, bool front);
  void DropFront() noexcept;
  void DropBack(size_t off) noexcept;
  // Splice with the new elements already encoded (their blobs owned by the caller until it
  // returns normally).
  void SpliceEncoded(size_t i, size_t erase, Encoded* fresh, size_t n);
  void FreeAll() noexcept;

  Chunk** ring_ = nullptr;
  uint32_t ring_cap_ = 0;  // 0 or a power of two
  uint32_t head_ = 0;      // ring index of chunk 0
  size_t chunks_ = 0;
  size_t size_ = 0;
  size_t bytes_ = 0;  // usable bytes of every chunk and long-string block
};

// ---- templates ----

template <class F>
void Deque::PopFront(F&& take) {
  ElemBuf buf;
  take(EntryView(chunk(0)->data, buf));
  DropFront();
}

template <class F>
void Deque::PopBack(F&& take) {
  const Chunk* c = chunk(chunks_ - 1);
  const size_t off = Offset(c, c->count - 1u);
  ElemBuf buf;
  take(EntryView(c->data + off, buf));
  DropBack(off);
}

template <class Source>
void Deque::Splice(size_t i, size_t erase, size_t n, const Source& elems) {
  Encoded small[4];
  Encoded* fresh = small;
  if (n > 4) fresh = static_cast<Encoded*>(vsl::Alloc(n * sizeof(Encoded)));
  size_t made = 0;
  try {
    for (; made < n; ++made) fresh[made] = vsl::packed::Encode(elems(made));
    SpliceEncoded(i, erase, fresh, n);
  } catch (...) {
    for (size_t k = 0; k < made; ++k) vsl::Free(fresh[k].blob);
    if (fresh != small) vsl::Free(fresh);
    throw;
  }
  if (fresh != small) vsl::Free(fresh);
}

template <class F>
void Deque::ForEach(size_t from, F&& fn) const {
  if (from >= size_) return;
  size_t ci, pos;
  Locate(from, &ci, &pos);
  size_t index = from;
  ElemBuf buf;
  for (; ci < chunks_; ++ci, pos = 0) {
    const Chunk* c = chunk(ci);
    const unsigned char* p = c->data + Offset(c, pos);
    const size_t n = c->count;
    for (size_t k = pos; k < n; ++k, ++index) {
      if (!fn(index, EntryView(p, buf))) return;
      p += EntrySize(p);
    }
  }
}

// The registered type (set once in vsl_module_init).
inline vsl::Type<Deque> g_deque_type;

// A deque not yet stored in a key.
using DequePtr = vsl::Owned<Deque>;

}  // namespace vessel::deque

#endif  // VESSEL_MODULES_DEQUE_DEQUE_TYPE_H_
