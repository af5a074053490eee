// The list value type: a ring of packed chunks, and the operations the list commands build on.
//
// Representation (measured with bench/memory.sh and bench/lists_bench.cc):
//   - A List is a ring of pointers to Chunks. Every chunk holds exactly kChunk elements except
//     the first and the last, which hold 1 to kChunk. So element i is in chunk 0 when i is below
//     the first chunk's count, else in chunk 1 + (i - first) / kChunk at (i - first) % kChunk:
//     LINDEX and LSET find the chunk in O(1) and walk at most kChunk - 1 entries inside it.
//     Pushes and pops at both ends touch one chunk; LINSERT shifts one entry per chunk towards
//     the nearer end; LREM rebuilds the list.
//   - A Chunk is one allocation: a small header and its entries, packed back to back (the
//     encoding of vessel/packed_element.hpp, which the deque module's pages share):
//       0xxxxxxx                integer 0..127 (the element is its decimal text)
//       110xxxxx xxxxxxxx       integer -4096..4095 (13 bits, two's complement)
//       1110000t <2|3|4|8 bytes> integer of 16/24/32/64 bits, little-endian (t: 0..3 in low bits)
//       10llllll <l bytes>      string of 0..63 bytes
//       11110000 <len8> <bytes> string of 64..255 bytes
//       11110001 <pointer>      string of 256 bytes or more, in its own block: u64 length, bytes
//     An element is stored as an integer only when it is the canonical decimal text of one (as
//     Redis's string2ll decides), so reading it back gives the same bytes. A list of short
//     elements costs about what Redis's listpacks cost; see bench/README.md.
// Every byte lives in the host allocator (accounted to the module). Values are only touched under
// the key's lock; nothing here is thread-aware. Operations that allocate throw std::bad_alloc and
// leave the list unchanged.
#ifndef VESSEL_MODULES_LISTS_LISTS_TYPE_H_
#define VESSEL_MODULES_LISTS_LISTS_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "vessel/module.hpp"
#include "vessel/packed_element.hpp"
#include "vessel/util.hpp"

namespace vessel::lists {

// Room for an integer element formatted back to text.
using ElemBuf = vsl::packed::TextBuf;

// An element to search for, encoded once the way the list stores it: as the encoding is
// canonical (an element is an integer entry exactly when it is an integer's decimal text, in the
// narrowest form), an entry holds the element exactly when its bytes equal these, so a search
// compares bytes and never formats a stored integer back to text.
class Needle {
 public:
  explicit Needle(std::string_view s);
  // Whether the entry at p holds the element.
  bool Matches(const unsigned char* p) const {
    // Equal tags mean equal lengths, but for strings of 64..255 bytes (their length byte next).
    // The last byte is compared before the rest: neighbours in a list often differ only there.
    if (*p != bytes_[0]) return false;
    if (long_) return LongMatches(p);
    if (len_ == 1) return true;
    return p[1] == bytes_[1] && p[len_ - 1] == bytes_[len_ - 1] &&
           std::memcmp(p + 2, bytes_ + 2, len_ - 2) == 0;
  }

 private:
  bool LongMatches(const unsigned char* p) const;
  unsigned char bytes_[2 + 255];  // the entry (strings up to 255 bytes are inline); a long
                                  // needle holds only the tag of a block entry
  size_t len_ = 0;
  bool long_ = false;      // 256 bytes or more: stored in a block, compared through it
  std::string_view text_;  // the element itself (long needles)
};

struct Chunk {
  uint32_t used;   // bytes of entries
  uint32_t cap;    // bytes available for entries
  uint32_t count;  // entries
  unsigned char data[];
};

class List {
 public:
  static constexpr uint32_t kChunk = 64;  // elements per full chunk

  List() = default;
  ~List();
  List(const List&) = delete;
  List& operator=(const List&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Element i (< size): a view into the list, or into buf for a stored integer; valid until the
  // list changes.
  std::string_view At(size_t i, ElemBuf& buf) const;
  std::string_view Front(ElemBuf& buf) const { return At(0, buf); }
  std::string_view Back(ElemBuf& buf) const { return At(size_ - 1, buf); }

  void PushBack(std::string_view s);
  void PushFront(std::string_view s);
  // Removes an end element (list not empty).
  void PopFront();
  void PopBack();
  // Passes the last element to take, then removes it: one walk of the last chunk, where Back()
  // and PopBack() walk it twice (a chunk is found in O(1), its last entry by walking it).
  template <class F>
  void PopBack(F&& take);
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

  // Calls fn(index, element) for the elements from `from` towards the tail (or, reversed, from
  // `from` towards the head) until fn returns false.
  template <class F>
  void ForEach(size_t from, F&& fn) const;
  template <class F>
  void ForEachReverse(size_t from, F&& fn) const;
  // Calls fn(index) for the elements equal to the needle among the `limit` elements from `from`
  // towards the tail (Reverse: towards the head) until fn returns false. Compares entry bytes.
  template <class F>
  void ForEachMatch(const Needle& needle, size_t from, size_t limit, F&& fn) const;
  template <class F>
  void ForEachMatchReverse(const Needle& needle, size_t from, size_t limit, F&& fn) const;
  // The walks over the raw entries: fn(index, entry bytes).
  template <class F>
  void ForEachEntry(size_t from, F&& fn) const;
  template <class F>
  void ForEachEntryReverse(size_t from, F&& fn) const;

  // Type callbacks (vsl::Type<List>). MemUsage is exact and O(chunks + long elements).
  size_t MemUsage() const;
  List* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static List* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size_; }
  // Redis 7.0 reports "quicklist" for every list (listpack-encoded lists came with 7.2).
  const char* Encoding() const { return "quicklist"; }
  // Calls fn for every element from head to tail until it returns nonzero (ABI 1.2).
  int Visit(vsl_visit_fn fn, void* ud) const {
    ForEach(0, [&](size_t, std::string_view e) { return fn(ud, e.data(), e.size(), 0.0) == 0; });
    return VSL_OK;
  }

 private:
  Chunk* chunk(size_t ci) const { return ring_[(head_ + ci) & (ring_cap_ - 1)]; }
  Chunk*& slot(size_t ci) { return ring_[(head_ + ci) & (ring_cap_ - 1)]; }
  // The chunk and the position in it of element i.
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
  void RingReserve(size_t n);  // room for n chunk pointers
  void RingPushFront(Chunk* c);
  void RingPushBack(Chunk* c);
  void RingPopFront();
  void RingPopBack();
  void DropBack(size_t off);  // removes the last entry, at byte offset off of the last chunk
  // Inserts the entry bytes e (already encoded) at byte offset off of chunk ci (may move it).
  void InsertEntry(size_t ci, size_t off, const unsigned char* e, size_t len);
  // Removes the entry at byte offset off of chunk ci without freeing what it points to; returns
  // its bytes in *out (for moving it to another chunk).
  void TakeEntry(size_t ci, size_t off, std::string* out);
  void FreeAll() noexcept;
  // Gives memory back when chunk ci uses at most a quarter of its room; Fit leaves a full chunk
  // no room; Resize reallocates chunk ci for cap bytes of entries (none of them throws).
  void MaybeShrink(size_t ci) noexcept;
  void Fit(size_t ci) noexcept;
  void Resize(size_t ci, size_t cap) noexcept;

  Chunk** ring_ = nullptr;
  uint32_t ring_cap_ = 0;  // 0 or a power of two
  uint32_t head_ = 0;      // ring index of chunk 0
  uint32_t chunks_ = 0;
  size_t size_ = 0;
};

// ---- entries (exposed for the templates above and for the benchmark) ----

// Bytes of the entry at p and the element it holds (integers formatted into buf).
using vsl::packed::EntrySize;
using vsl::packed::EntryView;

// Byte offset of entry k of c.
inline size_t EntryOffset(const Chunk* c, size_t k) {
  size_t off = 0;
  for (size_t i = 0; i < k; ++i) off += EntrySize(c->data + off);
  return off;
}

template <class F>
void List::PopBack(F&& take) {
  const Chunk* c = chunk(chunks_ - 1);
  const size_t off = EntryOffset(c, c->count - 1);
  ElemBuf buf;
  take(EntryView(c->data + off, buf));
  DropBack(off);
}

template <class F>
void List::ForEachEntry(size_t from, F&& fn) const {
  if (from >= size_) return;
  size_t ci, pos;
  Locate(from, &ci, &pos);
  size_t index = from;
  for (; ci < chunks_; ++ci, pos = 0) {
    const Chunk* c = chunk(ci);
    const unsigned char* p = c->data;
    const size_t n = c->count;  // loaded once: fn may write memory the compiler can't rule out
    for (size_t k = 0; k < pos; ++k) p += EntrySize(p);
    for (size_t k = pos; k < n; ++k, ++index) {
      if (!fn(index, p)) return;
      p += EntrySize(p);
    }
  }
}

template <class F>
void List::ForEachEntryReverse(size_t from, F&& fn) const {
  if (size_ == 0) return;
  if (from >= size_) from = size_ - 1;
  size_t ci, pos;
  Locate(from, &ci, &pos);
  size_t index = from;
  uint32_t offsets[kChunk];
  for (size_t c = ci + 1; c-- > 0;) {
    const Chunk* ch = chunk(c);
    const size_t last = c == ci ? pos : ch->count - 1;
    uint32_t off = 0;
    for (size_t k = 0; k <= last; ++k) {
      offsets[k] = off;
      off += static_cast<uint32_t>(EntrySize(ch->data + off));
    }
    for (size_t k = last + 1; k-- > 0; --index) {
      if (!fn(index, ch->data + offsets[k])) return;
    }
  }
}

template <class F>
void List::ForEach(size_t from, F&& fn) const {
  ElemBuf buf;
  ForEachEntry(from, [&](size_t i, const unsigned char* p) { return fn(i, EntryView(p, buf)); });
}

template <class F>
void List::ForEachReverse(size_t from, F&& fn) const {
  ElemBuf buf;
  ForEachEntryReverse(from,
                      [&](size_t i, const unsigned char* p) { return fn(i, EntryView(p, buf)); });
}

template <class F>
void List::ForEachMatch(const Needle& needle, size_t from, size_t limit, F&& fn) const {
  if (from >= size_) return;
  const size_t end = limit < size_ - from ? from + limit : size_;
  ForEachEntry(from, [&](size_t i, const unsigned char* p) {
    return i < end && (!needle.Matches(p) || fn(i));
  });
}

template <class F>
void List::ForEachMatchReverse(const Needle& needle, size_t from, size_t limit, F&& fn) const {
  const size_t stop = limit <= from ? from + 1 - limit : 0;  // the last index visited
  ForEachEntryReverse(from, [&](size_t i, const unsigned char* p) {
    return i >= stop && (!needle.Matches(p) || fn(i));
  });
}

// The registered type (set once in vsl_module_init).
inline vsl::Type<List> g_list_type;

// A list not yet stored in a key.
using ListPtr = vsl::Owned<List>;

}  // namespace vessel::lists

#endif  // VESSEL_MODULES_LISTS_LISTS_TYPE_H_
