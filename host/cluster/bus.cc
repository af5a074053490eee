// The cluster bus thread of the node (node.h): links, packets (Redis 7.0's clusterProcessPacket
// and gossip rules) and the cron (clusterCron). Runs on the bus thread with the node's mutex held.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "host/cluster/node.h"
#include "host/engine/engine.h"
#include "spdlog/spdlog.h"

namespace vessel::cluster {
namespace {

constexpr size_t kMaxLinkBuffer = 64u << 20;  // a peer that never reads is dropped

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
    std::unique_lock l(mu_);
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &v, sizeof(v));
    }
    if (broadcast_pong_) {  // migration.cc
      broadcast_pong_ = false;
      BroadcastPong(/*local_replicas_only=*/false);
    }
    if (fds[0].revents & POLLIN) Accept();
    SendQueuedPublishes();
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
    // nodes.conf is written with mu_ released (node.h).
    std::string conf = std::move(pending_conf_);
    pending_conf_.clear();
    const uint64_t seq = pending_conf_seq_;
    l.unlock();
    std::string error;
    if (!conf.empty()) WriteConf(conf, seq, &error);
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
  h.sender = myself_->id;
  // A replica announces its master, and that master's slots and config epoch.
  const NodeInfo* master = MasterOf(myself_);
  if ((myself_->flags & kNodeSlave) && !myself_->master.empty()) h.slaveof = myself_->master;
  h.config_epoch = master != nullptr ? master->config_epoch : myself_->config_epoch;
  h.slots = master != nullptr ? master->slots : myself_->slots;
  h.offset = opt_.repl != nullptr ? opt_.repl->Offset() : 0;
  h.ip = opt_.announce_ip;
  h.flags = myself_->flags;
  h.state = ok_ ? kClusterOk : kClusterFail;
  // A master paused for its replica's manual failover says so (with its offset, above).
  if ((myself_->flags & kNodeMaster) && mf_end_ != 0) h.mflags[0] |= kMsgFlagPaused;
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
    // A manual failover of mine: the paused master's offset is the one to reach. (Redis keeps the
    // first one announced; the latest is kept here, as a write admitted just before the pause may
    // land after the first paused ping.)
    if (mf_end_ != 0 && (myself_->flags & kNodeSlave) && myself_->master == sender->id &&
        (h.mflags[0] & kMsgFlagPaused)) {
      if (mf_master_offset_ == -1)
        spdlog::warn("Received replication offset for paused master manual failover: {}", h.offset);
      mf_master_offset_ = static_cast<int64_t>(h.offset);
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
    // Role: a replica that became a master, a master that became a replica (its slots go), a
    // replica that follows another master.
    if (h.slaveof.empty()) {
      SetAsMaster(sender);
    } else {
      if (sender->flags & kNodeMaster) {
        for (int s = 0; s < kSlots; ++s)
          if (owner_[s] == sender) ClearSlot(s);
        sender->flags =
            static_cast<uint16_t>((sender->flags & ~(kNodeMaster | kNodeMigrateTo)) | kNodeSlave);
        Changed();
      }
      if (sender->master != h.slaveof && Lookup(h.slaveof) != nullptr) {
        sender->master = h.slaveof;
        Changed();
      }
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
  } else if (type == static_cast<uint16_t>(MessageType::kPublish) ||
             type == static_cast<uint16_t>(MessageType::kPublishShard)) {
    // A message published on another node, for my subscribers (from known nodes only, as Redis).
    if (sender == nullptr || !opt_.deliver) return;
    opt_.deliver(m.channel, m.payload, type == static_cast<uint16_t>(MessageType::kPublishShard));
  } else if (type == static_cast<uint16_t>(MessageType::kFailoverAuthRequest)) {
    if (sender == nullptr) return;
    SendFailoverAuthIfNeeded(sender, m);
  } else if (type == static_cast<uint16_t>(MessageType::kFailoverAuthAck)) {
    if (sender == nullptr) return;
    // A vote counts from a master with slots, given in the epoch of my election or later.
    if ((sender->flags & kNodeMaster) && sender->numslots > 0 &&
        h.current_epoch >= failover_auth_epoch_) {
      ++failover_auth_count_;
      if (myself_->flags & kNodeSlave) HandleReplicaFailover();
    }
  } else if (type == static_cast<uint16_t>(MessageType::kMfStart)) {
    // A replica of mine starts a manual failover.
    if (sender == nullptr || !(sender->flags & kNodeSlave) || sender->master != myself_->id) return;
    StartManualFailover(sender);
    SendPing(l, MessageType::kPing);
  }
  // MODULE messages are not handled yet.
}

void Node::Publish(std::string_view channel, std::string_view message, bool shard) {
  {
    std::lock_guard l(publish_mu_);
    publish_queue_.push_back({std::string(channel), std::string(message), shard});
  }
  Wake();
}

// clusterPropagatePublish (to every node with a link) and clusterPropagatePublishShard (to the
// other nodes of my shard: my master or me, and its replicas).
void Node::SendQueuedPublishes() {
  std::vector<Published> queue;
  {
    std::lock_guard l(publish_mu_);
    queue.swap(publish_queue_);
  }
  if (queue.empty()) return;
  const BusHeader header = Header();
  const std::string& shard_master =
      (myself_->flags & kNodeSlave) && !myself_->master.empty() ? myself_->master : myself_->id;
  for (const Published& p : queue) {
    // A packet the receivers' framer would refuse is not sent (the links would close).
    if (p.channel.size() + p.message.size() + kBusHeaderLen + 64 > kMaxLinkBuffer) {
      spdlog::warn("cluster: a message of {} bytes is too large for the bus", p.message.size());
      continue;
    }
    const std::string packet = EncodePublish(header, p.channel, p.message, p.shard);
    const MessageType type = p.shard ? MessageType::kPublishShard : MessageType::kPublish;
    for (auto& [id, n] : nodes_) {
      if (n.get() == myself_ || n->link == nullptr || (n->flags & kNodeHandshake)) continue;
      if (p.shard && n->id != shard_master && n->master != shard_master) continue;
      Send(n->link, type, packet);
    }
  }
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

void Node::CheckSendBuffer(Link* l) {
  const size_t used = l->out.size() - l->out_off;
  if (l->out.capacity() / 4 > used) {
    l->out.erase(0, l->out_off);
    l->out_off = 0;
    l->out.shrink_to_fit();
  }
  const auto allocated = static_cast<int64_t>(l->out.capacity());
  if (opt_.link_sendbuf_limit == 0 || allocated <= opt_.link_sendbuf_limit) return;
  spdlog::warn(
      "Freeing cluster link({} node {}, used memory: {}) due to exceeding send buffer memory "
      "limit.",
      l->inbound ? "from" : "to", l->node != nullptr ? l->node->id : "", allocated);
  FreeLink(l);
  ++links_buffer_limit_exceeded_;
}

// clusterCron, every 100 ms.
void Node::Cron() {
  if (opt_.params != nullptr) {
    opt_.node_timeout_ms = opt_.params->Int(engine::ParamValues::Find("cluster-node-timeout"));
    opt_.require_full_coverage =
        opt_.params->Int(engine::ParamValues::Find("cluster-require-full-coverage")) != 0;
    opt_.replica_validity_factor = static_cast<int>(
        opt_.params->Int(engine::ParamValues::Find("cluster-replica-validity-factor")));
    opt_.replica_no_failover =
        opt_.params->Int(engine::ParamValues::Find("cluster-replica-no-failover")) != 0;
    opt_.ping_replica_period_ms =
        opt_.params->Int(engine::ParamValues::Find("repl-ping-replica-period")) * 1000;
    opt_.allow_replica_migration =
        opt_.params->Int(engine::ParamValues::Find("cluster-allow-replica-migration")) != 0;
    opt_.migration_barrier =
        opt_.params->Int(engine::ParamValues::Find("cluster-migration-barrier"));
    opt_.link_sendbuf_limit =
        opt_.params->Int(engine::ParamValues::Find("cluster-link-sendbuf-limit"));
    const auto endpoint = EndpointType(
        opt_.params->Text(engine::ParamValues::Find("cluster-preferred-endpoint-type")));
    if (endpoint != opt_.endpoint_type) {
      opt_.endpoint_type = endpoint;
      Changed(/*save=*/false);  // the redirections name nodes anew
    }
  }
  const int64_t now = Now();
  ++iteration_;
  const int64_t timeout = opt_.node_timeout_ms;
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  std::erase_if(blacklist_, [&](const auto& e) { return e.second <= now; });
  std::vector<NodeInfo*> all;
  for (auto& [id, n] : nodes_) all.push_back(n.get());
  for (NodeInfo* n : all) {
    if (n->link != nullptr) CheckSendBuffer(n->link);
    if (n->inbound_link != nullptr) CheckSendBuffer(n->inbound_link);
    if (n == myself_ || (n->flags & kNodeNoAddr)) continue;
    if ((n->flags & kNodeHandshake) && now - n->ctime > handshake_timeout) {
      DelNode(n);
      continue;
    }
    if (n->link == nullptr) Connect(n);
  }
  // INFO's figures, as Redis's clusterCron and getClusterConnectionsCount count them.
  uint64_t links_memory = 0;
  for (auto& [id, n] : nodes_) {
    for (const Link* l : {n->link, n->inbound_link}) {
      if (l != nullptr) links_memory += sizeof(Link) + l->out.capacity() + l->in.capacity();
    }
  }
  links_memory_.store(links_memory, std::memory_order_relaxed);
  connections_.store(nodes_.empty() ? 0 : (nodes_.size() - 1) * 2, std::memory_order_relaxed);
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
  ManualFailoverCheckTimeout();
  for (auto& [id, up] : nodes_) {
    NodeInfo* n = up.get();
    if (n == myself_ || (n->flags & (kNodeNoAddr | kNodeHandshake))) continue;
    // A master in a manual failover pings its replica every 100 ms: the offset to reach.
    if ((myself_->flags & kNodeMaster) && mf_end_ != 0 && n->id == mf_replica_ &&
        n->link != nullptr) {
      SendPing(n->link, MessageType::kPing);
      continue;
    }
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
  // clusterUpdateMyselfFlags, and a replica's replication and elections.
  const uint16_t flags = opt_.replica_no_failover ? (myself_->flags | kNodeNoFailover)
                                                  : (myself_->flags & ~kNodeNoFailover);
  if (flags != myself_->flags) {
    myself_->flags = flags;
    Changed();
  }
  if (myself_->flags & kNodeSlave) {
    FollowMaster();
    HandleManualFailover();
    HandleReplicaFailover();
    HandleReplicaMigration();
  }
}

}  // namespace vessel::cluster
