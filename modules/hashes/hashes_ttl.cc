// Field expiry commands of the hashes module: Redis 7.4's HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT
// HPERSIST HTTL HPTTL HEXPIRETIME HPEXPIRETIME and Redis 8.0's HSETEX HGETEX HGETDEL, with their
// replies, per-field codes and error texts (from Redis's t_hash.c; redis-server 7.0, the
// reference of the other tests, has none of them).
//
// Times are absolute unix milliseconds, at most 2^46 - 1 (Redis's HFE_MAX_ABS_TIME_MSEC). A time
// not after the command's clock deletes the field at once (reply 2), and the hash with its last
// field. Differences from Redis: HGETEX with a time option but no FIELDS argument after it
// replies the arity error (Redis reads past its arguments there).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "hashes.h"
#include "hashes_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::hashes {
namespace {

using vsl::Ctx;

constexpr int64_t kMaxExpireMs = (int64_t{1} << 46) - 1;

enum class Unit { kSeconds, kMillis };

// Redis's parseExpireTime: an integer >= 0 in `unit`, plus basetime (0 for the *AT forms), at
// most kMaxExpireMs; the error names the command.
int64_t ParseTime(const Ctx& ctx, int i, Unit unit, int64_t basetime) {
  int64_t v = ctx.IntArg(i);
  if (v < 0) vsl::Fail("invalid expire time, must be >= 0");
  std::string name(ctx.arg(0));
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  const std::string too_big = "invalid expire time in '" + name + "' command";
  if (unit == Unit::kSeconds) {
    if (v > kMaxExpireMs / 1000) vsl::Fail(too_big);
    v *= 1000;
  }
  if (v > kMaxExpireMs - basetime) vsl::Fail(too_big);
  return v + basetime;
}

// "FIELDS numfields field [field ...]" with FIELDS at argument `at`; returns the index of the
// first field. `bad_count` is the command's message for a numfields that is not a positive
// integer.
int ParseFields(const Ctx& ctx, int at, const char* bad_count) {
  if (at + 1 >= ctx.argc()) vsl::FailArity(ctx);
  if (!ctx.ArgIs(at, "FIELDS")) {
    vsl::Fail("Mandatory argument FIELDS is missing or not at the right position");
  }
  int64_t n;
  if (!vsl::ParseInt(ctx.arg(at + 1), &n) || n < 1) vsl::Fail(bad_count);
  if (n != ctx.argc() - at - 2) {
    vsl::Fail("The `numfields` parameter must match the number of arguments");
  }
  return at + 2;
}

constexpr char kNumFieldsPositive[] = "Number of fields must be a positive integer";

// Redis 7.4's hashTypeSetExDone: "hdel" when a time in the past deleted fields (then "del" when
// the hash went with them), else "hexpire" when an expiry was set.
void NotifyExpiry(const vsl::Key& key, int updated, int deleted, bool hash_deleted) {
  if (deleted > 0) return NotifyRemoval(key, true, hash_deleted);
  if (updated > 0) key.Notify(VSL_NOTIFY_HASH, "hexpire");
}

// The append-only file records the command with its time as an absolute one in milliseconds
// (Redis propagates HEXPIRE as HPEXPIREAT), so a replay later sets the same expiry: argv[0]
// becomes `name` unless empty, the time option at `option` (when >= 0) PXAT, the time at
// `time_arg` the absolute `at`.
void PropagateAbsolute(Ctx& ctx, std::string_view name, int option, int time_arg, int64_t at) {
  std::vector<std::string_view> argv;
  argv.reserve(static_cast<size_t>(ctx.argc()));
  for (int i = 0; i < ctx.argc(); ++i) argv.push_back(ctx.arg(i));
  const std::string ms = std::to_string(at);
  if (!name.empty()) argv[0] = name;
  if (option >= 0) argv[static_cast<size_t>(option)] = "PXAT";
  argv[static_cast<size_t>(time_arg)] = ms;
  ctx.Propagate(argv);
}

// The body of HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT (Redis's hexpireGenericCommand).
void HExpireGeneric(Ctx& ctx, Unit unit, bool relative) {
  HashEditor ed(ctx, ctx.key(0));  // WRONGTYPE comes before argument errors, as in Redis
  const int64_t at = ParseTime(ctx, 2, unit, relative ? ctx.now_ms() : 0);
  ExpireCond cond = ExpireCond::kNone;
  if (ctx.ArgIs(3, "NX")) cond = ExpireCond::kNx;
  if (ctx.ArgIs(3, "XX")) cond = ExpireCond::kXx;
  if (ctx.ArgIs(3, "GT")) cond = ExpireCond::kGt;
  if (ctx.ArgIs(3, "LT")) cond = ExpireCond::kLt;
  const int first = ParseFields(ctx, cond == ExpireCond::kNone ? 3 : 4,
                                "Parameter `numFields` should be greater than 0");
  ed.MarkExpiryUsed();
  ctx.Array(ctx.argc() - first);
  int updated = 0, deleted = 0;
  for (int i = first; i < ctx.argc(); ++i) {
    const int r = ed.SetExpire(ctx.arg(i), at, cond);
    updated += r == kUpdated;
    deleted += r == kDeleted;
    ctx.Int(r);
  }
  if (relative || unit == Unit::kSeconds) PropagateAbsolute(ctx, "HPEXPIREAT", -1, 2, at);
  NotifyExpiry(ctx.key(0), updated, deleted, ed.Commit());
}

enum class Query { kTtl, kExpireTime };

// The body of HTTL HPTTL HEXPIRETIME HPEXPIRETIME (Redis's httlGenericCommand).
void HTtlGeneric(Ctx& ctx, Query query, Unit unit) {
  const void* v = LookupRead(ctx, ctx.key(0));
  const int first = ParseFields(ctx, 2, kNumFieldsPositive);
  const int64_t now = ctx.now_ms();
  const int64_t base = query == Query::kTtl ? now : 0;
  ctx.Array(ctx.argc() - first);
  for (int i = first; i < ctx.argc(); ++i) {
    HashEntry e;
    if (v == nullptr || !HashView(v).Find(ctx.arg(i), now, &e)) {
      ctx.Int(kNoField);
    } else if (e.expire == 0) {
      ctx.Int(kNoExpiry);
    } else {
      ctx.Int(unit == Unit::kSeconds ? (e.expire + 999 - base) / 1000 : e.expire - base);
    }
  }
}

}  // namespace

// HEXPIRE key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]
void CmdHExpire(Ctx& ctx) { HExpireGeneric(ctx, Unit::kSeconds, true); }

// HPEXPIRE key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]
void CmdHPExpire(Ctx& ctx) { HExpireGeneric(ctx, Unit::kMillis, true); }

// HEXPIREAT key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]
void CmdHExpireAt(Ctx& ctx) { HExpireGeneric(ctx, Unit::kSeconds, false); }

// HPEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]
void CmdHPExpireAt(Ctx& ctx) { HExpireGeneric(ctx, Unit::kMillis, false); }

// HTTL key FIELDS numfields field [field ...]
void CmdHTtl(Ctx& ctx) { HTtlGeneric(ctx, Query::kTtl, Unit::kSeconds); }

// HPTTL key FIELDS numfields field [field ...]
void CmdHPTtl(Ctx& ctx) { HTtlGeneric(ctx, Query::kTtl, Unit::kMillis); }

// HEXPIRETIME key FIELDS numfields field [field ...]
void CmdHExpireTime(Ctx& ctx) { HTtlGeneric(ctx, Query::kExpireTime, Unit::kSeconds); }

// HPEXPIRETIME key FIELDS numfields field [field ...]
void CmdHPExpireTime(Ctx& ctx) { HTtlGeneric(ctx, Query::kExpireTime, Unit::kMillis); }

// HPERSIST key FIELDS numfields field [field ...]
void CmdHPersist(Ctx& ctx) {
  HashEditor ed(ctx, ctx.key(0));
  const int first = ParseFields(ctx, 2, kNumFieldsPositive);
  ctx.Array(ctx.argc() - first);
  bool changed = false;
  for (int i = first; i < ctx.argc(); ++i) {
    const int r = ed.Persist(ctx.arg(i));
    changed |= r == kUpdated;
    ctx.Int(r);
  }
  ed.Commit();
  if (changed) ctx.key(0).Notify(VSL_NOTIFY_HASH, "hpersist");
}

namespace {

struct SetExOptions {
  enum class Cond { kNone, kFnx, kFxx } cond = Cond::kNone;
  bool has_time = false;  // EX PX EXAT PXAT
  bool keep_ttl = false;  // KEEPTTL
  int64_t at = 0;
  int time_arg = 0;  // the index of the time after EX PX EXAT PXAT
  int first = 0;     // first field
  int count = 0;     // fields
};

// HSETEX's arguments after the key (Redis 8.0's hsetexParseArgs).
SetExOptions ParseSetEx(const Ctx& ctx) {
  SetExOptions o;
  const char* kOneTime = "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
  for (int i = 2; i < ctx.argc(); ++i) {
    if (ctx.ArgIs(i, "FIELDS")) {
      if (i >= ctx.argc() - 3) vsl::FailArity(ctx);
      int64_t n;
      if (!vsl::ParseInt(ctx.arg(i + 1), &n) || n < 1 || n > INT32_MAX) {
        vsl::Fail("invalid number of fields");
      }
      const int remaining = ctx.argc() - i - 2;
      if (remaining % 2 != 0 || n != remaining / 2) vsl::FailArity(ctx);
      o.first = i + 2;
      o.count = static_cast<int>(n);
      return o;
    }
    const bool ex = ctx.ArgIs(i, "EX"), px = ctx.ArgIs(i, "PX");
    const bool exat = ctx.ArgIs(i, "EXAT"), pxat = ctx.ArgIs(i, "PXAT");
    if (ex || px || exat || pxat || ctx.ArgIs(i, "KEEPTTL")) {
      if (o.has_time || o.keep_ttl) vsl::Fail(kOneTime);
      if (!(ex || px || exat || pxat)) {
        o.keep_ttl = true;
        continue;
      }
      if (i >= ctx.argc() - 1) vsl::Fail("missing expire time");
      o.has_time = true;
      o.time_arg = i + 1;
      const Unit unit = ex || exat ? Unit::kSeconds : Unit::kMillis;
      o.at = ParseTime(ctx, ++i, unit, ex || px ? ctx.now_ms() : 0);
    } else if (ctx.ArgIs(i, "FNX") || ctx.ArgIs(i, "FXX")) {
      if (o.cond != SetExOptions::Cond::kNone) {
        vsl::Fail("Only one of FXX or FNX arguments can be specified");
      }
      o.cond = ctx.ArgIs(i, "FNX") ? SetExOptions::Cond::kFnx : SetExOptions::Cond::kFxx;
    } else {
      vsl::Fail("unknown argument: " + std::string(ctx.arg(i)));
    }
  }
  vsl::FailArity(ctx);  // unreachable with arity -6: every shape without FIELDS fails above
}

}  // namespace

// HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//   PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]
void CmdHSetEx(Ctx& ctx) {
  const SetExOptions o = ParseSetEx(ctx);
  HashEditor ed(ctx, ctx.key(0));
  if (o.cond != SetExOptions::Cond::kNone) {
    int found = 0;
    for (int i = 0; i < o.count; ++i) {
      HashEntry e;
      found += ed.Get(ctx.arg(o.first + 2 * i), &e) ? 1 : 0;
    }
    if ((o.cond == SetExOptions::Cond::kFnx && found != 0) ||
        (o.cond == SetExOptions::Cond::kFxx && found != o.count)) {
      ed.Commit();
      return ctx.Int(0);
    }
  }
  ed.Prepare(ctx, o.first, ctx.argc() - 1);
  int updated = 0, deleted = 0;
  for (int i = 0; i < o.count; ++i) {
    const std::string_view f = ctx.arg(o.first + 2 * i);
    ed.Set(f, ctx.arg(o.first + 2 * i + 1), o.keep_ttl || o.has_time);
    if (!o.has_time) continue;
    const int r = ed.SetExpire(f, o.at, ExpireCond::kNone);
    updated += r == kUpdated;
    deleted += r == kDeleted;
  }
  if (o.has_time) {
    ed.MarkExpiryUsed();
    PropagateAbsolute(ctx, "", o.time_arg - 1, o.time_arg, o.at);
  }
  const bool hash_deleted = ed.Commit();
  vsl::Key key = ctx.key(0);
  key.Notify(VSL_NOTIFY_HASH, "hset");
  NotifyExpiry(key, updated, deleted, hash_deleted);
  ctx.Int(1);
}

// HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//   PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]
void CmdHGetEx(Ctx& ctx) {
  HashEditor ed(ctx, ctx.key(0));
  const bool ex = ctx.ArgIs(2, "EX"), px = ctx.ArgIs(2, "PX");
  const bool exat = ctx.ArgIs(2, "EXAT"), pxat = ctx.ArgIs(2, "PXAT");
  const bool persist = ctx.ArgIs(2, "PERSIST");
  const bool timed = ex || px || exat || pxat;
  int64_t at = 0;
  if (timed)
    at =
        ParseTime(ctx, 3, ex || exat ? Unit::kSeconds : Unit::kMillis, ex || px ? ctx.now_ms() : 0);
  const int first = ParseFields(ctx, timed ? 4 : persist ? 3 : 2, kNumFieldsPositive);
  if (!ed.exists()) {
    ctx.Array(ctx.argc() - first);
    for (int i = first; i < ctx.argc(); ++i) ctx.Null();
    return;
  }
  if (timed || persist) ed.MarkExpiryUsed();
  ctx.Array(ctx.argc() - first);
  int updated = 0, deleted = 0, persisted = 0;
  for (int i = first; i < ctx.argc(); ++i) {
    HashEntry e;
    if (!ed.Get(ctx.arg(i), &e)) {
      ctx.Null();
      continue;
    }
    ctx.Bulk(e.value);  // copied into the reply before the field may change
    if (persist) persisted += ed.Persist(ctx.arg(i)) == kUpdated;
    if (!timed) continue;
    const int r = ed.SetExpire(ctx.arg(i), at, ExpireCond::kNone);
    updated += r == kUpdated;
    deleted += r == kDeleted;
  }
  if (timed) PropagateAbsolute(ctx, "", 2, 3, at);
  const bool hash_deleted = ed.Commit();
  if (persisted > 0) ctx.key(0).Notify(VSL_NOTIFY_HASH, "hpersist");
  NotifyExpiry(ctx.key(0), updated, deleted, hash_deleted);
}

// HGETDEL key FIELDS numfields field [field ...]
void CmdHGetDel(Ctx& ctx) {
  HashEditor ed(ctx, ctx.key(0));
  const int first = ParseFields(ctx, 2, kNumFieldsPositive);
  ctx.Array(ctx.argc() - first);
  int deleted = 0;
  for (int i = first; i < ctx.argc(); ++i) {
    HashEntry e;
    if (!ed.Get(ctx.arg(i), &e)) {
      ctx.Null();
      continue;
    }
    ctx.Bulk(e.value);
    deleted += ed.Delete(ctx.arg(i)) ? 1 : 0;
  }
  NotifyRemoval(ctx.key(0), deleted > 0, ed.Commit());
}

// ---- the command table ----

namespace {

using namespace vsl::table;

constexpr char kFieldsComplexity[] = "O(N) where N is the number of specified fields";
constexpr char kHSetExSummary[] =
    "Set the value of one or more fields of a given hash key, and optionally set their expiration.";
constexpr char kHSetExSyntax[] =
    "key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
    "unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]";
constexpr char kHGetExSummary[] =
    "Get the value of one or more fields of a given hash key, and optionally set their expiration.";
constexpr char kHGetExSyntax[] =
    "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | "
    "PERSIST] FIELDS numfields field [field ...]";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    // Field expiry: Redis 7.4.
    {.name = "HEXPIRE", .arity = -6, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHExpire>, .since = "7.4.0",
     .summary = "Set expiry for hash field using relative time to expire (seconds)",
     .syntax = "key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
     .complexity = kFieldsComplexity},
    {.name = "HPEXPIRE", .arity = -6, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHPExpire>, .since = "7.4.0",
     .summary = "Set expiry for hash field using relative time to expire (milliseconds)",
     .syntax = "key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
     .complexity = kFieldsComplexity},
    {.name = "HEXPIREAT", .arity = -6, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHExpireAt>, .since = "7.4.0",
     .summary = "Set expiry for hash field using an absolute Unix timestamp (seconds)",
     .syntax = "key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
     .complexity = kFieldsComplexity},
    {.name = "HPEXPIREAT", .arity = -6, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHPExpireAt>, .since = "7.4.0",
     .summary = "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
     .syntax = "key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
     .complexity = kFieldsComplexity},
    {.name = "HPERSIST", .arity = -5, .flags = kWrite | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHPersist>, .since = "7.4.0",
     .summary = "Removes the expiration time for each specified field",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
    {.name = "HTTL", .arity = -5, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHTtl>, .since = "7.4.0",
     .summary = "Returns the TTL in seconds of a hash field.",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
    {.name = "HPTTL", .arity = -5, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHPTtl>, .since = "7.4.0",
     .summary = "Returns the TTL in milliseconds of a hash field.",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
    {.name = "HEXPIRETIME", .arity = -5, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHExpireTime>, .since = "7.4.0",
     .summary = "Returns the expiration time of a hash field as a Unix timestamp, in seconds.",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
    {.name = "HPEXPIRETIME", .arity = -5, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdHPExpireTime>, .since = "7.4.0",
     .summary = "Returns the expiration time of a hash field as a Unix timestamp, in msec.",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
    // Redis 8.0.
    {.name = "HSETEX", .arity = -6, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdHSetEx>, .since = "8.0.0", .summary = kHSetExSummary,
     .syntax = kHSetExSyntax, .complexity = "O(N) where N is the number of fields being set."},
    {.name = "HGETEX", .arity = -5, .flags = kWrite | kFast,
     .keys = {vsl::WithNotes(kRwAccessUpdate, "RW and UPDATE because it changes the TTL")},
     .handler = vsl::Handler<CmdHGetEx>, .since = "8.0.0", .summary = kHGetExSummary,
     .syntax = kHGetExSyntax, .complexity = kFieldsComplexity},
    {.name = "HGETDEL", .arity = -5, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdHGetDel>, .since = "8.0.0",
     .summary = "Returns the value of a field and deletes it from the hash.",
     .syntax = "key FIELDS numfields field [field ...]", .complexity = kFieldsComplexity},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> TtlCommands() { return kCommands; }

}  // namespace vessel::hashes
