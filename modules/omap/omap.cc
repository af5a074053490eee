// The omap module: a map from field to value kept in field order (value type "omap", commands
// OMAP.*), for hashes that are also read in order, by rank, or by the nearest field.
//
// Commands (fields are ordered by their bytes, a prefix first, as ZRANGEBYLEX orders members;
// ranks and indexes are 0-based, a negative index counts from the end):
//   OMAP.SET key field value [field value ...]  set fields (as HSET); the number of new fields
//   OMAP.GET key field                          the value, or nil
//   OMAP.MGET key field [field ...]             an array of values and nils (as HMGET)
//   OMAP.DEL key field [field ...]              the number of fields removed (as HDEL)
//   OMAP.LEN key                                the number of fields
//   OMAP.RANGE key min max [REV] [LIMIT offset count]
//                                               the fields in [min, max] with their values;
//                                               bounds as ZRANGEBYLEX ("[a", "(a", "-", "+"),
//                                               with REV from max down to min, given max first
//                                               (as ZREVRANGEBYLEX)
//   OMAP.COUNT key min max                      the number of fields in [min, max] (as ZLEXCOUNT)
//   OMAP.FLOOR key field / OMAP.CEIL key field  the greatest field <= / the smallest >= field
//                                               with its value, or nil
//   OMAP.RANK key field                         the field's 0-based rank, or nil
//   OMAP.AT key index                           the field at a rank with its value, or nil
//   OMAP.FIRST key / OMAP.LAST key              the first / last field with its value, or nil
//   OMAP.POPFIRST key [count] / OMAP.POPLAST key [count]
//                                               remove and reply the first / last count (default
//                                               1) fields with their values (as ZPOPMIN)
// Replies of fields with their values are maps in RESP3 and flat field, value arrays in RESP2.
// Every lookup is O(log n): the tree keeps subtree counts (see vessel/ordered/packed_tree.h).
// A map emptied by a command is deleted; no command stores an empty map.
// Keyspace events (class d): omap.set omap.del omap.popfirst omap.poplast, then "del" when the
// command emptied the map.
//
// Conventions: as the Redis command each mirrors (HSET, HMGET, HDEL, ZRANGEBYLEX, ZLEXCOUNT,
// ZRANK, ZPOPMIN): arguments are checked before the key, options before bounds, with Redis's
// error texts.
#include <algorithm>
#include <string_view>

#include "omap_type.h"
#include "vessel/module.hpp"
#include "vessel/ordered/lex_range.h"
#include "vessel/util.hpp"

namespace vessel::omap {
namespace {

using ordered::LexBound;
using ordered::PackedTree;
using ordered::ValueBuf;
using vsl::Ctx;
using vsl::Key;

// ---- shared pieces ----

Omap* Lookup(const Key& key) { return key.Get(g_omap_type); }

// One entry as a map of one pair, or nil.
void ReplyOne(Ctx& ctx, const PackedTree::Cursor& c) {
  if (!c.valid()) return ctx.Null();
  ctx.Map(1);
  ordered::ReplyPair(ctx, c);
}

// After entries were removed: fires `event`, then an emptied map disappears with "del".
void CommitRemoval(Key& key, const Omap* m, const char* event) {
  vsl::CommitRemoval(key, m->tree.empty(), VSL_NOTIFY_MODULE, event);
}

// ---- writing ----

// OMAP.SET key field value [field value ...]
void CmdOmapSet(Ctx& ctx) {
  if (ctx.argc() % 2 != 0) vsl::FailArity(ctx);
  Key key = ctx.key(0);
  Omap* m = Lookup(key);
  OmapPtr fresh(m == nullptr ? vsl::New<Omap>() : nullptr);
  if (fresh != nullptr) m = fresh.get();
  int64_t added = 0;
  try {
    for (int i = 2; i < ctx.argc(); i += 2) added += m->tree.Upsert(ctx.arg(i), ctx.arg(i + 1));
  } catch (...) {
    if (fresh == nullptr && added != 0) key.Modified();  // out of memory part way
    throw;
  }
  if (fresh != nullptr) {
    key.Set(g_omap_type, fresh.release());
  } else {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, "omap.set");
  ctx.AddChanges(static_cast<uint64_t>(ctx.argc() - 2) / 2);  // one per field given, as HSET
  ctx.Int(added);
}

// OMAP.DEL key field [field ...]
void CmdOmapDel(Ctx& ctx) {
  Key key = ctx.key(0);
  Omap* m = Lookup(key);
  if (m == nullptr) return ctx.Int(0);
  int64_t removed = 0;
  for (int i = 2; i < ctx.argc() && !m->tree.empty(); ++i) removed += m->tree.Erase(ctx.arg(i));
  if (removed == 0) return ctx.Int(0);
  ctx.AddChanges(static_cast<uint64_t>(removed));
  CommitRemoval(key, m, "omap.del");
  ctx.Int(removed);
}

// The body of OMAP.POPFIRST and OMAP.POPLAST (as Redis's genericZpopCommand).
void PopGeneric(Ctx& ctx, bool last) {
  if (ctx.argc() > 3) vsl::SyntaxError();  // as ZPOPMIN
  const int64_t count = ctx.argc() == 3 ? vsl::PositiveArg(ctx, 2) : 1;
  Key key = ctx.key(0);
  Omap* m = Lookup(key);
  if (m == nullptr) return static_cast<void>(ctx.Map(0));
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), m->tree.size());
  ctx.Map(static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const PackedTree::Cursor c = last ? m->tree.Last() : m->tree.First();
    ordered::ReplyPair(ctx, c);  // the reply copies the bytes before they go
    m->tree.EraseAt(c.rank());
  }
  if (n == 0) return;
  ctx.AddChanges(n);
  CommitRemoval(key, m, last ? "omap.poplast" : "omap.popfirst");
}

// OMAP.POPFIRST key [count]
void CmdOmapPopFirst(Ctx& ctx) { PopGeneric(ctx, false); }

// OMAP.POPLAST key [count]
void CmdOmapPopLast(Ctx& ctx) { PopGeneric(ctx, true); }

// ---- reading ----

// OMAP.GET key field
void CmdOmapGet(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  ValueBuf buf;
  std::string_view value;
  if (m == nullptr || !m->tree.Lookup(ctx.arg(2), buf, &value)) return ctx.Null();
  ctx.Bulk(value);
}

// OMAP.MGET key field [field ...]
void CmdOmapMGet(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  ValueBuf buf;
  for (int i = 2; i < ctx.argc(); ++i) {
    std::string_view value;
    m != nullptr && m->tree.Lookup(ctx.arg(i), buf, &value) ? ctx.Bulk(value) : ctx.Null();
  }
}

// OMAP.LEN key
void CmdOmapLen(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  ctx.Int(m == nullptr ? 0 : static_cast<int64_t>(m->tree.size()));
}

// OMAP.RANGE key min max [REV] [LIMIT offset count]
void CmdOmapRange(Ctx& ctx) {
  const ordered::LexRangeArgs a = ordered::ParseLexRangeArgs(ctx);
  const Omap* m = Lookup(ctx.key(0));
  if (m == nullptr) return static_cast<void>(ctx.Map(0));
  const ordered::RankSpan span = ordered::SelectRanks(m->tree, a);
  ctx.Map(static_cast<int64_t>(span.count));
  ordered::ReplyPairs(ctx, m->tree, span);
}

// OMAP.COUNT key min max
void CmdOmapCount(Ctx& ctx) {
  LexBound min, max;
  ordered::ParseLexRange(ctx, 2, 3, &min, &max);
  const Omap* m = Lookup(ctx.key(0));
  if (m == nullptr) return ctx.Int(0);
  const size_t lo = ordered::MinRank(m->tree, min), hi = ordered::MaxRank(m->tree, max);
  ctx.Int(lo < hi ? static_cast<int64_t>(hi - lo) : 0);
}

// OMAP.FLOOR key field
void CmdOmapFloor(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  if (m == nullptr) return ctx.Null();
  const size_t r = m->tree.UpperBound(ctx.arg(2));  // fields <= field
  if (r == 0) return ctx.Null();
  ReplyOne(ctx, m->tree.At(r - 1));
}

// OMAP.CEIL key field
void CmdOmapCeil(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  if (m == nullptr) return ctx.Null();
  const size_t r = m->tree.LowerBound(ctx.arg(2));  // fields < field
  if (r == m->tree.size()) return ctx.Null();
  ReplyOne(ctx, m->tree.At(r));
}

// OMAP.RANK key field
void CmdOmapRank(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  const PackedTree::Cursor c = m == nullptr ? PackedTree::Cursor() : m->tree.Find(ctx.arg(2));
  if (!c.valid()) return ctx.Null();
  ctx.Int(static_cast<int64_t>(c.rank()));
}

// OMAP.AT key index
void CmdOmapAt(Ctx& ctx) {
  const int64_t index = ctx.IntArg(2);
  const Omap* m = Lookup(ctx.key(0));
  const int64_t pos = m == nullptr ? -1 : vsl::Position(index, m->tree.size());
  if (pos < 0) return ctx.Null();
  ReplyOne(ctx, m->tree.At(static_cast<size_t>(pos)));
}

// OMAP.FIRST key
void CmdOmapFirst(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  ReplyOne(ctx, m == nullptr ? PackedTree::Cursor() : m->tree.First());
}

// OMAP.LAST key
void CmdOmapLast(Ctx& ctx) {
  const Omap* m = Lookup(ctx.key(0));
  ReplyOne(ctx, m == nullptr ? PackedTree::Cursor() : m->tree.Last());
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "omap";
constexpr char kSince[] = "1.0.0";
constexpr char kLogN[] = "O(log(N)) where N is the number of fields";
constexpr char kRangeComplexity[] =
    "O(log(N)+M) where N is the number of fields and M the number of fields returned";
constexpr char kPopComplexity[] =
    "O(M*log(N)) where N is the number of fields and M the number of fields removed";
constexpr char kSetComplexity[] =
    "O(M*log(N)) where N is the number of fields and M the number of fields set";
constexpr char kManyComplexity[] =
    "O(M*log(N)) where N is the number of fields and M the number of fields given";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "OMAP.SET", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdOmapSet>, .since = kSince,
     .summary = "Set the values of one or more fields of an ordered map",
     .syntax = "key field value [field value ...]", .complexity = kSetComplexity},
    {.name = "OMAP.GET", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapGet>, .since = kSince,
     .summary = "Get the value of a field of an ordered map", .syntax = "key field",
     .complexity = kLogN},
    {.name = "OMAP.MGET", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapMGet>, .since = kSince,
     .summary = "Get the values of several fields of an ordered map",
     .syntax = "key field [field ...]", .complexity = kManyComplexity},
    {.name = "OMAP.DEL", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdOmapDel>, .since = kSince,
     .summary = "Delete one or more fields of an ordered map", .syntax = "key field [field ...]",
     .complexity = kManyComplexity},
    {.name = "OMAP.LEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdOmapLen>, .since = kSince,
     .summary = "Get the number of fields of an ordered map", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "OMAP.RANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapRange>, .since = kSince,
     .summary = "Get the fields of an ordered map in a lexicographical range, with their values",
     .syntax = "key min max [REV] [LIMIT offset count]", .complexity = kRangeComplexity},
    {.name = "OMAP.COUNT", .arity = 4, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdOmapCount>, .since = kSince,
     .summary = "Count the fields of an ordered map in a lexicographical range",
     .syntax = "key min max", .complexity = kLogN},
    {.name = "OMAP.FLOOR", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapFloor>, .since = kSince,
     .summary = "Get the greatest field of an ordered map not above a field, with its value",
     .syntax = "key field", .complexity = kLogN},
    {.name = "OMAP.CEIL", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapCeil>, .since = kSince,
     .summary = "Get the smallest field of an ordered map not below a field, with its value",
     .syntax = "key field", .complexity = kLogN},
    {.name = "OMAP.RANK", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdOmapRank>, .since = kSince,
     .summary = "Get the rank of a field in an ordered map", .syntax = "key field",
     .complexity = kLogN},
    {.name = "OMAP.AT", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapAt>, .since = kSince,
     .summary = "Get the field of an ordered map at a rank, with its value", .syntax = "key index",
     .complexity = kLogN},
    {.name = "OMAP.FIRST", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapFirst>, .since = kSince,
     .summary = "Get the first field of an ordered map, with its value", .syntax = "key",
     .complexity = kLogN},
    {.name = "OMAP.LAST", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdOmapLast>, .since = kSince,
     .summary = "Get the last field of an ordered map, with its value", .syntax = "key",
     .complexity = kLogN},
    {.name = "OMAP.POPFIRST", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdOmapPopFirst>, .since = kSince,
     .summary = "Remove and get the first fields of an ordered map, with their values",
     .syntax = "key [count]", .complexity = kPopComplexity},
    {.name = "OMAP.POPLAST", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdOmapPopLast>, .since = kSince,
     .summary = "Remove and get the last fields of an ordered map, with their values",
     .syntax = "key [count]", .complexity = kPopComplexity},
};
// clang-format on

}  // namespace
}  // namespace vessel::omap

VSL_MODULE("omap", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::omap;
  vsl::ModuleInit init(api, m, "omap", nargs, err, errlen);
  init.Type(g_omap_type, "omap", kEncodingVersion, "vslordmap");
  init.Commands(kCommands, kGroup);
  return init.result();
}
