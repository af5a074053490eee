// Database commands: DBSIZE FLUSHDB FLUSHALL SWAPDB SELECT.
#include <climits>

#include "host/engine/builtins.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// DBSIZE
void CmdDbSize(CommandCtx* ctx) { W(ctx).Int(static_cast<int64_t>(ctx->db->KeyCount())); }

// Parses the [ASYNC|SYNC] of FLUSHDB/FLUSHALL; false after replying a syntax error.
bool FlushMode(CommandCtx* ctx, bool* lazy) {
  *lazy = false;
  if (ctx->argc == 1) return true;
  if (ctx->argc == 2 && EqualsIgnoreCase(Arg(ctx, 1), "async")) return *lazy = true;
  if (ctx->argc == 2 && EqualsIgnoreCase(Arg(ctx, 1), "sync")) return true;
  ReplySyntaxError(ctx);
  return false;
}

// FLUSHDB [ASYNC|SYNC]
void CmdFlushDb(CommandCtx* ctx) {
  bool lazy;
  if (!FlushMode(ctx, &lazy)) return;
  E(ctx).FlushDb(*ctx->db, lazy);
  if (E(ctx).messaging() != nullptr) E(ctx).messaging()->Flushed();
  ReplyOk(ctx);
}

// FLUSHALL [ASYNC|SYNC]
void CmdFlushAll(CommandCtx* ctx) {
  bool lazy;
  if (!FlushMode(ctx, &lazy)) return;
  for (auto& db : E(ctx).dbs()) E(ctx).FlushDb(*db, lazy);
  if (E(ctx).messaging() != nullptr) E(ctx).messaging()->Flushed();
  // Redis 7.0 stops a running background save and, with save rules, writes the empty dataset.
  if (E(ctx).persist() != nullptr) E(ctx).persist()->AfterFlushAll();
  ReplyOk(ctx);
}

// SWAPDB index1 index2
void CmdSwapDb(CommandCtx* ctx) {
  int64_t a, b;
  if (!ParseInt64(Arg(ctx, 1), &a) || a < INT_MIN || a > INT_MAX)
    return W(ctx).ErrorLine("ERR invalid first DB index");
  if (!ParseInt64(Arg(ctx, 2), &b) || b < INT_MIN || b > INT_MAX)
    return W(ctx).ErrorLine("ERR invalid second DB index");
  if (a < 0 || a >= E(ctx).db_count() || b < 0 || b >= E(ctx).db_count())
    return W(ctx).ErrorLine("ERR DB index is out of range");
  if (a != b) {
    Database& x = E(ctx).db(static_cast<int>(a));
    Database& y = E(ctx).db(static_cast<int>(b));
    if (x.ever_volatile() || y.ever_volatile()) {
      x.MarkVolatile();
      y.MarkVolatile();
    }
    if (x.ever_used() || y.ever_used()) {
      x.MarkUsed();
      y.MarkUsed();
    }
    // Data moves; blocked and watching clients stay with their database number.
    for (uint32_t i = 0; i < x.shard_count(); ++i) {
      Shard& sx = x.shard(i);
      Shard& sy = y.shard(i);
      std::swap(sx.table, sy.table);
      std::swap(sx.volatile_keys, sy.volatile_keys);
      std::swap(sx.due, sy.due);
      sx.SyncDueHint();
      sy.SyncDueHint();
      if (sx.due != nullptr) x.MarkDue();
      if (sy.due != nullptr) y.MarkDue();
      sx.SyncHints();
      sy.SyncHints();
    }
    for (Database* d : {&x, &y}) {
      for (uint32_t i = 0; i < d->shard_count(); ++i) {
        Shard& s = d->shard(i);
        if (s.watched != nullptr) {
          // As Redis: a watched key that exists in either database has changed.
          for (auto& [key, watchers] : *s.watched) {
            const uint64_t h = HashKey(key);
            if (x.shard(i).table.Find(key, h) == nullptr &&
                y.shard(i).table.Find(key, h) == nullptr)
              continue;
            for (WatchState* w : watchers) w->dirty.store(true, std::memory_order_relaxed);
          }
        }
        if (s.blocked != nullptr) {
          for (auto& [key, waiters] : *s.blocked) E(ctx).WakeWaiters(*d, s, key);
        }
      }
    }
  }
  ctx->AddChanges(1);  // Redis counts one change, even for SWAPDB n n
  ReplyOk(ctx);
}

// SELECT index
void CmdSelect(CommandCtx* ctx) {
  int db;
  if (!DbArg(ctx, 1, &db)) return;
  S(ctx).set_db(db);
  ReplyOk(ctx);
}

constexpr uint64_t kW = VSL_CMD_WRITE;
constexpr uint64_t kR = VSL_CMD_READONLY;
constexpr uint64_t kF = VSL_CMD_FAST;

}  // namespace

void RegisterDbCommands(Registry& r) {
  AddBuiltins(r, {
                     {"DBSIZE",
                      1,
                      kR | kF,
                      {},
                      CmdDbSize,
                      "server",
                      "1.0.0",
                      "Returns the number of keys in the database.",
                      "",
                      "O(1)",
                      nullptr,
                      "request_policy:all_shards response_policy:agg_sum",
                      "keyspace"},
                     {"FLUSHDB",
                      -1,
                      kW | kCmdGlobalWorld,
                      {},
                      CmdFlushDb,
                      "server",
                      "1.0.0",
                      "Remove all keys from the current database.",
                      "[ASYNC|SYNC]",
                      "O(N)",
                      nullptr,
                      "request_policy:all_shards response_policy:all_succeeded",
                      "keyspace dangerous"},
                     {"FLUSHALL",
                      -1,
                      kW | kCmdGlobalWorld,
                      {},
                      CmdFlushAll,
                      "server",
                      "1.0.0",
                      "Removes all keys from all databases.",
                      "[ASYNC|SYNC]",
                      "O(N)",
                      nullptr,
                      "request_policy:all_shards response_policy:all_succeeded",
                      "keyspace dangerous"},
                     {"SWAPDB",
                      3,
                      kW | kF | kCmdGlobalWorld,
                      {},
                      CmdSwapDb,
                      "server",
                      "4.0.0",
                      "Swaps two Redis databases.",
                      "index1 index2",
                      "O(N)",
                      nullptr,
                      nullptr,
                      "keyspace dangerous"},
                     {"SELECT",
                      2,
                      kCmdLoading | kCmdStale | kF | kCmdTxWorld,
                      {},
                      CmdSelect,
                      "connection",
                      "1.0.0",
                      "Changes the selected database.",
                      "index",
                      "O(1)"},
                 });
}

}  // namespace vessel::engine
