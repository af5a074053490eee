// The append-only file, in Redis 7's multi-part layout: a directory (appenddirname) holding a
// manifest (<appendfilename>.manifest), one base file (<appendfilename>.<n>.base.rdb, an RDB
// snapshot; or .base.aof, commands) and incremental files (<appendfilename>.<n>.incr.aof, RESP
// commands). The same layout as redis-server 7.0, so either server loads the other's directory.
//
// AofWriter appends RESP records to the current incremental file with group commit, in Redis's
// order (beforeSleep writes and fsyncs before any reply of the loop turn leaves): a command's
// records go into a shared buffer under mu_; a worker about to send replies while records are
// pending (Pending) defers them to one handler per loop turn, which calls MakeDurable: one of the
// callers (the leader) takes the whole buffer, writes it (and fdatasyncs it with appendfsync
// always) outside the lock, and wakes the others whose bytes it covered. So with `always` every
// write is on disk before its reply leaves, and every connection of a loop turn, on every worker,
// shares one write and one fsync. With `everysec` the bytes are written to the file before the
// reply (a killed process loses nothing) and a background thread fdatasyncs once a second; with
// `no` the kernel decides. Records with no reply waiting (active expiry's DEL) are written by the
// background thread within a second, or by the next reply's MakeDurable.
//
// Threads: Append from any worker (under the command's locks and a world slot); SwitchTo,
// Open and Close under the world lock held exclusively (no Append can run); the fsync thread on
// its own. mu_ guards every field.
#ifndef VESSEL_HOST_PERSIST_AOF_H_
#define VESSEL_HOST_PERSIST_AOF_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/engine/engine.h"

namespace vessel::persist {

enum class FsyncPolicy { kAlways, kEverySec, kNo };

// One file of the manifest.
struct AofFile {
  std::string name;
  uint64_t seq = 0;
  char type = 'i';  // 'b' base, 'h' history, 'i' incremental
};

struct AofManifest {
  std::vector<AofFile> files;  // the base (if any) first, then the incremental files in order
  const AofFile* base() const;
  uint64_t last_incr_seq() const;
  std::string Text() const;
  // Parses a manifest; false with *error on a malformed line.
  static bool Parse(std::string_view text, AofManifest* out, std::string* error);
};

// Reads dir/name into *text; false when absent (errno ENOENT) or unreadable (*error).
bool ReadWholeFile(const std::string& path, std::string* text, std::string* error);
// Writes a file through a temporary one, fsync and rename, then fsyncs the directory.
bool WriteFileAtomic(const std::string& dir, const std::string& name, std::string_view text,
                     std::string* error);

// Appends a RESP multibulk of argv to *out (one allocation at most: every write is recorded).
void AppendResp(std::string* out, const std::string_view* argv, size_t argc);
inline void AppendResp(std::string* out, const std::vector<std::string_view>& argv) {
  AppendResp(out, argv.data(), argv.size());
}

class AofWriter {
 public:
  AofWriter() = default;
  ~AofWriter();
  AofWriter(const AofWriter&) = delete;
  AofWriter& operator=(const AofWriter&) = delete;

  // Opens path for appending (created when absent) and starts the fsync thread.
  bool Open(const std::string& path, FsyncPolicy policy, std::string* error);
  // Writes what is buffered, fsyncs and closes the current file, then opens path: records from now
  // on go to the new file. The world lock is held exclusively.
  bool SwitchTo(const std::string& path, std::string* error);
  void Close();
  bool is_open() const;
  void set_policy(FsyncPolicy p);

  // Buffers records that run in database db (a SELECT is written first when the file's current
  // database differs; db < 0 = no database). end_db: the database the records leave the file in
  // when they SELECT others (-2: db). MakeDurable writes them.
  void Append(int db, std::string_view records, int end_db = -2);
  // Whether some appended bytes are not yet written (or, with `always`, not yet on disk): replies
  // must wait for MakeDurable. Lock free.
  bool Pending() const {
    return appended_pub_.load(std::memory_order_acquire) >
           durable_pub_.load(std::memory_order_acquire);
  }
  // Writes every appended byte (and fdatasyncs with `always`); with `always`, a write that
  // cannot reach the disk ends the process, as in Redis. After a write error the bytes stay
  // buffered for Retry and this returns at once.
  void MakeDurable();
  // Retries buffered bytes after a write error (cron); true when nothing is left pending.
  bool Retry();

  uint64_t size() const;  // bytes of the current incremental file
  std::string last_error() const;
  bool write_ok() const;
  uint64_t fsync_delayed() const;

 private:
  bool FlushLocked(std::unique_lock<std::mutex>& l, uint64_t target, bool sync);
  // Copies appended_ and the durable count (written_, or synced_ with `always`) for Pending.
  void PublishLocked();
  void FsyncLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable fsync_cv_;
  int fd_ = -1;
  FsyncPolicy policy_ = FsyncPolicy::kEverySec;
  std::string pending_;
  uint64_t appended_ = 0, written_ = 0, synced_ = 0;        // byte counts since Open
  std::atomic<uint64_t> appended_pub_{0}, durable_pub_{0};  // PublishLocked's copies
  uint64_t file_size_ = 0;
  int last_db_ = -1;
  bool leader_ = false;
  bool stop_ = false;
  std::string error_;
  std::thread fsync_thread_;
};

struct AofLoadResult {
  uint64_t commands = 0;
  bool truncated = false;  // a damaged tail was cut off (aof-load-truncated)
};

// Replays a file of RESP commands (possibly starting with an RDB preamble) into the keyspace on the
// startup thread. `last` is the last file of the manifest: only there a truncated tail may be cut
// off (when truncate_ok) instead of refusing. false with *error naming the file and offset.
bool ReplayAofFile(engine::Engine& e, const std::string& path, bool last, bool truncate_ok,
                   AofLoadResult* result, std::string* error);

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_AOF_H_
