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
  engine::AddBuiltins(
      r, {
             {"SAVE",
              1,
              kA | engine::kCmdNoMulti | engine::kCmdNoAsyncLoading | engine::kCmdGlobalWorld,
              {},
              CmdSave,
              s,
              "1.0.0",
              "Synchronously saves the database(s) to disk.",
              "",
              "O(N) where N is the total number of keys in all databases"},
             {"BGSAVE",
              -1,
              kA | engine::kCmdNoAsyncLoading,
              {},
              CmdBgSave,
              s,
              "1.0.0",
              "Asynchronously saves the database(s) to disk.",
              "[SCHEDULE]",
              "O(1)"},
             {"BGREWRITEAOF",
              1,
              kA | engine::kCmdNoAsyncLoading,
              {},
              CmdBgRewriteAof,
              s,
              "1.0.0",
              "Asynchronously rewrites the append-only file to disk.",
              "",
              "O(1)"},
             {"LASTSAVE",
              1,
              VSL_CMD_FAST | engine::kCmdLoading | engine::kCmdStale,
              {},
              CmdLastSave,
              s,
              "1.0.0",
              "Returns the Unix timestamp of the last successful save to disk.",
              "",
              "O(1)",
              nullptr,
              "nondeterministic_output",
              "admin dangerous"},
         });
}

}  // namespace vessel::persist
