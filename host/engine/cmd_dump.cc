// DUMP, RESTORE and RESTORE-ASKING (MIGRATE's RESTORE in cluster mode). With persistence
// installed (the server), the payload is Redis's (an RDB record, the RDB version, CRC64:
// host/persist/dump.cc), so payloads move between Vessel and redis-server. Without it
// (engine-only unit tests) the payload is Vessel's own framing over the types'
// serialize/deserialize callbacks: "VSL1", the type name (u64 length + bytes), the type's
// encoding version (u64), the type's bytes (u64 length + bytes), then an FNV-1a 64 checksum.
#include <cstring>

#include "host/engine/builtins.h"
#include "host/engine/memory.h"
#include "host/engine/serialize.h"

namespace vessel::engine {
namespace {

constexpr std::string_view kMagic = "VSL1";

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

uint64_t Fnv1a(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

bool GetU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= uint64_t{static_cast<unsigned char>((*in)[i])} << (8 * i);
  in->remove_prefix(8);
  *v = x;
  return true;
}

bool GetBytes(std::string_view* in, std::string_view* out) {
  uint64_t n;
  if (!GetU64(in, &n) || n > in->size()) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

// DUMP key
void CmdDump(CommandCtx* ctx) {
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  const vsl_type* t = E(ctx).registry().TypeById(e->type_id());
  if (!t->persisted)
    return W(ctx).ErrorLine(Cat("ERR DUMP is not supported for type ", t->name,
                                ": its module declared it not persisted"));
  if (PersistHooks* p = E(ctx).persist()) {
    std::string payload, error;
    if (!p->DumpValue(t, e->value, ctx->now_ms, &payload, &error)) return W(ctx).ErrorLine(error);
    return W(ctx).Bulk(payload);
  }
  if (t->desc.serialize == nullptr)
    return W(ctx).ErrorLine(Cat("ERR DUMP is not supported for type ", t->name));
  vsl_writer w;
  int rc;
  {
    memory::ModuleScope scope(t->module->id);
    rc = t->desc.serialize(nullptr, e->value, &w);
  }
  if (rc != VSL_OK) return W(ctx).ErrorLine(Cat("ERR serializing a ", t->name, " failed"));
  std::string out(kMagic);
  PutU64(&out, t->name.size());
  out += t->name;
  PutU64(&out, t->encoding_version);
  PutU64(&out, w.buf.size());
  out += w.buf;
  PutU64(&out, Fnv1a(out));
  W(ctx).Bulk(out);
}

// RESTORE with Redis's payload (persistence installed).
void RestoreRdb(CommandCtx* ctx, PersistHooks& p, Entry* existing, int64_t ttl, bool absttl,
                int64_t idle_s, int64_t freq) {
  std::string error;
  void* decoded = p.DecodePayload(Arg(ctx, 3), &error);
  if (decoded == nullptr) return W(ctx).ErrorLine(error);
  CommandKey& k = ctx->keys[0];
  const int64_t at = ttl == 0 ? 0 : (absttl ? ttl : ctx->now_ms + ttl);
  if (existing != nullptr) E(ctx).Remove(*k.db, *k.shard, existing, k.hash);
  if (at != 0 && at <= ctx->now_ms) {
    p.FreeDecoded(decoded);  // already expired, as Redis: an existing key is deleted
    if (existing != nullptr)
      E(ctx).NotifyKeyspaceEvent(kNotifyGeneric, "del", k.name, k.db->index());
    return ReplyOk(ctx);
  }
  bool built;
  {
    // The value is rebuilt with the family's own commands: their events are not RESTORE's.
    Engine::MuteNotifications mute;
    built = p.BuildDecoded(ctx, k.name, decoded, &error);
  }
  if (!built) return W(ctx).ErrorLine(Cat("ERR Bad data format: ", error));
  Entry* e = k.shard->table.Find(k.name, k.hash);
  if (e == nullptr) return W(ctx).ErrorLine("ERR Bad data format");
  if (at != 0) E(ctx).SetExpire(*k.db, *k.shard, e, at);
  e->set_access(RestoredAccess(E(ctx).eviction_policy(), idle_s, freq, ctx->now_ms, e->access()));
  ctx->AddChanges(1);  // one change, however the value was rebuilt (Redis)
  // Redis deletes a replaced key and adds the restored one: "new", then "restore".
  E(ctx).NotifyKeyspaceEvent(kNotifyNew, "new", k.name, k.db->index());
  E(ctx).NotifyKeyspaceEvent(kNotifyGeneric, "restore", k.name, k.db->index());
  ReplyOk(ctx);
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void CmdRestore(CommandCtx* ctx) {
  bool replace = false, absttl = false;
  int64_t idle_s = -1, freq = -1;
  for (int i = 4; i < ctx->argc; ++i) {
    const std::string_view o = Arg(ctx, i);
    const bool more = i + 1 < ctx->argc;
    int64_t v;
    if (EqualsIgnoreCase(o, "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(o, "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(o, "idletime") && more) {
      if (!IntArg(ctx, ++i, &v)) return;
      if (v < 0) return W(ctx).ErrorLine("ERR Invalid IDLETIME value, must be >= 0");
      idle_s = v;
    } else if (EqualsIgnoreCase(o, "freq") && more) {
      if (!IntArg(ctx, ++i, &v)) return;
      if (v < 0 || v > 255)
        return W(ctx).ErrorLine("ERR Invalid FREQ value, must be >= 0 and <= 255");
      freq = v;
    } else {
      return ReplySyntaxError(ctx);
    }
  }
  int64_t ttl;
  if (!IntArg(ctx, 2, &ttl)) return;
  if (ttl < 0) return W(ctx).ErrorLine("ERR Invalid TTL value, must be >= 0");
  Entry* existing = LookupKey(ctx, 0);
  if (existing != nullptr && !replace)
    return W(ctx).ErrorLine("BUSYKEY Target key name already exists.");

  if (PersistHooks* p = E(ctx).persist())
    return RestoreRdb(ctx, *p, existing, ttl, absttl, idle_s, freq);
  // Verify the frame before any module code sees the bytes.
  std::string_view in = Arg(ctx, 3);
  const auto bad = [&] { W(ctx).ErrorLine("ERR DUMP payload version or checksum are wrong"); };
  if (in.size() < kMagic.size() + 8 || in.substr(0, kMagic.size()) != kMagic) return bad();
  std::string_view tail = in.substr(in.size() - 8);
  uint64_t sum;
  GetU64(&tail, &sum);
  std::string_view body = in.substr(0, in.size() - 8);
  if (Fnv1a(body) != sum) return bad();
  body.remove_prefix(kMagic.size());
  std::string_view type_name, data;
  uint64_t encver;
  if (!GetBytes(&body, &type_name) || !GetU64(&body, &encver) || !GetBytes(&body, &data) ||
      !body.empty())
    return bad();
  const vsl_type* type = nullptr;
  for (const auto& t : E(ctx).registry().types())
    if (t != nullptr && t->name == type_name) type = t.get();
  if (type == nullptr)
    return W(ctx).ErrorLine(
        Cat("ERR Bad data format: no loaded module has type '", type_name, "'"));
  if (type->desc.deserialize == nullptr || encver > type->encoding_version)
    return W(ctx).ErrorLine(
        Cat("ERR Bad data format: cannot load a ", type_name, " of encoding version ", encver));
  vsl_reader reader{data};
  void* value;
  {
    memory::ModuleScope scope(type->module->id);
    value = type->desc.deserialize(nullptr, &reader, static_cast<uint32_t>(encver));
  }
  if (value != nullptr && (reader.failed || !reader.data.empty())) {
    // The type stopped early or read past the end: the payload is not what it claims to be.
    E(ctx).FreeValue(type->id, value, false);
    value = nullptr;
  }
  if (value == nullptr) return W(ctx).ErrorLine("ERR Bad data format");

  CommandKey& k = ctx->keys[0];
  const int64_t at = ttl == 0 ? 0 : (absttl ? ttl : ctx->now_ms + ttl);
  if (at != 0 && at <= ctx->now_ms) {
    // Already expired, as Redis: nothing is stored and an existing key is replaced by nothing.
    E(ctx).FreeValue(type->id, value, false);
    if (existing != nullptr) {
      E(ctx).Remove(*k.db, *k.shard, existing, k.hash);
      E(ctx).NotifyKeyspaceEvent(kNotifyGeneric, "del", k.name, k.db->index());
    }
    return ReplyOk(ctx);
  }
  Entry* e = E(ctx).Store(*k.db, *k.shard, k.name, k.hash, type->id, value, false);
  if (at != 0) E(ctx).SetExpire(*k.db, *k.shard, e, at);
  e->set_access(RestoredAccess(E(ctx).eviction_policy(), idle_s, freq, ctx->now_ms, e->access()));
  ctx->AddChanges(1);  // one change, as Redis, whatever the replaced key held
  // A replaced key is deleted and added anew in Redis: "new" either way (Store fires it when new).
  if (existing != nullptr) E(ctx).NotifyKeyspaceEvent(kNotifyNew, "new", k.name, k.db->index());
  E(ctx).NotifyKeyspaceEvent(kNotifyGeneric, "restore", k.name, k.db->index());
  ReplyOk(ctx);
}

}  // namespace

void RegisterDumpCommands(Registry& r) {
  const char* g = "generic";
  // clang-format off
  AddBuiltins(r, {
      {.name = "DUMP", .arity = 2, .flags = VSL_CMD_READONLY,
       .keys = {KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS)}, .fn = CmdDump, .group = g, .since = "2.6.0",
       .summary = "Returns a serialized representation of the value stored at a key.",
       .syntax = "key",
       .complexity = "O(1) to access the key and additional O(N*M) to serialize it",
       .tips = "nondeterministic_output", .acl = "keyspace"},
      {.name = "RESTORE", .arity = -4, .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM,
       .keys = {KeyAt(1, VSL_KS_OW | VSL_KS_UPDATE)}, .fn = CmdRestore, .group = g,
       .since = "2.6.0", .summary = "Creates a key from the serialized representation of a value.",
       .syntax = "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
       .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the "
         "serialized value", .acl = "keyspace dangerous"},
      // RESTORE for MIGRATE in cluster mode: flagged "asking", a slot importing here takes it
      // without ASKING.
      {.name = "RESTORE-ASKING", .arity = -4,
       .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM | kCmdAsking,
       .keys = {KeyAt(1, VSL_KS_OW | VSL_KS_UPDATE)}, .fn = CmdRestore, .group = "server",
       .since = "3.0.0", .summary = "An internal command for migrating keys in a cluster",
       .syntax = "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
       .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the "
         "serialized value", .acl = "keyspace dangerous"},
  });
  // clang-format on
}

}  // namespace vessel::engine
