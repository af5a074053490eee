// A Redis Cluster node: the cluster state (myself, the node table, epochs, slot owners, failure
// reports), the cluster bus thread that keeps it (links, PING/PONG/MEET/FAIL/UPDATE, the cron,
// failure detection), nodes.conf, and the redirections the engine asks for (ClusterHooks).
//
// Locking rule: `mu_` guards the whole cluster state. The bus thread holds it while it handles
// packets and runs the cron; CLUSTER commands (admin, rare) take it on their worker. Workers
// routing an ordinary command never take it: after every change the holder of `mu_` publishes an
// immutable Snapshot (slot -> owner index and address, my id, cluster ok/fail) through an atomic
// shared_ptr and bumps a version; each worker keeps the snapshot it last loaded and reloads it
// when the version moved, so Redirect reads the snapshot current when the command starts. Sockets
// are touched only by the bus thread; a command that needs the bus (MEET) changes the state and
// wakes the thread.
#ifndef VESSEL_HOST_CLUSTER_NODE_H_
#define VESSEL_HOST_CLUSTER_NODE_H_

#include <array>
#include <atomic>
#include <cstdint>
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
  std::array<int16_t, kSlots> owner{};  // index into endpoints, -1: unassigned
  std::vector<std::string> endpoints;   // "ip:port" of each slot owner
  // Slot migration: the slots migrating from here or importing here, and the node (index into
  // endpoints) each goes to or comes from; `open` tests membership in either map cheaply.
  SlotBitmap open;
  std::map<int, int16_t> migrating, importing;
};

struct NodeInfo;

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
  // When set, cluster-node-timeout and cluster-require-full-coverage are read from here on every
  // cron (CONFIG SET changes them while serving); the fields above are their initial values.
  const engine::ParamValues* params = nullptr;
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

  std::string Redirect(engine::Session* session, const engine::CommandSpec* cmd,
                       const std::string_view* argv, int argc) override;
  void Info(std::string*) override {}

  std::shared_ptr<const Snapshot> snapshot() const { return snapshot_.load(); }
  // The current snapshot as this thread last loaded it (valid until this thread's next call).
  const Snapshot* Current() const;

  // The CLUSTER family, ASKING, READONLY and READWRITE (registered whether or not cluster mode is
  // on: outside it CLUSTER answers Redis's "cluster support disabled").
  static void RegisterCommands(engine::Registry& r);
  // The CLUSTER subcommand in ctx (cluster_commands.cc), under mu_.
  void Command(engine::CommandCtx* ctx, const std::string& sub);

  // The command handlers' access to the state (they lock mu_ themselves).
  std::mutex& mu() { return mu_; }

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
  void HandleEpochCollision(NodeInfo* sender);
  bool BumpEpochWithoutConsensus();
  void MarkFailingIfNeeded(NodeInfo* n);
  void ClearFailureIfNeeded(NodeInfo* n);
  int FailureReports(NodeInfo* n);
  void UpdateState();
  int Size() const;
  void Reset(bool hard);

  // Bus.
  void Loop();
  void Cron();
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
  bool Save(std::string* error);
  bool Load(std::string* error);
  NodeLine LineOf(const NodeInfo& n) const;
  std::string NodesText() const;
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
  std::vector<std::unique_ptr<Link>> links_;
  std::map<std::string, int64_t> blacklist_;  // FORGET: id -> ms until it may come back
  bool changed_ = false;
  bool save_ = false;
  int64_t iteration_ = 0;
  int64_t next_cron_ms_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
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
  void BroadcastPong();
  // The states of myself as nodes.conf and CLUSTER NODES show them, and back from a loaded line.
  void AddMoves(NodeLine* line) const;
  void LoadMoves(const NodeLine& line);
  // Redirect's answer for a slot open here (migrating or importing): nullopt when the usual
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

// Creates the node when cluster-enabled is yes (nullptr and no error otherwise); `port` is the
// bound client port. Reads the cluster parameters and the dir from the engine.
std::unique_ptr<Node> StartNode(engine::Engine* engine, int port, std::string* error);

}  // namespace vessel::cluster

#endif  // VESSEL_HOST_CLUSTER_NODE_H_
