// The cluster node: state, failure detection rules, nodes.conf, the snapshot and routing (node.h);
// the bus thread is in bus.cc.
// Redis 7.0's cluster.c is the specification of every rule here.
#include "host/cluster/node.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "host/engine/engine.h"
#include "host/engine/registry.h"
#include "host/engine/session.h"
#include "spdlog/spdlog.h"

namespace vessel::cluster {

namespace {

// Snapshot versions are unique in the process (a worker's cached version never matches a
// snapshot of another node object).
std::atomic<uint64_t> g_snapshot_versions{0};

constexpr int64_t kFailReportValidityMult = 2;  // Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT
constexpr int64_t kFailUndoTimeMult = 2;        // CLUSTER_FAIL_UNDO_TIME_MULT

}  // namespace

Node::Node(NodeOptions options) : opt_(std::move(options)) {
  std::random_device rd;
  rng_ = (uint64_t{rd()} << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  if (opt_.cport == 0) opt_.cport = opt_.port + 10000;
}

Node::~Node() { Stop(); }

int64_t Node::Now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Node::RandomId() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(kNodeNameLen, '0');
  for (char& c : id) {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    c = kHex[rng_ & 15];
  }
  return id;
}

// ---- the node table ----

NodeInfo* Node::Lookup(std::string_view id) {
  auto it = nodes_.find(std::string(id));
  return it == nodes_.end() ? nullptr : it->second.get();
}

NodeInfo* Node::AddNode(std::string id, uint16_t flags) {
  auto n = std::make_unique<NodeInfo>();
  n->id = id;
  n->flags = flags;
  n->ctime = Now();
  NodeInfo* p = n.get();
  nodes_[std::move(id)] = std::move(n);
  Changed();
  return p;
}

void Node::DelNode(NodeInfo* n) {
  for (int s = 0; s < kSlots; ++s)
    if (owner_[s] == n) ClearSlot(s);
  for (auto& [id, other] : nodes_) other->fail_reports.erase(n->id);
  CloseSlotsOf(n);
  if (n->link != nullptr) FreeLink(n->link);
  if (n->inbound_link != nullptr) FreeLink(n->inbound_link);
  nodes_.erase(n->id);
  Changed();
}

void Node::RenameNode(NodeInfo* n, const std::string& id) {
  auto it = nodes_.find(n->id);
  std::unique_ptr<NodeInfo> owned = std::move(it->second);
  nodes_.erase(it);
  owned->id = id;
  nodes_[id] = std::move(owned);
  Changed();
}

// clusterStartHandshake: a handshake node with a random id, met on the next cron.
bool Node::StartHandshake(const std::string& ip_in, int port, int cport) {
  in6_addr a6;
  in_addr a4;
  std::string ip = ip_in;
  if (inet_pton(AF_INET, ip.c_str(), &a4) == 1) {
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a4, buf, sizeof(buf));
    ip = buf;
  } else if (inet_pton(AF_INET6, ip.c_str(), &a6) == 1) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &a6, buf, sizeof(buf));
    ip = buf;
  } else {
    return false;
  }
  if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return false;
  for (auto& [id, n] : nodes_) {
    if ((n->flags & kNodeHandshake) && n->ip == ip && n->port == port && n->cport == cport)
      return true;  // already in progress
  }
  NodeInfo* n = AddNode(RandomId(), kNodeHandshake | kNodeMeet);
  n->ip = ip;
  n->port = port;
  n->cport = cport;
  Wake();
  return true;
}

void Node::SetSlot(int slot, NodeInfo* n) {
  if (owner_[slot] == n) return;
  if (owner_[slot] != nullptr) ClearSlot(slot);
  owner_[slot] = n;
  n->slots.Set(slot);
  ++n->numslots;
  Changed();
}

void Node::ClearSlot(int slot) {
  NodeInfo* n = owner_[slot];
  if (n == nullptr) return;
  n->slots.Clear(slot);
  --n->numslots;
  owner_[slot] = nullptr;
  Changed();
}

// clusterUpdateSlotsConfigWith: a claim with a greater config epoch wins a slot. A master left
// without slots (failed over), or a replica whose master was, follows the node that took them.
void Node::UpdateSlotsConfigWith(NodeInfo* sender, uint64_t epoch, const SlotBitmap& slots) {
  if (sender == myself_) return;
  NodeInfo* curmaster = (myself_->flags & kNodeMaster) ? myself_ : MasterOf(myself_);
  NodeInfo* newmaster = nullptr;
  int sender_slots = 0, migrated_our_slots = 0, mine_lost = 0;
  std::vector<uint16_t> dirty;  // slots lost that still hold keys here
  for (int s = 0; s < kSlots; ++s) {
    if (!slots.Test(s)) continue;
    ++sender_slots;
    if (owner_[s] == sender) continue;
    if (importing_from_[s] != nullptr) continue;  // an importing slot is closed by SETSLOT only
    if (owner_[s] == nullptr || owner_[s]->config_epoch < epoch) {
      if (owner_[s] == myself_) ++mine_lost;
      if (owner_[s] == myself_ && opt_.engine != nullptr &&
          opt_.engine->db(0).KeysInSlot(static_cast<uint32_t>(s)) != 0)
        dirty.push_back(static_cast<uint16_t>(s));
      if (owner_[s] != nullptr && owner_[s] == curmaster) {
        newmaster = sender;
        ++migrated_our_slots;
      }
      SetSlot(s, sender);
    }
  }
  if (mine_lost != 0)
    spdlog::warn("cluster: {} of my slots taken over by {} (config epoch {})", mine_lost,
                 sender->id, epoch);
  if (newmaster != nullptr && curmaster->numslots == 0 &&
      (opt_.allow_replica_migration || sender_slots == migrated_our_slots)) {
    spdlog::warn("Configuration change detected. Reconfiguring myself as a replica of {}",
                 sender->id);
    SetMaster(sender);
    return;
  }
  if (NodeInfo* m = MasterOf(myself_); m != nullptr) {
    // A sub-replica (my master became a replica itself) follows the grandmaster.
    NodeInfo* grand = MasterOf(m);
    if (grand != nullptr && grand != myself_) {
      spdlog::warn("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster {}",
                   grand->id);
      SetMaster(grand);
      return;
    }
  }
  // Still a master serving other slots: the keys of the slots it lost go (delKeysInSlot).
  if (!dirty.empty()) DeleteKeysInSlots(opt_.engine, std::move(dirty));
}

// On worker 0, one slot after another, each with its shard held exclusively; a shard a script
// holds is come back to once the scripts change. Deleted as Redis 7.0's delKeysInSlot deletes:
// without a keyspace event and without propagation.
void Node::DeleteKeysInSlots(engine::Engine* e, std::vector<uint16_t> slots) {
  e->PostToWorker(0, [e, slots = std::move(slots)]() mutable {
    engine::Database& db = e->db(0);
    while (!slots.empty()) {
      const uint32_t slot = slots.back();
      uint32_t first, last;
      db.ShardsOfSlot(slot, &first, &last);
      engine::LockSet locks;
      for (uint32_t i = first; i <= last; ++i) locks.Add(0, i, /*exclusive=*/true);
      const uint64_t epoch = e->script_epoch();
      if (!e->LockUnlessScript(&locks)) {
        e->WhenScriptsChange(epoch, 0, [e, slots = std::move(slots)]() mutable {
          DeleteKeysInSlots(e, std::move(slots));
        });
        return;
      }
      size_t deleted = 0;
      for (uint32_t i = first; i <= last; ++i) {
        engine::Shard& shard = db.shard(i);
        std::vector<engine::Entry*> doomed;
        shard.table.ForEach([&](const engine::Entry* entry) {
          if (KeySlot(entry->key()) == slot) doomed.push_back(const_cast<engine::Entry*>(entry));
        });
        for (engine::Entry* entry : doomed)
          e->Remove(db, shard, entry, engine::HashKey(entry->key()));
        deleted += doomed.size();
      }
      locks.Unlock();
      spdlog::info("cluster: deleted {} keys of slot {}, now served by another node", deleted,
                   slot);
      slots.pop_back();
    }
  });
}

// clusterHandleConfigEpochCollision: of two masters with one config epoch, the smaller id moves.
void Node::HandleEpochCollision(NodeInfo* sender) {
  if (sender->config_epoch != myself_->config_epoch || (sender->flags & kNodeSlave) ||
      (myself_->flags & kNodeSlave))
    return;
  if (sender->id <= myself_->id) return;
  ++current_epoch_;
  myself_->config_epoch = current_epoch_;
  Changed();
  spdlog::info("cluster: config epoch collision with {}, my config epoch is now {}", sender->id,
               myself_->config_epoch);
}

// clusterBumpConfigEpochWithoutConsensus.
bool Node::BumpEpochWithoutConsensus() {
  uint64_t max_epoch = current_epoch_;
  for (auto& [id, n] : nodes_) max_epoch = std::max(max_epoch, n->config_epoch);
  if (myself_->config_epoch == 0 || myself_->config_epoch != max_epoch) {
    ++current_epoch_;
    myself_->config_epoch = current_epoch_;
    Changed();
    return true;
  }
  return false;
}

int Node::FailureReports(NodeInfo* n) {
  const int64_t now = Now();
  const int64_t max_age = opt_.node_timeout_ms * kFailReportValidityMult;
  for (auto it = n->fail_reports.begin(); it != n->fail_reports.end();) {
    if (now - it->second > max_age) {
      it = n->fail_reports.erase(it);
    } else {
      ++it;
    }
  }
  return static_cast<int>(n->fail_reports.size());
}

int Node::Size() const {
  int size = 0;
  for (auto& [id, n] : nodes_)
    if ((n->flags & kNodeMaster) && n->numslots > 0) ++size;
  return size;
}

// markNodeAsFailingIfNeeded: PFAIL becomes FAIL once a majority of masters agree.
void Node::MarkFailingIfNeeded(NodeInfo* n) {
  const int needed = Size() / 2 + 1;
  if (!(n->flags & kNodePFail) || (n->flags & kNodeFail)) return;
  int failures = FailureReports(n);
  if (myself_->flags & kNodeMaster) ++failures;
  if (failures < needed) return;
  spdlog::info("cluster: marking node {} as failing (quorum reached)", n->id);
  n->flags = static_cast<uint16_t>((n->flags & ~kNodePFail) | kNodeFail);
  n->fail_time = Now();
  BroadcastFail(n);
  Changed();
}

// clearNodeFailureIfNeeded.
void Node::ClearFailureIfNeeded(NodeInfo* n) {
  if (!(n->flags & kNodeFail)) return;
  const int64_t now = Now();
  if ((n->flags & kNodeSlave) || n->numslots == 0 ||
      now - n->fail_time > opt_.node_timeout_ms * kFailUndoTimeMult) {
    spdlog::info("cluster: clear FAIL state for node {}", n->id);
    n->flags = static_cast<uint16_t>(n->flags & ~kNodeFail);
    Changed();
  }
}

// clusterUpdateState.
void Node::UpdateState() {
  bool ok = true;
  if (opt_.require_full_coverage) {
    for (int s = 0; s < kSlots && ok; ++s)
      if (owner_[s] == nullptr || (owner_[s]->flags & kNodeFail)) ok = false;
  }
  int size = 0, unreachable = 0;
  for (auto& [id, n] : nodes_) {
    if (!(n->flags & kNodeMaster) || n->numslots == 0) continue;
    ++size;
    if (n->flags & (kNodeFail | kNodePFail)) ++unreachable;
  }
  size_ = size;
  const int64_t now = Now();
  if (unreachable >= size / 2 + 1) {
    ok = false;
    among_minority_ms_ = now;
  }
  // As Redis: a master stays down for its first two seconds (its configuration may be stale), and
  // one back from the minority side waits node_timeout (0.5 s to 5 s) before serving again.
  if (first_update_ms_ == 0) first_update_ms_ = now;
  const bool master = (myself_->flags & kNodeMaster) != 0;
  if (master && !ok_ && now - first_update_ms_ < 2000) return;
  if (ok && !ok_ && master &&
      now - among_minority_ms_ < std::clamp<int64_t>(opt_.node_timeout_ms, 500, 5000))
    return;
  if (ok != ok_) {
    spdlog::info("cluster state changed: {}", ok ? "ok" : "fail");
    ok_ = ok;
    changed_ = true;
  }
}

void Node::Reset(bool hard) {
  // A replica becomes a master again (the CLUSTER RESET command empties its dataset).
  if (myself_->flags & kNodeSlave) {
    SetAsMaster(myself_);
    if (opt_.repl != nullptr) opt_.repl->Promote();
    following_.clear();
  }
  ResetManualFailover();
  CloseAllSlots();
  for (int s = 0; s < kSlots; ++s) ClearSlot(s);
  std::vector<NodeInfo*> others;
  for (auto& [id, n] : nodes_)
    if (n.get() != myself_) others.push_back(n.get());
  for (NodeInfo* n : others) DelNode(n);
  if (hard) {
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    RenameNode(myself_, RandomId());
  }
  Changed();
}

// ---- nodes.conf and the snapshot ----

NodeLine Node::LineOf(const NodeInfo& n) const {
  NodeLine l;
  l.id = n.id;
  l.ip = n.ip;
  l.port = n.port;
  l.cport = n.cport;
  l.hostname = n.hostname;
  l.flags = static_cast<uint16_t>(n.flags & ~(kNodeMeet | kNodeMigrateTo));
  l.master = n.master;
  l.ping_sent = n.ping_sent;
  l.pong_received = n.pong_received;
  l.config_epoch = n.config_epoch;
  if (n.flags & kNodeSlave) {  // a replica shows its master's epoch, as Redis
    auto m = nodes_.find(n.master);
    if (m != nodes_.end()) l.config_epoch = m->second->config_epoch;
  }
  l.connected = &n == myself_ || n.link != nullptr;
  if (&n == myself_) AddMoves(&l);
  for (int s = 0; s < kSlots; ++s) {
    if (!n.slots.Test(s)) continue;
    int e = s;
    while (e + 1 < kSlots && n.slots.Test(e + 1)) ++e;
    l.slots.push_back({s, e});
    s = e;
  }
  return l;
}

std::string Node::NodesText() const {
  std::string out;
  // Myself first, as Redis's dict order is arbitrary but tools only need every line.
  out += FormatNodeLine(LineOf(*myself_)) + "\n";
  for (auto& [id, n] : nodes_) {
    if (n.get() == myself_) continue;
    out += FormatNodeLine(LineOf(*n)) + "\n";
  }
  return out;
}

bool Node::Save(std::string* error) {
  pending_conf_.clear();  // older than this
  return WriteConf(ConfText(), ++conf_seq_, error);
}

std::string Node::ConfText() const {
  NodesConf conf;
  conf.nodes.push_back(LineOf(*myself_));
  for (auto& [id, n] : nodes_) {
    if (n.get() == myself_ || (n->flags & kNodeHandshake)) continue;
    conf.nodes.push_back(LineOf(*n));
  }
  conf.current_epoch = current_epoch_;
  conf.last_vote_epoch = last_vote_epoch_;
  return FormatNodesConf(conf);
}

bool Node::WriteConf(const std::string& text, uint64_t seq, std::string* error) {
  std::lock_guard l(conf_mu_);
  if (seq < written_conf_seq_) return true;  // a newer state is on disk already
  written_conf_seq_ = seq;
  const std::string path =
      opt_.config_file.starts_with("/") ? opt_.config_file : opt_.dir + "/" + opt_.config_file;
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr) ok = (std::fflush(f) == 0) && (fsync(fileno(f)) == 0) && ok;
  if (f != nullptr) ok = (std::fclose(f) == 0) && ok;
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    *error = std::strerror(errno);
    spdlog::warn("cluster: could not save {}: {}", path, *error);
  }
  return ok;
}

bool Node::Load(std::string* error) {
  const std::string path =
      opt_.config_file.starts_with("/") ? opt_.config_file : opt_.dir + "/" + opt_.config_file;
  std::ifstream in(path);
  if (!in) return true;  // a new node
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find_first_not_of(" \r\n\t") == std::string::npos) return true;
  std::string why;
  auto conf = ParseNodesConf(ss.str(), &why);
  if (!conf) {
    *error = "Unrecoverable error: corrupted cluster config file \"" + path + "\": " + why;
    return false;
  }
  nodes_.clear();
  owner_.fill(nullptr);
  for (const NodeLine& l : conf->nodes) {
    NodeInfo* n = AddNode(l.id, static_cast<uint16_t>(l.flags & ~kNodeHandshake));
    n->ip = l.ip;
    n->port = l.port;
    n->cport = l.cport;
    n->hostname = l.hostname;
    n->master = l.master;
    n->config_epoch = l.config_epoch;
    if (n->flags & kNodeMyself) myself_ = n;
    for (const SlotRange& r : l.slots)
      for (int s = r.first; s <= r.last; ++s) SetSlot(s, n);
  }
  if (const NodeLine* me = conf->myself()) LoadMoves(*me);
  current_epoch_ = conf->current_epoch;
  last_vote_epoch_ = conf->last_vote_epoch;
  for (auto& [id, n] : nodes_) current_epoch_ = std::max(current_epoch_, n->config_epoch);
  spdlog::info("cluster: node configuration loaded, I'm {}", myself_->id);
  return true;
}

void Node::VerifyWithData() {
  std::lock_guard l(mu_);
  if (opt_.engine == nullptr || (myself_->flags & kNodeSlave)) return;  // a replica: its stream
  for (int s = 0; s < kSlots; ++s) {
    if (owner_[s] == myself_ || importing_from_[s] != nullptr ||
        opt_.engine->db(0).KeysInSlot(static_cast<uint32_t>(s)) == 0)
      continue;
    if (owner_[s] == nullptr) {
      spdlog::warn("I have keys for unassigned slot {}. Taking responsibility for it.", s);
      SetSlot(s, myself_);
    } else {
      spdlog::warn(
          "I have keys for slot {}, but the slot is assigned to another node. Setting it to "
          "importing state.",
          s);
      importing_from_[s] = owner_[s];
    }
    Changed();
  }
  Flush();
}

NodeOptions::Endpoint Node::EndpointTypeNow() const {
  if (opt_.params == nullptr) return opt_.endpoint_type;
  return EndpointType(
      opt_.params->Text(engine::ParamValues::Find("cluster-preferred-endpoint-type")));
}

std::string Node::PreferredEndpoint(const NodeInfo& n, NodeOptions::Endpoint type) {
  switch (type) {
    case NodeOptions::Endpoint::kIp:
      return n.ip;
    case NodeOptions::Endpoint::kHostname:
      return n.hostname.empty() ? "?" : n.hostname;
    case NodeOptions::Endpoint::kUnknown:
      return "";
  }
  return "unknown";
}

bool Node::ReplicaAvailable(const NodeInfo& n) {
  if (n.flags & kNodeFail) return false;
  return (&n == myself_ ? MyOffset() : n.repl_offset) != 0;
}

void Node::Publish() {
  auto s = std::make_shared<Snapshot>();
  s->my_id = myself_->id;
  s->ok = ok_;
  s->owner.fill(-1);
  std::map<const NodeInfo*, int16_t> index;
  auto index_of = [&](const NodeInfo* n) {
    auto [it, fresh] = index.emplace(n, static_cast<int16_t>(s->endpoints.size()));
    if (fresh) {
      s->endpoints.push_back(PreferredEndpoint(*n, opt_.endpoint_type) + ":" +
                             std::to_string(n->port));
      if (n == myself_) s->me = it->second;
    }
    return it->second;
  };
  for (int slot = 0; slot < kSlots; ++slot) {
    if (owner_[slot] != nullptr) s->owner[slot] = index_of(owner_[slot]);
    if (migrating_to_[slot] != nullptr) s->migrating[slot] = index_of(migrating_to_[slot]);
    if (importing_from_[slot] != nullptr) s->importing[slot] = index_of(importing_from_[slot]);
    if (migrating_to_[slot] != nullptr || importing_from_[slot] != nullptr) s->open.Set(slot);
  }
  if (const NodeInfo* master = MasterOf(myself_); master != nullptr) {
    auto it = index.find(master);
    if (it != index.end() && master->numslots > 0) s->my_master = it->second;
  }
  snapshot_.store(std::move(s));
  // After the store: a worker that sees the new version loads this snapshot or a later one.
  snapshot_version_.store(g_snapshot_versions.fetch_add(1, std::memory_order_relaxed) + 1,
                          std::memory_order_release);
}

void Node::Flush() {
  UpdateState();
  if (!changed_) return;
  changed_ = false;
  Publish();
  if (save_) {
    // Written by the bus thread once it lets mu_ go (WritePendingConf): the fsync holds no one.
    save_ = false;
    pending_conf_ = ConfText();
    pending_conf_seq_ = ++conf_seq_;
    Wake();
  }
}

void Node::WritePendingConf() {
  std::string text;
  uint64_t seq;
  {
    std::lock_guard l(mu_);
    text = std::move(pending_conf_);
    pending_conf_.clear();
    seq = pending_conf_seq_;
  }
  std::string error;
  if (!text.empty()) WriteConf(text, seq, &error);
}

// ---- routing ----

// Each worker keeps the snapshot it last loaded and reloads it only when the version moved: the
// common case reads one shared cache line and writes nothing shared (loading the atomic
// shared_ptr would take its lock bit and the reference count on every command). The raw pointer
// and version are trivial thread-locals (no guard on each read) and the check is inlined into
// Route; the reference that keeps the snapshot alive is touched only on a reload.
namespace {
// Versions are unique in the process (g_snapshot_versions), whichever node published them.
thread_local uint64_t t_version = ~uint64_t{0};
thread_local const Snapshot* t_current = nullptr;
}  // namespace

inline const Snapshot* Node::Current() const {
  const uint64_t version = snapshot_version_.load(std::memory_order_acquire);
  if (version != t_version) [[unlikely]]
    return Reload(version);
  return t_current;
}

const Snapshot* Node::Reload(uint64_t version) const {
  thread_local std::shared_ptr<const Snapshot> t_snapshot;
  t_snapshot = snapshot_.load();
  t_current = t_snapshot.get();
  t_version = version;
  return t_current;
}

bool Node::Route(engine::Session* session, const engine::CommandSpec* cmd,
                 const std::string_view* argv, int argc, engine::RoutedKeys* keys,
                 std::string* refusal) {
  using namespace std::string_view_literals;  // (compared by length first, no strlen)
  // EXEC has no keys of its own: its queue's decide.
  const bool keyless = cmd->keyspecs.empty() && cmd->getkeys == nullptr;
  if (keyless && cmd->name != "exec"sv) return true;
  const Snapshot* snap = Current();
  if (keyless || (cmd->flags & engine::kCmdPubsub))
    return RouteSlowly(*snap, session, cmd, argv, argc, keys, refusal);
  // The common case here, the rest in RouteSlowly: keys of one slot this node serves, nothing
  // open or down. The keys as the dispatcher resolves them: it reuses them with their slot.
  engine::ExtractKeys(*cmd, argv, argc, &keys->refs, /*partial=*/true);
  keys->found = true;
  int slot = -1;
  for (const engine::KeyRef& r : keys->refs) {
    const int s = KeySlot(argv[r.arg_index]);
    if (slot >= 0 && s != slot) return RouteSlowly(*snap, session, cmd, argv, argc, keys, refusal);
    slot = s;
  }
  keys->slot = slot;
  if (slot < 0 || (snap->ok && snap->owner[slot] == snap->me && !snap->open.Test(slot)))
    return true;
  return RouteSlowly(*snap, session, cmd, argv, argc, keys, refusal);
}

bool Node::RouteSlowly(const Snapshot& current, engine::Session* session,
                       const engine::CommandSpec* cmd, const std::string_view* argv, int argc,
                       engine::RoutedKeys* keys, std::string* refusal) {
  using namespace std::string_view_literals;
  const Snapshot* snap = &current;
  const bool exec = cmd->keyspecs.empty() && cmd->getkeys == nullptr;
  int slot = -1;
  // 0: fine so far, 1: a slot nobody serves, 2: keys of two slots.
  auto visit = [&](std::string_view key) -> int {
    const int s = KeySlot(key);
    if (slot < 0) {
      slot = s;
      return snap->owner[s] < 0 ? 1 : 0;
    }
    return s == slot ? 0 : 2;
  };
  auto check = [&](const engine::KeyRefs& refs, const std::string_view* av) -> int {
    for (const engine::KeyRef& r : refs)
      if (const int rc = visit(av[r.arg_index]); rc != 0) return rc;
    return 0;
  };
  // Shard channels are routed by their slot as keys are (Redis's legacy key range includes
  // them), and served while the cluster is down (cluster-allow-pubsubshard-when-down yes).
  const bool shard_channels =
      (cmd->flags & engine::kCmdPubsub) &&
      (cmd->name == "spublish"sv || cmd->name == "ssubscribe"sv || cmd->name == "sunsubscribe"sv);
  int rc = 0;
  if (shard_channels) {
    const int last = cmd->name == "spublish"sv ? std::min(argc, 2) : argc;
    for (int i = 1; i < last && rc == 0; ++i) rc = visit(argv[i]);
  } else if (exec) {
    std::vector<std::string_view> views;
    engine::KeyRefs refs;
    for (const engine::QueuedCommand& q : session->queued()) {
      views.assign(q.args.begin(), q.args.end());
      refs.clear();
      engine::ExtractKeys(*q.cmd, views.data(), static_cast<int>(views.size()), &refs,
                          /*partial=*/true);
      if ((rc = check(refs, views.data())) != 0) break;
    }
  } else {
    if (!keys->found) {
      engine::ExtractKeys(*cmd, argv, argc, &keys->refs, /*partial=*/true);
      keys->found = true;
    }
    rc = check(keys->refs, argv);
  }
  if (keys->found) keys->slot = slot;
  auto refuse = [&](std::string msg) {
    *refusal = std::move(msg);
    return false;
  };
  // Whether the command (EXEC: its queue) writes.
  auto writes = [&] {
    bool write = (cmd->FlagsFor(argv, argc) & VSL_CMD_WRITE) != 0;
    if (exec) {
      for (const engine::QueuedCommand& q : session->queued())
        write = write || (q.cmd->flags & VSL_CMD_WRITE) != 0;
    }
    return write;
  };
  if (rc == 1) return refuse("CLUSTERDOWN Hash slot not served");
  if (rc == 2) return refuse("CROSSSLOT Keys in request don't hash to the same slot");
  if (slot < 0) return true;
  if (!snap->ok && !shard_channels) {
    // cluster-allow-reads-when-down: reads of the slots still owned here go on.
    const bool reads_allowed =
        opt_.params != nullptr &&
        opt_.params->Int(engine::ParamValues::Find("cluster-allow-reads-when-down")) != 0;
    if (!reads_allowed) return refuse("CLUSTERDOWN The cluster is down");
    if (writes()) return refuse("CLUSTERDOWN The cluster is down and only accepts read commands");
  }
  if (snap->open.Test(slot)) {  // migrating or importing: ASK, ASKING, TRYAGAIN (migration.cc)
    if (auto r = RedirectOpenSlot(*snap, session, cmd, argv, argc, slot, shard_channels))
      return r->empty() || refuse(std::move(*r));
  }
  const int16_t owner = snap->owner[slot];
  if (owner == snap->me) return true;
  // A replica serves reads of its master's slots to a READONLY connection, and shard channels.
  if (owner == snap->my_master && (session->readonly() || shard_channels) && !writes()) return true;
  return refuse("MOVED " + std::to_string(slot) + " " + snap->endpoints[owner]);
}

// ---- lifecycle ----

bool Node::Start(std::string* error) {
  {
    std::lock_guard l(mu_);
    if (!Load(error)) return false;
    if (myself_ == nullptr) {
      myself_ = AddNode(RandomId(), kNodeMyself | kNodeMaster);
      spdlog::info("cluster: no cluster configuration found, I'm {}", myself_->id);
    }
    myself_->port = opt_.announce_port != 0 ? opt_.announce_port : opt_.port;
    myself_->cport = opt_.announce_bus_port != 0 ? opt_.announce_bus_port : opt_.cport;
    myself_->hostname = opt_.announce_hostname;
    if (!opt_.announce_ip.empty()) myself_->ip = opt_.announce_ip;
    Changed();
    UpdateState();
    Publish();
    if (!Save(error)) {
      *error = "Cannot save the cluster configuration: " + *error;
      return false;
    }
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(opt_.cport));
  if (inet_pton(AF_INET, opt_.bind.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = INADDR_ANY;
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      listen(listen_fd_, 511) != 0) {
    *error = "Could not bind the cluster bus port " + std::to_string(opt_.cport) + ": " +
             std::strerror(errno);
    close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void Node::Stop() {
  if (stop_.exchange(true)) return;
  Wake();
  if (thread_.joinable()) thread_.join();
  WritePendingConf();  // the last change, if the thread stopped before writing it
  std::lock_guard l(mu_);
  for (auto& link : links_)
    if (link->fd >= 0) close(link->fd);
  links_.clear();
  for (auto& [id, n] : nodes_) n->link = n->inbound_link = nullptr;
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

void Node::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

NodeOptions::Endpoint EndpointType(std::string_view word) {
  if (word == "hostname") return NodeOptions::Endpoint::kHostname;
  if (word == "unknown-endpoint") return NodeOptions::Endpoint::kUnknown;
  return NodeOptions::Endpoint::kIp;
}

std::unique_ptr<Node> StartNode(engine::Engine* engine, int port,
                                std::unique_ptr<ReplicationControl> repl,
                                decltype(NodeOptions::deliver) deliver, std::string* error) {
  const engine::ParamValues& p = engine->settings().params;
  auto text = [&](const char* name) { return p.Text(engine::ParamValues::Find(name)); };
  auto integer = [&](const char* name) { return p.Int(engine::ParamValues::Find(name)); };
  if (integer("cluster-enabled") == 0) return nullptr;
  NodeOptions o;
  o.dir = text("dir");
  o.config_file = text("cluster-config-file");
  o.bind = engine->config().server.bind;
  if (o.bind.find(' ') != std::string::npos) o.bind = o.bind.substr(0, o.bind.find(' '));
  o.port = port;
  o.cport = static_cast<int>(integer("cluster-port"));
  o.node_timeout_ms = integer("cluster-node-timeout");
  o.announce_ip = text("cluster-announce-ip");
  o.announce_hostname = text("cluster-announce-hostname");
  o.announce_port = static_cast<int>(integer("cluster-announce-port"));
  o.announce_bus_port = static_cast<int>(integer("cluster-announce-bus-port"));
  o.require_full_coverage = integer("cluster-require-full-coverage") != 0;
  o.replica_validity_factor = static_cast<int>(integer("cluster-replica-validity-factor"));
  o.replica_no_failover = integer("cluster-replica-no-failover") != 0;
  o.allow_replica_migration = integer("cluster-allow-replica-migration") != 0;
  o.migration_barrier = integer("cluster-migration-barrier");
  o.endpoint_type = EndpointType(text("cluster-preferred-endpoint-type"));
  o.ping_replica_period_ms = integer("repl-ping-replica-period") * 1000;
  o.params = &p;
  o.repl = std::move(repl);
  o.deliver = std::move(deliver);
  o.engine = engine;
  if (o.cport == 0 && port > 65535 - 10000) {
    *error =
        "Redis port number too high. Cluster communication port is 10,000 port numbers higher "
        "than your Redis port. Your Redis port number must be 55535 or less.";
    return nullptr;
  }
  auto node = std::make_unique<Node>(std::move(o));
  if (!node->Start(error)) return nullptr;
  return node;
}

}  // namespace vessel::cluster
