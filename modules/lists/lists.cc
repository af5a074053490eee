// The lists module: Redis's list family as a Vessel module (value type "list").
//
// Commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LINSERT LREM LTRIM LPOS
// LMOVE RPOPLPUSH LMPOP BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP, with Redis 7.0's replies, error
// strings and edge cases (redis-server 7.0 is the reference the tests compare against). The
// blocking commands try to serve; when every list is empty they ask the host to park the client
// (vsl_api.block) and simply try again when the host re-runs them after a push or the timeout.
//
// Deliberate differences from Redis:
//   - LINDEX and LSET find their element in O(1) (chunks of a fixed count, see lists_type.h);
//     COMMAND DOCS says so.
#include <algorithm>
#include <string>
#include <string_view>

#include "lists_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::lists {
namespace {

using vsl::Ctx;
using vsl::Key;

// ---- shared pieces ----

List* Lookup(const Key& key) { return key.Get(g_list_type); }

enum class End { kLeft, kRight };

const char* PopEvent(End end) { return end == End::kLeft ? "lpop" : "rpop"; }
const char* PushEvent(End end) { return end == End::kLeft ? "lpush" : "rpush"; }

// After elements were removed: fires `event`, then an emptied list disappears with "del", as in
// Redis's listElementsRemoved.
void CommitRemoval(Key& key, const List* list, const char* event) {
  vsl::CommitRemoval(key, list->empty(), VSL_NOTIFY_LIST, event);
}

// Replies the element at the given end and removes it.
void ReplyPop(Ctx& ctx, List* list, End end) {
  if (end == End::kLeft) {
    ElemBuf buf;
    ctx.Bulk(list->Front(buf));
    list->PopFront();
  } else {
    list->PopBack([&](std::string_view e) { ctx.Bulk(e); });
  }
}

// LEFT | RIGHT (Redis's getListPositionFromObjectOrReply).
End EndArg(const Ctx& ctx, int i) {
  if (ctx.ArgIs(i, "left")) return End::kLeft;
  if (ctx.ArgIs(i, "right")) return End::kRight;
  vsl::SyntaxError();
}

// ---- push ----

// The body of LPUSH, RPUSH, LPUSHX and RPUSHX (Redis's pushGenericCommand): `existing_only`
// pushes only onto an existing list.
void PushGeneric(Ctx& ctx, End end, bool existing_only) {
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) {
    if (existing_only) return ctx.Int(0);
    ListPtr created(vsl::New<List>());
    for (int i = 2; i < ctx.argc(); ++i) {
      end == End::kLeft ? created->PushFront(ctx.arg(i)) : created->PushBack(ctx.arg(i));
    }
    const size_t len = created->size();
    key.Set(g_list_type, created.release());
    key.Notify(VSL_NOTIFY_LIST, PushEvent(end));
    ctx.AddChanges(static_cast<uint64_t>(ctx.argc() - 2));  // one per element, as Redis
    return ctx.Int(static_cast<int64_t>(len));
  }
  try {
    for (int i = 2; i < ctx.argc(); ++i) {
      end == End::kLeft ? list->PushFront(ctx.arg(i)) : list->PushBack(ctx.arg(i));
    }
  } catch (...) {
    key.Modified();  // out of memory part way: what was pushed stays, and is reported
    throw;
  }
  key.Modified();
  key.Notify(VSL_NOTIFY_LIST, PushEvent(end));
  ctx.AddChanges(static_cast<uint64_t>(ctx.argc() - 2));
  ctx.Int(static_cast<int64_t>(list->size()));
}

// LPUSH key element [element ...]
void CmdLPush(Ctx& ctx) { PushGeneric(ctx, End::kLeft, false); }

// RPUSH key element [element ...]
void CmdRPush(Ctx& ctx) { PushGeneric(ctx, End::kRight, false); }

// LPUSHX key element [element ...]
void CmdLPushX(Ctx& ctx) { PushGeneric(ctx, End::kLeft, true); }

// RPUSHX key element [element ...]
void CmdRPushX(Ctx& ctx) { PushGeneric(ctx, End::kRight, true); }

// ---- pop ----

// The body of LPOP and RPOP (Redis's popGenericCommand).
void PopGeneric(Ctx& ctx, End end) {
  if (ctx.argc() > 3) vsl::FailArity(ctx);
  const bool has_count = ctx.argc() == 3;
  const int64_t count = has_count ? vsl::PositiveArg(ctx, 2) : 1;
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) return has_count ? ctx.NullArray() : ctx.Null();
  if (!has_count) {
    ReplyPop(ctx, list, end);
  } else {
    const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), list->size());
    ctx.Array(static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) ReplyPop(ctx, list, end);
    if (n == 0) return;  // COUNT 0: nothing changed
    ctx.AddChanges(n);   // one per element popped, as Redis
  }
  CommitRemoval(key, list, PopEvent(end));
}

// LPOP key [count]
void CmdLPop(Ctx& ctx) { PopGeneric(ctx, End::kLeft); }

// RPOP key [count]
void CmdRPop(Ctx& ctx) { PopGeneric(ctx, End::kRight); }

// ---- reading ----

// LLEN key
void CmdLLen(Ctx& ctx) {
  const List* list = Lookup(ctx.key(0));
  ctx.Int(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

// LRANGE key start stop
void CmdLRange(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), stop = ctx.IntArg(3);
  const List* list = Lookup(ctx.key(0));
  size_t first, last;
  if (list == nullptr || !vsl::ClampRange(start, stop, list->size(), &first, &last)) {
    return static_cast<void>(ctx.Array(0));
  }
  ctx.Array(static_cast<int64_t>(last - first));
  list->ForEach(first, [&](size_t i, std::string_view e) {
    ctx.Bulk(e);
    return i + 1 < last;
  });
}

// LINDEX key index
void CmdLIndex(Ctx& ctx) {
  const List* list = Lookup(ctx.key(0));
  if (list == nullptr) return ctx.Null();
  const int64_t i = vsl::Position(ctx.IntArg(2), list->size());
  if (i < 0) return ctx.Null();
  ElemBuf buf;
  ctx.Bulk(list->At(static_cast<size_t>(i), buf));
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void CmdLPos(Ctx& ctx) {
  const std::string_view element = ctx.arg(2);
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: no COUNT option
  for (int j = 3; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (ctx.ArgIs(j, "rank") && more) {
      rank = ctx.IntArg(++j);
      if (rank == 0) {
        vsl::Fail(
            "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
            "use negative to start from the end of the list");
      }
    } else if (ctx.ArgIs(j, "count") && more) {
      count = vsl::IntArgInRange(ctx, ++j, 0, INT64_MAX, "COUNT can't be negative");
    } else if (ctx.ArgIs(j, "maxlen") && more) {
      maxlen = vsl::IntArgInRange(ctx, ++j, 0, INT64_MAX, "MAXLEN can't be negative");
    } else {
      vsl::SyntaxError();
    }
  }
  // A negative rank searches from the tail. Redis negates with wrap-around: RANK INT64_MIN
  // stays negative and matches from the first hit; unsigned arithmetic reproduces that.
  const bool from_tail = rank < 0;
  if (from_tail) rank = static_cast<int64_t>(0 - static_cast<uint64_t>(rank));

  const List* list = Lookup(ctx.key(0));
  if (list == nullptr) return count != -1 ? static_cast<void>(ctx.Array(0)) : ctx.Null();
  const int64_t len = static_cast<int64_t>(list->size());
  vsl_agg agg{};
  if (count != -1) agg = ctx.DeferredArray();
  int64_t matches = 0, found = -1, replied = 0;
  // Called for every match; returns false to stop the walk.
  auto on_match = [&](size_t index) {
    if (++matches < rank) return true;
    const auto i = static_cast<int64_t>(index);
    if (count == -1) {
      found = i;
      return false;
    }
    ctx.Int(i);
    ++replied;
    const auto served =
        static_cast<int64_t>(static_cast<uint64_t>(matches) - static_cast<uint64_t>(rank) + 1);
    return count == 0 || served < count;
  };
  const Needle needle(element);
  const size_t limit = maxlen == 0 ? list->size() : static_cast<size_t>(maxlen);
  from_tail ? list->ForEachMatchReverse(needle, static_cast<size_t>(len - 1), limit, on_match)
            : list->ForEachMatch(needle, 0, limit, on_match);
  if (count != -1) return ctx.SetLen(agg, replied);
  found >= 0 ? ctx.Int(found) : ctx.Null();
}

// ---- in-place changes ----

// LSET key index element
void CmdLSet(Ctx& ctx) {
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) vsl::Fail("no such key");
  const int64_t i = vsl::Position(ctx.IntArg(2), list->size());
  if (i < 0) vsl::Fail("index out of range");
  list->Set(static_cast<size_t>(i), ctx.arg(3));
  key.Modified();
  key.Notify(VSL_NOTIFY_LIST, "lset");
  ctx.Ok();
}

// LINSERT key BEFORE | AFTER pivot element
void CmdLInsert(Ctx& ctx) {
  bool after;
  if (ctx.ArgIs(2, "after")) {
    after = true;
  } else if (ctx.ArgIs(2, "before")) {
    after = false;
  } else {
    vsl::SyntaxError();
  }
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) return ctx.Int(0);
  const int64_t pivot = list->Find(ctx.arg(3));
  if (pivot < 0) return ctx.Int(-1);
  list->Insert(static_cast<size_t>(pivot) + (after ? 1 : 0), ctx.arg(4));
  key.Modified();
  key.Notify(VSL_NOTIFY_LIST, "linsert");
  ctx.Int(static_cast<int64_t>(list->size()));
}

// LREM key count element
void CmdLRem(Ctx& ctx) {
  const int64_t count = ctx.IntArg(2);
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) return ctx.Int(0);
  const size_t removed = list->Remove(ctx.arg(3), count);
  if (removed != 0) CommitRemoval(key, list, "lrem");
  ctx.AddChanges(removed);
  ctx.Int(static_cast<int64_t>(removed));
}

// LTRIM key start stop
void CmdLTrim(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), stop = ctx.IntArg(3);
  Key key = ctx.key(0);
  List* list = Lookup(key);
  if (list == nullptr) return ctx.Ok();
  const size_t len = list->size();
  size_t first, last;  // the elements kept
  if (!vsl::ClampRange(start, stop, len, &first, &last)) first = last = len;
  list->TrimFront(first);
  list->TrimBack(len - last);
  // Redis reports the key modified, and fires "ltrim", even when nothing was trimmed.
  CommitRemoval(key, list, "ltrim");
  ctx.AddChanges(first + (len - last));  // the elements dropped, as Redis
  ctx.Ok();
}

// ---- moving between lists ----

// The body of LMOVE, RPOPLPUSH, BLMOVE and BRPOPLPUSH (Redis's lmoveGenericCommand): moves one
// element from the source's `from` end to the destination's `to` end and replies it. Returns
// false, without replying, when the source does not exist.
bool MoveGeneric(Ctx& ctx, End from, End to) {
  Key src = ctx.key(0);
  List* source = Lookup(src);
  if (source == nullptr) return false;
  Key dst = ctx.key(1);
  List* dest = Lookup(dst);  // WRONGTYPE before anything changes; == source for LMOVE k k
  ListPtr created;
  if (dest == nullptr) {
    created.reset(vsl::New<List>());
    dest = created.get();
  }
  // Push a copy first (it may fail for memory, and nothing is lost then), then pop: for LMOVE
  // k k this rotates the list, and LEFT LEFT / RIGHT RIGHT leave it as it was, as in Redis.
  ElemBuf buf;
  const std::string e(from == End::kLeft ? source->Front(buf) : source->Back(buf));
  to == End::kLeft ? dest->PushFront(e) : dest->PushBack(e);
  from == End::kLeft ? source->PopFront() : source->PopBack();
  ctx.Bulk(e);
  if (created != nullptr) {
    dst.Set(g_list_type, created.release());
  } else {
    dst.Modified();
  }
  dst.Notify(VSL_NOTIFY_LIST, PushEvent(to));  // Redis's order: the push, then the pop
  CommitRemoval(src, source, PopEvent(from));
  ctx.AddChanges(1);  // one move, though two keys changed (Redis)
  return true;
}

// LMOVE source destination LEFT | RIGHT LEFT | RIGHT
void CmdLMove(Ctx& ctx) {
  const End from = EndArg(ctx, 3), to = EndArg(ctx, 4);
  if (!MoveGeneric(ctx, from, to)) ctx.Null();
}

// RPOPLPUSH source destination
void CmdRPopLPush(Ctx& ctx) {
  if (!MoveGeneric(ctx, End::kRight, End::kLeft)) ctx.Null();
}

// ---- popping from the first non-empty list ----

// numkeys key [key ...] LEFT | RIGHT [COUNT count], numkeys at argument `first`.
vsl::MPopArgs LMPopArg(const Ctx& ctx, int first) {
  return vsl::MPopArg(ctx, first, "left", "right");
}

// Pops up to count elements from the first non-empty list and replies [key, [elements]].
// Returns false, without replying, when every list is empty.
bool MPopGeneric(Ctx& ctx, const vsl::MPopArgs& a) {
  for (int i = 0; i < a.numkeys; ++i) {
    Key key = ctx.key(i);
    List* list = Lookup(key);
    if (list == nullptr) continue;
    const size_t n = std::min<uint64_t>(static_cast<uint64_t>(a.count), list->size());
    ctx.Array(2);
    ctx.Bulk(key.name());
    ctx.Array(static_cast<int64_t>(n));
    const End end = a.second ? End::kRight : End::kLeft;
    for (size_t j = 0; j < n; ++j) ReplyPop(ctx, list, end);
    ctx.Propagate({end == End::kLeft ? "LPOP" : "RPOP", key.name(), std::to_string(n)});  // Redis
    CommitRemoval(key, list, PopEvent(end));
    ctx.AddChanges(n);
    return true;
  }
  return false;
}

// LMPOP numkeys key [key ...] LEFT | RIGHT [COUNT count]
void CmdLMPop(Ctx& ctx) {
  if (!MPopGeneric(ctx, LMPopArg(ctx, 1))) ctx.NullArray();
}

// ---- blocking ----
// Each tries to serve; when there is nothing it parks the client. Block() returns false inside
// MULTI (Redis then replies at once, as the non-blocking form does when empty) and on the re-run
// after the timeout.

// The body of BLPOP and BRPOP (Redis's blockingPopGenericCommand).
void BlockingPopGeneric(Ctx& ctx, End end) {
  const int64_t timeout = ctx.TimeoutMsArg(ctx.argc() - 1);
  for (int i = 0; i < ctx.key_count(); ++i) {
    Key key = ctx.key(i);
    List* list = Lookup(key);
    if (list == nullptr) continue;
    ctx.Array(2);
    ctx.Bulk(key.name());
    ReplyPop(ctx, list, end);
    ctx.Propagate({end == End::kLeft ? "LPOP" : "RPOP", key.name()});  // as Redis
    CommitRemoval(key, list, PopEvent(end));
    return;
  }
  if (!ctx.Block(timeout)) ctx.NullArray();
}

// BLPOP key [key ...] timeout
void CmdBLPop(Ctx& ctx) { BlockingPopGeneric(ctx, End::kLeft); }

// BRPOP key [key ...] timeout
void CmdBRPop(Ctx& ctx) { BlockingPopGeneric(ctx, End::kRight); }

// The body of BLMOVE and BRPOPLPUSH (Redis's blmoveGenericCommand); a move is replayed as LMOVE
// or RPOPLPUSH, as Redis propagates it.
void BlockingMoveGeneric(Ctx& ctx, End from, End to, int64_t timeout) {
  if (MoveGeneric(ctx, from, to)) {
    if (ctx.argc() == 4) return ctx.Propagate({"RPOPLPUSH", ctx.arg(1), ctx.arg(2)});
    return ctx.Propagate({"LMOVE", ctx.arg(1), ctx.arg(2), ctx.arg(3), ctx.arg(4)});
  }
  if (ctx.Block(timeout)) return;
  // Redis 7.0: a null bulk inside MULTI, but a null array when a parked client times out.
  ctx.in_transaction() ? ctx.Null() : ctx.NullArray();
}

// BLMOVE source destination LEFT | RIGHT LEFT | RIGHT timeout
void CmdBLMove(Ctx& ctx) {
  const End from = EndArg(ctx, 3), to = EndArg(ctx, 4);
  BlockingMoveGeneric(ctx, from, to, ctx.TimeoutMsArg(5));
}

// BRPOPLPUSH source destination timeout
void CmdBRPopLPush(Ctx& ctx) {
  BlockingMoveGeneric(ctx, End::kRight, End::kLeft, ctx.TimeoutMsArg(3));
}

// BLMPOP timeout numkeys key [key ...] LEFT | RIGHT [COUNT count]
void CmdBLMPop(Ctx& ctx) {
  const vsl::MPopArgs a = LMPopArg(ctx, 2);
  const int64_t timeout = ctx.TimeoutMsArg(1);
  if (!MPopGeneric(ctx, a) && !ctx.Block(timeout)) ctx.NullArray();
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "list";
// LMOVE and friends: the source, then the destination at argument 2.
constexpr vsl_keyspec kPopFrom = kRwAccessDelete;
constexpr vsl_keyspec kPushTo = vsl::KeyAt(2, VSL_KS_RW | VSL_KS_INSERT);

constexpr char kPushComplexity[] =
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments.";
constexpr char kMPopComplexity[] =
    "O(N+M) where N is the number of provided keys and M is the number of elements returned.";
constexpr char kMoveSummary[] =
    "Pop an element from a list, push it to another list and return it; or block until one is "
    "available";

constexpr char kLInsertComplexity[] =
    "O(N) where N is the number of elements to traverse before seeing the value pivot, plus the "
    "number of elements moved, at most half the list.";
constexpr char kLRemComplexity[] =
    "O(N+M) where N is the length of the list and M is the number of elements removed.";
constexpr char kLPosComplexity[] =
    "O(N) where N is the number of elements in the list, for the average case. When searching for "
    "elements near the head or the tail of the list, or when the MAXLEN option is provided, the "
    "command may run in constant time.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "LPUSH", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdLPush>, .since = "1.0.0",
     .summary = "Prepend one or multiple elements to a list", .syntax = "key element [element ...]",
     .complexity = kPushComplexity},
    {.name = "RPUSH", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdRPush>, .since = "1.0.0",
     .summary = "Append one or multiple elements to a list", .syntax = "key element [element ...]",
     .complexity = kPushComplexity},
    {.name = "LPUSHX", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdLPushX>, .since = "2.2.0",
     .summary = "Prepend an element to a list, only if the list exists",
     .syntax = "key element [element ...]", .complexity = kPushComplexity},
    {.name = "RPUSHX", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdRPushX>, .since = "2.2.0",
     .summary = "Append an element to a list, only if the list exists",
     .syntax = "key element [element ...]", .complexity = kPushComplexity},
    {.name = "LPOP", .arity = -2, .flags = kWrite | kFast, .keys = {kPopFrom},
     .handler = vsl::Handler<CmdLPop>, .since = "1.0.0",
     .summary = "Remove and get the first elements in a list", .syntax = "key [count]",
     .complexity = "O(N) where N is the number of elements returned"},
    {.name = "RPOP", .arity = -2, .flags = kWrite | kFast, .keys = {kPopFrom},
     .handler = vsl::Handler<CmdRPop>, .since = "1.0.0",
     .summary = "Remove and get the last elements in a list", .syntax = "key [count]",
     .complexity = "O(N) where N is the number of elements returned"},
    {.name = "LLEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdLLen>, .since = "1.0.0", .summary = "Get the length of a list",
     .syntax = "key", .complexity = "O(1)"},
    {.name = "LRANGE", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdLRange>, .since = "1.0.0",
     .summary = "Get a range of elements from a list", .syntax = "key start stop",
     .complexity = "O(N) where N is the number of elements in the specified range."},
    {.name = "LINDEX", .arity = 3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdLIndex>, .since = "1.0.0",
     .summary = "Get an element from a list by its index", .syntax = "key index",
     .complexity = "O(1)"},
    {.name = "LSET", .arity = 4, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdLSet>, .since = "1.0.0",
     .summary = "Set the value of an element in a list by its index",
     .syntax = "key index element", .complexity = "O(1)"},
    {.name = "LINSERT", .arity = 5, .flags = kWrite | kDenyOom, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdLInsert>, .since = "2.2.0",
     .summary = "Insert an element before or after another element in a list",
     .syntax = "key BEFORE | AFTER pivot element", .complexity = kLInsertComplexity},
    {.name = "LREM", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdLRem>, .since = "1.0.0", .summary = "Remove elements from a list",
     .syntax = "key count element", .complexity = kLRemComplexity},
    {.name = "LTRIM", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdLTrim>, .since = "1.0.0",
     .summary = "Trim a list to the specified range", .syntax = "key start stop",
     .complexity = "O(N) where N is the number of elements to be removed by the operation."},
    {.name = "LPOS", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdLPos>, .since = "6.0.6",
     .summary = "Return the index of matching elements on a list",
     .syntax = "key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
     .complexity = kLPosComplexity},
    {.name = "LMOVE", .arity = 5, .flags = kWrite | kDenyOom, .keys = {kPopFrom, kPushTo},
     .handler = vsl::Handler<CmdLMove>, .since = "6.2.0",
     .summary = "Pop an element from a list, push it to another list and return it",
     .syntax = "source destination LEFT | RIGHT LEFT | RIGHT", .complexity = "O(1)"},
    {.name = "RPOPLPUSH", .arity = 3, .flags = kWrite | kDenyOom, .keys = {kPopFrom, kPushTo},
     .handler = vsl::Handler<CmdRPopLPush>, .since = "1.2.0",
     .summary = "Remove the last element in a list, prepend it to another list and return it",
     .syntax = "source destination", .complexity = "O(1)"},
    {.name = "LMPOP", .arity = -4, .flags = kWrite,
     .keys = {vsl::KeyNum(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = vsl::Handler<CmdLMPop>, .since = "7.0.0", .summary = "Pop elements from a list",
     .syntax = "numkeys key [key ...] LEFT | RIGHT [COUNT count]", .complexity = kMPopComplexity},
    {.name = "BLPOP", .arity = -3, .flags = kWrite | kBlocking | kNoScript,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = vsl::Handler<CmdBLPop>, .since = "2.0.0",
     .summary = "Remove and get the first element in a list, or block until one is available",
     .syntax = "key [key ...] timeout",
     .complexity = "O(N) where N is the number of provided keys."},
    {.name = "BRPOP", .arity = -3, .flags = kWrite | kBlocking | kNoScript,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = vsl::Handler<CmdBRPop>, .since = "2.0.0",
     .summary = "Remove and get the last element in a list, or block until one is available",
     .syntax = "key [key ...] timeout",
     .complexity = "O(N) where N is the number of provided keys."},
    {.name = "BLMOVE", .arity = 6, .flags = kWrite | kDenyOom | kBlocking | kNoScript,
     .keys = {kPopFrom, kPushTo}, .handler = vsl::Handler<CmdBLMove>, .since = "6.2.0",
     .summary = kMoveSummary, .syntax = "source destination LEFT | RIGHT LEFT | RIGHT timeout",
     .complexity = "O(1)"},
    {.name = "BRPOPLPUSH", .arity = 4, .flags = kWrite | kDenyOom | kBlocking | kNoScript,
     .keys = {kPopFrom, kPushTo}, .handler = vsl::Handler<CmdBRPopLPush>, .since = "2.2.0",
     .summary = kMoveSummary, .syntax = "source destination timeout", .complexity = "O(1)"},
    {.name = "BLMPOP", .arity = -5, .flags = kWrite | kBlocking,
     .keys = {vsl::KeyNum(2, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = vsl::Handler<CmdBLMPop>, .since = "7.0.0",
     .summary = "Pop elements from a list, or block until one is available",
     .syntax = "timeout numkeys key [key ...] LEFT | RIGHT [COUNT count]",
     .complexity = kMPopComplexity},
};
// clang-format on

}  // namespace
}  // namespace vessel::lists

VSL_MODULE("lists", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::lists;
  vsl::ModuleInit init(api, m, "lists", nargs, err, errlen);
  init.Type(g_list_type, "list", 1);
  init.Commands(kCommands, kGroup);
  return init.result();
}
