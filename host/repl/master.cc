// The master side of replication (replication.h): the stream and its backlog, SYNC/PSYNC (a
// partial resynchronization from the backlog here; a full one queued for full_sync.cc),
// REPLCONF, the replicas' output, WAIT, min-replicas-to-write, the keepalive PING, the history
// across a restart, INFO replication and ROLE.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "host/engine/builtins.h"
#include "host/repl/rdb_stream.h"
#include "host/repl/repl_util.h"
#include "host/repl/replication.h"
#include "spdlog/spdlog.h"

namespace vessel::repl {
namespace {

using engine::Cat;
using engine::W;

}  // namespace

std::string RandomReplId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(engine::Engine::WallMs()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(40, '0');
  for (char& c : id) c = kHex[rng() & 15];
  return id;
}

namespace {

// The address part of "ip:port" or "[v6]:port".
std::string PeerIp(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  std::string ip = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (ip.size() >= 2 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
  return ip;
}

}  // namespace

Replication::Replication(engine::Engine* e, persist::Persistence* p)
    : e_(e),
      p_(p),
      p_read_only_(engine::ParamValues::Find("replica-read-only")),
      p_serve_stale_(engine::ParamValues::Find("replica-serve-stale-data")),
      p_min_write_(engine::ParamValues::Find("min-replicas-to-write")),
      p_max_lag_(engine::ParamValues::Find("min-replicas-max-lag")),
      replid_(RandomReplId()),
      replid2_(40, '0') {
  p_->SetSaveInfo([this](std::vector<std::pair<std::string, std::string>>* aux) { SaveInfo(aux); });
}

Replication::~Replication() {
  Stop();
  p_->SetSaveInfo(nullptr);
}

Replication::Payload::~Payload() {
  if (fd >= 0) close(fd);
}

// ---- the stream ----

void Replication::NewReplIdLocked() { replid_ = RandomReplId(); }

void Replication::ShiftReplIdLocked() {
  replid2_ = replid_;
  second_offset_ = static_cast<int64_t>(offset_) + 1;
  NewReplIdLocked();
}

void Replication::CreateBacklogLocked() {
  const auto size = static_cast<size_t>(Param(*e_, "repl-backlog-size"));
  backlog_ = std::make_unique<Backlog>(size, offset_);
}

void Replication::Feed(int db, std::string_view records, int end_db) {
  std::lock_guard l(mu_);
  if (backlog_ == nullptr || IsReplica()) return;
  if (db >= 0 && db != stream_db_) {
    AppendLocked(Command({"SELECT", std::to_string(db)}));
  }
  AppendLocked(records);
  if (db >= 0) stream_db_ = end_db == -2 ? db : end_db;
}

void Replication::AppendLocked(std::string_view bytes) {
  if (bytes.empty()) return;
  backlog_->Append(bytes);
  offset_ = backlog_->end_offset();
  const int64_t hard = e_->settings().obuf[engine::RuntimeSettings::kObufReplica].hard.load(
      std::memory_order_relaxed);
  for (auto& r : replicas_) {
    if (r->dropped) continue;
    r->pending.append(bytes);
    if (hard > 0 && static_cast<int64_t>(r->pending.size()) >= hard) {
      DropReplicaLocked(*r, "output buffer limit");
      continue;
    }
    if (r->state == Replica::State::kOnline) PostDrainLocked(*r);
  }
}

void Replication::PostDrainLocked(Replica& r) {
  if (r.wake_posted) return;
  r.wake_posted = true;
  // Always posted, never run here: the emitter may be a command of the replica's own worker.
  e_->executor(r.worker).Post([this, id = r.session_id, w = r.worker] { Drain(id, w); });
}

Replication::Replica* Replication::FindLocked(uint64_t session_id) {
  for (auto& r : replicas_)
    if (r->session_id == session_id) return r.get();
  return nullptr;
}

void Replication::DropReplicaLocked(Replica& r, const char* why) {
  if (r.dropped) return;
  r.dropped = true;
  r.pending.clear();
  spdlog::warn("disconnecting replica reason=\"{}\" addr={}:{}", why, r.ip, r.port);
  e_->KillSession(r.session_id, r.worker);
}

void Replication::Drain(uint64_t session_id, int worker) {
  auto& sessions = e_->worker_state(worker).sessions;
  auto it = sessions.find(session_id);
  if (it == sessions.end()) return;  // SessionClosed forgets the replica
  engine::Session* s = it->second;
  {
    std::lock_guard l(mu_);
    Replica* r = FindLocked(session_id);
    if (r == nullptr) return;
    r->wake_posted = false;
    if (r->dropped || r->state != Replica::State::kOnline || r->stream_on_ack || r->pending.empty())
      return;
    // Copied rather than swapped out: the buffer keeps its capacity for the next writes.
    s->output() += r->pending;
    r->pending.clear();
  }
  const size_t pending = s->output().size() + s->io()->PendingOutput();
  if (s->OverOutputLimit(pending)) {
    spdlog::warn("closing replica over the output buffer limit addr={} pending={}", s->peer(),
                 pending);
    s->output().clear();
    s->CloseAfterReply();
    s->io()->Close();
    return;
  }
  s->io()->Wake();
}

void Replication::DisconnectReplicasLocked() {
  for (auto& r : replicas_) DropReplicaLocked(*r, "replication id changed");
}

// ---- the history across a restart ----

void Replication::SaveInfo(std::vector<std::pair<std::string, std::string>>* aux) {
  std::lock_guard l(mu_);
  // Redis's rdbPopulateSaveInfo. A master with history: its offset matches the saved data, as a
  // save's point in time holds the whole keyspace and a write reaches the stream while it holds
  // its keys. A replica: its master's id and the offset of the stream it has applied, with the
  // database the link is in, so that after a restart it continues with a partial
  // resynchronization; the link runs a command and advances the offset within one hold of its
  // worker slot (link_applying_ marks the exception).
  if (backlog_ == nullptr) return;
  int db = std::max(stream_db_, 0);
  if (IsReplica()) {
    if (!history_valid_ || link_applying_.load()) return;
    db = link_session_ != nullptr ? link_session_->info().db.load() : master_db_;
  }
  aux->emplace_back("repl-stream-db", std::to_string(db));
  aux->emplace_back("repl-id", replid_);
  aux->emplace_back("repl-offset", std::to_string(offset_));
}

void Replication::ResumeHistory(bool replica) {
  const persist::LoadStats& loaded = p_->startup_load();
  if (loaded.repl_id.empty() || loaded.repl_offset < 0) return;
  std::lock_guard l(mu_);
  if (replica) {
    // As Redis 7.0's loadDataFromDisk on a replica (its cached master made from itself): the
    // link asks PSYNC <id> <offset+1> and continues when its master still has the stream.
    if (loaded.repl_stream_db < 0) return;
    replid_ = loaded.repl_id;
    offset_ = static_cast<uint64_t>(loaded.repl_offset);
    CreateBacklogLocked();
    master_db_ = loaded.repl_stream_db;
    history_valid_ = true;
    spdlog::info("Replication history {} resumed at offset {} from the saved dataset", replid_,
                 offset_);
    return;
  }
  // As Redis 7.0's loadDataFromDisk on a master: a new id, the loaded one as replid2 valid up to
  // its offset, and an empty backlog ending there, so that a replica at exactly that offset
  // continues (+CONTINUE) instead of loading everything again.
  replid2_ = loaded.repl_id;
  offset_ = static_cast<uint64_t>(loaded.repl_offset);
  second_offset_ = loaded.repl_offset + 1;
  CreateBacklogLocked();
  stream_db_ = -1;
  recording_.store(true, std::memory_order_relaxed);
  no_replicas_since_ms_ = e_->Now();
  spdlog::info("Replication history {} resumed at offset {} as the secondary id", replid2_,
               offset_);
}

// ---- SYNC / PSYNC ----

// PSYNC replicationid offset / SYNC
void Replication::Psync(engine::CommandCtx* ctx, bool sync) {
  engine::Session& s = engine::S(ctx);
  const bool rerun = s.BlockedState() != nullptr;                   // woken by the sync thread
  if (s.repl_role() == engine::kReplRoleReplica && !rerun) return;  // ignored, as Redis
  // The payload follows this reply: replies of the same batch not yet sent would land inside it
  // (those already handed to the connection are written before it).
  if (!rerun && !s.output().empty())
    return W(ctx).ErrorLine("ERR SYNC and PSYNC are invalid with pending output");
  // PSYNC replid offset FAILOVER: our master hands over to us (its FAILOVER) when we share its
  // history; its PSYNC then continues as any replica's.
  if (!sync && !rerun && ctx->argc > 3 && engine::EqualsIgnoreCase(ctx->argv[3], "failover")) {
    spdlog::warn("Failover request received for replid {}.", ctx->argv[1]);
    std::lock_guard l(mu_);
    if (!IsReplica()) return W(ctx).ErrorLine("ERR PSYNC FAILOVER can't be sent to a master.");
    if (!engine::EqualsIgnoreCase(ctx->argv[1], replid_))
      return W(ctx).ErrorLine("ERR PSYNC FAILOVER replid must match my replid.");
    UnsetMasterLocked();
    spdlog::info("MASTER MODE enabled (failover request from '{}')", s.peer());
  }
  {
    std::lock_guard l(mu_);
    // Replicas do not synchronize with a master failing over.
    if (failover_state_ != FailoverState::kNone)
      return W(ctx).ErrorLine("NOMASTERLINK Can't SYNC while failing over");
    if (IsReplica() && link_state_ != LinkState::kConnected)
      return W(ctx).ErrorLine("NOMASTERLINK Can't SYNC while not connected with my master");
  }
  Handshake hs;
  {
    std::lock_guard l(mu_);
    for (auto it = handshakes_.begin(); it != handshakes_.end(); ++it) {
      if (it->first == s.id()) {
        hs = it->second;
        break;
      }
    }
  }
  if (hs.ip.empty()) hs.ip = PeerIp(s.peer());
  auto make_replica = [&] {
    auto r = std::make_unique<Replica>();
    r->session_id = s.id();
    r->worker = s.worker();
    r->ip = hs.ip;
    r->port = hs.port;
    r->ack_ms = e_->Now();
    return r;
  };
  auto forget_handshake = [&] {
    std::erase_if(handshakes_, [&](const auto& h) { return h.first == s.id(); });
  };

  // Partial resynchronization (Redis's masterTryPartialResynchronization).
  if (!sync && !rerun) {
    const std::string_view id = ctx->argv[1];
    int64_t psync_offset = 0;
    const bool offset_ok = engine::ParseInt64(ctx->argv[2], &psync_offset);
    std::lock_guard l(mu_);
    const bool history_ok =
        id == replid_ || (id == replid2_ && psync_offset <= second_offset_ && second_offset_ > 0);
    if (offset_ok && history_ok && backlog_ != nullptr && psync_offset >= 0 &&
        backlog_->Covers(static_cast<uint64_t>(psync_offset))) {
      auto r = make_replica();
      r->state = Replica::State::kOnline;
      r->announced = true;
      backlog_->CopyFrom(static_cast<uint64_t>(psync_offset), &r->pending);
      s.set_repl_role(engine::kReplRoleReplica);
      forget_handshake();
      ++sync_partial_ok_;
      spdlog::info(
          "Partial resynchronization request from {}:{} accepted. Sending {} bytes of backlog "
          "starting from offset {}.",
          r->ip, r->port, r->pending.size(), psync_offset);
      Replica& ref = *r;
      replicas_.push_back(std::move(r));
      no_replicas_since_ms_ = 0;
      if (!ref.pending.empty()) PostDrainLocked(ref);
      W(ctx).Simple(hs.psync2 ? Cat("CONTINUE ", replid_) : std::string("CONTINUE"));
      return;
    }
    if (id != "?") ++sync_partial_err_;
  }

  // Full resynchronization. Its snapshot needs the whole keyspace for an instant, which an
  // event loop must not wait for: the sync thread takes it, and the client waits, blocked
  // without keys, until the thread wakes it with the snapshot's offset (or its failure).
  std::unique_lock l(mu_);
  SyncRequest* req = nullptr;
  for (auto& q : sync_requests_)
    if (q.session_id == s.id()) req = &q;
  if (req == nullptr) {
    if (!ctx->can_block) {
      l.unlock();
      return W(ctx).ErrorLine("ERR a full synchronization cannot wait here");
    }
    SyncRequest q;
    q.session_id = s.id();
    q.worker = s.worker();
    q.ip = hs.ip;
    q.port = hs.port;
    q.pre_psync = sync;
    q.eof = hs.eof;
    q.since_ms = engine::Engine::WallMs();
    sync_requests_.push_back(std::move(q));
    forget_handshake();
    s.set_repl_role(
        engine::kReplRoleReplica);  // as Redis flags it at SYNC: SessionClosed cleans up
    sync_cv_.notify_all();
  } else if (req->state == SyncRequest::State::kStarted) {
    const std::string line = Cat("FULLRESYNC ", req->replid, " ", req->offset);
    std::erase_if(sync_requests_, [&](const SyncRequest& q) { return q.session_id == s.id(); });
    ++sync_full_;
    if (Replica* r = FindLocked(s.id())) {
      r->announced = true;
      // The payload may be ready already: its bulk follows the line written now.
      if (r->payload != nullptr || r->snapshot_failed)
        e_->executor(r->worker).Post(
            [this, id = r->session_id, w = r->worker] { StartBulk(id, w); });
    }
    l.unlock();
    if (sync) return;  // SYNC: the payload comes without a +FULLRESYNC line
    return W(ctx).Simple(line);
  } else if (req->state == SyncRequest::State::kFailed) {
    const std::string error = req->error;
    std::erase_if(sync_requests_, [&](const SyncRequest& q) { return q.session_id == s.id(); });
    l.unlock();
    return W(ctx).ErrorLine(Cat("ERR ", error));
  }
  ctx->blocked = true;
  ctx->block_timeout_ms = 0;
  ctx->block_state = "psync";
}

// ---- REPLCONF ----

// REPLCONF option value [option value ...]
void Replication::Replconf(engine::CommandCtx* ctx) {
  engine::Session& s = engine::S(ctx);
  if (ctx->argc % 2 == 0) return engine::ReplySyntaxError(ctx);
  Handshake hs;
  bool have_hs = false;
  for (int i = 1; i < ctx->argc; i += 2) {
    const std::string_view opt = ctx->argv[i], val = ctx->argv[i + 1];
    if (engine::EqualsIgnoreCase(opt, "listening-port")) {
      int64_t port;
      if (!engine::IntArg(ctx, i + 1, &port)) return;
      hs.port = static_cast<int>(port);
      have_hs = true;
    } else if (engine::EqualsIgnoreCase(opt, "ip-address")) {
      if (val.size() > 46)
        return W(ctx).ErrorLine(
            "ERR REPLCONF ip-address provided by replica instance is too long: " +
            std::to_string(val.size()) + " bytes");
      hs.ip.assign(val);
      have_hs = true;
    } else if (engine::EqualsIgnoreCase(opt, "capa")) {
      if (engine::EqualsIgnoreCase(val, "psync2")) hs.psync2 = true;
      if (engine::EqualsIgnoreCase(val, "eof")) hs.eof = true;
      have_hs = true;
    } else if (engine::EqualsIgnoreCase(opt, "ack")) {
      // A replica's acknowledgement: no reply, as Redis.
      if (s.repl_role() != engine::kReplRoleReplica) return;
      int64_t off = 0;
      if (!engine::ParseInt64(val, &off)) return;
      std::lock_guard l(mu_);
      Replica* r = FindLocked(s.id());
      if (r == nullptr) return;
      if (static_cast<uint64_t>(off) > r->ack_offset) r->ack_offset = static_cast<uint64_t>(off);
      r->ack_ms = e_->Now();
      if (r->stream_on_ack) {  // it loaded the diskless payload: its stream starts now
        r->stream_on_ack = false;
        if (!r->pending.empty()) PostDrainLocked(*r);
      }
      WakeWaitersLocked();
      return;
    } else if (engine::EqualsIgnoreCase(opt, "getack")) {
      // Only the master asks this of its replica (answered on the link, replica.cc); no reply.
      return;
    } else if (engine::EqualsIgnoreCase(opt, "rdb-only") ||
               engine::EqualsIgnoreCase(opt, "rdb-filter-only")) {
      // Accepted (redis-cli --rdb); the whole stream follows anyway.
    } else {
      return W(ctx).ErrorLine(Cat("ERR Unrecognized REPLCONF option: ", opt));
    }
  }
  if (have_hs) {
    std::lock_guard l(mu_);
    Handshake* cur = nullptr;
    for (auto& [id, h] : handshakes_)
      if (id == s.id()) cur = &h;
    if (cur == nullptr) {
      handshakes_.emplace_back(s.id(), Handshake{});
      cur = &handshakes_.back().second;
      cur->since_ms = e_->Now();
    }
    if (hs.port != 0) cur->port = hs.port;
    if (!hs.ip.empty()) cur->ip = hs.ip;
    cur->psync2 |= hs.psync2;
    cur->eof |= hs.eof;
  }
  engine::ReplyOk(ctx);
}

// ---- WAIT, min-replicas ----

int Replication::GoodReplicasLocked(int64_t now_ms) const {
  const int64_t max_lag = Param(*e_, "min-replicas-max-lag");
  int good = 0;
  for (const auto& r : replicas_) {
    if (r->dropped || r->state != Replica::State::kOnline) continue;
    if ((now_ms - r->ack_ms) / 1000 <= max_lag) ++good;
  }
  return good;
}

void Replication::WakeWaitersLocked() {
  for (const auto& [id, worker] : wait_waiters_) e_->WakeBlocked(worker, id);
}

// WAIT numreplicas timeout (the engine parsed and checked both)
void Replication::Wait(engine::CommandCtx* ctx) {
  if (IsReplica())
    return W(ctx).ErrorLine(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if "
        "a replica is configured to be writable (which is not the default) writes to replicas "
        "are just local and are not propagated.");
  int64_t n = 0, timeout = 0;
  engine::ParseInt64(ctx->argv[1], &n);
  engine::ParseInt64(ctx->argv[2], &timeout);
  engine::Session& s = engine::S(ctx);
  const std::string* state = s.BlockedState();
  std::lock_guard l(mu_);
  // What this client wrote is in the stream up to now (a later write only raises the bar).
  uint64_t target = offset_;
  if (state != nullptr && !state->empty()) target = std::stoull(*state);
  int64_t acked = 0;
  for (const auto& r : replicas_)
    if (!r->dropped && r->state == Replica::State::kOnline && r->ack_offset >= target) ++acked;
  std::erase_if(wait_waiters_, [&](const auto& w) { return w.first == s.id(); });
  if (acked >= n || !ctx->can_block) return W(ctx).Int(acked);
  wait_waiters_.emplace_back(s.id(), s.worker());
  ctx->blocked = true;
  ctx->block_timeout_ms = timeout;
  ctx->block_state = std::to_string(target);
  // Ask the replicas for their offsets now rather than at their next second (once: the re-runs
  // that their ACKs cause must not ask again, or WAIT would ping-pong until its timeout).
  // Not while a failover waits for a replica's offset to match ours (Redis sends none while
  // writes are paused).
  if (state == nullptr && backlog_ != nullptr && failover_state_ == FailoverState::kNone &&
      !cluster_failover_pause_) {
    AppendLocked(Command({"REPLCONF", "GETACK", "*"}));
  }
}

bool Replication::ReplicasInSync(bool log) {
  std::lock_guard l(mu_);
  const int64_t now = e_->Now();
  int lagging = 0, total = 0;
  for (const auto& r : replicas_) {
    if (r->dropped) continue;
    ++total;
    if (r->ack_offset == offset_) continue;
    ++lagging;
    if (!log) return false;
    const bool online = r->state == Replica::State::kOnline;
    spdlog::warn("Lagging replica {}:{} reported offset {} behind master, lag={}, state={}.", r->ip,
                 r->port, offset_ - r->ack_offset, online ? (now - r->ack_ms) / 1000 : 0,
                 r->state_name());
  }
  if (log && total > 0)
    spdlog::info("{} of {} replicas are in sync when shutting down.", total - lagging, total);
  return lagging == 0;
}

void Replication::RequestAcks() {
  std::lock_guard l(mu_);
  if (backlog_ != nullptr && !replicas_.empty()) AppendLocked(Command({"REPLCONF", "GETACK", "*"}));
}

std::string Replication::Refusal(bool write, bool stale_ok) {
  // Runs before every command: parameters by their cached indexes.
  if (IsReplica()) {
    if (write && e_->ParamInt(p_read_only_) != 0)
      return "READONLY You can't write against a read only replica.";
    if (!stale_ok && e_->ParamInt(p_serve_stale_) == 0) {
      std::lock_guard l(mu_);
      if (link_state_ != LinkState::kConnected)
        return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    }
    return "";
  }
  const int64_t min_write = write ? e_->ParamInt(p_min_write_) : 0;
  if (min_write > 0 && e_->ParamInt(p_max_lag_) > 0 &&
      good_replicas_.load(std::memory_order_relaxed) < min_write)
    return "NOREPLICAS Not enough good replicas to write.";
  return "";
}

// ---- sessions and the cron ----

void Replication::SessionClosed(engine::Session* s) {
  std::lock_guard l(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end(); ++it) {
    Replica& r = **it;
    if (r.session_id != s->id()) continue;
    if (r.payload != nullptr && r.payload->stream != nullptr) r.payload->stream->Leave(r.reader);
    spdlog::info("Connection with replica {}:{} lost.", r.ip, r.port);
    replicas_.erase(it);
    break;
  }
  std::erase_if(handshakes_, [&](const auto& h) { return h.first == s->id(); });
  std::erase_if(sync_requests_, [&](const SyncRequest& q) { return q.session_id == s->id(); });
  if (replicas_.empty() && no_replicas_since_ms_ == 0) no_replicas_since_ms_ = e_->Now();
}

void Replication::Cron(int64_t now_ms) {
  FailoverCron(now_ms);
  std::lock_guard l(mu_);
  // Handshakes of connections that never synchronized.
  std::erase_if(handshakes_, [&](const auto& h) { return now_ms - h.second.since_ms > 600000; });
  if (backlog_ != nullptr) {
    const auto size = static_cast<size_t>(Param(*e_, "repl-backlog-size"));
    if (size != backlog_->size()) backlog_->Resize(size);
  }
  // Replicas waiting for their snapshot get a newline every second, as Redis sends, so that
  // their repl-timeout does not expire during a long snapshot.
  if (now_ms - last_newline_ms_ >= 1000) {
    last_newline_ms_ = now_ms;
    for (auto& r : replicas_) {
      if (r->dropped || r->state != Replica::State::kWaitBgsave) continue;
      e_->executor(r->worker).Post([this, id = r->session_id, w = r->worker] {
        auto& sessions = e_->worker_state(w).sessions;
        auto it = sessions.find(id);
        if (it == sessions.end()) return;
        {
          // Still waiting: a bulk started since would take the newline into its payload.
          std::lock_guard g(mu_);
          Replica* r = FindLocked(id);
          if (r == nullptr || r->state != Replica::State::kWaitBgsave) return;
        }
        it->second->output() += '\n';
        it->second->io()->Wake();
      });
    }
  }
  // A replica that takes no more of a diskless payload for repl-timeout holds back the snapshot
  // thread and every replica sharing the payload: dropped, as Redis drops a stuck diskless
  // replica.
  const int64_t timeout = Param(*e_, "repl-timeout") * 1000;
  for (auto& r : replicas_) {
    if (r->state == Replica::State::kSendBulk && r->payload != nullptr &&
        r->payload->stream != nullptr && now_ms - r->ack_ms > timeout)
      DropReplicaLocked(*r, "timeout (full sync)");
  }
  if (IsReplica()) return;
  // The keepalive PING every repl-ping-replica-period seconds, and replicas that went silent. No
  // PING while a failover waits for a replica's offset to match ours: it would move the offset.
  const int64_t period = Param(*e_, "repl-ping-replica-period") * 1000;
  if (!replicas_.empty() && backlog_ != nullptr && now_ms - last_ping_ms_ >= period &&
      failover_state_ == FailoverState::kNone && !cluster_failover_pause_) {
    last_ping_ms_ = now_ms;
    AppendLocked(Command({"PING"}));
  }
  for (auto& r : replicas_) {
    if (r->state == Replica::State::kOnline && !r->pre_psync && now_ms - r->ack_ms > timeout)
      DropReplicaLocked(*r, "timeout");
  }
  good_replicas_.store(GoodReplicasLocked(now_ms), std::memory_order_relaxed);
  // The backlog of a master without replicas is freed after repl-backlog-ttl.
  const int64_t ttl = Param(*e_, "repl-backlog-ttl") * 1000;
  if (replicas_.empty() && backlog_ != nullptr && ttl > 0 && no_replicas_since_ms_ != 0 &&
      now_ms - no_replicas_since_ms_ > ttl) {
    spdlog::info("Replication backlog freed after {} seconds without connected replicas.",
                 ttl / 1000);
    recording_.store(false, std::memory_order_relaxed);
    backlog_.reset();
    NewReplIdLocked();
    replid2_.assign(40, '0');
    second_offset_ = -1;
  }
  if (!wait_waiters_.empty()) {
    // WAIT re-runs its check once a second at least (the replicas' ACKs wake it sooner).
    WakeWaitersLocked();
    std::erase_if(wait_waiters_, [&](const auto& w) {
      bool alive = false;
      e_->ForEachSession([&](engine::Session* s) {
        alive |= s->id() == w.first && s->info().blocked.load(std::memory_order_relaxed);
      });
      return !alive;
    });
  }
}

// ---- INFO and ROLE ----

void Replication::InfoStats(std::string* out) {
  std::lock_guard l(mu_);
  *out += Cat("sync_full:", sync_full_, "\r\nsync_partial_ok:", sync_partial_ok_,
              "\r\nsync_partial_err:", sync_partial_err_, "\r\n");
}

void Replication::Info(std::string* out) {
  std::lock_guard l(mu_);
  const int64_t now = e_->Now();
  auto line = [&](std::string_view k, auto v) { *out += Cat(k, ":", v, "\r\n"); };
  line("role", std::string_view(IsReplica() ? "slave" : "master"));
  if (IsReplica()) {
    const bool up = link_state_ == LinkState::kConnected;
    line("master_host", master_host_);
    line("master_port", master_port_);
    line("master_link_status", std::string_view(up ? "up" : "down"));
    line("master_last_io_seconds_ago", up ? (now - last_io_ms_) / 1000 : -1);
    line("master_sync_in_progress", link_state_ == LinkState::kTransfer ? 1 : 0);
    // Redis prints 1 until a master link (or its cached state) exists.
    const bool known = up || backlog_ != nullptr;
    line("slave_read_repl_offset", known ? read_offset_ : 1);
    line("slave_repl_offset", known ? offset_ : 1);
    if (link_state_ == LinkState::kTransfer) {
      const double perc =
          transfer_size_ != 0 ? 100.0 * static_cast<double>(transfer_read_) / transfer_size_ : 0;
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f", perc);
      line("master_sync_total_bytes", static_cast<int64_t>(transfer_size_));
      line("master_sync_read_bytes", transfer_read_);
      line("master_sync_left_bytes", static_cast<int64_t>(transfer_size_ - transfer_read_));
      line("master_sync_perc", std::string_view(buf));
      line("master_sync_last_io_seconds_ago", (now - transfer_last_io_ms_) / 1000);
    }
    if (!up)
      line("master_link_down_since_seconds",
           down_since_ms_ != 0 ? (now - down_since_ms_) / 1000 : -1);
    line("slave_priority", Param(*e_, "replica-priority"));
    line("slave_read_only", Param(*e_, "replica-read-only"));
    line("replica_announced", Param(*e_, "replica-announced"));
  }
  line("connected_slaves", replicas_.size());
  if (Param(*e_, "min-replicas-to-write") > 0 && Param(*e_, "min-replicas-max-lag") > 0)
    line("min_slaves_good_slaves", good_replicas_.load());
  int n = 0;
  for (const auto& r : replicas_) {
    const char* state = r->state_name();
    const int64_t lag = r->state == Replica::State::kOnline ? (now - r->ack_ms) / 1000 : 0;
    *out += Cat("slave", n++, ":ip=", r->ip, ",port=", r->port, ",state=", state,
                ",offset=", r->ack_offset, ",lag=", lag, "\r\n");
  }
  line("master_failover_state",
       std::string_view(failover_state_ == FailoverState::kWaitForSync  ? "waiting-for-sync"
                        : failover_state_ == FailoverState::kInProgress ? "failover-in-progress"
                                                                        : "no-failover"));
  line("master_replid", replid_);
  line("master_replid2", replid2_);
  line("master_repl_offset", offset_);
  line("second_repl_offset", second_offset_);
  line("repl_backlog_active", backlog_ != nullptr ? 1 : 0);
  line("repl_backlog_size", Param(*e_, "repl-backlog-size"));
  line("repl_backlog_first_byte_offset", backlog_ != nullptr ? backlog_->first_offset() : 0);
  line("repl_backlog_histlen", backlog_ != nullptr ? backlog_->histlen() : 0);
}

void Replication::Memory(int64_t* backlog, int64_t* queued) {
  std::lock_guard l(mu_);
  *backlog = backlog_ != nullptr ? static_cast<int64_t>(backlog_->size()) : 0;
  *queued = 0;
  for (const auto& r : replicas_) *queued += static_cast<int64_t>(r->pending.size());
}

// ROLE
void Replication::Role(engine::CommandCtx* ctx) {
  std::lock_guard l(mu_);
  resp::Writer& w = W(ctx);
  if (IsReplica()) {
    const char* state = "none";
    switch (link_state_) {
      case LinkState::kNone:
        state = "none";
        break;
      case LinkState::kConnect:
        state = "connect";
        break;
      case LinkState::kConnecting:
        state = "connecting";
        break;
      case LinkState::kHandshake:
        state = "handshake";
        break;
      case LinkState::kTransfer:
        state = "sync";
        break;
      case LinkState::kConnected:
        state = "connected";
        break;
    }
    w.Aggregate(resp::AggKind::kArray, 5);
    w.Bulk("slave");
    w.Bulk(master_host_);
    w.Int(master_port_);
    w.Bulk(state);
    w.Int(link_state_ == LinkState::kConnected ? static_cast<int64_t>(offset_) : -1);
    return;
  }
  w.Aggregate(resp::AggKind::kArray, 3);
  w.Bulk("master");
  w.Int(static_cast<int64_t>(offset_));
  w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(replicas_.size()));
  for (const auto& r : replicas_) {
    w.Aggregate(resp::AggKind::kArray, 3);
    w.Bulk(r->ip);
    w.Bulk(std::to_string(r->port));
    w.Bulk(std::to_string(r->ack_offset));
  }
}

}  // namespace vessel::repl
