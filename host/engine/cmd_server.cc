// Server commands: TIME ROLE WAIT SHUTDOWN LOLWUT.
#include <chrono>

#include "host/engine/builtins.h"
#include "host/engine/version.h"

namespace vessel::engine {

namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// TIME
void CmdTime(CommandCtx* ctx) {
  using namespace std::chrono;
  const int64_t us = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  W(ctx).Aggregate(resp::AggKind::kArray, 2);
  W(ctx).Bulk(std::to_string(us / 1000000));
  W(ctx).Bulk(std::to_string(us % 1000000));
}

// ROLE
void CmdRole(CommandCtx* ctx) {
  if (E(ctx).repl() != nullptr) return E(ctx).repl()->Role(ctx);
  W(ctx).Aggregate(resp::AggKind::kArray, 3);
  W(ctx).Bulk("master");
  W(ctx).Int(0);
  W(ctx).Aggregate(resp::AggKind::kArray, 0);
}

// WAIT numreplicas timeout
void CmdWait(CommandCtx* ctx) {
  int64_t n, timeout;
  if (!IntArg(ctx, 1, &n) || !IntArg(ctx, 2, &timeout)) return;
  if (timeout < 0) return W(ctx).ErrorLine("ERR timeout is negative");
  if (E(ctx).repl() != nullptr) return E(ctx).repl()->Wait(ctx);
  W(ctx).Int(0);  // no replicas
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
void CmdShutdown(CommandCtx* ctx) {
  Engine::ShutdownFlags flags;
  bool abort = false, any = false;
  for (int i = 1; i < ctx->argc; ++i) {
    const std::string_view o = Arg(ctx, i);
    if (EqualsIgnoreCase(o, "abort")) {
      abort = true;
      continue;
    }
    if (EqualsIgnoreCase(o, "nosave")) {
      if (flags.save == 1) return ReplySyntaxError(ctx);
      flags.save = 0;
    } else if (EqualsIgnoreCase(o, "save")) {
      if (flags.save == 0) return ReplySyntaxError(ctx);
      flags.save = 1;
    } else if (EqualsIgnoreCase(o, "force")) {
      flags.force = true;
    } else if (EqualsIgnoreCase(o, "now")) {
      flags.now = true;
    } else {
      return ReplySyntaxError(ctx);
    }
    any = true;
  }
  if (abort) {
    if (any) return ReplySyntaxError(ctx);
    if (!E(ctx).AbortShutdown()) return W(ctx).ErrorLine("ERR No shutdown in progress.");
    return ReplyOk(ctx);
  }
  // The re-run of a client blocked on a shutdown that waits for replicas: it blocks on while
  // that shutdown waits; one that was aborted (or whose save failed) gets Redis's error.
  if (const std::string* state = S(ctx).BlockedState(); state != nullptr && !state->empty()) {
    const uint64_t generation = std::stoull(*state);
    if (!ctx->can_block || !E(ctx).ShutdownWaiting(generation))
      return W(ctx).ErrorLine("ERR Errors trying to SHUTDOWN. Check logs.");
    ctx->blocked = true;
    ctx->block_state = *state;
    return;
  }
  if (!flags.now && !ctx->can_block)
    return W(ctx).ErrorLine(
        "ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client");
  // A script past busy-reply-threshold: only SHUTDOWN NOSAVE stops it (and the server), as in
  // Redis. Running scripts end at their next hook so the workers can stop: at once when nothing
  // is saved, else once the save succeeded (a failed one keeps the server, and its scripts,
  // running).
  const bool nosave = flags.save == 0;
  BusyProbe* probe = E(ctx).busy_probe();
  if (probe != nullptr) {
    std::string busy;
    const ScriptHold hold = probe->AnyHold(&busy);
    if (hold == ScriptHold::kBusy && !nosave) return W(ctx).ErrorLine(busy);
    if (nosave) probe->OnShutdown();
    // The save and the stop take the whole keyspace, which a running script holds part of (and
    // this worker may serve clients from a busy script's hook, or run without its slot):
    // SHUTDOWN waits for the scripts, unread, then runs.
    const WorkerState& ws = E(ctx).current_worker();
    if ((hold != ScriptHold::kFree || ws.pumping || ws.world_hold != ScriptHold::kFree) &&
        E(ctx).CanPostpone(ctx)) {
      ctx->postponed = true;
      return;
    }
  }
  // Lagging replicas: the client blocks until the shutdown's own thread finishes it.
  uint64_t generation = 0;
  if (E(ctx).BeginShutdown(flags, &generation)) {
    E(ctx).AddShutdownWaiter(S(ctx).id(), S(ctx).worker());
    ctx->blocked = true;
    ctx->block_state = std::to_string(generation);
    return;
  }
  std::string error;
  if (!E(ctx).FinishShutdown(flags, &error)) return W(ctx).ErrorLine(error);
  // Like Redis, no reply: the connection closes as the server stops.
  S(ctx).CloseAfterReply();
}

// LOLWUT [VERSION version]
void CmdLolwut(CommandCtx* ctx) {
  if (ctx->argc == 3 && EqualsIgnoreCase(Arg(ctx, 1), "version")) {
    int64_t v;
    if (!IntArg(ctx, 2, &v)) return;
  } else if (ctx->argc != 1) {
    return ReplySyntaxError(ctx);
  }
  W(ctx).Verbatim("txt", Cat("Vessel ", kVesselVersion, ". Redis ver. ", kRedisVersion, "\n"));
}

constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint64_t kL = kCmdLoading | kCmdStale;
constexpr uint64_t kA = VSL_CMD_ADMIN;

}  // namespace

void RegisterServerCommands(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "TIME", .arity = 1, .flags = kF | kL, .fn = CmdTime, .group = s, .since = "2.6.0",
       .summary = "Returns the server time.", .syntax = "", .complexity = "O(1)",
       .tips = "nondeterministic_output"},
      {.name = "ROLE", .arity = 1, .flags = kF | kL | VSL_CMD_NOSCRIPT, .fn = CmdRole, .group = s,
       .since = "2.8.12", .summary = "Returns the replication role.", .syntax = "",
       .complexity = "O(1)", .acl = "admin dangerous"},
      {.name = "WAIT", .arity = 3, .flags = VSL_CMD_NOSCRIPT, .fn = CmdWait, .group = "generic",
       .since = "3.0.0",
       .summary = "Blocks until the asynchronous replication of all preceding write commands "
         "sent by the connection is completed.", .syntax = "numreplicas timeout",
       .complexity = "O(1)", .tips = "request_policy:all_shards response_policy:agg_min",
       .acl = "!connection"},
      {.name = "SHUTDOWN", .arity = -1,
       .flags = kA | kL | VSL_CMD_NOSCRIPT | kCmdNoMulti | kCmdAllowBusy, .fn = CmdShutdown,
       .group = s, .since = "1.0.0",
       .summary = "Synchronously saves the database(s) to disk and shuts down the Redis server.",
       .syntax = "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", .complexity = "O(N)"},
      {.name = "LOLWUT", .arity = -1, .flags = VSL_CMD_READONLY | VSL_CMD_FAST, .fn = CmdLolwut,
       .group = s, .since = "5.0.0", .summary = "Displays computer art and the Redis version",
       .syntax = "[VERSION version]", .complexity = ""},
  });
  // clang-format on
}

}  // namespace vessel::engine
