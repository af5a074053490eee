// The replication backlog: the last repl-backlog-size bytes of the replication stream, by offset,
// from which a replica that lost its link continues (PSYNC ... +CONTINUE). A plain ring buffer;
// not thread safe (the replication feed guards it with its lock).
#ifndef VESSEL_HOST_REPL_BACKLOG_H_
#define VESSEL_HOST_REPL_BACKLOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::repl {

class Backlog {
 public:
  // An empty backlog of `size` bytes whose next byte has stream offset end_offset + 1 (Redis
  // numbers the stream's bytes from 1: master_repl_offset is the offset of the last byte).
  Backlog(size_t size, uint64_t end_offset);

  void Append(std::string_view bytes);
  // Keeps the newest bytes that fit in `size`.
  void Resize(size_t size);
  // The offset of the first byte held (Redis's repl_backlog->offset); end_offset + 1 when empty.
  uint64_t first_offset() const { return end_offset_ - histlen_ + 1; }
  uint64_t end_offset() const { return end_offset_; }
  uint64_t histlen() const { return histlen_; }
  size_t size() const { return ring_.size(); }
  // Whether a replica whose next byte is `offset` can continue from here.
  bool Covers(uint64_t offset) const {
    return offset >= first_offset() && offset <= end_offset_ + 1;
  }
  // Appends the bytes from `offset` (Covers) to the end to *out.
  void CopyFrom(uint64_t offset, std::string* out) const;

 private:
  std::vector<char> ring_;
  size_t next_ = 0;       // where the next byte goes
  uint64_t histlen_ = 0;  // bytes held
  uint64_t end_offset_;   // stream offset of the last byte appended
};

}  // namespace vessel::repl

#endif  // VESSEL_HOST_REPL_BACKLOG_H_
