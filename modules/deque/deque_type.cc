// The deque value type: the pages, the ring of chunk marks and the type callbacks (see
// deque_type.h); the entries are vessel/packed_element.hpp's.
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
using vsl::packed::kStr16;
using vsl::packed::kStr8;
using vsl::packed::Write;

constexpr size_t kHeader = offsetof(Page, data);
// The entries a page gets from pushes and Splice; Set splits a page rather than grow it past
// kSplitData, so a page block stays within 16 KiB.
constexpr size_t kPageData = Deque::kPageBytes - kHeader;
constexpr size_t kSplitData = 2 * kPageData;

size_t Usable(const void* p) { return vsl::Api().usable_size(p); }
uint16_t CapOf(const Page* pg) {
  return static_cast<uint16_t>(std::min<size_t>(Usable(pg) - kHeader, UINT16_MAX));
}

// A free slot of the page table holds the next free id, tagged (page pointers are aligned).
Page* FreeSlot(uint32_t next) {
  return reinterpret_cast<Page*>((static_cast<uintptr_t>(next) << 1) | 1);
}
bool IsFree(const Page* slot) { return (reinterpret_cast<uintptr_t>(slot) & 1) != 0; }
uint32_t NextFree(const Page* slot) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(slot) >> 1);
}

template <class T>
using Vec = std::vector<T, vsl::Allocator<T>>;

}  // namespace

// ---- entries ----

void Deque::ReleaseEntry(const unsigned char* p) noexcept {
  if (*p != kBlob) return;
  unsigned char* b = BlobOf(p);
  bytes_ -= Usable(b);
  vsl::Free(b);
}

// ---- pages and marks ----

Deque::~Deque() { FreeAll(); }

void Deque::FreeAll() noexcept {
  for (uint32_t id = first_page_; id != kNoPage;) {
    Page* pg = page(id);
    for (uint32_t off = pg->lo; off < pg->hi;
         off += static_cast<uint32_t>(EntrySize(pg->data + off)))
      ReleaseEntry(pg->data + off);
    id = pg->next;
    bytes_ -= Usable(pg);
    vsl::Free(pg);
  }
  vsl::Free(pages_);
  vsl::Free(marks_);
  pages_ = nullptr;
  marks_ = nullptr;
  page_cap_ = page_count_ = mark_cap_ = mark_head_ = 0;
  free_id_ = first_page_ = last_page_ = kNoPage;
  chunks_ = first_ = size_ = 0;
}

Page* Deque::NewPage(size_t bytes) {
  auto* pg = static_cast<Page*>(vsl::Alloc(kHeader + bytes));
  bytes_ += Usable(pg);
  pg->prev = pg->next = kNoPage;
  pg->lo = pg->hi = 0;
  pg->cap = CapOf(pg);
  return pg;
}

void Deque::ReserveIds(size_t n) {
  if (page_cap_ - page_count_ >= n) return;
  size_t cap = page_cap_ == 0 ? 1 : page_cap_;
  while (cap - page_count_ < n) cap *= 2;
  auto** slots = static_cast<Page**>(vsl::Realloc(pages_, cap * sizeof(Page*)));
  for (size_t id = cap; id-- > page_cap_;) {
    slots[id] = FreeSlot(free_id_);
    free_id_ = static_cast<uint32_t>(id);
  }
  pages_ = slots;
  page_cap_ = static_cast<uint32_t>(cap);
}

uint32_t Deque::TakeId(Page* pg) noexcept {
  const uint32_t id = free_id_;
  free_id_ = NextFree(pages_[id]);
  pages_[id] = pg;
  ++page_count_;
  return id;
}

void Deque::FreePage(uint32_t id) noexcept {
  Page* pg = page(id);
  bytes_ -= Usable(pg);
  vsl::Free(pg);
  pages_[id] = FreeSlot(free_id_);
  free_id_ = id;
  --page_count_;
}

void Deque::MarkReserve(size_t n) {
  if (n <= mark_cap_) return;
  size_t cap = mark_cap_ == 0 ? 1 : mark_cap_;
  while (cap < n) cap *= 2;
  auto* ring = static_cast<Mark*>(vsl::Alloc(cap * sizeof(Mark)));
  for (size_t ci = 0; ci < chunks_; ++ci) ring[ci] = mark(ci);
  vsl::Free(marks_);
  marks_ = ring;
  mark_cap_ = static_cast<uint32_t>(cap);
  mark_head_ = 0;
}

// The marks into one page are those of a run of consecutive chunks, found from hint both ways:
// hint is in the run or just before it (the chunk of an entry of the page: its mark lies in the
// page or before it, and the next chunk's is the run's first), or the run is empty.
void Deque::MoveMarks(uint32_t id, size_t hint, uint32_t from, int64_t delta,
                      uint32_t to) noexcept {
  if (chunks_ == 0) return;
  if (hint >= chunks_) hint = chunks_ - 1;
  auto fix = [&](Mark& m) {
    if (m.off < from) return;
    if (to == kNoPage) {
      m.off = static_cast<uint32_t>(m.off + delta);
    } else {
      m.page = to;
      m.off = static_cast<uint32_t>(m.off - from + delta);
    }
  };
  for (size_t ci = hint + 1; ci-- > 0 && mark(ci).page == id;) fix(mark(ci));
  for (size_t ci = hint + 1; ci < chunks_ && mark(ci).page == id; ++ci) fix(mark(ci));
}

void Deque::Reposition(uint32_t id, size_t new_lo, size_t hint) noexcept {
  Page* pg = page(id);
  if (new_lo == pg->lo) return;
  const size_t used = pg->hi - pg->lo;
  std::memmove(pg->data + new_lo, pg->data + pg->lo, used);
  MoveMarks(id, hint, pg->lo, static_cast<int64_t>(new_lo) - pg->lo, kNoPage);
  pg->lo = static_cast<uint16_t>(new_lo);
  pg->hi = static_cast<uint16_t>(new_lo + used);
}

// The room an end page keeps goes where it grows: before its entries (the first page), after
// them (the last page), half each way (the only page).
void Deque::Room(uint32_t id, size_t extra, bool front, size_t hint) {
  Page* pg = page(id);
  if (front ? pg->lo >= extra : size_t{pg->cap} - pg->hi >= extra) return;
  const size_t used = pg->hi - pg->lo;
  if (pg->cap - used < extra) {
    const size_t before = Usable(pg);
    pg = static_cast<Page*>(vsl::Realloc(pg, kHeader + used + extra));  // keeps data[lo, hi)
    pages_[id] = pg;
    bytes_ = bytes_ - before + Usable(pg);
    pg->cap = CapOf(pg);
  }
  const size_t spare = pg->cap - used - extra;
  const bool first = id == first_page_, last = id == last_page_;
  size_t lo;
  if (front) {
    lo = extra + (last ? spare / 2 : spare);
  } else {
    lo = first ? (last ? spare / 2 : spare) : 0;
  }
  Reposition(id, lo, hint);
}

void Deque::Shrink(uint32_t id, size_t hint) noexcept {
  Page* pg = page(id);
  const size_t used = pg->hi - pg->lo;
  if (pg->cap < 64 || used > pg->cap / 4) return;
  const size_t want = std::max<size_t>(used * 2, 16);
  const bool first = id == first_page_, last = id == last_page_;
  const size_t spare = want - used;
  Reposition(id, first ? (last ? spare / 2 : spare) : 0, hint);
  const size_t before = Usable(pg);
  void* n = vsl::Api().realloc(pg, kHeader + want);
  if (n == nullptr) return;  // keeps the larger block
  pg = static_cast<Page*>(n);
  pages_[id] = pg;
  bytes_ = bytes_ - before + Usable(pg);
  pg->cap = CapOf(pg);
}

void Deque::Split(uint32_t id, size_t hint) {
  Page* pg = page(id);
  size_t cut = pg->lo, last = pg->lo;
  while (cut - pg->lo < (pg->hi - pg->lo) / 2u) {
    last = cut;
    cut += EntrySize(pg->data + cut);
  }
  if (cut == pg->hi) cut = last;  // the last entry passes the middle: it moves alone
  const size_t tail = pg->hi - cut;
  ReserveIds(1);
  Page* np = NewPage(tail);
  // Nothing below allocates.
  np->hi = static_cast<uint16_t>(tail);
  std::memcpy(np->data, pg->data + cut, tail);
  const uint32_t nid = TakeId(np);
  np->prev = id;
  np->next = pg->next;
  if (pg->next != kNoPage) {
    page(pg->next)->prev = nid;
  } else {
    last_page_ = nid;
  }
  pg->next = nid;
  MoveMarks(id, hint, static_cast<uint32_t>(cut), 0, nid);
  pg->hi = static_cast<uint16_t>(cut);
  const size_t before = Usable(pg);
  void* n = vsl::Api().realloc(pg, kHeader + cut);  // gives back the moved half's room
  if (n == nullptr) return;
  pg = static_cast<Page*>(n);
  pages_[id] = pg;
  bytes_ = bytes_ - before + Usable(pg);
  pg->cap = CapOf(pg);
}

// ---- the ends ----

void Deque::PushEncoded(Encoded& e, bool front) {
  const size_t sz = e.size();
  const bool new_chunk = chunks_ == 0 || (front ? first_ : LastCount()) == kChunk;
  if (new_chunk) MarkReserve(chunks_ + 1);
  uint32_t id = front ? first_page_ : last_page_;
  bool fits = false;
  if (id != kNoPage) {
    const Page* pg = page(id);
    fits = (front ? pg->lo >= sz : size_t{pg->cap} - pg->hi >= sz) ||
           size_t{pg->hi} - pg->lo + sz <= kPageData;
  }
  if (fits) {
    Room(id, sz, front, front ? 0 : chunks_ - 1);
  } else {
    ReserveIds(1);
    Page* pg = NewPage(sz);
    id = TakeId(pg);
    if (first_page_ == kNoPage) {
      first_page_ = last_page_ = id;
    } else if (front) {
      pg->next = first_page_;
      page(first_page_)->prev = id;
      first_page_ = id;
    } else {
      pg->prev = last_page_;
      page(last_page_)->next = id;
      last_page_ = id;
    }
    if (front) pg->lo = pg->hi = pg->cap;
  }
  // Nothing below allocates.
  Page* pg = page(id);
  uint32_t at;
  if (front) {
    pg->lo = static_cast<uint16_t>(pg->lo - sz);
    at = pg->lo;
  } else {
    at = pg->hi;
    pg->hi = static_cast<uint16_t>(pg->hi + sz);
  }
  Write(e, pg->data + at);
  if (e.blob != nullptr) bytes_ += Usable(e.blob);
  e.blob = nullptr;  // the deque owns it now
  ++size_;
  if (front) {
    if (new_chunk) {
      mark_head_ = (mark_head_ - 1) & (mark_cap_ - 1);
      ++chunks_;
      first_ = 1;
    } else {
      ++first_;
    }
    mark(0) = {id, at};
  } else if (new_chunk) {
    mark(chunks_) = {id, at};
    if (++chunks_ == 1) first_ = 1;
  } else if (chunks_ == 1) {
    ++first_;
  }
}

void Deque::PushBack(std::string_view s) {
  Encoded e = Encode(s, kInlineMax);
  try {
    PushEncoded(e, false);
  } catch (...) {
    vsl::Free(e.blob);
    throw;
  }
}

void Deque::PushFront(std::string_view s) {
  Encoded e = Encode(s, kInlineMax);
  try {
    PushEncoded(e, true);
  } catch (...) {
    vsl::Free(e.blob);
    throw;
  }
}

void Deque::DropFront() noexcept {
  Page* f = page(first_page_);
  const unsigned char* p = f->data + f->lo;
  const size_t len = EntrySize(p);
  ReleaseEntry(p);
  f->lo = static_cast<uint16_t>(f->lo + len);
  --size_;
  if (f->lo == f->hi) {
    const uint32_t next = f->next;
    FreePage(first_page_);
    first_page_ = next;
    if (next == kNoPage) {
      last_page_ = kNoPage;
    } else {
      page(next)->prev = kNoPage;
    }
  }
  if (--first_ == 0) {
    mark_head_ = (mark_head_ + 1) & (mark_cap_ - 1);
    --chunks_;
    first_ = chunks_ == 0 ? 0 : (chunks_ == 1 ? size_ : kChunk);
  } else {
    mark(0) = {first_page_, page(first_page_)->lo};
  }
  if (first_page_ != kNoPage) Shrink(first_page_, 0);
}

void Deque::DropBack(const Cursor& last) noexcept {
  const size_t count = LastCount();
  Page* l = page(last_page_);
  ReleaseEntry(last.p);
  l->hi = last.off();
  --size_;
  if (l->lo == l->hi) {
    const uint32_t prev = l->prev;
    FreePage(last_page_);
    last_page_ = prev;
    if (prev == kNoPage) {
      first_page_ = kNoPage;
    } else {
      page(prev)->next = kNoPage;
    }
  }
  if (chunks_ == 1) {
    if (--first_ == 0) chunks_ = 0;
  } else if (count == 1) {
    --chunks_;
  }
  if (last_page_ != kNoPage) Shrink(last_page_, chunks_ - 1);
}

// ---- by position ----

void Deque::Set(size_t i, std::string_view s) {
  Encoded e = Encode(s, kInlineMax);
  try {
    SetEncoded(i, e);
  } catch (...) {
    vsl::Free(e.blob);
    throw;
  }
}

void Deque::SetEncoded(size_t i, Encoded& e) {
  size_t ci, pos;
  Locate(i, &ci, &pos);
  Cursor c = CursorAt(mark(ci));
  for (; pos > 0; --pos) c.Next();
  const size_t old = EntrySize(c.p), sz = e.size();
  // Each split leaves the entry in a page of fewer entries; one entry alone (sz <= kPageData)
  // always fits.
  while (sz > old && c.pg->hi - c.pg->lo + (sz - old) > kSplitData) {
    Split(c.id, ci);
    c = Seek(i);  // in either half now
  }
  const uint32_t id = c.id;
  const size_t rel = c.off() - c.pg->lo;
  if (sz > old) Room(id, sz - old, false, ci);
  // Nothing below allocates. Room may have moved the page and its entries.
  Page* pg = page(id);
  const size_t off = pg->lo + rel;
  unsigned char* at = pg->data + off;
  ReleaseEntry(at);
  std::memmove(at + sz, at + old, pg->hi - off - old);
  Write(e, at);
  if (e.blob != nullptr) bytes_ += Usable(e.blob);
  e.blob = nullptr;  // the deque owns it now
  pg->hi = static_cast<uint16_t>(pg->hi + sz - old);
  if (sz == old) return;
  MoveMarks(id, ci, static_cast<uint32_t>(off + 1),
            static_cast<int64_t>(sz) - static_cast<int64_t>(old), kNoPage);
  if (sz < old) Shrink(id, ci);
}

// Re-lays the pages on the nearer side of the splice (see deque_type.h). The region is the pages
// from that end through the page holding the far edge of the change; the sequence of entries its
// new pages hold is: the kept entries before position i, the fresh ones, the kept entries from
// i + erase on. Two passes over it: one to size the new pages, one to fill them, so everything is
// allocated before anything changes. The new chunk marks keep every chunk of the untouched part
// as it is: at the front they are laid back from the first untouched chunk, at the back forward
// from the last untouched one.
void Deque::SpliceEncoded(size_t i, size_t erase, Encoded* fresh, size_t n) {
  if (erase == 0 && n == 0) return;
  if (erase == 0 && n == 1 && (i == 0 || i == size_)) return PushEncoded(fresh[0], i == 0);
  const size_t e = i + erase;
  const size_t total = size_ - erase + n;
  if (total == 0) return FreeAll();
  const bool front = i <= size_ - e;
  // The region: pages [from, to] holding the elements [base, end) (none in an empty deque).
  uint32_t from, to;
  size_t base = 0;
  if (front) {
    from = first_page_;
    to = e < size_ ? Seek(e).id : last_page_;
  } else {
    const size_t at = std::min(i, size_ - 1);
    const Cursor c = Seek(at);
    from = c.id;
    to = last_page_;
    size_t before = 0;
    for (uint32_t off = c.pg->lo; off < c.off();
         off += static_cast<uint32_t>(EntrySize(c.pg->data + off)))
      ++before;
    base = at - before;
  }
  // Calls entry(g, bytes, len) for every entry of the region (g its index) and add(fresh entry)
  // where the fresh ones go; returns the end of the region.
  auto walk = [&](auto&& entry, auto&& add) {
    size_t g = base;
    bool added = false;
    for (uint32_t id = from; id != kNoPage; id = page(id)->next) {
      const Page* pg = page(id);
      for (uint32_t off = pg->lo; off < pg->hi; ++g) {
        const unsigned char* p = pg->data + off;
        const size_t len = EntrySize(p);
        if (g == i && !added) {
          for (size_t k = 0; k < n; ++k) add(&fresh[k]);
          added = true;
        }
        entry(g, p, len);
        off += static_cast<uint32_t>(len);
      }
      if (id == to) break;
    }
    if (!added) {
      for (size_t k = 0; k < n; ++k) add(&fresh[k]);
    }
    return g;
  };
  auto kept = [&](size_t g) { return g < i || g >= e; };

  // Pass 1: the sizes of the new sequence, then where its pages begin.
  Vec<uint16_t> sizes;
  const size_t end = walk(
      [&](size_t g, const unsigned char*, size_t len) {
        if (kept(g)) sizes.push_back(static_cast<uint16_t>(len));
      },
      [&](const Encoded* f) { sizes.push_back(static_cast<uint16_t>(f->size())); });
  const size_t seq = sizes.size();
  Vec<size_t> starts;  // the first entry of each new page, then seq
  Vec<size_t> fill;    // the bytes of each new page
  if (front) {         // full pages from the untouched part back, the odd one first
    size_t acc = 0;
    starts.push_back(seq);
    for (size_t j = seq; j-- > 0;) {
      if (acc + sizes[j] > kPageData) {
        starts.push_back(j + 1);
        fill.push_back(acc);
        acc = 0;
      }
      acc += sizes[j];
    }
    if (seq > 0) {
      starts.push_back(0);
      fill.push_back(acc);
    }
    std::reverse(starts.begin(), starts.end());
    std::reverse(fill.begin(), fill.end());
  } else {  // full pages from the untouched part on, the odd one last
    size_t acc = 0;
    for (size_t j = 0; j < seq; ++j) {
      if (j == 0 || acc + sizes[j] > kPageData) {
        if (j > 0) fill.push_back(acc);
        starts.push_back(j);
        acc = 0;
      }
      acc += sizes[j];
    }
    if (seq > 0) fill.push_back(acc);
    starts.push_back(seq);
  }
  const size_t made = fill.size();

  // The chunks: replaced ones [lo_chunk, lo_chunk + replaced), the new ones start at the indexes
  // first_start, first_start + kChunk, ... below base + seq (and at 0 when front).
  size_t lo_chunk, replaced, new_first, first_start, count;
  if (front) {
    const size_t below = ChunksBelow(end);
    const size_t q = below < chunks_ ? ChunkStart(below) - end + seq : total;
    lo_chunk = 0;
    replaced = below;
    new_first = (q - 1) % kChunk + 1;
    first_start = new_first;
    count = 1 + (new_first < seq ? (seq - new_first + kChunk - 1) / kChunk : 0);
  } else {
    const size_t keep = base == 0 ? 0 : ChunksBelow(base);
    lo_chunk = keep;
    replaced = chunks_ - keep;
    if (keep == 0) {
      first_start = 0;
      count = (total + kChunk - 1) / kChunk;
    } else {
      first_start = ChunkStart(keep - 1) + kChunk;
      count = first_start < total ? (total - first_start + kChunk - 1) / kChunk : 0;
    }
    new_first = keep <= 1 ? std::min(kChunk, total) : first_;
  }
  MarkReserve(chunks_ - replaced + count);
  ReserveIds(made);
  Vec<uint32_t> ids(made);
  Vec<Page*> pages;
  pages.reserve(made);
  try {
    for (size_t r = 0; r < made; ++r) pages.push_back(NewPage(fill[r]));
  } catch (...) {
    for (Page* pg : pages) {
      bytes_ -= Usable(pg);
      vsl::Free(pg);
    }
    throw;
  }

  // Nothing below allocates.
  const uint32_t mask = mark_cap_ - 1;
  const uint32_t head =
      front ? static_cast<uint32_t>((mark_head_ + replaced - count) & mask) : mark_head_;
  const size_t first_mark = front ? 0 : lo_chunk;  // the chunk index of the first new mark
  for (size_t r = 0; r < made; ++r) {
    ids[r] = TakeId(pages[r]);
    if (r > 0) {
      pages[r]->prev = ids[r - 1];
      pages[r - 1]->next = ids[r];
    }
  }
  if (front && made > 0)
    pages[0]->lo = pages[0]->hi = static_cast<uint16_t>(pages[0]->cap - fill[0]);
  const uint32_t before = from == kNoPage ? kNoPage : page(from)->prev;
  const uint32_t after = to == kNoPage ? kNoPage : page(to)->next;
  size_t j = 0, r = 0, next_start = front ? 0 : first_start, marked = 0;
  auto put = [&](const unsigned char* src, size_t len, const Encoded* f) {
    if (j == starts[r + 1]) ++r;
    Page* pg = pages[r];
    if (base + j == next_start) {
      marks_[(head + first_mark + marked) & mask] = {ids[r], pg->hi};
      ++marked;
      next_start = next_start == 0 && front ? first_start : next_start + kChunk;
    }
    if (f != nullptr) {
      Write(*f, pg->data + pg->hi);
    } else {
      std::memcpy(pg->data + pg->hi, src, len);
    }
    pg->hi = static_cast<uint16_t>(pg->hi + len);
    ++j;
  };
  walk(
      [&](size_t g, const unsigned char* p, size_t len) {
        if (kept(g)) {
          put(p, len, nullptr);
        } else {
          ReleaseEntry(p);
        }
      },
      [&](Encoded* f) {
        put(nullptr, f->size(), f);
        if (f->blob != nullptr) bytes_ += Usable(f->blob);
        f->blob = nullptr;  // the deque owns it now
      });
  // The old pages (their kept long strings now belong to the new ones), then the links.
  for (uint32_t id = from; id != kNoPage;) {
    const uint32_t next = page(id)->next;
    FreePage(id);
    if (id == to) break;
    id = next;
  }
  const uint32_t new_first_page = made > 0 ? ids[0] : after;
  const uint32_t new_last_page = made > 0 ? ids[made - 1] : before;
  if (made > 0) {
    pages[0]->prev = before;
    pages[made - 1]->next = after;
  }
  if (before == kNoPage) {
    first_page_ = new_first_page;
  } else {
    page(before)->next = new_first_page;
  }
  if (after == kNoPage) {
    last_page_ = new_last_page;
  } else {
    page(after)->prev = new_last_page;
  }
  mark_head_ = head;
  chunks_ = chunks_ - replaced + count;
  first_ = new_first;
  size_ = total;
}

// ---- checks and the type callbacks ----

bool Deque::Valid() const {
  if (chunks_ > mark_cap_ || (chunks_ == 0) != (size_ == 0)) return false;
  if (size_ == 0) {
    return first_page_ == kNoPage && last_page_ == kNoPage && page_count_ == 0 && bytes_ == 0;
  }
  if (first_ == 0 || first_ > kChunk) return false;
  if (chunks_ == 1
          ? first_ != size_
          : (size_ - first_ <= (chunks_ - 2) * kChunk || size_ - first_ > (chunks_ - 1) * kChunk))
    return false;
  size_t count = 0, bytes = 0, pages = 0, ci = 0;
  uint32_t prev = kNoPage;
  for (uint32_t id = first_page_; id != kNoPage; prev = id, id = page(id)->next) {
    if (id >= page_cap_ || IsFree(pages_[id]) || ++pages > page_count_) return false;
    const Page* pg = page(id);
    if (pg->prev != prev || pg->lo >= pg->hi || pg->hi > pg->cap || pg->cap != CapOf(pg) ||
        size_t{pg->hi} - pg->lo > kSplitData)
      return false;
    for (uint32_t off = pg->lo; off < pg->hi; ++count) {
      const unsigned char t = pg->data[off];
      if (t > kStr16 || (t > 0xE3 && t < kStr8)) return false;
      const size_t len = EntrySize(pg->data + off);
      if (off + len > pg->hi) return false;
      if (t == kStr16 && (len - 3 <= vsl::packed::kInlineMax || len - 3 > kInlineMax)) return false;
      if (t == kBlob) bytes += Usable(BlobOf(pg->data + off));
      if (ci < chunks_ && count == ChunkStart(ci)) {
        if (mark(ci).page != id || mark(ci).off != off) return false;
        ++ci;
      }
      off += static_cast<uint32_t>(len);
    }
    bytes += Usable(pg);
  }
  size_t free_ids = 0;
  for (uint32_t id = free_id_; id != kNoPage; id = NextFree(pages_[id])) {
    if (id >= page_cap_ || !IsFree(pages_[id]) || ++free_ids > page_cap_) return false;
  }
  return prev == last_page_ && pages == page_count_ && free_ids + pages == page_cap_ &&
         ci == chunks_ && count == size_ && bytes == bytes_;
}

size_t Deque::MemUsage() const {
  size_t n = Usable(this) + bytes_;
  if (pages_ != nullptr) n += Usable(pages_);
  if (marks_ != nullptr) n += Usable(marks_);
  return n;
}

Deque* Deque::Clone() const {
  DequePtr copy(vsl::New<Deque>());
  copy->MarkReserve(chunks_);
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
