// The multi_index module: a key holds records (field -> value) with declared indexes, hashed or
// ordered, unique or not, kept consistent by every command (value type "multi_index", in the
// spirit of boost::multi_index_container: no hand-maintained hash plus sorted sets).
//
// Commands (a record is replied as a 2-element array [id, fields], fields a map in RESP3 and a
// flat field/value array in RESP2, fields in the order they were first set):
//   MI.CREATE key INDEX name field HASH|ORDERED [UNIQUE] [NUMERIC] [INDEX ...]
//       Creates an empty collection with this schema. +OK; -BUSYKEY when the key exists.
//   MI.INSERT key field value [field value ...]
//       Adds a record; replies its id. -UNIQUE when it would duplicate a unique index value,
//       -ERR when a NUMERIC indexed field is not a number, -ERR no such key; nothing changes.
//   MI.GET key index value              Every record whose index field equals value.
//   MI.GETBYID key id                   The record's fields (map / flat array), or nil.
//   MI.RANGE key index min max [LIMIT offset count] [REV]
//       Records of an ORDERED index within [min, max], in index order (REV: reversed).
//   MI.COUNT key index min max          How many records MI.RANGE would return without LIMIT.
//   MI.UPDATE key index value field value [field value ...]
//       Sets the fields in every record matching index=value; replies how many matched.
//   MI.UPDATEBYID key id field value [field value ...]   The same for one record: 1 or 0.
//   MI.DEL key index value              Deletes the matching records; replies how many.
//   MI.DELBYID key id [id ...]          Deletes records by id; replies how many existed.
//   MI.CARD key                         The number of records.
//   MI.SCHEMA key                       The indexes: [{name, field, kind, unique, numeric}],
//                                       kind "hash" or "ordered", unique/numeric booleans.
//
// Design decisions:
//   - Schema: 1 to 64 indexes with distinct names (case-sensitive); two indexes may share a
//     field. NUMERIC is only allowed with ORDERED (a NUMERIC ORDERED index also answers MI.GET,
//     by numeric equality). Keywords are case-insensitive, UNIQUE/NUMERIC in any order.
//   - Values: ORDERED indexes compare bytes (memcmp, as ZRANGEBYLEX) or, NUMERIC, doubles (as
//     ZADD scores: "1", "1.0" and "1e0" are one value for UNIQUE and MI.GET; NaN is refused).
//   - A record without an index's field is simply not in that index: MI.GET/MI.RANGE through it
//     never return the record, and UNIQUE does not constrain it.
//   - Ids count from 1 per key and are never reused (a refused MI.INSERT does not use one);
//     MI.GET/MI.UPDATE/MI.DEL visit matches by ascending id; ties in an ORDERED index are
//     ordered by id (REV reverses both).
//   - Range bounds: numeric as ZRANGEBYSCORE (`(` exclusive, -inf, +inf); lexicographic as
//     ZRANGEBYLEX (`[v` inclusive, `(v` exclusive, `-` and `+` the open ends) and, in addition,
//     a bare `v` is inclusive. min and max keep their order with REV (unlike ZRANGE ... REV).
//     LIMIT as ZRANGEBYSCORE: a negative count means all, a negative offset returns nothing.
//   - One MI.UPDATE rebuilds at most proto-max-bulk-len bytes of records ("ERR update exceeds
//     maximum allowed size (proto-max-bulk-len)") and, under maxmemory, only what fits after
//     eviction (Redis's OOM error).
//   - Atomicity: a command that fails changes nothing. MI.UPDATE checks NUMERIC and UNIQUE for
//     every matching record before changing any (setting a UNIQUE field of 2+ records to one
//     value is a violation), and even an allocation failure midway rolls back.
//   - Repeated fields in one MI.INSERT/MI.UPDATE: the last value wins (HSET's rule).
//   - A collection left with no records keeps its key and schema (unlike Redis's containers,
//     which vanish when empty): the schema is state, and MI.INSERT needs it. DEL removes it.
//   - A missing key reads as empty (MI.GET/MI.RANGE: empty array, MI.COUNT/MI.CARD: 0,
//     MI.GETBYID/MI.SCHEMA: nil, MI.UPDATE/MI.DEL/MI.DELBYID: 0), without checking the index
//     name; MI.INSERT fails with "ERR no such key". MI.CREATE on any existing key, whatever its
//     type, is "-BUSYKEY Target key name already exists." (RESTORE's error).
//   - Errors: "-UNIQUE value already in unique index 'i' (record 7)", "-UNIQUE 3 records would
//     share one value of unique index 'i'", "-ERR no such index 'i'", "-ERR index 'i' is not
//     ORDERED", "-ERR value of field 'f' is not a valid float (NUMERIC index 'i')", "-ERR value is
//     not a valid float" (MI.GET on NUMERIC), "-ERR min or max is not a float", schema errors.
//   - Keyspace events (class d): mi.create, and mi.insert / mi.update / mi.del when a record
//     changed; a refused command fires nothing.
//   - OBJECT ENCODING is "hashtable+btree"; MEMORY USAGE is exact (every allocation is counted);
//     COPY is deep; serialize writes the schema and records, deserialize rebuilds the indexes.
#include <algorithm>
#include <cctype>
#include <string>

#include "multi_index_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::multi_index {
namespace {

using vsl::Ctx;
using vsl::Key;

vsl::Type<MultiIndex> g_type;

// ---- shared pieces ----

MultiIndex* Lookup(const Key& key) { return key.Get(g_type); }

// The field/value pairs from argument `first` on, distinct (the last value wins).
Vec<FieldValue> FieldArgs(const Ctx& ctx, int first) {
  if ((ctx.argc() - first) % 2 != 0) vsl::FailArity(ctx);
  Vec<FieldValue> pairs;
  pairs.reserve(static_cast<size_t>(ctx.argc() - first) / 2);
  for (int i = first; i < ctx.argc(); i += 2) pairs.push_back({ctx.arg(i), ctx.arg(i + 1)});
  return DistinctFields(pairs);
}

const Index& IndexArg(const MultiIndex& mi, std::string_view name) {
  const Index* ix = mi.FindIndex(name);
  if (ix == nullptr) vsl::Fail("no such index '" + std::string(name) + "'");
  return *ix;
}

const Index& OrderedIndexArg(const MultiIndex& mi, std::string_view name) {
  const Index& ix = IndexArg(mi, name);
  if (ix.kind() != Kind::kOrdered) vsl::Fail("index '" + std::string(name) + "' is not ORDERED");
  return ix;
}

// The ids of the records whose index field equals value, ascending.
Vec<Id> Matches(const Index& ix, std::string_view value) {
  IndexKey k;
  if (!ix.MakeKey(value, &k)) vsl::NotFloat();
  Vec<Id> ids;
  ix.Equal(k, [&](Id id) {
    ids.push_back(id);
    return true;
  });
  return ids;
}

// An id argument; 0 (no record) for a well-formed integer that cannot be an id.
Id IdArg(const Ctx& ctx, int i) {
  const int64_t id = ctx.IntArg(i);
  return id > 0 ? static_cast<Id>(id) : 0;
}

void ReplyFields(Ctx& ctx, RecordRef r) {
  ctx.Map(r.field_count());
  r.ForEach([&](std::string_view f, std::string_view v) {
    ctx.Bulk(f);
    ctx.Bulk(v);
  });
}

void ReplyRecords(Ctx& ctx, const MultiIndex& mi, std::span<const Id> ids) {
  ctx.Array(static_cast<int64_t>(ids.size()));
  for (Id id : ids) {
    ctx.Array(2);
    ctx.Int(static_cast<int64_t>(id));
    ReplyFields(ctx, mi.Get(id));
  }
}

// After a change in place: WATCH and the key's version see it (an empty collection stays), and
// the keyspace event `event` (class d, VSL_NOTIFY_MODULE) fires.
void Commit(Key& key, const char* event) {
  key.Modified();
  key.Notify(VSL_NOTIFY_MODULE, event);
}

// ---- MI.CREATE ----

// The INDEX clauses from argument `first` on.
Vec<IndexDef> SchemaArgs(const Ctx& ctx, int first) {
  Vec<IndexDef> defs;
  for (int i = first; i < ctx.argc();) {
    if (!ctx.ArgIs(i, "INDEX") || i + 3 >= ctx.argc()) vsl::SyntaxError();
    IndexDef d{ctx.arg(i + 1), ctx.arg(i + 2)};
    if (ctx.ArgIs(i + 3, "HASH")) {
      d.kind = Kind::kHash;
    } else if (ctx.ArgIs(i + 3, "ORDERED")) {
      d.kind = Kind::kOrdered;
    } else {
      vsl::Fail("index kind must be HASH or ORDERED");
    }
    for (i += 4; i < ctx.argc() && !ctx.ArgIs(i, "INDEX"); ++i) {
      if (ctx.ArgIs(i, "UNIQUE") && !d.unique) {
        d.unique = true;
      } else if (ctx.ArgIs(i, "NUMERIC") && !d.numeric) {
        d.numeric = true;
      } else {
        vsl::SyntaxError();
      }
    }
    defs.push_back(d);
  }
  return defs;
}

// MI.CREATE key INDEX name field HASH|ORDERED [UNIQUE] [NUMERIC] [INDEX ...]
void CmdCreate(Ctx& ctx) {
  const Vec<IndexDef> defs = SchemaArgs(ctx, 2);
  if (const std::string error = CheckSchema(defs); !error.empty()) vsl::Fail(error);
  Key key = ctx.key(0);
  if (key.Exists()) throw vsl::Error{"BUSYKEY", "Target key name already exists."};
  key.Set(g_type, vsl::New<MultiIndex>(defs));
  key.Notify(VSL_NOTIFY_MODULE, "mi.create");
  ctx.Ok();
}

// ---- records ----

// MI.INSERT key field value [field value ...]
void CmdInsert(Ctx& ctx) {
  const Vec<FieldValue> fields = FieldArgs(ctx, 2);
  Key key = ctx.key(0);
  MultiIndex* mi = Lookup(key);
  if (mi == nullptr) vsl::Fail("no such key");
  const Id id = mi->OpInsert(fields);
  Commit(key, "mi.insert");
  ctx.Int(static_cast<int64_t>(id));
}

// MI.GET key index value
void CmdGet(Ctx& ctx) {
  const MultiIndex* mi = Lookup(ctx.key(0));
  if (mi == nullptr) return static_cast<void>(ctx.Array(0));
  const Vec<Id> ids = Matches(IndexArg(*mi, ctx.arg(2)), ctx.arg(3));
  ReplyRecords(ctx, *mi, ids);
}

// MI.GETBYID key id
void CmdGetById(Ctx& ctx) {
  const Id id = IdArg(ctx, 2);
  const MultiIndex* mi = Lookup(ctx.key(0));
  const RecordRef r = mi != nullptr ? mi->Get(id) : RecordRef();
  if (!r) return ctx.Null();
  ReplyFields(ctx, r);
}

// The body of MI.UPDATE and MI.UPDATEBYID: `find` gives the ids to update.
template <class Find>
void Update(Ctx& ctx, int first_field, Find find) {
  const Vec<FieldValue> changes = FieldArgs(ctx, first_field);
  Key key = ctx.key(0);
  MultiIndex* mi = Lookup(key);
  if (mi == nullptr) return ctx.Int(0);
  const Vec<Id> ids = find(*mi);
  // Every matching record is rebuilt with the new values before the old ones go: the bytes follow
  // the number of matches, not what the client sent, so they are checked first.
  uint64_t added = 0;
  for (const FieldValue& c : changes) added += 8 + c.field.size() + c.value.size();
  uint64_t bytes = 0;
  for (Id id : ids) bytes += 8 + mi->Get(id).payload_bytes() + added;
  ctx.CheckGrowth(bytes, "update");
  mi->OpUpdate(ids, changes);
  if (!ids.empty()) Commit(key, "mi.update");
  ctx.Int(static_cast<int64_t>(ids.size()));
}

// MI.UPDATE key index value field value [field value ...]
void CmdUpdate(Ctx& ctx) {
  Update(ctx, 4,
         [&](const MultiIndex& mi) { return Matches(IndexArg(mi, ctx.arg(2)), ctx.arg(3)); });
}

// MI.UPDATEBYID key id field value [field value ...]
void CmdUpdateById(Ctx& ctx) {
  const Id id = IdArg(ctx, 2);
  Update(ctx, 3, [&](const MultiIndex& mi) {
    Vec<Id> ids;
    if (mi.Get(id)) ids.push_back(id);
    return ids;
  });
}

// The body of MI.DEL and MI.DELBYID: deletes the records `ids` (existing, distinct).
void Delete(Ctx& ctx, Key& key, MultiIndex& mi, const Vec<Id>& ids) {
  mi.OpDelete(ids);
  if (!ids.empty()) Commit(key, "mi.del");
  ctx.Int(static_cast<int64_t>(ids.size()));
}

// MI.DEL key index value
void CmdDel(Ctx& ctx) {
  Key key = ctx.key(0);
  MultiIndex* mi = Lookup(key);
  if (mi == nullptr) return ctx.Int(0);
  Delete(ctx, key, *mi, Matches(IndexArg(*mi, ctx.arg(2)), ctx.arg(3)));
}

// MI.DELBYID key id [id ...]
void CmdDelById(Ctx& ctx) {
  Vec<Id> ids;
  for (int i = 2; i < ctx.argc(); ++i) ids.push_back(IdArg(ctx, i));
  Key key = ctx.key(0);
  MultiIndex* mi = Lookup(key);
  if (mi == nullptr) return ctx.Int(0);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::erase_if(ids, [&](Id id) { return !mi->Get(id); });
  Delete(ctx, key, *mi, ids);
}

// MI.CARD key
void CmdCard(Ctx& ctx) {
  const MultiIndex* mi = Lookup(ctx.key(0));
  ctx.Int(mi == nullptr ? 0 : static_cast<int64_t>(mi->size()));
}

// MI.SCHEMA key
void CmdSchema(Ctx& ctx) {
  const MultiIndex* mi = Lookup(ctx.key(0));
  if (mi == nullptr) return ctx.NullArray();
  ctx.Array(static_cast<int64_t>(mi->indexes().size()));
  for (const Index& ix : mi->indexes()) {
    ctx.Map(5);
    ctx.Bulk("name");
    ctx.Bulk(ix.name());
    ctx.Bulk("field");
    ctx.Bulk(ix.field());
    ctx.Bulk("kind");
    ctx.Bulk(ix.kind() == Kind::kHash ? "hash" : "ordered");
    ctx.Bulk("unique");
    ctx.Bool(ix.unique());
    ctx.Bulk("numeric");
    ctx.Bool(ix.numeric());
  }
}

// ---- ranges ----

// A range end: numeric as ZRANGEBYSCORE, lexicographic as ZRANGEBYLEX plus bare inclusive values.
Bound BoundArg(const Index& ix, std::string_view s) {
  Bound b;
  if (ix.numeric()) {
    if (!s.empty() && s[0] == '(') {
      b.exclusive = true;
      s.remove_prefix(1);
    }
    if (!vsl::ParseDouble(s, &b.key.d)) vsl::Fail("min or max is not a float");
    return b;
  }
  if (s == "-") {
    b.open = Bound::Open::kMin;
  } else if (s == "+") {
    b.open = Bound::Open::kMax;
  } else if (!s.empty() && (s[0] == '(' || s[0] == '[')) {
    b.exclusive = s[0] == '(';
    b.key.s = s.substr(1);
  } else {
    b.key.s = s;
  }
  return b;
}

struct RangeArgs {
  const Index* index = nullptr;
  Bound lo, hi;
};

// The index and bounds of MI.RANGE and MI.COUNT.
RangeArgs ParseRange(const Ctx& ctx, const MultiIndex& mi) {
  RangeArgs a;
  a.index = &OrderedIndexArg(mi, ctx.arg(2));
  a.lo = BoundArg(*a.index, ctx.arg(3));
  a.hi = BoundArg(*a.index, ctx.arg(4));
  return a;
}

// MI.RANGE key index min max [LIMIT offset count] [REV]
void CmdRange(Ctx& ctx) {
  int64_t offset = 0, count = -1;
  bool rev = false;
  for (int i = 5; i < ctx.argc(); ++i) {
    if (ctx.ArgIs(i, "LIMIT") && i + 2 < ctx.argc()) {
      offset = ctx.IntArg(i + 1);
      count = ctx.IntArg(i + 2);
      i += 2;
    } else if (ctx.ArgIs(i, "REV")) {
      rev = true;
    } else {
      vsl::SyntaxError();
    }
  }
  const MultiIndex* mi = Lookup(ctx.key(0));
  if (mi == nullptr) return static_cast<void>(ctx.Array(0));
  const RangeArgs a = ParseRange(ctx, *mi);
  Vec<Id> ids;
  if (offset >= 0 && count != 0) {
    a.index->Range(a.lo, a.hi, rev, [&](Id id) {
      if (offset > 0) return --offset, true;
      ids.push_back(id);
      return count < 0 || static_cast<int64_t>(ids.size()) < count;
    });
  }
  ReplyRecords(ctx, *mi, ids);
}

// MI.COUNT key index min max
void CmdCount(Ctx& ctx) {
  const MultiIndex* mi = Lookup(ctx.key(0));
  if (mi == nullptr) return ctx.Int(0);
  const RangeArgs a = ParseRange(ctx, *mi);
  int64_t n = 0;
  a.index->Range(a.lo, a.hi, false, [&](Id) { return ++n, true; });
  ctx.Int(n);
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kGroup[] = "module";
constexpr char kSince[] = "1.0.0";

constexpr char kCreateSyntax[] =
    "key INDEX name field HASH|ORDERED [UNIQUE] [NUMERIC] [INDEX name field HASH|ORDERED [UNIQUE] "
    "[NUMERIC] ...]";
constexpr char kInsertComplexity[] =
    "O(F + I*log(N)) where F is the number of fields, I the number of indexes and N the number of "
    "records.";
constexpr char kUpdateSummary[] =
    "Set fields in every record whose indexed field equals a value, re-indexing atomically";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "MI.CREATE", .arity = -6, .flags = kWrite | kDenyOom, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdCreate>, .since = kSince,
     .summary = "Create an empty multi-index collection with a schema of indexes",
     .syntax = kCreateSyntax, .complexity = "O(I) where I is the number of indexes."},
    {.name = "MI.INSERT", .arity = -4, .flags = kWrite | kDenyOom, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdInsert>, .since = kSince,
     .summary = "Add a record and index it; returns its id",
     .syntax = "key field value [field value ...]", .complexity = kInsertComplexity},
    {.name = "MI.GET", .arity = 4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGet>, .since = kSince,
     .summary = "Get the records whose indexed field equals a value", .syntax = "key index value",
     .complexity = "O(log(N) + M) where M is the number of records returned."},
    {.name = "MI.GETBYID", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGetById>, .since = kSince,
     .summary = "Get the fields of a record by id", .syntax = "key id",
     .complexity = "O(F) where F is the number of fields of the record."},
    {.name = "MI.RANGE", .arity = -5, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdRange>, .since = kSince,
     .summary = "Get the records of an ORDERED index within a range",
     .syntax = "key index min max [LIMIT offset count] [REV]",
     .complexity = "O(log(N) + offset + M) where M is the number of records returned."},
    {.name = "MI.COUNT", .arity = 5, .flags = kRead, .keys = {kRo},
     .handler = vsl::Handler<CmdCount>, .since = kSince,
     .summary = "Count the records of an ORDERED index within a range",
     .syntax = "key index min max",
     .complexity = "O(log(N) + M) where M is the number of records in the range."},
    {.name = "MI.UPDATE", .arity = -6, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdUpdate>, .since = kSince,
     .summary = kUpdateSummary,
     .syntax = "key index value field value [field value ...]",
     .complexity = "O(M*(F + I*log(N))) where M is the number of matching records."},
    {.name = "MI.UPDATEBYID", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdUpdateById>, .since = kSince,
     .summary = "Set fields in a record by id, re-indexing atomically",
     .syntax = "key id field value [field value ...]", .complexity = "O(F + I*log(N))"},
    {.name = "MI.DEL", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdDel>, .since = kSince,
     .summary = "Delete the records whose indexed field equals a value",
     .syntax = "key index value",
     .complexity = "O(M*I*log(N)) where M is the number of records deleted."},
    {.name = "MI.DELBYID", .arity = -3, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdDelById>, .since = kSince,
     .summary = "Delete records by id", .syntax = "key id [id ...]",
     .complexity = "O(M*I*log(N)) where M is the number of ids."},
    {.name = "MI.CARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdCard>, .since = kSince, .summary = "Get the number of records",
     .syntax = "key", .complexity = "O(1)"},
    {.name = "MI.SCHEMA", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdSchema>, .since = kSince,
     .summary = "Get the indexes of a collection", .syntax = "key",
     .complexity = "O(I) where I is the number of indexes."},
};
// clang-format on

}  // namespace
}  // namespace vessel::multi_index

VSL_MODULE("multi_index", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::multi_index;
  vsl::ModuleInit init(api, m, "multi_index", nargs, err, errlen);
  init.Type(g_type, "multi_index", 1, "vslmultix");
  init.Commands(kCommands, kGroup);
  return init.result();
}
