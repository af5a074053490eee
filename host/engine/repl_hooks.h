// What the engine asks of the replication subsystem (host/repl implements it; the engine does not
// link it). Installed once before serving (Engine::set_repl) and never changed; null when absent
// (unit tests), which behaves as a master without replicas.
//
// Threads: every method may run on any worker (or the replication thread) and is thread safe;
// those taking a Session run on that session's worker.
#ifndef VESSEL_HOST_ENGINE_REPL_HOOKS_H_
#define VESSEL_HOST_ENGINE_REPL_HOOKS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace vessel::engine {

class Session;
struct CommandCtx;

class ReplicationHooks {
 public:
  virtual ~ReplicationHooks() = default;
  // Whether the replication stream takes records now: this server is a master with a backlog.
  // One relaxed load.
  virtual bool Recording() const = 0;
  // Appends records (RESP commands) of database db (-1: none) to the replication stream; end_db
  // is the database they leave the stream in (-2: db). Called by persistence in the stream's
  // order (see host/repl/feed.h for the ordering rule).
  virtual void Feed(int db, std::string_view records, int end_db) = 0;
  // Whether this server replicates from a master (REPLICAOF host port).
  virtual bool IsReplica() const = 0;
  // The refusal of a command from a normal client (not the master link) before it runs: Redis's
  // -READONLY on a read-only replica, -NOREPLICAS under min-replicas-to-write, -MASTERDOWN with
  // replica-serve-stale-data no; "" to run it. `write`: the command (or EXEC's queue) writes;
  // `stale_ok`: the command has Redis's stale flag.
  virtual std::string Refusal(bool write, bool stale_ok) = 0;
  // The body of INFO replication, and INFO stats' sync_full/sync_partial_ok/sync_partial_err.
  virtual void Info(std::string* out) = 0;
  virtual void InfoStats(std::string* out) = 0;
  // INFO memory's replication figures: the backlog's allocation, and the stream bytes queued for
  // replicas and not yet handed to their connections.
  virtual void Memory(int64_t* backlog, int64_t* queued) = 0;
  // ROLE and WAIT (the handlers reply).
  virtual void Role(CommandCtx* ctx) = 0;
  virtual void Wait(CommandCtx* ctx) = 0;
  // A replica's (or the master link's) session is going away, on its worker.
  virtual void SessionClosed(Session* s) = 0;
  // Periodic work, from worker 0's cron.
  virtual void Cron(int64_t now_ms) = 0;
  // A shutdown's questions (Redis's isReadyToShutdown): whether every replica has acknowledged
  // the whole stream, logging the ones that have not when `log` (as finishShutdown does); and a
  // REPLCONF GETACK to every replica, so that their answers come before their next second.
  virtual bool ReplicasInSync(bool log) = 0;
  virtual void RequestAcks() = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_REPL_HOOKS_H_
