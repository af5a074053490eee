// The RDB of a diskless full synchronization on its way from the snapshot thread to the
// connections of the replicas that share it: one writer, one reading position per replica.
//
// Locking: mu_ guards everything. The writer (the snapshot thread, which runs no event loop)
// waits while the slowest reader is kWindow bytes or more behind, so a slow replica holds the
// snapshot back instead of the server buffering the whole RDB; readers (the replicas' workers)
// never wait, they take what is there. A reader that leaves stops holding the writer back; when
// every reader has left, or the snapshot is cancelled, the writer gives up (the snapshot fails).
#ifndef VESSEL_HOST_REPL_RDB_STREAM_H_
#define VESSEL_HOST_REPL_RDB_STREAM_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::repl {

class RdbStream {
 public:
  static constexpr size_t kWindow = size_t{8} << 20;

  enum class Read { kData, kNothingYet, kEnd, kFailed };

  // A new reader, at the first byte; before the writer writes.
  size_t AddReader();
  // The writer: appends bytes, waiting while the slowest reader is kWindow or more behind. false
  // when every reader left or `cancelled` became true.
  bool Write(std::string_view bytes, const std::atomic<bool>& cancelled);
  // The writer's end: the whole RDB was written (ok) or the snapshot failed.
  void Finish(bool ok);
  // Appends up to `max` of the reader's next bytes to *out (kData), or says why there are none.
  Read Take(size_t reader, size_t max, std::string* out);
  // The reader's connection went away.
  void Leave(size_t reader);

 private:
  static constexpr uint64_t kGone = ~uint64_t{0};
  uint64_t SlowestLocked() const;
  void TrimLocked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> chunks_;  // the bytes from base_ on, in the writer's pieces
  uint64_t base_ = 0;               // stream position of chunks_.front()'s first byte
  uint64_t end_ = 0;                // stream position after the last byte written
  std::vector<uint64_t> pos_;       // per reader: its next byte's position, or kGone
  enum class State { kOpen, kOk, kFailed } state_ = State::kOpen;
};

}  // namespace vessel::repl

#endif  // VESSEL_HOST_REPL_RDB_STREAM_H_
