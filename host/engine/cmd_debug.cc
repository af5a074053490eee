// DEBUG: the subcommands clients and test suites use. Refused unless enable-debug-command allows
// it (Session checks kCmdProtected), as in Redis 7.0.
//
// Deliberate differences from Redis: DEBUG SLEEP stops only the worker that runs it (other
// clients keep being served). DEBUG DIGEST and DIGEST-VALUE compute what Redis 7.0's debug.c
// computes from the logical value (strings, lists, sets, hashes, sorted sets), so one command
// compares a Redis master with a Vessel replica; values of Vessel's own types digest their
// serialized bytes (Redis has no such type to compare with).
#include <arpa/inet.h>
#include <openssl/sha.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

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

// Redis's 20-byte digest (debug.c): Xor folds SHA1(data) in, so the parts of an unordered value
// may come in any order; Mix makes the digest SHA1(digest xor SHA1(data)), so the parts of an
// ordered value digest differently in another order.
struct Digest {
  unsigned char bytes[SHA_DIGEST_LENGTH] = {};

  void Xor(std::string_view data) {
    unsigned char h[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), h);
    for (int i = 0; i < SHA_DIGEST_LENGTH; ++i) bytes[i] ^= h[i];
  }
  // Folds another digest in as Redis does: its SHA1, like any other bytes.
  void Xor(const Digest& other) {
    Xor(std::string_view(reinterpret_cast<const char*>(other.bytes), sizeof(other.bytes)));
  }
  void Mix(std::string_view data) {
    Xor(data);
    unsigned char h[SHA_DIGEST_LENGTH];
    SHA1(bytes, sizeof(bytes), h);
    std::memcpy(bytes, h, sizeof(bytes));
  }
  // A 32-bit number in network byte order, as Redis mixes type and database numbers.
  void Mix(uint32_t n) {
    const uint32_t be = htonl(n);
    Mix(std::string_view(reinterpret_cast<const char*>(&be), sizeof(be)));
  }
  std::string Hex() const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
    return out;
  }
};

// The elements a type's visit callback hands over, with their scores.
struct Visited {
  std::vector<std::pair<std::string, double>> elems;
  static int Add(void* ud, const char* elem, size_t len, double score) {
    static_cast<Visited*>(ud)->elems.emplace_back(std::string(elem, len), score);
    return 0;
  }
};

// Mixes the digest of a value into *d as Redis's xorObjectDigest does: the type's number (Redis's
// OBJ_* constants; 5, a module type, for Vessel's own types), the value's parts, then the mark of
// a key with an expiry.
void DigestValue(Engine& e, const Entry* entry, Digest* d) {
  const vsl_type* t = e.registry().TypeById(entry->type_id());
  const std::string_view name = t != nullptr ? std::string_view(t->name) : "";
  static constexpr std::pair<std::string_view, uint32_t> kRedisTypes[] = {
      {"string", 0}, {"list", 1}, {"set", 2}, {"zset", 3}, {"hash", 4}, {"stream", 6}};
  uint32_t redis_type = 5;
  for (const auto& [n, id] : kRedisTypes)
    if (n == name) redis_type = id;
  d->Mix(redis_type);
  Visited v;
  if (redis_type != 5 && t->desc.visit != nullptr) {
    memory::ModuleScope scope(t->module->id);
    if (t->desc.visit(nullptr, entry->value, Visited::Add, &v) != VSL_OK) v.elems.clear();
  }
  switch (redis_type) {
    case 0:  // one element: the string's bytes
    case 1:  // head to tail, order kept
    case 6:  // each entry's "<ms>.<seq>", fields and values, in ID order
      for (const auto& [elem, score] : v.elems) d->Mix(elem);
      break;
    case 2:
      for (const auto& [elem, score] : v.elems) d->Xor(elem);
      break;
    case 3:
      for (const auto& [member, score] : v.elems) {
        Digest m;
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17g", score);
        m.Mix(member);
        m.Mix(buf);
        d->Xor(m);
      }
      break;
    case 4:  // field, value, field, value ...
      for (size_t i = 0; i + 1 < v.elems.size(); i += 2) {
        Digest f;
        f.Mix(v.elems[i].first);
        f.Mix(v.elems[i + 1].first);
        d->Xor(f);
      }
      break;
    default:
      d->Xor(Serialized(t, entry->value));
  }
  if (entry->expire_ms != 0) d->Xor("!!expire!!");
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

// DEBUG DIGEST: the digest of every key of every database, as Redis's computeDatasetDigest: each
// non-empty database mixes its number in, then xors in each key's digest (its name mixed with its
// value's). Zeros when every database is empty.
void DebugDigest(CommandCtx* ctx) {
  Digest all;
  for (const auto& db : E(ctx).dbs()) {
    bool first = true;
    for (uint32_t i = 0; i < db->shard_count(); ++i) {
      db->shard(i).table.ForEach([&](const Entry* e) {
        if (first) all.Mix(static_cast<uint32_t>(db->index()));
        first = false;
        Digest key;
        key.Mix(e->key());
        DigestValue(E(ctx), e, &key);
        all.Xor(key);
      });
    }
  }
  W(ctx).Simple(all.Hex());
}

// DEBUG DIGEST-VALUE key [key ...]: each value's digest (without its key's name), zeros for a
// missing key; expired keys not yet removed count, as in Redis.
void DebugDigestValue(CommandCtx* ctx) {
  Database& db = *ctx->db;
  W(ctx).Aggregate(resp::AggKind::kArray, ctx->argc - 2);
  for (int i = 2; i < ctx->argc; ++i) {
    const uint64_t hash = HashKey(Arg(ctx, i));
    const Entry* e = db.shard(db.ShardOf(hash)).table.Find(Arg(ctx, i), hash);
    Digest d;
    if (e != nullptr) DigestValue(E(ctx), e, &d);
    W(ctx).Simple(d.Hex());
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
