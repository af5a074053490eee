// The deque module: a double-ended queue with O(1) access at both ends and by position (value type
// "deque", commands DEQ.*), for queues that are also read and changed in the middle.
//
// Commands (indexes are 0-based; a negative index counts from the back, -1 being the last
// element; ranges are inclusive at both ends, as in LRANGE):
//   DEQ.PUSHFRONT key element [element ...]   push each element at the front, one after the
//   DEQ.PUSHBACK key element [element ...]    other (as LPUSH / RPUSH); creates the key; the
//                                             new length
//   DEQ.POPFRONT key [count]                  remove from the front / the back, as LPOP / RPOP:
//   DEQ.POPBACK key [count]                   without count the element or nil; with count an
//                                             array of up to count elements (nil without key)
//   DEQ.FRONT key / DEQ.BACK key              the first / last element, or nil
//   DEQ.INDEX key index                       the element, or nil (as LINDEX)
//   DEQ.SET key index element                 replace one element (as LSET: "no such key",
//                                             "index out of range"); OK
//   DEQ.RANGE key start stop                  the elements start..stop, clamped, as LRANGE
//   DEQ.LEN key                               the number of elements (0 without key)
//   DEQ.INSERT key index element              insert before position index (index == length
//                                             appends, so index 0 creates a missing key); "index
//                                             out of range" past that; the new length
//   DEQ.ERASE key index [count]               erase count (default 1) elements from index on,
//                                             fewer at the back; "index out of range" when the
//                                             key exists and index does not; the number erased
//   DEQ.BPOPFRONT key [key ...] timeout       BLPOP / BRPOP: pop from the first non-empty deque
//   DEQ.BPOPBACK key [key ...] timeout        as [key, element], or block until one is pushed
// A deque emptied by a command is deleted, as Redis deletes an empty list; no command stores an
// empty deque.
// Keyspace events (class d): deq.pushfront deq.pushback deq.popfront deq.popback deq.set
// deq.insert deq.erase, when the command changed something, then "del" when it emptied the deque.
//
// Conventions: the commands that mirror a list command check their arguments and the key in that
// command's order, with its errors (DEQ.INDEX and DEQ.SET look at the key first, as LINDEX and
// LSET; the others parse every argument first); a surplus argument of DEQ.POP* gets the arity
// error, as LPOP's. A served blocking pop is recorded in the append-only file as the
// non-blocking pop it performed, as Redis records BLPOP as LPOP.
#include <algorithm>
#include <string_view>

#include "deque_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::deque {
namespace {

using vsl::Ctx;
using vsl::Key;

// ---- shared pieces ----

Deque* Lookup(const Key& key) { return key.Get(g_deque_type); }

enum class End { kFront, kBack };

const char* PopEvent(End end) { return end == End::kFront ? "deq.popfront" : "deq.popback"; }
const char* PushEvent(End end) { return end == End::kFront ? "deq.pushfront" : "deq.pushback"; }

// The position of index in a deque of len elements (negative counts from the back), or "ERR
// index out of range".
size_t PositionOrFail(int64_t index, size_t len) {
  const int64_t pos = vsl::Position(index, len);
  if (pos < 0) vsl::Fail("index out of range");
  return static_cast<size_t>(pos);
}

// After elements were removed: fires `event`, then an emptied deque disappears with "del".
void CommitRemoval(Key& key, const Deque* d, const char* event) {
  vsl::CommitRemoval(key, d->empty(), VSL_NOTIFY_MODULE, event);
}

// Replies the element at the given end and removes it.
void ReplyPop(Ctx& ctx, Deque* d, End end) {
  auto take = [&](std::string_view e) { ctx.Bulk(e); };
  end == End::kFront ? d->PopFront(take) : d->PopBack(take);
}

void Len(Ctx& ctx, size_t n) { ctx.Int(static_cast<int64_t>(n)); }

// ---- the ends ----

// The body of DEQ.PUSHFRONT and DEQ.PUSHBACK (as Redis's pushGenericCommand).
void PushGeneric(Ctx& ctx, End end) {
  Key key = ctx.key(0);
  Deque* d = Lookup(key);
  DequePtr fresh(d == nullptr ? vsl::New<Deque>() : nullptr);
  if (fresh != nullptr) d = fresh.get();
  try {
    for (int i = 2; i < ctx.argc(); ++i) {
      end == End::kFront ? d->PushFront(ctx.arg(i)) : d->PushBack(ctx.arg(i));
    }
  } catch (...) {
    if (fresh == nullptr) key.Modified();  // out of memory part way: what was pushed stays
    throw;
  }
  const size_t len = d->size();
  if (fresh != nullptr) {
    key.Set(g_deque_type, fresh.release());
  } else {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, PushEvent(end));
  ctx.AddChanges(static_cast<uint64_t>(ctx.argc() - 2));  // one per element, as LPUSH
  Len(ctx, len);
}

// DEQ.PUSHFRONT key element [element ...]
void CmdDeqPushFront(Ctx& ctx) { PushGeneric(ctx, End::kFront); }

// DEQ.PUSHBACK key element [element ...]
void CmdDeqPushBack(Ctx& ctx) { PushGeneric(ctx, End::kBack); }

// The body of DEQ.POPFRONT and DEQ.POPBACK (as Redis's popGenericCommand).
void PopGeneric(Ctx& ctx, End end) {
  if (ctx.argc() > 3) vsl::FailArity(ctx);
  const bool has_count = ctx.argc() == 3;
  const int64_t count = has_count ? vsl::PositiveArg(ctx, 2) : 1;
  Key key = ctx.key(0);
  Deque* d = Lookup(key);
  if (d == nullptr) return has_count ? ctx.NullArray() : ctx.Null();
  if (!has_count) {
    ReplyPop(ctx, d, end);
    ctx.AddChanges(1);
  } else {
    const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), d->size());
    ctx.Array(static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) ReplyPop(ctx, d, end);
    if (n == 0) return;  // count 0: nothing changed
    ctx.AddChanges(n);
  }
  CommitRemoval(key, d, PopEvent(end));
}

// DEQ.POPFRONT key [count]
void CmdDeqPopFront(Ctx& ctx) { PopGeneric(ctx, End::kFront); }

// DEQ.POPBACK key [count]
void CmdDeqPopBack(Ctx& ctx) { PopGeneric(ctx, End::kBack); }

// DEQ.FRONT key
void CmdDeqFront(Ctx& ctx) {
  const Deque* d = Lookup(ctx.key(0));
  if (d == nullptr) return ctx.Null();
  ElemBuf buf;
  ctx.Bulk(d->At(0, buf));
}

// DEQ.BACK key
void CmdDeqBack(Ctx& ctx) {
  const Deque* d = Lookup(ctx.key(0));
  if (d == nullptr) return ctx.Null();
  ElemBuf buf;
  ctx.Bulk(d->At(d->size() - 1, buf));
}

// ---- by position ----

// DEQ.LEN key
void CmdDeqLen(Ctx& ctx) {
  const Deque* d = Lookup(ctx.key(0));
  Len(ctx, d == nullptr ? 0 : d->size());
}

// DEQ.INDEX key index
void CmdDeqIndex(Ctx& ctx) {
  const Deque* d = Lookup(ctx.key(0));  // the key first, as LINDEX
  if (d == nullptr) return ctx.Null();
  const int64_t pos = vsl::Position(ctx.IntArg(2), d->size());
  if (pos < 0) return ctx.Null();
  ElemBuf buf;
  ctx.Bulk(d->At(static_cast<size_t>(pos), buf));
}

// DEQ.SET key index element
void CmdDeqSet(Ctx& ctx) {
  Key key = ctx.key(0);
  Deque* d = Lookup(key);  // the key first, as LSET
  if (d == nullptr) vsl::Fail("no such key");
  d->Set(PositionOrFail(ctx.IntArg(2), d->size()), ctx.arg(3));
  key.Modified();
  key.Notify(VSL_NOTIFY_MODULE, "deq.set");
  ctx.Ok();
}

// DEQ.RANGE key start stop
void CmdDeqRange(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), stop = ctx.IntArg(3);
  const Deque* d = Lookup(ctx.key(0));
  size_t first = 0, last = 0;
  if (d == nullptr || !vsl::ClampRange(start, stop, d->size(), &first, &last))
    return static_cast<void>(ctx.Array(0));
  ctx.Array(static_cast<int64_t>(last - first));
  d->ForEach(first, [&](size_t i, std::string_view e) {
    ctx.Bulk(e);
    return i + 1 < last;
  });
}

// DEQ.INSERT key index element
void CmdDeqInsert(Ctx& ctx) {
  const int64_t index = ctx.IntArg(2);
  Key key = ctx.key(0);
  Deque* d = Lookup(key);
  const int64_t len = d == nullptr ? 0 : static_cast<int64_t>(d->size());
  const int64_t pos = index < 0 ? index + len : index;
  if (pos < 0 || pos > len) vsl::Fail("index out of range");
  if (d == nullptr) {
    DequePtr fresh(vsl::New<Deque>());
    fresh->PushBack(ctx.arg(3));
    key.Set(g_deque_type, fresh.release());
  } else {
    d->Insert(static_cast<size_t>(pos), ctx.arg(3));
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, "deq.insert");
  Len(ctx, static_cast<size_t>(len + 1));
}

// DEQ.ERASE key index [count]
void CmdDeqErase(Ctx& ctx) {
  if (ctx.argc() > 4) vsl::FailArity(ctx);
  const int64_t index = ctx.IntArg(2);
  const int64_t count = ctx.argc() == 4 ? vsl::PositiveArg(ctx, 3) : 1;
  Key key = ctx.key(0);
  Deque* d = Lookup(key);
  if (d == nullptr) return ctx.Int(0);
  const size_t pos = PositionOrFail(index, d->size());
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), d->size() - pos);
  if (n == 0) return ctx.Int(0);
  d->Erase(pos, n);
  ctx.AddChanges(n);
  CommitRemoval(key, d, "deq.erase");
  Len(ctx, n);
}

// ---- blocking ----

// The body of DEQ.BPOPFRONT and DEQ.BPOPBACK (as Redis's blockingPopGenericCommand): serves from
// the first non-empty deque, or parks the client until a push to one of the keys. Block()
// returns false inside MULTI and on the re-run after the timeout: then the null array, as BLPOP.
void BlockingPopGeneric(Ctx& ctx, End end) {
  const int64_t timeout = ctx.TimeoutMsArg(ctx.argc() - 1);
  for (int i = 0; i < ctx.key_count(); ++i) {
    Key key = ctx.key(i);
    Deque* d = Lookup(key);
    if (d == nullptr) continue;
    ctx.Array(2);
    ctx.Bulk(key.name());
    ReplyPop(ctx, d, end);
    ctx.Propagate({end == End::kFront ? "DEQ.POPFRONT" : "DEQ.POPBACK", key.name()});
    CommitRemoval(key, d, PopEvent(end));
    return;
  }
  if (!ctx.Block(timeout)) ctx.NullArray();
}

// DEQ.BPOPFRONT key [key ...] timeout
void CmdDeqBPopFront(Ctx& ctx) { BlockingPopGeneric(ctx, End::kFront); }

// DEQ.BPOPBACK key [key ...] timeout
void CmdDeqBPopBack(Ctx& ctx) { BlockingPopGeneric(ctx, End::kBack); }

// ---- the command table ----

using namespace vsl::table;

// The keys of DEQ.BPOP*: every argument but the timeout.
constexpr vsl_keyspec kBPop = vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2);

constexpr char kGroup[] = "deque";
constexpr char kSince[] = "1.0.0";

constexpr char kPushComplexity[] =
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments.";
constexpr char kPopComplexity[] = "O(N) where N is the number of elements returned";
constexpr char kInsertComplexity[] =
    "O(min(I, N-I)) where I is the index and N the number of elements: the elements between the "
    "index and the nearer end move";
constexpr char kEraseComplexity[] =
    "O(min(I, N-I-C)+C) where I is the index, C the number of elements erased and N the number "
    "of elements: the elements between the erased ones and the nearer end move";
constexpr char kBPopComplexity[] = "O(N) where N is the number of provided keys.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "DEQ.PUSHFRONT", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdDeqPushFront>, .since = kSince,
     .summary = "Prepend one or more elements to a deque", .syntax = "key element [element ...]",
     .complexity = kPushComplexity},
    {.name = "DEQ.PUSHBACK", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdDeqPushBack>, .since = kSince,
     .summary = "Append one or more elements to a deque", .syntax = "key element [element ...]",
     .complexity = kPushComplexity},
    {.name = "DEQ.POPFRONT", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdDeqPopFront>, .since = kSince,
     .summary = "Remove and get the first elements of a deque", .syntax = "key [count]",
     .complexity = kPopComplexity},
    {.name = "DEQ.POPBACK", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdDeqPopBack>, .since = kSince,
     .summary = "Remove and get the last elements of a deque", .syntax = "key [count]",
     .complexity = kPopComplexity},
    {.name = "DEQ.FRONT", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdDeqFront>, .since = kSince,
     .summary = "Get the first element of a deque", .syntax = "key", .complexity = "O(1)"},
    {.name = "DEQ.BACK", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdDeqBack>, .since = kSince,
     .summary = "Get the last element of a deque", .syntax = "key", .complexity = "O(1)"},
    {.name = "DEQ.INDEX", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdDeqIndex>, .since = kSince,
     .summary = "Get an element of a deque by its index", .syntax = "key index",
     .complexity = "O(1)"},
    {.name = "DEQ.SET", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdDeqSet>, .since = kSince,
     .summary = "Set the element of a deque at an index", .syntax = "key index element",
     .complexity = "O(1)"},
    {.name = "DEQ.RANGE", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdDeqRange>, .since = kSince,
     .summary = "Get a range of elements of a deque", .syntax = "key start stop",
     .complexity = "O(N) where N is the number of elements returned"},
    {.name = "DEQ.LEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdDeqLen>, .since = kSince,
     .summary = "Get the number of elements of a deque", .syntax = "key", .complexity = "O(1)"},
    {.name = "DEQ.INSERT", .arity = 4, .flags = kWrite | kDenyOom, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdDeqInsert>, .since = kSince,
     .summary = "Insert an element into a deque before an index", .syntax = "key index element",
     .complexity = kInsertComplexity},
    {.name = "DEQ.ERASE", .arity = -3, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdDeqErase>, .since = kSince,
     .summary = "Erase elements of a deque from an index", .syntax = "key index [count]",
     .complexity = kEraseComplexity},
    {.name = "DEQ.BPOPFRONT", .arity = -3, .flags = kWrite | kBlocking | kNoScript,
     .keys = {kBPop}, .handler = vsl::Handler<CmdDeqBPopFront>, .since = kSince,
     .summary = "Remove and get the first element of a deque, or block until one is available",
     .syntax = "key [key ...] timeout", .complexity = kBPopComplexity},
    {.name = "DEQ.BPOPBACK", .arity = -3, .flags = kWrite | kBlocking | kNoScript,
     .keys = {kBPop}, .handler = vsl::Handler<CmdDeqBPopBack>, .since = kSince,
     .summary = "Remove and get the last element of a deque, or block until one is available",
     .syntax = "key [key ...] timeout", .complexity = kBPopComplexity},
};
// clang-format on

}  // namespace
}  // namespace vessel::deque

VSL_MODULE("deque", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::deque;
  vsl::ModuleInit init(api, m, "deque", nargs, err, errlen);
  init.Type(g_deque_type, "deque", kEncodingVersion, "vsl-deque");
  init.Commands(kCommands, kGroup);
  return init.result();
}
