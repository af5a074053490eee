// The strings module: Redis's string family as a Vessel module (value type "string").
//
// Commands: GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX APPEND STRLEN GETRANGE
// SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT LCS, with Redis 7.0's replies, error strings
// and edge cases (redis-server 7.0 is the reference the tests compare against). The bitmap
// commands (SETBIT ... BITFIELD_RO) are in strings_bitmap.cc, the HyperLogLog ones (PFADD ...)
// in strings_hyperloglog.cc; each file has its part of the command table, all registered below.
//
// Deliberate differences from Redis:
//   - A single value holds at most 1 GiB - 1 bytes (a larger SET fails with the
//     proto-max-bulk-len error).
//   - Under maxmemory, a SETRANGE (and a SETBIT or BITFIELD) whose offset would grow the string,
//     or an LCS whose scratch table would not fit, is refused with Redis's OOM error once eviction
//     cannot make room; Redis checks memory only before a command runs, so one command may take
//     any amount.
//   - SET ... EXAT/PXAT with a time in the past deletes the key at once; Redis 7.0 stores it
//     already expired, which only DBSIZE shows until its active expiry reclaims the key.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "lcs.h"
#include "strings_commands.h"
#include "strings_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::strings {

using vsl::Ctx;
using vsl::Key;

Value Lookup(const Key& key) {
  void* v = nullptr;
  const int rc = key.GetRaw(g_string_type, &v);
  if (rc == VSL_WRONGTYPE) vsl::WrongType();
  return rc == VSL_OK ? v : nullptr;
}

void Commit(Key& key, Value old, Value v) {
  if (v == old) return key.Modified();
  key.SetRaw(g_string_type, v, VSL_SET_KEEPTTL);
}

uint64_t MaxBulkLen(const Ctx& ctx) { return ctx.ValueSizeLimit(); }

void CheckRoomToGrow(const Ctx& ctx, size_t old_len, uint64_t new_len) {
  if (new_len > old_len && !ctx.MayAllocate(new_len - old_len)) vsl::FailOom();
}

namespace {

// ---- shared pieces ----

// A bulk reply with the value's bytes, or null for no value.
void ReplyValue(Ctx& ctx, const void* v) {
  if (v == nullptr) return ctx.Null();
  Bytes b(v);
  ctx.Bulk(b.view());
}

// Fails unless a string of offset + add bytes fits the host's proto-max-bulk-len (read through
// ABI 1.1; Redis's default on a 1.0 host), capped by what a value can represent.
void CheckLength(const Ctx& ctx, uint64_t offset, size_t add) {
  const uint64_t limit = std::min<uint64_t>(MaxBulkLen(ctx), kMaxValueLen);
  if (offset > limit || offset + add > limit)
    vsl::Fail("string exceeds maximum allowed size (proto-max-bulk-len)");
}

[[noreturn]] void InvalidExpire(const char* cmd) {
  vsl::Fail(std::string("invalid expire time in '") + cmd + "' command");
}

// ---- SET / GETEX options (Redis's parseExtendedStringArgumentsOrReply) ----

enum OptFlag : uint32_t {
  kNx = 1 << 0,
  kXx = 1 << 1,
  kGet = 1 << 2,
  kKeepTtl = 1 << 3,
  kPersist = 1 << 4,
  kEx = 1 << 5,
  kPx = 1 << 6,
  kExAt = 1 << 7,
  kPxAt = 1 << 8,
};
constexpr uint32_t kExpireFlags = kEx | kPx | kExAt | kPxAt;

enum class OptFor { kSet, kGetEx, kBoth };

struct OptSpec {
  std::string_view word;
  uint32_t flag;
  uint32_t conflicts;  // flags already given that make the word a syntax error
  OptFor where;
};
// As in Redis, repeating a word is accepted (the last time wins), combining exclusive ones not.
constexpr OptSpec kOptSpecs[] = {
    {"NX", kNx, kXx, OptFor::kSet},
    {"XX", kXx, kNx, OptFor::kSet},
    {"GET", kGet, 0, OptFor::kSet},
    {"KEEPTTL", kKeepTtl, kPersist | kExpireFlags, OptFor::kSet},
    {"PERSIST", kPersist, kKeepTtl | kExpireFlags, OptFor::kGetEx},
    {"EX", kEx, kKeepTtl | kPersist | (kExpireFlags & ~kEx), OptFor::kBoth},
    {"PX", kPx, kKeepTtl | kPersist | (kExpireFlags & ~kPx), OptFor::kBoth},
    {"EXAT", kExAt, kKeepTtl | kPersist | (kExpireFlags & ~kExAt), OptFor::kBoth},
    {"PXAT", kPxAt, kKeepTtl | kPersist | (kExpireFlags & ~kPxAt), OptFor::kBoth},
};

struct SetOptions {
  uint32_t flags = 0;
  int expire_arg = 0;  // index of the EX/PX/EXAT/PXAT time; 0 = none
};

SetOptions ParseOptions(const Ctx& ctx, int first, OptFor command) {
  SetOptions o;
  for (int j = first; j < ctx.argc(); ++j) {
    const OptSpec* spec = nullptr;
    for (const OptSpec& s : kOptSpecs) {
      if ((s.where == OptFor::kBoth || s.where == command) && ctx.ArgIs(j, s.word)) spec = &s;
    }
    const bool timed = spec != nullptr && (spec->flag & kExpireFlags);
    if (spec == nullptr || (o.flags & spec->conflicts) || (timed && j + 1 == ctx.argc()))
      vsl::SyntaxError();
    o.flags |= spec->flag;
    if (timed) o.expire_arg = ++j;
  }
  return o;
}

// The absolute expiry (unix ms) given by the time argument of EX/PX/EXAT/PXAT in `flags`
// (Redis's getExpireMillisecondsOrReply); `cmd` names the command in the error.
int64_t ExpireAt(const Ctx& ctx, uint32_t flags, int arg, const char* cmd) {
  int64_t t = ctx.IntArg(arg);
  const bool seconds = flags & (kEx | kExAt);
  if (t <= 0 || (seconds && t > INT64_MAX / 1000)) InvalidExpire(cmd);
  if (seconds) t *= 1000;
  if ((flags & (kEx | kPx)) && __builtin_add_overflow(t, ctx.now_ms(), &t)) InvalidExpire(cmd);
  return t;
}

// ---- GET and SET ----

// GET key
void CmdGet(Ctx& ctx) { ReplyValue(ctx, Lookup(ctx.key(0))); }

// The body of SET, SETNX, SETEX, PSETEX and GETSET (Redis's setGenericCommand): the value is
// argument `value_arg`; `int_reply` answers 1/0 (SETNX) instead of OK/nil.
void SetGeneric(Ctx& ctx, SetOptions o, int value_arg, const char* cmd, bool int_reply = false) {
  const int64_t at = o.expire_arg != 0 ? ExpireAt(ctx, o.flags, o.expire_arg, cmd) : 0;
  Key key = ctx.key(0);
  const bool get = o.flags & kGet;
  const Value old = get ? Lookup(key) : nullptr;
  if (o.flags & (kNx | kXx)) {
    const bool found = get ? old != nullptr : key.Exists();
    if (((o.flags & kNx) && found) || ((o.flags & kXx) && !found)) {
      if (get) return ReplyValue(ctx, old);
      return int_reply ? ctx.Int(0) : ctx.Null();
    }
  }
  const Value v = MakeValue(ctx.arg(value_arg));
  if (get) ReplyValue(ctx, old);  // before storing frees the old value
  key.SetRaw(g_string_type, v, (o.flags & kKeepTtl) ? VSL_SET_KEEPTTL : 0);
  key.Notify(VSL_NOTIFY_STRING, "set");
  if (o.expire_arg != 0) {
    key.SetExpireMs(at);  // a time already past deletes the key
    key.Notify(VSL_NOTIFY_GENERIC, "expire");
    // Replayed with the absolute time, as Redis 7.0 propagates every timed SET.
    ctx.Propagate({"SET", key.name(), ctx.arg(value_arg), "PXAT", std::to_string(at)});
  }
  if (!get) int_reply ? ctx.Int(1) : ctx.Ok();
}

// SET key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//     PXAT unix-time-milliseconds | KEEPTTL]
void CmdSet(Ctx& ctx) { SetGeneric(ctx, ParseOptions(ctx, 3, OptFor::kSet), 2, "set"); }

// SETNX key value
void CmdSetNx(Ctx& ctx) { SetGeneric(ctx, {kNx, 0}, 2, "setnx", true); }

// SETEX key seconds value
void CmdSetEx(Ctx& ctx) { SetGeneric(ctx, {kEx, 2}, 3, "setex"); }

// PSETEX key milliseconds value
void CmdPSetEx(Ctx& ctx) { SetGeneric(ctx, {kPx, 2}, 3, "psetex"); }

// GETSET key value
void CmdGetSet(Ctx& ctx) {
  SetGeneric(ctx, {kGet, 0}, 2, "getset");
  ctx.Propagate({"SET", ctx.arg(1), ctx.arg(2)});  // as Redis
}

// GETDEL key
void CmdGetDel(Ctx& ctx) {
  Key key = ctx.key(0);
  const Value v = Lookup(key);
  ReplyValue(ctx, v);  // before deleting frees the value
  if (v != nullptr && key.Delete()) {
    key.Notify(VSL_NOTIFY_GENERIC, "del");
    ctx.Propagate({"DEL", key.name()});  // as Redis
  }
}

// GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//     PXAT unix-time-milliseconds | PERSIST]
void CmdGetEx(Ctx& ctx) {
  const SetOptions o = ParseOptions(ctx, 2, OptFor::kGetEx);
  Key key = ctx.key(0);
  const Value v = Lookup(key);
  if (v == nullptr) return ctx.Null();
  const int64_t at = o.expire_arg != 0 ? ExpireAt(ctx, o.flags, o.expire_arg, "getex") : 0;
  ReplyValue(ctx, v);  // before an expiry in the past deletes the key
  // Replayed as what it did, as Redis 7.0 propagates GETEX: PEXPIREAT, DEL or PERSIST.
  if (o.expire_arg != 0) {
    key.SetExpireMs(at);
    const bool gone = at <= ctx.now_ms();
    key.Notify(VSL_NOTIFY_GENERIC, gone ? "del" : "expire");
    gone ? ctx.Propagate({"DEL", key.name()})
         : ctx.Propagate({"PEXPIREAT", key.name(), std::to_string(at)});
  } else if ((o.flags & kPersist) && key.ExpireMs() >= 0) {
    key.SetExpireMs(-1);
    key.Notify(VSL_NOTIFY_GENERIC, "persist");
    ctx.Propagate({"PERSIST", key.name()});
  } else {
    ctx.PropagateNothing();
  }
}

// ---- several keys ----

// MGET key [key ...]
void CmdMGet(Ctx& ctx) {
  const int n = ctx.key_count();
  ctx.Array(n);
  for (int i = 0; i < n; ++i) {
    void* v = nullptr;
    ReplyValue(ctx, ctx.key(i).GetRaw(g_string_type, &v) == VSL_OK ? v : nullptr);  // any type
  }
}

// The body of MSET and MSETNX. All values are built before any key changes, so the command is
// all or nothing (the host holds every key's lock).
void MSetGeneric(Ctx& ctx, bool nx) {
  if (ctx.argc() % 2 == 0)
    vsl::Fail(std::string("wrong number of arguments for '") + (nx ? "msetnx" : "mset") +
              "' command");
  const int n = ctx.key_count();
  if (nx) {
    for (int i = 0; i < n; ++i)
      if (ctx.key(i).Exists()) return ctx.Int(0);
  }
  std::vector<Value> values;
  values.reserve(n);
  try {
    for (int i = 0; i < n; ++i) values.push_back(MakeValue(ctx.arg(2 + 2 * i)));
  } catch (...) {
    for (Value v : values) FreeValue(v);
    throw;
  }
  for (int i = 0; i < n; ++i) {
    Key key = ctx.key(i);
    key.SetRaw(g_string_type, values[i]);
    key.Notify(VSL_NOTIFY_STRING, "set");
  }
  ctx.AddChanges(static_cast<uint64_t>(n));  // one per pair, a repeated key too (Redis)
  nx ? ctx.Int(1) : ctx.Ok();
}

// MSET key value [key value ...]
void CmdMSet(Ctx& ctx) { MSetGeneric(ctx, false); }

// MSETNX key value [key value ...]
void CmdMSetNx(Ctx& ctx) { MSetGeneric(ctx, true); }

// ---- parts of a string ----

// APPEND key value
void CmdAppend(Ctx& ctx) {
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  const std::string_view tail = ctx.arg(2);
  const size_t len = (old != nullptr ? ValueLen(old) : 0) + tail.size();
  if (old != nullptr) CheckLength(ctx, len, 0);
  Commit(key, old, old != nullptr ? OpAppend(old, tail) : MakeValue(tail));
  key.Notify(VSL_NOTIFY_STRING, "append");
  ctx.Int(static_cast<int64_t>(len));
}

// STRLEN key
void CmdStrLen(Ctx& ctx) {
  const Value v = Lookup(ctx.key(0));
  ctx.Int(v != nullptr ? static_cast<int64_t>(ValueLen(v)) : 0);
}

// The bytes of s from start to end inclusive, negative indexes counting from the end, clamped
// exactly as Redis 7.0's GETRANGE does.
std::string_view OpRange(std::string_view s, int64_t start, int64_t end) {
  const auto len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) return {};
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return {};
  return s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

// GETRANGE key start end  (also SUBSTR key start end)
void CmdGetRange(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2);
  const int64_t end = ctx.IntArg(3);
  const Value v = Lookup(ctx.key(0));
  if (v == nullptr) return ctx.Bulk("");
  Bytes b(v);
  ctx.Bulk(OpRange(b.view(), start, end));
}

// SETRANGE key offset value
void CmdSetRange(Ctx& ctx) {
  const int64_t offset = ctx.IntArg(2);
  if (offset < 0) vsl::Fail("offset is out of range");
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  const std::string_view piece = ctx.arg(3);
  if (piece.empty()) return ctx.Int(old != nullptr ? static_cast<int64_t>(ValueLen(old)) : 0);
  CheckLength(ctx, static_cast<uint64_t>(offset), piece.size());
  CheckRoomToGrow(ctx, old != nullptr ? ValueLen(old) : 0, offset + piece.size());
  const Value v = OpSetRange(old, static_cast<size_t>(offset), piece);
  Commit(key, old, v);
  key.Notify(VSL_NOTIFY_STRING, "setrange");
  ctx.Int(static_cast<int64_t>(ValueLen(v)));
}

// ---- counters ----

// The body of INCR, DECR, INCRBY and DECRBY.
void IncrBy(Ctx& ctx, int64_t incr) {
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  int64_t value = 0;
  if (old != nullptr) {
    Bytes b(old);
    if (!vsl::ParseInt(b.view(), &value)) vsl::NotInteger();
  }
  if (__builtin_add_overflow(value, incr, &value))
    vsl::Fail("increment or decrement would overflow");
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  Commit(key, old, OpAssign(old, {buf, static_cast<size_t>(end - buf)}, Hint::kAuto));
  key.Notify(VSL_NOTIFY_STRING, "incrby");
  ctx.Int(value);
}

// INCR key
void CmdIncr(Ctx& ctx) { IncrBy(ctx, 1); }

// DECR key
void CmdDecr(Ctx& ctx) { IncrBy(ctx, -1); }

// INCRBY key increment
void CmdIncrBy(Ctx& ctx) { IncrBy(ctx, ctx.IntArg(2)); }

// DECRBY key decrement
void CmdDecrBy(Ctx& ctx) {
  const int64_t decr = ctx.IntArg(2);
  if (decr == INT64_MIN) vsl::Fail("decrement would overflow");
  IncrBy(ctx, -decr);
}

// INCRBYFLOAT key increment
void CmdIncrByFloat(Ctx& ctx) {
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  long double value = 0, incr = 0;
  if (old != nullptr) {
    Bytes b(old);
    if (!vsl::ParseLongDouble(b.view(), &value)) vsl::NotFloat();
  }
  if (!vsl::ParseLongDouble(ctx.arg(2), &incr)) vsl::NotFloat();
  value += incr;
  if (std::isnan(value) || std::isinf(value)) vsl::Fail("increment would produce NaN or Infinity");
  const std::string s = vsl::FormatLongDouble(value);
  Commit(key, old, OpAssign(old, s, Hint::kString));
  key.Notify(VSL_NOTIFY_STRING, "incrbyfloat");
  ctx.Propagate({"SET", ctx.arg(1), s, "KEEPTTL"});  // replay sets the result, as Redis
  ctx.Bulk(s);
}

// ---- LCS ----

struct LcsOptions {
  bool len = false, idx = false, with_match_len = false;
  int64_t min_match_len = 0;
};

LcsOptions ParseLcsOptions(const Ctx& ctx) {
  LcsOptions o;
  for (int j = 3; j < ctx.argc(); ++j) {
    if (ctx.ArgIs(j, "IDX")) {
      o.idx = true;
    } else if (ctx.ArgIs(j, "LEN")) {
      o.len = true;
    } else if (ctx.ArgIs(j, "WITHMATCHLEN")) {
      o.with_match_len = true;
    } else if (ctx.ArgIs(j, "MINMATCHLEN") && j + 1 < ctx.argc()) {
      o.min_match_len = std::max<int64_t>(0, ctx.IntArg(++j));
    } else {
      vsl::SyntaxError();
    }
  }
  if (o.idx && o.len) vsl::Fail("If you want both the length and indexes, please just use IDX.");
  return o;
}

void ReplyLcsMatches(Ctx& ctx, const LcsResult& r, bool with_match_len) {
  ctx.Map(2);
  ctx.Bulk("matches");
  ctx.Array(static_cast<int64_t>(r.matches.size()));
  for (const LcsMatch& m : r.matches) {
    ctx.Array(with_match_len ? 3 : 2);
    ctx.Array(2);
    ctx.Int(m.a_start);
    ctx.Int(m.a_end);
    ctx.Array(2);
    ctx.Int(m.b_start);
    ctx.Int(m.b_end);
    if (with_match_len) ctx.Int(m.a_end - m.a_start + 1);
  }
  ctx.Bulk("len");
  ctx.Int(r.len);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]
void CmdLcs(Ctx& ctx) {
  void* va = nullptr;
  void* vb = nullptr;
  if (ctx.key(0).GetRaw(g_string_type, &va) == VSL_WRONGTYPE ||
      ctx.key(1).GetRaw(g_string_type, &vb) == VSL_WRONGTYPE)
    vsl::Fail("The specified keys must contain string values");
  const LcsOptions o = ParseLcsOptions(ctx);
  Bytes a(va), b(vb);  // nullptr: the empty string
  // The scratch table grows with the product of the lengths: past the limit OpLcs refuses it
  // with Redis's error; under it, maxmemory must have room.
  const uint64_t table = LcsTableBytes(a.size(), b.size());
  if (table <= MaxBulkLen(ctx) && !ctx.MayAllocate(table)) vsl::FailOom();
  const LcsResult r = OpLcs(a.view(), b.view(), o.idx || !o.len, o.min_match_len, MaxBulkLen(ctx));
  if (o.idx) return ReplyLcsMatches(ctx, r, o.with_match_len);
  if (o.len) return ctx.Int(r.len);
  ctx.Bulk(r.lcs);
}

// ---- the command table ----

using namespace vsl::table;
// SET's access depends on GET (the ACL check resolves it per call, as Redis's setGetKeys).
constexpr vsl_keyspec kSetKey =
    vsl::WithNotes(vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE | VSL_KS_VARIABLE_FLAGS),
                   "RW and ACCESS due to the optional `GET` argument");

constexpr char kGroup[] = "string";
constexpr char kRangeComplexity[] =
    "O(N) where N is the length of the returned string. The complexity is ultimately determined "
    "by the returned length, but because creating a substring from an existing string is very "
    "cheap, it can be considered O(1) for small strings.";
constexpr char kAppendComplexity[] =
    "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
    "already present value is of any size, since the dynamic string library used by Redis will "
    "double the free space available on every reallocation.";
constexpr char kSetRangeComplexity[] =
    "O(1), not counting the time taken to copy the new string in place. Usually, this string is "
    "very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being "
    "the length of the value argument.";

constexpr char kSetSyntax[] =
    "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
    "unix-time-milliseconds | KEEPTTL]";
constexpr char kGetExSyntax[] =
    "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | "
    "PERSIST]";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "GET", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGet>, .since = "1.0.0", .summary = "Get the value of a key",
     .syntax = "key", .complexity = "O(1)"},
    {.name = "SET", .arity = -3, .flags = kWrite | kDenyOom, .keys = {kSetKey},
     .handler = vsl::Handler<CmdSet>, .since = "1.0.0", .summary = "Set the string value of a key",
     .syntax = kSetSyntax, .complexity = "O(1)"},
    {.name = "SETNX", .arity = 3, .flags = kWrite | kDenyOom | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_OW | VSL_KS_INSERT)}, .handler = vsl::Handler<CmdSetNx>,
     .since = "1.0.0", .summary = "Set the value of a key, only if the key does not exist",
     .syntax = "key value", .complexity = "O(1)"},
    {.name = "SETEX", .arity = 4, .flags = kWrite | kDenyOom, .keys = {kOwUpdate},
     .handler = vsl::Handler<CmdSetEx>, .since = "2.0.0",
     .summary = "Set the value and expiration of a key", .syntax = "key seconds value",
     .complexity = "O(1)"},
    {.name = "PSETEX", .arity = 4, .flags = kWrite | kDenyOom, .keys = {kOwUpdate},
     .handler = vsl::Handler<CmdPSetEx>, .since = "2.6.0",
     .summary = "Set the value and expiration in milliseconds of a key",
     .syntax = "key milliseconds value", .complexity = "O(1)"},
    {.name = "GETSET", .arity = 3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdGetSet>, .since = "1.0.0",
     .summary = "Set the string value of a key and return its old value", .syntax = "key value",
     .complexity = "O(1)"},
    {.name = "GETDEL", .arity = 2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdGetDel>, .since = "6.2.0",
     .summary = "Get the value of a key and delete the key", .syntax = "key", .complexity = "O(1)"},
    {.name = "GETEX", .arity = -2, .flags = kWrite | kFast,
     .keys = {vsl::WithNotes(kRwAccessUpdate, "RW and UPDATE because it changes the TTL")},
     .handler = vsl::Handler<CmdGetEx>, .since = "6.2.0",
     .summary = "Get the value of a key and optionally set its expiration", .syntax = kGetExSyntax,
     .complexity = "O(1)"},
    {.name = "MGET", .arity = -2, .flags = kRead | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS, -1)}, .handler = vsl::Handler<CmdMGet>,
     .since = "1.0.0", .summary = "Get the values of all the given keys", .syntax = "key [key ...]",
     .complexity = "O(N) where N is the number of keys to retrieve.",
     .tips = "request_policy:multi_shard"},
    {.name = "MSET", .arity = -3, .flags = kWrite | kDenyOom,
     .keys = {vsl::KeyAt(1, VSL_KS_OW | VSL_KS_UPDATE, -1, 2)}, .handler = vsl::Handler<CmdMSet>,
     .since = "1.0.1", .summary = "Set multiple keys to multiple values",
     .syntax = "key value [key value ...]",
     .complexity = "O(N) where N is the number of keys to set.",
     .tips = "request_policy:multi_shard response_policy:all_succeeded"},
    {.name = "MSETNX", .arity = -3, .flags = kWrite | kDenyOom,
     .keys = {vsl::KeyAt(1, VSL_KS_OW | VSL_KS_INSERT, -1, 2)}, .handler = vsl::Handler<CmdMSetNx>,
     .since = "1.0.1",
     .summary = "Set multiple keys to multiple values, only if none of the keys exist",
     .syntax = "key value [key value ...]",
     .complexity = "O(N) where N is the number of keys to set.",
     .tips = "request_policy:multi_shard response_policy:agg_min"},
    {.name = "APPEND", .arity = 3, .flags = kWrite | kDenyOom | kFast,
     .keys = {kRwInsert}, .handler = vsl::Handler<CmdAppend>,
     .since = "2.0.0", .summary = "Append a value to a key", .syntax = "key value",
     .complexity = kAppendComplexity},
    {.name = "STRLEN", .arity = 2, .flags = kRead | kFast, .keys = {vsl::KeyAt(1, VSL_KS_RO)},
     .handler = vsl::Handler<CmdStrLen>, .since = "2.2.0",
     .summary = "Get the length of the value stored in a key", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "GETRANGE", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGetRange>, .since = "2.4.0",
     .summary = "Get a substring of the string stored at a key", .syntax = "key start end",
     .complexity = kRangeComplexity},
    {.name = "SUBSTR", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGetRange>, .since = "1.0.0",
     .summary = "Get a substring of the string stored at a key", .syntax = "key start end",
     .complexity = kRangeComplexity},
    {.name = "SETRANGE", .arity = 4, .flags = kWrite | kDenyOom,
     .keys = {kRwUpdate}, .handler = vsl::Handler<CmdSetRange>,
     .since = "2.2.0",
     .summary = "Overwrite part of a string at key starting at the specified offset",
     .syntax = "key offset value", .complexity = kSetRangeComplexity},
    {.name = "INCR", .arity = 2, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdIncr>, .since = "1.0.0",
     .summary = "Increment the integer value of a key by one", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "DECR", .arity = 2, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdDecr>, .since = "1.0.0",
     .summary = "Decrement the integer value of a key by one", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "INCRBY", .arity = 3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdIncrBy>, .since = "1.0.0",
     .summary = "Increment the integer value of a key by the given amount",
     .syntax = "key increment", .complexity = "O(1)"},
    {.name = "DECRBY", .arity = 3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdDecrBy>, .since = "1.0.0",
     .summary = "Decrement the integer value of a key by the given number",
     .syntax = "key decrement", .complexity = "O(1)"},
    {.name = "INCRBYFLOAT", .arity = 3, .flags = kWrite | kDenyOom | kFast,
     .keys = {kRwAccessUpdate}, .handler = vsl::Handler<CmdIncrByFloat>, .since = "2.6.0",
     .summary = "Increment the float value of a key by the given amount", .syntax = "key increment",
     .complexity = "O(1)"},
    {.name = "LCS", .arity = -3, .flags = kRead,
     .keys = {vsl::KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS, 1)}, .handler = vsl::Handler<CmdLcs>,
     .since = "7.0.0", .summary = "Find longest common substring",
     .syntax = "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
     .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
};
// clang-format on

}  // namespace
}  // namespace vessel::strings

// Uses ABI 1.1 (setting_int64) when present and still loads on a 1.0 host.
VSL_MODULE_MIN_MINOR("strings", "1.0.0", 0);

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::strings;
  vsl::ModuleInit init(api, m, "strings", nargs, err, errlen);
  init.Type(RegisterStringType, "string");
  init.Commands(kCommands, kGroup);
  init.Commands(BitmapCommands(), "bitmap");
  init.Commands(HyperLogLogCommands(), "hyperloglog");
  return init.result();
}
