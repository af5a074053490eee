// Nothing waits for a script: work that meets a script's locks is postponed until the scripts
// change (script_epoch), and the worker running a busy script serves its clients from the
// script's hook (keyspace.h states the rule).
#include "host/engine/engine.h"

namespace vessel::engine {
void Engine::WhenScriptsChange(uint64_t epoch, int worker, absl::AnyInvocable<void() &&> fn) {
  {
    std::lock_guard l(script_waiters_mu_);
    // Checked under the lock ScriptsChanged takes after bumping the epoch: either it sees this
    // waiter, or this sees the new epoch.
    if (script_epoch() == epoch) {
      script_waiters_.emplace_back(worker, std::move(fn));
      return;
    }
  }
  executors_[worker]->Post(std::move(fn));
}

void Engine::ScriptsChanged() {
  std::vector<std::pair<int, absl::AnyInvocable<void() &&>>> waiters;
  {
    std::lock_guard l(script_waiters_mu_);
    script_epoch_.fetch_add(1, std::memory_order_acq_rel);
    waiters.swap(script_waiters_);
  }
  for (auto& [worker, fn] : waiters) executors_[worker]->Post(std::move(fn));
}

bool Engine::CanPostpone(const CommandCtx* ctx) const {
  return ctx->session != nullptr && !ctx->internal && ctx->session->worker() < worker_count();
}

void Engine::PostponeForScripts(Session* s, uint64_t epoch) {
  s->postponed_ = true;
  WhenScriptsChange(epoch, s->worker(), [this, id = s->id(), worker = s->worker()] {
    auto& sessions = workers_[worker]->sessions;
    auto it = sessions.find(id);
    if (it == sessions.end() || !it->second->postponed_) return;
    it->second->postponed_ = false;
    it->second->io()->Wake();
  });
}

void Engine::PostToWorker(int worker, absl::AnyInvocable<void() &&> fn) {
  executors_[worker]->Post(
      [this, worker, fn = std::move(fn)]() mutable { RunOnWorker(worker, std::move(fn)); });
}

void Engine::RunOnWorker(int worker, absl::AnyInvocable<void() &&> fn) {
  const uint64_t epoch = script_epoch();
  {
    WorkerScope scope(this, worker, WorkerScope::kNoScriptWait);
    if (scope.held()) return std::move(fn)();
  }
  WhenScriptsChange(epoch, worker, [this, worker, fn = std::move(fn)]() mutable {
    RunOnWorker(worker, std::move(fn));
  });
}

bool Engine::LockForCommand(LockSet* locks, const CommandCtx* ctx, ScriptHold* hold,
                            std::string* busy) {
  *hold = ScriptHold::kFree;
  if (busy_probe_ == nullptr) return locks->Lock(dbs_);
  const bool can_postpone = CanPostpone(ctx);
  return locks->Lock(dbs_, [&](uint32_t db, uint32_t shard) {
    *hold = busy_probe_->ShardHold(db, shard, busy);
    return *hold == ScriptHold::kBusy || (*hold == ScriptHold::kHeld && can_postpone);
  });
}

bool Engine::LockUnlessScript(LockSet* locks) {
  if (busy_probe_ == nullptr) return locks->Lock(dbs_);
  std::string busy;
  return locks->Lock(dbs_, [&](uint32_t db, uint32_t shard) {
    return busy_probe_->ShardHold(db, shard, &busy) != ScriptHold::kFree;
  });
}

void Engine::PumpWhileBusy() {
  WorkerState& w = current_worker();
  if (w.index >= worker_count() || w.pumping) return;
  w.pumping = true;
  w.pumped = true;
  executors_[w.index]->Pump();
  w.pumping = false;
}

void Engine::EndPumpIfDue() {
  WorkerState& w = current_worker();
  if (!w.pumped || w.pumping) return;
  w.pumped = false;
  executors_[w.index]->EndPump();
}

}  // namespace vessel::engine
