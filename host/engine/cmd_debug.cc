// DEBUG: the subcommands clients and test suites use. Refused unless enable-debug-command allows
// it (Session checks kCmdProtected), as in Redis 7.0.
//
// Deliberate differences from Redis: DEBUG SLEEP stops only the worker that runs it (other
// clients keep being served); DEBUG DIGEST and DIGEST-VALUE are 40 hex digits of Vessel's own
// hash of the values (equal datasets give equal digests on Vessel, not the digest Redis prints).
#include <chrono>
#include <cstdio>
#include <thread>

#include "host/engine/builtins.h"
#include "host/engine/memory.h"
#include "host/engine/serialize.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// The type's serialized bytes of a value ("" when the type has no serialize callback).
std::string Serialized(const vsl_type* t, const void* value) {
  if (t == nullptr || t->desc.serialize == nullptr) return "";
  vsl_writer w;
  memory::ModuleScope scope(t->module->id);
  if (t->desc.serialize(nullptr, value, &w) != VSL_OK) return "";
  return std::move(w.buf);
}

// 160 bits of a keyed mix of bytes (three 64-bit lanes), for the digests.
struct Digest {
  uint64_t lanes[3] = {0, 0, 0};
  static uint64_t Mix(std::string_view data, uint64_t seed) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ seed;
    for (unsigned char c : data) {
      h ^= c;
      h *= 0x100000001B3ull;
      h ^= h >> 29;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
  }
  void Xor(std::string_view data) {
    for (int i = 0; i < 3; ++i) lanes[i] ^= Mix(data, static_cast<uint64_t>(i) * 0x51ED27ull);
  }
  std::string Hex() const {
    char buf[64];
    std::snprintf(
        buf, sizeof(buf), "%016llx%016llx%08llx", static_cast<unsigned long long>(lanes[0]),
        static_cast<unsigned long long>(lanes[1]), static_cast<unsigned long long>(lanes[2] >> 32));
    return buf;
  }
};

// One key's contribution: its name, type, value bytes and expiry.
std::string KeyBytes(Engine& e, const Entry* entry) {
  const vsl_type* t = e.registry().TypeById(entry->type_id());
  return Cat(entry->key(), "\n", t != nullptr ? t->name : "", "\n", Serialized(t, entry->value),
             "\n", entry->expire_ms);
}

// DEBUG OBJECT key
void DebugObject(CommandCtx* ctx) {
  Database& db = *ctx->db;
  const std::string_view key = Arg(ctx, 2);
  const uint64_t hash = HashKey(key);
  const Entry* e = db.shard(db.ShardOf(hash)).table.Find(key, hash);
  if (e == nullptr || (e->expire_ms != 0 && e->expire_ms <= ctx->now_ms))
    return W(ctx).ErrorLine("ERR no such key");
  const vsl_type* t = E(ctx).registry().TypeById(e->type_id());
  const char* enc = nullptr;
  if (t->desc.encoding != nullptr) {
    memory::ModuleScope scope(t->module->id);
    enc = t->desc.encoding(nullptr, e->value);
  }
  char addr[32];
  std::snprintf(addr, sizeof(addr), "%p", e->value);
  W(ctx).Simple(Cat("Value at:", addr, " refcount:1 encoding:", enc != nullptr ? enc : "raw",
                    " serializedlength:", Serialized(t, e->value).size(), " lru:", e->access(),
                    " lru_seconds_idle:", IdleMs(e->access(), ctx->now_ms) / 1000));
}

// DEBUG DIGEST: one digest of every key of every database (zeros when empty).
void DebugDigest(CommandCtx* ctx) {
  Digest d;
  bool any = false;
  for (const auto& db : E(ctx).dbs()) {
    for (uint32_t i = 0; i < db->shard_count(); ++i) {
      db->shard(i).table.ForEach([&](const Entry* e) {
        d.Xor(Cat(db->index(), "\n", KeyBytes(E(ctx), e)));
        any = true;
      });
    }
  }
  W(ctx).Simple(any ? d.Hex() : std::string(40, '0'));
}

// DEBUG DIGEST-VALUE key [key ...]
void DebugDigestValue(CommandCtx* ctx) {
  Database& db = *ctx->db;
  W(ctx).Aggregate(resp::AggKind::kArray, ctx->argc - 2);
  for (int i = 2; i < ctx->argc; ++i) {
    const uint64_t hash = HashKey(Arg(ctx, i));
    const Entry* e = db.shard(db.ShardOf(hash)).table.Find(Arg(ctx, i), hash);
    Digest d;
    if (e != nullptr) d.Xor(KeyBytes(E(ctx), e));
    W(ctx).Simple(e != nullptr ? d.Hex() : std::string(40, '0'));
  }
}

// DEBUG PROTOCOL type: one reply of each RESP type, as Redis sends them (for client tests).
void DebugProtocol(CommandCtx* ctx) {
  const std::string_view t = Arg(ctx, 2);
  resp::Writer& w = W(ctx);
  const bool resp3 = S(ctx).protocol() == 3;
  if (EqualsIgnoreCase(t, "string")) return w.Bulk("Hello World");
  if (EqualsIgnoreCase(t, "integer")) return w.Int(12345);
  if (EqualsIgnoreCase(t, "double")) return w.Double(3.141);
  if (EqualsIgnoreCase(t, "bignum")) {
    if (!resp3) return w.Bulk("1234567999999999999999999999999999999");
    w.out()->append("(1234567999999999999999999999999999999\r\n");
    return;
  }
  if (EqualsIgnoreCase(t, "null")) return w.Null();
  if (EqualsIgnoreCase(t, "array") || EqualsIgnoreCase(t, "set")) {
    w.Aggregate(EqualsIgnoreCase(t, "set") ? resp::AggKind::kSet : resp::AggKind::kArray, 3);
    for (int i = 0; i < 3; ++i) w.Int(i);
    return;
  }
  if (EqualsIgnoreCase(t, "map")) {
    w.Aggregate(resp::AggKind::kMap, 3);
    for (int i = 0; i < 3; ++i) {
      w.Int(i);
      w.Bool(i == 1);
    }
    return;
  }
  if (EqualsIgnoreCase(t, "attrib")) {
    if (resp3) w.out()->append("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n");
    return w.Bulk("Some real reply following the attribute");
  }
  if (EqualsIgnoreCase(t, "push")) {
    if (!resp3) return w.ErrorLine("ERR RESP2 is not supported by this command");
    w.Aggregate(resp::AggKind::kPush, 2);
    w.Bulk("server-cpu-usage");
    w.Int(42);
    return w.Bulk("Some real reply following the push reply");
  }
  if (EqualsIgnoreCase(t, "true")) return w.Bool(true);
  if (EqualsIgnoreCase(t, "false")) return w.Bool(false);
  if (EqualsIgnoreCase(t, "verbatim")) return w.Verbatim("txt", "This is a verbatim\nstring");
  w.ErrorLine(
      "ERR Wrong protocol type name. Please use one of the following: "
      "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

// DEBUG <subcommand> ...
void CmdDebug(CommandCtx* ctx) {
  const std::string_view sub = Arg(ctx, 1);
  auto is = [&](std::string_view name, int min_argc) {
    return EqualsIgnoreCase(sub, name) && ctx->argc >= min_argc;
  };
  if (is("sleep", 3)) {
    double secs;
    if (!ParseDouble(Arg(ctx, 2), &secs) || secs < 0)
      return W(ctx).ErrorLine("ERR value is not a valid float");
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
    return ReplyOk(ctx);
  }
  if (is("set-active-expire", 3)) {
    E(ctx).set_active_expire(Arg(ctx, 2) != "0");
    return ReplyOk(ctx);
  }
  if (is("object", 3)) return DebugObject(ctx);
  if (is("digest", 2)) return DebugDigest(ctx);
  if (is("digest-value", 2)) return DebugDigestValue(ctx);
  if (is("protocol", 3)) return DebugProtocol(ctx);
  if (is("log", 3)) {
    spdlog::warn("DEBUG LOG: {}", Arg(ctx, 2));
    return ReplyOk(ctx);
  }
  // Accepted for compatibility with tools and test suites; they change nothing in Vessel.
  if (is("change-repl-id", 2) || is("jmap", 2) || is("quicklist-packed-threshold", 3) ||
      is("set-skip-checksum-validation", 3) || is("stringmatch-len", 2)) {
    return ReplyOk(ctx);
  }
  if (is("help", 2)) {
    return ReplyHelp(ctx,
                     {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CHANGE-REPL-ID",
                      "    Accepted; Vessel has no replication id to change.",
                      "DIGEST",
                      "    Output a hex signature representing the current DB content.",
                      "DIGEST-VALUE <key> [<key> ...]",
                      "    Output a hex signature of the values of all the specified keys.",
                      "LOG <message>",
                      "    Write <message> to the server log.",
                      "OBJECT <key>",
                      "    Show low level info about the key and associated value.",
                      "PROTOCOL <type>",
                      "    Reply with a test value of the specified type. <type> can be: string,",
                      "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                      "    true, false.",
                      "SET-ACTIVE-EXPIRE <0|1>",
                      "    Setting it to 0 disables expiring keys in background.",
                      "SLEEP <seconds>",
                      "    Stop the worker for <seconds>.",
                      "HELP",
                      "    Print this help."});
  }
  W(ctx).ErrorLine(Cat("ERR unknown subcommand '", sub.substr(0, 128), "'. Try DEBUG HELP."));
}

// DEBUG OBJECT, DIGEST and DIGEST-VALUE read any key: they run with the whole keyspace held.
bool DebugNeedsWorld(const std::string_view* argv, int argc) {
  if (argc < 2) return false;
  return EqualsIgnoreCase(argv[1], "object") || EqualsIgnoreCase(argv[1], "digest") ||
         EqualsIgnoreCase(argv[1], "digest-value");
}

}  // namespace

void RegisterDebugCommands(Registry& r) {
  AddBuiltins(r,
              {{.name = "DEBUG",
                .arity = -2,
                .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kCmdLoading | kCmdStale | kCmdProtected,
                .fn = CmdDebug,
                .group = "server",
                .since = "1.0.0",
                .summary = "A container for debugging commands.",
                .syntax = "subcommand [argument]",
                .complexity = "Depends on subcommand.",
                .needs_world = DebugNeedsWorld}});
}

}  // namespace vessel::engine
