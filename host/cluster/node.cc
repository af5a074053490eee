// The cluster node: state, the bus thread, failure detection, nodes.conf and routing (node.h).
// Redis 7.0's cluster.c is the specification of every rule here.
#include "host/cluster/node.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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
constexpr int64_t kBlacklistTtlMs = 60000;      // CLUSTER_BLACKLIST_TTL
constexpr size_t kMaxLinkBuffer = 64u << 20;    // a peer that never reads is dropped

std::string PeerIp(int fd, bool local) {
  sockaddr_storage sa{};
  socklen_t len = sizeof(sa);
  const int rc = local ? getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len)
                       : getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  if (rc != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, buf, sizeof(buf));
  } else if (sa.ss_family == AF_INET6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&sa);
    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
      inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, sizeof(buf));
    } else {
      inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof(buf));
    }
  }
  return buf;
}

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

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

// clusterUpdateSlotsConfigWith: a claim with a greater config epoch wins a slot.
void Node::UpdateSlotsConfigWith(NodeInfo* sender, uint64_t epoch, const SlotBitmap& slots) {
  if (sender == myself_) return;
  for (int s = 0; s < kSlots; ++s) {
    if (!slots.Test(s) || owner_[s] == sender) continue;
    if (owner_[s] == nullptr || owner_[s]->config_epoch < epoch) {
      if (owner_[s] == myself_)
        spdlog::warn("cluster: slot {} taken over by {} (config epoch {})", s, sender->id, epoch);
      SetSlot(s, sender);
    }
  }
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
  NodesConf conf;
  conf.nodes.push_back(LineOf(*myself_));
  for (auto& [id, n] : nodes_) {
    if (n.get() == myself_ || (n->flags & kNodeHandshake)) continue;
    conf.nodes.push_back(LineOf(*n));
  }
  conf.current_epoch = current_epoch_;
  conf.last_vote_epoch = last_vote_epoch_;
  const std::string path =
      opt_.config_file.starts_with("/") ? opt_.config_file : opt_.dir + "/" + opt_.config_file;
  const std::string tmp = path + ".tmp";
  const std::string text = FormatNodesConf(conf);
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
  current_epoch_ = conf->current_epoch;
  last_vote_epoch_ = conf->last_vote_epoch;
  for (auto& [id, n] : nodes_) current_epoch_ = std::max(current_epoch_, n->config_epoch);
  spdlog::info("cluster: node configuration loaded, I'm {}", myself_->id);
  return true;
}

void Node::Publish() {
  auto s = std::make_shared<Snapshot>();
  s->my_id = myself_->id;
  s->ok = ok_;
  s->owner.fill(-1);
  std::map<const NodeInfo*, int16_t> index;
  for (int slot = 0; slot < kSlots; ++slot) {
    const NodeInfo* n = owner_[slot];
    if (n == nullptr) continue;
    auto [it, fresh] = index.emplace(n, static_cast<int16_t>(s->endpoints.size()));
    if (fresh) {
      s->endpoints.push_back(n->ip + ":" + std::to_string(n->port));
      if (n == myself_) s->me = it->second;
    }
    s->owner[slot] = it->second;
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
    save_ = false;
    std::string error;
    Save(&error);
  }
}

// ---- routing ----

const Snapshot* Node::Current() const {
  // Each worker keeps the snapshot it last loaded and reloads it only when the version moved:
  // the common case reads one shared cache line and writes nothing shared (loading the atomic
  // shared_ptr would take its lock bit and the reference count on every command).
  thread_local uint64_t t_version = 0;
  thread_local std::shared_ptr<const Snapshot> t_snapshot;
  const uint64_t version = snapshot_version_.load(std::memory_order_acquire);
  if (version != t_version || t_snapshot == nullptr) {
    t_snapshot = snapshot_.load();
    t_version = version;
  }
  return t_snapshot.get();
}

std::string Node::Redirect(engine::Session* session, const engine::CommandSpec* cmd,
                           const std::string_view* argv, int argc) {
  const bool exec = cmd->name == "exec";
  if (!exec && cmd->keyspecs.empty() && cmd->getkeys == nullptr) return "";
  const Snapshot* snap = Current();
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
  auto check = [&](const engine::CommandSpec& c, const std::string_view* av, int ac) -> int {
    engine::KeyRefs refs;
    engine::ExtractKeys(c, av, ac, &refs, /*partial=*/true);
    for (const engine::KeyRef& r : refs)
      if (const int rc = visit(av[r.arg_index]); rc != 0) return rc;
    return 0;
  };
  // Shard channels are routed by their slot as keys are (Redis's legacy key range includes
  // them), and served while the cluster is down (cluster-allow-pubsubshard-when-down yes).
  const bool shard_channels =
      (cmd->flags & engine::kCmdPubsub) &&
      (cmd->name == "spublish" || cmd->name == "ssubscribe" || cmd->name == "sunsubscribe");
  int rc = 0;
  if (shard_channels) {
    const int last = cmd->name == "spublish" ? std::min(argc, 2) : argc;
    for (int i = 1; i < last && rc == 0; ++i) rc = visit(argv[i]);
  } else if (exec) {
    std::vector<std::string_view> views;
    for (const engine::QueuedCommand& q : session->queued()) {
      views.assign(q.args.begin(), q.args.end());
      if ((rc = check(*q.cmd, views.data(), static_cast<int>(views.size()))) != 0) break;
    }
  } else {
    rc = check(*cmd, argv, argc);
  }
  if (rc == 1) return "CLUSTERDOWN Hash slot not served";
  if (rc == 2) return "CROSSSLOT Keys in request don't hash to the same slot";
  if (slot < 0) return "";
  if (!snap->ok && !shard_channels) {
    // cluster-allow-reads-when-down: reads of the slots still owned here go on.
    const bool reads_allowed =
        opt_.params != nullptr &&
        opt_.params->Int(engine::ParamValues::Find("cluster-allow-reads-when-down")) != 0;
    if (!reads_allowed) return "CLUSTERDOWN The cluster is down";
    bool write = (cmd->FlagsFor(argv, argc) & VSL_CMD_WRITE) != 0;
    if (exec) {
      for (const engine::QueuedCommand& q : session->queued())
        write = write || (q.cmd->flags & VSL_CMD_WRITE) != 0;
    }
    if (write) return "CLUSTERDOWN The cluster is down and only accepts read commands";
  }
  const int16_t owner = snap->owner[slot];
  if (owner == snap->me) return "";
  return "MOVED " + std::to_string(slot) + " " + snap->endpoints[owner];
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
  SetNonBlocking(listen_fd_);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void Node::Stop() {
  if (stop_.exchange(true)) return;
  Wake();
  if (thread_.joinable()) thread_.join();
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

// ---- the bus thread ----

void Node::Loop() {
  std::vector<pollfd> fds;
  std::vector<Link*> polled;
  while (!stop_.load()) {
    fds.clear();
    polled.clear();
    {
      std::lock_guard l(mu_);
      fds.push_back({listen_fd_, POLLIN, 0});
      fds.push_back({wake_fd_, POLLIN, 0});
      for (auto& link : links_) {
        short ev = POLLIN;
        if (link->connecting || link->out.size() > link->out_off) ev |= POLLOUT;
        fds.push_back({link->fd, ev, 0});
        polled.push_back(link.get());
      }
    }
    const int64_t wait = std::clamp<int64_t>(next_cron_ms_ - Now(), 0, 100);
    poll(fds.data(), fds.size(), static_cast<int>(wait));
    if (stop_.load()) break;
    std::lock_guard l(mu_);
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &v, sizeof(v));
    }
    if (fds[0].revents & POLLIN) Accept();
    for (size_t i = 0; i < polled.size(); ++i) {
      Link* link = polled[i];
      const short re = fds[i + 2].revents;
      if (link->dead || re == 0) continue;
      if (link->connecting && (re & (POLLOUT | POLLERR | POLLHUP))) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(link->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          FreeLink(link);
          continue;
        }
        link->connecting = false;
      }
      if (re & (POLLIN | POLLERR | POLLHUP)) ReadLink(link);
      if (!link->dead && !link->connecting && (re & POLLOUT)) WriteLink(link);
    }
    // Links created while handling packets write their first bytes on the next round.
    for (auto& link : links_)
      if (!link->dead && !link->connecting && link->out.size() > link->out_off)
        WriteLink(link.get());
    if (Now() >= next_cron_ms_) {
      next_cron_ms_ = Now() + 100;
      Cron();
    }
    std::erase_if(links_, [](const std::unique_ptr<Link>& l) { return l->dead; });
    Flush();
  }
}

void Node::Accept() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    SetNonBlocking(fd);
    auto link = std::make_unique<Link>();
    link->fd = fd;
    link->inbound = true;
    link->ctime = Now();
    links_.push_back(std::move(link));
  }
}

void Node::Connect(NodeInfo* n) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, n->ip.c_str(), &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(static_cast<uint16_t>(n->cport));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, n->ip.c_str(), &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(static_cast<uint16_t>(n->cport));
    len = sizeof(sockaddr_in6);
  } else {
    return;
  }
  const int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  SetNonBlocking(fd);
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&ss), len);
  if (rc != 0 && errno != EINPROGRESS) {
    close(fd);
    return;
  }
  auto link = std::make_unique<Link>();
  link->fd = fd;
  link->connecting = rc != 0;
  link->node = n;
  link->ctime = Now();
  n->link = link.get();
  links_.push_back(std::move(link));
  // clusterLinkConnectHandler: the first packet is a MEET for a node met by CLUSTER MEET, a PING
  // otherwise; a pending ping keeps its time so a node that never answers still times out.
  const int64_t old_ping_sent = n->ping_sent;
  SendPing(n->link, (n->flags & kNodeMeet) ? MessageType::kMeet : MessageType::kPing);
  if (old_ping_sent != 0) n->ping_sent = old_ping_sent;
  n->flags = static_cast<uint16_t>(n->flags & ~kNodeMeet);
}

void Node::FreeLink(Link* l) {
  if (l->dead) return;
  l->dead = true;
  if (l->fd >= 0) close(l->fd);
  l->fd = -1;
  if (l->node != nullptr && l->node->link == l) l->node->link = nullptr;
  if (l->node != nullptr && l->node->inbound_link == l) l->node->inbound_link = nullptr;
  l->node = nullptr;
}

void Node::ReadLink(Link* l) {
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = read(l->fd, buf, sizeof(buf));
    if (n > 0) {
      l->in.append(buf, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof(buf)) break;
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      FreeLink(l);
      return;
    }
    break;
  }
  size_t off = 0;
  while (!l->dead) {
    const std::string_view rest = std::string_view(l->in).substr(off);
    const Frame f = NextFrame(rest, kMaxLinkBuffer);  // PUBLISH is not served: no huge packets
    if (f.status == FrameStatus::kNeedMore) break;
    if (f.status == FrameStatus::kError) {
      spdlog::warn("cluster: closing a bus link: {}", f.error);
      FreeLink(l);
      return;
    }
    std::string error;
    auto m = Decode(rest.substr(0, f.length), &error);
    off += f.length;
    if (!m) {
      spdlog::warn("cluster: closing a bus link: {}", error);
      FreeLink(l);
      return;
    }
    if (m->type < kMessageTypeCount) ++received_[m->type];
    Process(l, *m);
  }
  if (!l->dead) l->in.erase(0, off);
}

void Node::WriteLink(Link* l) {
  while (l->out.size() > l->out_off) {
    const ssize_t n = write(l->fd, l->out.data() + l->out_off, l->out.size() - l->out_off);
    if (n > 0) {
      l->out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    FreeLink(l);
    return;
  }
  l->out.clear();
  l->out_off = 0;
}

BusHeader Node::Header() const {
  BusHeader h;
  h.port = static_cast<uint16_t>(myself_->port);
  h.cport = static_cast<uint16_t>(myself_->cport);
  h.current_epoch = current_epoch_;
  h.config_epoch = myself_->config_epoch;
  h.sender = myself_->id;
  h.slots = myself_->slots;
  h.ip = opt_.announce_ip;
  h.flags = myself_->flags;
  h.state = ok_ ? kClusterOk : kClusterFail;
  return h;
}

void Node::Send(Link* l, MessageType type, std::string packet) {
  if (l == nullptr || l->dead) return;
  if (l->out.size() - l->out_off > kMaxLinkBuffer) {
    FreeLink(l);
    return;
  }
  l->out += packet;
  ++sent_[static_cast<uint16_t>(type)];
}

// clusterSendPing: a tenth of the nodes (at least 3) as gossip, then every node in PFAIL.
void Node::SendPing(Link* l, MessageType type) {
  std::vector<NodeInfo*> candidates, chosen;
  for (auto& [id, n] : nodes_) candidates.push_back(n.get());
  const size_t fresh = nodes_.size() >= 2 ? nodes_.size() - 2 : 0;
  size_t wanted = std::max<size_t>(3, nodes_.size() / 10);
  wanted = std::min(wanted, fresh);
  std::vector<Gossip> gossip;
  auto add = [&](NodeInfo* n) {
    Gossip g;
    g.name = n->id;
    g.ping_sent = static_cast<uint32_t>(n->ping_sent / 1000);
    g.pong_received = static_cast<uint32_t>(n->pong_received / 1000);
    g.ip = n->ip;
    g.port = static_cast<uint16_t>(n->port);
    g.cport = static_cast<uint16_t>(n->cport);
    g.flags = n->flags;
    gossip.push_back(std::move(g));
    chosen.push_back(n);
  };
  size_t budget = wanted * 3;
  while (!candidates.empty() && chosen.size() < wanted && budget-- > 0) {
    rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
    NodeInfo* n = candidates[(rng_ >> 33) % candidates.size()];
    if (n == myself_ || (n->flags & (kNodePFail | kNodeHandshake | kNodeNoAddr)) ||
        (n->link == nullptr && n->numslots == 0))
      continue;
    if (std::find(chosen.begin(), chosen.end(), n) != chosen.end()) continue;
    add(n);
  }
  for (NodeInfo* n : candidates)
    if ((n->flags & kNodePFail) && !(n->flags & (kNodeHandshake | kNodeNoAddr))) add(n);
  std::vector<PingExtension> ext;
  if (!myself_->hostname.empty()) ext.push_back({kExtHostname, myself_->hostname});
  if (l->node != nullptr && !l->inbound && type == MessageType::kPing) l->node->ping_sent = Now();
  Send(l, type, EncodePing(type, Header(), gossip, ext));
}

void Node::BroadcastFail(NodeInfo* failing) {
  const std::string packet = EncodeFail(Header(), failing->id);
  for (auto& [id, n] : nodes_)
    if (n->link != nullptr && !(n->flags & kNodeHandshake))
      Send(n->link, MessageType::kFail, packet);
}

void Node::BroadcastPong() {
  for (auto& [id, n] : nodes_)
    if (n->link != nullptr && n.get() != myself_ && !(n->flags & kNodeHandshake))
      SendPing(n->link, MessageType::kPong);
}

// clusterProcessPacket.
void Node::Process(Link* l, const BusMessage& m) {
  const BusHeader& h = m.header;
  const uint16_t type = m.type;
  if (h.sender.empty()) return;  // "no node" as the sender: nothing to learn, nothing to answer
  NodeInfo* sender = Lookup(h.sender);
  if (sender != nullptr && (sender->flags & kNodeHandshake)) sender = nullptr;
  const int64_t now = Now();
  // An inbound link belongs to the node that speaks on it (one inbound link per node: an older
  // one goes, as Redis's setClusterNodeToInboundClusterLink).
  if (sender != nullptr && l->inbound && l->node == nullptr) {
    if (sender->inbound_link != nullptr) FreeLink(sender->inbound_link);
    sender->inbound_link = l;
    l->node = sender;
  }
  if (sender != nullptr) {
    sender->data_received = now;
    sender->repl_offset = h.offset;
    if (h.current_epoch > current_epoch_) {
      current_epoch_ = h.current_epoch;
      Changed();
    }
    if (h.config_epoch > sender->config_epoch) {
      sender->config_epoch = h.config_epoch;
      Changed();
    }
  }
  const bool ping_like = type == static_cast<uint16_t>(MessageType::kPing) ||
                         type == static_cast<uint16_t>(MessageType::kPong) ||
                         type == static_cast<uint16_t>(MessageType::kMeet);
  const bool is_ping = type == static_cast<uint16_t>(MessageType::kPing);
  const bool is_meet = type == static_cast<uint16_t>(MessageType::kMeet);
  if (is_ping || is_meet) {
    // My address as the peer sees it, unless announced.
    if ((is_meet || myself_->ip.empty()) && opt_.announce_ip.empty()) {
      const std::string ip = PeerIp(l->fd, /*local=*/true);
      if (!ip.empty() && ip != myself_->ip) {
        myself_->ip = ip;
        Changed();
      }
    }
    if (sender == nullptr && is_meet) {
      NodeInfo* n = AddNode(RandomId(), kNodeHandshake);
      n->ip = !h.ip.empty() ? h.ip : PeerIp(l->fd, /*local=*/false);
      n->port = h.port;
      n->cport = h.cport;
      ProcessGossip(m, nullptr);
    }
    SendPing(l, MessageType::kPong);
  }
  if (ping_like) {
    if (l->node != nullptr && !l->inbound) {
      NodeInfo* n = l->node;
      if (n->flags & kNodeHandshake) {
        if (sender != nullptr) {
          // A node we already know under its real id: the handshake node goes.
          DelNode(n);
          return;
        }
        if (Lookup(h.sender) != nullptr) {  // known only as another handshake node
          DelNode(n);
          return;
        }
        RenameNode(n, h.sender);
        n->flags = static_cast<uint16_t>((n->flags & ~kNodeHandshake) |
                                         (h.slaveof.empty() ? kNodeMaster : kNodeSlave));
        n->master = h.slaveof;
        sender = nullptr;  // Redis handles the rest of this packet on the next one
        Changed();
      } else if (n->id != h.sender) {
        // The address now answers with another id: forget the address, reconnect later.
        n->flags |= kNodeNoAddr;
        n->ip.clear();
        n->port = n->cport = 0;
        FreeLink(l);
        Changed();
        return;
      }
    }
    if (l->node != nullptr && !l->inbound && type == static_cast<uint16_t>(MessageType::kPong)) {
      NodeInfo* n = l->node;
      n->pong_received = now;
      n->ping_sent = 0;
      if (n->flags & kNodePFail) {
        n->flags = static_cast<uint16_t>(n->flags & ~kNodePFail);
        Changed();
      } else if (n->flags & kNodeFail) {
        ClearFailureIfNeeded(n);
      }
    }
    // Nothing to learn from a packet that claims to be mine (a MEET sent to my own address).
    if (sender == nullptr || sender == myself_) return;
    // Role: only masters are followed here (replicas are not supported yet).
    if (h.slaveof.empty() && !(sender->flags & kNodeMaster)) {
      sender->flags = static_cast<uint16_t>((sender->flags & ~kNodeSlave) | kNodeMaster);
      sender->master.clear();
      Changed();
    } else if (!h.slaveof.empty() && !(sender->flags & kNodeSlave)) {
      sender->flags = static_cast<uint16_t>((sender->flags & ~kNodeMaster) | kNodeSlave);
      sender->master = h.slaveof;
      for (int s = 0; s < kSlots; ++s)
        if (owner_[s] == sender) ClearSlot(s);
      Changed();
    }
    // The hostname extension (absent: no hostname).
    std::string hostname;
    for (const PingExtension& e : m.extensions)
      if (e.type == kExtHostname) hostname = e.data;
    if (hostname != sender->hostname) {
      sender->hostname = hostname;
      Changed();
    }
    if (h.slaveof.empty()) {
      const bool dirty = !(sender->slots == h.slots);
      if (dirty) UpdateSlotsConfigWith(sender, h.config_epoch, h.slots);
      // The sender claims slots a newer owner holds: tell it (clusterSendUpdate).
      if (dirty) {
        for (int s = 0; s < kSlots; ++s) {
          if (!h.slots.Test(s) || owner_[s] == sender || owner_[s] == nullptr) continue;
          if (owner_[s]->config_epoch > h.config_epoch) {
            if (sender->link != nullptr)
              Send(
                  sender->link, MessageType::kUpdate,
                  EncodeUpdate(Header(), owner_[s]->config_epoch, owner_[s]->id, owner_[s]->slots));
            break;
          }
        }
      }
      HandleEpochCollision(sender);
    }
    ProcessGossip(m, sender);
  } else if (type == static_cast<uint16_t>(MessageType::kFail)) {
    if (sender == nullptr) return;
    NodeInfo* failing = Lookup(m.node);
    if (failing != nullptr && !(failing->flags & (kNodeFail | kNodeMyself))) {
      spdlog::info("cluster: FAIL message received from {} about {}", sender->id, failing->id);
      failing->flags = static_cast<uint16_t>((failing->flags | kNodeFail) & ~kNodePFail);
      failing->fail_time = now;
      Changed();
    }
  } else if (type == static_cast<uint16_t>(MessageType::kUpdate)) {
    if (sender == nullptr) return;
    NodeInfo* n = Lookup(m.node);
    if (n == nullptr || n->config_epoch >= m.update_config_epoch) return;
    n->config_epoch = m.update_config_epoch;
    UpdateSlotsConfigWith(n, m.update_config_epoch, m.update_slots);
    Changed();
  }
  // PUBLISH, failover votes, MFSTART and MODULE are not handled yet.
}

// clusterProcessGossipSection.
void Node::ProcessGossip(const BusMessage& m, NodeInfo* sender) {
  for (const Gossip& g : m.gossip) {
    NodeInfo* n = Lookup(g.name);
    if (n != nullptr) {
      if (sender == nullptr) continue;
      if (sender->flags & kNodeMaster && n != myself_) {
        if (g.flags & (kNodeFail | kNodePFail)) {
          if (!n->fail_reports.contains(sender->id)) {
            n->fail_reports[sender->id] = Now();
            MarkFailingIfNeeded(n);
          } else {
            n->fail_reports[sender->id] = Now();
          }
        } else {
          n->fail_reports.erase(sender->id);
        }
      }
      // A node with no ping pending and no failure reports takes the newer pong time others saw
      // (Redis's gossip pong update; also for myself, as Redis shows it).
      if (!(g.flags & (kNodeFail | kNodePFail)) && n->ping_sent == 0 && n->fail_reports.empty()) {
        const int64_t pong = int64_t{g.pong_received} * 1000;
        if (pong <= Now() + 500 && pong > n->pong_received) n->pong_received = pong;
      }
      if (n == myself_) continue;
      // A node we lost the address of, seen again elsewhere.
      if ((n->flags & (kNodeFail | kNodeNoAddr)) && n->link == nullptr && !g.ip.empty() &&
          (n->ip != g.ip || n->port != g.port || n->cport != g.cport)) {
        n->ip = g.ip;
        n->port = g.port;
        n->cport = g.cport;
        n->flags = static_cast<uint16_t>(n->flags & ~kNodeNoAddr);
        Changed();
      }
      continue;
    }
    if (sender == nullptr || (g.flags & kNodeNoAddr) || g.ip.empty()) continue;
    auto b = blacklist_.find(g.name);
    if (b != blacklist_.end() && b->second > Now()) continue;
    StartHandshake(g.ip, g.port, g.cport);
  }
}

// clusterCron, every 100 ms.
void Node::Cron() {
  if (opt_.params != nullptr) {
    opt_.node_timeout_ms = opt_.params->Int(engine::ParamValues::Find("cluster-node-timeout"));
    opt_.require_full_coverage =
        opt_.params->Int(engine::ParamValues::Find("cluster-require-full-coverage")) != 0;
  }
  const int64_t now = Now();
  ++iteration_;
  const int64_t timeout = opt_.node_timeout_ms;
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  std::erase_if(blacklist_, [&](const auto& e) { return e.second <= now; });
  std::vector<NodeInfo*> all;
  for (auto& [id, n] : nodes_) all.push_back(n.get());
  for (NodeInfo* n : all) {
    if (n == myself_ || (n->flags & kNodeNoAddr)) continue;
    if ((n->flags & kNodeHandshake) && now - n->ctime > handshake_timeout) {
      DelNode(n);
      continue;
    }
    if (n->link == nullptr) Connect(n);
  }
  all.clear();
  for (auto& [id, n] : nodes_) all.push_back(n.get());
  // Once a second, ping the node of five random ones whose pong is the oldest.
  if (iteration_ % 10 == 0 && !all.empty()) {
    NodeInfo* oldest = nullptr;
    for (int i = 0; i < 5; ++i) {
      rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      NodeInfo* n = all[(rng_ >> 33) % all.size()];
      if (n == myself_ || n->link == nullptr || n->ping_sent != 0 || (n->flags & kNodeHandshake))
        continue;
      if (oldest == nullptr || n->pong_received < oldest->pong_received) oldest = n;
    }
    if (oldest != nullptr) SendPing(oldest->link, MessageType::kPing);
  }
  for (auto& [id, up] : nodes_) {
    NodeInfo* n = up.get();
    if (n == myself_ || (n->flags & (kNodeNoAddr | kNodeHandshake))) continue;
    if (n->link != nullptr && now - n->link->ctime > timeout && n->ping_sent != 0 &&
        now - n->ping_sent > timeout / 2 && now - n->data_received > timeout / 2) {
      FreeLink(n->link);  // reconnect on the next cron
    }
    if (n->link != nullptr && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
      SendPing(n->link, MessageType::kPing);
      continue;
    }
    if (n->ping_sent == 0) continue;
    const int64_t delay = std::min(now - n->ping_sent, now - n->data_received);
    if (delay > timeout && !(n->flags & (kNodePFail | kNodeFail))) {
      spdlog::info("cluster: *** NODE {} possibly failing", n->id);
      n->flags |= kNodePFail;
      Changed(false);
    }
  }
}

std::unique_ptr<Node> StartNode(engine::Engine* engine, int port, std::string* error) {
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
  o.params = &p;
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
