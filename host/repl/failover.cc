// FAILOVER, Redis 6.2's coordinated failover (replication.h): writes pause, the master waits for
// a replica to acknowledge its whole stream, then becomes that replica's replica, and its link's
// PSYNC ... FAILOVER makes the target a master before it answers. Redis 7.0's replies and errors.
#include "host/engine/builtins.h"
#include "host/repl/replication.h"
#include "spdlog/spdlog.h"

namespace vessel::repl {

using engine::W;

Replication::Replica* Replication::FindReplicaLocked(std::string_view host, int port) {
  for (auto& r : replicas_)
    if (!r->dropped && r->port == port && engine::EqualsIgnoreCase(r->ip, host)) return r.get();
  return nullptr;
}

void Replication::ClearFailoverLocked() {
  failover_state_ = FailoverState::kNone;
  failover_host_.clear();
  failover_port_ = 0;
  failover_end_ms_ = 0;
  failover_force_ = false;
  e_->SetWritePause(engine::Engine::WritePause::kFailover, false);
}

void Replication::AbortFailoverLocked(const char* why) {
  if (failover_state_ == FailoverState::kNone) return;
  if (!failover_host_.empty())
    spdlog::info("FAILOVER to {}:{} aborted: {}", failover_host_, failover_port_, why);
  else
    spdlog::info("FAILOVER to any replica aborted: {}", why);
  if (failover_state_ == FailoverState::kInProgress) UnsetMasterLocked();
  ClearFailoverLocked();
}

bool Replication::FailoverDueLocked(int64_t now_ms) {
  if (failover_state_ != FailoverState::kWaitForSync) return false;
  if (failover_end_ms_ != 0 && failover_end_ms_ <= now_ms) {
    if (failover_force_) return true;
    AbortFailoverLocked("Replica never caught up before timeout");
    return false;
  }
  // Writes are paused: the stream ends at offset_ until the failover is over, so a replica that
  // acknowledged offset_ has everything.
  if (!failover_host_.empty()) {
    const Replica* r = FindReplicaLocked(failover_host_, failover_port_);
    return r != nullptr && r->ack_offset == offset_;
  }
  for (const auto& r : replicas_) {
    if (r->dropped || r->ack_offset != offset_) continue;
    failover_host_ = r->ip;  // the target from now on
    failover_port_ = r->port;
    return true;
  }
  return false;
}

void Replication::FailoverCron(int64_t now_ms) {
  {
    std::lock_guard l(mu_);
    if (!FailoverDueLocked(now_ms)) return;
  }
  // A command admitted before the pause may still be running on another worker, its record not
  // yet in the stream: the switch waits for every worker's batch in flight (and for running
  // scripts: the next tick then), so that nothing this server ran is missing from the offset the
  // target acknowledged. Nothing changes under it: no snapshot capture.
  std::string busy;
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  auto world = engine::WorldExclusive::TryTake(e_, &busy, &hold, /*wait_held=*/false,
                                               /*changes=*/false);
  if (world == nullptr) return;
  std::lock_guard l(mu_);
  if (!FailoverDueLocked(now_ms)) return;
  const bool caught_up = [&] {
    const Replica* r = FindReplicaLocked(failover_host_, failover_port_);
    return r != nullptr && r->ack_offset == offset_;
  }();
  if (caught_up)
    spdlog::info("Failover target {}:{} is synced, failing over.", failover_host_, failover_port_);
  else
    spdlog::info("FAILOVER to {}:{} time out exceeded, failing over.", failover_host_,
                 failover_port_);
  failover_state_ = FailoverState::kInProgress;
  SetMasterLocked(failover_host_, failover_port_);
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]
void Replication::Failover(engine::CommandCtx* ctx) {
  if (e_->cluster() != nullptr)
    return W(ctx).ErrorLine(
        "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
  if (ctx->argc == 2 && engine::EqualsIgnoreCase(ctx->argv[1], "abort")) {
    std::lock_guard l(mu_);
    if (failover_state_ == FailoverState::kNone)
      return W(ctx).ErrorLine("ERR No failover in progress.");
    AbortFailoverLocked("Failover manually aborted");
    return engine::ReplyOk(ctx);
  }
  int64_t timeout_ms = 0, port = 0;
  bool force = false;
  std::string_view host;
  bool have_host = false;
  for (int j = 1; j < ctx->argc; ++j) {
    const std::string_view a = ctx->argv[j];
    if (engine::EqualsIgnoreCase(a, "timeout") && j + 1 < ctx->argc && timeout_ms == 0) {
      if (!engine::IntArg(ctx, j + 1, &timeout_ms)) return;
      if (timeout_ms <= 0) return W(ctx).ErrorLine("ERR FAILOVER timeout must be greater than 0");
      ++j;
    } else if (engine::EqualsIgnoreCase(a, "to") && j + 2 < ctx->argc && !have_host) {
      if (!engine::IntArg(ctx, j + 2, &port)) return;
      host = ctx->argv[j + 1];
      have_host = true;
      j += 2;
    } else if (engine::EqualsIgnoreCase(a, "force") && !force) {
      force = true;
    } else {
      return engine::ReplySyntaxError(ctx);
    }
  }
  std::lock_guard l(mu_);
  if (failover_state_ != FailoverState::kNone)
    return W(ctx).ErrorLine("ERR FAILOVER already in progress.");
  if (IsReplica()) return W(ctx).ErrorLine("ERR FAILOVER is not valid when server is a replica.");
  if (replicas_.empty()) return W(ctx).ErrorLine("ERR FAILOVER requires connected replicas.");
  if (force && (timeout_ms == 0 || !have_host))
    return W(ctx).ErrorLine(
        "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
  if (have_host) {
    const Replica* r = FindReplicaLocked(host, static_cast<int>(port));
    if (r == nullptr)
      return W(ctx).ErrorLine("ERR FAILOVER target HOST and PORT is not a replica.");
    if (r->state != Replica::State::kOnline)
      return W(ctx).ErrorLine("ERR FAILOVER target replica is not online.");
    failover_host_.assign(host);
    failover_port_ = static_cast<int>(port);
    spdlog::info("FAILOVER requested to {}:{}.", host, port);
  } else {
    spdlog::info("FAILOVER requested to any replica.");
  }
  failover_end_ms_ = timeout_ms != 0 ? e_->Now() + timeout_ms : 0;
  failover_force_ = force;
  failover_state_ = FailoverState::kWaitForSync;
  e_->SetWritePause(engine::Engine::WritePause::kFailover, true);
  engine::ReplyOk(ctx);
}

}  // namespace vessel::repl
