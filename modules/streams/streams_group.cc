// The streams module's consumer groups: XGROUP (CREATE SETID DESTROY CREATECONSUMER DELCONSUMER
// HELP), XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO (STREAM GROUPS CONSUMERS HELP), with Redis
// 7.0's replies, errors, read counters and lag. As in Redis, the group commands do not count as
// modifications of the key for WATCH and client tracking (only creating a stream does); they
// count as changes for the save rules and record what replicas must replay (PropagateClaim).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "streams.h"
#include "streams_docs.h"

namespace vessel::streams {

using vsl::Ctx;
using vsl::Key;

void PropagateClaim(Ctx& ctx, std::string_view key, std::string_view group, const Group& g,
                    std::string_view id, const Nack& nack) {
  const std::string time = std::to_string(nack.delivery_time);
  const std::string count = std::to_string(nack.delivery_count);
  const std::string last = g.last_id.ToString();
  const std::string_view consumer =
      nack.consumer != nullptr ? std::string_view(*nack.consumer->name) : std::string_view();
  ctx.Propagate({"XCLAIM", key, group, consumer, "0", id, "TIME", time, "RETRYCOUNT", count,
                 "FORCE", "JUSTID", "LASTID", last});
}

void PropagateGroupId(Ctx& ctx, std::string_view key, std::string_view group, const Group& g) {
  const std::string last = g.last_id.ToString();
  const std::string read = std::to_string(g.entries_read);
  ctx.Propagate({"XGROUP", "SETID", key, group, last, "ENTRIESREAD", read});
}

void PropagateConsumer(Ctx& ctx, std::string_view key, std::string_view group,
                       std::string_view consumer) {
  ctx.Propagate({"XGROUP", "CREATECONSUMER", key, group, consumer});
}

namespace {

// "-NOGROUP No such key 'k' or consumer group 'g'" + suffix.
[[noreturn]] void NoGroup(const Ctx& ctx, int key_at, int group_at, const char* suffix = "") {
  throw vsl::Error{"NOGROUP", "No such key '" + std::string(ctx.arg(key_at)) +
                                  "' or consumer group '" + std::string(ctx.arg(group_at)) + "'" +
                                  suffix};
}

[[noreturn]] void NoSuchGroup(const Ctx& ctx, int key_at, int group_at) {
  throw vsl::Error{"NOGROUP", "No such consumer group '" + std::string(ctx.arg(group_at)) +
                                  "' for key name '" + std::string(ctx.arg(key_at)) + "'"};
}

// Redis's addReplySubcommandSyntaxError.
[[noreturn]] void SubcommandSyntax(const Ctx& ctx) {
  std::string cmd(ctx.arg(0));
  for (char& c : cmd) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  vsl::Fail("unknown subcommand or wrong number of arguments for '" +
            std::string(ctx.arg(1).substr(0, 128)) + "'. Try " + cmd + " HELP.");
}

void ReplyHelp(Ctx& ctx, const char* cmd, std::initializer_list<const char*> lines) {
  ctx.Array(static_cast<int64_t>(lines.size()) + 3);
  ctx.Simple(std::string(cmd) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (const char* l : lines) ctx.Simple(l);
  ctx.Simple("HELP");
  ctx.Simple("    Prints this help.");
}

// The consumer of that name, seen now; created (with its event and change) when missing.
Consumer* SeenConsumer(Ctx& ctx, Key& key, Group& g, std::string_view name, bool* created) {
  Consumer* c = g.FindConsumer(name);
  if (c != nullptr) {
    c->seen_time = ctx.now_ms();
    *created = false;
    return c;
  }
  c = g.CreateConsumer(name, ctx.now_ms());
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-createconsumer");
  ctx.AddChanges(1);
  *created = true;
  return c;
}

// ---- XGROUP ----

struct GroupOptions {
  bool mkstream = false;
  int64_t entries_read = kInvalidEntriesRead;
};

// The options after "XGROUP <sub> key group id" (Redis parses them for every subcommand).
GroupOptions ParseGroupOptions(const Ctx& ctx, bool create, bool setid) {
  GroupOptions o;
  for (int i = 5; i < ctx.argc();) {
    if (create && ctx.ArgIs(i, "mkstream")) {
      o.mkstream = true;
      ++i;
    } else if ((create || setid) && ctx.ArgIs(i, "entriesread") && i + 1 < ctx.argc()) {
      o.entries_read = LongArg(ctx, i + 1);
      if (o.entries_read < 0 && o.entries_read != kInvalidEntriesRead)
        vsl::Fail("value for ENTRIESREAD must be positive or -1");
      i += 2;
    } else {
      SubcommandSyntax(ctx);
    }
  }
  return o;
}

[[noreturn]] void KeyMustExist() {
  vsl::Fail(
      "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use "
      "the MKSTREAM option to create an empty stream automatically.");
}

// The stream and group of "XGROUP <sub> key group ...": the key must exist, and the group too.
Group& ExistingGroup(const Ctx& ctx, Stream* s) {
  if (s == nullptr) KeyMustExist();
  Group* g = s->FindGroup(ctx.arg(3));
  if (g == nullptr) NoSuchGroup(ctx, 2, 3);
  return *g;
}

// XGROUP CREATE key groupname ID | $ [MKSTREAM] [ENTRIESREAD entries_read]
void CmdXGroupCreate(Ctx& ctx) {
  const GroupOptions o = ParseGroupOptions(ctx, true, false);
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  if (s == nullptr && !o.mkstream) KeyMustExist();
  if (ctx.argc() > 8) SubcommandSyntax(ctx);
  StreamId id;
  if (ctx.arg(4) == "$") {
    id = s != nullptr ? s->last_id : StreamId{};
  } else {
    id = StrictIdArg(ctx, 4);
  }
  if (s == nullptr) {
    StreamPtr created(vsl::New<Stream>());
    created->CreateGroup(ctx.arg(3), id, o.entries_read);
    key.Set(g_stream_type, created.release());
  } else if (s->CreateGroup(ctx.arg(3), id, o.entries_read) == nullptr) {
    throw vsl::Error{"BUSYGROUP", "Consumer Group name already exists"};
  }
  ctx.AddChanges(1);
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-create");
  ctx.Ok();
}

// XGROUP SETID key groupname ID | $ [ENTRIESREAD entries_read]
void CmdXGroupSetId(Ctx& ctx) {
  const GroupOptions o = ParseGroupOptions(ctx, false, true);
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  Group& g = ExistingGroup(ctx, s);
  if (ctx.argc() != 5 && ctx.argc() != 7) SubcommandSyntax(ctx);
  g.last_id = ctx.arg(4) == "$" ? s->last_id : IdArg(ctx, 4);
  g.entries_read = o.entries_read;
  ctx.AddChanges(1);
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-setid");
  ctx.Ok();
}

// XGROUP DESTROY key groupname
void CmdXGroupDestroy(Ctx& ctx) {
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  if (s == nullptr) KeyMustExist();
  auto it = s->groups.find(ctx.arg(3));
  if (it == s->groups.end()) return ctx.Int(0);
  s->groups.erase(it);
  ctx.AddChanges(1);
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-destroy");
  key.Modified();  // its blocked readers learn that the group is gone
  ctx.Int(1);
}

// XGROUP CREATECONSUMER key groupname consumername
void CmdXGroupCreateConsumer(Ctx& ctx) {
  Key key = ctx.key(0);
  Group& g = ExistingGroup(ctx, Lookup(key));
  if (g.CreateConsumer(ctx.arg(4), ctx.now_ms()) == nullptr) return ctx.Int(0);
  ctx.AddChanges(1);
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-createconsumer");
  ctx.Int(1);
}

// XGROUP DELCONSUMER key groupname consumername
void CmdXGroupDelConsumer(Ctx& ctx) {
  Key key = ctx.key(0);
  Group& g = ExistingGroup(ctx, Lookup(key));
  if (g.FindConsumer(ctx.arg(4)) == nullptr) return ctx.Int(0);
  const size_t pending = g.DeleteConsumer(ctx.arg(4));
  ctx.AddChanges(1);
  key.Notify(VSL_NOTIFY_STREAM, "xgroup-delconsumer");
  ctx.Int(static_cast<int64_t>(pending));
}

// XGROUP HELP
void CmdXGroupHelp(Ctx& ctx) {
  ReplyHelp(
      ctx, "XGROUP",
      {"CREATE <key> <groupname> <id|$> [option]",
       "    Create a new consumer group. Options are:", "    * MKSTREAM",
       "      Create the empty stream if it does not exist.", "    * ENTRIESREAD entries_read",
       "      Set the group's entries_read counter (internal use).",
       "CREATECONSUMER <key> <groupname> <consumer>",
       "    Create a new consumer in the specified group.",
       "DELCONSUMER <key> <groupname> <consumer>", "    Remove the specified consumer.",
       "DESTROY <key> <groupname>", "    Remove the specified group.",
       "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
       "    Set the current group ID and entries_read counter."});
}

// ---- acknowledging and inspecting pending entries ----

// XACK key group ID [ID ...]
void CmdXAck(Ctx& ctx) {
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  Group* g = s != nullptr ? s->FindGroup(ctx.arg(2)) : nullptr;
  if (g == nullptr) return ctx.Int(0);
  std::vector<StreamId> ids;
  ids.reserve(static_cast<size_t>(ctx.argc() - 3));
  for (int i = 3; i < ctx.argc(); ++i) ids.push_back(StrictIdArg(ctx, i));  // all or nothing
  int64_t acked = 0;
  for (StreamId id : ids) {
    auto it = g->pel.find(id);
    if (it == g->pel.end()) continue;
    g->Ack(it);
    ++acked;
  }
  ctx.AddChanges(static_cast<uint64_t>(acked));
  ctx.Int(acked);
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void CmdXPending(Ctx& ctx) {
  const int argc = ctx.argc();
  if (argc != 3 && (argc < 6 || argc > 9)) vsl::SyntaxError();
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::string_view consumer_name;
  bool named = false;
  if (argc >= 6) {
    int at = 3;
    if (ctx.ArgIs(3, "idle")) {
      min_idle = LongArg(ctx, 4);
      if (argc < 8) vsl::SyntaxError();
      at += 2;
    }
    count = std::max<int64_t>(LongArg(ctx, at + 2), 0);
    start = RangeStartArg(ctx, at);
    end = RangeEndArg(ctx, at + 1);
    if (at + 3 < argc) {
      consumer_name = ctx.arg(at + 3);
      named = true;
    }
  }
  Stream* s = Lookup(ctx.key(0));
  Group* g = s != nullptr ? s->FindGroup(ctx.arg(2)) : nullptr;
  if (g == nullptr) NoGroup(ctx, 1, 2);
  if (argc == 3) {
    ctx.Array(4);
    ctx.Int(static_cast<int64_t>(g->pel.size()));
    if (g->pel.empty()) {
      ctx.Null();
      ctx.Null();
      return ctx.NullArray();
    }
    ReplyId(ctx, g->pel.begin()->first);
    ReplyId(ctx, g->pel.rbegin()->first);
    const vsl_agg agg = ctx.DeferredArray();
    int64_t n = 0;
    for (const auto& [name, c] : g->consumers) {
      if (c.pel.empty()) continue;
      ctx.Array(2);
      ctx.Bulk(name);
      ctx.Bulk(std::to_string(c.pel.size()));
      ++n;
    }
    return ctx.SetLen(agg, n);
  }
  const Consumer* consumer = named ? g->FindConsumer(consumer_name) : nullptr;
  if (named && consumer == nullptr) return static_cast<void>(ctx.Array(0));
  const int64_t now = ctx.now_ms();
  const vsl_agg agg = ctx.DeferredArray();
  int64_t n = 0;
  auto emit = [&](StreamId id, const Nack& nack) {
    if (min_idle != 0 && now - nack.delivery_time < min_idle) return;
    ctx.Array(4);
    ReplyId(ctx, id);
    ctx.Bulk(*nack.consumer->name);
    ctx.Int(std::max<int64_t>(now - nack.delivery_time, 0));
    ctx.Int(static_cast<int64_t>(nack.delivery_count));
    ++n;
    --count;
  };
  if (consumer != nullptr) {
    for (auto it = consumer->pel.lower_bound(start);
         count > 0 && it != consumer->pel.end() && it->first <= end; ++it)
      emit(it->first, *it->second);
  } else {
    for (auto it = g->pel.lower_bound(start); count > 0 && it != g->pel.end() && it->first <= end;
         ++it)
      emit(it->first, it->second);
  }
  ctx.SetLen(agg, n);
}

// ---- claiming ----

struct ClaimOptions {
  int64_t min_idle = 0;
  int64_t delivery_time = -1;  // -1: IDLE and TIME not given
  int64_t retry_count = -1;    // -1: RETRYCOUNT not given
  bool force = false, justid = false;
  StreamId last_id;
};

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds]
// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
void CmdXClaim(Ctx& ctx) {
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  Group* g = s != nullptr ? s->FindGroup(ctx.arg(2)) : nullptr;
  if (g == nullptr) NoGroup(ctx, 1, 2);
  ClaimOptions o;
  o.min_idle = std::max<int64_t>(LongArg(ctx, 4, "Invalid min-idle-time argument for XCLAIM"), 0);
  std::vector<StreamId> ids;
  int j = 5;
  for (StreamId id; j < ctx.argc() && ParseStreamId(ctx.arg(j), &id, 0, true); ++j)
    ids.push_back(id);
  const int64_t now = ctx.now_ms();
  for (; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (ctx.ArgIs(j, "force")) {
      o.force = true;
    } else if (ctx.ArgIs(j, "justid")) {
      o.justid = true;
    } else if (ctx.ArgIs(j, "idle") && more) {
      o.delivery_time = now - LongArg(ctx, ++j, "Invalid IDLE option argument for XCLAIM");
    } else if (ctx.ArgIs(j, "time") && more) {
      o.delivery_time = LongArg(ctx, ++j, "Invalid TIME option argument for XCLAIM");
    } else if (ctx.ArgIs(j, "retrycount") && more) {
      o.retry_count = LongArg(ctx, ++j, "Invalid RETRYCOUNT option argument for XCLAIM");
    } else if (ctx.ArgIs(j, "lastid") && more) {
      o.last_id = StrictIdArg(ctx, ++j);
    } else {
      vsl::Fail("Unrecognized XCLAIM option '" + std::string(ctx.arg(j)) + "'");
    }
  }
  bool propagate_last_id = false;
  uint64_t changes = 0;
  if (o.last_id > g->last_id) {
    g->last_id = o.last_id;
    propagate_last_id = true;
  }
  if (o.delivery_time == -1 || o.delivery_time < 0 || o.delivery_time > now) o.delivery_time = now;
  const std::string_view key_name = ctx.arg(1), group_name = ctx.arg(2);
  Consumer* consumer = nullptr;
  std::vector<StreamId> claimed;
  for (size_t i = 0; i < ids.size(); ++i) {
    const StreamId id = ids[i];
    auto it = g->pel.find(id);
    if (!s->log.Contains(id)) {
      if (it != g->pel.end()) {  // the entry is gone: so goes its pending record
        PropagateClaim(ctx, key_name, group_name, *g, ctx.arg(5 + static_cast<int>(i)), it->second);
        propagate_last_id = false;
        ++changes;
        g->Ack(it);
      }
      continue;
    }
    if (it == g->pel.end()) {
      if (!o.force) continue;
      it = g->pel.emplace(id, Nack{now, 1, nullptr}).first;
    }
    Nack& nack = it->second;
    if (nack.consumer != nullptr && o.min_idle != 0 && now - nack.delivery_time < o.min_idle)
      continue;
    if (consumer == nullptr) {
      bool created;
      consumer = SeenConsumer(ctx, key, *g, ctx.arg(3), &created);
    }
    g->Assign(nack, id, consumer);
    nack.delivery_time = o.delivery_time;
    if (o.retry_count >= 0) {
      nack.delivery_count = static_cast<uint64_t>(o.retry_count);
    } else if (!o.justid) {
      ++nack.delivery_count;
    }
    claimed.push_back(id);
    PropagateClaim(ctx, key_name, group_name, *g, ctx.arg(5 + static_cast<int>(i)), nack);
    propagate_last_id = false;
    ++changes;
  }
  if (propagate_last_id) {
    PropagateGroupId(ctx, key_name, group_name, *g);
    ++changes;
  }
  if (changes == 0) ctx.PropagateNothing();
  ctx.AddChanges(changes);
  ctx.Array(static_cast<int64_t>(claimed.size()));
  for (StreamId id : claimed) {
    if (o.justid) {
      ReplyId(ctx, id);
    } else {
      ReplyOneEntry(ctx, *s, id);
    }
  }
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void CmdXAutoClaim(Ctx& ctx) {
  constexpr int64_t kAttemptsFactor = 10;
  int64_t min_idle = LongArg(ctx, 4, "Invalid min-idle-time argument for XAUTOCLAIM");
  min_idle = std::max<int64_t>(min_idle, 0);
  const StreamId start = RangeStartArg(ctx, 5);
  int64_t count = 100;
  bool justid = false;
  for (int j = 6; j < ctx.argc(); ++j) {
    if (ctx.ArgIs(j, "count") && j + 1 < ctx.argc()) {
      count = vsl::IntArgInRange(ctx, ++j, 1, INT64_MAX / 16, "COUNT must be > 0");
    } else if (ctx.ArgIs(j, "justid")) {
      justid = true;
    } else {
      vsl::SyntaxError();
    }
  }
  Key key = ctx.key(0);
  Stream* s = Lookup(key);
  Group* g = s != nullptr ? s->FindGroup(ctx.arg(2)) : nullptr;
  if (g == nullptr) NoGroup(ctx, 1, 2);
  // Redis allocates room for COUNT deleted IDs first and refuses what it cannot allocate.
  if (static_cast<uint64_t>(count) * 16 > (uint64_t{1} << 40))
    vsl::Fail("Insufficient memory, failed allocating transient memory, COUNT too high.");
  const int64_t now = ctx.now_ms();
  const std::string_view key_name = ctx.arg(1), group_name = ctx.arg(2);
  int64_t attempts = count * kAttemptsFactor;
  Consumer* consumer = nullptr;
  std::vector<StreamId> claimed, deleted;
  uint64_t changes = 0;
  auto it = g->pel.lower_bound(start);
  for (; attempts-- > 0 && count > 0 && it != g->pel.end();) {
    const StreamId id = it->first;
    Nack& nack = it->second;
    if (!s->log.Contains(id)) {
      PropagateClaim(ctx, key_name, group_name, *g, id.ToString(), nack);
      ++changes;
      auto next = std::next(it);
      g->Ack(it);
      it = next;
      deleted.push_back(id);
      --count;
      continue;
    }
    if (min_idle != 0 && now - nack.delivery_time < min_idle) {
      ++it;
      continue;
    }
    if (consumer == nullptr) {
      bool created;
      consumer = SeenConsumer(ctx, key, *g, ctx.arg(3), &created);
    }
    g->Assign(nack, id, consumer);
    nack.delivery_time = now;
    if (!justid) ++nack.delivery_count;
    claimed.push_back(id);
    --count;
    PropagateClaim(ctx, key_name, group_name, *g, id.ToString(), nack);
    ++changes;
    ++it;
  }
  if (changes == 0) ctx.PropagateNothing();
  ctx.AddChanges(changes);
  ctx.Array(3);
  ReplyId(ctx, it == g->pel.end() ? StreamId{} : it->first);  // where the next call starts
  ctx.Array(static_cast<int64_t>(claimed.size()));
  for (StreamId id : claimed) {
    if (justid) {
      ReplyId(ctx, id);
    } else {
      ReplyOneEntry(ctx, *s, id);
    }
  }
  ctx.Array(static_cast<int64_t>(deleted.size()));
  for (StreamId id : deleted) ReplyId(ctx, id);
}

// ---- XINFO ----

void ReplyLag(Ctx& ctx, const Stream& s, const Group& g) {
  int64_t lag;
  if (s.Lag(g, &lag)) {
    ctx.Int(lag);
  } else {
    ctx.Null();
  }
}

void ReplyEntriesRead(Ctx& ctx, const Group& g) {
  if (g.entries_read != kInvalidEntriesRead) {
    ctx.Int(g.entries_read);
  } else {
    ctx.Null();
  }
}

const Stream& ExistingStream(Ctx& ctx) {
  const Stream* s = Lookup(ctx.key(0));
  if (s == nullptr) vsl::Fail("no such key");
  return *s;
}

// XINFO CONSUMERS key groupname
void CmdXInfoConsumers(Ctx& ctx) {
  Stream& s = const_cast<Stream&>(ExistingStream(ctx));
  const Group* g = s.FindGroup(ctx.arg(3));
  if (g == nullptr) NoSuchGroup(ctx, 2, 3);
  const int64_t now = ctx.now_ms();
  ctx.Array(static_cast<int64_t>(g->consumers.size()));
  for (const auto& [name, c] : g->consumers) {
    ctx.Map(3);
    ctx.Bulk("name");
    ctx.Bulk(name);
    ctx.Bulk("pending");
    ctx.Int(static_cast<int64_t>(c.pel.size()));
    ctx.Bulk("idle");
    ctx.Int(std::max<int64_t>(now - c.seen_time, 0));
  }
}

// XINFO GROUPS key
void CmdXInfoGroups(Ctx& ctx) {
  const Stream& s = ExistingStream(ctx);
  ctx.Array(static_cast<int64_t>(s.groups.size()));
  for (const auto& [name, g] : s.groups) {
    ctx.Map(6);
    ctx.Bulk("name");
    ctx.Bulk(name);
    ctx.Bulk("consumers");
    ctx.Int(static_cast<int64_t>(g.consumers.size()));
    ctx.Bulk("pending");
    ctx.Int(static_cast<int64_t>(g.pel.size()));
    ctx.Bulk("last-delivered-id");
    ReplyId(ctx, g.last_id);
    ctx.Bulk("entries-read");
    ReplyEntriesRead(ctx, g);
    ctx.Bulk("lag");
    ReplyLag(ctx, s, g);
  }
}

// The groups of XINFO STREAM key FULL: each with up to count pending entries (0 = all).
void ReplyFullGroups(Ctx& ctx, const Stream& s, int64_t count) {
  const auto limit = static_cast<size_t>(count);
  ctx.Array(static_cast<int64_t>(s.groups.size()));
  for (const auto& [name, g] : s.groups) {
    ctx.Map(7);
    ctx.Bulk("name");
    ctx.Bulk(name);
    ctx.Bulk("last-delivered-id");
    ReplyId(ctx, g.last_id);
    ctx.Bulk("entries-read");
    ReplyEntriesRead(ctx, g);
    ctx.Bulk("lag");
    ReplyLag(ctx, s, g);
    ctx.Bulk("pel-count");
    ctx.Int(static_cast<int64_t>(g.pel.size()));
    ctx.Bulk("pending");
    const size_t pel = limit == 0 ? g.pel.size() : std::min(limit, g.pel.size());
    ctx.Array(static_cast<int64_t>(pel));
    size_t n = 0;
    for (auto it = g.pel.begin(); n < pel; ++it, ++n) {
      ctx.Array(4);
      ReplyId(ctx, it->first);
      ctx.Bulk(*it->second.consumer->name);
      ctx.Int(it->second.delivery_time);
      ctx.Int(static_cast<int64_t>(it->second.delivery_count));
    }
    ctx.Bulk("consumers");
    ctx.Array(static_cast<int64_t>(g.consumers.size()));
    for (const auto& [cname, c] : g.consumers) {
      ctx.Map(4);
      ctx.Bulk("name");
      ctx.Bulk(cname);
      ctx.Bulk("seen-time");
      ctx.Int(c.seen_time);
      ctx.Bulk("pel-count");
      ctx.Int(static_cast<int64_t>(c.pel.size()));
      ctx.Bulk("pending");
      const size_t cpel = limit == 0 ? c.pel.size() : std::min(limit, c.pel.size());
      ctx.Array(static_cast<int64_t>(cpel));
      size_t k = 0;
      for (auto it = c.pel.begin(); k < cpel; ++it, ++k) {
        ctx.Array(3);
        ReplyId(ctx, it->first);
        ctx.Int(it->second->delivery_time);
        ctx.Int(static_cast<int64_t>(it->second->delivery_count));
      }
    }
  }
}

// XINFO STREAM key [FULL [COUNT count]]
void CmdXInfoStream(Ctx& ctx) {
  const Stream& s = ExistingStream(ctx);
  const int options = ctx.argc() - 3;
  bool full = options > 0;
  int64_t count = 10;
  if (full) {
    if ((options != 1 && options != 3) || !ctx.ArgIs(3, "full")) SubcommandSyntax(ctx);
    if (options == 3) {
      if (!ctx.ArgIs(4, "count")) SubcommandSyntax(ctx);
      count = LongArg(ctx, 5);
      if (count < 0) count = 10;
    }
  }
  ctx.Map(full ? 9 : 10);
  ctx.Bulk("length");
  ctx.Int(static_cast<int64_t>(s.length()));
  ctx.Bulk("radix-tree-keys");
  ctx.Int(static_cast<int64_t>(s.log.blocks()));
  ctx.Bulk("radix-tree-nodes");
  ctx.Int(static_cast<int64_t>(s.log.blocks() * 2 + (s.log.blocks() == 0 ? 1 : 0)));
  ctx.Bulk("last-generated-id");
  ReplyId(ctx, s.last_id);
  ctx.Bulk("max-deleted-entry-id");
  ReplyId(ctx, s.max_deleted);
  ctx.Bulk("entries-added");
  ctx.Int(static_cast<int64_t>(s.entries_added));
  ctx.Bulk("recorded-first-entry-id");
  ReplyId(ctx, s.first_id);
  if (!full) {
    ctx.Bulk("groups");
    ctx.Int(static_cast<int64_t>(s.groups.size()));
    for (const bool last : {false, true}) {
      ctx.Bulk(last ? "last-entry" : "first-entry");
      EntryLog::Cursor c(s.log, StreamId{}, StreamId::Max(), last);
      if (c.Next()) {
        ReplyEntry(ctx, c);
      } else {
        ctx.Null();
      }
    }
    return;
  }
  ctx.Bulk("entries");
  ReplyRange(ctx, s, StreamId{}, StreamId::Max(), static_cast<uint64_t>(count), false);
  ctx.Bulk("groups");
  ReplyFullGroups(ctx, s, count);
}

// XINFO HELP
void CmdXInfoHelp(Ctx& ctx) {
  ReplyHelp(ctx, "XINFO",
            {"CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
             "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
             "    Show information about the stream."});
}

// ---- the command table ----

using namespace vsl::table;

// The key of a subcommand (XGROUP CREATE key ..., XINFO STREAM key) is argument 2.
constexpr vsl_keyspec kGroupInsert = vsl::KeyAt(2, VSL_KS_RW | VSL_KS_INSERT);
constexpr vsl_keyspec kGroupUpdate = vsl::KeyAt(2, VSL_KS_RW | VSL_KS_UPDATE);
constexpr vsl_keyspec kGroupDelete = vsl::KeyAt(2, VSL_KS_RW | VSL_KS_DELETE);
constexpr vsl_keyspec kInfoKey = vsl::KeyAt(2, VSL_KS_RO | VSL_KS_ACCESS);

constexpr char kHelpSummary[] = "Show helpful text about the different subcommands";
constexpr char kXPendingSyntax[] = "key group [[IDLE min-idle-time] start end count [consumer]]";
constexpr char kXPendingSummary[] =
    "Return information and entries from a stream consumer group pending entries list, that are "
    "messages fetched but never acknowledged.";
constexpr char kXPendingComplexity[] =
    "O(N) with N being the number of elements returned, so asking for a small fixed number of "
    "entries per call is O(1). O(M), where M is the total number of entries scanned when used "
    "with the IDLE filter. When the command returns just the summary and the list of consumers "
    "is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every "
    "consumer.";
constexpr char kXAckSummary[] =
    "Marks a pending message as correctly processed, effectively removing it from the pending "
    "entries list of the consumer group. Return value of the command is the number of messages "
    "successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.";
constexpr char kXClaimSyntax[] =
    "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] "
    "[RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]";
constexpr char kXClaimSummary[] =
    "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
    "delivered to the specified consumer.";
constexpr char kXClaimComplexity[] =
    "O(log N) with N being the number of messages in the PEL of the consumer group.";
constexpr char kXAutoClaimSummary[] =
    "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
    "delivered to the specified consumer.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "XGROUP", .arity = -2, .flags = 0, .keys = {}, .handler = nullptr,
     .since = "5.0.0", .summary = "A container for consumer groups commands", .syntax = "",
     .complexity = "Depends on subcommand."},
    {.name = "XGROUP|CREATE", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kGroupInsert},
     .handler = vsl::Handler<CmdXGroupCreate>, .since = "5.0.0",
     .summary = "Create a consumer group.",
     .syntax = "key groupname <id | $> [MKSTREAM] [ENTRIESREAD entries_read]",
     .complexity = "O(1)", .args = docs::kXGroupCreateArgs},
    {.name = "XGROUP|SETID", .arity = -5, .flags = kWrite, .keys = {kGroupUpdate},
     .handler = vsl::Handler<CmdXGroupSetId>, .since = "5.0.0",
     .summary = "Set a consumer group to an arbitrary last delivered ID value.",
     .syntax = "key groupname <id | $> [ENTRIESREAD entries_read]", .complexity = "O(1)",
     .args = docs::kXGroupSetIdArgs},
    {.name = "XGROUP|DESTROY", .arity = 4, .flags = kWrite, .keys = {kGroupDelete},
     .handler = vsl::Handler<CmdXGroupDestroy>, .since = "5.0.0",
     .summary = "Destroy a consumer group.", .syntax = "key groupname",
     .complexity = "O(N) where N is the number of entries in the group's pending entries list "
                   "(PEL).",
     .args = docs::kXGroupDestroyArgs},
    {.name = "XGROUP|CREATECONSUMER", .arity = 5, .flags = kWrite | kDenyOom,
     .keys = {kGroupInsert}, .handler = vsl::Handler<CmdXGroupCreateConsumer>, .since = "6.2.0",
     .summary = "Create a consumer in a consumer group.", .syntax = "key groupname consumername",
     .complexity = "O(1)", .args = docs::kXGroupCreateConsumerArgs},
    {.name = "XGROUP|DELCONSUMER", .arity = 5, .flags = kWrite, .keys = {kGroupDelete},
     .handler = vsl::Handler<CmdXGroupDelConsumer>, .since = "5.0.0",
     .summary = "Delete a consumer from a consumer group.", .syntax = "key groupname consumername",
     .complexity = "O(1)", .args = docs::kXGroupDelConsumerArgs},
    {.name = "XGROUP|HELP", .arity = 2, .flags = VSL_CMD_NO_KEYS,
     .handler = vsl::Handler<CmdXGroupHelp>, .since = "5.0.0", .summary = kHelpSummary,
     .syntax = "", .complexity = "O(1)"},
    {.name = "XACK", .arity = -4, .flags = kWrite | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdXAck>, .since = "5.0.0", .summary = kXAckSummary,
     .syntax = "key group id [id ...]", .complexity = "O(1) for each message ID processed.",
     .args = docs::kXAckArgs},
    {.name = "XPENDING", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdXPending>, .since = "5.0.0", .summary = kXPendingSummary,
     .syntax = kXPendingSyntax, .complexity = kXPendingComplexity,
     .tips = kTipRandom, .args = docs::kXPendingArgs},
    {.name = "XCLAIM", .arity = -6, .flags = kWrite | kFast, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdXClaim>, .since = "5.0.0", .summary = kXClaimSummary,
     .syntax = kXClaimSyntax,
     .complexity = kXClaimComplexity,
     .tips = kTipRandom, .args = docs::kXClaimArgs},
    {.name = "XAUTOCLAIM", .arity = -6, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = vsl::Handler<CmdXAutoClaim>, .since = "6.2.0", .summary = kXAutoClaimSummary,
     .syntax = "key group consumer min-idle-time start [COUNT count] [JUSTID]",
     .complexity = "O(1) if COUNT is small.", .tips = kTipRandom,
     .args = docs::kXAutoClaimArgs},
    {.name = "XINFO", .arity = -2, .flags = 0, .keys = {}, .handler = nullptr, .since = "5.0.0",
     .summary = "A container for stream introspection commands", .syntax = "",
     .complexity = "Depends on subcommand."},
    {.name = "XINFO|CONSUMERS", .arity = 4, .flags = kRead, .keys = {kInfoKey},
     .handler = vsl::Handler<CmdXInfoConsumers>, .since = "5.0.0",
     .summary = "List the consumers in a consumer group", .syntax = "key groupname",
     .complexity = "O(1)", .tips = kTipRandom, .args = docs::kXInfoConsumersArgs},
    {.name = "XINFO|GROUPS", .arity = 3, .flags = kRead, .keys = {kInfoKey},
     .handler = vsl::Handler<CmdXInfoGroups>, .since = "5.0.0",
     .summary = "List the consumer groups of a stream", .syntax = "key", .complexity = "O(1)",
     .args = docs::kXInfoGroupsArgs},
    {.name = "XINFO|STREAM", .arity = -3, .flags = kRead, .keys = {kInfoKey},
     .handler = vsl::Handler<CmdXInfoStream>, .since = "5.0.0",
     .summary = "Get information about a stream", .syntax = "key [FULL [COUNT count]]",
     .complexity = "O(1)", .args = docs::kXInfoStreamArgs},
    {.name = "XINFO|HELP", .arity = 2, .flags = VSL_CMD_NO_KEYS,
     .handler = vsl::Handler<CmdXInfoHelp>, .since = "5.0.0", .summary = kHelpSummary,
     .syntax = "", .complexity = "O(1)"},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> GroupCommands() { return kCommands; }

}  // namespace vessel::streams
