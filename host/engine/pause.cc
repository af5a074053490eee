// CLIENT PAUSE and the pauses of writes during FAILOVER and SHUTDOWN: paused commands stay unread
// on their connection until the pause ends.
#include "host/engine/engine.h"

namespace vessel::engine {
void Engine::Pause(int64_t timeout_ms, PauseType type) {
  const int64_t end = Now() + timeout_ms;
  std::lock_guard l(pause_mu_);
  if (pause_type_.load() == 0 || Now() >= pause_end_ms_.load()) {
    pause_type_.store(static_cast<int>(type));
    pause_end_ms_.store(end);
  } else {
    pause_type_.store(std::max(pause_type_.load(), static_cast<int>(type)));
    pause_end_ms_.store(std::max(pause_end_ms_.load(), end));
  }
  const int worker = current_worker().index;
  if (worker < worker_count())
    executors_[worker]->PostAfter(timeout_ms + 1, [this] { EndPauseIfDue(); });
}

void Engine::Unpause() {
  {
    std::lock_guard l(pause_mu_);
    pause_end_ms_.store(0);
  }
  EndPauseIfDue();
}

bool Engine::Paused(const CommandSpec* cmd, const Session* s) {
  int type = pause_type_.load(std::memory_order_relaxed);
  if (type != 0 && Now() >= pause_end_ms_.load(std::memory_order_relaxed)) type = 0;
  if (type == 0 && write_pauses_.load(std::memory_order_relaxed) != 0)
    type = static_cast<int>(PauseType::kWrite);
  if (type == 0) return false;
  if (type == static_cast<int>(PauseType::kAll)) return true;
  if (cmd->flags & (VSL_CMD_WRITE | kCmdMayReplicate)) return true;
  if (cmd->name == "exec") {
    for (const QueuedCommand& q : s->queued_)
      if (q.cmd->flags & (VSL_CMD_WRITE | kCmdMayReplicate)) return true;
  }
  return false;
}

void Engine::Postpone(Session* s) {
  s->postponed_ = true;
  bool ended;
  {
    std::lock_guard l(pause_mu_);
    postponed_.emplace_back(s->id(), s->worker());
    blocked_count_.fetch_add(1, std::memory_order_relaxed);
    // The pause may have ended since the caller looked (its ResumePostponed ran before this
    // entry existed): resume now rather than at the next pause's end.
    ended = !DatasetPaused();
  }
  if (ended) ResumePostponed();
}

void Engine::ForgetPostponed(Session* s) {
  std::lock_guard l(pause_mu_);
  const size_t before = postponed_.size();
  std::erase_if(postponed_, [&](const auto& p) { return p.first == s->id(); });
  if (postponed_.size() != before) blocked_count_.fetch_sub(1, std::memory_order_relaxed);
  s->postponed_ = false;
}

// Ends the pause when its time has come (a later CLIENT PAUSE may have extended it: its own
// timer ends it then) and resumes every postponed session on its worker.
void Engine::EndPauseIfDue() {
  {
    std::lock_guard l(pause_mu_);
    if (Now() < pause_end_ms_.load()) return;
    pause_type_.store(0);
  }
  ResumePostponed();
}

void Engine::SetWritePause(WritePause why, bool on) {
  const int bit = static_cast<int>(why);
  const int before = on ? write_pauses_.fetch_or(bit) : write_pauses_.fetch_and(~bit);
  if (!on && (before & ~bit) == 0) ResumePostponed();
}

void Engine::ResumePostponed() {
  std::vector<std::pair<uint64_t, int>> resume;
  {
    std::lock_guard l(pause_mu_);
    resume.swap(postponed_);
    blocked_count_.fetch_sub(static_cast<int64_t>(resume.size()), std::memory_order_relaxed);
  }
  for (const auto& [id, worker] : resume) {
    if (worker >= worker_count()) continue;
    PostToWorker(worker, [this, id = id, worker = worker] {
      auto& sessions = workers_[worker]->sessions;
      auto it = sessions.find(id);
      if (it == sessions.end() || !it->second->postponed_) return;
      it->second->postponed_ = false;
      it->second->io()->Wake();
    });
  }
}

}  // namespace vessel::engine
