// The zsets module's popping, blocking, random and scanning commands: ZPOPMIN ZPOPMAX ZMPOP
// BZPOPMIN BZPOPMAX BZMPOP ZRANDMEMBER ZSCAN. The blocking ones try to serve; when every key is
// empty they park the client (Ctx::Block) and simply try again when the host re-runs them
// after a write to one of their keys or the timeout.
#include <algorithm>
#include <string>

#include "zsets.h"

namespace vessel::zsets {
namespace {

enum class Where { kMin, kMax };

struct PopShape {
  bool emit_key;  // the key's name leads the reply (BZPOP*, ZMPOP, BZMPOP)
  bool nested;    // [member, score] pairs (RESP3 ZPOP* with a count; ZMPOP and BZMPOP always)
  bool nil_when_empty;
};

// Pops up to `count` elements (-1: one, the plain form) from the set at key index `i` (not
// empty) and replies them in `shape` (Redis's genericZpopCommand once it found its key).
void PopFrom(Ctx& ctx, int i, Where where, int64_t count, const PopShape& shape) {
  Key key = ctx.key(i);
  Zset* z = GetZset(key);
  if (count == 0) return static_cast<void>(ctx.Array(0));
  if (count == -1) count = 1;
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), z->size());
  const auto len = static_cast<int64_t>(n);
  if (!shape.nested && !shape.emit_key) {
    ctx.Array(len * 2);
  } else if (shape.nested && !shape.emit_key) {
    ctx.Array(len);
  } else if (!shape.nested) {
    ctx.Array(len * 2 + 1);
    ctx.Bulk(key.name());
  } else {
    ctx.Array(2);
    ctx.Bulk(key.name());
    ctx.Array(len);
  }
  const size_t start = where == Where::kMin ? 0 : z->size() - 1;
  Walker w(*z, start);
  for (size_t k = 0; k < n; ++k) {
    const Zset::Item it = w.Get();
    if (shape.nested) ctx.Array(2);
    ctx.Bulk(it.member);
    ctx.Double(it.score);
    where == Where::kMin ? w.Next() : w.Prev();
  }
  // BZPOP*, ZMPOP and BZMPOP replay as ZPOPMIN / ZPOPMAX key [count], as Redis propagates them.
  if (shape.emit_key) {
    const char* pop = where == Where::kMin ? "ZPOPMIN" : "ZPOPMAX";
    if (shape.nested) {
      ctx.Propagate({pop, key.name(), std::to_string(n)});
    } else {
      ctx.Propagate({pop, key.name()});
    }
  }
  z->EraseRanks(where == Where::kMin ? 0 : z->size() - n, n);
  Commit(key, *z, where == Where::kMin ? "zpopmin" : "zpopmax");
  ctx.AddChanges(n);  // one per element popped, as Redis
}

// The first of keys [0, nkeys) holding a set, or -1; WRONGTYPE at the first holding another
// type (Redis's genericZpopCommand and blockingGenericZpopCommand check in key order).
int FirstNonEmpty(const Ctx& ctx, int nkeys) {
  for (int i = 0; i < nkeys; ++i) {
    const Zset* z = GetZset(ctx.key(i));
    if (z != nullptr && !z->empty()) return i;
  }
  return -1;
}

// ZPOPMIN/ZPOPMAX key [count]
void PopMinMax(Ctx& ctx, Where where) {
  if (ctx.argc() > 3) vsl::SyntaxError();
  const int64_t count = ctx.argc() == 3 ? vsl::PositiveArg(ctx, 2) : -1;
  const PopShape shape{false, ctx.protocol() > 2 && count != -1, false};
  if (FirstNonEmpty(ctx, 1) < 0) return static_cast<void>(ctx.Array(0));
  PopFrom(ctx, 0, where, count, shape);
}

// The body of BZPOPMIN and BZPOPMAX.
void BlockingPopMinMax(Ctx& ctx, Where where) {
  const int64_t timeout = ctx.TimeoutMsArg(ctx.argc() - 1);
  const int i = FirstNonEmpty(ctx, ctx.key_count());
  if (i >= 0) return PopFrom(ctx, i, where, -1, PopShape{true, false, false});
  if (!ctx.Block(timeout)) ctx.NullArray();
}

// numkeys key [key ...] MIN | MAX [COUNT count], numkeys at argument `first`.
vsl::MPopArgs ZMPopArg(const Ctx& ctx, int first) { return vsl::MPopArg(ctx, first, "min", "max"); }

Where WhereOf(const vsl::MPopArgs& a) { return a.second ? Where::kMax : Where::kMin; }

constexpr PopShape kMPopShape{true, true, true};

}  // namespace

// ZPOPMIN key [count]
void CmdZPopMin(Ctx& ctx) { PopMinMax(ctx, Where::kMin); }

// ZPOPMAX key [count]
void CmdZPopMax(Ctx& ctx) { PopMinMax(ctx, Where::kMax); }

// ZMPOP numkeys key [key ...] MIN | MAX [COUNT count]
void CmdZMPop(Ctx& ctx) {
  const vsl::MPopArgs a = ZMPopArg(ctx, 1);
  const int i = FirstNonEmpty(ctx, a.numkeys);
  if (i < 0) return ctx.NullArray();
  PopFrom(ctx, i, WhereOf(a), a.count, kMPopShape);
}

// BZPOPMIN key [key ...] timeout
void CmdBZPopMin(Ctx& ctx) { BlockingPopMinMax(ctx, Where::kMin); }

// BZPOPMAX key [key ...] timeout
void CmdBZPopMax(Ctx& ctx) { BlockingPopMinMax(ctx, Where::kMax); }

// BZMPOP timeout numkeys key [key ...] MIN | MAX [COUNT count]
void CmdBZMPop(Ctx& ctx) {
  const vsl::MPopArgs a = ZMPopArg(ctx, 2);
  const int64_t timeout = ctx.TimeoutMsArg(1);
  const int i = FirstNonEmpty(ctx, a.numkeys);
  if (i >= 0) return PopFrom(ctx, i, WhereOf(a), a.count, kMPopShape);
  if (!ctx.Block(timeout)) ctx.NullArray();
}

// ---- ZRANDMEMBER ----

namespace {

// Every element, for picking among them by index (a pack, or a large share of a tree).
Vec<Zset::Item> AllItems(const Zset& z) {
  Vec<Zset::Item> all;
  all.reserve(z.size());
  for (Walker w(z, 0); w.valid(); w.Next()) all.push_back(w.Get());
  return all;
}

// `count` random elements, repetitions allowed (Redis's CASE 1).
void ReplyRepeated(Ctx& ctx, const Zset& z, uint64_t count, bool withscores) {
  uint64_t sample = 0;  // estimate the reply from a few elements
  constexpr int kSamples = 8;
  for (int i = 0; i < kSamples; ++i) sample += z.Random().member.size();
  vsl::CheckRandomReply(ctx, count, sample / kSamples + (withscores ? 48 : 16));
  const Vec<Zset::Item> all = z.rep() == Zset::Rep::kPack ? AllItems(z) : Vec<Zset::Item>();
  ItemReply out(ctx, withscores);
  out.Begin(static_cast<int64_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    out.Emit(all.empty() ? z.Random() : all[vsl::RandomBelow(all.size())]);
  }
}

// `count` (< size) distinct random elements in random order (Redis's CASE 3 and 4).
void ReplyDistinct(Ctx& ctx, const Zset& z, size_t count, bool withscores) {
  ItemReply out(ctx, withscores);
  if (z.rep() == Zset::Rep::kPack || count * 3 > z.size()) {  // a partial Fisher-Yates shuffle
    Vec<Zset::Item> all = AllItems(z);
    out.Begin(static_cast<int64_t>(count));
    for (size_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + vsl::RandomBelow(all.size() - i)]);
      out.Emit(all[i]);
    }
    return;
  }
  vsl::PositionSet chosen(count);  // rejection over table positions: holes are at most half
  out.Begin(static_cast<int64_t>(count));
  for (size_t sent = 0; sent < count;) {
    const auto p = static_cast<uint32_t>(vsl::RandomBelow(z.high()));
    if (!z.Live(p) || !chosen.Insert(p)) continue;
    out.Emit(z.ItemAt(p));
    ++sent;
  }
}

// ZRANDMEMBER key count [WITHSCORES]
void RandMemberCount(Ctx& ctx) {
  const int64_t l = vsl::RandomCountArg(ctx, 2);
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !ctx.ArgIs(3, "withscores"))) vsl::SyntaxError();
  const bool withscores = ctx.argc() == 4;
  if (withscores && (l < -INT64_MAX / 2 || l > INT64_MAX / 2)) vsl::Fail("value is out of range");
  const Zset* z = GetZset(ctx.key(0));
  if (z == nullptr || l == 0) return static_cast<void>(ctx.Array(0));
  const uint64_t count = l < 0 ? static_cast<uint64_t>(-l) : static_cast<uint64_t>(l);
  if (l < 0 || count == 1) return ReplyRepeated(ctx, *z, count, withscores);
  if (count >= z->size()) {  // the whole set, highest score first (Redis's CASE 2)
    ItemReply out(ctx, withscores);
    out.Begin(static_cast<int64_t>(z->size()));
    for (Walker w(*z, z->size() - 1); w.valid(); w.Prev()) out.Emit(w.Get());
    return;
  }
  ReplyDistinct(ctx, *z, static_cast<size_t>(count), withscores);
}

}  // namespace

// ZRANDMEMBER key [count [WITHSCORES]]
void CmdZRandMember(Ctx& ctx) {
  if (ctx.argc() >= 3) return RandMemberCount(ctx);
  const Zset* z = GetZset(ctx.key(0));
  if (z == nullptr) return ctx.Null();
  ctx.Bulk(z->Random().member);
}

// ---- ZSCAN ----

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void CmdZScan(Ctx& ctx) {
  const uint64_t cursor = vsl::CursorArg(ctx, 2);
  const Zset* z = GetZset(ctx.key(0));
  if (z == nullptr) return vsl::ReplyEmptyScan(ctx);
  const vsl::ScanOptions o = vsl::ScanOptionsArg(ctx, 3);
  char buf[40];
  if (z->rep() == Zset::Rep::kPack) {  // a listpack is returned whole, with cursor 0
    vsl::ReplyScanCursor(ctx, 0);
    const vsl_agg agg = ctx.DeferredArray();
    int64_t n = 0;
    for (Walker w(*z, 0); w.valid(); w.Next()) {
      const Zset::Item it = w.Get();
      if (!o.Matches(it.member)) continue;
      ctx.Bulk(it.member);
      ctx.Bulk(FormatPackScore(it.score, buf));
      n += 2;
    }
    return ctx.SetLen(agg, n);
  }
  // A tree: table positions from the top down (see member_table.h for the guarantee).
  const uint64_t high = z->high();
  const uint64_t hi = cursor == 0 || cursor > high ? high : cursor;
  const uint64_t lo = hi > o.count ? hi - o.count : 0;
  vsl::ReplyScanCursor(ctx, lo);
  const vsl_agg agg = ctx.DeferredArray();
  int64_t n = 0;
  for (uint64_t p = lo; p < hi; ++p) {
    if (!z->Live(static_cast<uint32_t>(p))) continue;
    const Zset::Item it = z->ItemAt(static_cast<uint32_t>(p));
    if (!o.Matches(it.member)) continue;
    ctx.Bulk(it.member);
    ctx.Bulk(FormatScore(it.score, buf));
    n += 2;
  }
  ctx.SetLen(agg, n);
}

// ---- the command table ----

namespace {

using namespace vsl::table;

constexpr char kPopCost[] =
    "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
    "of elements popped.";
constexpr char kMPopCost[] =
    "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
    "in the sorted set, and M being the number of elements popped.";
constexpr char kBZPopMinSummary[] =
    "Remove and return the member with the lowest score from one or more sorted sets, or block "
    "until one is available";
constexpr char kBZPopMaxSummary[] =
    "Remove and return the member with the highest score from one or more sorted sets, or block "
    "until one is available";
constexpr char kBZMPopSummary[] =
    "Remove and return members with scores in a sorted set or block until one is available";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "ZPOPMIN", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdZPopMin>, .since = "5.0.0",
     .summary = "Remove and return members with the lowest scores in a sorted set",
     .syntax = "key [count]", .complexity = kPopCost},
    {.name = "ZPOPMAX", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdZPopMax>, .since = "5.0.0",
     .summary = "Remove and return members with the highest scores in a sorted set",
     .syntax = "key [count]", .complexity = kPopCost},
    {.name = "ZMPOP", .arity = -4, .flags = kWrite,
     .keys = {vsl::KeyNum(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = vsl::Handler<CmdZMPop>, .since = "7.0.0",
     .summary = "Remove and return members with scores in a sorted set",
     .syntax = "numkeys key [key ...] MIN | MAX [COUNT count]", .complexity = kMPopCost},
    {.name = "BZPOPMIN", .arity = -3, .flags = kWrite | kNoScript | kBlocking | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = vsl::Handler<CmdBZPopMin>, .since = "5.0.0", .summary = kBZPopMinSummary,
     .syntax = "key [key ...] timeout", .complexity = kLogN},
    {.name = "BZPOPMAX", .arity = -3, .flags = kWrite | kNoScript | kBlocking | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = vsl::Handler<CmdBZPopMax>, .since = "5.0.0", .summary = kBZPopMaxSummary,
     .syntax = "key [key ...] timeout", .complexity = kLogN},
    {.name = "BZMPOP", .arity = -5, .flags = kWrite | kBlocking,
     .keys = {vsl::KeyNum(2, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = vsl::Handler<CmdBZMPop>, .since = "7.0.0", .summary = kBZMPopSummary,
     .syntax = "timeout numkeys key [key ...] MIN | MAX [COUNT count]", .complexity = kMPopCost},
    {.name = "ZRANDMEMBER", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZRandMember>, .since = "6.2.0",
     .summary = "Get one or multiple random elements from a sorted set",
     .syntax = "key [count [WITHSCORES]]",
     .complexity = "O(N) where N is the number of elements returned", .tips = kTipRandom},
    {.name = "ZSCAN", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdZScan>, .since = "2.8.0",
     .summary = "Incrementally iterate sorted sets elements and associated scores",
     .syntax = "key cursor [MATCH pattern] [COUNT count]", .complexity = kScanComplexity,
     .tips = kTipRandom},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> PopCommands() { return kCommands; }

}  // namespace vessel::zsets
