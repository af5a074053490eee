// The RDB of a diskless full synchronization between the snapshot thread and the replicas
// (rdb_stream.h).
#include "host/repl/rdb_stream.h"

#include <algorithm>
#include <chrono>

namespace vessel::repl {

size_t RdbStream::AddReader() {
  std::lock_guard l(mu_);
  pos_.push_back(base_);
  return pos_.size() - 1;
}

uint64_t RdbStream::SlowestLocked() const {
  uint64_t slowest = kGone;
  for (uint64_t p : pos_) slowest = std::min(slowest, p);
  return slowest;
}

bool RdbStream::Write(std::string_view bytes, const std::atomic<bool>& cancelled) {
  std::unique_lock l(mu_);
  for (;;) {
    const uint64_t slowest = SlowestLocked();
    if (slowest == kGone || cancelled.load(std::memory_order_relaxed)) return false;
    if (end_ - slowest < kWindow) break;
    // Woken by a reader's progress; the timeout only notices a cancellation.
    cv_.wait_for(l, std::chrono::milliseconds(50));
  }
  if (!bytes.empty()) {
    chunks_.emplace_back(bytes);
    end_ += bytes.size();
  }
  return true;
}

void RdbStream::Finish(bool ok) {
  std::lock_guard l(mu_);
  state_ = ok ? State::kOk : State::kFailed;
}

RdbStream::Read RdbStream::Take(size_t reader, size_t max, std::string* out) {
  std::lock_guard l(mu_);
  uint64_t& p = pos_[reader];
  if (p == kGone) return Read::kFailed;
  if (p == end_) {
    if (state_ == State::kOpen) return Read::kNothingYet;
    return state_ == State::kOk ? Read::kEnd : Read::kFailed;
  }
  // The chunk holding position p, then as much as fits from there on.
  uint64_t at = base_;
  size_t i = 0;
  while (at + chunks_[i].size() <= p) at += chunks_[i++].size();
  while (max > 0 && i < chunks_.size()) {
    const std::string& c = chunks_[i];
    const size_t from = static_cast<size_t>(p - at);
    const size_t n = std::min(max, c.size() - from);
    out->append(c, from, n);
    p += n;
    max -= n;
    at += c.size();
    ++i;
  }
  TrimLocked();
  cv_.notify_all();
  return Read::kData;
}

void RdbStream::Leave(size_t reader) {
  std::lock_guard l(mu_);
  if (reader < pos_.size()) pos_[reader] = kGone;
  TrimLocked();
  cv_.notify_all();
}

void RdbStream::TrimLocked() {
  const uint64_t slowest = std::min(SlowestLocked(), end_);
  while (!chunks_.empty() && base_ + chunks_.front().size() <= slowest) {
    base_ += chunks_.front().size();
    chunks_.pop_front();
  }
}

}  // namespace vessel::repl
