// What the ordered container commands share besides the tree: ZRANGEBYLEX's range bounds and
// ZRANGE's [REV] [LIMIT offset count] options, turned into the ranks of a PackedTree to reply, and
// the replies of entries as key, value pairs.
#ifndef VESSEL_SDK_ORDERED_LEX_RANGE_H_
#define VESSEL_SDK_ORDERED_LEX_RANGE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"

namespace vessel::ordered {

// One end of a range, as ZRANGEBYLEX takes it: "[x" (x included), "(x" (x excluded), "-" (below
// everything) or "+" (above everything).
struct LexBound {
  enum class Kind { kMinusInf, kPlusInf, kString } kind = Kind::kMinusInf;
  bool exclusive = false;
  std::string_view s;
};

// Redis's zslParseLexRangeItem; false for anything else.
bool ParseLexBound(std::string_view arg, LexBound* out);
// Both bounds, failing with Redis's "ERR min or max not valid string range item".
void ParseLexRange(const vsl::Ctx& ctx, int min_arg, int max_arg, LexBound* min, LexBound* max);

// The entries of the tree inside [min, max] are the ranks [MinRank, MaxRank) (empty when the
// first is not below the second).
size_t MinRank(const PackedTree& t, const LexBound& min);
size_t MaxRank(const PackedTree& t, const LexBound& max);

// ZRANGE's options after the bounds: REV (when allowed) and LIMIT offset count (a negative count
// means no limit, a negative offset an empty reply, as in Redis).
struct RangeOptions {
  bool rev = false;
  int64_t offset = 0;
  int64_t limit = -1;
};
// Parses arguments [first, argc) with Redis's errors ("ERR syntax error" for anything else, the
// integer error for a bad LIMIT).
RangeOptions ParseRangeOptions(const vsl::Ctx& ctx, int first, bool allow_rev);

// The ranks a range reply holds, in reply order: count ranks from `first`, going down when rev.
struct RankSpan {
  size_t first = 0;
  size_t count = 0;
  bool rev = false;
};
RankSpan SelectRanks(size_t lo, size_t hi, const RangeOptions& opt);

// The arguments of a range command, key min max [REV] [LIMIT offset count] (OMAP.RANGE,
// BAG.RANGE, MMAP.RANGE): the options are parsed first, then the bounds, given max first under
// REV as ZREVRANGEBYLEX takes them; Redis's errors.
struct LexRangeArgs {
  RangeOptions opt;
  LexBound min, max;
};
LexRangeArgs ParseLexRangeArgs(const vsl::Ctx& ctx);
// The ranks of t the range selects, in reply order.
RankSpan SelectRanks(const PackedTree& t, const LexRangeArgs& a);

// Calls fn(cursor) at each rank of the span, in reply order.
template <class F>
void ForEachRank(const PackedTree& t, const RankSpan& span, F&& fn) {
  if (span.count == 0) return;
  PackedTree::Cursor c = t.At(span.first);
  for (size_t i = 0; i < span.count; ++i, span.rev ? c.Prev() : c.Next()) fn(c);
}

// The entry at c (valid) as two bulk strings, its key then its value: one pair of a map or of a
// flat array the caller opened.
void ReplyPair(vsl::Ctx& ctx, const PackedTree::Cursor& c);
// Every entry of the span so, in reply order.
void ReplyPairs(vsl::Ctx& ctx, const PackedTree& t, const RankSpan& span);

}  // namespace vessel::ordered

#endif  // VESSEL_SDK_ORDERED_LEX_RANGE_H_
