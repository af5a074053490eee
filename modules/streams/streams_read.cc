// The streams module's readers: XREAD and XREADGROUP over several streams, served at once when a
// stream has entries past the given ID (or the group's last delivered one), else parked until
// one has (BLOCK). XREADGROUP delivers into the group's pending entries list unless NOACK, and
// records its effects as Redis propagates them (XCLAIM per delivery, XGROUP SETID, XGROUP
// CREATECONSUMER).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "streams.h"
#include "streams_docs.h"

namespace vessel::streams {
namespace {

using vsl::Ctx;
using vsl::Key;

// A parked reader waits for this many entries at most when it gave no COUNT (Redis's
// XREAD_BLOCKED_DEFAULT_COUNT).
constexpr uint64_t kBlockedDefaultCount = 1000;

struct ReadArgs {
  int64_t timeout = -1;  // ms; -1: no BLOCK
  uint64_t count = 0;    // 0: all
  int streams_at = 0;    // the first key
  int n = 0;             // streams
  bool noack = false;
  bool group = false;
  std::string_view group_name, consumer_name;
};

// Redis's xreadCommand argument loop.
ReadArgs ParseRead(const Ctx& ctx, bool xreadgroup) {
  ReadArgs a;
  for (int i = 1; i < ctx.argc(); ++i) {
    const int more = ctx.argc() - i - 1;
    if (ctx.ArgIs(i, "block") && more > 0) {
      if (ctx.in_script()) {  // Redis refuses it there rather than treating it as a timeout
        vsl::Fail(std::string(ctx.arg(0)) +
                  " command is not allowed with BLOCK option from scripts");
      }
      a.timeout = LongArg(ctx, ++i, "timeout is not an integer or out of range");
      if (a.timeout < 0) vsl::Fail("timeout is negative");
      // Redis 7.0's deadline overflows there and the client never times out.
      if (a.timeout > INT64_MAX - ctx.now_ms()) a.timeout = 0;
    } else if (ctx.ArgIs(i, "count") && more > 0) {
      a.count = static_cast<uint64_t>(std::max<int64_t>(LongArg(ctx, ++i), 0));
    } else if (ctx.ArgIs(i, "streams") && more > 0) {
      a.streams_at = i + 1;
      const int args = ctx.argc() - a.streams_at;
      if (args % 2 != 0)
        vsl::Fail(
            "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
      a.n = args / 2;
      break;
    } else if (ctx.ArgIs(i, "group") && more >= 2) {
      if (!xreadgroup)
        vsl::Fail("The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      a.group = true;
      a.group_name = ctx.arg(i + 1);
      a.consumer_name = ctx.arg(i + 2);
      i += 2;
    } else if (ctx.ArgIs(i, "noack")) {
      if (!xreadgroup)
        vsl::Fail("The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      a.noack = true;
    } else {
      vsl::SyntaxError();
    }
  }
  if (a.streams_at == 0) vsl::SyntaxError();
  if (xreadgroup && !a.group) vsl::Fail("Missing GROUP option for XREADGROUP");
  // The keys the host locked are the key spec's (after the STREAMS keyword); they are the ones
  // this parse found unless the options put a "STREAMS" word before the keyword itself.
  if (ctx.key_count() != a.n) vsl::Fail("the STREAMS keyword must follow every other option");
  for (int i = 0; i < a.n; ++i) {
    if (ctx.key(i).name() != ctx.arg(a.streams_at + i))
      vsl::Fail("the STREAMS keyword must follow every other option");
  }
  return a;
}

// The ID after which stream i is read: ">" is the maximum ID (the group's last delivered one).
StreamId ResolveId(const Ctx& ctx, const ReadArgs& a, int i, const Stream* s, bool xreadgroup) {
  const std::string_view arg = ctx.arg(a.streams_at + a.n + i);
  if (arg == "$") {
    if (xreadgroup)
      vsl::Fail(
          "The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
          "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
          "ID would just return an empty result set.");
    return s != nullptr ? s->last_id : StreamId{};
  }
  if (arg == ">") {
    if (!xreadgroup)
      vsl::Fail(
          "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
          "<consumer> option.");
    return StreamId::Max();
  }
  return StrictIdArg(ctx, a.streams_at + a.n + i);
}

// Entries after `after` delivered to a group's consumer (Redis's streamReplyWithRange with a
// group): the group moves past them, and unless NOACK each enters the PEL as this consumer's.
void DeliverNew(Ctx& ctx, Stream& s, Group& g, Consumer* consumer, std::string_view key,
                std::string_view group, StreamId after, uint64_t count, bool noack) {
  const int64_t now = ctx.now_ms();
  StreamId start = after;
  start.Incr();
  const vsl_agg agg = ctx.DeferredArray();
  int64_t n = 0;
  bool moved = false;
  EntryLog::Cursor c(s.log, start, StreamId::Max(), false);
  while ((count == 0 || static_cast<uint64_t>(n) < count) && c.Next()) {
    const StreamId id = c.id();
    if (id > g.last_id) {
      s.Advance(g, id);
      moved = true;
    }
    ReplyEntry(ctx, c);
    ++n;
    if (noack) continue;
    auto [it, added] = g.pel.try_emplace(id, Nack{now, 1, nullptr});
    if (!added) {  // delivered before (the group's ID was set back): now this consumer's
      it->second.delivery_time = now;
      it->second.delivery_count = 1;
    }
    g.Assign(it->second, id, consumer);
    PropagateClaim(ctx, key, group, g, id.ToString(), it->second);
  }
  ctx.SetLen(agg, n);
  if (noack && moved) PropagateGroupId(ctx, key, group, g);
}

// The consumer's own pending entries after `after` (a history read): entries gone from the
// stream come as [id, nil].
void DeliverHistory(Ctx& ctx, const Stream& s, Consumer& consumer, StreamId after, uint64_t count) {
  const int64_t now = ctx.now_ms();
  const vsl_agg agg = ctx.DeferredArray();
  int64_t n = 0;
  for (auto it = consumer.pel.lower_bound(after);
       it != consumer.pel.end() && (count == 0 || static_cast<uint64_t>(n) < count); ++it) {
    if (ReplyOneEntry(ctx, s, it->first)) {
      it->second->delivery_time = now;
      ++it->second->delivery_count;
    } else {
      ctx.Array(2);
      ReplyId(ctx, it->first);
      ctx.NullArray();
    }
    ++n;
  }
  ctx.SetLen(agg, n);
}

// The IDs an XREAD parked with (its "$" resolved then), 16 bytes each.
std::string EncodeIds(const std::vector<StreamId>& ids) {
  std::string out;
  for (StreamId id : ids) {
    out.append(reinterpret_cast<const char*>(&id.ms), 8);
    out.append(reinterpret_cast<const char*>(&id.seq), 8);
  }
  return out;
}

void DecodeIds(std::string_view state, std::vector<StreamId>* ids) {
  for (size_t i = 0; i < ids->size(); ++i) {
    std::memcpy(&(*ids)[i].ms, state.data() + 16 * i, 8);
    std::memcpy(&(*ids)[i].seq, state.data() + 16 * i + 8, 8);
  }
}

// The body of XREAD and XREADGROUP (Redis's xreadCommand). A parked reader re-runs it when one
// of its streams gets data (or, for XREADGROUP, goes away): with the IDs it parked with, up to
// Redis's default COUNT of parked readers, and serving a stream whose last ID moved past them.
void ReadGeneric(Ctx& ctx, bool xreadgroup) {
  ReadArgs a = ParseRead(ctx, xreadgroup);
  std::string_view state;
  const bool rerun = ctx.Rerun(&state);
  if (rerun && a.count == 0) a.count = kBlockedDefaultCount;
  std::vector<StreamId> ids(static_cast<size_t>(a.n));
  for (int i = 0; i < a.n; ++i) {
    const Stream* s = Lookup(ctx.key(i));
    if (a.group && rerun && s == nullptr)
      throw vsl::Error{"UNBLOCKED", "the stream key no longer exists"};
    if (a.group && (s == nullptr || const_cast<Stream*>(s)->FindGroup(a.group_name) == nullptr)) {
      if (rerun)
        throw vsl::Error{"NOGROUP",
                         "the consumer group this client was blocked on no longer "
                         "exists"};
      throw vsl::Error{"NOGROUP", "No such key '" + std::string(ctx.arg(a.streams_at + i)) +
                                      "' or consumer group '" + std::string(a.group_name) +
                                      "' in XREADGROUP with GROUP option"};
    }
    ids[static_cast<size_t>(i)] = ResolveId(ctx, a, i, s, xreadgroup);
  }
  if (rerun && !xreadgroup && state.size() == ids.size() * 16) DecodeIds(state, &ids);
  const bool resp3 = ctx.protocol() == 3;
  vsl_agg top{};
  int64_t served = 0;
  uint64_t changes = 0;
  for (int i = 0; i < a.n; ++i) {
    Key key = ctx.key(i);
    Stream* s = Lookup(key);
    if (s == nullptr) continue;
    StreamId after = ids[static_cast<size_t>(i)];
    Group* g = a.group ? s->FindGroup(a.group_name) : nullptr;
    const bool history = g != nullptr && after != StreamId::Max();
    bool serve = history;
    if (!history) {
      if (g != nullptr) after = g->last_id;
      // A first run serves what is there; a parked reader is served once the stream's last ID
      // moved past its own (even when the entries were deleted since), as in Redis.
      serve = rerun ? s->last_id > after : s->length() != 0 && s->LastValidId() > after;
    }
    if (!serve) continue;
    // A parked reader is answered with one stream, as Redis answers it with the stream whose
    // write woke it: here the first of its streams, in the order given, with new entries.
    if (rerun && served != 0) break;
    if (served++ == 0) top = resp3 ? ctx.DeferredMap() : ctx.DeferredArray();
    if (!resp3) ctx.Array(2);
    ctx.Bulk(key.name());
    if (g == nullptr) {
      StreamId start = after;
      start.Incr();
      ReplyRange(ctx, *s, start, StreamId::Max(), a.count, false);
      continue;
    }
    Consumer* c = g->FindConsumer(a.consumer_name);
    if (c != nullptr) {
      c->seen_time = ctx.now_ms();
    } else {
      c = g->CreateConsumer(a.consumer_name, ctx.now_ms());
      key.Notify(VSL_NOTIFY_STREAM, "xgroup-createconsumer");
      ++changes;
      if (a.noack) PropagateConsumer(ctx, key.name(), a.group_name, a.consumer_name);
    }
    if (history) {
      StreamId start = after;
      start.Incr();
      DeliverHistory(ctx, *s, *c, start, a.count);
    } else {
      DeliverNew(ctx, *s, *g, c, key.name(), a.group_name, after, a.count, a.noack);
    }
    if (!rerun) ++changes;  // Redis counts a served stream when served at once only
  }
  if (xreadgroup) {
    ctx.AddChanges(changes);
    ctx.PropagateNothing();  // what it changed was recorded as XCLAIM / XGROUP commands above
  }
  if (served != 0) return ctx.SetLen(top, served);
  // Readers do not consume: every write re-runs every parked one. XREADGROUP also learns when
  // its stream goes; XREAD keeps the IDs it resolved now ("$").
  if (a.timeout != -1) {
    const uint32_t flags = VSL_BLOCK_EVERY_WRITE | (xreadgroup ? VSL_BLOCK_KEY_GONE : 0);
    if (ctx.Block(a.timeout, flags, xreadgroup ? std::string() : EncodeIds(ids))) return;
  }
  ctx.NullArray();
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
void CmdXRead(Ctx& ctx) { ReadGeneric(ctx, false); }

// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key
// [key ...] ID [ID ...]
void CmdXReadGroup(Ctx& ctx) { ReadGeneric(ctx, true); }

// ---- the command table ----

using namespace vsl::table;

// The keys follow STREAMS: the first half of what is left (XREADGROUP searches after GROUP).
constexpr vsl_keyspec StreamsKeys(int32_t from, uint32_t flags) {
  return vsl_keyspec{sizeof(vsl_keyspec), flags, from, "STREAMS", -1, 1, 2, 0, 0, nullptr};
}

constexpr char kXReadSummary[] =
    "Return never seen elements in multiple streams, with IDs greater than the ones reported by "
    "the caller for each stream. Can block.";
constexpr char kXReadComplexity[] =
    "For each stream mentioned: O(N) with N being the number of elements being returned, it "
    "means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, "
    "XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new "
    "data.";
constexpr char kXReadGroupSummary[] =
    "Return new entries from a stream using a consumer group, or access the history of the "
    "pending entries for a given consumer. Can block.";
constexpr char kXReadGroupComplexity[] =
    "For each stream mentioned: O(M) with M being the number of elements returned. If M is "
    "constant (e.g. always asking for the first 10 elements with COUNT), you can consider it "
    "O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to "
    "serve the N clients blocked on the stream getting new data.";
constexpr char kXReadGroupSyntax[] =
    "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id "
    "[id ...]";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "XREAD", .arity = -4, .flags = kRead | kBlocking,
     .keys = {StreamsKeys(1, VSL_KS_RO | VSL_KS_ACCESS)}, .handler = vsl::Handler<CmdXRead>,
     .since = "5.0.0", .summary = kXReadSummary,
     .syntax = "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]",
     .complexity = kXReadComplexity, .args = docs::kXReadArgs},
    // RW where Redis's key spec says RO: the group's state changes, under the key's lock.
    {.name = "XREADGROUP", .arity = -7, .flags = kWrite | kBlocking,
     .keys = {StreamsKeys(4, VSL_KS_RW | VSL_KS_ACCESS)}, .handler = vsl::Handler<CmdXReadGroup>,
     .since = "5.0.0", .summary = kXReadGroupSummary, .syntax = kXReadGroupSyntax,
     .complexity = kXReadGroupComplexity, .args = docs::kXReadGroupArgs},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> ReadCommands() { return kCommands; }

}  // namespace vessel::streams
