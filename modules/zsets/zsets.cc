// The zsets module: Redis's sorted-set family and geo commands as a Vessel module (value type
// "zset"). This file holds what the command files share (zsets.h), the commands on single
// members (ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK) and the entry point; the others
// live in zsets_range.cc (counts and ranges), zsets_pop.cc (pops, blocking pops, ZRANDMEMBER,
// ZSCAN), zsets_algebra.cc (ZUNION/ZINTER/ZDIFF and their STORE forms, ZINTERCARD) and
// zsets_geo.cc. Each file holds its part of the command table, registered below.
//
// Commands: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ZRANGE
// ZRANGESTORE ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX
// ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP BZPOPMIN BZPOPMAX BZMPOP
// ZRANDMEMBER ZUNION ZINTER ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD ZSCAN, and
// GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER
// GEORADIUS_RO GEORADIUSBYMEMBER_RO, with Redis 7.0's replies, error strings, key specs and
// edge cases (redis-server 7.0 is the reference the tests compare against).
//
// Deliberate differences from Redis 7.0:
//   - ZSCAN cursors of a large set are positions in its member table, not reverse-binary bucket
//     indexes; the guarantee is the same (every member present for the whole iteration is
//     returned, some may come twice).
//   - ZRANGEBYLEX and friends on a large set whose scores differ descend as if the set were in
//     member order (Redis's skiplist result then depends on its random levels; a small set
//     behaves exactly as Redis's listpack).
//   - ZRANDMEMBER with a negative count whose reply would pass proto-max-bulk-len (512 MiB by
//     default) is refused ("ERR value is out of range, the reply would be too large"); Redis 7.0
//     builds it until memory runs out.
//   - The blocking commands re-run on every write to their keys: a client blocked on a key that
//     another client sets to a non-zset value gets the WRONGTYPE error (Redis keeps it blocked).
//   - Geo: see zsets_geo.cc.
// Needs ABI 1.2 (key_type_name, key_visit) to take plain sets as ZUNION/ZINTER/ZDIFF inputs.
#include "zsets.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vessel::zsets {

// ---- what the command files share (zsets.h) ----

int64_t StoreResult(Key& dst, std::span<const Zset::Item> sorted, const ZsetLimits& lim,
                    const char* event) {
  if (sorted.empty()) {
    if (dst.Delete()) dst.Notify(VSL_NOTIFY_GENERIC, "del");
    return 0;
  }
  ZsetPtr z(Zset::Build(sorted, lim));
  dst.Set(g_zset_type, z.release());
  dst.Notify(VSL_NOTIFY_ZSET, event);
  return static_cast<int64_t>(sorted.size());
}

void SortItems(std::span<Zset::Item> items) {
  std::sort(items.begin(), items.end(), [](const Zset::Item& a, const Zset::Item& b) {
    if (a.score != b.score) return a.score < b.score;
    return CompareMembers(a.member, b.member) < 0;
  });
}

// ---- parsing ----

namespace {

// strtod() over the argument as a C string (it ends at a NUL byte, as in Redis), which must be
// consumed whole; NaN refused.
bool ParseBound(std::string_view s, double* out, bool* ex) {
  *ex = !s.empty() && s[0] == '(';
  if (*ex) s.remove_prefix(1);
  const std::string buf(s);
  char* end = nullptr;
  const double v = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v)) return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out) {
  return ParseBound(min, &out->min, &out->minex) && ParseBound(max, &out->max, &out->maxex);
}

// ---- replies ----

void ItemReply::Begin(int64_t n) {
  const bool flat_pairs = withscores_ && ctx_.protocol() == 2;
  if (n < 0) {
    deferred_ = true;
    agg_ = ctx_.DeferredArray();
    return;
  }
  ctx_.Array(flat_pairs ? n * 2 : n);
}

void ItemReply::Emit(const Zset::Item& it) {
  if (withscores_ && ctx_.protocol() > 2) ctx_.Array(2);
  ctx_.Bulk(it.member);
  if (withscores_) ctx_.Double(it.score);
  ++sent_;
}

void ItemReply::Finish() {
  if (!deferred_) return;
  ctx_.SetLen(agg_, withscores_ && ctx_.protocol() == 2 ? sent_ * 2 : sent_);
}

std::string_view FormatScore(double v, char (&buf)[40]) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return {buf, static_cast<size_t>(n)};
}

std::string_view FormatPackScore(double v, char (&buf)[40]) {
  // Redis's double2ll: an integral value within +-LLONG_MAX/2 is stored as an integer.
  constexpr double kLimit = static_cast<double>(INT64_MAX / 2);
  if (v >= -kLimit && v <= kLimit && v == std::trunc(v)) {
    const int n = std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
    return {buf, static_cast<size_t>(n)};
  }
  return FormatScore(v, buf);
}

std::string_view FormatHuman(double v, char (&buf)[64]) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  if (n < 0 || n >= static_cast<int>(sizeof(buf))) n = 0;  // |v| <= 180 here: never
  if (std::memchr(buf, '.', static_cast<size_t>(n)) != nullptr) {
    while (n > 0 && buf[n - 1] == '0') --n;
    if (n > 0 && buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') {
    buf[0] = '0';
    n = 1;
  }
  return {buf, static_cast<size_t>(n)};
}

// ---- ZADD and ZINCRBY ----

void ApplyAdd(Ctx& ctx, int flags, bool ch, std::span<const double> scores,
              std::span<const std::string_view> members) {
  Key key = ctx.key(0);
  Zset* z = GetZset(key);
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  if (z != nullptr || !(flags & kAddXx)) {
    ZsetPtr fresh(z == nullptr ? Zset::New() : nullptr);
    if (fresh != nullptr) z = fresh.get();
    const ZsetLimits lim = LimitsOf(ctx);
    bool nan = false;
    try {
      for (size_t j = 0; j < scores.size() && !nan; ++j) {
        double newscore = 0;
        const int r = z->Add(members[j], scores[j], flags, &newscore, lim);
        nan = (r & kNan) != 0;
        added += (r & kAdded) ? 1 : 0;
        updated += (r & kUpdated) ? 1 : 0;
        processed += (r & (kNop | kNan)) ? 0 : 1;
        score = newscore;
      }
    } catch (...) {
      if (fresh == nullptr && added + updated > 0) key.Modified();
      throw;
    }
    if (fresh != nullptr) {
      if (!fresh->empty()) key.Set(g_zset_type, fresh.release());
    } else if (added + updated > 0) {
      key.Modified();
    }
    // GEOADD runs as ZADD in Redis: "zadd" too.
    if (added + updated > 0) key.Notify(VSL_NOTIFY_ZSET, (flags & kAddIncr) ? "zincr" : "zadd");
    ctx.AddChanges(nan ? 0 : static_cast<uint64_t>(added + updated));  // as Redis counts them
    if (nan) vsl::Fail("resulting score is not a number (NaN)");
  }
  if (!(flags & kAddIncr)) return ctx.Int(ch ? added + updated : added);
  if (processed > 0) return ctx.Double(score);
  ctx.Null();
}

namespace {

// The body of ZADD and ZINCRBY (Redis's zaddGenericCommand).
void AddGeneric(Ctx& ctx, int flags) {
  int idx = 2;
  bool ch = false;
  for (; idx < ctx.argc(); ++idx) {
    if (ctx.ArgIs(idx, "nx")) {
      flags |= kAddNx;
    } else if (ctx.ArgIs(idx, "xx")) {
      flags |= kAddXx;
    } else if (ctx.ArgIs(idx, "ch")) {
      ch = true;
    } else if (ctx.ArgIs(idx, "incr")) {
      flags |= kAddIncr;
    } else if (ctx.ArgIs(idx, "gt")) {
      flags |= kAddGt;
    } else if (ctx.ArgIs(idx, "lt")) {
      flags |= kAddLt;
    } else {
      break;
    }
  }
  const int pairs2 = ctx.argc() - idx;
  if (pairs2 % 2 != 0 || pairs2 == 0) vsl::SyntaxError();
  const int pairs = pairs2 / 2;
  const bool nx = flags & kAddNx, xx = flags & kAddXx, gt = flags & kAddGt, lt = flags & kAddLt;
  if (nx && xx) vsl::Fail("XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    vsl::Fail("GT, LT, and/or NX options at the same time are not compatible");
  }
  if ((flags & kAddIncr) && pairs > 1) {
    vsl::Fail("INCR option supports a single increment-element pair");
  }
  Vec<double> scores(static_cast<size_t>(pairs));
  Vec<std::string_view> members(static_cast<size_t>(pairs));
  for (int j = 0; j < pairs; ++j) {
    scores[j] = ctx.DoubleArg(idx + 2 * j);
    members[j] = ctx.arg(idx + 2 * j + 1);
  }
  ApplyAdd(ctx, flags, ch, scores, members);
}

}  // namespace

// ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]
void CmdZAdd(Ctx& ctx) { AddGeneric(ctx, 0); }

// ZINCRBY key increment member
void CmdZIncrBy(Ctx& ctx) { AddGeneric(ctx, kAddIncr); }

// ---- single members ----

// ZREM key member [member ...]
void CmdZRem(Ctx& ctx) {
  Key key = ctx.key(0);
  Zset* z = GetZset(key);
  int64_t removed = 0;
  for (int i = 2; z != nullptr && i < ctx.argc() && !z->empty(); ++i) {
    removed += z->Remove(ctx.arg(i)) ? 1 : 0;
  }
  if (removed > 0) Commit(key, *z, "zrem");
  ctx.AddChanges(static_cast<uint64_t>(removed));
  ctx.Int(removed);
}

// ZCARD key
void CmdZCard(Ctx& ctx) {
  const Zset* z = GetZset(ctx.key(0));
  ctx.Int(z == nullptr ? 0 : static_cast<int64_t>(z->size()));
}

// ZSCORE key member
void CmdZScore(Ctx& ctx) {
  const Zset* z = GetZset(ctx.key(0));
  double score;
  if (z == nullptr || !z->Score(ctx.arg(2), &score)) return ctx.Null();
  ctx.Double(score);
}

// ZMSCORE key member [member ...]
void CmdZMScore(Ctx& ctx) {
  const Zset* z = GetZset(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) {
    double score;
    if (z == nullptr || !z->Score(ctx.arg(i), &score)) {
      ctx.Null();
    } else {
      ctx.Double(score);
    }
  }
}

namespace {

void RankGeneric(Ctx& ctx, bool reverse) {
  const Zset* z = GetZset(ctx.key(0));
  const int64_t rank = z == nullptr ? -1 : z->Rank(ctx.arg(2));
  if (rank < 0) return ctx.Null();
  ctx.Int(reverse ? static_cast<int64_t>(z->size()) - 1 - rank : rank);
}

}  // namespace

// ZRANK key member
void CmdZRank(Ctx& ctx) { RankGeneric(ctx, false); }

// ZREVRANK key member
void CmdZRevRank(Ctx& ctx) { RankGeneric(ctx, true); }

// ---- the command table ----

namespace {

using namespace vsl::table;

constexpr char kZAddSummary[] =
    "Add one or more members to a sorted set, or update its score if it already exists";
constexpr char kZRemComplexity[] =
    "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
    "elements to be removed.";
constexpr char kZRevRankSummary[] =
    "Determine the index of a member in a sorted set, with scores ordered from high to low";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "ZADD", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdZAdd>, .since = "1.2.0", .summary = kZAddSummary,
     .syntax = "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
     .complexity = kLogAdd},
    {.name = "ZINCRBY", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdZIncrBy>, .since = "1.2.0",
     .summary = "Increment the score of a member in a sorted set", .syntax = "key increment member",
     .complexity = "O(log(N)) where N is the number of elements in the sorted set."},
    {.name = "ZREM", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdZRem>, .since = "1.2.0",
     .summary = "Remove one or more members from a sorted set", .syntax = "key member [member ...]",
     .complexity = kZRemComplexity},
    {.name = "ZCARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdZCard>, .since = "1.2.0",
     .summary = "Get the number of members in a sorted set", .syntax = "key", .complexity = "O(1)"},
    {.name = "ZSCORE", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZScore>, .since = "1.2.0",
     .summary = "Get the score associated with the given member in a sorted set",
     .syntax = "key member", .complexity = "O(1)"},
    {.name = "ZMSCORE", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZMScore>, .since = "6.2.0",
     .summary = "Get the score associated with the given members in a sorted set",
     .syntax = "key member [member ...]",
     .complexity = "O(N) where N is the number of members being requested."},
    {.name = "ZRANK", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRank>, .since = "2.0.0",
     .summary = "Determine the index of a member in a sorted set", .syntax = "key member",
     .complexity = "O(log(N))"},
    {.name = "ZREVRANK", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRevRank>, .since = "2.0.0", .summary = kZRevRankSummary,
     .syntax = "key member", .complexity = "O(log(N))"},
};
// clang-format on

}  // namespace

}  // namespace vessel::zsets

VSL_MODULE("zsets", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::zsets;
  vsl::ModuleInit init(api, m, "zsets", nargs, err, errlen);
  init.Type(g_zset_type, "zset", 1);
  init.Commands(kCommands, "sorted-set");
  init.Commands(RangeCommands(), "sorted-set");
  init.Commands(PopCommands(), "sorted-set");
  init.Commands(AlgebraCommands(), "sorted-set");
  init.Commands(GeoCommands(), "geo");
  return init.result();
}
