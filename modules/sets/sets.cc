// The sets module: Redis's set family as a Vessel module (value type "set").
//
// Commands: SADD SREM SCARD SISMEMBER SMISMEMBER SMEMBERS SPOP SRANDMEMBER SMOVE SINTER
// SINTERSTORE SINTERCARD SUNION SUNIONSTORE SDIFF SDIFFSTORE SSCAN, with Redis 7.0's replies,
// error strings, key specs and edge cases (redis-server 7.0 is the reference the tests compare
// against). SPOP and SRANDMEMBER cost O(count), never O(size).
//
// Deliberate differences from Redis 7.0:
//   - Small sets of non-integers use the listpack representation of Redis 7.2 (7.0 has only
//     intset and hashtable): OBJECT ENCODING says "listpack" where 7.0 says "hashtable", and
//     SSCAN returns such a set whole with cursor 0 (as 7.0 does for an intset).
//   - SSCAN cursors of a hashtable are positions in its member array, not reverse-binary bucket
//     indexes; the guarantee is the same (every member present for the whole iteration is
//     returned, some may come twice), also across *STORE into the scanned key.
//   - SRANDMEMBER with a negative count whose reply would pass proto-max-bulk-len (512 MiB by
//     default) is refused ("ERR value is out of range, the reply would be too large"); Redis 7.0
//     builds it until memory runs out.
//   - A set holds at most 2^32 - 2 members.
#include <string>
#include <vector>

#include "sets_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::sets {
namespace {

using vsl::Ctx;
using vsl::Key;

using vsl::Vec;
using SetPtr = vsl::Owned<Set>;

vsl::Type<Set> g_set_type;

// ---- shared pieces ----

// The key's set, or nullptr when the key does not exist. Throws WRONGTYPE.
Set* GetSet(const Key& key) { return key.Get(g_set_type); }

// The sets of the command's keys [first, first + n): nullptr for a missing key. Throws WRONGTYPE
// when any key holds another type (Redis 7.0 checks them all before answering "empty").
Vec<const Set*> OpenSets(const Ctx& ctx, int first, int n) {
  Vec<const Set*> sets(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) sets[i] = GetSet(ctx.key(first + i));
  return sets;
}

// After an in-place removal: fires `event`, then a set left empty disappears with "del", as in
// Redis.
void Commit(Key& key, const Set& s, const char* event) {
  vsl::CommitRemoval(key, s.empty(), VSL_NOTIFY_SET, event);
}

// Every member, as a set reply (RESP3 '~') or an array.
void ReplyMembers(Ctx& ctx, const Set& s, bool as_set = true) {
  as_set ? ctx.Set(static_cast<int64_t>(s.size())) : ctx.Array(static_cast<int64_t>(s.size()));
  SetIter it(s);
  std::string_view m;
  while (it.Next(&m)) ctx.Bulk(m);
}

// Stores the result of a *STORE command in dst, replacing what it holds (and its TTL), or
// deletes dst when the result is empty. A hashtable result assigned over a hashtable is applied
// in place, so that an SSCAN of dst in progress keeps its guarantee. Fires `event` ("del" for an
// empty result that deleted dst), as Redis. Returns the cardinality.
int64_t StoreResult(Key& dst, SetPtr result, const char* event) {
  if (result == nullptr) {
    if (dst.Delete()) dst.Notify(VSL_NOTIFY_GENERIC, "del");
    return 0;
  }
  const auto n = static_cast<int64_t>(result->size());
  void* v = nullptr;
  if (result->rep() == Rep::kHashtable && dst.GetRaw(g_set_type.handle(), &v) == VSL_OK &&
      static_cast<Set*>(v)->rep() == Rep::kHashtable) {
    static_cast<Set*>(v)->AssignInPlace(*result);
    if (dst.ExpireMs() >= 0) dst.SetExpireMs(-1);
    dst.Modified();
    dst.Notify(VSL_NOTIFY_SET, event);
    return n;
  }
  dst.Set(g_set_type, result.release());
  dst.Notify(VSL_NOTIFY_SET, event);
  return n;
}

// ---- membership ----

// SADD key member [member ...]
void CmdSAdd(Ctx& ctx) {
  Key key = ctx.key(0);
  Set* s = GetSet(key);
  SetPtr fresh(s == nullptr ? Set::New() : nullptr);
  if (fresh != nullptr) s = fresh.get();
  int64_t added = 0;
  try {
    for (int i = 2; i < ctx.argc(); ++i) added += s->Add(ctx.arg(i));
  } catch (...) {
    if (fresh == nullptr && added > 0) key.Modified();
    throw;
  }
  if (fresh != nullptr) {
    key.Set(g_set_type, fresh.release());
  } else if (added > 0) {
    key.Modified();
  }
  if (added > 0) key.Notify(VSL_NOTIFY_SET, "sadd");
  ctx.AddChanges(static_cast<uint64_t>(added));  // the members added, as Redis counts
  ctx.Int(added);
}

// SREM key member [member ...]
void CmdSRem(Ctx& ctx) {
  Key key = ctx.key(0);
  Set* s = GetSet(key);
  int64_t removed = 0;
  for (int i = 2; s != nullptr && i < ctx.argc() && !s->empty(); ++i) {
    removed += s->Remove(ctx.arg(i));
  }
  if (removed > 0) Commit(key, *s, "srem");
  ctx.AddChanges(static_cast<uint64_t>(removed));
  ctx.Int(removed);
}

// SCARD key
void CmdSCard(Ctx& ctx) {
  const Set* s = GetSet(ctx.key(0));
  ctx.Int(s == nullptr ? 0 : static_cast<int64_t>(s->size()));
}

// SISMEMBER key member
void CmdSIsMember(Ctx& ctx) {
  const Set* s = GetSet(ctx.key(0));
  ctx.Int(s != nullptr && s->Contains(ctx.arg(2)) ? 1 : 0);
}

// SMISMEMBER key member [member ...]
void CmdSMIsMember(Ctx& ctx) {
  const Set* s = GetSet(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) ctx.Int(s != nullptr && s->Contains(ctx.arg(i)) ? 1 : 0);
}

// SMEMBERS key
void CmdSMembers(Ctx& ctx) {
  const Set* s = GetSet(ctx.key(0));
  if (s == nullptr) return static_cast<void>(ctx.Set(0));
  ReplyMembers(ctx, *s);
}

// SMOVE source destination member
void CmdSMove(Ctx& ctx) {
  Key src = ctx.key(0), dst = ctx.key(1);
  const std::string_view m = ctx.arg(3);
  Set* from = GetSet(src);
  if (from == nullptr) return ctx.Int(0);
  Set* to = GetSet(dst);
  if (from == to) return ctx.Int(from->Contains(m) ? 1 : 0);
  if (!from->Contains(m)) return ctx.Int(0);
  // Add first: it may fail for memory, the removal cannot. The events come in Redis's order:
  // the source's "srem" (and "del"), then the destination's "new" and "sadd".
  SetPtr fresh(to == nullptr ? Set::New() : nullptr);
  const bool added = (to != nullptr ? to : fresh.get())->Add(m);
  from->Remove(m);
  Commit(src, *from, "srem");
  if (fresh != nullptr) {
    dst.Set(g_set_type, fresh.release());
  } else if (added) {
    dst.Modified();
  }
  if (added) dst.Notify(VSL_NOTIFY_SET, "sadd");
  ctx.Int(1);
}

// ---- random members ----

// Replies `count` (< size) distinct random members in random order, in O(count).
void ReplyDistinctRandom(Ctx& ctx, const Set& s, size_t count) {
  const Indexed view(s);
  const size_t size = s.size();
  NumBuf buf;
  // Scratch space first: an allocation failure must come before the reply starts.
  if (count * 3 > size) {  // a partial Fisher-Yates shuffle: O(size), and size < 3 * count
    Vec<uint32_t> pos(size);
    for (size_t i = 0; i < size; ++i) pos[i] = static_cast<uint32_t>(i);
    ctx.Array(static_cast<int64_t>(count));
    for (size_t i = 0; i < count; ++i) {
      std::swap(pos[i], pos[i + vsl::RandomBelow(size - i)]);
      ctx.Bulk(view.Get(pos[i], buf));
    }
    return;
  }
  vsl::PositionSet chosen(count);  // rejection: each draw is new with probability >= 2/3
  ctx.Array(static_cast<int64_t>(count));
  for (size_t sent = 0; sent < count;) {
    const uint64_t p = vsl::RandomBelow(size);
    if (!chosen.Insert(p)) continue;
    ctx.Bulk(view.Get(p, buf));
    ++sent;
  }
}

// Replies `count` random members, repetitions allowed.
void ReplyRepeatedRandom(Ctx& ctx, const Set& s, uint64_t count) {
  const Indexed view(s);
  NumBuf buf;
  uint64_t sample = 0;  // estimate the reply from a few members
  const int kSamples = 8;
  for (int i = 0; i < kSamples; ++i) sample += view.Get(vsl::RandomBelow(s.size()), buf).size();
  vsl::CheckRandomReply(ctx, count, sample / kSamples + 16);  // + "$<len>\r\n...\r\n"
  ctx.Array(static_cast<int64_t>(count));
  for (uint64_t i = 0; i < count; ++i) ctx.Bulk(view.Get(vsl::RandomBelow(s.size()), buf));
}

// SPOP key count
void CmdSPopCount(Ctx& ctx) {
  const int64_t count = vsl::PositiveArg(ctx, 2);
  Key key = ctx.key(0);
  Set* s = GetSet(key);
  if (s == nullptr || count == 0) return static_cast<void>(ctx.Set(0));
  const size_t size = s->size();
  if (static_cast<uint64_t>(count) >= size) {
    ReplyMembers(ctx, *s);
    key.Notify(VSL_NOTIFY_SET, "spop");
    key.Delete();
    key.Notify(VSL_NOTIFY_GENERIC, "del");
    ctx.Propagate({"DEL", ctx.arg(1)});  // the append-only file records the effect, not the draw
    ctx.AddChanges(size);                // one per member popped, as Redis
    return;
  }
  ctx.Set(count);
  NumBuf buf;
  std::vector<std::string> popped;
  popped.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const size_t pos = vsl::RandomBelow(s->size());
    const std::string_view m = s->At(pos, buf);
    ctx.Bulk(m);
    popped.emplace_back(m);
    s->RemoveAt(pos);
  }
  std::vector<std::string_view> srem = {"SREM", ctx.arg(1)};
  srem.insert(srem.end(), popped.begin(), popped.end());
  ctx.Propagate(srem);
  // Redis rebuilds a set it pops most of ("case 3"), which makes it compact when it can be.
  if ((size - count) * 5 <= static_cast<uint64_t>(count)) s->Compact();
  key.Modified();
  key.Notify(VSL_NOTIFY_SET, "spop");
  ctx.AddChanges(static_cast<uint64_t>(count));
}

// SPOP key [count]
void CmdSPop(Ctx& ctx) {
  if (ctx.argc() == 3) return CmdSPopCount(ctx);
  if (ctx.argc() > 3) vsl::SyntaxError();
  Key key = ctx.key(0);
  Set* s = GetSet(key);
  if (s == nullptr) return ctx.Null();
  NumBuf buf;
  const size_t pos = vsl::RandomBelow(s->size());
  const std::string_view m = s->At(pos, buf);
  ctx.Bulk(m);                             // the reply copies the member before it goes
  ctx.Propagate({"SREM", ctx.arg(1), m});  // the append-only file records the effect
  s->RemoveAt(pos);
  Commit(key, *s, "spop");
}

// SRANDMEMBER key count
void CmdSRandMemberCount(Ctx& ctx) {
  const int64_t count = vsl::RandomCountArg(ctx, 2);
  const Set* s = GetSet(ctx.key(0));
  if (s == nullptr || count == 0) return static_cast<void>(ctx.Array(0));
  if (count < 0) return ReplyRepeatedRandom(ctx, *s, static_cast<uint64_t>(-count));
  if (static_cast<uint64_t>(count) >= s->size()) return ReplyMembers(ctx, *s, false);
  ReplyDistinctRandom(ctx, *s, static_cast<size_t>(count));
}

// SRANDMEMBER key [count]
void CmdSRandMember(Ctx& ctx) {
  if (ctx.argc() == 3) return CmdSRandMemberCount(ctx);
  if (ctx.argc() > 3) vsl::SyntaxError();
  const Set* s = GetSet(ctx.key(0));
  if (s == nullptr) return ctx.Null();
  NumBuf buf;
  ctx.Bulk(s->At(vsl::RandomBelow(s->size()), buf));
}

// ---- algebra ----

// SINTER key [key ...]
void CmdSInter(Ctx& ctx) {
  const Vec<const Set*> sets = OpenSets(ctx, 0, ctx.key_count());
  vsl_agg agg{};
  bool started = false;  // the reply opens with the first member, after OpInter's allocations
  const size_t n = OpInter(sets, 0, [&](std::string_view m) {
    if (!started) agg = ctx.DeferredSet();
    started = true;
    ctx.Bulk(m);
  });
  if (!started) return static_cast<void>(ctx.Set(0));
  ctx.SetLen(agg, static_cast<int64_t>(n));
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void CmdSInterCard(Ctx& ctx) {
  int64_t numkeys;
  if (!vsl::ParseInt(ctx.arg(1), &numkeys) || numkeys < 1) {
    vsl::Fail("numkeys should be greater than 0");
  }
  if (numkeys > ctx.argc() - 2) vsl::Fail("Number of keys can't be greater than number of args");
  int64_t limit = 0;
  for (int j = 2 + static_cast<int>(numkeys); j < ctx.argc(); ++j) {
    if (!ctx.ArgIs(j, "LIMIT") || j + 1 == ctx.argc()) vsl::SyntaxError();
    if (!vsl::ParseInt(ctx.arg(++j), &limit) || limit < 0) vsl::Fail("LIMIT can't be negative");
  }
  const Vec<const Set*> sets = OpenSets(ctx, 0, static_cast<int>(numkeys));
  ctx.Int(static_cast<int64_t>(OpInter(sets, static_cast<size_t>(limit), [](std::string_view) {})));
}

// SINTERSTORE destination key [key ...]
void CmdSInterStore(Ctx& ctx) {
  const Vec<const Set*> sets = OpenSets(ctx, 1, ctx.key_count() - 1);
  SetPtr result(Set::New());
  OpInter(sets, 0, [&](std::string_view m) { result->Add(m); });
  if (result->empty()) result.reset();
  Key dst = ctx.key(0);
  ctx.Int(StoreResult(dst, std::move(result), "sinterstore"));
}

// The body of SUNION and SDIFF: `op` builds the result.
void ReplyAlgebra(Ctx& ctx, Set* (*op)(std::span<const Set* const>)) {
  const Vec<const Set*> sets = OpenSets(ctx, 0, ctx.key_count());
  const SetPtr result(op(sets));
  if (result == nullptr) return static_cast<void>(ctx.Set(0));
  ReplyMembers(ctx, *result);
}

// The body of SUNIONSTORE and SDIFFSTORE.
void StoreAlgebra(Ctx& ctx, Set* (*op)(std::span<const Set* const>), const char* event) {
  const Vec<const Set*> sets = OpenSets(ctx, 1, ctx.key_count() - 1);
  SetPtr result(op(sets));
  Key dst = ctx.key(0);
  ctx.Int(StoreResult(dst, std::move(result), event));
}

// SUNION key [key ...]
void CmdSUnion(Ctx& ctx) {
  // One distinct set (SUNION k, SUNION k k): its members, without building a copy.
  const Vec<const Set*> sets = OpenSets(ctx, 0, ctx.key_count());
  const Set* only = nullptr;
  for (const Set* s : sets) {
    if (s == nullptr) continue;
    if (only != nullptr && s != only) return ReplyAlgebra(ctx, OpUnion);
    only = s;
  }
  if (only == nullptr) return static_cast<void>(ctx.Set(0));
  ReplyMembers(ctx, *only);
}

// SUNIONSTORE destination key [key ...]
void CmdSUnionStore(Ctx& ctx) { StoreAlgebra(ctx, OpUnion, "sunionstore"); }

// SDIFF key [key ...]
void CmdSDiff(Ctx& ctx) { ReplyAlgebra(ctx, OpDiff); }

// SDIFFSTORE destination key [key ...]
void CmdSDiffStore(Ctx& ctx) { StoreAlgebra(ctx, OpDiff, "sdiffstore"); }

// ---- SSCAN ----

// SSCAN key cursor [MATCH pattern] [COUNT count]
void CmdSScan(Ctx& ctx) {
  const uint64_t cursor = vsl::CursorArg(ctx, 2);
  const Set* s = GetSet(ctx.key(0));
  if (s == nullptr) return vsl::ReplyEmptyScan(ctx);
  const vsl::ScanOptions o = vsl::ScanOptionsArg(ctx, 3);
  size_t lo, hi;
  vsl::ReplyScanCursor(ctx, s->ScanStep(cursor, o.count, &lo, &hi));
  const vsl_agg agg = ctx.DeferredArray();
  const Indexed view(*s);
  NumBuf buf;
  int64_t n = 0;
  for (size_t i = lo; i < hi; ++i) {
    const std::string_view m = view.Get(i, buf);
    if (!o.Matches(m)) continue;
    ctx.Bulk(m);
    ++n;
  }
  ctx.SetLen(agg, n);
}

// ---- the command table ----

using namespace vsl::table;

constexpr vsl_keyspec kRoAccessAll = vsl::KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS, -1);
constexpr vsl_keyspec kSources = vsl::KeyAt(2, VSL_KS_RO | VSL_KS_ACCESS, -1);

constexpr char kGroup[] = "set";
constexpr char kInterComplexity[] =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
    "sets.";
constexpr char kTotalComplexity[] =
    "O(N) where N is the total number of elements in all given sets.";

constexpr char kSAddComplexity[] =
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments.";
constexpr char kSPopComplexity[] =
    "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.";
constexpr char kSRandMemberComplexity[] =
    "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed "
    "count.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "SADD", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdSAdd>, .since = "1.0.0",
     .summary = "Add one or more members to a set",
     .syntax = "key member [member ...]", .complexity = kSAddComplexity},
    {.name = "SREM", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdSRem>, .since = "1.0.0",
     .summary = "Remove one or more members from a set",
     .syntax = "key member [member ...]",
     .complexity = "O(N) where N is the number of members to be removed."},
    {.name = "SCARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdSCard>, .since = "1.0.0",
     .summary = "Get the number of members in a set", .syntax = "key", .complexity = "O(1)"},
    {.name = "SISMEMBER", .arity = 3, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdSIsMember>, .since = "1.0.0",
     .summary = "Determine if a given value is a member of a set", .syntax = "key member",
     .complexity = "O(1)"},
    {.name = "SMISMEMBER", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdSMIsMember>, .since = "6.2.0",
     .summary = "Returns the membership associated with the given elements for a set",
     .syntax = "key member [member ...]",
     .complexity = "O(N) where N is the number of elements being checked for membership"},
    {.name = "SMEMBERS", .arity = 2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdSMembers>, .since = "1.0.0",
     .summary = "Get all the members in a set", .syntax = "key",
     .complexity = "O(N) where N is the set cardinality.", .tips = kTipOrder},
    {.name = "SPOP", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdSPop>, .since = "1.0.0",
     .summary = "Remove and return one or multiple random members from a set",
     .syntax = "key [count]", .complexity = kSPopComplexity, .tips = kTipRandom},
    {.name = "SRANDMEMBER", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdSRandMember>, .since = "1.0.0",
     .summary = "Get one or multiple random members from a set", .syntax = "key [count]",
     .complexity = kSRandMemberComplexity, .tips = kTipRandom},
    {.name = "SMOVE", .arity = 4, .flags = kWrite | kFast,
     .keys = {kRwAccessDelete, vsl::KeyAt(2, VSL_KS_RW | VSL_KS_INSERT)},
     .handler = vsl::Handler<CmdSMove>,
     .since = "1.0.0", .summary = "Move a member from one set to another",
     .syntax = "source destination member", .complexity = "O(1)"},
    {.name = "SINTER", .arity = -2, .flags = kRead, .keys = {kRoAccessAll},
     .handler = vsl::Handler<CmdSInter>, .since = "1.0.0", .summary = "Intersect multiple sets",
     .syntax = "key [key ...]", .complexity = kInterComplexity, .tips = kTipOrder},
    // Redis 7.0 declares SINTERSTORE's destination RW (SUNIONSTORE's and SDIFFSTORE's OW).
    {.name = "SINTERSTORE", .arity = -3, .flags = kWrite | kDenyOom,
     .keys = {kRwUpdate, kSources},
     .handler = vsl::Handler<CmdSInterStore>, .since = "1.0.0",
     .summary = "Intersect multiple sets and store the resulting set in a key",
     .syntax = "destination key [key ...]", .complexity = kInterComplexity},
    {.name = "SINTERCARD", .arity = -3, .flags = kRead,
     .keys = {vsl::KeyNum(1, VSL_KS_RO | VSL_KS_ACCESS, 0, 1)},
     .handler = vsl::Handler<CmdSInterCard>, .since = "7.0.0",
     .summary = "Intersect multiple sets and return the cardinality of the result",
     .syntax = "numkeys key [key ...] [LIMIT limit]", .complexity = kInterComplexity},
    {.name = "SUNION", .arity = -2, .flags = kRead, .keys = {kRoAccessAll},
     .handler = vsl::Handler<CmdSUnion>, .since = "1.0.0", .summary = "Add multiple sets",
     .syntax = "key [key ...]", .complexity = kTotalComplexity, .tips = kTipOrder},
    {.name = "SUNIONSTORE", .arity = -3, .flags = kWrite | kDenyOom, .keys = {kOwUpdate, kSources},
     .handler = vsl::Handler<CmdSUnionStore>, .since = "1.0.0",
     .summary = "Add multiple sets and store the resulting set in a key",
     .syntax = "destination key [key ...]", .complexity = kTotalComplexity},
    {.name = "SDIFF", .arity = -2, .flags = kRead, .keys = {kRoAccessAll},
     .handler = vsl::Handler<CmdSDiff>, .since = "1.0.0", .summary = "Subtract multiple sets",
     .syntax = "key [key ...]", .complexity = kTotalComplexity, .tips = kTipOrder},
    {.name = "SDIFFSTORE", .arity = -3, .flags = kWrite | kDenyOom, .keys = {kOwUpdate, kSources},
     .handler = vsl::Handler<CmdSDiffStore>, .since = "1.0.0",
     .summary = "Subtract multiple sets and store the resulting set in a key",
     .syntax = "destination key [key ...]", .complexity = kTotalComplexity},
    {.name = "SSCAN", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdSScan>, .since = "2.8.0",
     .summary = "Incrementally iterate Set elements",
     .syntax = "key cursor [MATCH pattern] [COUNT count]", .complexity = kScanComplexity,
     .tips = kTipRandom},
};
// clang-format on

}  // namespace
}  // namespace vessel::sets

VSL_MODULE("sets", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::sets;
  vsl::ModuleInit init(api, m, "sets", nargs, err, errlen);
  init.Type(g_set_type, "set", 1);
  init.Commands(kCommands, kGroup);
  return init.result();
}
