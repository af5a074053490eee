// The streams module: Redis 7.0's stream family as a Vessel module (value type "stream",
// OBJECT ENCODING "stream", ACL category @stream).
//
// This file: the value's entries (XADD XRANGE XREVRANGE XLEN XDEL XTRIM XSETID), the helpers the
// other command files share, and the module's entry point. Consumer groups are in
// streams_group.cc, XREAD and XREADGROUP in streams_read.cc. Replies, errors and edge cases are
// Redis 7.0's (redis-server is the reference the tests compare against).
//
// Deliberate differences from Redis:
//   - XINFO STREAM's radix-tree-nodes counts the index's blocks twice plus one (Redis counts the
//     nodes of its radix tree, which this index does not have); radix-tree-keys, the number of
//     blocks, is Redis's number of nodes.
//   - An XADD or XTRIM with "~" and LIMIT is recorded in the append-only file as Redis rewrites
//     it ("=" and the resulting threshold), without the LIMIT (which the replay would refuse
//     without "~").
#include "streams.h"

#include <algorithm>
#include <string>
#include <vector>

#include "streams_docs.h"

namespace vessel::streams {

using vsl::Ctx;
using vsl::Key;

// ---- shared helpers (streams.h) ----

StreamId IdArg(const Ctx& ctx, int i, uint64_t missing_seq) {
  StreamId id;
  if (!ParseStreamId(ctx.arg(i), &id, missing_seq, false)) vsl::Fail(kInvalidId);
  return id;
}

StreamId StrictIdArg(const Ctx& ctx, int i) {
  StreamId id;
  if (!ParseStreamId(ctx.arg(i), &id, 0, true)) vsl::Fail(kInvalidId);
  return id;
}

namespace {

// An interval bound: "(" + a strict ID is exclusive.
StreamId IntervalArg(const Ctx& ctx, int i, uint64_t missing_seq, bool* exclusive) {
  std::string_view s = ctx.arg(i);
  *exclusive = s.size() > 1 && s[0] == '(';
  StreamId id;
  const bool ok = *exclusive ? ParseStreamId(s.substr(1), &id, missing_seq, true)
                             : ParseStreamId(s, &id, missing_seq, false);
  if (!ok) vsl::Fail(kInvalidId);
  return id;
}

}  // namespace

StreamId RangeStartArg(const Ctx& ctx, int i) {
  bool exclusive;
  StreamId id = IntervalArg(ctx, i, 0, &exclusive);
  if (exclusive && !id.Incr()) vsl::Fail("invalid start ID for the interval");
  return id;
}

StreamId RangeEndArg(const Ctx& ctx, int i) {
  bool exclusive;
  StreamId id = IntervalArg(ctx, i, UINT64_MAX, &exclusive);
  if (exclusive && !id.Decr()) vsl::Fail("invalid end ID for the interval");
  return id;
}

int64_t LongArg(const Ctx& ctx, int i, const char* msg) {
  return msg == nullptr ? ctx.IntArg(i) : vsl::IntArgInRange(ctx, i, INT64_MIN, INT64_MAX, msg);
}

void ReplyEntry(Ctx& ctx, EntryLog::Cursor& c) {
  ctx.Array(2);
  ReplyId(ctx, c.id());
  const uint32_t pairs = c.pairs();
  ctx.Array(int64_t{pairs} * 2);
  for (uint32_t i = 0; i < pairs; ++i) {
    std::string_view f, v;
    c.NextPair(&f, &v);
    ctx.Bulk(f);
    ctx.Bulk(v);
  }
}

size_t ReplyRange(Ctx& ctx, const Stream& s, StreamId start, StreamId end, uint64_t count,
                  bool rev) {
  const vsl_agg agg = ctx.DeferredArray();
  size_t n = 0;
  EntryLog::Cursor c(s.log, start, end, rev);
  while ((count == 0 || n < count) && c.Next()) {
    ReplyEntry(ctx, c);
    ++n;
  }
  ctx.SetLen(agg, static_cast<int64_t>(n));
  return n;
}

bool ReplyOneEntry(Ctx& ctx, const Stream& s, StreamId id) {
  EntryLog::Cursor c(s.log, id, id, false);
  if (!c.Next()) return false;
  ReplyEntry(ctx, c);
  return true;
}

BlockLimits Limits(const Ctx& ctx) {
  const int64_t bytes = ctx.Setting("stream-node-max-bytes", 4096);
  const int64_t entries = ctx.Setting("stream-node-max-entries", 100);
  return {static_cast<uint64_t>(std::max<int64_t>(bytes, 0)), std::max<int64_t>(entries, 0)};
}

namespace {

// ---- XADD and XTRIM arguments (Redis's streamParseAddOrTrimArgsOrReply) ----

// A one-character C-string argument: Redis compares the bytes before a NUL.
bool Is(std::string_view s, char c) {
  return !s.empty() && s[0] == c && (s.size() == 1 || s[1] == '\0');
}

struct AddTrimArgs {
  enum class Strategy { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  bool approx = false;
  int64_t limit = 0;
  int64_t maxlen = 0;
  StreamId minid;
  int threshold_at = 0;  // the argument holding the MAXLEN / MINID threshold
  int limit_at = 0;      // the LIMIT keyword, 0 when absent
  // XADD only.
  bool nomkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

// Parses the options; for XADD returns the position of the ID argument.
int ParseAddOrTrim(const Ctx& ctx, AddTrimArgs* a, bool xadd) {
  using S = AddTrimArgs::Strategy;
  bool limit_given = false;
  int i = 2;
  for (; i < ctx.argc(); ++i) {
    const int more = ctx.argc() - 1 - i;
    const std::string_view opt = ctx.arg(i);
    const bool maxlen = ctx.ArgIs(i, "maxlen"), minid = ctx.ArgIs(i, "minid");
    if (xadd && Is(opt, '*')) break;
    if ((maxlen || minid) && more > 0) {
      if (a->strategy != S::kNone)
        vsl::Fail("syntax error, MAXLEN and MINID options at the same time are not compatible");
      a->approx = false;
      const std::string_view next = ctx.arg(i + 1);
      if (more >= 2 && Is(next, '~')) {
        a->approx = true;
        ++i;
      } else if (more >= 2 && Is(next, '=')) {
        ++i;
      }
      if (maxlen) {
        a->maxlen = LongArg(ctx, i + 1);
        if (a->maxlen < 0) vsl::Fail("The MAXLEN argument must be >= 0.");
      } else {
        a->minid = StrictIdArg(ctx, i + 1);
      }
      ++i;
      a->strategy = maxlen ? S::kMaxLen : S::kMinId;
      a->threshold_at = i;
    } else if (ctx.ArgIs(i, "limit") && more > 0) {
      a->limit = LongArg(ctx, i + 1);
      if (a->limit < 0) vsl::Fail("The LIMIT argument must be >= 0.");
      limit_given = true;
      a->limit_at = i;
      ++i;
    } else if (xadd && ctx.ArgIs(i, "nomkstream")) {
      a->nomkstream = true;
    } else if (xadd) {
      IdForm form;
      if (!ParseStreamId(opt, &a->id, 0, true, &form, true)) vsl::Fail(kInvalidId);
      a->seq_given = form != IdForm::kAutoSeq;
      a->id_given = true;
      break;
    } else {
      vsl::SyntaxError();
    }
  }
  if (a->limit != 0 && a->strategy == S::kNone)
    vsl::Fail("syntax error, LIMIT cannot be used without specifying a trimming strategy");
  if (!xadd && a->strategy == S::kNone)
    vsl::Fail("syntax error, XTRIM must be called with a trimming strategy");
  if (limit_given) {
    if (!a->approx) vsl::Fail("syntax error, LIMIT cannot be used without the special ~ option");
  } else if (a->approx) {
    // Redis bounds the work of "~" to 100 nodes unless told otherwise.
    a->limit = 100 * Limits(ctx).max_entries;
    if (a->limit <= 0) a->limit = 10000;
    if (a->limit > 1000000) a->limit = 1000000;
  } else {
    a->limit = 0;
  }
  return i;
}

// Trims as the arguments say; returns how many entries went.
int64_t ApplyTrim(Stream& s, const AddTrimArgs& a) {
  const int64_t n = a.strategy == AddTrimArgs::Strategy::kMaxLen
                        ? s.log.TrimMaxLen(static_cast<uint64_t>(a.maxlen), a.approx, a.limit)
                        : s.log.TrimMinId(a.minid, a.approx, a.limit);
  if (n != 0 || s.length() == 0) s.RefreshFirstId();
  return n;
}

// The command as replicas and the append-only file must replay it: "~ <threshold>" becomes
// "= <what the stream now is>" (the length, or the first entry's ID tombstones included), the
// generated ID replaces "*" / "<ms>-*", and LIMIT goes (the replay trims exactly).
void PropagateAddOrTrim(Ctx& ctx, const Stream& s, const AddTrimArgs& a, int id_at,
                        StreamId added) {
  std::vector<std::string> argv;
  argv.reserve(static_cast<size_t>(ctx.argc()));
  for (int i = 0; i < ctx.argc(); ++i) {
    if (a.limit_at != 0 && a.approx && (i == a.limit_at || i == a.limit_at + 1)) continue;
    if (a.approx && i == a.threshold_at - 1) {
      argv.emplace_back("=");
    } else if (a.approx && i == a.threshold_at) {
      if (a.strategy == AddTrimArgs::Strategy::kMaxLen) {
        argv.push_back(std::to_string(s.length()));
      } else {
        StreamId first = StreamId::Max();
        s.log.First(false, &first);
        argv.push_back(first.ToString());
      }
    } else if (i == id_at && !(a.id_given && a.seq_given)) {
      argv.push_back(added.ToString());
    } else {
      argv.emplace_back(ctx.arg(i));
    }
  }
  std::vector<std::string_view> views(argv.begin(), argv.end());
  ctx.Propagate(views);
}

// The ID a new entry gets (streamAppendItem's choice); fails as Redis does.
StreamId NextId(const Ctx& ctx, const Stream& s, const AddTrimArgs& a) {
  StreamId id;
  if (a.id_given && a.seq_given) {
    id = a.id;
  } else if (a.id_given) {  // <ms>-*: the next sequence of that millisecond
    if (s.last_id.ms == a.id.ms) {
      if (s.last_id.seq == UINT64_MAX) vsl::Fail("Elements are too large to be stored");
      id = {s.last_id.ms, s.last_id.seq + 1};
    } else {
      id = a.id;
    }
  } else {
    const auto now = static_cast<uint64_t>(ctx.now_ms());
    id = s.last_id;
    if (now > id.ms) {
      id = {now, 0};
    } else {
      id.Incr();
    }
  }
  if (id <= s.last_id)
    vsl::Fail("The ID specified in XADD is equal or smaller than the target stream top item");
  return id;
}

// ---- commands ----

// XADD key [NOMKSTREAM] [MAXLEN | MINID [= | ~] threshold [LIMIT count]] * | id field value
// [field value ...]
void CmdXAdd(Ctx& ctx) {
  AddTrimArgs a;
  const int id_at = ParseAddOrTrim(ctx, &a, true);
  const int fields_at = id_at + 1;
  if (ctx.argc() - fields_at < 2 || (ctx.argc() - fields_at) % 2 == 1) vsl::FailArity(ctx);
  if (a.id_given && a.seq_given && a.id.zero())
    vsl::Fail("The ID specified in XADD must be greater than 0-0");
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  StreamPtr created;
  if (s == nullptr) {
    if (a.nomkstream) return ctx.Null();
    created.reset(vsl::New<Stream>());
    s = created.get();
  }
  if (s->last_id == StreamId::Max())
    vsl::Fail("The stream has exhausted the last possible ID, unable to add more items");
  const StreamId id = NextId(ctx, *s, a);
  std::vector<std::string_view> pairs;
  pairs.reserve(static_cast<size_t>(ctx.argc() - fields_at));
  uint64_t total = 0;
  for (int i = fields_at; i < ctx.argc(); ++i) {
    pairs.push_back(ctx.arg(i));
    total += pairs.back().size();
  }
  if (total > kMaxNodeBytes) {
    if (created != nullptr) key.Set(g_stream_type, created.release());  // as Redis: it stays
    vsl::Fail("Elements are too large to be stored");
  }
  s->log.Append(id, pairs, Limits(ctx));
  s->last_id = id;
  ++s->entries_added;
  if (s->length() == 1) s->first_id = id;
  ReplyId(ctx, id);
  if (created != nullptr) {
    key.Set(g_stream_type, created.release());
  } else {
    key.Modified();
  }
  key.Notify(VSL_NOTIFY_STREAM, "xadd");
  if (a.strategy != AddTrimArgs::Strategy::kNone && ApplyTrim(*s, a) != 0)
    key.Notify(VSL_NOTIFY_STREAM, "xtrim");
  if (a.approx || !(a.id_given && a.seq_given)) PropagateAddOrTrim(ctx, *s, a, id_at, id);
}

// The body of XRANGE and XREVRANGE (Redis's xrangeGenericCommand).
void RangeGeneric(Ctx& ctx, bool rev) {
  const StreamId start = RangeStartArg(ctx, rev ? 3 : 2);
  const StreamId end = RangeEndArg(ctx, rev ? 2 : 3);
  int64_t count = -1;
  for (int j = 4; j < ctx.argc(); ++j) {
    if (ctx.ArgIs(j, "count") && j + 1 < ctx.argc()) {
      count = std::max<int64_t>(LongArg(ctx, ++j), 0);
    } else {
      vsl::SyntaxError();
    }
  }
  const Stream* s = Lookup(ctx.key(0));
  if (s == nullptr) return static_cast<void>(ctx.Array(0));
  if (count == 0) return ctx.NullArray();
  ReplyRange(ctx, *s, start, end, count == -1 ? 0 : static_cast<uint64_t>(count), rev);
}

// XRANGE key start end [COUNT count]
void CmdXRange(Ctx& ctx) { RangeGeneric(ctx, false); }

// XREVRANGE key end start [COUNT count]
void CmdXRevRange(Ctx& ctx) { RangeGeneric(ctx, true); }

// XLEN key
void CmdXLen(Ctx& ctx) {
  const Stream* s = Lookup(ctx.key(0));
  ctx.Int(s == nullptr ? 0 : static_cast<int64_t>(s->length()));
}

// XDEL key id [id ...]
void CmdXDel(Ctx& ctx) {
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  if (s == nullptr) return ctx.Int(0);
  std::vector<StreamId> ids;
  ids.reserve(static_cast<size_t>(ctx.argc() - 2));
  for (int i = 2; i < ctx.argc(); ++i) ids.push_back(StrictIdArg(ctx, i));  // all or nothing
  int64_t deleted = 0;
  bool first = false;
  for (StreamId id : ids) {
    if (!s->log.Delete(id)) continue;
    first |= id == s->first_id;
    s->max_deleted = std::max(s->max_deleted, id);
    ++deleted;
  }
  if (deleted != 0) {
    if (s->length() == 0 || first) s->RefreshFirstId();
    key.Modified();
    key.Notify(VSL_NOTIFY_STREAM, "xdel");
    ctx.AddChanges(static_cast<uint64_t>(deleted));
  }
  ctx.Int(deleted);
}

// XTRIM key MAXLEN | MINID [= | ~] threshold [LIMIT count]
void CmdXTrim(Ctx& ctx) {
  AddTrimArgs a;
  ParseAddOrTrim(ctx, &a, false);
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  if (s == nullptr) return ctx.Int(0);
  const int64_t deleted = ApplyTrim(*s, a);
  if (deleted != 0) {
    key.Notify(VSL_NOTIFY_STREAM, "xtrim");
    if (a.approx) PropagateAddOrTrim(ctx, *s, a, -1, {});
    key.Modified();
    ctx.AddChanges(static_cast<uint64_t>(deleted));
  }
  ctx.Int(deleted);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void CmdXSetId(Ctx& ctx) {
  const StreamId id = StrictIdArg(ctx, 2);
  int64_t entries_added = -1;
  StreamId max_deleted;
  for (int i = 3; i < ctx.argc(); i += 2) {
    const bool more = i + 1 < ctx.argc();
    if (ctx.ArgIs(i, "entriesadded") && more) {
      entries_added = LongArg(ctx, i + 1);
      if (entries_added < 0) vsl::Fail("entries_added must be positive");
    } else if (ctx.ArgIs(i, "maxdeletedid") && more) {
      max_deleted = StrictIdArg(ctx, i + 1);
      if (id < max_deleted)
        vsl::Fail("The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
    } else {
      vsl::SyntaxError();
    }
  }
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  if (s == nullptr) vsl::Fail("no such key");
  if (s->length() > 0) {
    if (id < s->LastValidId())
      vsl::Fail("The ID specified in XSETID is smaller than the target stream top item");
    if (entries_added != -1 && s->length() > static_cast<uint64_t>(entries_added))
      vsl::Fail("The entries_added specified in XSETID is smaller than the target stream length");
  }
  s->last_id = id;
  if (entries_added != -1) s->entries_added = static_cast<uint64_t>(entries_added);
  if (!max_deleted.zero()) s->max_deleted = max_deleted;
  ctx.AddChanges(1);  // not a change WATCH or tracking see: Redis 7.0 does not signal the key
  key.Notify(VSL_NOTIFY_STREAM, "xsetid");
  ctx.Ok();
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kXAddSyntax[] =
    "key [NOMKSTREAM] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value "
    "[field value ...]";
constexpr char kXAddComplexity[] =
    "O(1) when adding a new entry, O(N) when trimming where N being the number of entries "
    "evicted.";
constexpr char kXRangeComplexity[] =
    "O(N) with N being the number of elements being returned. If N is constant (e.g. always "
    "asking for the first 10 elements with COUNT), you can consider it O(1).";
constexpr char kXSetIdSyntax[] =
    "key last-id [ENTRIESADDED entries_added] [MAXDELETEDID max_deleted_entry_id]";
constexpr char kXTrimSyntax[] = "key <MAXLEN | MINID> [= | ~] threshold [LIMIT count]";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "XADD", .arity = -5, .flags = kWrite | kDenyOom | kFast,
     .keys = {vsl::WithNotes(kRwUpdate,
                             "UPDATE instead of INSERT because of the optional trimming feature")},
     .handler = vsl::Handler<CmdXAdd>, .since = "5.0.0",
     .summary = "Appends a new entry to a stream", .syntax = kXAddSyntax,
     .complexity = kXAddComplexity, .tips = kTipRandom, .args = docs::kXAddArgs},
    {.name = "XRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdXRange>, .since = "5.0.0",
     .summary = "Return a range of elements in a stream, with IDs matching the specified IDs "
                "interval",
     .syntax = "key start end [COUNT count]", .complexity = kXRangeComplexity,
     .args = docs::kXRangeArgs},
    {.name = "XREVRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdXRevRange>, .since = "5.0.0",
     .summary = "Return a range of elements in a stream, with IDs matching the specified IDs "
                "interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
     .syntax = "key end start [COUNT count]", .complexity = kXRangeComplexity,
     .args = docs::kXRevRangeArgs},
    {.name = "XLEN", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = vsl::Handler<CmdXLen>, .since = "5.0.0",
     .summary = "Return the number of entries in a stream", .syntax = "key",
     .complexity = "O(1)", .args = docs::kXLenArgs},
    {.name = "XDEL", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdXDel>, .since = "5.0.0",
     .summary = "Removes the specified entries from the stream. Returns the number of items "
                "actually deleted, that may be different from the number of IDs passed in case "
                "certain IDs do not exist.",
     .syntax = "key id [id ...]",
     .complexity = "O(1) for each single item to delete in the stream, regardless of the stream "
                   "size.",
     .args = docs::kXDelArgs},
    {.name = "XTRIM", .arity = -4, .flags = kWrite, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdXTrim>, .since = "5.0.0",
     .summary = "Trims the stream to (approximately if '~' is passed) a certain size",
     .syntax = kXTrimSyntax,
     .complexity = "O(N), with N being the number of evicted entries. Constant times are very "
                   "small however, since entries are organized in macro nodes containing "
                   "multiple entries that can be released with a single deallocation.",
     .tips = kTipRandom, .args = docs::kXTrimArgs},
    {.name = "XSETID", .arity = -3, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdXSetId>, .since = "5.0.0",
     .summary = "An internal command for replicating stream values", .syntax = kXSetIdSyntax,
     .complexity = "O(1)", .args = docs::kXSetIdArgs},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> StreamCommands() { return kCommands; }

}  // namespace vessel::streams

VSL_MODULE("streams", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::streams;
  vsl::ModuleInit init(api, m, "streams", nargs, err, errlen);
  init.Type(g_stream_type, "stream", 1);
  init.Commands(StreamCommands(), "stream");
  init.Commands(GroupCommands(), "stream");
  init.Commands(ReadCommands(), "stream");
  return init.result();
}
