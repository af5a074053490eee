// The zsets module's counts and ranges: ZCOUNT ZLEXCOUNT, every range form (ZRANGE with
// BYSCORE/BYLEX/REV/LIMIT, ZRANGESTORE, the deprecated Z*RANGE*) and ZREMRANGEBY*, with Redis
// 7.0's argument order, errors and replies.
#include <cmath>

#include "zsets.h"

namespace vessel::zsets {

// ---- counts ----

namespace {

constexpr char kNotFloatRange[] = "min or max is not a float";

ScoreRange ScoreRangeArg(const Ctx& ctx, int min, int max) {
  ScoreRange r;
  if (!ParseScoreRange(ctx.arg(min), ctx.arg(max), &r)) vsl::Fail(kNotFloatRange);
  return r;
}

// Redis's zslParseLexRange, with its error ("ERR min or max not valid string range item").
LexRange LexRangeArg(const Ctx& ctx, int min, int max) {
  LexRange r;
  ordered::ParseLexRange(ctx, min, max, &r.min, &r.max);
  return r;
}

// How many elements from rank `first` on lie within the lex range's maximum (Redis walks
// forward, testing each: on a pack with scores not all equal, the order is not by member).
size_t LexRunLength(const Zset& z, const LexRange& r, size_t first) {
  size_t n = 0;
  for (Walker w(z, first); w.valid() && r.LteMax(w.Get().member); w.Next()) ++n;
  return n;
}

}  // namespace

// ZCOUNT key min max
void CmdZCount(Ctx& ctx) {
  const ScoreRange r = ScoreRangeArg(ctx, 2, 3);
  const Zset* z = GetZset(ctx.key(0));
  size_t first, last;
  if (z == nullptr || !z->RangeRanks(r, &first, &last)) return ctx.Int(0);
  ctx.Int(static_cast<int64_t>(last - first + 1));
}

// ZLEXCOUNT key min max
void CmdZLexCount(Ctx& ctx) {
  const LexRange r = LexRangeArg(ctx, 2, 3);
  const Zset* z = GetZset(ctx.key(0));
  const size_t first = z == nullptr ? Zset::npos : z->FirstInLex(r);
  if (first == Zset::npos) return ctx.Int(0);
  if (z->rep() == Zset::Rep::kPack)
    return ctx.Int(static_cast<int64_t>(LexRunLength(*z, r, first)));
  const size_t last = z->LastInLex(r);
  ctx.Int(last == Zset::npos || last < first ? 0 : static_cast<int64_t>(last - first + 1));
}

// ---- ranges ----

namespace {

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

// Where the elements of a range go: the client, or a destination key (ZRANGESTORE). A stored
// range is added element by element in range order, as Redis does: it starts as a pack (a
// tree when a rank range is longer than the pack limit) and converts when a limit is crossed.
class RangeSink {
 public:
  RangeSink(Ctx& ctx, bool withscores, bool store)
      : ctx_(ctx), reply_(ctx, withscores), store_(store) {}
  void Begin(int64_t n) {
    if (!store_) return reply_.Begin(n);
    lim_ = LimitsOf(ctx_);
    dst_.reset(n > lim_.entries ? Zset::NewTree() : Zset::New());
  }
  void Emit(const Zset::Item& it) {
    if (!store_) return reply_.Emit(it);
    double unused;
    dst_->Add(it.member, it.score, 0, &unused, lim_);
  }
  // The destination is key 0 (ZRANGESTORE).
  void Finish() {
    if (!store_) return reply_.Finish();
    Key dst = ctx_.key(0);
    if (dst_->empty()) {
      if (dst.Delete()) dst.Notify(VSL_NOTIFY_GENERIC, "del");
      return ctx_.Int(0);
    }
    const auto n = static_cast<int64_t>(dst_->size());
    dst.Set(g_zset_type, dst_.release());
    dst.Notify(VSL_NOTIFY_ZSET, "zrangestore");
    ctx_.Int(n);
  }
  void Empty() {
    Begin(0);
    Finish();
  }

 private:
  Ctx& ctx_;
  ItemReply reply_;
  bool store_;
  ZsetLimits lim_;
  ZsetPtr dst_;
};

// Emits n elements from rank `start`, forward or backward.
void EmitRanks(const Zset& z, size_t start, size_t n, bool reverse, RangeSink& out) {
  out.Begin(static_cast<int64_t>(n));
  Walker w(z, start);
  for (size_t k = 0; k < n; ++k) {
    out.Emit(w.Get());
    reverse ? w.Prev() : w.Next();
  }
  out.Finish();
}

// Redis's genericZrangebyrankCommand.
void RangeByRank(const Zset& z, int64_t start, int64_t end, bool reverse, RangeSink& out) {
  size_t first, last;
  if (!vsl::ClampRange(start, end, z.size(), &first, &last)) return out.Empty();
  EmitRanks(z, reverse ? z.size() - 1 - first : first, last - first, reverse, out);
}

// Redis's genericZrangebyscoreCommand: LIMIT skips `offset` elements (a negative offset
// skips past the end, as Redis's loop does) and takes `limit` (negative: all).
void RangeByScore(const Zset& z, const ScoreRange& r, int64_t offset, int64_t limit, bool reverse,
                  RangeSink& out) {
  size_t first, last;
  if (offset < 0 || (offset > 0 && static_cast<uint64_t>(offset) >= z.size()) ||
      !z.RangeRanks(r, &first, &last)) {
    return out.Empty();
  }
  const size_t avail = last - first + 1;
  if (static_cast<uint64_t>(offset) >= avail) return out.Empty();
  size_t n = avail - static_cast<size_t>(offset);
  if (limit >= 0 && static_cast<uint64_t>(limit) < n) n = static_cast<size_t>(limit);
  const size_t start = reverse ? last - static_cast<size_t>(offset) : first + offset;
  EmitRanks(z, start, n, reverse, out);
}

// Redis's genericZrangebylexCommand: each element is tested against the far bound.
void RangeByLex(const Zset& z, const LexRange& r, int64_t offset, int64_t limit, bool reverse,
                RangeSink& out) {
  const size_t at = reverse ? z.LastInLex(r) : z.FirstInLex(r);
  out.Begin(-1);
  if (at != Zset::npos && offset >= 0 &&
      (reverse ? static_cast<uint64_t>(offset) <= at : at + offset < z.size())) {
    Walker w(z, reverse ? at - static_cast<size_t>(offset) : at + static_cast<size_t>(offset));
    for (; w.valid() && limit != 0; --limit) {
      const Zset::Item it = w.Get();
      if (reverse ? !r.GteMin(it.member) : !r.LteMax(it.member)) break;
      out.Emit(it);
      reverse ? w.Prev() : w.Next();
    }
  }
  out.Finish();
}

// The body of every range command (Redis's zrangeGenericCommand): `src` is the argument index
// of the source key; its range arguments and options follow it.
void RangeGeneric(Ctx& ctx, int src, bool store, RangeType type, Direction dir) {
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  for (int j = src + 3; j < ctx.argc(); ++j) {
    const int left = ctx.argc() - j - 1;
    if (!store && ctx.ArgIs(j, "withscores")) {
      withscores = true;
    } else if (ctx.ArgIs(j, "limit") && left >= 2) {
      offset = ctx.IntArg(j + 1);
      limit = ctx.IntArg(j + 2);
      j += 2;
    } else if (dir == Direction::kAuto && ctx.ArgIs(j, "rev")) {
      dir = Direction::kReverse;
    } else if (type == RangeType::kAuto && ctx.ArgIs(j, "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && ctx.ArgIs(j, "byscore")) {
      type = RangeType::kScore;
    } else {
      vsl::SyntaxError();
    }
  }
  if (dir == Direction::kAuto) dir = Direction::kForward;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (limit != -1 && type == RangeType::kRank) {
    vsl::Fail("syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (withscores && type == RangeType::kLex) {
    vsl::Fail("syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  const bool reverse = dir == Direction::kReverse;
  int min = src + 1, max = src + 2;
  if (reverse && type != RangeType::kRank) std::swap(min, max);
  int64_t start = 0, end = 0;
  ScoreRange sr;
  LexRange lr;
  if (type == RangeType::kRank) {
    start = ctx.IntArg(min);
    end = ctx.IntArg(max);
  } else if (type == RangeType::kScore) {
    sr = ScoreRangeArg(ctx, min, max);
  } else {
    lr = LexRangeArg(ctx, min, max);
  }
  RangeSink out(ctx, withscores || store, store);
  const Zset* z = GetZset(ctx.key(store ? 1 : 0));
  if (z == nullptr) return out.Empty();
  switch (type) {
    case RangeType::kScore:
      return RangeByScore(*z, sr, offset, limit, reverse, out);
    case RangeType::kLex:
      return RangeByLex(*z, lr, offset, limit, reverse, out);
    default:
      return RangeByRank(*z, start, end, reverse, out);
  }
}

}  // namespace

// ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
void CmdZRange(Ctx& ctx) { RangeGeneric(ctx, 1, false, RangeType::kAuto, Direction::kAuto); }

// ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]
void CmdZRangeStore(Ctx& ctx) { RangeGeneric(ctx, 2, true, RangeType::kAuto, Direction::kAuto); }

// ZREVRANGE key start stop [WITHSCORES]
void CmdZRevRange(Ctx& ctx) { RangeGeneric(ctx, 1, false, RangeType::kRank, Direction::kReverse); }

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
void CmdZRangeByScore(Ctx& ctx) {
  RangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kForward);
}

// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
void CmdZRevRangeByScore(Ctx& ctx) {
  RangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kReverse);
}

// ZRANGEBYLEX key min max [LIMIT offset count]
void CmdZRangeByLex(Ctx& ctx) { RangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kForward); }

// ZREVRANGEBYLEX key max min [LIMIT offset count]
void CmdZRevRangeByLex(Ctx& ctx) {
  RangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kReverse);
}

// ---- removing ranges ----

// ZREMRANGEBYRANK key start stop
void CmdZRemRangeByRank(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), end = ctx.IntArg(3);
  Key key = ctx.key(0);
  Zset* z = GetZset(key);
  size_t first, last;
  if (z == nullptr || !vsl::ClampRange(start, end, z->size(), &first, &last)) return ctx.Int(0);
  z->EraseRanks(first, last - first);
  Commit(key, *z, "zremrangebyrank");
  ctx.AddChanges(last - first);
  ctx.Int(static_cast<int64_t>(last - first));
}

// ZREMRANGEBYSCORE key min max
void CmdZRemRangeByScore(Ctx& ctx) {
  const ScoreRange r = ScoreRangeArg(ctx, 2, 3);
  Key key = ctx.key(0);
  Zset* z = GetZset(key);
  size_t first, last;
  if (z == nullptr || !z->RangeRanks(r, &first, &last)) return ctx.Int(0);
  z->EraseRanks(first, last - first + 1);
  Commit(key, *z, "zremrangebyscore");
  ctx.AddChanges(last - first + 1);
  ctx.Int(static_cast<int64_t>(last - first + 1));
}

// ZREMRANGEBYLEX key min max
void CmdZRemRangeByLex(Ctx& ctx) {
  const LexRange r = LexRangeArg(ctx, 2, 3);
  Key key = ctx.key(0);
  Zset* z = GetZset(key);
  const size_t first = z == nullptr ? Zset::npos : z->FirstInLex(r);
  if (first == Zset::npos) return ctx.Int(0);
  const size_t n = LexRunLength(*z, r, first);
  if (n == 0) return ctx.Int(0);
  z->EraseRanks(first, n);
  Commit(key, *z, "zremrangebylex");
  ctx.AddChanges(n);
  ctx.Int(static_cast<int64_t>(n));
}

// ---- the command table ----

namespace {

using namespace vsl::table;

constexpr char kRangeCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements returned.";
constexpr char kRangeByCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
    "with LIMIT), you can consider it O(log(N)).";
constexpr char kRemRangeCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements removed by the operation.";
constexpr char kZLexCountSummary[] =
    "Count the number of members in a sorted set between a given lexicographical range";
constexpr char kZRangeStoreComplexity[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements stored into the destination key.";
constexpr char kZRevRangeSummary[] =
    "Return a range of members in a sorted set, by index, with scores ordered from high to low";
constexpr char kZRevRangeByScoreSummary[] =
    "Return a range of members in a sorted set, by score, with scores ordered from high to low";
constexpr char kZRevRangeByLexSummary[] =
    "Return a range of members in a sorted set, by lexicographical range, ordered from higher to "
    "lower strings.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "ZCOUNT", .arity = 4, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZCount>, .since = "2.0.0",
     .summary = "Count the members in a sorted set with scores within the given values",
     .syntax = "key min max", .complexity = kLogN},
    {.name = "ZLEXCOUNT", .arity = 4, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZLexCount>, .since = "2.8.9", .summary = kZLexCountSummary,
     .syntax = "key min max", .complexity = kLogN},
    {.name = "ZRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRange>, .since = "1.2.0",
     .summary = "Return a range of members in a sorted set",
     .syntax = "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
     .complexity = kRangeCost},
    {.name = "ZRANGESTORE", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kOwUpdate, kRoSecond},
     .handler = vsl::Handler<CmdZRangeStore>, .since = "6.2.0",
     .summary = "Store a range of members from sorted set into another key",
     .syntax = "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
     .complexity = kZRangeStoreComplexity},
    {.name = "ZREVRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRevRange>, .since = "1.2.0", .summary = kZRevRangeSummary,
     .syntax = "key start stop [WITHSCORES]", .complexity = kRangeCost},
    {.name = "ZRANGEBYSCORE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRangeByScore>, .since = "1.0.5",
     .summary = "Return a range of members in a sorted set, by score",
     .syntax = "key min max [WITHSCORES] [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREVRANGEBYSCORE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRevRangeByScore>, .since = "2.2.0",
     .summary = kZRevRangeByScoreSummary,
     .syntax = "key max min [WITHSCORES] [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZRANGEBYLEX", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRangeByLex>, .since = "2.8.9",
     .summary = "Return a range of members in a sorted set, by lexicographical range",
     .syntax = "key min max [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREVRANGEBYLEX", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRevRangeByLex>, .since = "2.8.9",
     .summary = kZRevRangeByLexSummary,
     .syntax = "key max min [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREMRANGEBYRANK", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdZRemRangeByRank>, .since = "2.0.0",
     .summary = "Remove all members in a sorted set within the given indexes",
     .syntax = "key start stop", .complexity = kRemRangeCost},
    {.name = "ZREMRANGEBYSCORE", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdZRemRangeByScore>, .since = "1.2.0",
     .summary = "Remove all members in a sorted set within the given scores",
     .syntax = "key min max", .complexity = kRemRangeCost},
    {.name = "ZREMRANGEBYLEX", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdZRemRangeByLex>, .since = "2.8.9",
     .summary = "Remove all members in a sorted set between the given lexicographical range",
     .syntax = "key min max", .complexity = kRemRangeCost},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> RangeCommands() { return kCommands; }

}  // namespace vessel::zsets
