// Transaction commands: MULTI EXEC DISCARD WATCH UNWATCH (the work is in multi.cc).
#include "host/engine/builtins.h"

namespace vessel::engine {
namespace {

// MULTI
void CmdMulti(CommandCtx* ctx) {
  if (!ctx->engine->BeginMulti(ctx->session))
    return W(ctx).ErrorLine("ERR MULTI calls can not be nested");
  ReplyOk(ctx);
}

// EXEC
void CmdExec(CommandCtx* ctx) {
  if (!S(ctx).in_multi()) return W(ctx).ErrorLine("ERR EXEC without MULTI");
  ctx->engine->Exec(ctx);
}

// DISCARD
void CmdDiscard(CommandCtx* ctx) {
  if (!S(ctx).in_multi()) return W(ctx).ErrorLine("ERR DISCARD without MULTI");
  ctx->engine->DiscardMulti(ctx->session);
  ctx->engine->Unwatch(ctx->session);
  ReplyOk(ctx);
}

// WATCH key [key ...]
void CmdWatch(CommandCtx* ctx) {
  if (S(ctx).in_multi()) return W(ctx).ErrorLine("ERR WATCH inside MULTI is not allowed");
  ctx->engine->Watch(ctx->session, ctx->argv + 1, ctx->argc - 1);
  ReplyOk(ctx);
}

// UNWATCH
void CmdUnwatch(CommandCtx* ctx) {
  if (!ctx->in_exec) ctx->engine->Unwatch(ctx->session);  // EXEC unwatches when it ends
  ReplyOk(ctx);
}

constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint64_t kL = kCmdLoading | kCmdStale | VSL_CMD_NOSCRIPT;

}  // namespace

void RegisterTransactionCommands(Registry& r) {
  const char* g = "transactions";
  // clang-format off
  AddBuiltins(r, {
      {.name = "MULTI", .arity = 1, .flags = kF | kL | kCmdAllowBusy | kCmdTxControl,
       .fn = CmdMulti, .group = g, .since = "1.2.0", .summary = "Starts a transaction.",
       .syntax = "", .complexity = "O(1)"},
      {.name = "EXEC", .arity = 1, .flags = kL | kCmdSkipSlowlog | kCmdTxControl, .fn = CmdExec,
       .group = g, .since = "1.2.0", .summary = "Executes all commands in a transaction.",
       .syntax = "", .complexity = "Depends on commands in the transaction"},
      {.name = "DISCARD", .arity = 1, .flags = kF | kL | kCmdAllowBusy | kCmdTxControl,
       .fn = CmdDiscard, .group = g, .since = "2.0.0", .summary = "Discards a transaction.",
       .syntax = "", .complexity = "O(N), when N is the number of queued commands"},
      {.name = "WATCH", .arity = -2,
       .flags = kF | kL | kCmdAllowBusy | kCmdTxControl | kCmdExclusiveKeys,
       .keys = {KeyAt(1, VSL_KS_RO, -1)}, .fn = CmdWatch, .group = g, .since = "2.2.0",
       .summary = "Monitors changes to keys to determine the execution of a transaction.",
       .syntax = "key [key ...]", .complexity = "O(1) for every key."},
      {.name = "UNWATCH", .arity = 1, .flags = kF | kL | kCmdAllowBusy, .fn = CmdUnwatch,
       .group = g, .since = "2.2.0", .summary = "Forgets about watched keys of a transaction.",
       .syntax = "", .complexity = "O(1)"},
  });
  // clang-format on
}

}  // namespace vessel::engine
