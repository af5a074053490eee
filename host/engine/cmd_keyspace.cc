// Generic keyspace commands: DEL UNLINK EXISTS TOUCH TYPE RENAME RENAMENX COPY MOVE KEYS SCAN
// RANDOMKEY OBJECT (ENCODING FREQ IDLETIME REFCOUNT HELP).
#include <charconv>

#include "host/engine/builtins.h"
#include "host/engine/memory.h"

namespace vessel::engine {
namespace {

using RemoveMode = Engine::RemoveMode;

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

void RemoveKey(CommandCtx* ctx, int i, Entry* e, RemoveMode mode = RemoveMode::kFree) {
  CommandKey& k = ctx->keys[i];
  E(ctx).Remove(*k.db, *k.shard, e, k.hash, mode);
}

// Fires keyspace event `event` (class generic unless given) for declared key i, in its database.
void Notify(CommandCtx* ctx, int i, std::string_view event, int type = kNotifyGeneric) {
  const CommandKey& k = ctx->keys[i];
  E(ctx).NotifyKeyspaceEvent(type, event, k.name, k.db->index());
}

const vsl_type* TypeOf(CommandCtx* ctx, const Entry* e) {
  return E(ctx).registry().TypeById(e->type_id());
}

// Locks shard i of the command's database, shared, for an iterating command (unless the whole
// keyspace is already held). A shard a running script holds is not waited for: ok() is false and
// the command is postponed (ctx->postponed) or answered BUSY; the handler returns at once.
class ShardGuard {
 public:
  ShardGuard(CommandCtx* ctx, uint32_t i) {
    if (ctx->world) return;
    locks_.Add(static_cast<uint32_t>(ctx->db->index()), i, /*exclusive=*/false);
    ScriptHold hold;
    std::string busy;
    ok_ = E(ctx).LockForCommand(&locks_, ctx, &hold, &busy);
    if (ok_) return;
    if (hold == ScriptHold::kHeld) {
      ctx->postponed = true;
    } else {
      W(ctx).ErrorLine(busy);
    }
  }
  bool ok() const { return ok_; }

 private:
  LockSet locks_;
  bool ok_ = true;
};

bool Live(const Entry* e, int64_t now) { return e->expire_ms == 0 || e->expire_ms > now; }

// DEL key [key ...] / UNLINK key [key ...]
void DeleteKeys(CommandCtx* ctx, RemoveMode mode) {
  int64_t n = 0;
  for (int i = 0; i < static_cast<int>(ctx->keys.size()); ++i) {
    if (Entry* e = LookupKey(ctx, i)) {
      RemoveKey(ctx, i, e, mode);
      Notify(ctx, i, "del");
      ++n;
    }
  }
  ctx->AddChanges(static_cast<uint64_t>(n));  // Redis's server.dirty: the keys deleted
  W(ctx).Int(n);
}
void CmdDel(CommandCtx* ctx) { DeleteKeys(ctx, RemoveMode::kFree); }
void CmdUnlink(CommandCtx* ctx) { DeleteKeys(ctx, RemoveMode::kLazy); }

// EXISTS key [key ...] / TOUCH key [key ...]
void CmdExists(CommandCtx* ctx) {
  int64_t n = 0;
  for (int i = 0; i < static_cast<int>(ctx->keys.size()); ++i) n += LookupKey(ctx, i) != nullptr;
  W(ctx).Int(n);
}

// TOUCH key [key ...]: EXISTS that also records an access.
void CmdTouch(CommandCtx* ctx) {
  int64_t n = 0;
  for (int i = 0; i < static_cast<int>(ctx->keys.size()); ++i) {
    if (Entry* e = LookupKey(ctx, i)) {
      E(ctx).StampAccess(e, ctx->now_ms);
      ++n;
    }
  }
  W(ctx).Int(n);
}

// TYPE key
void CmdType(CommandCtx* ctx) {
  const Entry* e = LookupKey(ctx, 0);
  W(ctx).Simple(e == nullptr ? std::string_view("none") : TypeOf(ctx, e)->name);
}

// Moves the value of key 0 to key `dst` (replacing it), keeping its expiry; the move is an access
// of the value (its LFU counter carries over, as the same object does in Redis).
void MoveValue(CommandCtx* ctx, Entry* src, int dst) {
  const uint16_t type = src->type_id();
  void* value = src->value;
  const int64_t expire = src->expire_ms;
  const uint32_t access = src->access();
  RemoveKey(ctx, 0, src, RemoveMode::kKeepValue);
  CommandKey& d = ctx->keys[dst];
  Entry* e = E(ctx).Store(*d.db, *d.shard, d.name, d.hash, type, value, false);
  e->set_access(NextAccess(E(ctx).eviction_policy(), access, ctx->now_ms));
  if (expire != 0) E(ctx).SetExpire(*d.db, *d.shard, e, expire);
}

// RENAME key newkey / RENAMENX key newkey
void RenameGeneric(CommandCtx* ctx, bool nx) {
  Entry* src = LookupKey(ctx, 0);
  if (src == nullptr) return W(ctx).ErrorLine("ERR no such key");
  if (ctx->keys[0].name == ctx->keys[1].name) return nx ? W(ctx).Int(0) : ReplyOk(ctx);
  const bool replaced = LookupKey(ctx, 1) != nullptr;
  if (nx && replaced) return W(ctx).Int(0);
  MoveValue(ctx, src, 1);
  ctx->AddChanges(1);  // one change, though two keys changed (Redis)
  // Redis deletes a destination and adds the key anew: "new" either way (Store fires it for an
  // absent one).
  if (replaced) Notify(ctx, 1, "new", kNotifyNew);
  Notify(ctx, 0, "rename_from");
  Notify(ctx, 1, "rename_to");
  nx ? W(ctx).Int(1) : ReplyOk(ctx);
}
void CmdRename(CommandCtx* ctx) { RenameGeneric(ctx, false); }
void CmdRenameNx(CommandCtx* ctx) { RenameGeneric(ctx, true); }

// The destination database of MOVE key db / COPY src dst DB db; -1 when absent or invalid.
int TargetDb(CommandCtx* ctx) {
  int64_t v = -1;
  if (ctx->cmd->name == "move") {
    ParseInt64(Arg(ctx, 2), &v);
  } else {
    for (int i = 3; i + 1 < ctx->argc; ++i) {
      if (EqualsIgnoreCase(Arg(ctx, i), "db")) ParseInt64(Arg(ctx, ++i), &v);
    }
  }
  return (v >= 0 && v < E(ctx).db_count()) ? static_cast<int>(v) : -1;
}

// Points the destination key of MOVE/COPY at the target database, so the host locks it.
void ResolveTargetDb(CommandCtx* ctx) {
  const int target = TargetDb(ctx);
  if (target < 0 || ctx->keys.empty()) return;
  CommandKey k = ctx->keys.back();  // MOVE: the key itself; COPY: the destination
  if (ctx->cmd->name == "move") {
    ctx->keys.push_back(k);
  }
  CommandKey& dst = ctx->keys.back();
  dst.db = &E(ctx).db(target);
  dst.shard = &dst.db->shard(dst.db->ShardOf(dst.hash));
  dst.flags = VSL_KS_OW | VSL_KS_UPDATE;
}

// MOVE key db
void CmdMove(CommandCtx* ctx) {
  if (ctx->engine->cluster() != nullptr)
    return W(ctx).ErrorLine("ERR MOVE is not allowed in cluster mode");
  int db;
  if (!DbArg(ctx, 2, &db)) return;
  if (db == ctx->db->index())
    return W(ctx).ErrorLine("ERR source and destination objects are the same");
  Entry* src = LookupKey(ctx, 0);
  if (src == nullptr || LookupKey(ctx, 1) != nullptr) return W(ctx).Int(0);
  MoveValue(ctx, src, 1);
  ctx->AddChanges(1);
  Notify(ctx, 0, "move_from");
  Notify(ctx, 1, "move_to");
  W(ctx).Int(1);
}

// COPY source destination [DB destination-db] [REPLACE]
void CmdCopy(CommandCtx* ctx) {
  bool replace = false;
  int db = ctx->db->index();
  for (int i = 3; i < ctx->argc; ++i) {
    if (EqualsIgnoreCase(Arg(ctx, i), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(Arg(ctx, i), "db") && i + 1 < ctx->argc) {
      if (!DbArg(ctx, ++i, &db)) return;
    } else {
      return ReplySyntaxError(ctx);
    }
  }
  if (db == ctx->db->index() && ctx->keys[0].name == ctx->keys[1].name)
    return W(ctx).ErrorLine("ERR source and destination objects are the same");
  Entry* src = LookupKey(ctx, 0);
  if (src == nullptr) return W(ctx).Int(0);
  Entry* dst = LookupKey(ctx, 1);
  if (dst != nullptr && !replace) return W(ctx).Int(0);
  const vsl_type* t = TypeOf(ctx, src);
  if (t->desc.copy == nullptr)
    return W(ctx).ErrorLine(Cat("ERR COPY is not supported for type ", t->name));
  void* copy;
  {
    memory::ModuleScope scope(t->module->id);
    copy = t->desc.copy(nullptr, src->value);
  }
  if (copy == nullptr) return W(ctx).ErrorLine("ERR COPY failed");
  const int64_t expire = src->expire_ms;
  CommandKey& d = ctx->keys[1];
  Entry* e = E(ctx).Store(*d.db, *d.shard, d.name, d.hash, t->id, copy, false);
  if (expire != 0) E(ctx).SetExpire(*d.db, *d.shard, e, expire);
  if (dst != nullptr) Notify(ctx, 1, "new", kNotifyNew);  // replaced: deleted and added anew
  ctx->AddChanges(1);
  Notify(ctx, 1, "copy_to");
  W(ctx).Int(1);
}

// KEYS pattern
void CmdKeys(CommandCtx* ctx) {
  const std::string_view pattern = Arg(ctx, 1);
  const bool all = pattern == "*";
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < ctx->db->shard_count(); ++i) {
    Shard& shard = ctx->db->shard(i);
    if (shard.size_hint.load(std::memory_order_relaxed) == 0 && !ctx->world) continue;
    ShardGuard guard(ctx, i);
    if (!guard.ok()) return;
    shard.table.ForEach([&](const Entry* e) {
      if (Live(e, ctx->now_ms) && (all || GlobMatch(pattern, e->key())))
        keys.emplace_back(e->key());
    });
  }
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(keys.size()));
  for (const auto& k : keys) W(ctx).Bulk(k);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
// The cursor holds the shard in its low bits and the shard table's own (Redis-style, reverse
// binary) cursor above them, so every key present for the whole scan is returned.
void CmdScan(CommandCtx* ctx) {
  uint64_t cursor = 0;
  {
    const std::string_view c = Arg(ctx, 1);
    auto r = std::from_chars(c.data(), c.data() + c.size(), cursor);
    if (c.empty() || r.ec != std::errc() || r.ptr != c.data() + c.size())
      return W(ctx).ErrorLine("ERR invalid cursor");
  }
  std::string_view pattern, type;
  int64_t count = 10;
  for (int i = 2; i < ctx->argc; i += 2) {
    if (i + 1 >= ctx->argc) return ReplySyntaxError(ctx);
    if (EqualsIgnoreCase(Arg(ctx, i), "count")) {
      if (!IntArg(ctx, i + 1, &count)) return;
      if (count < 1) return ReplySyntaxError(ctx);
    } else if (EqualsIgnoreCase(Arg(ctx, i), "match")) {
      pattern = Arg(ctx, i + 1);
    } else if (EqualsIgnoreCase(Arg(ctx, i), "type")) {
      type = Arg(ctx, i + 1);
    } else {
      return ReplySyntaxError(ctx);
    }
  }
  Database& db = *ctx->db;
  const uint32_t nshards = db.shard_count();
  const uint32_t bits = static_cast<uint32_t>(__builtin_ctz(nshards));
  uint32_t shard = static_cast<uint32_t>(cursor & (nshards - 1));
  uint64_t inner = cursor >> bits;
  std::vector<std::string> keys;
  // Buckets visited at most, as Redis's maxiterations; a COUNT past INT64_MAX / 10 (2^60 and up)
  // must not overflow into a budget that ends the scan at once with cursor 0.
  int64_t budget = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  while (shard < nshards && static_cast<int64_t>(keys.size()) < count && budget > 0) {
    Shard& s = db.shard(shard);
    if (s.size_hint.load(std::memory_order_relaxed) == 0 && !ctx->world) {
      ++shard;  // empty shards cost nothing (a racing insert is found by a later SCAN)
      inner = 0;
      continue;
    }
    {
      ShardGuard guard(ctx, shard);
      if (!guard.ok()) return;
      do {
        inner = s.table.Scan(inner, [&](const Entry* e) {
          if (!Live(e, ctx->now_ms)) return;
          if (!pattern.empty() && pattern != "*" && !GlobMatch(pattern, e->key())) return;
          if (!type.empty() &&
              !EqualsIgnoreCase(E(ctx).registry().TypeById(e->type_id())->name, type))
            return;
          keys.emplace_back(e->key());
        });
        --budget;
      } while (inner != 0 && static_cast<int64_t>(keys.size()) < count && budget > 0);
    }
    if (inner == 0) ++shard;
  }
  const uint64_t next = shard >= nshards ? 0 : (inner << bits) | shard;
  W(ctx).Aggregate(resp::AggKind::kArray, 2);
  W(ctx).Bulk(std::to_string(next));
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(keys.size()));
  for (const auto& k : keys) W(ctx).Bulk(k);
}

// RANDOMKEY
void CmdRandomKey(CommandCtx* ctx) {
  Database& db = *ctx->db;
  auto& rng = E(ctx).current_worker().rng;
  for (int attempt = 0; attempt < 100 && db.KeyCount() > 0; ++attempt) {
    // Probe shards from a random start until one has keys.
    const uint32_t start = static_cast<uint32_t>(rng()) & (db.shard_count() - 1);
    for (uint32_t n = 0; n < db.shard_count(); ++n) {
      const uint32_t i = (start + n) & (db.shard_count() - 1);
      Shard& s = db.shard(i);
      if (s.size_hint.load(std::memory_order_relaxed) == 0) continue;
      ShardGuard guard(ctx, i);
      if (!guard.ok()) return;
      const Entry* e = s.table.Random(rng());
      if (e != nullptr && Live(e, ctx->now_ms)) return W(ctx).Bulk(e->key());
      break;
    }
  }
  W(ctx).Null();
}

// OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key
void CmdObjectEncoding(CommandCtx* ctx) {
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  const vsl_type* t = TypeOf(ctx, e);
  const char* enc = nullptr;
  if (t->desc.encoding != nullptr) {
    memory::ModuleScope scope(t->module->id);
    enc = t->desc.encoding(nullptr, e->value);
  }
  W(ctx).Bulk(enc != nullptr ? enc : "raw");
}
void CmdObjectRefcount(CommandCtx* ctx) {
  if (LookupKey(ctx, 0) == nullptr) return W(ctx).Null();
  W(ctx).Int(1);
}
void CmdObjectIdletime(CommandCtx* ctx) {
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  if (IsLfu(E(ctx).eviction_policy())) {
    return W(ctx).ErrorLine(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
  }
  W(ctx).Int(IdleMs(e->access(), ctx->now_ms) / 1000);
}
void CmdObjectFreq(CommandCtx* ctx) {
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  if (!IsLfu(E(ctx).eviction_policy())) {
    return W(ctx).ErrorLine(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
        "that when switching between policies at runtime LRU and LFU data will take some time "
        "to adjust.");
  }
  W(ctx).Int(LfuFrequency(e->access(), ctx->now_ms));
}
void CmdObjectHelp(CommandCtx* ctx) {
  static const char* kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help."};
  W(ctx).Aggregate(resp::AggKind::kArray, std::size(kLines));
  for (const char* l : kLines) W(ctx).Simple(l);
}
void CmdObject(CommandCtx* ctx) {}  // container: never called

constexpr uint64_t kW = VSL_CMD_WRITE;
constexpr uint64_t kR = VSL_CMD_READONLY;
constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint32_t kRO = VSL_KS_RO;
constexpr uint32_t kRW = VSL_KS_RW;
constexpr uint32_t kOW = VSL_KS_OW;
constexpr uint32_t kRM = VSL_KS_RM;

}  // namespace

void RegisterKeyspaceCommands(Registry& r) {
  const char* g = "generic";
  // clang-format off
  AddBuiltins(r, {
      {.name = "DEL", .arity = -2, .flags = kW, .keys = {KeyAt(1, kRM | VSL_KS_DELETE, -1)},
       .fn = CmdDel, .group = g, .since = "1.0.0", .summary = "Deletes one or more keys.",
       .syntax = "key [key ...]", .complexity = "O(N) where N is the number of keys",
       .tips = "request_policy:multi_shard response_policy:agg_sum"},
      {.name = "UNLINK", .arity = -2, .flags = kW | kF, .keys = {KeyAt(1, kRM | VSL_KS_DELETE, -1)},
       .fn = CmdUnlink, .group = g, .since = "4.0.0",
       .summary = "Asynchronously deletes one or more keys.", .syntax = "key [key ...]",
       .complexity = "O(1) for each key",
       .tips = "request_policy:multi_shard response_policy:agg_sum"},
      {.name = "EXISTS", .arity = -2, .flags = kR | kF, .keys = {KeyAt(1, kRO, -1)},
       .fn = CmdExists, .group = g, .since = "1.0.0",
       .summary = "Determines whether one or more keys exist.", .syntax = "key [key ...]",
       .complexity = "O(N)", .tips = "request_policy:multi_shard response_policy:agg_sum"},
      {.name = "TOUCH", .arity = -2, .flags = kR | kF, .keys = {KeyAt(1, kRO, -1)}, .fn = CmdTouch,
       .group = g, .since = "3.2.1",
       .summary = "Returns the number of existing keys out of those specified after updating the "
         "time they were last accessed.", .syntax = "key [key ...]", .complexity = "O(N)",
       .tips = "request_policy:multi_shard response_policy:agg_sum"},
      {.name = "TYPE", .arity = 2, .flags = kR | kF, .keys = {KeyAt(1, kRO)}, .fn = CmdType,
       .group = g, .since = "1.0.0", .summary = "Determines the type of value stored at a key.",
       .syntax = "key", .complexity = "O(1)"},
      {.name = "RENAME", .arity = 3, .flags = kW,
       .keys = {KeyAt(1, kRW | VSL_KS_ACCESS | VSL_KS_DELETE), KeyAt(2, kOW | VSL_KS_UPDATE)},
       .fn = CmdRename, .group = g, .since = "1.0.0",
       .summary = "Renames a key and overwrites the destination.", .syntax = "key newkey",
       .complexity = "O(1)"},
      {.name = "RENAMENX", .arity = 3, .flags = kW | kF,
       .keys = {KeyAt(1, kRW | VSL_KS_ACCESS | VSL_KS_DELETE), KeyAt(2, kOW | VSL_KS_INSERT)},
       .fn = CmdRenameNx, .group = g, .since = "1.0.0",
       .summary = "Renames a key only when the target key name doesn't exist.",
       .syntax = "key newkey", .complexity = "O(1)"},
      {.name = "COPY", .arity = -3, .flags = kW | VSL_CMD_DENYOOM,
       .keys = {KeyAt(1, kRO | VSL_KS_ACCESS), KeyAt(2, kOW | VSL_KS_UPDATE)}, .fn = CmdCopy,
       .group = g, .since = "6.2.0", .summary = "Copies the value of a key to a new key.",
       .syntax = "source destination [DB destination-db] [REPLACE]",
       .complexity = "O(N) for collections", .resolve = ResolveTargetDb},
      {.name = "MOVE", .arity = 3, .flags = kW | kF,
       .keys = {KeyAt(1, kRW | VSL_KS_ACCESS | VSL_KS_UPDATE)}, .fn = CmdMove, .group = g,
       .since = "1.0.0", .summary = "Moves a key to another database.", .syntax = "key db",
       .complexity = "O(1)", .resolve = ResolveTargetDb},
      {.name = "KEYS", .arity = 2, .flags = kR | kCmdTxWorld, .fn = CmdKeys, .group = g,
       .since = "1.0.0", .summary = "Returns all key names that match a pattern.",
       .syntax = "pattern", .complexity = "O(N)",
       .tips = "request_policy:all_shards nondeterministic_output_order", .acl = "dangerous"},
      {.name = "SCAN", .arity = -2, .flags = kR | kCmdTxWorld, .fn = CmdScan, .group = g,
       .since = "2.8.0", .summary = "Iterates over the key names in the database.",
       .syntax = "cursor [MATCH pattern] [COUNT count] [TYPE type]",
       .complexity = "O(1) for every call. O(N) for a complete iteration",
       .tips = "nondeterministic_output request_policy:special"},
      {.name = "RANDOMKEY", .arity = 1, .flags = kR | kCmdTxWorld, .fn = CmdRandomKey, .group = g,
       .since = "1.0.0", .summary = "Returns a random key name from the database.", .syntax = "",
       .complexity = "O(1)", .tips = "request_policy:all_shards nondeterministic_output"},
      {.name = "OBJECT", .arity = -2, .flags = 0, .fn = CmdObject, .group = g, .since = "2.2.3",
       .summary = "A container for object introspection commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "ENCODING", .arity = 3, .flags = kR, .keys = {KeyAt(2, kRO)},
       .fn = CmdObjectEncoding, .group = g, .since = "2.2.3",
       .summary = "Returns the internal encoding of a Redis object.", .syntax = "key",
       .complexity = "O(1)", .tips = "nondeterministic_output", .acl = "keyspace"},
      {.name = "FREQ", .arity = 3, .flags = kR, .keys = {KeyAt(2, kRO)}, .fn = CmdObjectFreq,
       .group = g, .since = "4.0.0",
       .summary = "Returns the logarithmic access frequency counter of a Redis object.",
       .syntax = "key", .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "IDLETIME", .arity = 3, .flags = kR, .keys = {KeyAt(2, kRO)},
       .fn = CmdObjectIdletime, .group = g, .since = "2.2.3",
       .summary = "Returns the time since the last access to a Redis object.", .syntax = "key",
       .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "REFCOUNT", .arity = 3, .flags = kR, .keys = {KeyAt(2, kRO)},
       .fn = CmdObjectRefcount, .group = g, .since = "2.2.3",
       .summary = "Returns the reference count of a value of a key.", .syntax = "key",
       .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "HELP", .arity = 2, .flags = kCmdLoading | kCmdStale, .fn = CmdObjectHelp,
       .group = g, .since = "6.2.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "object");
  // clang-format on
}

}  // namespace vessel::engine
