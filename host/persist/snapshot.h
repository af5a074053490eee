// A point-in-time snapshot of the whole keyspace written to a file (or to replicas' sockets)
// while the server keeps serving reads and writes, without forking the multi-threaded process.
//
// The design (the locking rule):
//  - Begin runs with the whole keyspace held (the world lock): it records the time and every
//    database's key counts, and marks all 64 chunks of every non-empty shard pending
//    (Shard::snapshot_pending; a key's chunk is the low 6 bits of its hash, so a chunk is a
//    fixed 1/64 of the shard's buckets whatever the table's size). That instant is the
//    snapshot's point in time.
//  - A background thread then walks the shards in (db, shard) order. For each one it takes its
//    own world-lock slot and the shard's lock shared, encodes the chunks still pending, clears
//    their bits and writes them to the file, then the chunks writers captured.
//  - Whoever takes a shard exclusively to change keys of pending chunks (LockSet with the chunks
//    of the command's writable keys, active expiry, eviction: Database::BeforeWrite) encodes
//    those chunks first, still unchanged, into the shard's side buffer and clears their bits;
//    holders that do not know their keys capture every pending chunk of the shard, and a
//    world-lock holder (FLUSHALL, SWAPDB, a global transaction) every pending chunk of every
//    shard (BeforeWorldWrite). The thread writes those buffers at their shard's place.
//  So each chunk is captured exactly once, under a lock that excludes writers, in its state at
//  the snapshot's start; a writer pays for 1/64 of a shard per chunk it touches first. The extra
//  memory is the side buffers waiting for their turn (peak reported as rdb_last_cow_size).
//  Cancel (FLUSHALL, SHUTDOWN) stops the thread at the next shard and removes the temporary file;
//  flags left set are cleared by the next lock holder without capturing.
#ifndef VESSEL_HOST_PERSIST_SNAPSHOT_H_
#define VESSEL_HOST_PERSIST_SNAPSHOT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/engine/engine.h"
#include "host/persist/rdb_file.h"
#include "host/persist/rdb_value.h"

namespace vessel::persist {

class Snapshot {
 public:
  struct Result {
    bool ok = false;
    bool cancelled = false;
    std::string error;
    uint64_t keys = 0;
    uint64_t bytes = 0;
    int64_t start_ms = 0, end_ms = 0;
    size_t peak_buffered = 0;  // bytes held in side buffers at most
  };
  // What to write: an RDB file (dir/name), or an AOF base (RDB format with aof-base 1).
  struct Target {
    std::string dir, name;
    bool aof_base = false;
    // Extra aux fields written after used-mem (a replica's repl-stream-db, repl-id,
    // repl-offset); may be filled until the snapshot's point in time (StartSnapshot's on_begin).
    std::shared_ptr<std::vector<std::pair<std::string, std::string>>> aux;
    // When set, the RDB goes to this function instead of a file (a diskless replica
    // synchronization), with the snapshot's cancel flag for a sink that waits for its reader.
    std::function<bool(std::string_view, const std::atomic<bool>& cancelled)> sink;
  };

  // `done` runs on the snapshot thread when it finishes (ok, failed or cancelled).
  Snapshot(engine::Engine& e, Target target, std::function<void(const Result&)> done);
  ~Snapshot();  // joins
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // With the whole keyspace held: fixes the point in time (see the file comment).
  void Begin();
  // Starts the thread (after the world lock was released).
  void Start();
  // Hooks (persist_hooks.h): the shard is held exclusively / every shard is held.
  void CaptureShard(engine::Database& db, uint32_t shard, uint64_t chunks);
  void CaptureAll();
  // Asks the thread to stop; it removes its temporary file. Any thread, any locks.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  void Join();
  int64_t start_ms() const { return start_ms_; }
  uint64_t keys_total() const { return keys_total_; }
  uint64_t keys_done() const { return keys_done_.load(std::memory_order_relaxed); }
  size_t buffered() const { return buffered_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // Encodes the pending ones of `chunks` of a shard (held by the caller) into *out and clears
  // their bits.
  void Encode(engine::Database& db, uint32_t shard, uint64_t chunks, std::string* out);
  // rdb-key-save-delay: sleeps for `keys` just saved (no lock held), as Redis's tests slow a
  // save down.
  void KeySaveDelay(uint64_t keys);

  engine::Engine& e_;
  Target target_;
  std::function<void(const Result&)> done_;
  EncodeOptions opt_;
  int64_t start_ms_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> counts_;  // per db: keys, expires at the start
  std::vector<std::string> libraries_;                 // FUNCTION libraries at the start
  uint64_t keys_total_ = 0;
  std::atomic<uint64_t> keys_done_{0};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;

  std::mutex mu_;  // guards the side buffers, the first error and the keys left out
  std::map<std::pair<int, uint32_t>, std::string> captured_;
  std::string error_;
  SkippedKeys skipped_;
  std::atomic<size_t> buffered_{0};
  size_t peak_buffered_ = 0;
};

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_SNAPSHOT_H_
