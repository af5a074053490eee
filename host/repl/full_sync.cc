// Full synchronizations as a master (replication.h): the sync thread starts one snapshot for the
// replicas queued together (a file, or diskless a stream to their sockets), and each replica's
// worker hands its payload to the connection as the connection takes it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "host/repl/rdb_stream.h"
#include "host/repl/repl_util.h"
#include "host/repl/replication.h"
#include "spdlog/spdlog.h"

namespace vessel::repl {
namespace {

using engine::Cat;

constexpr size_t kBulkChunk = 1 << 20;  // RDB bytes handed to a replica's connection at once
constexpr int64_t kBulkRetryMs = 2;     // a full connection is looked at again this soon

}  // namespace

void Replication::SyncThread() {
  std::unique_lock l(mu_);
  for (;;) {
    if (stop_.load()) return;
    // Every queued request: one snapshot serves them all.
    struct Member {
      uint64_t id;
      int worker;
      std::string ip;
      int port;
      bool pre_psync;
    };
    std::vector<Member> members;
    int64_t oldest_ms = std::numeric_limits<int64_t>::max();
    bool all_eof = true;
    for (const auto& q : sync_requests_) {
      if (q.state != SyncRequest::State::kQueued) continue;
      members.push_back({q.session_id, q.worker, q.ip, q.port, q.pre_psync});
      oldest_ms = std::min(oldest_ms, q.since_ms);
      all_eof &= q.eof;
    }
    if (!members.empty() && p_->snapshot_running()) {
      bool attached = false;
      for (auto& q : sync_requests_)
        if (q.state == SyncRequest::State::kQueued) attached |= AttachLocked(q);
      if (attached) continue;
    }
    if (members.empty() || p_->snapshot_running()) {
      // Nothing to start, or another snapshot runs (a BGSAVE, a rewrite, other replicas'): look
      // again shortly.
      sync_cv_.wait_for(l, std::chrono::milliseconds(members.empty() ? 1000 : 50));
      continue;
    }
    // Diskless when every replica of the group reads $EOF: payloads. Its snapshot serves only
    // the replicas there at its start, so it waits repl-diskless-sync-delay for more to come (or
    // until repl-diskless-sync-max-replicas are there), as Redis does.
    const bool diskless = all_eof && Param(*e_, "repl-diskless-sync") != 0;
    if (diskless) {
      const int64_t delay_ms = Param(*e_, "repl-diskless-sync-delay") * 1000;
      const int64_t max_replicas = Param(*e_, "repl-diskless-sync-max-replicas");
      const int64_t waited_ms = engine::Engine::WallMs() - oldest_ms;
      if (waited_ms < delay_ms &&
          (max_replicas == 0 || static_cast<int64_t>(members.size()) < max_replicas)) {
        sync_cv_.wait_for(l,
                          std::chrono::milliseconds(std::min<int64_t>(delay_ms - waited_ms, 100)));
        continue;
      }
    }
    const uint64_t seq = ++rdb_seq_;
    const std::string name = Cat("temp-repl-", getpid(), "-", seq, ".rdb");
    l.unlock();
    auto stream = diskless ? std::make_shared<RdbStream>() : nullptr;
    auto stream_payload = std::make_shared<Payload>();
    stream_payload->stream = stream;
    stream_payload->mark = RandomReplId();  // 40 random hex characters, as Redis's mark
    auto aux = std::make_shared<std::vector<std::pair<std::string, std::string>>>();
    auto on_begin = [&](std::string*) {
      // The snapshot's point in time, with the whole keyspace held.
      std::lock_guard g(mu_);
      bool first = true;
      for (const Member& m : members) {
        SyncRequest* q = nullptr;
        for (auto& r : sync_requests_)
          if (r.session_id == m.id) q = &r;
        if (q == nullptr) continue;  // the client left
        if (first && backlog_ == nullptr) {
          // The first replica of a server without history: a new replication id, as Redis.
          if (replicas_.empty() && !IsReplica()) {
            NewReplIdLocked();
            replid2_.assign(40, '0');
            second_offset_ = -1;
          }
          CreateBacklogLocked();
        }
        first = false;
        auto r = NewReplica(*q, seq);
        if (stream != nullptr) {
          r->payload = stream_payload;
          r->reader = stream->AddReader();
        }
        replicas_.push_back(std::move(r));
        q->state = SyncRequest::State::kStarted;
        q->replid = replid_;
        q->offset = offset_;
        spdlog::info("Starting BGSAVE for SYNC with target: {} replica={}:{} offset={}",
                     diskless ? "replicas sockets" : "disk", m.ip, m.port, offset_);
      }
      if (first) return true;  // every client left: the snapshot is thrown away
      if (stream == nullptr) {
        disk_group_ = seq;
        disk_group_replid_ = replid_;
        disk_group_offset_ = offset_;
      }
      no_replicas_since_ms_ = 0;
      stream_db_ = -1;  // the replicas' database is unknown: the next record selects one
      // Where the stream continues: a master selects anew (stream_db_ = -1 above, Redis's 0
      // then); a replica passes its master's stream on unchanged, so its replica starts in the
      // database the master link is in now (no command of the link runs while it is held).
      const int stream_db =
          IsReplica() && link_session_ != nullptr ? link_session_->info().db.load() : 0;
      *aux = {{"repl-stream-db", std::to_string(stream_db)},
              {"repl-id", replid_},
              {"repl-offset", std::to_string(offset_)}};
      recording_.store(!IsReplica(), std::memory_order_relaxed);
      return true;
    };
    auto post_bulk = [this](const std::vector<std::pair<uint64_t, int>>& group) {
      for (const auto& [id, worker] : group)
        e_->executor(worker).Post([this, id = id, w = worker] { StartBulk(id, w); });
    };
    auto done = [this, seq, stream, post_bulk,
                 path = Cat(p_->dir(), "/", name)](const persist::Snapshot::Result& r) {
      if (!r.ok) spdlog::warn("replica full sync snapshot failed error={}", r.error);
      if (stream != nullptr) return stream->Finish(r.ok);  // the readers see its end
      // The file, opened once and unlinked: each replica reads it at its own position.
      std::shared_ptr<Payload> file;
      if (r.ok) {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
          file = std::make_shared<Payload>();
          file->fd = fd;
          file->size = static_cast<uint64_t>(st.st_size);
        } else if (fd >= 0) {
          close(fd);
        }
        unlink(path.c_str());
      }
      // Every replica of the snapshot, those attached while it ran included.
      std::vector<std::pair<uint64_t, int>> group;
      {
        std::lock_guard g(mu_);
        if (disk_group_ == seq) disk_group_ = 0;
        for (auto& rep : replicas_) {
          if (rep->group != seq) continue;
          rep->payload = file;
          rep->snapshot_failed = file == nullptr;
          group.emplace_back(rep->session_id, rep->worker);
        }
      }
      post_bulk(group);
    };
    std::string error;
    engine::ScriptHold hold = engine::ScriptHold::kFree;
    // Waits for the whole keyspace: this thread runs no event loop. A running script is waited
    // for by trying again (it holds its shards for as long as it runs).
    auto sink = stream == nullptr
                    ? decltype(persist::Snapshot::Target::sink){}
                    : [stream](std::string_view bytes, const std::atomic<bool>& cancelled) {
                        return stream->Write(bytes, cancelled);
                      };
    const bool ok =
        p_->StartReplicationSnapshot(name, done, &error, on_begin, &hold, aux, std::move(sink));
    if (ok && stream != nullptr) {  // the bulk flows as it is written
      std::vector<std::pair<uint64_t, int>> group;
      for (const Member& m : members) group.emplace_back(m.id, m.worker);
      post_bulk(group);
    }
    l.lock();
    if (!ok) {
      if (hold != engine::ScriptHold::kFree || p_->snapshot_running()) {
        sync_cv_.wait_for(l, std::chrono::milliseconds(50));
        continue;
      }
      for (auto& q : sync_requests_)
        for (const Member& m : members)
          if (q.session_id == m.id) {
            q.state = SyncRequest::State::kFailed;
            q.error = error;
          }
      spdlog::warn("replica full sync could not start error={}", error);
    }
    for (const Member& m : members) e_->WakeBlocked(m.worker, m.id);
  }
}

std::unique_ptr<Replication::Replica> Replication::NewReplica(const SyncRequest& q,
                                                              uint64_t group) const {
  auto r = std::make_unique<Replica>();
  r->session_id = q.session_id;
  r->worker = q.worker;
  r->ip = q.ip;
  r->port = q.port;
  r->ack_ms = e_->Now();
  r->pre_psync = q.pre_psync;
  r->group = group;
  return r;
}

bool Replication::AttachLocked(SyncRequest& q) {
  if (disk_group_ == 0) return false;
  const Replica* model = nullptr;
  for (const auto& r : replicas_) {
    if (r->group == disk_group_ && !r->dropped && r->state == Replica::State::kWaitBgsave &&
        r->payload == nullptr && !r->snapshot_failed) {
      model = r.get();
      break;
    }
  }
  if (model == nullptr) return false;
  auto r = NewReplica(q, disk_group_);
  r->pending = model->pending;
  replicas_.push_back(std::move(r));
  q.state = SyncRequest::State::kStarted;
  q.replid = disk_group_replid_;
  q.offset = disk_group_offset_;
  spdlog::info("Waiting for end of BGSAVE for SYNC replica={}:{} offset={}", q.ip, q.port,
               disk_group_offset_);
  e_->WakeBlocked(q.worker, q.session_id);
  return true;
}

void Replication::StartBulk(uint64_t session_id, int worker) {
  {
    std::lock_guard l(mu_);
    Replica* r = FindLocked(session_id);
    // Not yet announced: the +FULLRESYNC re-run starts the bulk. Started already: both the
    // re-run and the snapshot may ask.
    if (r == nullptr || r->dropped || !r->announced || r->state != Replica::State::kWaitBgsave)
      return;
    if (r->snapshot_failed) return DropReplicaLocked(*r, "full sync snapshot failed");
    if (r->payload == nullptr) return;  // the snapshot's end asks again
    auto& sessions = e_->worker_state(worker).sessions;
    auto it = sessions.find(session_id);
    if (it == sessions.end()) return;
    r->state = Replica::State::kSendBulk;
    const Payload& p = *r->payload;
    it->second->output() +=
        p.stream != nullptr ? Cat("$EOF:", p.mark, "\r\n") : Cat("$", p.size, "\r\n");
  }
  SendBulk(session_id, worker);
}

void Replication::SendBulk(uint64_t session_id, int worker) {
  auto& sessions = e_->worker_state(worker).sessions;
  auto it = sessions.find(session_id);
  if (it == sessions.end()) return;  // SessionClosed let go of the payload
  engine::Session* s = it->second;
  bool finished = false;
  {
    std::lock_guard l(mu_);
    Replica* r = FindLocked(session_id);
    if (r == nullptr || r->dropped || r->state != Replica::State::kSendBulk) return;
    Payload& p = *r->payload;
    // Hands the payload over in chunks, as the connection writes them.
    std::string& out = s->output();
    while (!finished && out.size() + s->io()->PendingOutput() < kBulkChunk) {
      if (p.stream != nullptr) {
        const RdbStream::Read got = p.stream->Take(r->reader, kBulkChunk, &out);
        // The connection had room: the replica reads (a replica's ack_ms, while it receives a
        // stream payload, is when it last did; the cron drops one stuck for repl-timeout).
        r->ack_ms = e_->Now();
        if (got == RdbStream::Read::kNothingYet) break;  // the snapshot thread is behind
        if (got == RdbStream::Read::kFailed) return DropReplicaLocked(*r, "full sync failed");
        if (got == RdbStream::Read::kEnd) {
          out += p.mark;
          r->stream_on_ack = !r->pre_psync;  // a SYNC replica never acknowledges
          finished = true;
        }
        continue;
      }
      if (r->sent == p.size) {
        finished = true;
        break;
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(p.size - r->sent, kBulkChunk));
      const size_t at = out.size();
      out.resize(at + want);
      const ssize_t n = pread(p.fd, out.data() + at, want, static_cast<off_t>(r->sent));
      if (n <= 0) {
        out.resize(at);
        return DropReplicaLocked(*r, "full sync file read error");
      }
      out.resize(at + static_cast<size_t>(n));
      r->sent += static_cast<uint64_t>(n);
    }
    if (finished) {
      r->payload.reset();
      r->state = Replica::State::kOnline;
      r->ack_ms = e_->Now();
      spdlog::info("Synchronization with replica {}:{} succeeded", r->ip, r->port);
    }
  }
  s->io()->Wake();
  if (!finished) {
    e_->executor(worker).PostAfter(kBulkRetryMs,
                                   [this, session_id, worker] { SendBulk(session_id, worker); });
  } else {
    Drain(session_id, worker);
  }
}

}  // namespace vessel::repl
