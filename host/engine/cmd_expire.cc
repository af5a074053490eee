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
  AddBuiltins(r, {
                     {"EXPIRE",
                      -3,
                      kW | kF,
                      {KeyAt(1, kRW | VSL_KS_UPDATE)},
                      CmdExpire,
                      g,
                      "1.0.0",
                      "Sets the expiration time of a key in seconds.",
                      "key seconds [NX|XX|GT|LT]",
                      "O(1)"},
                     {"PEXPIRE",
                      -3,
                      kW | kF,
                      {KeyAt(1, kRW | VSL_KS_UPDATE)},
                      CmdPExpire,
                      g,
                      "2.6.0",
                      "Sets the expiration time of a key in milliseconds.",
                      "key milliseconds [NX|XX|GT|LT]",
                      "O(1)"},
                     {"EXPIREAT",
                      -3,
                      kW | kF,
                      {KeyAt(1, kRW | VSL_KS_UPDATE)},
                      CmdExpireAt,
                      g,
                      "1.2.0",
                      "Sets the expiration time of a key to a Unix timestamp.",
                      "key unix-time-seconds [NX|XX|GT|LT]",
                      "O(1)"},
                     {"PEXPIREAT",
                      -3,
                      kW | kF,
                      {KeyAt(1, kRW | VSL_KS_UPDATE)},
                      CmdPExpireAt,
                      g,
                      "2.6.0",
                      "Sets the expiration time of a key to a Unix milliseconds timestamp.",
                      "key unix-time-milliseconds [NX|XX|GT|LT]",
                      "O(1)"},
                     {"TTL",
                      2,
                      kR | kF,
                      {KeyAt(1, kRO | VSL_KS_ACCESS)},
                      CmdTtl,
                      g,
                      "1.0.0",
                      "Returns the expiration time in seconds of a key.",
                      "key",
                      "O(1)",
                      nullptr,
                      "nondeterministic_output"},
                     {"PTTL",
                      2,
                      kR | kF,
                      {KeyAt(1, kRO | VSL_KS_ACCESS)},
                      CmdPTtl,
                      g,
                      "2.6.0",
                      "Returns the expiration time in milliseconds of a key.",
                      "key",
                      "O(1)",
                      nullptr,
                      "nondeterministic_output"},
                     {"EXPIRETIME",
                      2,
                      kR | kF,
                      {KeyAt(1, kRO | VSL_KS_ACCESS)},
                      CmdExpireTime,
                      g,
                      "7.0.0",
                      "Returns the expiration time of a key as a Unix timestamp.",
                      "key",
                      "O(1)"},
                     {"PEXPIRETIME",
                      2,
                      kR | kF,
                      {KeyAt(1, kRO | VSL_KS_ACCESS)},
                      CmdPExpireTime,
                      g,
                      "7.0.0",
                      "Returns the expiration time of a key as a Unix milliseconds timestamp.",
                      "key",
                      "O(1)"},
                     {"PERSIST",
                      2,
                      kW | kF,
                      {KeyAt(1, kRW | VSL_KS_UPDATE)},
                      CmdPersist,
                      g,
                      "2.2.0",
                      "Removes the expiration time of a key.",
                      "key",
                      "O(1)"},
                 });
}

}  // namespace vessel::engine
