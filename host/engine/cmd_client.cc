// CLIENT and its subcommands: connection names, listing and killing clients, pausing the
// server, reply suppression, unblocking. Redis 7.0's replies and errors; NO-TOUCH is Redis 7.2's.
// There is no SETINFO, as in the Redis 7.0 Vessel reports (INFO's redis_version): client
// libraries that send it on connect ignore the error, as they do with Redis 7.0, and CLIENT LIST
// prints Redis 7.0's fields (no lib-name, lib-ver).
//
// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO parse here; host/pubsub keeps the state.
#include <algorithm>

#include "host/engine/builtins.h"

namespace vessel::engine {

bool ValidClientAttr(std::string_view v) {
  for (char c : v)
    if (c < '!' || c > '~') return false;
  return true;
}

size_t ClientMemory(Session* s) {
  const ClientInfo& info = s->info();
  return sizeof(Session) + info.query_bytes.load(std::memory_order_relaxed) +
         info.query_free.load(std::memory_order_relaxed) +
         info.reply_capacity.load(std::memory_order_relaxed) +
         info.multi_bytes.load(std::memory_order_relaxed);
}

std::string ClientInfoLine(Session* s, int64_t now) {
  const ClientInfo& info = s->info();
  std::string name, user;
  {
    std::lock_guard l(info.mu);
    name = info.name;
    user = info.user;
  }
  const MessagingInfo& m = info.messaging;
  const uint32_t tracking = m.tracking.load(std::memory_order_relaxed);
  std::string flags;
  if (s->repl_role() == kReplRoleReplica) flags += 'S';
  if (s->repl_role() == kReplRoleMaster) flags += 'M';
  if (s->monitor()) flags += 'O';
  if (m.in_pubsub()) flags += 'P';
  if (info.in_multi.load(std::memory_order_relaxed)) flags += 'x';
  if (info.blocked.load(std::memory_order_relaxed)) flags += 'b';
  if (tracking & MessagingInfo::kTracking) flags += 't';
  if (tracking & MessagingInfo::kBrokenRedir) flags += 'R';
  if (tracking & MessagingInfo::kBcast) flags += 'B';
  if (info.no_evict.load(std::memory_order_relaxed)) flags += 'e';
  if (flags.empty()) flags = "N";
  const CommandSpec* last = info.last_cmd.load(std::memory_order_relaxed);
  const int64_t age = (now - info.created_ms) / 1000;
  const int64_t idle = (now - info.last_active_ms.load(std::memory_order_relaxed)) / 1000;
  // Buffers: the session's worker publishes them (Session::Process, OutputWritten); a session
  // listing itself reads its own as they are now, mid-batch, as Redis does. One output buffer
  // holds the replies: its pending bytes are shown as Redis would hold them, the first 16 KiB
  // in its reply buffer (obl), the rest in 16 KiB blocks (oll blocks, omem bytes).
  const size_t qbuf = info.query_bytes.load(std::memory_order_relaxed);
  const size_t qbuf_free = info.query_free.load(std::memory_order_relaxed);
  const size_t multi_mem = info.multi_bytes.load(std::memory_order_relaxed);
  size_t obl = info.output_bytes.load(std::memory_order_relaxed);
  size_t rbs = info.reply_capacity.load(std::memory_order_relaxed);
  size_t rbp = info.reply_peak.load(std::memory_order_relaxed);
  size_t argv_mem = 0;  // Redis's argv_len_sum: the arguments of the command running now
  const CommandCtx* running = Engine::running_command();
  if (running != nullptr && running->session == s) {
    obl = s->output().size() + (s->io() != nullptr ? s->io()->PendingOutput() : 0);
    rbs = s->output().capacity();
    rbp = std::max(rbp, obl);
    for (int i = 0; i < running->argc; ++i) argv_mem += running->argv[i].size();
  }
  constexpr size_t kReplyChunk = 16 * 1024;  // Redis's PROTO_REPLY_CHUNK_BYTES
  const size_t omem = obl > kReplyChunk ? obl - kReplyChunk : 0;
  const size_t oll = (omem + kReplyChunk - 1) / kReplyChunk;
  obl -= omem;
  const size_t tot_mem = sizeof(Session) + qbuf + qbuf_free + rbs + argv_mem + multi_mem;
  return Cat("id=", s->id(), " addr=", s->peer(), " laddr=", s->local(), " fd=", s->fd(),
             " name=", name, " age=", age, " idle=", idle, " flags=", flags,
             " db=", info.db.load(std::memory_order_relaxed),
             " sub=", m.subs.load(std::memory_order_relaxed),
             " psub=", m.psubs.load(std::memory_order_relaxed),
             " ssub=", m.ssubs.load(std::memory_order_relaxed),
             " multi=", info.multi_count.load(std::memory_order_relaxed), " qbuf=", qbuf,
             " qbuf-free=", qbuf_free, " argv-mem=", argv_mem, " multi-mem=", multi_mem,
             " rbs=", rbs, " rbp=", rbp, " obl=", obl, " oll=", oll, " omem=", omem,
             " tot-mem=", tot_mem,
             " events=r cmd=", last != nullptr ? last->name : std::string("NULL"), " user=", user,
             " redir=", m.redirect.load(std::memory_order_relaxed),
             " resp=", info.protocol.load(std::memory_order_relaxed));
}

// Client classes of TYPE filters: Redis's getClientTypeByName, or -2 when unknown.
constexpr int kTypeAny = -1, kTypeNormal = 0, kTypeReplica = 1, kTypePubsub = 2, kTypeMaster = 3;
int ClientType(std::string_view t) {
  if (EqualsIgnoreCase(t, "normal")) return kTypeNormal;
  if (EqualsIgnoreCase(t, "replica") || EqualsIgnoreCase(t, "slave")) return kTypeReplica;
  if (EqualsIgnoreCase(t, "master")) return kTypeMaster;
  if (EqualsIgnoreCase(t, "pubsub")) return kTypePubsub;
  return -2;
}
// Redis's getClientType: the master link, a replica, a subscriber, or a normal client.
bool OfType(Session* s, int type) {
  if (type == kTypeAny) return true;
  const int role = s->repl_role();
  if (role == kReplRoleMaster) return type == kTypeMaster;
  if (role == kReplRoleReplica) return type == kTypeReplica;
  return type == (s->info().messaging.in_pubsub() ? kTypePubsub : kTypeNormal);
}

namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// CLIENT ID
void CmdClientId(CommandCtx* ctx) { W(ctx).Int(static_cast<int64_t>(S(ctx).id())); }

// CLIENT SETNAME connection-name
void CmdClientSetName(CommandCtx* ctx) {
  if (!ValidClientAttr(Arg(ctx, 2)))
    return W(ctx).ErrorLine(
        "ERR Client names cannot contain spaces, newlines or special characters.");
  std::lock_guard l(S(ctx).info().mu);
  S(ctx).info().name = std::string(Arg(ctx, 2));
  ReplyOk(ctx);
}

// CLIENT GETNAME
void CmdClientGetName(CommandCtx* ctx) {
  std::string name;
  {
    std::lock_guard l(S(ctx).info().mu);
    name = S(ctx).info().name;
  }
  name.empty() ? W(ctx).Null() : W(ctx).Bulk(name);
}

// CLIENT INFO
void CmdClientInfo(CommandCtx* ctx) {
  W(ctx).Verbatim("txt", ClientInfoLine(&S(ctx), ctx->now_ms) + "\n");
}

// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]
void CmdClientList(CommandCtx* ctx) {
  std::vector<uint64_t> ids;
  int type = kTypeAny;
  for (int i = 2; i < ctx->argc; ++i) {
    if (EqualsIgnoreCase(Arg(ctx, i), "type") && i + 1 < ctx->argc) {
      const std::string_view t = Arg(ctx, ++i);
      type = ClientType(t);
      if (type < kTypeAny) return W(ctx).ErrorLine(Cat("ERR Unknown client type '", t, "'"));
    } else if (EqualsIgnoreCase(Arg(ctx, i), "id") && i + 1 < ctx->argc) {
      for (++i; i < ctx->argc; ++i) {
        int64_t id;
        if (!ParseInt64(Arg(ctx, i), &id) || id <= 0)
          return W(ctx).ErrorLine("ERR Invalid client ID");
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else {
      return ReplySyntaxError(ctx);
    }
  }
  std::vector<std::pair<uint64_t, std::string>> lines;
  E(ctx).ForEachSession([&](Session* s) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), s->id()) == ids.end()) return;
    if (!OfType(s, type)) return;
    lines.emplace_back(s->id(), ClientInfoLine(s, ctx->now_ms));
  });
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (auto& [id, line] : lines) out += line + "\n";
  W(ctx).Verbatim("txt", out);
}

// CLIENT KILL ip:port | CLIENT KILL [ID id] [ADDR ip:port] [LADDR ip:port] [TYPE type]
//   [USER username] [SKIPME yes|no] [MAXAGE maxage]
void CmdClientKill(CommandCtx* ctx) {
  const bool old_form = ctx->argc == 3;
  uint64_t id = 0;
  std::string_view addr, laddr, user;
  bool skipme = true;
  int type = kTypeAny;
  int64_t maxage = 0;
  if (old_form) {
    addr = Arg(ctx, 2);
    skipme = false;
  } else {
    if ((ctx->argc - 2) % 2 != 0) return ReplySyntaxError(ctx);
    for (int i = 2; i < ctx->argc; i += 2) {
      const std::string_view k = Arg(ctx, i), v = Arg(ctx, i + 1);
      if (EqualsIgnoreCase(k, "id")) {
        int64_t x;
        if (!ParseInt64(v, &x) || x <= 0)
          return W(ctx).ErrorLine("ERR client-id should be greater than 0");
        id = static_cast<uint64_t>(x);
      } else if (EqualsIgnoreCase(k, "addr")) {
        addr = v;
      } else if (EqualsIgnoreCase(k, "laddr")) {
        laddr = v;
      } else if (EqualsIgnoreCase(k, "user")) {
        user = v;
        if (E(ctx).access() != nullptr && !E(ctx).access()->HasUser(user))
          return W(ctx).ErrorLine(Cat("ERR No such user '", user, "'"));
      } else if (EqualsIgnoreCase(k, "maxage")) {
        if (!ParseInt64(v, &maxage) || maxage < 0) return ReplySyntaxError(ctx);
      } else if (EqualsIgnoreCase(k, "type")) {
        type = ClientType(v);
        if (type < kTypeAny) return W(ctx).ErrorLine(Cat("ERR Unknown client type '", v, "'"));
      } else if (EqualsIgnoreCase(k, "skipme")) {
        if (EqualsIgnoreCase(v, "yes")) {
          skipme = true;
        } else if (EqualsIgnoreCase(v, "no")) {
          skipme = false;
        } else {
          return ReplySyntaxError(ctx);
        }
      } else {
        return ReplySyntaxError(ctx);
      }
    }
  }
  std::vector<std::pair<uint64_t, int>> victims;
  {
    E(ctx).ForEachSession([&](Session* s) {
      if (id != 0 && s->id() != id) return;
      if (!OfType(s, type)) return;
      if (!user.empty()) {
        std::lock_guard l(s->info().mu);
        if (s->info().user != user) return;
      }
      if (!addr.empty() && s->peer() != addr) return;
      if (!laddr.empty() && s->local() != laddr) return;
      if (maxage > 0 && (ctx->now_ms - s->info().created_ms) / 1000 < maxage) return;
      if (skipme && s == ctx->session) return;
      victims.emplace_back(s->id(), s->worker());
    });
  }
  for (auto& [vid, worker] : victims) {
    if (vid == S(ctx).id()) {
      S(ctx).CloseAfterReply();  // killing ourselves: reply first, then close
    } else {
      E(ctx).KillSession(vid, worker);
    }
  }
  if (old_form) {
    if (victims.empty()) return W(ctx).ErrorLine("ERR No such client");
    return ReplyOk(ctx);
  }
  W(ctx).Int(static_cast<int64_t>(victims.size()));
}

// CLIENT NO-EVICT ON|OFF, CLIENT NO-TOUCH ON|OFF (accepted; clients are never evicted, and
// NO-EVICT shows as CLIENT LIST's 'e' flag)
void CmdClientOnOff(CommandCtx* ctx) {
  const bool on = EqualsIgnoreCase(Arg(ctx, 2), "on");
  if (!on && !EqualsIgnoreCase(Arg(ctx, 2), "off")) return ReplySyntaxError(ctx);
  if (ctx->cmd->sub_name == "no-evict") S(ctx).info().no_evict.store(on, std::memory_order_relaxed);
  ReplyOk(ctx);
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
void CmdClientUnblock(CommandCtx* ctx) {
  int64_t id;
  if (!IntArg(ctx, 2, &id)) return;
  bool error = false;
  if (ctx->argc == 4) {
    if (EqualsIgnoreCase(Arg(ctx, 3), "error")) {
      error = true;
    } else if (!EqualsIgnoreCase(Arg(ctx, 3), "timeout")) {
      return W(ctx).ErrorLine("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  } else if (ctx->argc > 4) {
    return ReplySyntaxError(ctx);
  }
  W(ctx).Int(E(ctx).UnblockById(static_cast<uint64_t>(id), error) ? 1 : 0);
}

// CLIENT PAUSE timeout [WRITE|ALL]
void CmdClientPause(CommandCtx* ctx) {
  PauseType type = PauseType::kAll;
  if (ctx->argc == 4) {
    if (EqualsIgnoreCase(Arg(ctx, 3), "write")) {
      type = PauseType::kWrite;
    } else if (!EqualsIgnoreCase(Arg(ctx, 3), "all")) {
      return W(ctx).ErrorLine("ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  } else if (ctx->argc > 4) {
    return ReplySyntaxError(ctx);
  }
  int64_t ms;
  if (!ParseInt64(Arg(ctx, 2), &ms))
    return W(ctx).ErrorLine("ERR timeout is not an integer or out of range");
  if (ms < 0) return W(ctx).ErrorLine("ERR timeout is negative");
  E(ctx).Pause(ms, type);
  ReplyOk(ctx);
}

// CLIENT UNPAUSE
void CmdClientUnpause(CommandCtx* ctx) {
  E(ctx).Unpause();
  ReplyOk(ctx);
}

// CLIENT REPLY ON|OFF|SKIP
void CmdClientReply(CommandCtx* ctx) {
  const std::string_view mode = Arg(ctx, 2);
  if (EqualsIgnoreCase(mode, "on")) {
    S(ctx).SetReplyMode(Session::ReplyMode::kOn);
    ReplyOk(ctx);
  } else if (EqualsIgnoreCase(mode, "off")) {
    S(ctx).SetReplyMode(Session::ReplyMode::kOff);
  } else if (EqualsIgnoreCase(mode, "skip")) {
    S(ctx).SetReplyMode(Session::ReplyMode::kSkipNext);
  } else {
    ReplySyntaxError(ctx);
  }
}

// CLIENT TRACKING ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN]
//   [OPTOUT] [NOLOOP]
void CmdClientTracking(CommandCtx* ctx) {
  Messaging* m = E(ctx).messaging();
  if (m == nullptr) return W(ctx).ErrorLine("ERR client tracking is not available");
  TrackingOptions o;
  for (int j = 3; j < ctx->argc; ++j) {
    const bool more = j + 1 < ctx->argc;
    const std::string_view a = Arg(ctx, j);
    if (EqualsIgnoreCase(a, "redirect") && more) {
      ++j;
      if (o.redirect != 0)
        return W(ctx).ErrorLine("ERR A client can only redirect to a single other client");
      int64_t id;
      if (!IntArg(ctx, j, &id)) return;
      // As Redis: the target must exist now (it may go away later: "broken redirect").
      E(ctx).ForEachSession([&](Session* s) {
        if (static_cast<int64_t>(s->id()) == id) o.redirect_worker = s->worker();
      });
      if (o.redirect_worker < 0)
        return W(ctx).ErrorLine("ERR The client ID you want redirect to does not exist");
      o.redirect = static_cast<uint64_t>(id);
    } else if (EqualsIgnoreCase(a, "bcast")) {
      o.bcast = true;
    } else if (EqualsIgnoreCase(a, "optin")) {
      o.optin = true;
    } else if (EqualsIgnoreCase(a, "optout")) {
      o.optout = true;
    } else if (EqualsIgnoreCase(a, "noloop")) {
      o.noloop = true;
    } else if (EqualsIgnoreCase(a, "prefix") && more) {
      o.prefixes.emplace_back(Arg(ctx, ++j));
    } else {
      return ReplySyntaxError(ctx);
    }
  }
  if (EqualsIgnoreCase(Arg(ctx, 2), "on")) {
    o.on = true;
  } else if (!EqualsIgnoreCase(Arg(ctx, 2), "off")) {
    return ReplySyntaxError(ctx);
  }
  const std::string err = m->SetTracking(&S(ctx), o);
  err.empty() ? ReplyOk(ctx) : W(ctx).ErrorLine(err);
}

// CLIENT CACHING YES|NO
void CmdClientCaching(CommandCtx* ctx) {
  Messaging* m = E(ctx).messaging();
  if (m == nullptr) return W(ctx).ErrorLine("ERR client tracking is not available");
  const std::string err = m->SetCaching(&S(ctx), Arg(ctx, 2));
  err.empty() ? ReplyOk(ctx) : W(ctx).ErrorLine(err);
}

// CLIENT GETREDIR
void CmdClientGetRedir(CommandCtx* ctx) {
  W(ctx).Int(S(ctx).info().messaging.redirect.load(std::memory_order_relaxed));
}

// CLIENT TRACKINGINFO
void CmdClientTrackingInfo(CommandCtx* ctx) {
  TrackingInfo t;
  if (Messaging* m = E(ctx).messaging()) {
    t = m->GetTrackingInfo(&S(ctx));
  } else {
    t.flags = {"off"};
  }
  W(ctx).Aggregate(resp::AggKind::kMap, 3);
  W(ctx).Bulk("flags");
  W(ctx).Aggregate(resp::AggKind::kSet, static_cast<int64_t>(t.flags.size()));
  for (const std::string& f : t.flags) W(ctx).Bulk(f);
  W(ctx).Bulk("redirect");
  W(ctx).Int(t.redirect);
  W(ctx).Bulk("prefixes");
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(t.prefixes.size()));
  for (const std::string& p : t.prefixes) W(ctx).Bulk(p);
}

void CmdClientHelp(CommandCtx* ctx) {
  ReplyHelp(ctx, {"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "CACHING (YES|NO)",
                  "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
                  "GETREDIR",
                  "    Return the client ID we are redirecting to when tracking is enabled.",
                  "GETNAME",
                  "    Return the name of the current connection.",
                  "ID",
                  "    Return the ID of the current connection.",
                  "INFO",
                  "    Return information about the current client connection.",
                  "KILL <ip:port>",
                  "    Kill connection made from <ip:port>.",
                  "KILL <option> <value> [<option> <value> [...]]",
                  "    Kill connections. Options are:",
                  "    * ADDR (<ip:port>|<unixsocket>:0)",
                  "      Kill connections made from the specified address",
                  "    * LADDR (<ip:port>|<unixsocket>:0)",
                  "      Kill connections made to specified local address",
                  "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                  "      Kill connections by type.",
                  "    * USER <username>",
                  "      Kill connections authenticated by <username>.",
                  "    * SKIPME (YES|NO)",
                  "      Skip killing current connection (default: yes).",
                  "LIST [options ...]",
                  "    Return information about client connections. Options:",
                  "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                  "      Return clients of specified type.",
                  "UNPAUSE",
                  "    Stop the current client pause, resuming traffic.",
                  "PAUSE <timeout> [WRITE|ALL]",
                  "    Suspend all, or just write, clients for <timeout> milliseconds.",
                  "REPLY (ON|OFF|SKIP)",
                  "    Control the replies sent to the current connection.",
                  "SETNAME <name>",
                  "    Assign the name <name> to the current connection.",
                  "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                  "    Unblock the specified blocked client.",
                  "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
                  "         [OPTIN] [OPTOUT] [NOLOOP]",
                  "    Control server assisted client side caching.",
                  "TRACKINGINFO",
                  "    Report tracking status for the current connection.",
                  "NO-EVICT (ON|OFF)",
                  "    Protect current client connection from eviction.",
                  "HELP",
                  "    Prints this help."});
}

void CmdContainer(CommandCtx*) {}

constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint64_t kA = VSL_CMD_ADMIN;
constexpr uint64_t kL = kCmdLoading | kCmdStale;
constexpr uint64_t kNs = VSL_CMD_NOSCRIPT;

}  // namespace

void RegisterClientCommands(Registry& r) {
  const char* c = "connection";
  // clang-format off
  AddBuiltins(r, {
      {.name = "CLIENT", .arity = -2, .flags = 0, .fn = CmdContainer, .group = c, .since = "2.4.0",
       .summary = "A container for client connection commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "ID", .arity = 2, .flags = kL | kNs, .fn = CmdClientId, .group = c, .since = "5.0.0",
       .summary = "Returns the unique client ID of the connection.", .syntax = "",
       .complexity = "O(1)"},
      {.name = "SETNAME", .arity = 3, .flags = kL | kNs, .fn = CmdClientSetName, .group = c,
       .since = "2.6.9", .summary = "Sets the connection name.", .syntax = "connection-name",
       .complexity = "O(1)"},
      {.name = "GETNAME", .arity = 2, .flags = kL | kNs, .fn = CmdClientGetName, .group = c,
       .since = "2.6.9", .summary = "Returns the name of the connection.", .syntax = "",
       .complexity = "O(1)"},
      {.name = "INFO", .arity = 2, .flags = kL | kNs, .fn = CmdClientInfo, .group = c,
       .since = "6.2.0", .summary = "Returns information about the connection.", .syntax = "",
       .complexity = "O(1)", .tips = "nondeterministic_output"},
      {.name = "LIST", .arity = -2, .flags = kA | kL | kNs, .fn = CmdClientList, .group = c,
       .since = "2.4.0", .summary = "Lists open connections.",
       .syntax = "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]",
       .complexity = "O(N) where N is the number of client connections",
       .tips = "nondeterministic_output"},
      {.name = "KILL", .arity = -3, .flags = kA | kL | kNs, .fn = CmdClientKill, .group = c,
       .since = "2.4.0", .summary = "Terminates open connections.",
       .syntax = "ip:port | [ID client-id] [TYPE NORMAL|MASTER|SLAVE|REPLICA|PUBSUB] [USER "
         "username] [ADDR ip:port] [LADDR ip:port] [SKIPME yes|no] [MAXAGE maxage]",
       .complexity = "O(N) where N is the number of client connections"},
      {.name = "PAUSE", .arity = -3, .flags = kA | kL | kNs, .fn = CmdClientPause, .group = c,
       .since = "3.0.0", .summary = "Suspends commands processing.",
       .syntax = "timeout [WRITE|ALL]", .complexity = "O(1)"},
      {.name = "UNPAUSE", .arity = 2, .flags = kA | kL | kNs, .fn = CmdClientUnpause, .group = c,
       .since = "6.2.0", .summary = "Resumes processing commands from paused clients.",
       .syntax = "", .complexity = "O(N) Where N is the number of paused clients"},
      {.name = "REPLY", .arity = 3, .flags = kL | kNs, .fn = CmdClientReply, .group = c,
       .since = "3.2.0", .summary = "Instructs the server whether to reply to commands.",
       .syntax = "ON|OFF|SKIP", .complexity = "O(1)"},
      {.name = "NO-EVICT", .arity = 3, .flags = kA | kL | kNs, .fn = CmdClientOnOff, .group = c,
       .since = "7.0.0", .summary = "Sets the client eviction mode of the connection.",
       .syntax = "ON|OFF", .complexity = "O(1)"},
      {.name = "NO-TOUCH", .arity = 3, .flags = kF | kL, .fn = CmdClientOnOff, .group = c,
       .since = "7.2.0",
       .summary = "Controls whether commands sent by the client affect the LRU/LFU of accessed "
         "keys.", .syntax = "ON|OFF", .complexity = "O(1)"},
      {.name = "UNBLOCK", .arity = -3, .flags = kA | kL | kNs, .fn = CmdClientUnblock, .group = c,
       .since = "5.0.0",
       .summary = "Unblocks a client blocked by a blocking command from a different connection.",
       .syntax = "client-id [TIMEOUT|ERROR]",
       .complexity = "O(log N) where N is the number of client connections"},
      {.name = "TRACKING", .arity = -3, .flags = kNs | kL, .fn = CmdClientTracking, .group = c,
       .since = "6.0.0",
       .summary = "Controls server-assisted client-side caching for the connection.",
       .syntax = "ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] "
         "[OPTIN] [OPTOUT] [NOLOOP]",
       .complexity = "O(1). Some options may introduce additional complexity."},
      {.name = "CACHING", .arity = 3, .flags = kNs | kL, .fn = CmdClientCaching, .group = c,
       .since = "6.0.0",
       .summary = "Instructs the server whether to track the keys in the next request.",
       .syntax = "YES|NO", .complexity = "O(1)"},
      {.name = "GETREDIR", .arity = 2, .flags = kNs | kL, .fn = CmdClientGetRedir, .group = c,
       .since = "6.0.0",
       .summary = "Returns the client ID to which the connection's tracking notifications are "
         "redirected.", .syntax = "", .complexity = "O(1)"},
      {.name = "TRACKINGINFO", .arity = 2, .flags = kNs | kL, .fn = CmdClientTrackingInfo,
       .group = c, .since = "6.2.0",
       .summary = "Returns information about server-assisted client-side caching for the "
         "connection.", .syntax = "", .complexity = "O(1)"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdClientHelp, .group = c, .since = "5.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "client");
  // clang-format on
}

}  // namespace vessel::engine
