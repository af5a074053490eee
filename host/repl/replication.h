// Replication with Redis 7.0's protocol, both ways: this server as a master (SYNC, PSYNC with
// psync2 semantics, REPLCONF, the backlog, WAIT, min-replicas-to-write) to real redis-server
// replicas or Vessel ones, and as a replica (REPLICAOF, the handshake, the RDB, the stream applied
// as the master's client) of redis-server or of Vessel.
//
// THE ORDERING RULE. The replication stream is one totally ordered byte sequence with one offset
// (master_repl_offset: the offset of its last byte; the first byte is offset 1), produced from
// the same recording as the append-only file (host/persist/persistence_aof.cc):
//  - A command's effects are recorded (Persistence::AfterWrite, KeyDeleted for active expiry and
//    eviction) while the command still holds its key locks, and appended to BOTH sinks, the AOF
//    and this stream, under one mutex (Persistence::Emit). Two commands that touch a common key
//    are serialized by that key's lock, so they reach the stream in the order they ran; commands
//    on disjoint keys commute, so any interleaving of them is a valid order.
//  - What is recorded is the same for both sinks: MULTI/EXEC and scripts as one contiguous
//    MULTI ... EXEC group, SELECT when the database changes (each sink tracks its own current
//    database), relative expiries as PEXPIREAT / SET ... PXAT, SPOP as SREM, XREADGROUP as
//    XCLAIM + XGROUP SETID (CommandCtx::propagated), expiry and eviction as DEL.
//  - The stream is recorded whether or not appendonly is on, as soon as a backlog exists (the
//    first replica creates it, repl-backlog-ttl frees it), and only on a master: a replica's
//    stream is its master's, byte for byte (what it applies is appended as it arrives, at
//    MULTI/EXEC boundaries), so its own replicas and its offset follow the master's exactly.
//  - A full synchronization's point in time is taken with the whole keyspace held (the snapshot's
//    Begin, snapshot.h): no command is between its locks and its record then, so the RDB holds
//    exactly the effects of the stream up to the offset sent in +FULLRESYNC. A SELECT is forced
//    at that point (the replica's database is unknown).
//  - The master's keepalive PING is appended under the stream's own lock; it is not a write.
//
// THREADS. The stream (mu_) is appended to from any worker under the emitter's locks, and never
// waits for a replica: each replica's bytes are buffered here and handed to its connection on
// its own worker (a posted task), which writes them; a replica whose buffer passes
// client-output-buffer-limit replica is disconnected. The replica side runs on its own thread
// (blocking socket I/O, repl-timeout), applying the master's commands through a session of the
// engine's external slot; it never runs on a worker's event loop. mu_ is taken before the
// engine's own locks (the pause's, the session registry's), never after them.
//
// FAILOVER (failover.cc) is Redis's coordinated failover: writes pause (Engine::SetWritePause),
// the master waits for a replica to acknowledge its whole stream, becomes that replica's replica,
// and its link's PSYNC carries FAILOVER, which promotes the target before it answers +CONTINUE.
#ifndef VESSEL_HOST_REPL_REPLICATION_H_
#define VESSEL_HOST_REPL_REPLICATION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/engine/engine.h"
#include "host/persist/persistence.h"
#include "host/repl/backlog.h"

namespace vessel::repl {

class RdbStream;

class Replication : public engine::ReplicationHooks {
 public:
  Replication(engine::Engine* e, persist::Persistence* p);
  ~Replication() override;
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // SYNC PSYNC REPLCONF REPLICAOF SLAVEOF FAILOVER (ROLE and WAIT are the engine's, calling
  // back here).
  static void RegisterCommands(engine::Registry& r);
  static Replication& Of(engine::CommandCtx* ctx) {
    return *static_cast<Replication*>(ctx->engine->repl());
  }
  // Applies the `replicaof` setting (config file or --replicaof "host port"); once serving.
  bool Start(std::string* error);
  // The replication history of the RDB loaded at startup (its repl-id and repl-offset), as Redis
  // 7.0 resumes it: a replica continues its master's history from there (a partial
  // resynchronization when the master still has it); a master keeps it as replid2, so that its
  // replicas continue with a partial resynchronization at that offset.
  void ResumeHistory(bool replica);
  // What every saved RDB records of replication (Persistence::SetSaveInfo).
  void SaveInfo(std::vector<std::pair<std::string, std::string>>* aux);
  // Stops the replica thread (before the workers stop).
  void Stop();

  // ---- ReplicationHooks ----
  bool Recording() const override { return recording_.load(std::memory_order_relaxed); }
  void Feed(int db, std::string_view records, int end_db) override;
  bool IsReplica() const override { return is_replica_.load(std::memory_order_relaxed); }
  std::string Refusal(bool write, bool stale_ok) override;
  void Info(std::string* out) override;
  void InfoStats(std::string* out) override;
  void Memory(int64_t* backlog, int64_t* queued) override;
  void Role(engine::CommandCtx* ctx) override;
  void Wait(engine::CommandCtx* ctx) override;
  void SessionClosed(engine::Session* s) override;
  void Cron(int64_t now_ms) override;
  bool ReplicasInSync(bool log) override;
  void RequestAcks() override;

  // ---- commands (master.cc, replica.cc) ----
  void Psync(engine::CommandCtx* ctx, bool sync);
  void Replconf(engine::CommandCtx* ctx);
  void ReplicaOf(engine::CommandCtx* ctx);
  void Failover(engine::CommandCtx* ctx);

  // ---- for a cluster node (host/server.cc adapts these to host/cluster's ReplicationControl);
  // any thread, never calling back into the node ----
  // Follows host:port as REPLICAOF does, unless already following it.
  void Follow(const std::string& host, int port);
  // REPLICAOF NO ONE.
  void Promote();
  // master_repl_offset; of a replica, the offset of its master's stream it has applied.
  uint64_t Offset() const;
  // Of a replica: how long since the master last sent anything while the link is up, or since the
  // link went down (Redis's data age of a failover election).
  int64_t MasterSilenceMs(int64_t now_ms) const;
  // Holds writes for a cluster manual failover (Redis's PAUSE_DURING_FAILOVER): no keepalive PING
  // moves the offset meanwhile, so the replica can catch up with it exactly.
  void PauseForFailover(bool on);

 private:
  // The RDB of one snapshot, sent to every replica whose full synchronization it serves: a file
  // (already unlinked, read at each replica's own position) or, diskless, a stream that the
  // snapshot thread writes as the replicas read it ($EOF:<mark> ... <mark>).
  struct Payload {
    int fd = -1;
    uint64_t size = 0;
    std::shared_ptr<RdbStream> stream;
    std::string mark;
    ~Payload();
  };
  // A replica attached to this server: its connection is a session on `worker`.
  struct Replica {
    uint64_t session_id = 0;
    int worker = 0;
    std::string ip;  // REPLCONF ip-address, else the peer's address
    int port = 0;    // REPLCONF listening-port
    enum class State { kWaitBgsave, kSendBulk, kOnline } state = State::kWaitBgsave;
    // Redis's name of the state (INFO replication, the shutdown's log).
    const char* state_name() const {
      return state == State::kOnline     ? "online"
             : state == State::kSendBulk ? "send_bulk"
                                         : "wait_bgsave";
    }
    std::string pending;  // stream bytes not yet handed to the connection
    bool wake_posted = false;
    bool dropped = false;
    uint64_t ack_offset = 0;
    int64_t ack_ms = 0;
    bool pre_psync = false;  // came with SYNC: never acknowledges, so never timed out (Redis)
    // +FULLRESYNC was written (the PSYNC re-run); until then a ready payload waits here.
    bool announced = false;
    // The full synchronization's RDB, shared with the replicas whose synchronization started
    // with this one (null until the file is written; a diskless stream from the start), and
    // whether the snapshot failed.
    std::shared_ptr<Payload> payload;
    bool snapshot_failed = false;
    // A diskless payload's replica reads its stream only after it acknowledges: until it has
    // loaded the RDB it looks for the mark at the end of what it reads (Redis's
    // repl_start_cmd_stream_on_ack).
    bool stream_on_ack = false;
    uint64_t group = 0;  // the full synchronization snapshot that serves it (rdb_seq_)
    uint64_t sent = 0;   // of a file payload: the bytes handed to the connection
    size_t reader = 0;   // of a stream payload: this replica's reading position
  };
  // What REPLCONF told about a connection before its SYNC/PSYNC.
  struct Handshake {
    std::string ip;
    int port = 0;
    bool psync2 = false;
    bool eof = false;  // capa eof: takes a diskless payload
    int64_t since_ms = 0;
  };
  enum class LinkState { kNone, kConnect, kConnecting, kHandshake, kTransfer, kConnected };
  // FAILOVER (failover.cc), Redis's states: writes paused while a replica catches up
  // (kWaitForSync), then this server is a replica of the target and its link asks the target,
  // with PSYNC ... FAILOVER, to take over (kInProgress), until the target's answer.
  enum class FailoverState { kNone, kWaitForSync, kInProgress };

  // ---- the stream (master.cc), under mu_ ----
  void AppendLocked(std::string_view bytes);
  void CreateBacklogLocked();
  void NewReplIdLocked();
  // Moves the current replid to replid2 (valid up to the current offset) and takes a new one.
  void ShiftReplIdLocked();
  void PostDrainLocked(Replica& r);
  // On the replica's worker: hands its pending bytes to the connection.
  void Drain(uint64_t session_id, int worker);
  // On the replica's worker: its payload is ready (or its snapshot failed); send it.
  void StartBulk(uint64_t session_id, int worker);
  void SendBulk(uint64_t session_id, int worker);
  void DropReplicaLocked(Replica& r, const char* why);
  Replica* FindLocked(uint64_t session_id);
  int GoodReplicasLocked(int64_t now_ms) const;
  void WakeWaitersLocked();
  void DisconnectReplicasLocked();

  // ---- FAILOVER (failover.cc), under mu_ ----
  // Whether the failover goes on to its target now: the target (or, with FAILOVER alone, any
  // replica, which becomes the target) acknowledged the whole stream, or the timeout came with
  // FORCE. Aborts the failover at a timeout without FORCE.
  bool FailoverDueLocked(int64_t now_ms);
  // From the cron, without mu_: makes this server the target's replica when the failover is due.
  void FailoverCron(int64_t now_ms);
  // Back to a master when the failover was in progress; the pause ends.
  void AbortFailoverLocked(const char* why);
  void ClearFailoverLocked();
  Replica* FindReplicaLocked(std::string_view host, int port);
  // REPLICAOF host port: follows that master. Replicas stay connected (they continue from us, and
  // reconnect when our history takes the new master's id), as in Redis.
  void SetMasterLocked(std::string_view host, int port);
  // REPLICAOF NO ONE: a master with a new history id, the master's kept as replid2.
  void UnsetMasterLocked();

  // ---- the replica side (replica.cc) ----
  // Starts the snapshots of the queued full synchronizations, one for all those queued together
  // (takes the world lock, so that no event loop does). Diskless when every one of them takes
  // it and repl-diskless-sync is on, after repl-diskless-sync-delay for more replicas to come.
  void SyncThread();
  void LinkThread();
  // One connection to the master, from connect to loss; false when it failed.
  bool RunLink(const std::string& host, int port, uint64_t gen);
  bool LinkCurrent(uint64_t gen);
  void SetLinkState(LinkState s);
  // Runs one command as the master's client would (a session of the external slot).
  void RunAsMaster(std::initializer_list<std::string_view> argv);
  // Flushes the keyspace and loads the master's RDB; *stream_db: its repl-stream-db (0 without).
  bool FullSyncLoad(const std::string& path, int* stream_db, std::string* error);

  engine::Engine* e_;
  persist::Persistence* p_;
  const int p_read_only_, p_serve_stale_, p_min_write_, p_max_lag_;  // ParamValues indexes

  mutable std::mutex mu_;  // guards everything below that is not atomic
  std::atomic<bool> recording_{false};
  std::atomic<bool> is_replica_{false};
  std::string replid_, replid2_;
  int64_t second_offset_ = -1;
  uint64_t offset_ = 0;  // master_repl_offset
  std::unique_ptr<Backlog> backlog_;
  int stream_db_ = -1;  // the database the stream is in (-1: unknown, a SELECT comes first)
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::pair<uint64_t, Handshake>> handshakes_;  // by session id
  // Full synchronizations asked for (SYNC/PSYNC), whose snapshot the sync thread starts.
  struct SyncRequest {
    uint64_t session_id = 0;
    int worker = 0;
    std::string ip;
    int port = 0;
    bool pre_psync = false;  // SYNC: a replica that sends no REPLCONF ACK
    bool eof = false;        // REPLCONF capa eof
    int64_t since_ms = 0;    // wall clock of the request
    enum class State { kQueued, kStarted, kFailed } state = State::kQueued;
    std::string replid, error;  // kStarted: the +FULLRESYNC line's id and offset; kFailed: why
    uint64_t offset = 0;
  };
  std::vector<SyncRequest> sync_requests_;
  // Redis's attach to a running BGSAVE with a disk target (full_sync.cc, under mu_): a replica of
  // the running file snapshot that has been sent nothing yet hands the request a copy of its
  // stream since the snapshot's point in time, and the request shares that snapshot's file.
  // False when there is no such snapshot (the request waits for the next one).
  bool AttachLocked(SyncRequest& q);
  // The replica that a started request becomes, served by snapshot `group`.
  std::unique_ptr<Replica> NewReplica(const SyncRequest& q, uint64_t group) const;
  std::condition_variable sync_cv_;
  std::thread sync_thread_;
  std::vector<std::pair<uint64_t, int>> wait_waiters_;  // WAIT commands (session, worker)
  int64_t no_replicas_since_ms_ = 0;
  int64_t last_ping_ms_ = 0;
  int64_t last_newline_ms_ = 0;
  std::atomic<int> good_replicas_{0};  // online replicas within min-replicas-max-lag (the cron)
  uint64_t sync_full_ = 0, sync_partial_ok_ = 0, sync_partial_err_ = 0;
  uint64_t rdb_seq_ = 0;  // names the files of full synchronizations
  // The running full synchronization snapshot written to a file (0: none), with the id and
  // offset its replicas were told: a replica asking meanwhile attaches to it (AttachLocked).
  uint64_t disk_group_ = 0;
  std::string disk_group_replid_;
  uint64_t disk_group_offset_ = 0;

  // Replica side: the master (empty host: none), the link's state and figures.
  std::string master_host_;
  int master_port_ = 0;
  uint64_t link_gen_ = 0;  // changes with every REPLICAOF: the thread drops an older link
  LinkState link_state_ = LinkState::kNone;
  int64_t last_io_ms_ = 0, down_since_ms_ = 0;
  uint64_t transfer_size_ = 0, transfer_read_ = 0;
  int64_t transfer_last_io_ms_ = 0;
  uint64_t read_offset_ = 0;  // applied bytes plus those of an open MULTI not yet appended
  int master_db_ = 0;         // the link's database: when it dropped, or the RDB's repl-stream-db
  engine::Session* link_session_ = nullptr;  // the master link's session, while it exists
  // Whether the dataset is exactly the master's stream up to offset_ (a replica's saved RDB then
  // records replid_ and offset_): false from a full synchronization's load until its offset is
  // known, true again after it (or after a restart from an RDB that recorded its history).
  bool history_valid_ = false;
  // The link between running a command of the stream and appending it (offset_): a save whose
  // point in time falls there records no history. Only possible when the command takes the whole
  // keyspace itself (the link otherwise holds its worker slot over both steps).
  std::atomic<bool> link_applying_{false};

  // FAILOVER: its state, its target (empty host: any caught-up replica, until one is chosen), its
  // deadline (0: none) and FORCE.
  FailoverState failover_state_ = FailoverState::kNone;
  std::string failover_host_;
  int failover_port_ = 0;
  int64_t failover_end_ms_ = 0;
  bool failover_force_ = false;
  bool cluster_failover_pause_ = false;  // PauseForFailover
  std::atomic<int> link_fd_{-1};
  std::atomic<bool> stop_{false};
  std::condition_variable cv_;
  std::thread link_thread_;
};

}  // namespace vessel::repl

#endif  // VESSEL_HOST_REPL_REPLICATION_H_
