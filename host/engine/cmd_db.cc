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

// Recorded even when there was nothing to delete, as Redis propagates FLUSHDB and FLUSHALL.
void RecordAlways(CommandCtx* ctx) {
  ctx->propagate_set = true;
  ctx->propagated.emplace_back(ctx->argv, ctx->argv + ctx->argc);
}

// FLUSHDB [ASYNC|SYNC]
void CmdFlushDb(CommandCtx* ctx) {
  bool lazy;
  if (!FlushMode(ctx, &lazy)) return;
  E(ctx).FlushDb(*ctx->db, lazy);
  if (E(ctx).messaging() != nullptr) E(ctx).messaging()->Flushed();
  RecordAlways(ctx);
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
  RecordAlways(ctx);
  ReplyOk(ctx);
}

// SWAPDB index1 index2
void CmdSwapDb(CommandCtx* ctx) {
  if (E(ctx).cluster() != nullptr)
    return W(ctx).ErrorLine("ERR SWAPDB is not allowed in cluster mode");
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
  // Redis parses the index before refusing any but 0 in cluster mode.
  if (int64_t id; E(ctx).cluster() != nullptr && ParseInt64(Arg(ctx, 1), &id) && id != 0)
    return W(ctx).ErrorLine("ERR SELECT is not allowed in cluster mode");
  if (!DbArg(ctx, 1, &db)) return;
  S(ctx).set_db(db);
  ReplyOk(ctx);
}

constexpr uint64_t kW = VSL_CMD_WRITE;
constexpr uint64_t kR = VSL_CMD_READONLY;
constexpr uint64_t kF = VSL_CMD_FAST;

}  // namespace

void RegisterDbCommands(Registry& r) {
  // clang-format off
  AddBuiltins(r, {
      {.name = "DBSIZE", .arity = 1, .flags = kR | kF, .fn = CmdDbSize, .group = "server",
       .since = "1.0.0", .summary = "Returns the number of keys in the database.", .syntax = "",
       .complexity = "O(1)", .tips = "request_policy:all_shards response_policy:agg_sum",
       .acl = "keyspace"},
      {.name = "FLUSHDB", .arity = -1, .flags = kW | kCmdGlobalWorld, .fn = CmdFlushDb,
       .group = "server", .since = "1.0.0", .summary = "Remove all keys from the current database.",
       .syntax = "[ASYNC|SYNC]", .complexity = "O(N)",
       .tips = "request_policy:all_shards response_policy:all_succeeded",
       .acl = "keyspace dangerous"},
      {.name = "FLUSHALL", .arity = -1, .flags = kW | kCmdGlobalWorld, .fn = CmdFlushAll,
       .group = "server", .since = "1.0.0", .summary = "Removes all keys from all databases.",
       .syntax = "[ASYNC|SYNC]", .complexity = "O(N)",
       .tips = "request_policy:all_shards response_policy:all_succeeded",
       .acl = "keyspace dangerous"},
      {.name = "SWAPDB", .arity = 3, .flags = kW | kF | kCmdGlobalWorld, .fn = CmdSwapDb,
       .group = "server", .since = "4.0.0", .summary = "Swaps two Redis databases.",
       .syntax = "index1 index2", .complexity = "O(N)", .acl = "keyspace dangerous"},
      {.name = "SELECT", .arity = 2, .flags = kCmdLoading | kCmdStale | kF | kCmdTxWorld,
       .fn = CmdSelect, .group = "connection", .since = "1.0.0",
       .summary = "Changes the selected database.", .syntax = "index", .complexity = "O(1)"},
  });
  // clang-format on
}

}  // namespace vessel::engine
