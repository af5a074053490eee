// The bag module: a multiset, each distinct member with how many times it is in (value type "bag",
// commands BAG.*), for counting things and asking for the most frequent ones.
//
// Commands (members are ordered by their bytes, a prefix first, as ZRANGEBYLEX orders them):
//   BAG.ADD key member [member ...]       add each member once (a repeated one twice); the number
//                                         of members added
//   BAG.INCRBY key member n               add n (negative: remove) to the member's count; the new
//                                         count; reaching 0 removes the member; below 0 is refused
//   BAG.REM key member [count]            remove up to count (default 1) of the member; the number
//                                         removed
//   BAG.COUNT key member                  the member's count (0 when absent)
//   BAG.LEN key                           the number of members counted with multiplicity
//   BAG.CARD key                          the number of distinct members
//   BAG.RANGE key min max [REV] [LIMIT offset count]
//                                         the distinct members in [min, max] with their counts;
//                                         bounds as ZRANGEBYLEX, with REV given max first
//   BAG.RANK key member                   the member's 0-based rank among the distinct members,
//                                         or nil
//   BAG.TOP key n                         the n members with the highest counts, with them;
//                                         equal counts in member order
// Member, count replies are maps in RESP3 and flat arrays in RESP2, the counts integers.
// A bag emptied by a command is deleted; no command stores an empty bag.
// Keyspace events (class d): bag.add bag.incrby bag.rem, then "del" when the command emptied it.
//
// Conventions: arguments are checked before the key, with Redis's errors: "ERR value is not an
// integer or out of range" for a bad n, "ERR value is out of range, must be positive" for a
// negative count, "ERR increment or decrement would overflow" when the total count would pass
// 2^63 - 1 (as HINCRBY), ZRANGEBYLEX's errors for RANGE; "ERR count would become negative" when
// BAG.INCRBY would take a count below 0.
#include <algorithm>
#include <string_view>

#include "bag_type.h"
#include "vessel/module.hpp"
#include "vessel/ordered/lex_range.h"
#include "vessel/util.hpp"

namespace vessel::bag {
namespace {

using ordered::PackedTree;
using ordered::ValueBuf;
using vsl::Ctx;
using vsl::Key;

// ---- shared pieces ----

Bag* Lookup(const Key& key) { return key.Get(g_bag_type); }

// A count argument: an integer >= 0.
int64_t CountArg(const Ctx& ctx, int i) {
  const int64_t v = ctx.IntArg(i);
  if (v < 0) vsl::Fail("value is out of range, must be positive");
  return v;
}

// Fails unless `added` more fit in the total (which bounds every count).
void CheckTotal(const Bag* b, uint64_t added) {
  const uint64_t total = b == nullptr ? 0 : b->total();
  if (added > static_cast<uint64_t>(INT64_MAX) - total)
    vsl::Fail("increment or decrement would overflow");
}

// Runs op on the key's bag, or on a new one stored afterwards when it leaves members; fires
// `event` when op changed something, deletes an emptied bag ("del").
template <class F>
void Change(Key& key, Bag* b, const char* event, F&& op) {
  BagPtr fresh(b == nullptr ? vsl::New<Bag>() : nullptr);
  if (fresh != nullptr) b = fresh.get();
  const uint64_t before = b->total();
  try {
    op(*b);
  } catch (...) {
    if (fresh == nullptr && b->total() != before) key.Modified();  // out of memory part way
    throw;
  }
  if (b->total() == before && fresh == nullptr) return;
  if (fresh != nullptr) {
    if (b->empty()) return;
    key.Set(g_bag_type, fresh.release());
  } else if (!b->empty()) {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, event);
  if (b->empty()) {
    key.Delete();
    key.Notify(VSL_NOTIFY_GENERIC, "del");
  }
}

// ---- writing ----

// BAG.ADD key member [member ...]
void CmdBagAdd(Ctx& ctx) {
  Key key = ctx.key(0);
  Bag* b = Lookup(key);
  const uint64_t n = static_cast<uint64_t>(ctx.argc() - 2);
  CheckTotal(b, n);
  Change(key, b, "bag.add", [&](Bag& bag) {
    for (int i = 2; i < ctx.argc(); ++i) bag.Add(ctx.arg(i), 1);
  });
  ctx.AddChanges(n);
  ctx.Int(static_cast<int64_t>(n));
}

// BAG.INCRBY key member n
void CmdBagIncrBy(Ctx& ctx) {
  const int64_t n = ctx.IntArg(3);
  Key key = ctx.key(0);
  Bag* b = Lookup(key);
  const uint64_t count = b == nullptr ? 0 : b->Count(ctx.arg(2));
  if (n < 0 && static_cast<uint64_t>(-(n + 1)) + 1 > count)
    vsl::Fail("count would become negative");
  if (n > 0) CheckTotal(b, static_cast<uint64_t>(n));
  uint64_t now = count;
  Change(key, b, "bag.incrby", [&](Bag& bag) { now = bag.Add(ctx.arg(2), n); });
  ctx.Int(static_cast<int64_t>(now));
}

// BAG.REM key member [count]
void CmdBagRem(Ctx& ctx) {
  if (ctx.argc() > 4) vsl::FailArity(ctx);
  const int64_t want = ctx.argc() == 4 ? CountArg(ctx, 3) : 1;
  Key key = ctx.key(0);
  Bag* b = Lookup(key);
  if (b == nullptr) return ctx.Int(0);
  const uint64_t removed = std::min<uint64_t>(b->Count(ctx.arg(2)), static_cast<uint64_t>(want));
  if (removed != 0) {
    Change(key, b, "bag.rem",
           [&](Bag& bag) { bag.Add(ctx.arg(2), -static_cast<int64_t>(removed)); });
    ctx.AddChanges(removed);
  }
  ctx.Int(static_cast<int64_t>(removed));
}

// ---- reading ----

// Replies member, count pairs as a map.
template <class Walk>
void ReplyCounts(Ctx& ctx, size_t n, Walk&& walk) {
  ctx.Map(static_cast<int64_t>(n));
  walk([&](std::string_view member, uint64_t count) {
    ctx.Bulk(member);
    ctx.Int(static_cast<int64_t>(count));
  });
}

// BAG.COUNT key member
void CmdBagCount(Ctx& ctx) {
  const Bag* b = Lookup(ctx.key(0));
  ctx.Int(b == nullptr ? 0 : static_cast<int64_t>(b->Count(ctx.arg(2))));
}

// BAG.LEN key
void CmdBagLen(Ctx& ctx) {
  const Bag* b = Lookup(ctx.key(0));
  ctx.Int(b == nullptr ? 0 : static_cast<int64_t>(b->total()));
}

// BAG.CARD key
void CmdBagCard(Ctx& ctx) {
  const Bag* b = Lookup(ctx.key(0));
  ctx.Int(b == nullptr ? 0 : static_cast<int64_t>(b->distinct()));
}

// BAG.RANGE key min max [REV] [LIMIT offset count]
void CmdBagRange(Ctx& ctx) {
  const ordered::LexRangeArgs a = ordered::ParseLexRangeArgs(ctx);
  const Bag* b = Lookup(ctx.key(0));
  if (b == nullptr) return static_cast<void>(ctx.Map(0));
  const PackedTree& t = b->members();
  const ordered::RankSpan span = ordered::SelectRanks(t, a);
  ReplyCounts(ctx, span.count, [&](auto&& put) {
    ValueBuf buf;
    ordered::ForEachRank(
        t, span, [&](const PackedTree::Cursor& c) { put(c.key(), ParseCount(c.value(buf))); });
  });
}

// BAG.RANK key member
void CmdBagRank(Ctx& ctx) {
  const Bag* b = Lookup(ctx.key(0));
  const PackedTree::Cursor c = b == nullptr ? PackedTree::Cursor() : b->members().Find(ctx.arg(2));
  if (!c.valid()) return ctx.Null();
  ctx.Int(static_cast<int64_t>(c.rank()));
}

// BAG.TOP key n
void CmdBagTop(Ctx& ctx) {
  const int64_t n = CountArg(ctx, 2);
  const Bag* b = Lookup(ctx.key(0));
  if (b == nullptr) return static_cast<void>(ctx.Map(0));
  const size_t k = std::min<uint64_t>(static_cast<uint64_t>(n), b->distinct());
  ReplyCounts(ctx, k, [&](auto&& put) { b->Top(k, put); });
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "bag";
constexpr char kSince[] = "1.0.0";
constexpr char kLogN[] = "O(log(N)) where N is the number of distinct members";
constexpr char kAddComplexity[] =
    "O(M*log(N)) where N is the number of distinct members and M the number of members given";
constexpr char kRangeComplexity[] =
    "O(log(N)+M) where N is the number of distinct members and M the number returned";
constexpr char kTopComplexity[] =
    "O(log(N)+M) where N is the number of distinct members and M the number returned (a bag of "
    "at most 128 distinct members walks them all)";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "BAG.ADD", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdBagAdd>, .since = kSince,
     .summary = "Add one or more members to a bag", .syntax = "key member [member ...]",
     .complexity = kAddComplexity},
    {.name = "BAG.INCRBY", .arity = 4, .flags = kWrite | kDenyOom | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_UPDATE | VSL_KS_DELETE)},
     .handler = vsl::Handler<CmdBagIncrBy>, .since = kSince,
     .summary = "Add to or take from the count of a member of a bag", .syntax = "key member n",
     .complexity = kLogN},
    {.name = "BAG.REM", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdBagRem>, .since = kSince,
     .summary = "Remove copies of a member from a bag", .syntax = "key member [count]",
     .complexity = kLogN},
    {.name = "BAG.COUNT", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdBagCount>, .since = kSince,
     .summary = "Get how many times a member is in a bag", .syntax = "key member",
     .complexity = kLogN},
    {.name = "BAG.LEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdBagLen>, .since = kSince,
     .summary = "Get the number of members of a bag, counting repeats", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "BAG.CARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdBagCard>, .since = kSince,
     .summary = "Get the number of distinct members of a bag", .syntax = "key",
     .complexity = "O(1)"},
    {.name = "BAG.RANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdBagRange>, .since = kSince,
     .summary = "Get the members of a bag in a lexicographical range, with their counts",
     .syntax = "key min max [REV] [LIMIT offset count]", .complexity = kRangeComplexity},
    {.name = "BAG.RANK", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdBagRank>, .since = kSince,
     .summary = "Get the rank of a member among the distinct members of a bag",
     .syntax = "key member", .complexity = kLogN},
    {.name = "BAG.TOP", .arity = 3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdBagTop>, .since = kSince,
     .summary = "Get the most frequent members of a bag, with their counts", .syntax = "key n",
     .complexity = kTopComplexity},
};
// clang-format on

}  // namespace
}  // namespace vessel::bag

VSL_MODULE("bag", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::bag;
  vsl::ModuleInit init(api, m, "bag", nargs, err, errlen);
  init.Type(g_bag_type, "bag", kEncodingVersion, "vslbagset");
  init.Commands(kCommands, kGroup);
  return init.result();
}
