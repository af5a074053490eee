// Whole RDB files: the writer (header and aux fields, databases, end marker, CRC64; through a
// temporary file that is fsynced and renamed over the target, so a crash leaves the old file or
// the new one whole) and the loader (checksum first, then every key built into the keyspace).
#ifndef VESSEL_HOST_PERSIST_RDB_FILE_H_
#define VESSEL_HOST_PERSIST_RDB_FILE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/engine/engine.h"
#include "host/persist/rdb_value.h"

namespace vessel::persist {

// Test hook: when >= 0, file writes fail with ENOSPC once this many more bytes were written (a
// full disk without a full disk). -1 (the default) disables it.
extern std::atomic<int64_t> g_fail_writes_after;

// A file written sequentially with a running CRC64. Not thread safe.
class RdbFileWriter {
 public:
  RdbFileWriter() = default;
  ~RdbFileWriter();
  RdbFileWriter(const RdbFileWriter&) = delete;
  RdbFileWriter& operator=(const RdbFileWriter&) = delete;

  // Creates dir/temp-<pid>-<n>.rdb for the final file dir/name.
  bool Open(const std::string& dir, const std::string& name, std::string* error);
  // Writes to `sink` instead of a file (a diskless replica synchronization): Finish only flushes
  // the end marker and the CRC64 into it. The sink returns false to fail the write.
  void OpenSink(std::function<bool(std::string_view)> sink) { sink_ = std::move(sink); }
  // "REDIS0010", the aux fields Redis 7.0 writes (aof-base 1 for an AOF base file) and the
  // FUNCTION libraries (one RDB_OPCODE_FUNCTION2 record each, as rdbSaveFunctions).
  // `aux` (optional): more aux fields, written after used-mem as Redis orders them.
  void Header(bool aof_base, int64_t used_mem, const std::vector<std::string>& libraries,
              const std::vector<std::pair<std::string, std::string>>* aux = nullptr);
  // SELECTDB and RESIZEDB before a database's keys.
  void BeginDb(int index, uint64_t keys, uint64_t expires);
  // Key records (or anything else) in file order.
  void Append(std::string_view bytes);
  // End marker, CRC64, flush, fsync, rename over the target, fsync of the directory. false with
  // *error (naming the step and the system error) on failure; the temporary file is removed.
  bool Finish(std::string* error);
  // Removes the temporary file (after an error or a cancellation).
  void Abort();
  uint64_t bytes() const { return written_ + pending_.size(); }

 private:
  bool Flush();
  std::string dir_, path_, tmp_;
  int fd_ = -1;
  std::function<bool(std::string_view)> sink_;
  std::string pending_;
  uint64_t written_ = 0;
  uint64_t crc_ = 0;
  int errno_ = 0;
  const char* failed_op_ = nullptr;
};

// The FUNCTION libraries to save (none without scripting).
std::vector<std::string> FunctionLibrarySources(engine::Engine& e);

// The keys a save left out because their type is not persisted (VSL_TYPE_NOT_PERSISTED): a save
// counts them and logs one warning at its end. Not thread safe (a snapshot guards its own).
struct SkippedKeys {
  uint64_t keys = 0;
  std::vector<std::string> types;  // the types' names, each once
  void Add(const vsl_type* t);
  void Merge(const SkippedKeys& other);
  // The warning, when keys were left out: "<what>: left out keys=N of types not persisted: a,b".
  void Warn(std::string_view what) const;
};

// Appends the records of the live keys of one shard (keys expired at now_ms are skipped; only
// those of `chunks`, see EntryTable::ChunkBit) to *out, counting them in *keys; keys of types not
// persisted are left out and counted in *skipped. The shard is held (shared is enough) by the
// caller. false with *error when a value cannot be written.
bool SerializeShard(engine::Engine& e, const engine::Shard& shard, const EncodeOptions& opt,
                    int64_t now_ms, std::string* out, uint64_t* keys, SkippedKeys* skipped,
                    std::string* error, uint64_t chunks = ~uint64_t{0});

struct LoadStats {
  uint64_t loaded = 0;
  uint64_t expired = 0;
  uint64_t bytes = 0;
  int repl_stream_db = -1;   // the repl-stream-db aux field, when the file has one
  std::string repl_id;       // the repl-id aux field (empty: none)
  int64_t repl_offset = -1;  // the repl-offset aux field (-1: none)
};

// Loads an RDB file (or an AOF base in RDB format, aof_base: expired keys are kept, as Redis
// does) into the keyspace, on the startup thread, taking the world lock in batches of keys.
// false with *error naming the file, the byte offset and the reason.
bool LoadRdbFile(engine::Engine& e, const std::string& path, bool aof_base, LoadStats* stats,
                 std::string* error);
// The same over bytes already in memory (the fuzz target and DEBUG RELOAD use it).
bool LoadRdbBytes(engine::Engine& e, std::string_view data, bool aof_base, LoadStats* stats,
                  std::string* error);

// The id of the record a DUMP payload holds, verified and stripped: false when the footer's
// version is newer than ours or the CRC64 does not match.
bool VerifyDumpPayload(std::string_view payload, std::string_view* body);
// A DUMP payload: the value's record, the 2-byte RDB version, the CRC64.
std::string MakeDumpPayload(std::string_view record);

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_RDB_FILE_H_
