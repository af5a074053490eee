// Replication commands: SYNC PSYNC REPLCONF REPLICAOF SLAVEOF FAILOVER (ROLE and WAIT live with the
// server commands and call into Replication), with Redis 7.0's flags and replies.
#include "host/engine/builtins.h"
#include "host/repl/replication.h"

namespace vessel::repl {
namespace {

// SYNC
void CmdSync(engine::CommandCtx* ctx) { Replication::Of(ctx).Psync(ctx, /*sync=*/true); }
// PSYNC replicationid offset
void CmdPsync(engine::CommandCtx* ctx) { Replication::Of(ctx).Psync(ctx, /*sync=*/false); }
// REPLCONF [option value ...]
void CmdReplconf(engine::CommandCtx* ctx) { Replication::Of(ctx).Replconf(ctx); }
// REPLICAOF host port | REPLICAOF NO ONE
void CmdReplicaOf(engine::CommandCtx* ctx) { Replication::Of(ctx).ReplicaOf(ctx); }
// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]
void CmdFailover(engine::CommandCtx* ctx) { Replication::Of(ctx).Failover(ctx); }

constexpr uint64_t kA = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT;

}  // namespace

void Replication::RegisterCommands(engine::Registry& r) {
  const char* s = "server";
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "SYNC", .arity = 1,
       .flags = kA | engine::kCmdNoMulti | engine::kCmdNoAsyncLoading, .fn = CmdSync,
       .group = s, .since = "1.0.0", .summary = "Internal command used for replication",
       .syntax = "", .complexity = ""},
      {.name = "PSYNC", .arity = -3,
       .flags = kA | engine::kCmdNoMulti | engine::kCmdNoAsyncLoading, .fn = CmdPsync,
       .group = s, .since = "2.8.0", .summary = "Internal command used for replication",
       .syntax = "replicationid offset", .complexity = ""},
      {.name = "REPLCONF", .arity = -1,
       .flags = kA | engine::kCmdLoading | engine::kCmdStale | engine::kCmdAllowBusy,
       .fn = CmdReplconf, .group = s, .since = "3.0.0",
       .summary = "An internal command for configuring the replication stream", .syntax = "",
       .complexity = "O(1)"},
      {.name = "REPLICAOF", .arity = 3,
       .flags = kA | engine::kCmdStale | engine::kCmdNoAsyncLoading, .fn = CmdReplicaOf,
       .group = s, .since = "5.0.0",
       .summary = "Make the server a replica of another instance, or promote it as master.",
       .syntax = "host port", .complexity = "O(1)"},
      {.name = "SLAVEOF", .arity = 3,
       .flags = kA | engine::kCmdStale | engine::kCmdNoAsyncLoading, .fn = CmdReplicaOf,
       .group = s, .since = "1.0.0",
       .summary = "Make the server a replica of another instance, or promote it as master.",
       .syntax = "host port", .complexity = "O(1)"},
      {.name = "FAILOVER", .arity = -1, .flags = kA | engine::kCmdStale, .fn = CmdFailover,
       .group = s, .since = "6.2.0",
       .summary = "Start a coordinated failover between this server and one of its replicas.",
       .syntax = "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]",
       .complexity = "O(1)"},
  });
  // clang-format on
}

}  // namespace vessel::repl
