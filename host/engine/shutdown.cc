// SHUTDOWN and SIGTERM: waiting for lagging replicas (Redis 7.0's shutdown-timeout) and the final
// steps. The wait runs on a thread of its own, so no worker blocks on it.
#include "host/engine/engine.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {

bool Engine::BeginShutdown(const ShutdownFlags& flags, uint64_t* generation) {
  std::unique_lock l(shutdown_mu_);
  if (shutdown_state_ != ShutdownState::kIdle) {  // Redis ignores a second one's flags
    *generation = shutdown_generation_;
    return true;
  }
  const int64_t timeout_s = settings_.params.Int(ParamValues::Find("shutdown-timeout"));
  if (flags.now || timeout_s == 0 || repl_ == nullptr || repl_->ReplicasInSync(false)) return false;
  // The thread of a cancelled shutdown is leaving (it only needs this lock to see it).
  if (std::thread old = std::move(shutdown_thread_); old.joinable()) {
    l.unlock();
    old.join();
    l.lock();
    if (shutdown_state_ != ShutdownState::kIdle) {
      *generation = shutdown_generation_;
      return true;
    }
  }
  shutdown_state_ = ShutdownState::kWaiting;
  shutdown_flags_ = flags;
  *generation = ++shutdown_generation_;
  shutdown_deadline_ms_ = Now() + timeout_s * 1000;
  // As Redis: the GETACK goes out unless a pause already holds the stream still.
  if (!DatasetPaused()) repl_->RequestAcks();
  SetWritePause(WritePause::kShutdown, true);
  spdlog::info("Waiting for replicas before shutting down.");
  const uint64_t mine = shutdown_generation_;
  shutdown_thread_ = std::thread([this, mine] {
    std::unique_lock l(shutdown_mu_);
    while (!shutdown_stop_ && shutdown_state_ == ShutdownState::kWaiting &&
           shutdown_generation_ == mine) {
      // The replicas' ACKs arrive on the workers: looked at every 10 ms (the lock is not held
      // while asking, as the replication lock is taken inside).
      const bool due = Now() >= shutdown_deadline_ms_;
      l.unlock();
      const bool ready = due || repl_->ReplicasInSync(false);
      l.lock();
      if (shutdown_stop_ || shutdown_state_ != ShutdownState::kWaiting ||
          shutdown_generation_ != mine)
        break;
      if (ready) {
        shutdown_state_ = ShutdownState::kFinishing;
        const ShutdownFlags f = shutdown_flags_;
        l.unlock();
        std::string error;
        if (FinishShutdown(f, &error)) return;  // the server stops; the waiters' links close
        l.lock();
        CancelShutdownLocked();
        return;
      }
      shutdown_cv_.wait_for(l, std::chrono::milliseconds(10));
    }
  });
  return true;
}

bool Engine::FinishShutdown(const ShutdownFlags& flags, std::string* error) {
  if (repl_ != nullptr) repl_->ReplicasInSync(/*log=*/true);
  // Persistence writes the final snapshot; a failure keeps the server running.
  if (persist_ != nullptr && !persist_->Shutdown(flags.save, flags.force, error)) return false;
  // Running scripts end at their next hook so the workers can stop.
  if (busy_probe_ != nullptr) busy_probe_->OnShutdown();
  RequestShutdown();
  return true;
}

// Under shutdown_mu_: writes resume and the blocked SHUTDOWN clients re-run (to Redis's error).
void Engine::CancelShutdownLocked() {
  shutdown_state_ = ShutdownState::kIdle;
  shutdown_deadline_ms_ = 0;
  ++shutdown_generation_;
  SetWritePause(WritePause::kShutdown, false);
  for (const auto& [id, worker] : shutdown_waiters_) WakeBlocked(worker, id);
  shutdown_waiters_.clear();
  shutdown_cv_.notify_all();
}

bool Engine::AbortShutdown() {
  std::lock_guard l(shutdown_mu_);
  if (shutdown_state_ != ShutdownState::kWaiting) return false;
  CancelShutdownLocked();
  spdlog::info("Shutdown manually aborted.");
  return true;
}

bool Engine::ShutdownWaiting(uint64_t generation) {
  std::lock_guard l(shutdown_mu_);
  return shutdown_state_ != ShutdownState::kIdle && shutdown_generation_ == generation;
}

void Engine::AddShutdownWaiter(uint64_t session_id, int worker) {
  std::lock_guard l(shutdown_mu_);
  std::erase_if(shutdown_waiters_, [&](const auto& w) { return w.first == session_id; });
  shutdown_waiters_.emplace_back(session_id, worker);
}

int64_t Engine::ShutdownRemainingMs() {
  std::lock_guard l(shutdown_mu_);
  if (shutdown_state_ == ShutdownState::kIdle) return -1;
  return std::max<int64_t>(0, shutdown_deadline_ms_ - Now());
}

void Engine::StopShutdownWaiter() {
  std::thread t;
  {
    std::lock_guard l(shutdown_mu_);
    shutdown_stop_ = true;
    shutdown_cv_.notify_all();
    t = std::move(shutdown_thread_);
  }
  if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  if (t.joinable()) t.detach();
}

}  // namespace vessel::engine
