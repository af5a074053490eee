// Replicas and failover of the cluster node (node.h), as Redis 7.0's cluster.c: following a
// master (clusterSetMaster), votes (clusterSendFailoverAuthIfNeeded), the replica's election with
// its rank delay (clusterHandleSlaveFailover), the manual failover (CLUSTER FAILOVER, MFSTART) and
// the takeover of the master's slots. Everything here runs with the node's mutex held.
#include <algorithm>

#include "host/cluster/node.h"
#include "host/engine/engine.h"
#include "spdlog/spdlog.h"

namespace vessel::cluster {
namespace {

constexpr int64_t kManualFailoverTimeoutMs = 5000;  // CLUSTER_MF_TIMEOUT
constexpr int64_t kCantFailoverRelogMs = 10000;     // CLUSTER_CANT_FAILOVER_RELOG_PERIOD

// Why a replica does not fail over (Redis's CLUSTER_CANT_FAILOVER_*).
enum CantFailover { kNone = 0, kDataAge, kWaitingDelay, kExpired, kWaitingVotes };

}  // namespace

uint64_t Node::MyOffset() { return opt_.repl != nullptr ? opt_.repl->Offset() : 0; }

NodeInfo* Node::MasterOf(const NodeInfo* n) const {
  if (!(n->flags & kNodeSlave) || n->master.empty()) return nullptr;
  auto it = nodes_.find(n->master);
  return it == nodes_.end() ? nullptr : it->second.get();
}

// clusterSetNodeAsMaster.
void Node::SetAsMaster(NodeInfo* n) {
  if (n->flags & kNodeMaster) return;
  if (!n->master.empty() && n != myself_) n->flags |= kNodeMigrateTo;
  n->flags = static_cast<uint16_t>((n->flags & ~kNodeSlave) | kNodeMaster);
  n->master.clear();
  Changed();
}

// clusterSetMaster: this node (without slots) replicates `master` from now on.
void Node::SetMaster(NodeInfo* master) {
  if (myself_->flags & kNodeMaster) {
    myself_->flags =
        static_cast<uint16_t>((myself_->flags & ~(kNodeMaster | kNodeMigrateTo)) | kNodeSlave);
    CloseAllSlots();
  }
  myself_->master = master->id;
  FollowMaster();
  ResetManualFailover();
  Changed();
}

// Replication follows the master's current address (also after a restart, and when the master's
// address changes), as clusterCron does.
void Node::FollowMaster() {
  const NodeInfo* m = MasterOf(myself_);
  if (m == nullptr || m->ip.empty() || m->port == 0 || opt_.repl == nullptr) return;
  std::string addr = m->ip + ":" + std::to_string(m->port);
  if (addr == following_) return;
  opt_.repl->Follow(m->ip, m->port);
  following_ = std::move(addr);
}

// clusterSendFailoverAuthIfNeeded: a master with slots votes once per epoch, for a replica whose
// master failed (or any replica of a manual failover), unless it voted for that master's replicas
// in the last two node timeouts or the request's slots have a newer owner.
void Node::SendFailoverAuthIfNeeded(NodeInfo* requester, const BusMessage& request) {
  const BusHeader& h = request.header;
  if (!(myself_->flags & kNodeMaster) || myself_->numslots == 0) return;
  auto deny = [&](const std::string& why) {
    spdlog::warn("cluster: failover auth denied to {}: {}", requester->id, why);
  };
  if (h.current_epoch < current_epoch_)
    return deny("reqEpoch (" + std::to_string(h.current_epoch) + ") < curEpoch(" +
                std::to_string(current_epoch_) + ")");
  if (last_vote_epoch_ == current_epoch_)
    return deny("already voted for epoch " + std::to_string(current_epoch_));
  NodeInfo* master = MasterOf(requester);
  const bool force_ack = (h.mflags[0] & kMsgFlagForceAck) != 0;
  if (requester->flags & kNodeMaster) return deny("it is a master node");
  if (master == nullptr) return deny("I don't know its master");
  if (!(master->flags & kNodeFail) && !force_ack) return deny("its master is up");
  const int64_t now = Now();
  if (now - master->voted_time < opt_.node_timeout_ms * 2)
    return deny("can't vote about this master before " +
                std::to_string(opt_.node_timeout_ms * 2 - (now - master->voted_time)) +
                " milliseconds");
  for (int s = 0; s < kSlots; ++s) {
    if (!h.slots.Test(s) || owner_[s] == nullptr || owner_[s]->config_epoch <= h.config_epoch)
      continue;
    return deny("slot " + std::to_string(s) + " epoch (" + std::to_string(owner_[s]->config_epoch) +
                ") > reqEpoch (" + std::to_string(h.config_epoch) + ")");
  }
  last_vote_epoch_ = current_epoch_;
  master->voted_time = now;
  Changed();
  if (requester->link != nullptr)
    Send(requester->link, MessageType::kFailoverAuthAck, EncodeFailoverAuthAck(Header()));
  spdlog::warn("cluster: failover auth granted to {} for epoch {}", requester->id, current_epoch_);
}

// clusterGetSlaveRank: the replicas of my master that can fail over and have more of its stream.
int Node::ReplicaRank() {
  const NodeInfo* master = MasterOf(myself_);
  if (master == nullptr) return 0;
  const uint64_t mine = MyOffset();
  int rank = 0;
  for (auto& [id, n] : nodes_) {
    if (n.get() == myself_ || !(n->flags & kNodeSlave) || n->master != master->id) continue;
    if (!(n->flags & kNodeNoFailover) && n->repl_offset > mine) ++rank;
  }
  return rank;
}

// clusterLogCantFailover: once per reason, and again every ten seconds.
void Node::LogCantFailover(int reason) {
  const int64_t now = Now();
  if (reason == cant_failover_reason_ && now - last_cant_failover_log_ms_ < kCantFailoverRelogMs)
    return;
  cant_failover_reason_ = reason;
  // A master that just failed: its replicas are expected not to fail over yet.
  const NodeInfo* master = MasterOf(myself_);
  if (master != nullptr && (master->flags & kNodeFail) &&
      now - master->fail_time < opt_.node_timeout_ms + 5000)
    return;
  last_cant_failover_log_ms_ = now;
  static constexpr const char* kWhy[] = {
      "",
      "Disconnected from master for longer than allowed. Please check the "
      "'cluster-replica-validity-factor' configuration option.",
      "Waiting the delay before I can start a new failover.", "Failover attempt expired.",
      "Waiting for votes, but majority still not reached."};
  spdlog::warn("Currently unable to failover: {}", kWhy[reason]);
}

// clusterHandleSlaveFailover, from the cron and when a vote arrives.
void Node::HandleReplicaFailover() {
  const int64_t now = Now();
  const int64_t auth_age = now - failover_auth_time_;
  const int needed_quorum = size_ / 2 + 1;
  const bool manual = mf_end_ != 0 && mf_can_start_;
  const int64_t auth_timeout = std::max<int64_t>(opt_.node_timeout_ms * 2, 2000);
  const int64_t auth_retry_time = auth_timeout * 2;
  NodeInfo* master = MasterOf(myself_);
  if (!(myself_->flags & kNodeSlave) || master == nullptr ||
      (!(master->flags & kNodeFail) && !manual) || (opt_.replica_no_failover && !manual) ||
      master->numslots == 0) {
    cant_failover_reason_ = kNone;
    return;
  }
  // How long this replica has been without its master's data, beyond the node timeout it took to
  // flag the master as failing.
  int64_t data_age = opt_.repl != nullptr ? opt_.repl->MasterSilenceMs(now) : 0;
  if (data_age > opt_.node_timeout_ms) data_age -= opt_.node_timeout_ms;
  if (opt_.replica_validity_factor != 0 &&
      data_age > opt_.ping_replica_period_ms +
                     opt_.node_timeout_ms * int64_t{opt_.replica_validity_factor} &&
      !manual)
    return LogCantFailover(kDataAge);
  if (auth_age > auth_retry_time) {
    // A new election: after half a second or up to one (the FAIL spreads meanwhile), plus a second
    // per replica of the same master with more of its stream.
    rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
    failover_auth_time_ = now + 500 + static_cast<int64_t>((rng_ >> 33) % 500);
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += int64_t{failover_auth_rank_} * 1000;
    if (mf_end_ != 0) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
    }
    spdlog::warn("Start of election delayed for {} milliseconds (rank #{}, offset {}).",
                 failover_auth_time_ - now, failover_auth_rank_, MyOffset());
    // The other replicas of the master learn my offset, and may rank themselves after me.
    BroadcastPong(/*local_replicas_only=*/true);
    return;
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    const int rank = ReplicaRank();
    if (rank > failover_auth_rank_) {
      const int64_t added = int64_t{rank - failover_auth_rank_} * 1000;
      failover_auth_time_ += added;
      failover_auth_rank_ = rank;
      spdlog::warn("Replica rank updated to #{}, added {} milliseconds of delay.", rank, added);
    }
  }
  if (now < failover_auth_time_) return LogCantFailover(kWaitingDelay);
  if (auth_age > auth_timeout) return LogCantFailover(kExpired);
  if (!failover_auth_sent_) {
    ++current_epoch_;
    failover_auth_epoch_ = current_epoch_;
    spdlog::warn("Starting a failover election for epoch {}.", current_epoch_);
    RequestFailoverAuth();
    failover_auth_sent_ = true;
    Changed();
    return;
  }
  if (failover_auth_count_ < needed_quorum) return LogCantFailover(kWaitingVotes);
  spdlog::warn("Failover election won: I'm the new master.");
  if (myself_->config_epoch < failover_auth_epoch_) {
    myself_->config_epoch = failover_auth_epoch_;
    spdlog::warn("configEpoch set to {} after successful failover", myself_->config_epoch);
  }
  ReplaceMyMaster();
}

// clusterFailoverReplaceYourMaster: master now, with the old master's slots, announced to all.
void Node::ReplaceMyMaster() {
  NodeInfo* old = MasterOf(myself_);
  if (!(myself_->flags & kNodeSlave) || old == nullptr) return;
  SetAsMaster(myself_);
  if (opt_.repl != nullptr) opt_.repl->Promote();
  following_.clear();
  for (int s = 0; s < kSlots; ++s) {
    if (!old->slots.Test(s)) continue;
    ClearSlot(s);
    SetSlot(s, myself_);
  }
  UpdateState();
  Changed();
  BroadcastPong(/*local_replicas_only=*/false);
  ResetManualFailover();
}

// clusterRequestFailoverAuth: FAILOVER_AUTH_REQUEST to every node, flagged FORCEACK in a manual
// failover (vote although the master is up).
void Node::RequestFailoverAuth() {
  BusHeader h = Header();
  if (mf_end_ != 0) h.mflags[0] |= kMsgFlagForceAck;
  const std::string packet = EncodeFailoverAuthRequest(h);
  for (auto& [id, n] : nodes_) {
    if (n.get() == myself_ || n->link == nullptr || (n->flags & kNodeHandshake)) continue;
    Send(n->link, MessageType::kFailoverAuthRequest, packet);
  }
}

// clusterBroadcastPong: to every node, or to the replicas of my master (and of me).
void Node::BroadcastPong(bool local_replicas_only) {
  for (auto& [id, up] : nodes_) {
    NodeInfo* n = up.get();
    if (n == myself_ || n->link == nullptr || (n->flags & kNodeHandshake)) continue;
    if (local_replicas_only) {
      const bool local = (n->flags & kNodeSlave) && !n->master.empty() &&
                         (n->master == myself_->id || n->master == myself_->master);
      if (!local) continue;
    }
    SendPing(n->link, MessageType::kPong);
  }
}

// clusterCountNonFailingSlaves.
int Node::WorkingReplicas(const NodeInfo* master) const {
  int n = 0;
  for (auto& [id, r] : nodes_)
    if ((r->flags & kNodeSlave) && r->master == master->id && !(r->flags & kNodeFail)) ++n;
  return n;
}

// Replica migration (clusterCron's orphaned-master count and clusterHandleSlaveMigration): a
// master that had replicas and has no working one left gets one from a master with the most
// working replicas (at least two, more than cluster-migration-barrier), namely the replica with
// the smallest id, once it has been orphaned for five seconds and the cluster is up.
void Node::HandleReplicaMigration() {
  NodeInfo* mymaster = MasterOf(myself_);
  if (mymaster == nullptr) return;
  // A master that has (had) replicas is a migration target (Redis's MIGRATE_TO, which
  // clusterNodeAddSlave sets).
  for (auto& [id, r] : nodes_) {
    if (!(r->flags & kNodeSlave)) continue;
    if (NodeInfo* m = MasterOf(r.get()); m != nullptr && (m->flags & kNodeMaster))
      m->flags |= kNodeMigrateTo;
  }
  int orphaned = 0, max_replicas = 0, mine = 0;
  for (auto& [id, up] : nodes_) {
    NodeInfo* n = up.get();
    if (n == myself_ || (n->flags & (kNodeNoAddr | kNodeHandshake))) continue;
    if (!(n->flags & kNodeMaster) || (n->flags & kNodeFail)) continue;
    const int ok = WorkingReplicas(n);
    if (ok == 0 && n->numslots > 0 && (n->flags & kNodeMigrateTo)) ++orphaned;
    max_replicas = std::max(max_replicas, ok);
    if (n == mymaster) mine = ok;
  }
  if (orphaned == 0 || max_replicas < 2 || mine != max_replicas || !opt_.allow_replica_migration ||
      !ok_)
    return;
  int ok_replicas = 0;
  for (auto& [id, r] : nodes_)
    if ((r->flags & kNodeSlave) && r->master == mymaster->id &&
        !(r->flags & (kNodeFail | kNodePFail)))
      ++ok_replicas;
  if (ok_replicas <= opt_.migration_barrier) return;
  const int64_t now = Now();
  NodeInfo* target = nullptr;
  const NodeInfo* candidate = myself_;
  for (auto& [id, up] : nodes_) {
    NodeInfo* n = up.get();
    bool is_orphaned =
        (n->flags & kNodeMaster) && !(n->flags & kNodeFail) && (n->flags & kNodeMigrateTo);
    const int ok = (n->flags & kNodeMaster) ? WorkingReplicas(n) : 0;
    if (ok > 0) is_orphaned = false;
    if (is_orphaned) {
      if (target == nullptr && n->numslots > 0) target = n;
      if (n->orphaned_time == 0) n->orphaned_time = now;
    } else {
      n->orphaned_time = 0;
    }
    if (ok == max_replicas) {
      for (auto& [rid, r] : nodes_)
        if ((r->flags & kNodeSlave) && r->master == n->id && r->id < candidate->id)
          candidate = r.get();
    }
  }
  if (target != nullptr && candidate == myself_ && now - target->orphaned_time > 5000) {
    spdlog::warn("Migrating to orphaned master {}", target->id);
    SetMaster(target);
  }
}

// resetManualFailover: a master that paused its writes for the failover resumes them.
void Node::ResetManualFailover() {
  if (!mf_replica_.empty() && opt_.repl != nullptr) opt_.repl->PauseWrites(false);
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_.clear();
  mf_master_offset_ = -1;
}

void Node::ManualFailoverCheckTimeout() {
  if (mf_end_ != 0 && mf_end_ < Now()) {
    spdlog::warn("Manual failover timed out.");
    ResetManualFailover();
  }
}

// clusterHandleManualFailover: the replica may start once it applied the paused master's stream.
void Node::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_master_offset_ == -1) return;
  if (static_cast<uint64_t>(mf_master_offset_) == MyOffset()) {
    mf_can_start_ = true;
    spdlog::warn("All master replication stream processed, manual failover can start.");
  }
}

// MFSTART from a replica of mine: writes pause until the failover ends or times out, and the
// pings to that replica carry the PAUSED flag and the offset it must reach.
void Node::StartManualFailover(NodeInfo* replica) {
  ResetManualFailover();
  mf_end_ = Now() + kManualFailoverTimeoutMs;
  mf_replica_ = replica->id;
  if (opt_.repl != nullptr) opt_.repl->PauseWrites(true);
  spdlog::warn("Manual failover requested by replica {}.", replica->id);
}

}  // namespace vessel::cluster
