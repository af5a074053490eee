// The zsets module's single-key commands: adding, removing, scores, ranks, counts and every
// range form (ZRANGE with BYSCORE/BYLEX/REV/LIMIT, ZRANGESTORE, the deprecated Z*RANGE*,
// ZREMRANGEBY*), with Redis 7.0's argument order, errors and replies.
#include "zsets.h"

#include <cmath>

namespace vessel::zsets {

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

// ---- counts ----

namespace {

constexpr char kNotFloatRange[] = "min or max is not a float";
constexpr char kNotLexRange[] = "min or max not valid string range item";

ScoreRange ScoreRangeArg(const Ctx& ctx, int min, int max) {
  ScoreRange r;
  if (!ParseScoreRange(ctx.arg(min), ctx.arg(max), &r)) vsl::Fail(kNotFloatRange);
  return r;
}

LexRange LexRangeArg(const Ctx& ctx, int min, int max) {
  LexRange r;
  if (!ParseLexRange(ctx.arg(min), ctx.arg(max), &r)) vsl::Fail(kNotLexRange);
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

}  // namespace vessel::zsets
