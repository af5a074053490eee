// Expiry commands: EXPIRE PEXPIRE EXPIREAT PEXPIREAT, TTL PTTL EXPIRETIME PEXPIRETIME, PERSIST.
#include <climits>

#include "host/engine/builtins.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// Fires keyspace event `event` (class generic unless given) for declared key i, in its database.
void Notify(CommandCtx* ctx, int i, std::string_view event, int type = kNotifyGeneric) {
  const CommandKey& k = ctx->keys[i];
  E(ctx).NotifyKeyspaceEvent(type, event, k.name, k.db->index());
}

// EXPIRE key seconds [NX|XX|GT|LT] and PEXPIRE, EXPIREAT, PEXPIREAT.
void ExpireGeneric(CommandCtx* ctx, int64_t base_ms, bool seconds) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (int i = 3; i < ctx->argc; ++i) {
    const std::string_view o = Arg(ctx, i);
    if (EqualsIgnoreCase(o, "nx")) {
      nx = true;
    } else if (EqualsIgnoreCase(o, "xx")) {
      xx = true;
    } else if (EqualsIgnoreCase(o, "gt")) {
      gt = true;
    } else if (EqualsIgnoreCase(o, "lt")) {
      lt = true;
    } else {
      return W(ctx).ErrorLine(Cat("ERR Unsupported option ", o));
    }
  }
  if (nx && (xx || gt || lt))
    return W(ctx).ErrorLine("ERR NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt)
    return W(ctx).ErrorLine("ERR GT and LT options at the same time are not compatible");
  int64_t when;
  if (!IntArg(ctx, 2, &when)) return;
  const std::string invalid = Cat("ERR invalid expire time in '", ctx->cmd->name, "' command");
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) return W(ctx).ErrorLine(invalid);
    when *= 1000;
  }
  if (when > INT64_MAX - base_ms) return W(ctx).ErrorLine(invalid);
  when += base_ms;
  Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Int(0);
  const int64_t current = e->expire_ms == 0 ? -1 : e->expire_ms;
  if ((nx && current != -1) || (xx && current == -1) ||
      (gt && (current == -1 || when <= current)) || (lt && current != -1 && when >= current))
    return W(ctx).Int(0);
  CommandKey& k = ctx->keys[0];
  if (when <= ctx->now_ms) {
    E(ctx).Remove(*k.db, *k.shard, e, k.hash);
    Notify(ctx, 0, "del");
  } else {
    E(ctx).SetExpire(*k.db, *k.shard, e, when);
    E(ctx).Touch(*k.db, *k.shard, k.name, k.hash);
    Notify(ctx, 0, "expire");
  }
  W(ctx).Int(1);
}
void CmdExpire(CommandCtx* ctx) { ExpireGeneric(ctx, ctx->now_ms, true); }
void CmdPExpire(CommandCtx* ctx) { ExpireGeneric(ctx, ctx->now_ms, false); }
void CmdExpireAt(CommandCtx* ctx) { ExpireGeneric(ctx, 0, true); }
void CmdPExpireAt(CommandCtx* ctx) { ExpireGeneric(ctx, 0, false); }

// TTL key, PTTL key, EXPIRETIME key, PEXPIRETIME key
void TtlGeneric(CommandCtx* ctx, bool ms, bool absolute) {
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Int(-2);
  if (e->expire_ms == 0) return W(ctx).Int(-1);
  int64_t ttl = absolute ? e->expire_ms : e->expire_ms - ctx->now_ms;
  if (ttl < 0) ttl = 0;
  W(ctx).Int(ms ? ttl : (ttl + 500) / 1000);
}
void CmdTtl(CommandCtx* ctx) { TtlGeneric(ctx, false, false); }
void CmdPTtl(CommandCtx* ctx) { TtlGeneric(ctx, true, false); }
void CmdExpireTime(CommandCtx* ctx) { TtlGeneric(ctx, false, true); }
void CmdPExpireTime(CommandCtx* ctx) { TtlGeneric(ctx, true, true); }

// PERSIST key
void CmdPersist(CommandCtx* ctx) {
  Entry* e = LookupKey(ctx, 0);
  if (e == nullptr || e->expire_ms == 0) return W(ctx).Int(0);
  CommandKey& k = ctx->keys[0];
  E(ctx).SetExpire(*k.db, *k.shard, e, 0);
  E(ctx).Touch(*k.db, *k.shard, k.name, k.hash);
  Notify(ctx, 0, "persist");
  W(ctx).Int(1);
}

constexpr uint64_t kW = VSL_CMD_WRITE;
constexpr uint64_t kR = VSL_CMD_READONLY;
constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint32_t kRO = VSL_KS_RO;
constexpr uint32_t kRW = VSL_KS_RW;

}  // namespace

void RegisterExpireCommands(Registry& r) {
  const char* g = "generic";
  // clang-format off
  AddBuiltins(r, {
      {.name = "EXPIRE", .arity = -3, .flags = kW | kF, .keys = {KeyAt(1, kRW | VSL_KS_UPDATE)},
       .fn = CmdExpire, .group = g, .since = "1.0.0",
       .summary = "Sets the expiration time of a key in seconds.",
       .syntax = "key seconds [NX|XX|GT|LT]", .complexity = "O(1)"},
      {.name = "PEXPIRE", .arity = -3, .flags = kW | kF, .keys = {KeyAt(1, kRW | VSL_KS_UPDATE)},
       .fn = CmdPExpire, .group = g, .since = "2.6.0",
       .summary = "Sets the expiration time of a key in milliseconds.",
       .syntax = "key milliseconds [NX|XX|GT|LT]", .complexity = "O(1)"},
      {.name = "EXPIREAT", .arity = -3, .flags = kW | kF, .keys = {KeyAt(1, kRW | VSL_KS_UPDATE)},
       .fn = CmdExpireAt, .group = g, .since = "1.2.0",
       .summary = "Sets the expiration time of a key to a Unix timestamp.",
       .syntax = "key unix-time-seconds [NX|XX|GT|LT]", .complexity = "O(1)"},
      {.name = "PEXPIREAT", .arity = -3, .flags = kW | kF, .keys = {KeyAt(1, kRW | VSL_KS_UPDATE)},
       .fn = CmdPExpireAt, .group = g, .since = "2.6.0",
       .summary = "Sets the expiration time of a key to a Unix milliseconds timestamp.",
       .syntax = "key unix-time-milliseconds [NX|XX|GT|LT]", .complexity = "O(1)"},
      {.name = "TTL", .arity = 2, .flags = kR | kF, .keys = {KeyAt(1, kRO | VSL_KS_ACCESS)},
       .fn = CmdTtl, .group = g, .since = "1.0.0",
       .summary = "Returns the expiration time in seconds of a key.", .syntax = "key",
       .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "PTTL", .arity = 2, .flags = kR | kF, .keys = {KeyAt(1, kRO | VSL_KS_ACCESS)},
       .fn = CmdPTtl, .group = g, .since = "2.6.0",
       .summary = "Returns the expiration time in milliseconds of a key.", .syntax = "key",
       .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "EXPIRETIME", .arity = 2, .flags = kR | kF, .keys = {KeyAt(1, kRO | VSL_KS_ACCESS)},
       .fn = CmdExpireTime, .group = g, .since = "7.0.0",
       .summary = "Returns the expiration time of a key as a Unix timestamp.", .syntax = "key",
       .complexity = "O(1)"},
      {.name = "PEXPIRETIME", .arity = 2, .flags = kR | kF, .keys = {KeyAt(1, kRO | VSL_KS_ACCESS)},
       .fn = CmdPExpireTime, .group = g, .since = "7.0.0",
       .summary = "Returns the expiration time of a key as a Unix milliseconds timestamp.",
       .syntax = "key", .complexity = "O(1)"},
      {.name = "PERSIST", .arity = 2, .flags = kW | kF, .keys = {KeyAt(1, kRW | VSL_KS_UPDATE)},
       .fn = CmdPersist, .group = g, .since = "2.2.0",
       .summary = "Removes the expiration time of a key.", .syntax = "key", .complexity = "O(1)"},
  });
  // clang-format on
}

}  // namespace vessel::engine
