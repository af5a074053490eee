// The deque value type: entries packed into pages, a ring of chunk marks that finds any index in
// O(1), and the operations the DEQ.* commands build on.
//
// Representation:
//   - The elements are entries (vessel/packed_element.hpp, shared with the lists module's chunks)
//     packed back to back, in order, into pages: blocks of at most kPageBytes (7 KiB, where Redis
//     fills a quicklist's listpack nodes up to 8 KiB). Both are size classes of jemalloc, the
//     host's allocator, so a full page is not rounded up; jemalloc keeps four 7 KiB blocks in one
//     slab but each 8 KiB block in a slab of its own, with its own bookkeeping (about 1 % more
//     resident memory for 100-byte elements). A page holds whole entries in data[lo, hi); the
//     room before lo and after hi is where the end pages grow. Every page holds at least one
//     entry. A page is known by an id (its slot in pages_, stable while the page lives and
//     moves), and links its neighbours by id.
//   - The elements are also grouped into chunks of kChunk (64) elements, except the first and the
//     last, which hold 1 to kChunk. So element i lies in chunk 0 when i is below the first chunk's
//     count, else in chunk 1 + (i - first) / kChunk at (i - first) % kChunk. The marks_ ring (a
//     power-of-two array used circularly) holds where each chunk starts (page id and offset): an
//     index finds its chunk by arithmetic and walks at most kChunk - 1 entries from its mark,
//     across a page boundary when the chunk straddles one. Chunks are counts only: pages are cut
//     by bytes, not by chunks, so a full page wastes at most the last entry that did not fit
//     (on average half an entry) and no allocator rounding.
//   - A push or pop at either end touches the end page (growing it a size class at a time up to
//     kPageBytes, then starting a new one) and at most one mark. An end page shrinks when three
//     quarters of it are unused.
//   - Insertion and erasure at a position (Splice) rebuild the side of the position nearer an end:
//     the pages from that end through the page holding the position are re-laid (kept entries,
//     then the new ones), full pages towards the untouched part and the odd one at the end; the
//     marks of the rebuilt chunks are recomputed so the chunks of the untouched part keep their
//     counts. So inserting at i costs O(min(i, n - i)) (plus one page) and erasing c elements
//     O(min(i, n - i - c) + c).
//   - Set rewrites one entry inside its page (O(page)); a page that would grow past twice
//     kPageBytes that way is split in two first (again, until the entry's page has room; a page
//     of one entry always has), so no page passes 16 KiB (16-bit offsets).
//   - Entries:
//       0xxxxxxx                 integer 0..127 (the element is its decimal text)
//       10llllll <l bytes>       string of 0..63 bytes
//       110xxxxx xxxxxxxx        integer -4096..4095 (13 bits, two's complement)
//       111000tt <2|3|4|8 bytes> integer of 16/24/32/64 bits, little-endian (tt: 0..3)
//       11110000 <len> <bytes>   string of 64..255 bytes
//       11110010 <u16> <bytes>   string of 256..kInlineMax (3573) bytes: two of the longest fill
//                                a page
//       11110001 <pointer>       longer string in its own block: u64 length, bytes
//     An element is stored as an integer only when it is the canonical decimal text of one (no
//     sign but '-', no leading zero, not "-0"), so reading it back gives the same bytes and an
//     element has exactly one encoding. An element costs its bytes and one to three bytes of tag
//     and length (a Redis listpack entry costs a tag of one to five bytes and a back-length of
//     one to five), a page 16 bytes, a chunk an 8-byte mark. Strings up to half a page are inline,
//     as a listpack keeps elements up to its node size: a block of their own would cost a 9-byte
//     entry, an 8-byte length and the allocator's rounding of the block (a 300-byte string takes
//     a 320-byte block), about 4 % more than a list for 300-byte elements.
// The lists module (modules/lists/lists_type.h) keeps a ring of chunk blocks instead; only the
// entry codec is shared (in the SDK), since a module includes only sdk/.
// Every byte lives in the host allocator (accounted to the module); MemUsage() is exact and O(1)
// (the usable sizes of every block are kept as they change). Values are only touched under their
// key's lock; nothing here is thread-aware. Every operation that allocates does so before it
// changes anything, so std::bad_alloc leaves the deque as it was (a page split by a Set that
// then fails stays split; shrinking a page is skipped when memory is short).
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

// A block of entries. Offsets are bytes from data.
struct Page {
  uint32_t prev, next;  // neighbour pages' ids (kNoPage at the ends)
  uint16_t lo, hi;      // entries occupy data[lo, hi)
  uint16_t cap;         // bytes of data (a page never passes 16 KiB: see Deque::Set)
  uint16_t unused;
  unsigned char data[];
};

// Where a chunk starts: its first entry.
struct Mark {
  uint32_t page;
  uint32_t off;
};

inline constexpr uint32_t kNoPage = UINT32_MAX;

// ---- entries ----

// Bytes of the entry at p and the element it holds (integers formatted into buf).
using vsl::packed::EntrySize;
using vsl::packed::EntryView;

class Deque {
 public:
  static constexpr size_t kChunk = 64;        // elements per full chunk
  static constexpr size_t kPageBytes = 7168;  // a page block, header included (see above)
  // The longest string stored in its page: two such entries (a tag, a u16 length, the bytes)
  // fill a page. A longer one would have a page to itself, whose 16-byte header and 3-byte tag
  // can push the block past a size class the string's own block stays within (4,081 bytes: a
  // 4,100-byte page in a 5 KiB class, a 4,089-byte block in a 4 KiB one).
  static constexpr size_t kInlineMax = (kPageBytes - offsetof(Page, data)) / 2 - 3;

  Deque() = default;
  ~Deque();
  Deque(const Deque&) = delete;
  Deque& operator=(const Deque&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Element i (< size()): a view into the deque, or into buf for an integer; valid until the
  // deque changes.
  std::string_view At(size_t i, ElemBuf& buf) const {
    const Cursor c = Seek(i);
    return EntryView(c.p, buf);
  }

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

  // Whether the pages, the marks and every byte count agree (tests and the fuzzer).
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

  // An entry and the page it lies in; Next() steps to the following entry, into the next page
  // at the end of this one (at the very end p is left at the last page's hi).
  struct Cursor {
    const Deque* d;
    uint32_t id;
    const Page* pg;
    const unsigned char* p;
    const unsigned char* end;
    void Next() {
      p += EntrySize(p);
      if (p == end && pg->next != kNoPage) Enter(pg->next);
    }
    void Enter(uint32_t page) {
      id = page;
      pg = d->pages_[page];
      p = pg->data + pg->lo;
      end = pg->data + pg->hi;
    }
    uint16_t off() const { return static_cast<uint16_t>(p - pg->data); }
  };

  Page* page(uint32_t id) const { return pages_[id]; }
  Mark& mark(size_t ci) const { return marks_[(mark_head_ + ci) & (mark_cap_ - 1)]; }
  // The chunk and the position in it of element i (< size()).
  void Locate(size_t i, size_t* ci, size_t* pos) const {
    if (i < first_) {
      *ci = 0;
      *pos = i;
    } else {
      *ci = 1 + (i - first_) / kChunk;
      *pos = (i - first_) % kChunk;
    }
  }
  // The count of the last chunk (the deque is not empty).
  size_t LastCount() const { return chunks_ == 1 ? first_ : (size_ - first_ - 1) % kChunk + 1; }
  // The index of the first element of chunk ci.
  size_t ChunkStart(size_t ci) const { return ci == 0 ? 0 : first_ + (ci - 1) * kChunk; }
  // The number of chunks that start below element index i (i > 0).
  size_t ChunksBelow(size_t i) const {
    const size_t k = i > first_ ? 1 + (i - first_ + kChunk - 1) / kChunk : 1;
    return k < chunks_ ? k : chunks_;
  }
  Cursor CursorAt(const Mark& m) const {
    Cursor c{this, m.page, page(m.page), nullptr, nullptr};
    c.p = c.pg->data + m.off;
    c.end = c.pg->data + c.pg->hi;
    return c;
  }
  // The cursor of element i (< size()). A chunk that lies in one page (the next chunk starts
  // there too, or it is the last chunk and its page the last) is walked without page checks.
  Cursor Seek(size_t i) const {
    size_t ci, pos;
    Locate(i, &ci, &pos);
    const Mark& m = mark(ci);
    Cursor c = CursorAt(m);
    if (ci + 1 < chunks_ ? mark(ci + 1).page == m.page : m.page == last_page_) {
      for (; pos > 0; --pos) c.p += EntrySize(c.p);
    } else {
      for (; pos > 0; --pos) c.Next();
    }
    return c;
  }

  // Page ids: allocates a page of room for `bytes` of data (not linked, no id).
  Page* NewPage(size_t bytes);
  void FreePage(uint32_t id) noexcept;
  // Makes sure `n` more pages can get an id without allocating.
  void ReserveIds(size_t n);
  uint32_t TakeId(Page* pg) noexcept;
  // Makes room for `extra` bytes in page id, before lo (front) or after hi (which may move the
  // page and its entries). hint: as MoveMarks's.
  void Room(uint32_t id, size_t extra, bool front, size_t hint);
  // Moves page id's entries to start at new_lo (which fits) and fixes the marks into it.
  void Reposition(uint32_t id, size_t new_lo, size_t hint) noexcept;
  // Adds delta to the marks into page id at offsets of at least from (a contiguous run of chunks
  // around hint), or moves them to page to (at off - from + to_lo) when to != kNoPage.
  void MoveMarks(uint32_t id, size_t hint, uint32_t from, int64_t delta, uint32_t to) noexcept;
  // Gives back the room of an end page when three quarters are unused (never throws).
  void Shrink(uint32_t id, size_t hint) noexcept;
  // Moves the second half of page id's entries (at least one, never all: the page holds two or
  // more) to a new page after it (throws before changing anything).
  void Split(uint32_t id, size_t hint);
  void SetEncoded(size_t i, Encoded& e);
  void MarkReserve(size_t n);
  void ReleaseEntry(const unsigned char* p) noexcept;
  void PushEncoded(Encoded& e, bool front);
  void DropFront() noexcept;
  void DropBack(const Cursor& last) noexcept;
  // Splice with the new elements already encoded (their blobs owned by the caller until it
  // returns normally).
  void SpliceEncoded(size_t i, size_t erase, Encoded* fresh, size_t n);
  void FreeAll() noexcept;

  Page** pages_ = nullptr;  // by id; a free slot holds (next free id << 1 | 1)
  uint32_t page_cap_ = 0;
  uint32_t free_id_ = kNoPage;  // the first free slot
  uint32_t page_count_ = 0;     // pages in use
  uint32_t first_page_ = kNoPage, last_page_ = kNoPage;
  Mark* marks_ = nullptr;
  uint32_t mark_cap_ = 0;   // 0 or a power of two
  uint32_t mark_head_ = 0;  // ring index of chunk 0's mark
  size_t chunks_ = 0;
  size_t first_ = 0;  // elements in chunk 0
  size_t size_ = 0;
  size_t bytes_ = 0;  // usable bytes of every page and long-string block
};

// ---- templates ----

template <class F>
void Deque::PopFront(F&& take) {
  const Page* f = page(first_page_);
  ElemBuf buf;
  take(EntryView(f->data + f->lo, buf));
  DropFront();
}

template <class F>
void Deque::PopBack(F&& take) {
  const Cursor c = Seek(size_ - 1);
  ElemBuf buf;
  take(EntryView(c.p, buf));
  DropBack(c);
}

template <class Source>
void Deque::Splice(size_t i, size_t erase, size_t n, const Source& elems) {
  Encoded small[4];
  Encoded* fresh = small;
  if (n > 4) fresh = static_cast<Encoded*>(vsl::Alloc(n * sizeof(Encoded)));
  size_t made = 0;
  try {
    for (; made < n; ++made) fresh[made] = vsl::packed::Encode(elems(made), kInlineMax);
    SpliceEncoded(i, erase, fresh, n);
  } catch (...) {
    for (size_t k = 0; k < made; ++k) vsl::Free(fresh[k].blob);
    if (fresh != small) vsl::Free(fresh);
    throw;
  }
  if (fresh != small) vsl::Free(fresh);
}

// The walk ends where the last page's entries end.
template <class F>
void Deque::ForEach(size_t from, F&& fn) const {
  if (from >= size_) return;
  const Cursor c = Seek(from);
  const Page* pg = c.pg;
  const unsigned char* p = c.p;
  const unsigned char* end = c.end;
  ElemBuf buf;
  for (size_t index = from;; ++index) {
    // A string of up to 63 bytes (the common entry) is decoded here, its end the next entry.
    const unsigned char t = *p;
    std::string_view e;
    const unsigned char* next;
    if (t >= 0x80 && t < 0xC0) {
      e = {reinterpret_cast<const char*>(p + 1), size_t{t & 0x3Fu}};
      next = p + 1 + (t & 0x3F);
    } else {
      e = EntryView(p, buf);
      next = p + EntrySize(p);
    }
    if (!fn(index, e)) return;
    p = next;
    if (p == end) {
      if (pg->next == kNoPage) return;
      pg = page(pg->next);
      p = pg->data + pg->lo;
      end = pg->data + pg->hi;
    }
  }
}

// The registered type (set once in vsl_module_init).
inline vsl::Type<Deque> g_deque_type;

// A deque not yet stored in a key.
using DequePtr = vsl::Owned<Deque>;

}  // namespace vessel::deque

#endif  // VESSEL_MODULES_DEQUE_DEQUE_TYPE_H_
