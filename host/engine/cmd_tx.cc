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
  AddBuiltins(r, {
                     {"MULTI",
                      1,
                      kF | kL | kCmdAllowBusy | kCmdTxControl,
                      {},
                      CmdMulti,
                      g,
                      "1.2.0",
                      "Starts a transaction.",
                      "",
                      "O(1)"},
                     {"EXEC",
                      1,
                      kL | kCmdSkipSlowlog | kCmdTxControl,
                      {},
                      CmdExec,
                      g,
                      "1.2.0",
                      "Executes all commands in a transaction.",
                      "",
                      "Depends on commands in the transaction"},
                     {"DISCARD",
                      1,
                      kF | kL | kCmdAllowBusy | kCmdTxControl,
                      {},
                      CmdDiscard,
                      g,
                      "2.0.0",
                      "Discards a transaction.",
                      "",
                      "O(N), when N is the number of queued commands"},
                     {"WATCH",
                      -2,
                      kF | kL | kCmdAllowBusy | kCmdTxControl | kCmdExclusiveKeys,
                      {KeyAt(1, VSL_KS_RO, -1)},
                      CmdWatch,
                      g,
                      "2.2.0",
                      "Monitors changes to keys to determine the execution of a transaction.",
                      "key [key ...]",
                      "O(1) for every key."},
                     {"UNWATCH",
                      1,
                      kF | kL | kCmdAllowBusy,
                      {},
                      CmdUnwatch,
                      g,
                      "2.2.0",
                      "Forgets about watched keys of a transaction.",
                      "",
                      "O(1)"},
                 });
}

}  // namespace vessel::engine
