// The entries of a stream: packed blocks of delta-encoded entries under an ordered index.
//
// Representation:
//   - A Block is one allocation: a header, then the field names of the entry that opened it (its
//     "master" fields, as in Redis's listpacks), then its entries back to back. The block's
//     master ID is the ID of the entry that opened it; every entry of the block is >= it.
//   - An entry is: a head varint (bit 0 deleted, bit 1 "same fields as the master", the number
//     of fields in the bits above when not), the ms difference from the master ID (varint), the
//     sequence (varint: its difference from the master's when the ms are equal, else itself),
//     the field names when they differ from the master's, then the values.
//   - A field or value is a varint tag then its bytes: tag = len << 1 for len bytes of text;
//     tag = zigzag(v) << 1 | 1 for the canonical decimal text of an integer v (|v| < 2^62), which
//     is decoded back to exactly that text. A two-field entry with small values takes 6-10 bytes,
//     where Redis's listpack entry takes 16-20.
//   - The index maps each block's master ID to the block (an ordered tree), so a range read of N
//     entries costs O(log blocks + block size + N). Blocks are only appended at the end (IDs only
//     grow); XDEL marks an entry deleted in place and frees its block when no live entry is left;
//     trimming frees whole blocks and marks entries inside the first one, as Redis does.
//   - A new block is started exactly where Redis would start a new listpack node (a full node by
//     stream-node-max-entries, or by stream-node-max-bytes measured on the listpack Redis would
//     have), so the blocks match Redis's nodes one for one: approximate trimming (~) removes the
//     same entries, and an RDB file written from them is the file Redis would write.
//
// All memory comes from the host allocator (vsl::Alloc). Not thread-aware: a stream is touched
// only under its key's lock. Allocation failures throw std::bad_alloc before anything changes.
#ifndef VESSEL_MODULES_STREAMS_ENTRY_LOG_H_
#define VESSEL_MODULES_STREAMS_ENTRY_LOG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "stream_id.h"
#include "vessel/module.hpp"

namespace vessel::streams {

// Where Redis starts a new node (stream-node-max-bytes, stream-node-max-entries; 0 = no limit).
struct BlockLimits {
  uint64_t max_bytes = 4096;
  int64_t max_entries = 100;
};

// Redis never lets one node's listpack pass this (STREAM_LISTPACK_MAX_SIZE); XADD refuses an
// entry whose fields and values add up to more ("Elements are too large to be stored").
inline constexpr uint64_t kMaxNodeBytes = uint64_t{1} << 30;

struct Block {
  StreamId master;
  uint32_t live = 0;        // entries not marked deleted
  uint32_t deleted = 0;     // entries marked deleted
  uint32_t size = 0;        // bytes used after the header
  uint32_t cap = 0;         // bytes available after the header
  uint32_t entries_at = 0;  // offset of the first entry (after the master fields)
  uint32_t master_fields = 0;
  uint64_t lp_rest = 0;  // the listpack Redis would hold, but for its header, end byte and counts
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this + 1); }
  // lpBytes() of the listpack Redis would hold for this node.
  uint64_t LpBytes() const;
};

// Room for the decimal text of an integer element.
struct IntText {
  char b[24];
};

// Walks the entries of one block in order, tombstones included.
class BlockWalker {
 public:
  explicit BlockWalker(const Block* b);
  // Moves to the next entry (the first on the first call); false past the last.
  bool Next();
  // Moves to the entry at a byte offset (one of offset()'s values); Next() then reads it.
  void Seek(uint32_t offset) { pos_ = offset; }
  uint32_t offset() const { return at_; }

  StreamId id() const { return id_; }
  bool deleted() const { return deleted_; }
  bool same_fields() const { return same_; }
  uint32_t pairs() const { return pairs_; }
  // The next field and value of the current entry (pairs() of them); views valid until the next
  // call.
  void NextPair(std::string_view* field, std::string_view* value);
  // The block's master fields, in order.
  uint32_t master_field_count() const { return block_->master_fields; }
  std::string_view MasterField(uint32_t i, IntText* buf) const;

 private:
  const Block* block_;
  const uint8_t* data_;
  uint32_t pos_;  // next entry's offset
  uint32_t at_ = 0;
  uint32_t elems_;  // offset of the current entry's next element
  uint32_t master_pos_ = 0;
  StreamId id_;
  bool deleted_ = false, same_ = false;
  uint32_t pairs_ = 0;
  IntText fbuf_, vbuf_;
};

class EntryLog {
 public:
  using Index = std::map<StreamId, Block*, std::less<StreamId>,
                         vsl::Allocator<std::pair<const StreamId, Block*>>>;

  EntryLog() = default;
  ~EntryLog();
  EntryLog(const EntryLog&) = delete;
  EntryLog& operator=(const EntryLog&) = delete;
  EntryLog(EntryLog&& o) noexcept;

  uint64_t length() const { return length_; }
  size_t blocks() const { return index_.size(); }
  const Index& index() const { return index_; }

  // Appends an entry of fields and values (pairs: field, value, field, value, ...) with an ID
  // greater than every entry's (the caller checks); a new block opens where Redis would open a
  // node.
  void Append(StreamId id, std::span<const std::string_view> pairs, const BlockLimits& limits);
  // Marks the live entry `id` deleted (freeing its block when it was the block's last live
  // entry); false when there is no such live entry.
  bool Delete(StreamId id);
  bool Contains(StreamId id) const;

  // Redis's streamTrim: MAXLEN keeps at most maxlen entries, MINID drops entries below minid.
  // approx removes whole blocks only; limit (0 = none) bounds the entries removed, a whole
  // block at a time. Returns how many entries were removed.
  int64_t TrimMaxLen(uint64_t maxlen, bool approx, int64_t limit);
  int64_t TrimMinId(StreamId minid, bool approx, int64_t limit);

  // The first / last entry (with or without tombstones); false when there is none.
  bool First(bool skip_tombstones, StreamId* id) const;
  bool Last(bool skip_tombstones, StreamId* id) const;

  size_t MemUsage() const;
  // A deep copy (throws std::bad_alloc).
  void CopyFrom(const EntryLog& other);

  // Loading (RDB): opens a block at master with these field names; entries follow with
  // AppendLoaded, in increasing ID order, each >= master (the caller checks).
  void OpenLoadedBlock(StreamId master, std::span<const std::string_view> fields);
  void AppendLoaded(StreamId id, bool deleted, bool same_fields,
                    std::span<const std::string_view> pairs);
  // Drops a block left without entries by a failed load.
  void DropEmptyTail();

  // Live entries with start <= id <= end, ascending (descending when rev).
  class Cursor {
   public:
    Cursor(const EntryLog& log, StreamId start, StreamId end, bool rev);
    bool Next();
    StreamId id() const { return walker_.id(); }
    uint32_t pairs() const { return walker_.pairs(); }
    void NextPair(std::string_view* field, std::string_view* value) {
      walker_.NextPair(field, value);
    }

   private:
    bool EnterBlock();
    const EntryLog& log_;
    StreamId start_, end_;
    bool rev_;
    bool done_ = false;
    bool in_block_ = false;
    Index::const_iterator block_;
    BlockWalker walker_{nullptr};
    std::vector<uint32_t> offsets_;  // rev: the entries of the current block
    size_t next_ = 0;                // rev: how many of offsets_ are left
  };

 private:
  Block* NewBlock(size_t bytes);
  Block* Grow(Index::iterator it, size_t more);
  void FreeBlock(Index::iterator it);
  void ShrinkToFit(Index::iterator it);
  Block* EmplaceBlock(StreamId master, std::span<const std::string_view> fields, size_t reserve);
  void PutEntry(Index::iterator it, StreamId id, bool deleted, bool same_fields,
                std::span<const std::string_view> pairs);
  template <class Stop>
  int64_t Trim(bool approx, int64_t limit, Stop stop, bool by_len, uint64_t maxlen, StreamId minid);

  Index index_;
  uint64_t length_ = 0;
};

// ---- element encodings, shared with the RDB listpack code ----

// The listpack element size (encoding and back length) Redis gives a string or an integer.
uint64_t LpStringSize(std::string_view s);
uint64_t LpIntSize(int64_t v);

}  // namespace vessel::streams

#endif  // VESSEL_MODULES_STREAMS_ENTRY_LOG_H_
