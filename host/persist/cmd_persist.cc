// Persistence commands: SAVE BGSAVE BGREWRITEAOF LASTSAVE, with Redis 7.0's replies and errors.
#include "host/engine/builtins.h"
#include "host/persist/persistence.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {
namespace {

using engine::W;

// SAVE
void CmdSave(engine::CommandCtx* ctx) {
  Persistence& p = Persistence::Of(ctx);
  if (p.snapshot_running()) return W(ctx).ErrorLine("ERR Background save already in progress");
  std::string error;
  if (!p.SaveNow(&error)) {
    spdlog::error("SAVE failed: {}", error);
    return W(ctx).ErrorLine("ERR");
  }
  engine::ReplyOk(ctx);
}

// BGSAVE [SCHEDULE]
void CmdBgSave(engine::CommandCtx* ctx) {
  bool schedule = false;
  if (ctx->argc > 1) {
    if (ctx->argc == 2 && engine::EqualsIgnoreCase(ctx->argv[1], "schedule")) {
      schedule = true;
    } else {
      return engine::ReplySyntaxError(ctx);
    }
  }
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  const std::string reply = Persistence::Of(ctx).BgSave(schedule, ctx->in_exec, &hold);
  if (hold == engine::ScriptHold::kHeld) {  // a script runs: again once the scripts change
    ctx->postponed = ctx->engine->CanPostpone(ctx);
    if (ctx->postponed) return;
    return W(ctx).ErrorLine("ERR a script is running");
  }
  if (reply[0] == '-') return W(ctx).ErrorLine(std::string_view(reply).substr(1));
  W(ctx).Simple(std::string_view(reply).substr(1));
}

// BGREWRITEAOF
void CmdBgRewriteAof(engine::CommandCtx* ctx) {
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  const std::string reply = Persistence::Of(ctx).BgRewriteAof(&hold);
  if (hold == engine::ScriptHold::kHeld) {  // a script runs: again once the scripts change
    ctx->postponed = ctx->engine->CanPostpone(ctx);
    if (ctx->postponed) return;
    return W(ctx).ErrorLine("ERR a script is running");
  }
  if (reply[0] == '-') return W(ctx).ErrorLine(std::string_view(reply).substr(1));
  W(ctx).Simple(std::string_view(reply).substr(1));
}

// LASTSAVE
void CmdLastSave(engine::CommandCtx* ctx) { W(ctx).Int(Persistence::Of(ctx).lastsave()); }

constexpr uint64_t kA = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT;

}  // namespace

void Persistence::RegisterCommands(engine::Registry& r) {
  const char* s = "server";
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "SAVE", .arity = 1,
       .flags = kA | engine::kCmdNoMulti | engine::kCmdNoAsyncLoading | engine::kCmdGlobalWorld,
       .fn = CmdSave, .group = s, .since = "1.0.0",
       .summary = "Synchronously saves the database(s) to disk.", .syntax = "",
       .complexity = "O(N) where N is the total number of keys in all databases"},
      {.name = "BGSAVE", .arity = -1, .flags = kA | engine::kCmdNoAsyncLoading, .fn = CmdBgSave,
       .group = s, .since = "1.0.0", .summary = "Asynchronously saves the database(s) to disk.",
       .syntax = "[SCHEDULE]", .complexity = "O(1)"},
      {.name = "BGREWRITEAOF", .arity = 1, .flags = kA | engine::kCmdNoAsyncLoading,
       .fn = CmdBgRewriteAof, .group = s, .since = "1.0.0",
       .summary = "Asynchronously rewrites the append-only file to disk.", .syntax = "",
       .complexity = "O(1)"},
      {.name = "LASTSAVE", .arity = 1,
       .flags = VSL_CMD_FAST | engine::kCmdLoading | engine::kCmdStale, .fn = CmdLastSave,
       .group = s, .since = "1.0.0",
       .summary = "Returns the Unix timestamp of the last successful save to disk.", .syntax = "",
       .complexity = "O(1)", .tips = "nondeterministic_output", .acl = "admin dangerous"},
  });
  // clang-format on
}

}  // namespace vessel::persist
