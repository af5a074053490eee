// The multimap module: fields with any number of values each, kept in field order and, within a
// field, in the order the values were added (value type "multimap", commands MMAP.*), for
// one-to-many relations read by field or by range.
//
// Commands (fields are ordered by their bytes, a prefix first, as ZRANGEBYLEX orders members):
//   MMAP.ADD key field value [field value ...]   add each pair (a pair may repeat); the number of
//                                                pairs added
//   MMAP.GET key field                           the field's values in the order they were added
//   MMAP.COUNT key field                         the number of values of the field
//   MMAP.DEL key field [value]                   remove every value of the field, or the first
//                                                one equal to value; the number removed
//   MMAP.LEN key                                 the number of pairs
//   MMAP.CARD key                                the number of distinct fields
//   MMAP.RANGE key min max [REV] [LIMIT offset count]
//                                                the pairs whose field is in [min, max], in field
//                                                order then insertion order (REV: the reverse,
//                                                bounds given max first); bounds as ZRANGEBYLEX,
//                                                LIMIT counts pairs
// Pairs are flat field, value arrays in both protocols (a map cannot repeat a field).
// A multimap emptied by a command is deleted; no command stores an empty one.
// Keyspace events (class d): mmap.add mmap.del, then "del" when the command emptied the multimap.
//
// Conventions: arguments are checked before the key, with Redis's errors (MMAP.ADD's odd pairs get
// the arity error, as HSET's; ranges as ZRANGEBYLEX's).
#include <string_view>

#include "multimap_type.h"
#include "vessel/module.hpp"
#include "vessel/ordered/lex_range.h"
#include "vessel/util.hpp"

namespace vessel::multimap {
namespace {

using ordered::PackedTree;
using ordered::ValueBuf;
using vsl::Ctx;
using vsl::Key;

Multimap* Lookup(const Key& key) { return key.Get(g_multimap_type); }

// MMAP.ADD key field value [field value ...]
void CmdMmapAdd(Ctx& ctx) {
  if (ctx.argc() % 2 != 0) vsl::FailArity(ctx);
  Key key = ctx.key(0);
  Multimap* m = Lookup(key);
  MultimapPtr fresh(m == nullptr ? vsl::New<Multimap>() : nullptr);
  if (fresh != nullptr) m = fresh.get();
  const size_t before = m->size();
  try {
    for (int i = 2; i < ctx.argc(); i += 2) m->Add(ctx.arg(i), ctx.arg(i + 1));
  } catch (...) {
    if (fresh == nullptr && m->size() != before) key.Modified();  // out of memory part way
    throw;
  }
  if (fresh != nullptr) {
    key.Set(g_multimap_type, fresh.release());
  } else {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, "mmap.add");
  const int64_t pairs = (ctx.argc() - 2) / 2;
  ctx.AddChanges(static_cast<uint64_t>(pairs));
  ctx.Int(pairs);
}

// MMAP.DEL key field [value]
void CmdMmapDel(Ctx& ctx) {
  if (ctx.argc() > 4) vsl::FailArity(ctx);
  Key key = ctx.key(0);
  Multimap* m = Lookup(key);
  if (m == nullptr) return ctx.Int(0);
  const size_t removed =
      ctx.argc() == 4 ? m->EraseValue(ctx.arg(2), ctx.arg(3)) : m->EraseField(ctx.arg(2));
  if (removed == 0) return ctx.Int(0);
  ctx.AddChanges(removed);
  vsl::CommitRemoval(key, m->empty(), VSL_NOTIFY_MODULE, "mmap.del");
  ctx.Int(static_cast<int64_t>(removed));
}

// MMAP.GET key field
void CmdMmapGet(Ctx& ctx) {
  const Multimap* m = Lookup(ctx.key(0));
  size_t lo = 0, hi = 0;
  if (m != nullptr) m->Span(ctx.arg(2), &lo, &hi);
  ctx.Array(static_cast<int64_t>(hi - lo));
  if (lo == hi) return;
  ValueBuf buf;
  PackedTree::Cursor c = m->pairs().At(lo);
  for (size_t r = lo; r < hi; ++r, c.Next()) ctx.Bulk(c.value(buf));
}

// MMAP.COUNT key field
void CmdMmapCount(Ctx& ctx) {
  const Multimap* m = Lookup(ctx.key(0));
  size_t lo = 0, hi = 0;
  if (m != nullptr) m->Span(ctx.arg(2), &lo, &hi);
  ctx.Int(static_cast<int64_t>(hi - lo));
}

// MMAP.LEN key
void CmdMmapLen(Ctx& ctx) {
  const Multimap* m = Lookup(ctx.key(0));
  ctx.Int(m == nullptr ? 0 : static_cast<int64_t>(m->size()));
}

// MMAP.CARD key
void CmdMmapCard(Ctx& ctx) {
  const Multimap* m = Lookup(ctx.key(0));
  ctx.Int(m == nullptr ? 0 : static_cast<int64_t>(m->distinct()));
}

// MMAP.RANGE key min max [REV] [LIMIT offset count]
void CmdMmapRange(Ctx& ctx) {
  const ordered::LexRangeArgs a = ordered::ParseLexRangeArgs(ctx);
  const Multimap* m = Lookup(ctx.key(0));
  if (m == nullptr) return static_cast<void>(ctx.Array(0));
  const ordered::RankSpan span = ordered::SelectRanks(m->pairs(), a);
  ctx.Array(2 * static_cast<int64_t>(span.count));
  ordered::ReplyPairs(ctx, m->pairs(), span);
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "multimap";
constexpr char kSince[] = "1.0.0";
constexpr char kLogN[] = "O(log(N)) where N is the number of pairs";
constexpr char kAddComplexity[] =
    "O(M*log(N)) where N is the number of pairs and M the number of pairs added";
constexpr char kFieldComplexity[] =
    "O(log(N)+M) where N is the number of pairs and M the number of values of the field";
constexpr char kDelComplexity[] =
    "O(M*log(N)) where N is the number of pairs and M the number of values of the field";
constexpr char kRangeComplexity[] =
    "O(log(N)+M) where N is the number of pairs and M the number of pairs returned";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "MMAP.ADD", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdMmapAdd>, .since = kSince,
     .summary = "Add one or more field, value pairs to a multimap",
     .syntax = "key field value [field value ...]", .complexity = kAddComplexity},
    {.name = "MMAP.GET", .arity = 3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdMmapGet>, .since = kSince,
     .summary = "Get every value of a field of a multimap, in the order they were added",
     .syntax = "key field", .complexity = kFieldComplexity},
    {.name = "MMAP.COUNT", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdMmapCount>, .since = kSince,
     .summary = "Get the number of values of a field of a multimap", .syntax = "key field",
     .complexity = kLogN},
    {.name = "MMAP.DEL", .arity = -3, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdMmapDel>, .since = kSince,
     .summary = "Remove every value of a field of a multimap, or the first one equal to a value",
     .syntax = "key field [value]", .complexity = kDelComplexity},
    {.name = "MMAP.LEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdMmapLen>, .since = kSince,
     .summary = "Get the number of pairs of a multimap", .syntax = "key", .complexity = "O(1)"},
    {.name = "MMAP.CARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdMmapCard>, .since = kSince,
     .summary = "Get the number of distinct fields of a multimap", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "MMAP.RANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdMmapRange>, .since = kSince,
     .summary = "Get the pairs of a multimap whose field is in a lexicographical range",
     .syntax = "key min max [REV] [LIMIT offset count]", .complexity = kRangeComplexity},
};
// clang-format on

}  // namespace
}  // namespace vessel::multimap

VSL_MODULE("multimap", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::multimap;
  vsl::ModuleInit init(api, m, "multimap", nargs, err, errlen);
  init.Type(g_multimap_type, "multimap", kEncodingVersion, "vslmltmap");
  init.Commands(kCommands, kGroup);
  return init.result();
}
