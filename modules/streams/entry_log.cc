// The entries of a stream (entry_log.h).
#include "entry_log.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <new>

namespace vessel::streams {
namespace {

constexpr uint64_t kHeadDeleted = 1;
constexpr uint64_t kHeadSameFields = 2;
// What one index node costs (a red-black tree node with its key and value, as jemalloc rounds
// it): MEMORY USAGE counts it per block.
constexpr size_t kIndexNodeBytes = 64;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Blocks are built here: their varints are well formed.
uint64_t GetVarint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= uint64_t{b & 0x7Fu} << shift;
    if (!(b & 0x80)) return v;
  }
}

// How a field or value is stored: a tag, then `bytes` (nothing for an integer).
struct Elem {
  uint64_t tag;
  std::string_view bytes;
  size_t size() const { return VarintSize(tag) + bytes.size(); }
};

constexpr int64_t kIntLimit = int64_t{1} << 62;

Elem Classify(std::string_view s) {
  int64_t v;
  if (StrictInt64(s, &v) && v > -kIntLimit && v < kIntLimit) {
    const uint64_t zigzag = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    return {(zigzag << 1) | 1, {}};
  }
  return {static_cast<uint64_t>(s.size()) << 1, s};
}

uint8_t* PutElem(uint8_t* p, const Elem& e) {
  p = PutVarint(p, e.tag);
  if (!e.bytes.empty()) std::memcpy(p, e.bytes.data(), e.bytes.size());
  return p + e.bytes.size();
}

// The element at data + *off, advancing *off past it.
std::string_view GetElem(const uint8_t* data, uint32_t* off, IntText* buf) {
  const uint8_t* p = data + *off;
  const uint64_t tag = GetVarint(p);
  if (tag & 1) {
    const uint64_t z = tag >> 1;
    const auto v = static_cast<int64_t>((z >> 1) ^ (0 - (z & 1)));
    *off = static_cast<uint32_t>(p - data);
    const auto r = std::to_chars(buf->b, buf->b + sizeof(buf->b), v);
    return {buf->b, static_cast<size_t>(r.ptr - buf->b)};
  }
  const auto len = static_cast<size_t>(tag >> 1);
  *off = static_cast<uint32_t>(p - data + len);
  return {reinterpret_cast<const char*>(p), len};
}

void SkipElem(const uint8_t*& p) {
  const uint64_t tag = GetVarint(p);
  if (!(tag & 1)) p += tag >> 1;
}

// ---- Redis's listpack sizes (listpack.c), to open blocks where Redis opens nodes ----

uint64_t BacklenSize(uint64_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

// The listpack entry Redis appends for an entry of `pairs`, relative to master.
uint64_t LpEntrySize(StreamId id, StreamId master, bool same_fields,
                     std::span<const std::string_view> pairs) {
  const uint64_t fields = pairs.size() / 2;
  uint64_t n = LpIntSize(same_fields ? 2 : 0);
  n += LpIntSize(static_cast<int64_t>(id.ms - master.ms));
  n += LpIntSize(static_cast<int64_t>(id.seq - master.seq));
  if (!same_fields) n += LpIntSize(static_cast<int64_t>(fields));
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!same_fields || i % 2 == 1) n += LpStringSize(pairs[i]);
  }
  const uint64_t lp_count = fields + 3 + (same_fields ? 0 : fields + 1);
  return n + LpIntSize(static_cast<int64_t>(lp_count));
}

// The bytes an entry takes in a block.
size_t EntrySize(StreamId id, StreamId master, bool same_fields,
                 std::span<const std::string_view> pairs, uint64_t* head) {
  const uint64_t fields = pairs.size() / 2;
  *head = same_fields ? kHeadSameFields : fields << 2;
  const uint64_t msd = id.ms - master.ms;
  size_t n =
      VarintSize(*head) + VarintSize(msd) + VarintSize(msd == 0 ? id.seq - master.seq : id.seq);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!same_fields || i % 2 == 1) n += Classify(pairs[i]).size();
  }
  return n;
}

}  // namespace

uint64_t LpIntSize(int64_t v) {
  uint64_t enc;
  if (v >= 0 && v <= 127) {
    enc = 1;
  } else if (v >= -4096 && v <= 4095) {
    enc = 2;
  } else if (v >= -32768 && v <= 32767) {
    enc = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    enc = 4;
  } else if (v >= -2147483648LL && v <= 2147483647LL) {
    enc = 5;
  } else {
    enc = 9;
  }
  return enc + 1;  // the back length of up to 127 bytes is one byte
}

uint64_t LpStringSize(std::string_view s) {
  int64_t v;
  if (StrictInt64(s, &v)) return LpIntSize(v);
  const uint64_t len = s.size();
  const uint64_t enc = (len < 64 ? 1 : (len < 4096 ? 2 : 5)) + len;
  return enc + BacklenSize(enc);
}

uint64_t Block::LpBytes() const { return 7 + LpIntSize(live) + LpIntSize(deleted) + lp_rest; }

// ---- BlockWalker ----

BlockWalker::BlockWalker(const Block* b) : block_(b), data_(b ? b->data() : nullptr) {
  pos_ = b ? b->entries_at : 0;
}

bool BlockWalker::Next() {
  if (pos_ >= block_->size) return false;
  at_ = pos_;
  const uint8_t* p = data_ + pos_;
  const uint64_t head = GetVarint(p);
  deleted_ = head & kHeadDeleted;
  same_ = head & kHeadSameFields;
  const uint64_t msd = GetVarint(p);
  const uint64_t seq = GetVarint(p);
  id_.ms = block_->master.ms + msd;
  id_.seq = msd == 0 ? block_->master.seq + seq : seq;
  pairs_ = same_ ? block_->master_fields : static_cast<uint32_t>(head >> 2);
  elems_ = static_cast<uint32_t>(p - data_);
  const uint64_t n = same_ ? pairs_ : uint64_t{pairs_} * 2;
  for (uint64_t i = 0; i < n; ++i) SkipElem(p);
  pos_ = static_cast<uint32_t>(p - data_);
  // The master fields follow their count at the start of the block.
  const uint8_t* m = data_;
  GetVarint(m);
  master_pos_ = static_cast<uint32_t>(m - data_);
  return true;
}

void BlockWalker::NextPair(std::string_view* field, std::string_view* value) {
  *field = GetElem(data_, same_ ? &master_pos_ : &elems_, &fbuf_);
  *value = GetElem(data_, &elems_, &vbuf_);
}

std::string_view BlockWalker::MasterField(uint32_t i, IntText* buf) const {
  const uint8_t* p = data_;
  GetVarint(p);
  for (uint32_t j = 0; j < i; ++j) SkipElem(p);
  auto off = static_cast<uint32_t>(p - data_);
  return GetElem(data_, &off, buf);
}

// ---- EntryLog ----

EntryLog::~EntryLog() {
  for (auto& [id, b] : index_) vsl::Free(b);
}

EntryLog::EntryLog(EntryLog&& o) noexcept : index_(std::move(o.index_)), length_(o.length_) {
  o.index_.clear();
  o.length_ = 0;
}

Block* EntryLog::NewBlock(size_t bytes) {
  void* p = vsl::Alloc(sizeof(Block) + bytes);
  auto* b = new (p) Block();
  const size_t usable = vsl::Api().usable_size(p);
  b->cap = static_cast<uint32_t>(std::min<size_t>(usable - sizeof(Block), UINT32_MAX));
  return b;
}

Block* EntryLog::Grow(Index::iterator it, size_t more) {
  Block* b = it->second;
  const size_t need = size_t{b->size} + more;
  if (need <= b->cap) return b;
  const size_t want = std::max(need, size_t{b->cap} + b->cap / 2);
  void* p = vsl::Realloc(b, sizeof(Block) + want);
  b = static_cast<Block*>(p);
  b->cap = static_cast<uint32_t>(
      std::min<size_t>(vsl::Api().usable_size(p) - sizeof(Block), UINT32_MAX));
  it->second = b;
  return b;
}

void EntryLog::ShrinkToFit(Index::iterator it) {
  Block* b = it->second;
  if (b->cap - b->size < 64) return;
  void* p = vsl::Api().realloc(b, sizeof(Block) + b->size);
  if (p == nullptr) return;  // keeping the larger block is fine
  b = static_cast<Block*>(p);
  b->cap = static_cast<uint32_t>(
      std::min<size_t>(vsl::Api().usable_size(p) - sizeof(Block), UINT32_MAX));
  it->second = b;
}

void EntryLog::FreeBlock(Index::iterator it) {
  vsl::Free(it->second);
  index_.erase(it);
}

Block* EntryLog::EmplaceBlock(StreamId master, std::span<const std::string_view> fields,
                              size_t reserve) {
  size_t bytes = VarintSize(fields.size());
  uint64_t lp = LpIntSize(static_cast<int64_t>(fields.size())) + LpIntSize(0);
  for (std::string_view f : fields) {
    bytes += Classify(f).size();
    lp += LpStringSize(f);
  }
  Block* b = NewBlock(bytes + reserve);
  b->master = master;
  uint8_t* p = PutVarint(b->data(), fields.size());
  for (std::string_view f : fields) p = PutElem(p, Classify(f));
  b->size = b->entries_at = static_cast<uint32_t>(p - b->data());
  b->master_fields = static_cast<uint32_t>(fields.size());
  b->lp_rest = lp;
  try {
    index_.emplace_hint(index_.end(), master, b);
  } catch (...) {
    vsl::Free(b);
    throw;
  }
  return b;
}

void EntryLog::PutEntry(Index::iterator it, StreamId id, bool deleted, bool same_fields,
                        std::span<const std::string_view> pairs) {
  const StreamId master = it->second->master;
  uint64_t head;
  const size_t bytes = EntrySize(id, master, same_fields, pairs, &head);
  Block* b = Grow(it, bytes);
  uint8_t* p = b->data() + b->size;
  p = PutVarint(p, head | (deleted ? kHeadDeleted : 0));
  const uint64_t msd = id.ms - master.ms;
  p = PutVarint(p, msd);
  p = PutVarint(p, msd == 0 ? id.seq - master.seq : id.seq);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!same_fields || i % 2 == 1) p = PutElem(p, Classify(pairs[i]));
  }
  b->size = static_cast<uint32_t>(p - b->data());
  b->lp_rest += LpEntrySize(id, master, same_fields, pairs);
  if (deleted) {
    ++b->deleted;
  } else {
    ++b->live;
    ++length_;
  }
}

namespace {

// Whether the fields of pairs are the block's master fields, in order.
bool SameFields(const Block* b, std::span<const std::string_view> pairs) {
  if (pairs.size() / 2 != b->master_fields) return false;
  const uint8_t* data = b->data();
  const uint8_t* p = data;
  GetVarint(p);
  auto off = static_cast<uint32_t>(p - data);
  IntText buf;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    if (GetElem(data, &off, &buf) != pairs[i]) return false;
  }
  return true;
}

}  // namespace

void EntryLog::Append(StreamId id, std::span<const std::string_view> pairs,
                      const BlockLimits& limits) {
  uint64_t total = 0;
  for (std::string_view s : pairs) total += s.size();
  bool open = index_.empty();
  if (!open) {
    const Block* tail = index_.rbegin()->second;
    const uint64_t max_bytes = limits.max_bytes == 0 || limits.max_bytes > kMaxNodeBytes
                                   ? kMaxNodeBytes
                                   : limits.max_bytes;
    if (tail->LpBytes() + total >= max_bytes) {
      open = true;
    } else if (limits.max_entries > 0 &&
               int64_t{tail->live} + tail->deleted >= limits.max_entries) {
      open = true;
    }
    if (open) ShrinkToFit(std::prev(index_.end()));
  }
  bool same = true;
  if (open) {
    std::vector<std::string_view> fields;
    fields.reserve(pairs.size() / 2);
    for (size_t i = 0; i < pairs.size(); i += 2) fields.push_back(pairs[i]);
    uint64_t head;
    // Room for this entry and some that follow, so the block is not reallocated at every XADD.
    const size_t first = EntrySize(id, id, true, pairs, &head);
    EmplaceBlock(id, fields, first + std::min<size_t>(first * 8, 2048));
  } else {
    same = SameFields(index_.rbegin()->second, pairs);
  }
  PutEntry(std::prev(index_.end()), id, false, same, pairs);
}

bool EntryLog::Delete(StreamId id) {
  auto it = index_.upper_bound(id);
  if (it == index_.begin()) return false;
  --it;
  Block* b = it->second;
  BlockWalker w(b);
  while (w.Next()) {
    if (w.id() > id) return false;
    if (w.id() < id) continue;
    if (w.deleted()) return false;
    b->data()[w.offset()] |= kHeadDeleted;  // bit 0 of the head's first byte
    --length_;
    if (b->live == 1) {
      FreeBlock(it);  // its last live entry: the block goes, as Redis removes the node
    } else {
      --b->live;
      ++b->deleted;
    }
    return true;
  }
  return false;
}

bool EntryLog::Contains(StreamId id) const {
  Cursor c(*this, id, id, false);
  return c.Next();
}

template <class Stop>
int64_t EntryLog::Trim(bool approx, int64_t limit, Stop stop, bool by_len, uint64_t maxlen,
                       StreamId minid) {
  int64_t removed = 0;
  auto it = index_.begin();
  while (it != index_.end()) {
    if (by_len && length_ <= maxlen) break;
    Block* b = it->second;
    const int64_t entries = b->live;
    if (limit != 0 && removed + entries > limit) break;
    bool whole;
    if (by_len) {
      whole = length_ - static_cast<uint64_t>(entries) >= maxlen;
    } else {
      // Redis compares the block's last entry, tombstone or not.
      StreamId last;
      BlockWalker w(b);
      while (w.Next()) last = w.id();
      whole = last < minid;
    }
    if (whole) {
      length_ -= static_cast<uint64_t>(entries);
      removed += entries;
      vsl::Free(b);
      it = index_.erase(it);
      continue;
    }
    if (approx) break;
    BlockWalker w(b);
    while (w.Next() && !stop(w.id())) {
      if (w.deleted()) continue;
      b->data()[w.offset()] |= kHeadDeleted;
      --b->live;
      ++b->deleted;
      --length_;
      ++removed;
    }
    break;  // the rest of the stream is kept
  }
  return removed;
}

int64_t EntryLog::TrimMaxLen(uint64_t maxlen, bool approx, int64_t limit) {
  return Trim(
      approx, limit, [&](StreamId) { return length_ <= maxlen; }, true, maxlen, StreamId{});
}

int64_t EntryLog::TrimMinId(StreamId minid, bool approx, int64_t limit) {
  return Trim(
      approx, limit, [&](StreamId id) { return id >= minid; }, false, 0, minid);
}

bool EntryLog::First(bool skip_tombstones, StreamId* id) const {
  for (const auto& [master, b] : index_) {
    if (skip_tombstones && b->live == 0) continue;
    BlockWalker w(b);
    while (w.Next()) {
      if (skip_tombstones && w.deleted()) continue;
      *id = w.id();
      return true;
    }
  }
  return false;
}

bool EntryLog::Last(bool skip_tombstones, StreamId* id) const {
  for (auto it = index_.rbegin(); it != index_.rend(); ++it) {
    const Block* b = it->second;
    if (skip_tombstones && b->live == 0) continue;
    BlockWalker w(b);
    bool found = false;
    while (w.Next()) {
      if (skip_tombstones && w.deleted()) continue;
      *id = w.id();
      found = true;
    }
    if (found) return true;
  }
  return false;
}

size_t EntryLog::MemUsage() const {
  size_t n = index_.size() * kIndexNodeBytes;
  for (const auto& [master, b] : index_) n += vsl::Api().usable_size(b);
  return n;
}

void EntryLog::CopyFrom(const EntryLog& other) {
  for (const auto& [master, src] : other.index_) {
    Block* b = NewBlock(src->size);
    const uint32_t cap = b->cap;
    std::memcpy(static_cast<void*>(b), src, sizeof(Block) + src->size);
    b->cap = cap;
    try {
      index_.emplace_hint(index_.end(), master, b);
    } catch (...) {
      vsl::Free(b);
      throw;
    }
  }
  length_ = other.length_;
}

void EntryLog::OpenLoadedBlock(StreamId master, std::span<const std::string_view> fields) {
  EmplaceBlock(master, fields, 256);
}

void EntryLog::AppendLoaded(StreamId id, bool deleted, bool same_fields,
                            std::span<const std::string_view> pairs) {
  PutEntry(std::prev(index_.end()), id, deleted, same_fields, pairs);
}

void EntryLog::DropEmptyTail() {
  if (index_.empty()) return;
  auto it = std::prev(index_.end());
  if (it->second->size == it->second->entries_at) FreeBlock(it);
}

// ---- Cursor ----

EntryLog::Cursor::Cursor(const EntryLog& log, StreamId start, StreamId end, bool rev)
    : log_(log), start_(start), end_(end), rev_(rev) {
  if (start > end || log.index_.empty()) {
    done_ = true;
    return;
  }
  if (!rev) {
    block_ = log.index_.upper_bound(start);
    if (block_ != log.index_.begin()) --block_;
  } else {
    block_ = log.index_.upper_bound(end);
    if (block_ == log.index_.begin()) {
      done_ = true;  // every block starts after end
      return;
    }
    --block_;
  }
}

bool EntryLog::Cursor::EnterBlock() {
  walker_ = BlockWalker(block_->second);
  in_block_ = true;
  if (rev_) {
    offsets_.clear();
    BlockWalker w(block_->second);
    while (w.Next()) offsets_.push_back(w.offset());
    next_ = offsets_.size();
  }
  return true;
}

bool EntryLog::Cursor::Next() {
  while (!done_) {
    if (!in_block_) {
      if (!rev_ && block_->first > end_) break;
      EnterBlock();
    }
    if (!rev_) {
      while (walker_.Next()) {
        if (walker_.deleted() || walker_.id() < start_) continue;
        if (walker_.id() > end_) {
          done_ = true;
          return false;
        }
        return true;
      }
      in_block_ = false;
      if (++block_ == log_.index_.end()) break;
    } else {
      while (next_ > 0) {
        walker_.Seek(offsets_[--next_]);
        walker_.Next();
        if (walker_.deleted() || walker_.id() > end_) continue;
        if (walker_.id() < start_) {
          done_ = true;
          return false;
        }
        return true;
      }
      in_block_ = false;
      if (block_ == log_.index_.begin()) break;
      --block_;
    }
  }
  done_ = true;
  return false;
}

}  // namespace vessel::streams
