// What the engine asks of the persistence subsystem (host/persist implements it; the engine does
// not link it). Installed once before serving (Engine::set_persist) and never changed.
//
// Threads: Info and Cron run on any worker; BeforeShardWrite on whichever thread holds the shard
// exclusively; AfterWrite on the command's worker, under the command's locks.
#ifndef VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_
#define VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_

#include <cstdint>
#include <string>
#include <string_view>

struct vsl_type;

namespace vessel::engine {

struct CommandCtx;
class Database;
struct Shard;

class PersistHooks {
 public:
  virtual ~PersistHooks() = default;
  // The body of INFO persistence.
  virtual void Info(std::string* out) = 0;
  // Periodic work (save rules, AOF fsync and automatic rewrite), from worker 0's cron.
  virtual void Cron(int64_t now_ms) = 0;
  // A background snapshot has not yet captured some of `chunks` (EntryTable::ChunkBit) of this
  // shard: capture them before they change. Called with the shard held exclusively (or the whole
  // keyspace held), only while Shard::snapshot_pending has one of them.
  virtual void BeforeShardWrite(Database& db, uint32_t shard, uint64_t chunks) = 0;
  // The whole keyspace is about to change under the world lock (FLUSHALL, SWAPDB, ...): a running
  // snapshot captures what it has not yet.
  virtual void BeforeWorldWrite() = 0;
  // After FLUSHALL (the world held): Redis 7.0 aborts a running snapshot and, with save rules,
  // writes an empty dump at once.
  virtual void AfterFlushAll() = 0;
  // A command ran and changed keys (ctx->dirty > 0): the append-only file records it (or what it
  // chose with vsl_api.propagate). Runs under the command's locks.
  virtual void AfterWrite(CommandCtx* ctx) = 0;
  // SHUTDOWN and SIGTERM: `save` is 1 for SAVE, 0 for NOSAVE, -1 for the default (save when save
  // rules exist). false with *error when the final save failed: the server must keep running
  // (nothing was closed), unless `force`, which logs the failure and returns true.
  virtual bool Shutdown(int save, bool force, std::string* error) = 0;

  // DUMP: Redis's payload of a value (its RDB record, the RDB version as 2 bytes little endian,
  // CRC64) in *out as of now_ms; false with *error (the reply's error line). Under the key's lock.
  virtual bool DumpValue(const vsl_type* t, const void* value, int64_t now_ms, std::string* out,
                         std::string* error) = 0;
  // RESTORE: verifies and decodes a payload into a value not yet in the keyspace; null with
  // *error the reply's error line (Redis's wording).
  virtual void* DecodePayload(std::string_view payload, std::string* error) = 0;
  // Creates `key` (absent) in ctx's database from a decoded value, under ctx's locks; the value is
  // consumed either way. false with *error.
  virtual bool BuildDecoded(CommandCtx* ctx, std::string_view key, void* decoded,
                            std::string* error) = 0;
  virtual void FreeDecoded(void* decoded) = 0;
  // Active expiry or eviction removed a key (under its shard's lock): the append-only file records
  // a DEL, as Redis propagates it.
  virtual void KeyDeleted(int db, std::string_view key) = 0;
  // Whether writes recorded in the append-only file are not yet written (or synced, with
  // `always`): replies then wait for MakeDurable. Lock free; false without an append-only file.
  virtual bool DurabilityPending() = 0;
  // Makes every record appended so far durable as appendfsync asks (one write and fsync for all
  // of them). Any worker, holding no lock.
  virtual void MakeDurable() = 0;
  // EXEC runs its queued commands between these (on one thread, with every lock held): their
  // records form one MULTI/EXEC group in the append-only file.
  virtual void BeginExec() = 0;
  virtual void EndExec() = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_
