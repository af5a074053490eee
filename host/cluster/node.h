// A Redis Cluster node: the cluster state (myself, the node table, epochs, slot owners, failure
// reports), the cluster bus thread that keeps it (links, PING/PONG/MEET/FAIL/UPDATE, the cron,
// failure detection), nodes.conf, and the redirections the engine asks for (ClusterHooks).
//
// Locking rule: `mu_` guards the whole cluster state. The bus thread holds it while it handles
// packets and runs the cron; CLUSTER commands (admin, rare) take it on their worker. Workers
// routing an ordinary command never take it: after every change the holder of `mu_` publishes an
// immutable Snapshot (slot -> owner index and address, my id, cluster ok/fail) through an atomic
// shared_ptr and bumps a version; each worker keeps the snapshot it last loaded and reloads it
// when the version moved, so Route reads the snapshot current when the command starts. Sockets
// are touched only by the bus thread; a command that needs the bus (MEET) changes the state and
// wakes the thread. Replication (ReplicationControl) is called with mu_ held and never calls the
// node, so its own lock always comes after mu_.
#ifndef VESSEL_HOST_CLUSTER_NODE_H_
#define VESSEL_HOST_CLUSTER_NODE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "host/cluster/bus_message.h"
#include "host/cluster/nodes_conf.h"
#include "host/cluster/slots.h"
#include "host/engine/cluster_hooks.h"

namespace vessel::engine {
class Engine;
class ParamValues;
class Registry;
struct CommandCtx;
}  // namespace vessel::engine

namespace vessel::cluster {

// What routing needs, immutable once published.
struct Snapshot {
  std::string my_id;
  bool ok = false;
  int16_t me = -1;                      // my index in endpoints
  int16_t my_master = -1;               // a replica's master's index in endpoints (-1: none)
  std::array<int16_t, kSlots> owner{};  // index into endpoints, -1: unassigned
  std::vector<std::string> endpoints;   // "ip:port" of each slot owner
  // Slot migration: the slots migrating from here or importing here, and the node (index into
  // endpoints) each goes to or comes from; `open` tests membership in either map cheaply.
  SlotBitmap open;
  std::map<int, int16_t> migrating, importing;
};

struct NodeInfo;

// What the node asks of replication (host/server.cc adapts host/repl): following a master, taking
// over as a master, and the figures of an election. Thread safe; never calls back into the node,
// so the node calls it with its mutex held.
class ReplicationControl {
 public:
  virtual ~ReplicationControl() = default;
  // REPLICAOF ip port, unless that is the master already.
  virtual void Follow(const std::string& ip, int port) = 0;
  // REPLICAOF NO ONE.
  virtual void Promote() = 0;
  // master_repl_offset (of a replica: what it has applied of its master's stream).
  virtual uint64_t Offset() = 0;
  // How old a replica's data may be: since its master last sent anything, or since the link went
  // down.
  virtual int64_t MasterSilenceMs(int64_t now_ms) = 0;
  // Writes held for a manual failover of this master (and no keepalive moving the offset).
  virtual void PauseWrites(bool on) = 0;
};

// A bus connection, owned by the bus thread (node->link for the one we opened, node->inbound_link
// for the one a node opened to us once it spoke on it).
struct Link {
  int fd = -1;
  bool inbound = false;
  bool connecting = false;
  bool dead = false;
  NodeInfo* node = nullptr;  // the peer (of an inbound link: once the peer spoke on it)
  int64_t ctime = 0;
  std::string in;
  std::string out;
  size_t out_off = 0;
};

// One node of the table (clusterNode).
struct NodeInfo {
  std::string id;
  uint16_t flags = 0;
  std::string ip;
  int port = 0;
  int cport = 0;
  std::string hostname;
  std::string master;  // the master's id for a replica
  uint64_t config_epoch = 0;
  uint64_t repl_offset = 0;   // as the node last announced it
  int64_t ctime = 0;          // ms: creation (handshake timeout)
  int64_t ping_sent = 0;      // ms, 0: no ping pending
  int64_t pong_received = 0;  // ms
  int64_t data_received = 0;  // ms
  int64_t fail_time = 0;      // ms
  int64_t voted_time = 0;     // ms: of a master, when I last voted for one of its replicas
  int64_t orphaned_time = 0;  // ms: of a master, since when it has no working replica
  SlotBitmap slots;
  int numslots = 0;
  std::map<std::string, int64_t> fail_reports;  // reporter id -> ms of the report
  Link* link = nullptr;                         // the outbound link
  Link* inbound_link = nullptr;                 // the link the node opened to us, once it spoke
};

struct NodeOptions {
  std::string dir;          // absolute: nodes.conf is resolved against it
  std::string config_file;  // cluster-config-file
  std::string bind = "127.0.0.1";
  int port = 0;   // client port
  int cport = 0;  // bus port (0: port + 10000)
  int64_t node_timeout_ms = 15000;
  std::string announce_ip;
  std::string announce_hostname;
  int announce_port = 0;
  int announce_bus_port = 0;
  bool require_full_coverage = true;
  int replica_validity_factor = 10;
  int64_t ping_replica_period_ms = 10000;
  bool replica_no_failover = false;
  bool allow_replica_migration = true;
  int64_t migration_barrier = 1;
  int64_t link_sendbuf_limit = 0;  // cluster-link-sendbuf-limit (bytes, 0: none)
  // cluster-preferred-endpoint-type: what MOVED, ASK, CLUSTER SLOTS and SHARDS name a node by.
  enum class Endpoint { kIp, kHostname, kUnknown } endpoint_type = Endpoint::kIp;
  // When set, these parameters are read from here on every cron (CONFIG SET changes them while
  // serving); the fields above are their initial values.
  const engine::ParamValues* params = nullptr;
  // Replication of this process (null: a node that never replicates, as in unit tests).
  std::unique_ptr<ReplicationControl> repl;
  // Delivers a message published on another node (PUBLISH, PUBLISHSHARD packets) to this node's
  // subscribers; called on the bus thread, must not block (host/server.cc posts it to a worker).
  std::function<void(const std::string& channel, const std::string& message, bool shard)> deliver;
  // The engine whose keyspace routing asks about (an open slot's keys); null in unit tests.
  engine::Engine* engine = nullptr;
};

class Node : public engine::ClusterHooks {
 public:
  explicit Node(NodeOptions options);
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Loads (or creates) nodes.conf, binds the bus port and starts the bus thread; false with
  // *error otherwise.
  bool Start(std::string* error);
  void Stop() override;

  bool Route(engine::Session* session, const engine::CommandSpec* cmd, const std::string_view* argv,
             int argc, engine::RoutedKeys* keys, std::string* refusal) override;
  void Info(std::string*) override {}
  uint64_t Connections() const override { return connections_.load(std::memory_order_relaxed); }
  uint64_t LinksMemory() const override { return links_memory_.load(std::memory_order_relaxed); }
  void Publish(std::string_view channel, std::string_view message, bool shard) override;

  std::shared_ptr<const Snapshot> snapshot() const { return snapshot_.load(); }
  // The current snapshot as this thread last loaded it (valid until this thread's next call).
  const Snapshot* Current() const;
  const Snapshot* Reload(uint64_t version) const;  // Current's slow path

  // The CLUSTER family, ASKING, READONLY and READWRITE (registered whether or not cluster mode is
  // on: outside it CLUSTER answers Redis's "cluster support disabled").
  static void RegisterCommands(engine::Registry& r);
  // The CLUSTER subcommand in ctx (cluster_commands.cc), under mu_.
  void Command(engine::CommandCtx* ctx, const std::string& sub);

  // The command handlers' access to the state (they lock mu_ themselves).
  std::mutex& mu() { return mu_; }

  // verifyClusterConfigWithData, once the dataset is loaded: a master claims the unassigned slots
  // it holds keys of (db 0's per-slot counts), and imports those another node owns.
  void VerifyWithData();

 private:
  friend struct Commands;
  friend struct Migration;

  NodeInfo* Lookup(std::string_view id);
  NodeInfo* AddNode(std::string id, uint16_t flags);
  void DelNode(NodeInfo* n);
  void RenameNode(NodeInfo* n, const std::string& id);
  bool StartHandshake(const std::string& ip, int port, int cport);
  void SetSlot(int slot, NodeInfo* n);
  void ClearSlot(int slot);
  void UpdateSlotsConfigWith(NodeInfo* sender, uint64_t epoch, const SlotBitmap& slots);
  static void DeleteKeysInSlots(engine::Engine* e, std::vector<uint16_t> slots);
  void HandleEpochCollision(NodeInfo* sender);
  bool BumpEpochWithoutConsensus();
  void MarkFailingIfNeeded(NodeInfo* n);
  void ClearFailureIfNeeded(NodeInfo* n);
  int FailureReports(NodeInfo* n);
  void UpdateState();
  int Size() const;
  void Reset(bool hard);

  // Replicas and failover (failover.cc), Redis's clusterSetMaster, elections and manual failover.
  NodeInfo* MasterOf(const NodeInfo* n) const;
  void SetMaster(NodeInfo* master);
  void SetAsMaster(NodeInfo* n);
  void FollowMaster();
  void SendFailoverAuthIfNeeded(NodeInfo* requester, const BusMessage& request);
  void HandleReplicaFailover();
  void ReplaceMyMaster();
  int ReplicaRank();
  void LogCantFailover(int reason);
  int WorkingReplicas(const NodeInfo* master) const;
  void HandleReplicaMigration();
  void HandleManualFailover();
  void ManualFailoverCheckTimeout();
  void ResetManualFailover();
  void StartManualFailover(NodeInfo* replica);  // MFSTART received from a replica of mine
  void RequestFailoverAuth();
  void BroadcastPong(bool local_replicas_only);
  uint64_t MyOffset();

  // Bus.
  void Loop();
  // Sends what Publish queued (bus thread, under mu_).
  void SendQueuedPublishes();
  void Cron();
  // clusterCron's first steps for a link: the send buffer shrinks when mostly unused, and the
  // link is freed when it still holds more than cluster-link-sendbuf-limit.
  void CheckSendBuffer(Link* l);
  void Accept();
  void Connect(NodeInfo* n);
  void ReadLink(Link* l);
  void WriteLink(Link* l);
  void FreeLink(Link* l);
  void Process(Link* l, const BusMessage& m);
  void ProcessGossip(const BusMessage& m, NodeInfo* sender);
  BusHeader Header() const;
  void Send(Link* l, MessageType type, std::string packet);
  void SendPing(Link* l, MessageType type);
  void BroadcastFail(NodeInfo* failing);
  void Wake();

  // State -> snapshot and nodes.conf.
  void Changed(bool save = true) {
    changed_ = true;
    save_ |= save;
  }
  void Flush();
  void Publish();
  // nodes.conf: Save writes the current state now (under mu_); Flush leaves the text to the bus
  // thread, which writes it after letting mu_ go (WritePendingConf), so that no worker's CLUSTER
  // command waits for an fsync of the bus thread's. conf_mu_ orders the writers.
  bool Save(std::string* error);
  std::string ConfText() const;
  // Writes `text`, the state numbered `seq`, unless a later one was written already.
  bool WriteConf(const std::string& text, uint64_t seq, std::string* error);
  void WritePendingConf();
  bool Load(std::string* error);
  NodeLine LineOf(const NodeInfo& n) const;
  std::string NodesText() const;
  // The node's address as cluster-preferred-endpoint-type names it (getPreferredEndpoint): the
  // parameter as set now (the snapshot's redirections follow it from the next cron).
  NodeOptions::Endpoint EndpointTypeNow() const;
  static std::string PreferredEndpoint(const NodeInfo& n, NodeOptions::Endpoint type);
  // A replica CLUSTER SLOTS lists: not failing, and it has data (isReplicaAvailable).
  bool ReplicaAvailable(const NodeInfo& n);
  int64_t Now() const;
  std::string RandomId();

  NodeOptions opt_;
  std::mutex mu_;
  std::atomic<std::shared_ptr<const Snapshot>> snapshot_;
  std::atomic<uint64_t> snapshot_version_{0};  // changes after each store to snapshot_
  std::map<std::string, std::unique_ptr<NodeInfo>> nodes_;
  NodeInfo* myself_ = nullptr;
  std::array<NodeInfo*, kSlots> owner_{};
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  bool ok_ = false;
  int size_ = 0;
  int64_t first_update_ms_ = 0;    // the first UpdateState (Redis's writable delay)
  int64_t among_minority_ms_ = 0;  // when this node last saw most masters unreachable
  std::array<uint64_t, kMessageTypeCount> sent_{}, received_{};
  uint64_t links_buffer_limit_exceeded_ = 0;  // links freed over cluster-link-sendbuf-limit
  // What INFO prints, counted by the bus cron (relaxed: figures, read from any worker).
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> links_memory_{0};
  std::vector<std::unique_ptr<Link>> links_;
  std::map<std::string, int64_t> blacklist_;  // FORGET: id -> ms until it may come back
  // The election of this replica (failover.cc): when it may ask for votes, whether it did, the
  // votes counted, its rank, the epoch it asked in, and the last reason logged for not asking.
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  int cant_failover_reason_ = 0;
  int64_t last_cant_failover_log_ms_ = 0;
  // A manual failover (CLUSTER FAILOVER, MFSTART): its deadline (0: none), the replica taking
  // over (on its master), the master's offset once paused (-1: not known yet, on the replica),
  // and whether the election may start.
  int64_t mf_end_ = 0;
  std::string mf_replica_;
  int64_t mf_master_offset_ = -1;
  bool mf_can_start_ = false;
  // The address REPLICAOF was last given (a replica follows its master's current address).
  std::string following_;
  bool changed_ = false;
  bool save_ = false;
  std::string pending_conf_;       // nodes.conf text to write (Flush), under mu_
  uint64_t pending_conf_seq_ = 0;  // its number, under mu_
  uint64_t conf_seq_ = 0;          // the last number given, under mu_
  std::mutex conf_mu_;             // WriteConf; taken after mu_ or alone, never before it
  uint64_t written_conf_seq_ = 0;  // under conf_mu_
  int64_t iteration_ = 0;
  int64_t next_cron_ms_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  // Messages published here for the other nodes (Publish, on workers), until the bus thread sends
  // them. publish_mu_ guards only this queue and is never held with mu_.
  struct Published {
    std::string channel, message;
    bool shard = false;
  };
  std::mutex publish_mu_;
  std::vector<Published> publish_queue_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  uint64_t rng_;

  // ---- slot migration (migration.cc) ----
  // CLUSTER SETSLOT's states (Redis's migrating_slots_to / importing_slots_from), under mu_.
  std::array<NodeInfo*, kSlots> migrating_to_{};
  std::array<NodeInfo*, kSlots> importing_from_{};
  // Forgets the states that name n (a node deleted), or all of them (clusterCloseAllSlots).
  void CloseSlotsOf(const NodeInfo* n);
  void CloseAllSlots();
  // SETSLOT NODE closed an importing slot: the bus thread sends a PONG to every node at once
  // (clusterBroadcastPong), so the new owner is known before the next ping.
  bool broadcast_pong_ = false;
  // The states of myself as nodes.conf and CLUSTER NODES show them, and back from a loaded line.
  void AddMoves(NodeLine* line) const;
  void LoadMoves(const NodeLine& line);
  // Route past its common case (keys of one slot served here, nothing open, the cluster up):
  // EXEC, shard channels, redirections, refusals.
  bool RouteSlowly(const Snapshot& current, engine::Session* session,
                   const engine::CommandSpec* cmd, const std::string_view* argv, int argc,
                   engine::RoutedKeys* keys, std::string* refusal);
  // Route's answer for a slot open here (migrating or importing): nullopt when the usual
  // MOVED-or-serve rule applies, "" to serve, otherwise the error line (ASK, TRYAGAIN).
  std::optional<std::string> RedirectOpenSlot(const Snapshot& snap, engine::Session* session,
                                              const engine::CommandSpec* cmd,
                                              const std::string_view* argv, int argc, int slot,
                                              bool shard_channels);
};

// CLUSTER SETSLOT (migration.cc) and MIGRATE (migrate_command.cc), registered by
// Node::RegisterCommands.
void ClusterSetSlot(engine::CommandCtx* ctx);
bool ClusterSetSlotNeedsWorld(const std::string_view* argv, int argc);
void RegisterMigrateCommand(engine::Registry& r);
// The server stops: MIGRATEs in flight end their I/O at once and wake no client.
void StopMigrations();

// The cluster-preferred-endpoint-type word ("ip", "hostname", "unknown-endpoint").
NodeOptions::Endpoint EndpointType(std::string_view word);

// Creates the node when cluster-enabled is yes (nullptr and no error otherwise); `port` is the
// bound client port. Reads the cluster parameters and the dir from the engine.
std::unique_ptr<Node> StartNode(engine::Engine* engine, int port,
                                std::unique_ptr<ReplicationControl> repl,
                                decltype(NodeOptions::deliver) deliver, std::string* error);

}  // namespace vessel::cluster

#endif  // VESSEL_HOST_CLUSTER_NODE_H_
