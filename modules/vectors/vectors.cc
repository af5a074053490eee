// The vectors module: a contiguous array of binary-safe elements with O(1) access by position
// (value type "vector", commands VEC.*), for users who index by position rather than push and
// pop at both ends.
//
// Commands (indexes are 0-based; a negative index counts from the end, -1 being the last
// element; ranges are inclusive at both ends, as in LRANGE):
//   VEC.PUSH key element [element ...]   append; creates the key; replies the new length
//   VEC.POP key [count]                  remove from the back, like RPOP: without count the
//                                        element or nil; with count an array of up to count
//                                        elements, last first (nil when there is no key)
//   VEC.LEN key                          the number of elements (0 when there is no key)
//   VEC.INDEX key index                  the element, or nil when out of range or no key
//   VEC.FRONT key / VEC.BACK key         the first / last element, or nil when there is no key
//   VEC.MGET key index [index ...]       an array with the element at every index (nil where
//                                        out of range, all nil when there is no key)
//   VEC.SET key index element            replace one element; "no such key" and "index out of
//                                        range" errors; OK
//   VEC.MSET key index element [index element ...]
//                                        replace several, all or none (every index is checked
//                                        first); a repeated index keeps the last element; OK
//   VEC.RANGE key start stop             the elements start..stop, clamped, as LRANGE
//   VEC.INSERT key index element [element ...]
//                                        insert the elements, in order, before position index
//                                        (index == length appends, so index 0 creates a missing
//                                        key); "index out of range" past that; the new length
//   VEC.ERASE key index [count]          erase count (default 1) elements from index on, fewer
//                                        at the end; "index out of range" when the key exists
//                                        and index does not; the number erased (0 without key)
//   VEC.TRIM key start stop              keep only start..stop, as LTRIM; OK
//   VEC.RESIZE key length [fill]         grow with copies of fill (default "") or shrink to
//                                        length; creates the key; the new length
//   VEC.FIND key element [FROM index]    the first position >= index (default 0) holding
//                                        element, or -1
//   VEC.SWAP key index1 index2           exchange two elements; errors as VEC.SET; OK
//   VEC.CLEAR key                        delete the vector; the number of elements it held
// A vector emptied by a command (POP, ERASE, TRIM, RESIZE 0, CLEAR) is deleted, as Redis deletes
// an empty list; no command ever stores an empty vector.
// Keyspace events (class d): vec.push vec.pop vec.set vec.mset vec.swap vec.insert vec.erase
// vec.trim vec.resize vec.clear when the command changed something, then "del" when it emptied
// the vector, as Redis's list commands.
//
// Conventions: every argument is checked before the key is looked at, so a malformed command
// fails the same way whether or not the key exists ("ERR value is not an integer or out of
// range" for a bad index, "ERR value is out of range, must be positive" for a negative count or
// length, "ERR syntax error" for an unknown option, the arity error for a surplus argument); then
// WRONGTYPE, then "no such key" and "index out of range". A vector holds at most 2^32 - 1
// elements ("ERR vector exceeds maximum allowed length"). VEC.RESIZE adds at most
// proto-max-bulk-len bytes ("ERR vector growth exceeds maximum allowed size
// (proto-max-bulk-len)") and, under maxmemory, only what fits after eviction (Redis's OOM error).
#include <algorithm>
#include <string>
#include <vector>

#include "vectors_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::vectors {
namespace {

using vsl::Ctx;
using vsl::Key;

vsl::Type<Vector> g_vector_type;

// ---- shared pieces ----

// The key's vector, or nullptr when the key does not exist. Throws WRONGTYPE.
Vector* Lookup(const Key& key) { return key.Get(g_vector_type); }

// The key's vector; fails with "no such key" when there is none (as LSET).
Vector& Existing(const Key& key) {
  Vector* v = Lookup(key);
  if (v == nullptr) vsl::Fail("no such key");
  return *v;
}

// The position of index in a vector of len elements (negative counts from the end), or "ERR
// index out of range".
size_t PositionOrFail(int64_t index, size_t len) {
  const int64_t pos = vsl::Position(index, len);
  if (pos < 0) vsl::Fail("index out of range");
  return static_cast<size_t>(pos);
}

// A count or length argument: an integer >= 0.
int64_t CountArg(const Ctx& ctx, int i) {
  const int64_t v = ctx.IntArg(i);
  if (v < 0) vsl::Fail("value is out of range, must be positive");
  return v;
}

// The elements argv[first ...] of the command.
Elems ArgElems(const Ctx& ctx, int first) {
  return {ctx.args().data() + first, static_cast<size_t>(ctx.argc() - first)};
}

// Runs op on the key's vector, or on a new empty one stored afterwards when the key does not
// exist; `added` elements must fit. op changes the vector all or nothing (or throws), and
// leaves it non-empty. Fires `event`. Returns the resulting length.
template <class F>
size_t Upsert(Key& key, size_t added, const char* event, F&& op) {
  Vector* v = Lookup(key);
  VectorPtr fresh(v == nullptr ? vsl::New<Vector>() : nullptr);
  if (fresh != nullptr) v = fresh.get();
  if (added > kMaxLen - v->size()) vsl::Fail("vector exceeds maximum allowed length");
  op(*v);
  const size_t len = v->size();
  if (fresh != nullptr) {
    key.Set(g_vector_type, fresh.release());
  } else {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_MODULE, event);
  return len;
}

// A change in place: reports it and fires `event`.
void CommitChange(Key& key, const char* event) {
  key.Modified();
  key.Notify(VSL_NOTIFY_MODULE, event);
}

// After elements were removed: fires `event`, then an emptied vector disappears with "del" (the
// order Redis uses for lists).
void CommitRemoval(Key& key, const Vector& v, const char* event) {
  vsl::CommitRemoval(key, v.empty(), VSL_NOTIFY_MODULE, event);
}

void Len(Ctx& ctx, size_t n) { ctx.Int(static_cast<int64_t>(n)); }

// ---- growing and shrinking at the back ----

// VEC.PUSH key element [element ...]
void CmdVecPush(Ctx& ctx) {
  Key key = ctx.key(0);
  const Elems elems = ArgElems(ctx, 2);
  Len(ctx, Upsert(key, elems.n, "vec.push", [&](Vector& v) { v.Append(elems); }));
}

// VEC.POP key [count]
void CmdVecPop(Ctx& ctx) {
  if (ctx.argc() > 3) vsl::FailArity(ctx);
  const bool has_count = ctx.argc() == 3;
  const int64_t count = has_count ? CountArg(ctx, 2) : 1;
  Key key = ctx.key(0);
  Vector* v = Lookup(key);
  if (v == nullptr) return has_count ? ctx.NullArray() : ctx.Null();
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), v->size());
  if (has_count) ctx.Array(static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    ctx.Bulk(v->at(v->size() - 1));  // the reply copies the bytes before they go
    v->PopBack();
  }
  if (n != 0) CommitRemoval(key, *v, "vec.pop");
}

// VEC.RESIZE key length [fill]
void CmdVecResize(Ctx& ctx) {
  if (ctx.argc() > 4) vsl::FailArity(ctx);
  const int64_t n = CountArg(ctx, 2);
  if (static_cast<uint64_t>(n) > kMaxLen) vsl::Fail("vector exceeds maximum allowed length");
  const std::string_view fill = ctx.argc() == 4 ? ctx.arg(3) : std::string_view();
  Key key = ctx.key(0);
  if (n == 0) {
    if (Lookup(key) != nullptr) {
      key.Notify(VSL_NOTIFY_MODULE, "vec.resize");
      key.Delete();
      key.Notify(VSL_NOTIFY_GENERIC, "del");
    }
    return ctx.Int(0);
  }
  Len(ctx, Upsert(key, 0, "vec.resize", [&](Vector& v) {
        // The length is an argument, not data the client sent: what it adds is checked first.
        uint64_t bytes = 0;
        if (static_cast<size_t>(n) > v.size() &&
            __builtin_mul_overflow(static_cast<uint64_t>(n) - v.size(), Vector::SlotBytes(fill),
                                   &bytes))
          bytes = UINT64_MAX;
        ctx.CheckGrowth(bytes, "vector growth");
        v.Resize(static_cast<size_t>(n), fill);
      }));
}

// VEC.CLEAR key
void CmdVecClear(Ctx& ctx) {
  Key key = ctx.key(0);
  const Vector* v = Lookup(key);
  if (v == nullptr) return ctx.Int(0);
  const size_t n = v->size();
  key.Notify(VSL_NOTIFY_MODULE, "vec.clear");
  key.Delete();
  key.Notify(VSL_NOTIFY_GENERIC, "del");
  Len(ctx, n);
}

// ---- reading ----

// VEC.LEN key
void CmdVecLen(Ctx& ctx) {
  const Vector* v = Lookup(ctx.key(0));
  Len(ctx, v == nullptr ? 0 : v->size());
}

// VEC.INDEX key index
void CmdVecIndex(Ctx& ctx) {
  const int64_t index = ctx.IntArg(2);
  const Vector* v = Lookup(ctx.key(0));
  const int64_t pos = v == nullptr ? -1 : vsl::Position(index, v->size());
  if (pos < 0) return ctx.Null();
  ctx.Bulk(v->at(static_cast<size_t>(pos)));
}

// VEC.FRONT key
void CmdVecFront(Ctx& ctx) {
  const Vector* v = Lookup(ctx.key(0));
  if (v == nullptr) return ctx.Null();
  ctx.Bulk(v->at(0));
}

// VEC.BACK key
void CmdVecBack(Ctx& ctx) {
  const Vector* v = Lookup(ctx.key(0));
  if (v == nullptr) return ctx.Null();
  ctx.Bulk(v->at(v->size() - 1));
}

// VEC.MGET key index [index ...]
void CmdVecMGet(Ctx& ctx) {
  for (int i = 2; i < ctx.argc(); ++i) ctx.IntArg(i);  // every index, before replying
  const Vector* v = Lookup(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) {
    const int64_t pos = v == nullptr ? -1 : vsl::Position(ctx.IntArg(i), v->size());
    pos < 0 ? ctx.Null() : ctx.Bulk(v->at(static_cast<size_t>(pos)));
  }
}

// VEC.RANGE key start stop
void CmdVecRange(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), stop = ctx.IntArg(3);
  const Vector* v = Lookup(ctx.key(0));
  size_t first, last;
  if (v == nullptr || !vsl::ClampRange(start, stop, v->size(), &first, &last)) {
    return static_cast<void>(ctx.Array(0));
  }
  ctx.Array(static_cast<int64_t>(last - first));
  for (size_t i = first; i < last; ++i) ctx.Bulk(v->at(i));
}

// VEC.FIND key element [FROM index]
void CmdVecFind(Ctx& ctx) {
  int64_t from = 0;
  for (int j = 3; j < ctx.argc(); ++j) {
    if (!ctx.ArgIs(j, "FROM") || j + 1 == ctx.argc()) vsl::SyntaxError();
    from = ctx.IntArg(++j);
  }
  const Vector* v = Lookup(ctx.key(0));
  if (v == nullptr) return ctx.Int(-1);
  const int64_t len = static_cast<int64_t>(v->size());
  if (from < 0) from = std::max<int64_t>(from + len, 0);
  if (from >= len) return ctx.Int(-1);
  ctx.Int(v->Find(ctx.arg(2), static_cast<size_t>(from)));
}

// ---- changing elements in place ----

// VEC.SET key index element
void CmdVecSet(Ctx& ctx) {
  const int64_t index = ctx.IntArg(2);
  Key key = ctx.key(0);
  Vector& v = Existing(key);
  v.Set(PositionOrFail(index, v.size()), ctx.arg(3));
  CommitChange(key, "vec.set");
  ctx.Ok();
}

// VEC.MSET key index element [index element ...]
void CmdVecMSet(Ctx& ctx) {
  if (ctx.argc() % 2 != 0) vsl::FailArity(ctx);
  const size_t pairs = static_cast<size_t>(ctx.argc() - 2) / 2;
  for (size_t k = 0; k < pairs; ++k) ctx.IntArg(2 + 2 * static_cast<int>(k));
  Key key = ctx.key(0);
  Vector& v = Existing(key);
  vsl::Vec<size_t> positions(pairs);
  for (size_t k = 0; k < pairs; ++k) {
    positions[k] = PositionOrFail(ctx.IntArg(2 + 2 * static_cast<int>(k)), v.size());
  }
  v.SetEach(positions.data(), pairs,
            [&](size_t k) { return ctx.arg(3 + 2 * static_cast<int>(k)); });
  CommitChange(key, "vec.mset");
  ctx.Ok();
}

// VEC.SWAP key index1 index2
void CmdVecSwap(Ctx& ctx) {
  const int64_t i = ctx.IntArg(2), j = ctx.IntArg(3);
  Key key = ctx.key(0);
  Vector& v = Existing(key);
  v.Swap(PositionOrFail(i, v.size()), PositionOrFail(j, v.size()));
  CommitChange(key, "vec.swap");
  ctx.Ok();
}

// ---- inserting and erasing at a position ----

// VEC.INSERT key index element [element ...]
void CmdVecInsert(Ctx& ctx) {
  const int64_t index = ctx.IntArg(2);
  Key key = ctx.key(0);
  const Elems elems = ArgElems(ctx, 3);
  Len(ctx, Upsert(key, elems.n, "vec.insert", [&](Vector& v) {
        const int64_t len = static_cast<int64_t>(v.size());
        const int64_t pos = index < 0 ? index + len : index;
        if (pos < 0 || pos > len) vsl::Fail("index out of range");
        v.Insert(static_cast<size_t>(pos), elems);
      }));
}

// VEC.ERASE key index [count]
void CmdVecErase(Ctx& ctx) {
  if (ctx.argc() > 4) vsl::FailArity(ctx);
  const int64_t index = ctx.IntArg(2);
  const int64_t count = ctx.argc() == 4 ? CountArg(ctx, 3) : 1;
  Key key = ctx.key(0);
  Vector* v = Lookup(key);
  if (v == nullptr) return ctx.Int(0);
  const size_t pos = PositionOrFail(index, v->size());
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), v->size() - pos);
  if (n == 0) return ctx.Int(0);
  v->Erase(pos, n);
  CommitRemoval(key, *v, "vec.erase");
  Len(ctx, n);
}

// VEC.TRIM key start stop
void CmdVecTrim(Ctx& ctx) {
  const int64_t start = ctx.IntArg(2), stop = ctx.IntArg(3);
  Key key = ctx.key(0);
  Vector* v = Lookup(key);
  if (v == nullptr) return ctx.Ok();
  size_t first = 0, last = 0;
  vsl::ClampRange(start, stop, v->size(), &first, &last);
  v->Keep(first, last);
  CommitRemoval(key, *v, "vec.trim");  // even when nothing was trimmed, as LTRIM
  ctx.Ok();
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "vector";
constexpr char kSince[] = "1.0.0";

constexpr char kVecInsertComplexity[] =
    "O(N+M) where N is the number of elements inserted and M the number of elements after the "
    "index, which move";
constexpr char kVecEraseComplexity[] =
    "O(N+M) where N is the number of elements erased and M the number of elements after them, "
    "which move";
constexpr char kVecTrimComplexity[] =
    "O(N) where N is the length of the vector: the elements removed are freed, the ones kept move";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "VEC.PUSH", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdVecPush>, .since = kSince,
     .summary = "Append one or more elements to a vector", .syntax = "key element [element ...]",
     .complexity = "O(1) for each element added (amortized), so O(N) to add N elements."},
    {.name = "VEC.POP", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = vsl::Handler<CmdVecPop>, .since = kSince,
     .summary = "Remove and get the last elements of a vector", .syntax = "key [count]",
     .complexity = "O(N) where N is the number of elements returned"},
    {.name = "VEC.LEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdVecLen>, .since = kSince,
     .summary = "Get the number of elements in a vector", .syntax = "key", .complexity = "O(1)"},
    {.name = "VEC.INDEX", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdVecIndex>, .since = kSince,
     .summary = "Get an element of a vector by its index", .syntax = "key index",
     .complexity = "O(1)"},
    {.name = "VEC.FRONT", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdVecFront>, .since = kSince,
     .summary = "Get the first element of a vector", .syntax = "key", .complexity = "O(1)"},
    {.name = "VEC.BACK", .arity = 2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdVecBack>, .since = kSince,
     .summary = "Get the last element of a vector", .syntax = "key", .complexity = "O(1)"},
    {.name = "VEC.MGET", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdVecMGet>, .since = kSince,
     .summary = "Get the elements of a vector at several indexes",
     .syntax = "key index [index ...]", .complexity = "O(N) where N is the number of indexes"},
    {.name = "VEC.SET", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdVecSet>, .since = kSince,
     .summary = "Set the element of a vector at an index", .syntax = "key index element",
     .complexity = "O(1)"},
    {.name = "VEC.MSET", .arity = -4, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdVecMSet>, .since = kSince,
     .summary = "Set the elements of a vector at several indexes, all or none",
     .syntax = "key index element [index element ...]",
     .complexity = "O(N) where N is the number of elements set"},
    {.name = "VEC.RANGE", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdVecRange>, .since = kSince,
     .summary = "Get a range of elements of a vector", .syntax = "key start stop",
     .complexity = "O(N) where N is the number of elements returned"},
    {.name = "VEC.INSERT", .arity = -4, .flags = kWrite | kDenyOom, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdVecInsert>, .since = kSince,
     .summary = "Insert elements into a vector before an index",
     .syntax = "key index element [element ...]", .complexity = kVecInsertComplexity},
    {.name = "VEC.ERASE", .arity = -3, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdVecErase>, .since = kSince,
     .summary = "Erase elements of a vector from an index", .syntax = "key index [count]",
     .complexity = kVecEraseComplexity},
    {.name = "VEC.TRIM", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdVecTrim>, .since = kSince,
     .summary = "Trim a vector to the specified range", .syntax = "key start stop",
     .complexity = kVecTrimComplexity},
    {.name = "VEC.RESIZE", .arity = -3, .flags = kWrite | kDenyOom,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_INSERT | VSL_KS_DELETE)},
     .handler = vsl::Handler<CmdVecResize>, .since = kSince,
     .summary = "Grow or shrink a vector to a length", .syntax = "key length [fill]",
     .complexity = "O(N) where N is the number of elements added or removed"},
    {.name = "VEC.FIND", .arity = -3, .flags = kRead, .keys = {kRo},
     .handler = vsl::Handler<CmdVecFind>, .since = kSince,
     .summary = "Find the first index of an element in a vector",
     .syntax = "key element [FROM index]",
     .complexity = "O(N) where N is the number of elements searched"},
    {.name = "VEC.SWAP", .arity = 4, .flags = kWrite | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdVecSwap>, .since = kSince,
     .summary = "Exchange two elements of a vector", .syntax = "key index1 index2",
     .complexity = "O(1)"},
    {.name = "VEC.CLEAR", .arity = 2, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdVecClear>, .since = kSince,
     .summary = "Delete a vector and return how many elements it held", .syntax = "key",
     .complexity = "O(N) where N is the number of elements removed"},
};
// clang-format on

}  // namespace
}  // namespace vessel::vectors

VSL_MODULE("vectors", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::vectors;
  vsl::ModuleInit init(api, m, "vectors", nargs, err, errlen);
  init.Type(g_vector_type, "vector", kEncodingVersion, "vslvector");
  init.Commands(kCommands, kGroup);
  return init.result();
}
