// Blocking commands: parking a client on its keys, waking it when a key gets data, timeouts.
//
// Protocol. A handler that finds nothing calls vsl_api.block(); under the command's key locks the
// host appends a Waiter for the session to each key's queue (Shard::blocked; a blocking command
// holds all its keys' shards exclusively, read-only keys such as XREAD's included, so the queues
// change only under Shard::mu held exclusively: Engine::AddLocks). A write to a key
// (Engine::Touch, under the key's exclusive lock) that leaves the key existing posts a retry to
// the worker of the first waiter the value can serve (one waiting for the key's type), once
// (wake_pending). The retry runs the command again
// under its locks on the waiter's own worker: if it is served, it leaves every queue and, when a
// key still has data, passes the wake-up to that key's next waiter; if not (someone else took the
// data first), it stays where it is in the queues. So waiters are served first come, first
// served per key, a pushed element is handed to exactly one client, and no wake-up is lost: the
// first waiter of a key that its value can serve always has a retry pending. Waiters that park
// with VSL_BLOCK_EVERY_WRITE (readers that do not consume: XREAD, XREADGROUP) each get a retry
// after every write instead, one at a time in queue order (a write marks them queued; the retry
// of the first is posted, and each finished retry posts the next), so readers of one consumer
// group are served in the order they parked, as in Redis. Those with VSL_BLOCK_KEY_GONE also get
// one when the key is deleted or takes a value of another type (XREADGROUP then answers that it
// is gone). A wake-up during a
// command is posted when the (outermost) command ends, after the pub/sub batches holding its
// keyspace events: a listener then gets the write's events ("lpush") before those of the pop that
// serves the waiter ("lpop"), as in Redis.
#include "host/engine/engine.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

// The live entry of key, or null.
const Entry* LiveEntry(Shard& shard, std::string_view key, int64_t now) {
  const Entry* e = shard.table.Find(key, HashKey(key));
  return e != nullptr && (e->expire_ms == 0 || e->expire_ms > now) ? e : nullptr;
}

struct DeferredWake {
  int worker;
  uint64_t session_id, seq;
};
// Wake-ups of the command running on this thread (Engine::PostDeferredWakes posts them).
thread_local std::vector<DeferredWake> t_deferred_wakes;

// The queued VSL_BLOCK_EVERY_WRITE waiter whose retry is due: the first one in the queue, when
// no such waiter has a retry in flight. Null when none is due.
Waiter* NextInChain(std::deque<Waiter>& queue) {
  for (const Waiter& w : queue)
    if ((w.flags & VSL_BLOCK_EVERY_WRITE) && w.wake_pending) return nullptr;
  for (Waiter& w : queue)
    if (w.wake_queued) return &w;
  return nullptr;
}

}  // namespace

bool Engine::BlockClient(CommandCtx* ctx) {
  Session* s = ctx->session;
  ctx->blocked = false;
  if (ctx->top_replies != 0 || s->worker() >= worker_count()) {
    // A handler must either reply or block; sessions without a worker cannot wait.
    ctx->w->out()->resize(ctx->out_mark);
    ctx->w->Error("ERR", Cat("command '", ctx->cmd->name, "' cannot block here"));
    ctx->top_replies = 1;
    ctx->open.clear();
    ctx->reply_invalid = false;
    return false;
  }
  BlockState& b = s->block_;
  b.active = true;
  ++b.seq;
  b.cmd = ctx->cmd;
  b.args.assign(ctx->argv, ctx->argv + ctx->argc);
  b.db = ctx->db->index();
  b.flags = ctx->block_flags;
  b.state = std::move(ctx->block_state);
  // Timeouts past any useful horizon (100 years) wait forever, as an overflowing deadline does
  // in Redis; this also keeps the timer arithmetic from overflowing.
  constexpr int64_t kForeverMs = int64_t{100} * 365 * 24 * 3600 * 1000;
  if (ctx->block_timeout_ms > kForeverMs) ctx->block_timeout_ms = 0;
  b.deadline_ms = ctx->block_timeout_ms > 0 ? ctx->now_ms + ctx->block_timeout_ms : 0;
  b.keys.clear();
  // Wait only on the keys the command takes data from: a BLMOVE destination (INSERT without
  // ACCESS/DELETE) must not make this client the head waiter of a key it cannot be served from,
  // which would starve the clients queued behind it.
  bool any_source = false;
  for (const CommandKey& k : ctx->keys)
    any_source |= (k.flags & (VSL_KS_ACCESS | VSL_KS_DELETE)) != 0;
  for (const CommandKey& k : ctx->keys) {
    if (any_source && !(k.flags & (VSL_KS_ACCESS | VSL_KS_DELETE))) continue;
    bool seen = false;
    for (auto& [db, key] : b.keys) seen |= (key == k.name);
    if (seen) continue;
    b.keys.emplace_back(b.db, std::string(k.name));
    if (k.shard->blocked == nullptr) {
      k.shard->blocked = std::make_unique<StrMap<std::deque<Waiter>>>();
    }
    auto& queue = (*k.shard->blocked)[std::string(k.name)];
    queue.push_back({s->id(), b.seq, s->worker(), k.asked_type, false, b.flags});
  }
  s->info().blocked.store(true, std::memory_order_relaxed);
  blocked_count_.fetch_add(1, std::memory_order_relaxed);
  if (b.deadline_ms != 0) {
    executors_[s->worker()]->PostAfter(ctx->block_timeout_ms,
                                       [this, id = s->id(), seq = b.seq, worker = s->worker()] {
                                         RunOnWorker(worker, [this, id, seq, worker] {
                                           RetryBlocked(worker, id, seq, /*timed_out=*/true);
                                         });
                                       });
  }
  return true;
}

// Leaves (served) or keeps (still blocked) the queues after a re-run; locks are held.
bool Engine::FinishRetry(CommandCtx* ctx) {
  Session* s = ctx->session;
  BlockState& b = s->block_;
  const bool still_blocked = ctx->blocked;
  ctx->blocked = false;  // the re-run never re-registers
  for (const CommandKey& k : ctx->keys) {
    if (k.shard->blocked == nullptr) continue;
    auto it = k.shard->blocked->find(k.name);
    if (it == k.shard->blocked->end()) continue;
    auto& queue = it->second;
    uint32_t flags = 0;
    for (auto w = queue.begin(); w != queue.end(); ++w) {
      if (w->session_id != s->id()) continue;
      flags = w->flags;
      if (still_blocked) {
        w->wake_pending = false;
      } else {
        queue.erase(w);
      }
      break;
    }
    if (queue.empty()) {
      k.shard->blocked->erase(it);
    } else if (!still_blocked || (flags & VSL_BLOCK_EVERY_WRITE)) {
      // Hand the key's remaining data to the next waiter, or the next reader's turn.
      WakeWaiters(*k.db, *k.shard, k.name, /*write=*/false);
    }
  }
  if (still_blocked) {
    ctx->w->out()->resize(ctx->out_mark);  // nothing is sent until the client is served
    return true;
  }
  b.active = false;
  b.args.clear();
  b.keys.clear();
  s->info().blocked.store(false, std::memory_order_relaxed);
  blocked_count_.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

void Engine::UnblockClient(Session* s, bool served) {
  (void)served;
  BlockState& b = s->block_;
  if (!b.active) return;
  // The client leaves its queues under their shards' locks: now, or once the scripts holding
  // them end (its entries match this blocking episode only: a new one is not removed).
  std::vector<ShardRef> shards;
  for (auto& [db, key] : b.keys) shards.push_back({db, dbs_[db]->ShardOf(HashKey(key)), 0});
  WithShardsOrLater(s->worker(), std::move(shards),
                    [this, keys = std::move(b.keys), id = s->id(), seq = b.seq] {
                      for (auto& [db, key] : keys) {
                        Database& d = *dbs_[db];
                        Shard& shard = d.shard(d.ShardOf(HashKey(key)));
                        if (shard.blocked == nullptr) continue;
                        auto it = shard.blocked->find(key);
                        if (it == shard.blocked->end()) continue;
                        auto& queue = it->second;
                        for (auto w = queue.begin(); w != queue.end(); ++w) {
                          if (w->session_id == id && w->block_seq == seq) {
                            queue.erase(w);
                            break;
                          }
                        }
                        if (queue.empty()) {
                          shard.blocked->erase(it);
                        } else {
                          WakeWaiters(d, shard, key, /*write=*/false);
                        }
                      }
                    });
  b.active = false;
  b.args.clear();
  b.keys.clear();
  s->info().blocked.store(false, std::memory_order_relaxed);
  blocked_count_.fetch_sub(1, std::memory_order_relaxed);
}

// Posts a retry to the first waiter that the key's value can serve (a client waits for a value
// of the type its command asked for), unless that waiter already has one pending; after a write,
// queues every VSL_BLOCK_EVERY_WRITE waiter the value can serve and posts the retry of the first
// (the others follow one by one, see the top); when the key is gone (or holds another type),
// posts one to every VSL_BLOCK_KEY_GONE waiter.
void Engine::WakeWaiters(Database& db, Shard& shard, std::string_view key, bool write) {
  auto it = shard.blocked->find(key);
  if (it == shard.blocked->end() || it->second.empty()) return;
  const Entry* e = LiveEntry(shard, key, Now());
  auto post = [this](Waiter& w) {
    w.wake_pending = true;
    w.wake_queued = false;
    if (running_command() != nullptr) {  // after the command, with its events (see the top)
      t_deferred_wakes.push_back({w.worker, w.session_id, w.block_seq});
      return;
    }
    PostToWorker(w.worker, [this, worker = w.worker, id = w.session_id, seq = w.block_seq] {
      RetryBlocked(worker, id, seq, /*timed_out=*/false);
    });
  };
  bool first_seen = false;  // the first waiter of the default rule was found
  for (Waiter& w : it->second) {
    const bool gone = e == nullptr || (w.type_id != 0 && w.type_id != e->type_id());
    if (gone) {
      if ((w.flags & VSL_BLOCK_KEY_GONE) && !w.wake_pending) post(w);
    } else if (w.flags & VSL_BLOCK_EVERY_WRITE) {
      if (write && !w.wake_pending) w.wake_queued = true;
    } else if (!first_seen) {
      first_seen = true;
      if (!w.wake_pending) post(w);
    }
  }
  if (Waiter* next = NextInChain(it->second)) post(*next);
}

void Engine::PostDeferredWakes() {
  if (t_deferred_wakes.empty()) return;
  // The events' batches to other workers go first: a retry posted after them runs after them.
  if (messaging_ != nullptr) messaging_->EndOfBatch(current_worker().index);
  std::vector<DeferredWake> wakes;
  wakes.swap(t_deferred_wakes);
  for (const DeferredWake& d : wakes) {
    PostToWorker(d.worker,
                 [this, d] { RetryBlocked(d.worker, d.session_id, d.seq, /*timed_out=*/false); });
  }
}

void Engine::RetryBlocked(int worker, uint64_t session_id, uint64_t seq, bool timed_out) {
  WorkerState& w = *workers_[worker];
  auto it = w.sessions.find(session_id);
  if (it == w.sessions.end()) return;
  Session* s = it->second;
  BlockState& b = s->block_;
  if (!b.active || b.seq != seq) return;  // served or disconnected meanwhile

  std::vector<std::string_view> argv(b.args.begin(), b.args.end());
  CommandCtx ctx;
  ctx.engine = this;
  ctx.session = s;
  ctx.cmd = b.cmd;
  ctx.argv = argv.data();
  ctx.argc = static_cast<int>(argv.size());
  ctx.db = dbs_[b.db].get();
  ctx.w = &s->writer_;
  ctx.now_ms = Now();
  ctx.can_block = !(timed_out || (b.deadline_ms != 0 && ctx.now_ms >= b.deadline_ms));
  Run(&ctx);
  if (ctx.postponed) {  // a script holds one of its keys: the same retry when the scripts change
    WhenScriptsChange(ctx.script_epoch, worker, [this, worker, session_id, seq, timed_out] {
      RunOnWorker(worker, [this, worker, session_id, seq, timed_out] {
        RetryBlocked(worker, session_id, seq, timed_out);
      });
    });
    return;
  }
  if (!s->blocked()) {
    WorkerStats& st = *stats_[w.index];
    st.Add(st.commands);
    s->io()->Wake();
  }
}

}  // namespace vessel::engine

namespace vessel::engine {

bool Engine::UnblockById(uint64_t id, bool with_error) {
  int worker = -1;
  {
    std::lock_guard l(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second->info().blocked.load(std::memory_order_relaxed))
      return false;
    worker = it->second->worker();
  }
  PostToWorker(worker, [this, worker, id, with_error] {
    auto& sessions = workers_[worker]->sessions;
    auto it = sessions.find(id);
    if (it == sessions.end() || !it->second->blocked()) return;
    Session* s = it->second;
    if (!with_error) return RetryBlocked(worker, id, s->block_.seq, /*timed_out=*/true);
    UnblockClient(s, /*served=*/false);
    s->writer_.ErrorLine("UNBLOCKED client unblocked via CLIENT UNBLOCK");
    s->io()->Wake();
  });
  return true;
}

void Engine::DisconnectBlockedClients() {
  std::vector<std::pair<uint64_t, int>> blocked;  // (session id, worker)
  {
    std::lock_guard l(sessions_mu_);
    for (auto& [id, s] : sessions_) {
      if (s->repl_role() == kReplRoleNone && s->info().blocked.load(std::memory_order_relaxed))
        blocked.emplace_back(id, s->worker());
    }
  }
  for (const auto& [id, worker] : blocked) {
    if (worker >= worker_count()) continue;
    PostToWorker(worker, [this, worker = worker, id = id] {
      auto& sessions = workers_[worker]->sessions;
      auto it = sessions.find(id);
      if (it == sessions.end() || !it->second->blocked()) return;
      Session* s = it->second;
      UnblockClient(s, /*served=*/false);
      s->writer_.ErrorLine(
          "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
          "replica?)");
      s->CloseAfterReply();
      s->io()->Wake();
    });
  }
}

void Engine::WakeBlocked(int worker, uint64_t id) {
  if (worker >= worker_count()) return;
  PostToWorker(worker, [this, worker, id] {
    auto& sessions = workers_[worker]->sessions;
    auto it = sessions.find(id);
    if (it == sessions.end() || !it->second->blocked()) return;
    RetryBlocked(worker, id, it->second->block_.seq, /*timed_out=*/false);
  });
}

}  // namespace vessel::engine
