// The replication backlog's ring buffer (backlog.h).
#include "host/repl/backlog.h"

#include <algorithm>
#include <cstring>

namespace vessel::repl {

Backlog::Backlog(size_t size, uint64_t end_offset)
    : ring_(std::max<size_t>(size, 1)), end_offset_(end_offset) {}

void Backlog::Append(std::string_view bytes) {
  end_offset_ += bytes.size();
  const size_t cap = ring_.size();
  if (bytes.size() >= cap) {  // only the newest `cap` bytes stay
    std::memcpy(ring_.data(), bytes.data() + bytes.size() - cap, cap);
    next_ = 0;
    histlen_ = cap;
    return;
  }
  const size_t first = std::min(bytes.size(), cap - next_);
  std::memcpy(ring_.data() + next_, bytes.data(), first);
  std::memcpy(ring_.data(), bytes.data() + first, bytes.size() - first);
  next_ = (next_ + bytes.size()) % cap;
  histlen_ = std::min<uint64_t>(histlen_ + bytes.size(), cap);
}

void Backlog::CopyFrom(uint64_t offset, std::string* out) const {
  if (!Covers(offset)) return;
  const size_t n = static_cast<size_t>(end_offset_ + 1 - offset);  // <= histlen_ <= capacity
  if (n == 0) return;
  const size_t cap = ring_.size();
  const size_t start = (next_ + cap - n) % cap;
  const size_t first = std::min<size_t>(n, cap - start);
  out->append(ring_.data() + start, first);
  out->append(ring_.data(), n - first);
}

void Backlog::Resize(size_t size) {
  size = std::max<size_t>(size, 1);
  if (size == ring_.size()) return;
  std::string keep;
  const uint64_t n = std::min<uint64_t>(histlen_, size);
  CopyFrom(end_offset_ + 1 - n, &keep);
  ring_.assign(size, 0);
  std::memcpy(ring_.data(), keep.data(), keep.size());
  next_ = keep.size() % size;
  histlen_ = keep.size();
}

}  // namespace vessel::repl
