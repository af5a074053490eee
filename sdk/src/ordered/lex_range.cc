// Lexicographic ranges and range options of the ordered container commands (see lex_range.h).
#include "vessel/ordered/lex_range.h"

#include <algorithm>

namespace vessel::ordered {

bool ParseLexBound(std::string_view arg, LexBound* out) {
  if (arg.empty()) return false;
  const bool alone = arg.size() == 1 || arg[1] == '\0';  // Redis looks at c[1] of a C string
  switch (arg[0]) {
    case '+':
      if (!alone) return false;
      *out = {LexBound::Kind::kPlusInf, true, {}};
      return true;
    case '-':
      if (!alone) return false;
      *out = {LexBound::Kind::kMinusInf, true, {}};
      return true;
    case '(':
      *out = {LexBound::Kind::kString, true, arg.substr(1)};
      return true;
    case '[':
      *out = {LexBound::Kind::kString, false, arg.substr(1)};
      return true;
    default:
      return false;
  }
}

void ParseLexRange(const vsl::Ctx& ctx, int min_arg, int max_arg, LexBound* min, LexBound* max) {
  if (!ParseLexBound(ctx.arg(min_arg), min) || !ParseLexBound(ctx.arg(max_arg), max))
    vsl::Fail("min or max not valid string range item");
}

size_t MinRank(const PackedTree& t, const LexBound& min) {
  switch (min.kind) {
    case LexBound::Kind::kMinusInf:
      return 0;
    case LexBound::Kind::kPlusInf:
      return t.size();
    default:
      return min.exclusive ? t.UpperBound(min.s) : t.LowerBound(min.s);
  }
}

size_t MaxRank(const PackedTree& t, const LexBound& max) {
  switch (max.kind) {
    case LexBound::Kind::kMinusInf:
      return 0;
    case LexBound::Kind::kPlusInf:
      return t.size();
    default:
      return max.exclusive ? t.LowerBound(max.s) : t.UpperBound(max.s);
  }
}

RangeOptions ParseRangeOptions(const vsl::Ctx& ctx, int first, bool allow_rev) {
  RangeOptions opt;
  for (int j = first; j < ctx.argc(); ++j) {
    if (ctx.ArgIs(j, "limit") && j + 2 < ctx.argc()) {
      opt.offset = ctx.IntArg(j + 1);
      opt.limit = ctx.IntArg(j + 2);
      j += 2;
    } else if (allow_rev && !opt.rev && ctx.ArgIs(j, "rev")) {
      opt.rev = true;
    } else {
      vsl::SyntaxError();
    }
  }
  return opt;
}

RankSpan SelectRanks(size_t lo, size_t hi, const RangeOptions& opt) {
  RankSpan span;
  span.rev = opt.rev;
  if (lo >= hi || opt.offset < 0 || static_cast<uint64_t>(opt.offset) >= hi - lo) return span;
  const size_t avail = hi - lo - static_cast<size_t>(opt.offset);
  span.count = opt.limit < 0 ? avail : std::min<size_t>(avail, static_cast<uint64_t>(opt.limit));
  span.first =
      opt.rev ? hi - 1 - static_cast<size_t>(opt.offset) : lo + static_cast<size_t>(opt.offset);
  return span;
}

LexRangeArgs ParseLexRangeArgs(const vsl::Ctx& ctx) {
  LexRangeArgs a;
  a.opt = ParseRangeOptions(ctx, 4, true);
  ParseLexRange(ctx, a.opt.rev ? 3 : 2, a.opt.rev ? 2 : 3, &a.min, &a.max);
  return a;
}

RankSpan SelectRanks(const PackedTree& t, const LexRangeArgs& a) {
  return SelectRanks(MinRank(t, a.min), MaxRank(t, a.max), a.opt);
}

void ReplyPair(vsl::Ctx& ctx, const PackedTree::Cursor& c) {
  ValueBuf buf;
  ctx.Bulk(c.key());
  ctx.Bulk(c.value(buf));
}

void ReplyPairs(vsl::Ctx& ctx, const PackedTree& t, const RankSpan& span) {
  ForEachRank(t, span, [&](const PackedTree::Cursor& c) { ReplyPair(ctx, c); });
}

}  // namespace vessel::ordered
