// What the engine asks of the persistence subsystem (host/persist implements it; the engine does
// not link it). Installed once before serving (Engine::set_persist) and never changed.
//
// Threads: Info and Cron run on any worker; BeforeShardWrite on whichever thread holds the shard
// exclusively; AfterWrite on the command's worker, under the command's locks.
#ifndef VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_
#define VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_

#include <cstdint>
#include <string>

struct vsl_ctx;

namespace vessel::engine {

class Database;
struct Shard;

class PersistHooks {
 public:
  virtual ~PersistHooks() = default;
  // The body of INFO persistence.
  virtual void Info(std::string* out) = 0;
  // Periodic work (save rules, AOF fsync and automatic rewrite), from worker 0's cron.
  virtual void Cron(int64_t now_ms) = 0;
  // A background snapshot has not yet captured this shard: capture it before it changes. Called
  // with the shard held exclusively (or the whole keyspace held), only while
  // Shard::snapshot_pending is set.
  virtual void BeforeShardWrite(Database& db, uint32_t shard) = 0;
  // The whole keyspace is about to change under the world lock (FLUSHALL, SWAPDB, ...): a running
  // snapshot captures what it has not yet.
  virtual void BeforeWorldWrite() = 0;
  // After FLUSHALL (the world held): Redis 7.0 aborts a running snapshot and, with save rules,
  // writes an empty dump at once.
  virtual void AfterFlushAll() = 0;
  // A command ran and changed keys (ctx->dirty > 0): the append-only file records it (or what it
  // chose with vsl_api.propagate). Runs under the command's locks.
  virtual void AfterWrite(vsl_ctx* ctx) = 0;
  // SHUTDOWN and SIGTERM: `save` is 1 for SAVE, 0 for NOSAVE, -1 for the default (save when save
  // rules exist). false with *error when the final save failed (the server keeps running unless
  // forced).
  virtual bool Shutdown(int save, bool force, std::string* error) = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_PERSIST_HOOKS_H_
