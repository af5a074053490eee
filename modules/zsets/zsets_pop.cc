// The zsets module's popping, blocking, random and scanning commands: ZPOPMIN ZPOPMAX ZMPOP
// BZPOPMIN BZPOPMAX BZMPOP ZRANDMEMBER ZSCAN. The blocking ones try to serve; when every key is
// empty they park the client (Ctx::Block) and simply try again when the host re-runs them
// after a write to one of their keys or the timeout.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "zsets_cmd.h"

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
  const int64_t count = ctx.argc() == 3 ? PositiveArg(ctx, 2) : -1;
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

struct MPopArgs {
  int numkeys;
  Where where;
  int64_t count;
};

// numkeys key [key ...] MIN | MAX [COUNT count], numkeys at argument `first` (Redis's
// zmpopGenericCommand).
MPopArgs ParseMPop(const Ctx& ctx, int first) {
  MPopArgs a{};
  const int64_t numkeys = IntInRange(ctx, first, 1, INT64_MAX, "numkeys should be greater than 0");
  if (numkeys >= ctx.argc() - first - 1) vsl::SyntaxError();  // no room for MIN | MAX
  a.numkeys = static_cast<int>(numkeys);
  const int where = first + a.numkeys + 1;
  if (ctx.ArgIs(where, "min")) {
    a.where = Where::kMin;
  } else if (ctx.ArgIs(where, "max")) {
    a.where = Where::kMax;
  } else {
    vsl::SyntaxError();
  }
  a.count = -1;
  for (int j = where + 1; j < ctx.argc(); ++j) {
    if (a.count == -1 && ctx.ArgIs(j, "count") && j + 1 < ctx.argc()) {
      a.count = IntInRange(ctx, ++j, 1, INT64_MAX, "count should be greater than 0");
    } else {
      vsl::SyntaxError();
    }
  }
  if (a.count == -1) a.count = 1;
  return a;
}

constexpr PopShape kMPopShape{true, true, true};

}  // namespace

// ZPOPMIN key [count]
void CmdZPopMin(Ctx& ctx) { PopMinMax(ctx, Where::kMin); }

// ZPOPMAX key [count]
void CmdZPopMax(Ctx& ctx) { PopMinMax(ctx, Where::kMax); }

// ZMPOP numkeys key [key ...] MIN | MAX [COUNT count]
void CmdZMPop(Ctx& ctx) {
  const MPopArgs a = ParseMPop(ctx, 1);
  const int i = FirstNonEmpty(ctx, a.numkeys);
  if (i < 0) return ctx.NullArray();
  PopFrom(ctx, i, a.where, a.count, kMPopShape);
}

// BZPOPMIN key [key ...] timeout
void CmdBZPopMin(Ctx& ctx) { BlockingPopMinMax(ctx, Where::kMin); }

// BZPOPMAX key [key ...] timeout
void CmdBZPopMax(Ctx& ctx) { BlockingPopMinMax(ctx, Where::kMax); }

// BZMPOP timeout numkeys key [key ...] MIN | MAX [COUNT count]
void CmdBZMPop(Ctx& ctx) {
  const MPopArgs a = ParseMPop(ctx, 2);
  const int64_t timeout = ctx.TimeoutMsArg(1);
  const int i = FirstNonEmpty(ctx, a.numkeys);
  if (i >= 0) return PopFrom(ctx, i, a.where, a.count, kMPopShape);
  if (!ctx.Block(timeout)) ctx.NullArray();
}

// ---- ZRANDMEMBER ----

namespace {

// A set of positions, for drawing distinct ones: open addressing, sized for n of them.
class PositionSet {
 public:
  explicit PositionSet(size_t n) {
    size_t cap = 8;
    while (cap < n * 2) cap *= 2;
    slots_.assign(cap, 0);
  }
  bool Insert(uint64_t pos) {  // false when already in
    const size_t mask = slots_.size() - 1;
    for (size_t i = (pos * 0x9E3779B97F4A7C15ull) >> 20 & mask;; i = (i + 1) & mask) {
      if (slots_[i] == pos + 1) return false;
      if (slots_[i] == 0) {
        slots_[i] = pos + 1;
        return true;
      }
    }
  }

 private:
  Vec<uint64_t> slots_;
};

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
  const uint64_t per_item = sample / kSamples + (withscores ? 48 : 16);
  // The reply one command builds stays under the host's limit on one value (proto-max-bulk-len).
  if (count > ctx.ValueSizeLimit() / per_item) {
    vsl::Fail("value is out of range, the reply would be too large");
  }
  const Vec<Zset::Item> all = z.rep() == Zset::Rep::kPack ? AllItems(z) : Vec<Zset::Item>();
  ItemReply out(ctx, withscores);
  out.Begin(static_cast<int64_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    out.Emit(all.empty() ? z.Random() : all[RandomBelow(all.size())]);
  }
}

// `count` (< size) distinct random elements in random order (Redis's CASE 3 and 4).
void ReplyDistinct(Ctx& ctx, const Zset& z, size_t count, bool withscores) {
  ItemReply out(ctx, withscores);
  if (z.rep() == Zset::Rep::kPack || count * 3 > z.size()) {  // a partial Fisher-Yates shuffle
    Vec<Zset::Item> all = AllItems(z);
    out.Begin(static_cast<int64_t>(count));
    for (size_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + RandomBelow(all.size() - i)]);
      out.Emit(all[i]);
    }
    return;
  }
  PositionSet chosen(count);  // rejection over table positions: holes are at most half
  out.Begin(static_cast<int64_t>(count));
  for (size_t sent = 0; sent < count;) {
    const auto p = static_cast<uint32_t>(RandomBelow(z.high()));
    if (!z.Live(p) || !chosen.Insert(p)) continue;
    out.Emit(z.ItemAt(p));
    ++sent;
  }
}

// ZRANDMEMBER key count [WITHSCORES]
void RandMemberCount(Ctx& ctx) {
  const int64_t l = ctx.IntArg(2);
  if (l == INT64_MIN) {
    vsl::Fail(
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  }
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
  uint64_t cursor;
  if (!vsl::ParseCursor(ctx.arg(2), &cursor)) vsl::Fail("invalid cursor");
  const Zset* z = GetZset(ctx.key(0));
  if (z == nullptr) {  // options are not even parsed, as in Redis
    ctx.Array(2);
    ctx.Bulk("0");
    return static_cast<void>(ctx.Array(0));
  }
  uint64_t count = 10;
  std::string_view pattern;
  bool match = false;
  for (int i = 3; i < ctx.argc(); i += 2) {
    const bool more = i + 1 < ctx.argc();
    if (more && ctx.ArgIs(i, "count")) {
      const int64_t c = ctx.IntArg(i + 1);
      if (c < 1) vsl::SyntaxError();
      count = static_cast<uint64_t>(c);
    } else if (more && ctx.ArgIs(i, "match")) {
      pattern = ctx.arg(i + 1);
      match = pattern != "*";
    } else {
      vsl::SyntaxError();
    }
  }
  auto matches = [&](std::string_view m) {
    return !match ||
           vsl::Api().glob_match(pattern.data(), pattern.size(), m.data(), m.size(), 0) != 0;
  };
  char buf[40];
  ctx.Array(2);
  if (z->rep() == Zset::Rep::kPack) {  // a listpack is returned whole, with cursor 0
    ctx.Bulk("0");
    const vsl_agg agg = ctx.DeferredArray();
    int64_t n = 0;
    for (Walker w(*z, 0); w.valid(); w.Next()) {
      const Zset::Item it = w.Get();
      if (!matches(it.member)) continue;
      ctx.Bulk(it.member);
      ctx.Bulk(FormatPackScore(it.score, buf));
      n += 2;
    }
    return ctx.SetLen(agg, n);
  }
  // A tree: table positions from the top down (see entry_table.h for the guarantee).
  const uint64_t high = z->high();
  const uint64_t hi = cursor == 0 || cursor > high ? high : cursor;
  const uint64_t lo = hi > count ? hi - count : 0;
  char num[24];
  const auto end = std::to_chars(num, num + sizeof(num), lo);
  ctx.Bulk({num, static_cast<size_t>(end.ptr - num)});
  const vsl_agg agg = ctx.DeferredArray();
  int64_t n = 0;
  for (uint64_t p = lo; p < hi; ++p) {
    if (!z->Live(static_cast<uint32_t>(p))) continue;
    const Zset::Item it = z->ItemAt(static_cast<uint32_t>(p));
    if (!matches(it.member)) continue;
    ctx.Bulk(it.member);
    ctx.Bulk(FormatScore(it.score, buf));
    n += 2;
  }
  ctx.SetLen(agg, n);
}

}  // namespace vessel::zsets
