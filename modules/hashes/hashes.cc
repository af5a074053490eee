// The hashes module: Redis's hash family as a Vessel module (value type "hash").
//
// Commands: HSET HSETNX HMSET HGET HMGET HDEL HLEN HSTRLEN HEXISTS HKEYS HVALS HGETALL HINCRBY
// HINCRBYFLOAT HRANDFIELD HSCAN with Redis 7.0's replies, error strings, key specs and edge cases
// (redis-server 7.0 is the reference the tests compare against); field expiry with Redis 7.4's
// HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HPERSIST HTTL HPTTL HEXPIRETIME HPEXPIRETIME and Redis
// 8.0's HSETEX HGETEX HGETDEL (hashes_ttl.cc, with its part of the command table).
//
// Deliberate differences from Redis:
//   - HSCAN cursors of a hashtable are positions in the hash space (hash_table.h), not
//     reverse-binary bucket indexes; the guarantee is the same.
//   - HRANDFIELD with a negative count whose reply would pass proto-max-bulk-len (512 MiB by
//     default) is refused ("ERR value is out of range, the reply would be too large"); Redis 7.0
//     builds it until memory runs out.
//   - A compact hash holds at most 65535 fields whatever hash-max-listpack-entries says.
//   - Expired fields are invisible to reads but removed only by writes (a read runs under a shared
//     lock): a hash whose every field expired still exists for EXISTS/TYPE/DBSIZE until the next
//     write to it, where Redis 7.4 deletes it on the read. That write fires one "hexpired" for
//     the fields it removed (and "del" when the hash went); Redis fires it per touched field.
#include "hashes.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hashes_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::hashes {

void NotifyRemoval(const vsl::Key& key, bool removed, bool deleted, const char* event) {
  if (!removed) return;
  key.Notify(VSL_NOTIFY_HASH, event);
  if (deleted) key.Notify(VSL_NOTIFY_GENERIC, "del");
}

const void* LookupRead(const vsl::Ctx& ctx, const vsl::Key& key) {
  void* v = nullptr;
  const int rc = key.GetRaw(HashType(), &v);
  if (rc == VSL_WRONGTYPE) vsl::WrongType();
  if (rc != VSL_OK) return nullptr;
  const HashView h(v);
  if (h.MayHaveExpired(ctx.now_ms()) && h.Size(ctx.now_ms()) == 0) return nullptr;
  return v;
}

namespace {

using vsl::Ctx;
using vsl::Key;
using vsl::Vec;

// ---- writes ----

// HSET key field value [field value ...]  (and HMSET, which replies OK)
void HSetGeneric(Ctx& ctx, bool hmset) {
  if (ctx.argc() % 2 == 1) vsl::FailArity(ctx);
  HashEditor ed(ctx, ctx.key(0));
  ed.Prepare(ctx, 2, ctx.argc() - 1);
  int64_t created = 0;
  for (int i = 2; i < ctx.argc(); i += 2) created += ed.Set(ctx.arg(i), ctx.arg(i + 1)) ? 1 : 0;
  ed.Commit();
  ctx.key(0).Notify(VSL_NOTIFY_HASH, "hset");
  ctx.AddChanges(static_cast<uint64_t>(ctx.argc() - 2) / 2);  // every field given, as Redis
  hmset ? ctx.Ok() : ctx.Int(created);
}

// HSET key field value [field value ...]
void CmdHSet(Ctx& ctx) { HSetGeneric(ctx, false); }

// HMSET key field value [field value ...]
void CmdHMSet(Ctx& ctx) { HSetGeneric(ctx, true); }

// HSETNX key field value
void CmdHSetNx(Ctx& ctx) {
  HashEditor ed(ctx, ctx.key(0));
  HashEntry e;
  if (ed.Get(ctx.arg(2), &e)) {
    ed.Commit();
    return ctx.Int(0);
  }
  ed.Prepare(ctx, 2, 3);
  ed.Set(ctx.arg(2), ctx.arg(3));
  ed.Commit();
  ctx.key(0).Notify(VSL_NOTIFY_HASH, "hset");
  ctx.Int(1);
}

// HDEL key field [field ...]
void CmdHDel(Ctx& ctx) {
  HashEditor ed(ctx, ctx.key(0));
  int64_t deleted = 0;
  for (int i = 2; i < ctx.argc() && ed.exists(); ++i) deleted += ed.Delete(ctx.arg(i)) ? 1 : 0;
  NotifyRemoval(ctx.key(0), deleted > 0, ed.Commit());
  ctx.AddChanges(static_cast<uint64_t>(deleted));
  ctx.Int(deleted);
}

// HINCRBY key field increment
void CmdHIncrBy(Ctx& ctx) {
  const int64_t incr = ctx.IntArg(3);
  HashEditor ed(ctx, ctx.key(0));
  int64_t value = 0;
  HashEntry e;
  if (ed.Get(ctx.arg(2), &e) && !vsl::ParseInt(e.value, &value)) {
    vsl::Fail("hash value is not an integer");
  }
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) ||
      (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
    vsl::Fail("increment or decrement would overflow");
  }
  value += incr;
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof(buf), value);
  ed.Set(ctx.arg(2), {buf, static_cast<size_t>(end.ptr - buf)}, /*keep_expiry=*/true);
  ed.Commit();
  ctx.key(0).Notify(VSL_NOTIFY_HASH, "hincrby");
  ctx.Int(value);
}

// HINCRBYFLOAT key field increment
void CmdHIncrByFloat(Ctx& ctx) {
  long double incr, value = 0;
  if (!vsl::ParseLongDouble(ctx.arg(3), &incr)) vsl::NotFloat();
  if (std::isnan(incr) || std::isinf(incr)) vsl::Fail("value is NaN or Infinity");
  HashEditor ed(ctx, ctx.key(0));
  HashEntry e;
  if (ed.Get(ctx.arg(2), &e) && !vsl::ParseLongDouble(e.value, &value)) {
    vsl::Fail("hash value is not a float");
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    vsl::Fail("increment would produce NaN or Infinity");
  }
  const std::string s = vsl::FormatLongDouble(value);
  ed.Set(ctx.arg(2), s, /*keep_expiry=*/true);
  ed.Commit();
  ctx.key(0).Notify(VSL_NOTIFY_HASH, "hincrbyfloat");
  ctx.Propagate({"HSET", ctx.arg(1), ctx.arg(2), s});  // replay sets the result, as Redis
  ctx.Bulk(s);
}

// ---- reads ----

// HGET key field
void CmdHGet(Ctx& ctx) {
  const void* v = LookupRead(ctx, ctx.key(0));
  HashEntry e;
  if (v == nullptr || !HashView(v).Find(ctx.arg(2), ctx.now_ms(), &e)) return ctx.Null();
  ReplyValue(ctx, e);
}

// HMGET key field [field ...]
void CmdHMGet(Ctx& ctx) {
  const void* v = LookupRead(ctx, ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) {
    HashEntry e;
    if (v != nullptr && HashView(v).Find(ctx.arg(i), ctx.now_ms(), &e)) {
      ReplyValue(ctx, e);
    } else {
      ctx.Null();
    }
  }
}

// HLEN key
void CmdHLen(Ctx& ctx) {
  const void* v = LookupRead(ctx, ctx.key(0));
  ctx.Int(v == nullptr ? 0 : static_cast<int64_t>(HashView(v).Size(ctx.now_ms())));
}

// HSTRLEN key field
void CmdHStrLen(Ctx& ctx) {
  const void* v = LookupRead(ctx, ctx.key(0));
  HashEntry e;
  const bool found = v != nullptr && HashView(v).Find(ctx.arg(2), ctx.now_ms(), &e);
  ctx.Int(found ? static_cast<int64_t>(e.value.size()) : 0);
}

// HEXISTS key field
void CmdHExists(Ctx& ctx) {
  const void* v = LookupRead(ctx, ctx.key(0));
  HashEntry e;
  ctx.Int(v != nullptr && HashView(v).Find(ctx.arg(2), ctx.now_ms(), &e) ? 1 : 0);
}

enum What { kFields = 1, kValues = 2, kBoth = 3 };

// The body of HKEYS, HVALS and HGETALL: a map for HGETALL (a flat array in RESP2), else an array.
void ReplyAll(Ctx& ctx, What what) {
  const void* v = LookupRead(ctx, ctx.key(0));
  const int64_t n = v == nullptr ? 0 : static_cast<int64_t>(HashView(v).Size(ctx.now_ms()));
  what == kBoth ? ctx.Map(n) : ctx.Array(n);
  if (v == nullptr) return;
  HashView(v).ForEach(ctx.now_ms(), [&](const HashEntry& e) {
    if (what & kFields) ctx.Bulk(e.field);
    if (what & kValues) ctx.Bulk(e.value);
  });
}

// HKEYS key
void CmdHKeys(Ctx& ctx) { ReplyAll(ctx, kFields); }

// HVALS key
void CmdHVals(Ctx& ctx) { ReplyAll(ctx, kValues); }

// HGETALL key
void CmdHGetAll(Ctx& ctx) { ReplyAll(ctx, kBoth); }

// ---- HRANDFIELD ----

// One element of an HRANDFIELD reply: the field, or with values the pair (a nested array in
// RESP3, two elements of the flat array in RESP2).
void ReplyPick(Ctx& ctx, const HashEntry& e, bool withvalues) {
  if (withvalues && ctx.protocol() > 2) ctx.Array(2);
  ctx.Bulk(e.field);
  if (withvalues) ctx.Bulk(e.value);
}

void OpenPicks(Ctx& ctx, uint64_t n, bool withvalues) {
  ctx.Array(static_cast<int64_t>(withvalues && ctx.protocol() == 2 ? n * 2 : n));
}

// Replies `count` random fields, repetitions allowed (HRANDFIELD with a negative count).
void ReplyRepeated(Ctx& ctx, HashView h, uint64_t count, bool withvalues) {
  const int64_t now = ctx.now_ms();
  // Records of a table without expired fields are drawn in place; otherwise from a snapshot.
  const bool direct = h.is_table() && !h.MayHaveExpired(now);
  std::optional<FieldSnapshot> snap;
  if (!direct) snap.emplace(h, now);
  auto pick = [&]() -> HashEntry {
    if (direct) return GetEntry(h.table()->Random());
    return (*snap)[vsl::RandomBelow(snap->size())];
  };
  uint64_t sample = 0;  // estimate the reply from a few picks
  constexpr int kSamples = 8;
  for (int i = 0; i < kSamples; ++i) {
    const HashEntry e = pick();
    sample += e.field.size() + (withvalues ? e.value.size() + 16 : 0);
  }
  vsl::CheckRandomReply(ctx, count, sample / kSamples + 16);  // + "$<len>\r\n...\r\n"
  OpenPicks(ctx, count, withvalues);
  for (uint64_t i = 0; i < count; ++i) ReplyPick(ctx, pick(), withvalues);
}

// Replies `count` distinct random fields, count < live size.
void ReplyDistinct(Ctx& ctx, HashView h, uint64_t count, uint64_t size, bool withvalues) {
  const int64_t now = ctx.now_ms();
  if (h.is_table() && !h.MayHaveExpired(now) && count * 3 <= size) {
    vsl::PositionSet chosen(count);  // rejection: each draw is new with probability >= 2/3
    OpenPicks(ctx, count, withvalues);
    for (uint64_t sent = 0; sent < count;) {
      const unsigned char* rec = h.table()->Random();
      if (!chosen.Insert(reinterpret_cast<uintptr_t>(rec))) continue;
      ReplyPick(ctx, GetEntry(rec), withvalues);
      ++sent;
    }
    return;
  }
  const FieldSnapshot snap(h, now);  // a partial Fisher-Yates shuffle over the live entries
  Vec<uint32_t> pos(snap.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<uint32_t>(i);
  OpenPicks(ctx, count, withvalues);
  for (uint64_t i = 0; i < count; ++i) {
    std::swap(pos[i], pos[i + vsl::RandomBelow(pos.size() - i)]);
    ReplyPick(ctx, snap[pos[i]], withvalues);
  }
}

// HRANDFIELD key count [WITHVALUES]
void CmdHRandFieldCount(Ctx& ctx) {
  const int64_t l = vsl::RandomCountArg(ctx, 2);
  bool withvalues = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !ctx.ArgIs(3, "withvalues"))) vsl::SyntaxError();
  if (ctx.argc() == 4) {
    withvalues = true;
    if (l < -(INT64_MAX / 2) || l > INT64_MAX / 2) vsl::Fail("value is out of range");
  }
  const void* v = LookupRead(ctx, ctx.key(0));
  if (v == nullptr || l == 0) return static_cast<void>(ctx.Array(0));
  const HashView h(v);
  if (l < 0) return ReplyRepeated(ctx, h, static_cast<uint64_t>(-l), withvalues);
  const uint64_t size = h.Size(ctx.now_ms()), count = static_cast<uint64_t>(l);
  if (count >= size) {  // the whole hash
    OpenPicks(ctx, size, withvalues);
    h.ForEach(ctx.now_ms(), [&](const HashEntry& e) { ReplyPick(ctx, e, withvalues); });
    return;
  }
  ReplyDistinct(ctx, h, count, size, withvalues);
}

// HRANDFIELD key [count [WITHVALUES]]
void CmdHRandField(Ctx& ctx) {
  if (ctx.argc() >= 3) return CmdHRandFieldCount(ctx);
  const void* v = LookupRead(ctx, ctx.key(0));
  if (v == nullptr) return ctx.Null();
  const HashView h(v);
  if (h.is_table() && !h.MayHaveExpired(ctx.now_ms())) {
    return ctx.Bulk(GetEntry(h.table()->Random()).field);
  }
  const FieldSnapshot snap(h, ctx.now_ms());
  ctx.Bulk(snap[vsl::RandomBelow(snap.size())].field);
}

// ---- HSCAN ----

// HSCAN key cursor [MATCH pattern] [COUNT count]
void CmdHScan(Ctx& ctx) {
  const uint64_t cursor = vsl::CursorArg(ctx, 2);
  const void* v = LookupRead(ctx, ctx.key(0));
  if (v == nullptr) return vsl::ReplyEmptyScan(ctx);
  const vsl::ScanOptions o = vsl::ScanOptionsArg(ctx, 3);
  const int64_t now = ctx.now_ms();
  const HashView h(v);
  Vec<HashEntry> found;
  uint64_t examined = 0;  // COUNT bounds the work, as in Redis: filtering comes after
  auto take = [&](const HashEntry& e) {
    if (!Alive(e, now)) return;
    ++examined;
    if (o.Matches(e.field)) found.push_back(e);
  };
  uint64_t next = 0;
  if (h.is_table()) {  // buckets until COUNT fields, or 20 * COUNT buckets (as Redis counts)
    next = cursor;
    uint64_t budget = o.count > UINT64_MAX / 20 ? UINT64_MAX : o.count * 20;
    do {
      next = h.table()->ScanBucket(next, [&](const unsigned char* rec) { take(GetEntry(rec)); });
    } while (next != 0 && --budget > 0 && examined < o.count);
  } else {  // a compact hash is returned whole
    h.ForEachRaw(take);
  }
  vsl::ReplyScanCursor(ctx, next);
  ctx.Array(static_cast<int64_t>(found.size() * 2));
  for (const HashEntry& e : found) {
    ctx.Bulk(e.field);
    ctx.Bulk(e.value);
  }
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "hash";
constexpr char kAllComplexity[] = "O(N) where N is the size of the hash.";

constexpr char kHSetComplexity[] =
    "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is "
    "called with multiple field/value pairs.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "HSET", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHSet>, .since = "2.0.0",
     .summary = "Set the string value of a hash field",
     .syntax = "key field value [field value ...]", .complexity = kHSetComplexity},
    {.name = "HSETNX", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdHSetNx>, .since = "2.0.0",
     .summary = "Set the value of a hash field, only if the field does not exist",
     .syntax = "key field value", .complexity = "O(1)"},
    {.name = "HMSET", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHMSet>, .since = "2.0.0",
     .summary = "Set multiple hash fields to multiple values",
     .syntax = "key field value [field value ...]",
     .complexity = "O(N) where N is the number of fields being set."},
    {.name = "HGET", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHGet>, .since = "2.0.0", .summary = "Get the value of a hash field",
     .syntax = "key field", .complexity = "O(1)"},
    {.name = "HMGET", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHMGet>, .since = "2.0.0",
     .summary = "Get the values of all the given hash fields", .syntax = "key field [field ...]",
     .complexity = "O(N) where N is the number of fields being requested."},
    {.name = "HDEL", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdHDel>, .since = "2.0.0",
     .summary = "Delete one or more hash fields",
     .syntax = "key field [field ...]",
     .complexity = "O(N) where N is the number of fields to be removed."},
    {.name = "HLEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdHLen>, .since = "2.0.0",
     .summary = "Get the number of fields in a hash", .syntax = "key", .complexity = "O(1)"},
    {.name = "HSTRLEN", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdHStrLen>, .since = "3.2.0",
     .summary = "Get the length of the value of a hash field", .syntax = "key field",
     .complexity = "O(1)"},
    {.name = "HEXISTS", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdHExists>, .since = "2.0.0",
     .summary = "Determine if a hash field exists", .syntax = "key field", .complexity = "O(1)"},
    {.name = "HKEYS", .arity = 2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHKeys>, .since = "2.0.0", .summary = "Get all the fields in a hash",
     .syntax = "key", .complexity = kAllComplexity, .tips = kTipOrder},
    {.name = "HVALS", .arity = 2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHVals>, .since = "2.0.0", .summary = "Get all the values in a hash",
     .syntax = "key", .complexity = kAllComplexity, .tips = kTipOrder},
    {.name = "HGETALL", .arity = 2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHGetAll>, .since = "2.0.0",
     .summary = "Get all the fields and values in a hash", .syntax = "key",
     .complexity = kAllComplexity, .tips = kTipOrder},
    {.name = "HINCRBY", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdHIncrBy>, .since = "2.0.0",
     .summary = "Increment the integer value of a hash field by the given number",
     .syntax = "key field increment", .complexity = "O(1)"},
    {.name = "HINCRBYFLOAT", .arity = 4, .flags = kWrite | kDenyOom | kFast,
     .keys = {kRwAccessUpdate}, .handler = vsl::Handler<CmdHIncrByFloat>, .since = "2.6.0",
     .summary = "Increment the float value of a hash field by the given amount",
     .syntax = "key field increment", .complexity = "O(1)"},
    {.name = "HRANDFIELD", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHRandField>, .since = "6.2.0",
     .summary = "Get one or multiple random fields from a hash",
     .syntax = "key [count [WITHVALUES]]",
     .complexity = "O(N) where N is the number of fields returned", .tips = kTipRandom},
    {.name = "HSCAN", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHScan>, .since = "2.8.0",
     .summary = "Incrementally iterate hash fields and associated values",
     .syntax = "key cursor [MATCH pattern] [COUNT count]", .complexity = kScanComplexity,
     .tips = kTipRandom},
};
// clang-format on

}  // namespace
}  // namespace vessel::hashes

// Uses ABI 1.1 (setting_int64) when present and still loads on a 1.0 host.
VSL_MODULE_MIN_MINOR("hashes", "1.0.0", 0);

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::hashes;
  vsl::ModuleInit init(api, m, "hashes", nargs, err, errlen);
  init.Type(RegisterHashType, "hash");
  init.Commands(kCommands, kGroup);
  init.Commands(TtlCommands(), kGroup);
  return init.result();
}
