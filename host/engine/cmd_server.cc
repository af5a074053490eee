// Connection and server commands: PING ECHO QUIT RESET HELLO AUTH TIME ROLE LASTSAVE WAIT
// SHUTDOWN CLIENT MODULE MEMORY DEBUG.
//
// Deliberate differences from Redis: there are no users or passwords yet, so AUTH behaves as
// Redis does with no password configured; HELLO reports server "vessel" with the Redis version
// whose behaviour it implements.
#include <unistd.h>

#include <chrono>
#include <thread>

#include "host/engine/builtins.h"
#include "host/engine/lazy_free.h"
#include "host/engine/memory.h"
#include "host/engine/version.h"

namespace vessel::engine {
namespace {

Engine& E(vsl_ctx* ctx) { return *ctx->engine; }

// PING [message]
void CmdPing(vsl_ctx* ctx) {
  if (ctx->argc > 2) return W(ctx).ErrorLine("ERR wrong number of arguments for 'ping' command");
  ctx->argc == 1 ? W(ctx).Simple("PONG") : W(ctx).Bulk(Arg(ctx, 1));
}

// ECHO message
void CmdEcho(vsl_ctx* ctx) { W(ctx).Bulk(Arg(ctx, 1)); }

// QUIT
void CmdQuit(vsl_ctx* ctx) {
  ReplyOk(ctx);
  S(ctx).CloseAfterReply();
}

// TIME
void CmdTime(vsl_ctx* ctx) {
  using namespace std::chrono;
  const int64_t us = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  W(ctx).Aggregate(resp::AggKind::kArray, 2);
  W(ctx).Bulk(std::to_string(us / 1000000));
  W(ctx).Bulk(std::to_string(us % 1000000));
}

// ROLE
void CmdRole(vsl_ctx* ctx) {
  W(ctx).Aggregate(resp::AggKind::kArray, 3);
  W(ctx).Bulk("master");
  W(ctx).Int(0);
  W(ctx).Aggregate(resp::AggKind::kArray, 0);
}

// LASTSAVE
void CmdLastSave(vsl_ctx* ctx) { W(ctx).Int(E(ctx).start_ms() / 1000); }

// WAIT numreplicas timeout
void CmdWait(vsl_ctx* ctx) {
  int64_t n, timeout;
  if (!IntArg(ctx, 1, &n) || !IntArg(ctx, 2, &timeout)) return;
  if (timeout < 0) return W(ctx).ErrorLine("ERR timeout is negative");
  W(ctx).Int(0);  // no replicas
}

// Client names and library names: printable, no spaces (Redis validateClientAttr).
bool ValidClientAttr(std::string_view v) {
  for (char c : v)
    if (c < '!' || c > '~') return false;
  return true;
}

void ReplyModules(vsl_ctx* ctx) {
  const auto& mods = E(ctx).registry().modules();
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(mods.size()));
  for (const auto& m : mods) {
    W(ctx).Aggregate(resp::AggKind::kMap, 4);
    W(ctx).Bulk("name");
    W(ctx).Bulk(m->name);
    W(ctx).Bulk("ver");
    W(ctx).Int(VersionNumber(m->version));
    W(ctx).Bulk("path");
    W(ctx).Bulk(m->path);
    W(ctx).Bulk("args");
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(m->args.size()));
    for (const auto& a : m->args) W(ctx).Bulk(a);
  }
}

// AUTH [username] password, without any configured password.
bool CheckAuth(vsl_ctx* ctx, std::string_view user) {
  if (user == "default") return true;
  W(ctx).ErrorLine("WRONGPASS invalid username-password pair or user is disabled.");
  return false;
}

void CmdAuth(vsl_ctx* ctx) {
  if (ctx->argc > 3) return ReplySyntaxError(ctx);
  if (ctx->argc == 2)
    return W(ctx).ErrorLine(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  if (CheckAuth(ctx, Arg(ctx, 1))) ReplyOk(ctx);
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void CmdHello(vsl_ctx* ctx) {
  int protocol = S(ctx).protocol();
  int i = 1;
  if (ctx->argc >= 2) {
    int64_t v;
    if (!ParseInt64(Arg(ctx, 1), &v) || v > INT32_MAX || v < INT32_MIN)
      return W(ctx).ErrorLine("ERR Protocol version is not an integer or out of range");
    if (v < 2 || v > 3) return W(ctx).ErrorLine("NOPROTO unsupported protocol version");
    protocol = static_cast<int>(v);
    i = 2;
  }
  std::string_view name;
  bool set_name = false;
  for (; i < ctx->argc; ++i) {
    const int more = ctx->argc - i - 1;
    if (EqualsIgnoreCase(Arg(ctx, i), "auth") && more >= 2) {
      if (!CheckAuth(ctx, Arg(ctx, i + 1))) return;
      i += 2;
    } else if (EqualsIgnoreCase(Arg(ctx, i), "setname") && more >= 1) {
      name = Arg(ctx, ++i);
      if (!ValidClientAttr(name))
        return W(ctx).ErrorLine(
            "ERR Client names cannot contain spaces, newlines or special characters.");
      set_name = true;
    } else {
      return W(ctx).ErrorLine(Cat("ERR Syntax error in HELLO option '", Arg(ctx, i), "'"));
    }
  }
  if (set_name) {
    std::lock_guard l(S(ctx).info().mu);
    S(ctx).info().name = std::string(name);
  }
  S(ctx).set_protocol(protocol);
  W(ctx).Aggregate(resp::AggKind::kMap, 7);
  W(ctx).Bulk("server");
  W(ctx).Bulk("vessel");
  W(ctx).Bulk("version");
  W(ctx).Bulk(kRedisVersion);
  W(ctx).Bulk("proto");
  W(ctx).Int(protocol);
  W(ctx).Bulk("id");
  W(ctx).Int(static_cast<int64_t>(S(ctx).id()));
  W(ctx).Bulk("mode");
  W(ctx).Bulk("standalone");
  W(ctx).Bulk("role");
  W(ctx).Bulk("master");
  W(ctx).Bulk("modules");
  ReplyModules(ctx);
}

// RESET
void CmdReset(vsl_ctx* ctx) {
  E(ctx).ResetSession(&S(ctx));
  W(ctx).Simple("RESET");
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
void CmdShutdown(vsl_ctx* ctx) {
  for (int i = 1; i < ctx->argc; ++i) {
    const std::string_view o = Arg(ctx, i);
    if (EqualsIgnoreCase(o, "abort")) return W(ctx).ErrorLine("ERR No shutdown in progress.");
    if (!EqualsIgnoreCase(o, "nosave") && !EqualsIgnoreCase(o, "save") &&
        !EqualsIgnoreCase(o, "now") && !EqualsIgnoreCase(o, "force"))
      return ReplySyntaxError(ctx);
  }
  // Like Redis, no reply: the connection closes as the server stops.
  S(ctx).CloseAfterReply();
  E(ctx).RequestShutdown();
}

// ---- CLIENT ----

std::string ClientLine(Engine& e, Session* s, int64_t now) {
  const ClientInfo& info = s->info();
  std::string name, lib_name, lib_ver;
  {
    std::lock_guard l(info.mu);
    name = info.name;
    lib_name = info.lib_name;
    lib_ver = info.lib_ver;
  }
  std::string flags;
  if (info.blocked.load(std::memory_order_relaxed)) flags += 'b';
  if (info.in_multi.load(std::memory_order_relaxed)) flags += 'x';
  if (flags.empty()) flags = "N";
  const CommandSpec* last = info.last_cmd.load(std::memory_order_relaxed);
  const int64_t age = (now - info.created_ms) / 1000;
  const int64_t idle = (now - info.last_active_ms.load(std::memory_order_relaxed)) / 1000;
  const size_t obl = info.output_bytes.load(std::memory_order_relaxed);
  return Cat("id=", s->id(), " addr=", s->peer(), " laddr=", s->local(), " fd=", s->fd(),
             " name=", name, " age=", age, " idle=", idle, " flags=", flags,
             " db=", info.db.load(std::memory_order_relaxed),
             " sub=0 psub=0 ssub=0 multi=", info.multi_count.load(std::memory_order_relaxed),
             " qbuf=0 qbuf-free=0 argv-mem=0", " multi-mem=0 rbs=16384 rbp=0 obl=", obl,
             " oll=0 omem=", obl, " tot-mem=", obl + 16384,
             " events=r cmd=", last != nullptr ? last->name : std::string("NULL"),
             " user=default redir=-1 resp=", info.protocol.load(std::memory_order_relaxed),
             " lib-name=", lib_name, " lib-ver=", lib_ver);
}

// CLIENT ID
void CmdClientId(vsl_ctx* ctx) { W(ctx).Int(static_cast<int64_t>(S(ctx).id())); }

// CLIENT SETNAME connection-name
void CmdClientSetName(vsl_ctx* ctx) {
  if (!ValidClientAttr(Arg(ctx, 2)))
    return W(ctx).ErrorLine(
        "ERR Client names cannot contain spaces, newlines or special characters.");
  std::lock_guard l(S(ctx).info().mu);
  S(ctx).info().name = std::string(Arg(ctx, 2));
  ReplyOk(ctx);
}

// CLIENT GETNAME
void CmdClientGetName(vsl_ctx* ctx) {
  std::string name;
  {
    std::lock_guard l(S(ctx).info().mu);
    name = S(ctx).info().name;
  }
  name.empty() ? W(ctx).Null() : W(ctx).Bulk(name);
}

// CLIENT SETINFO LIB-NAME libname | LIB-VER libver
void CmdClientSetInfo(vsl_ctx* ctx) {
  const std::string_view attr = Arg(ctx, 2), value = Arg(ctx, 3);
  const bool is_name = EqualsIgnoreCase(attr, "lib-name");
  if (!is_name && !EqualsIgnoreCase(attr, "lib-ver"))
    return W(ctx).ErrorLine(Cat("ERR Unrecognized option '", attr, "'"));
  if (!ValidClientAttr(value))
    return W(ctx).ErrorLine(Cat("ERR ", is_name ? "lib-name" : "lib-ver",
                                " cannot contain spaces, newlines or special characters."));
  std::lock_guard l(S(ctx).info().mu);
  (is_name ? S(ctx).info().lib_name : S(ctx).info().lib_ver) = std::string(value);
  ReplyOk(ctx);
}

// CLIENT INFO
void CmdClientInfo(vsl_ctx* ctx) {
  W(ctx).Verbatim("txt", ClientLine(E(ctx), &S(ctx), ctx->now_ms) + "\n");
}

// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]
void CmdClientList(vsl_ctx* ctx) {
  std::vector<uint64_t> ids;
  bool none = false;
  for (int i = 2; i < ctx->argc; ++i) {
    if (EqualsIgnoreCase(Arg(ctx, i), "type") && i + 1 < ctx->argc) {
      const std::string_view t = Arg(ctx, ++i);
      if (EqualsIgnoreCase(t, "normal")) continue;
      if (EqualsIgnoreCase(t, "master") || EqualsIgnoreCase(t, "replica") ||
          EqualsIgnoreCase(t, "slave") || EqualsIgnoreCase(t, "pubsub")) {
        none = true;
        continue;
      }
      return W(ctx).ErrorLine(Cat("ERR Unknown client type '", t, "'"));
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
  if (!none) {
    E(ctx).ForEachSession([&](Session* s) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), s->id()) == ids.end()) return;
      lines.emplace_back(s->id(), ClientLine(E(ctx), s, ctx->now_ms));
    });
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (auto& [id, line] : lines) out += line + "\n";
  W(ctx).Verbatim("txt", out);
}

// CLIENT KILL ip:port | CLIENT KILL [ID id] [ADDR ip:port] [LADDR ip:port] [TYPE type]
//   [USER username] [SKIPME yes|no] [MAXAGE maxage]
void CmdClientKill(vsl_ctx* ctx) {
  const bool old_form = ctx->argc == 3;
  uint64_t id = 0;
  std::string_view addr, laddr, user;
  bool skipme = true, type_none = false;
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
      } else if (EqualsIgnoreCase(k, "maxage")) {
        if (!ParseInt64(v, &maxage) || maxage < 0) return ReplySyntaxError(ctx);
      } else if (EqualsIgnoreCase(k, "type")) {
        if (EqualsIgnoreCase(v, "normal")) continue;
        if (EqualsIgnoreCase(v, "master") || EqualsIgnoreCase(v, "replica") ||
            EqualsIgnoreCase(v, "slave") || EqualsIgnoreCase(v, "pubsub")) {
          type_none = true;
          continue;
        }
        return W(ctx).ErrorLine(Cat("ERR Unknown client type '", v, "'"));
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
  if (!type_none && (user.empty() || user == "default")) {
    E(ctx).ForEachSession([&](Session* s) {
      if (id != 0 && s->id() != id) return;
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

// CLIENT NO-EVICT ON|OFF, CLIENT NO-TOUCH ON|OFF (accepted; nothing is evicted yet)
void CmdClientOnOff(vsl_ctx* ctx) {
  if (!EqualsIgnoreCase(Arg(ctx, 2), "on") && !EqualsIgnoreCase(Arg(ctx, 2), "off"))
    return ReplySyntaxError(ctx);
  ReplyOk(ctx);
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
void CmdClientUnblock(vsl_ctx* ctx) {
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

void ReplyHelp(vsl_ctx* ctx, std::initializer_list<const char*> lines) {
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(lines.size()));
  for (const char* l : lines) W(ctx).Simple(l);
}

void CmdClientHelp(vsl_ctx* ctx) {
  ReplyHelp(ctx, {"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "GETNAME",
                  "    Return the name of the current connection.",
                  "ID",
                  "    Return the ID of the current connection.",
                  "INFO",
                  "    Return information about the current client connection.",
                  "KILL <ip:port>",
                  "    Kill connection made from <ip:port>.",
                  "KILL <option> <value> [<option> <value> [...]]",
                  "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME, MAXAGE.",
                  "LIST [options ...]",
                  "    Return information about client connections.",
                  "SETINFO <option> <value>",
                  "    Set client meta attr (LIB-NAME, LIB-VER).",
                  "SETNAME <name>",
                  "    Assign the name <name> to the current connection.",
                  "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                  "    Unblock the specified blocked client.",
                  "HELP",
                  "    Print this help."});
}

// MODULE LIST
void CmdModuleList(vsl_ctx* ctx) { ReplyModules(ctx); }
void CmdModuleHelp(vsl_ctx* ctx) {
  ReplyHelp(ctx, {"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "LIST",
                  "    Return a list of loaded modules.", "HELP", "    Print this help."});
}

// ---- MEMORY ----

// MEMORY USAGE key [SAMPLES count]
void CmdMemoryUsage(vsl_ctx* ctx) {
  if (ctx->argc == 5) {
    int64_t samples;
    if (!EqualsIgnoreCase(Arg(ctx, 3), "samples")) return ReplySyntaxError(ctx);
    if (!IntArg(ctx, 4, &samples)) return;
    if (samples < 0) return ReplySyntaxError(ctx);
  } else if (ctx->argc != 3) {
    return ReplySyntaxError(ctx);
  }
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  const vsl_type* t = E(ctx).registry().TypeById(e->type_id());
  size_t bytes = e->AllocatedBytes() + sizeof(void*);  // the entry and its bucket slot
  {
    memory::ModuleScope scope(t->module->id);
    bytes += t->desc.mem_usage(nullptr, e->value);
  }
  W(ctx).Int(static_cast<int64_t>(bytes));
}

// MEMORY STATS
void CmdMemoryStats(vsl_ctx* ctx) {
  const memory::AllocatorStats st = memory::ReadStats();
  const size_t rss = memory::ProcessRss();
  uint64_t keys = 0;
  for (auto& db : E(ctx).dbs()) keys += db->KeyCount();
  const auto& mods = E(ctx).registry().modules();
  W(ctx).Aggregate(resp::AggKind::kMap, 12 + static_cast<int64_t>(mods.size()));
  auto kv = [&](std::string_view k, int64_t v) {
    W(ctx).Bulk(k);
    W(ctx).Int(v);
  };
  kv("peak.allocated", static_cast<int64_t>(st.allocated));
  kv("total.allocated", static_cast<int64_t>(st.allocated));
  kv("startup.allocated", 0);
  kv("clients.normal", static_cast<int64_t>(E(ctx).connected_clients().load()));
  kv("keys.count", static_cast<int64_t>(keys));
  kv("keys.bytes-per-key", keys ? static_cast<int64_t>(st.allocated / keys) : 0);
  kv("allocator.allocated", static_cast<int64_t>(st.allocated));
  kv("allocator.active", static_cast<int64_t>(st.active));
  kv("allocator.resident", static_cast<int64_t>(st.resident));
  kv("allocator.mapped", static_cast<int64_t>(st.mapped));
  kv("rss", static_cast<int64_t>(rss));
  W(ctx).Bulk("allocator.name");
  W(ctx).Bulk(st.jemalloc ? "jemalloc" : "libc");
  for (const auto& m : mods) kv(Cat("module.", m->name, ".allocated"), memory::ModuleBytes(m->id));
}

// MEMORY PURGE
void CmdMemoryPurge(vsl_ctx* ctx) {
  memory::Purge();
  ReplyOk(ctx);
}

// MEMORY MALLOC-STATS
void CmdMemoryMallocStats(vsl_ctx* ctx) { W(ctx).Verbatim("txt", memory::AllocatorReport()); }

// MEMORY DOCTOR
void CmdMemoryDoctor(vsl_ctx* ctx) {
  W(ctx).Verbatim("txt",
                  "Hi Sam, I can't find any memory issue in your instance. I can only "
                  "account for what occurs on this base.");
}

void CmdMemoryHelp(vsl_ctx* ctx) {
  ReplyHelp(ctx, {"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DOCTOR",
                  "    Return memory problems reports.", "MALLOC-STATS",
                  "    Return internal statistics report from the memory allocator.", "PURGE",
                  "    Attempt to purge dirty pages for reclamation by the allocator.", "STATS",
                  "    Return information about the memory usage of the server.",
                  "USAGE <key> [SAMPLES <count>]",
                  "    Return memory in bytes used by <key> and its value.", "HELP",
                  "    Print this help."});
}

// ---- DEBUG ----

// DEBUG SLEEP seconds | DEBUG SET-ACTIVE-EXPIRE 0|1 | DEBUG HELP
void CmdDebug(vsl_ctx* ctx) {
  const std::string_view sub = Arg(ctx, 1);
  if (EqualsIgnoreCase(sub, "sleep") && ctx->argc >= 3) {
    double secs;
    if (!ParseDouble(Arg(ctx, 2), &secs) || secs < 0)
      return W(ctx).ErrorLine("ERR value is not a valid float");
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
    return ReplyOk(ctx);
  }
  if (EqualsIgnoreCase(sub, "set-active-expire") && ctx->argc == 3) {
    E(ctx).set_active_expire(Arg(ctx, 2) != "0");
    return ReplyOk(ctx);
  }
  if (EqualsIgnoreCase(sub, "help")) {
    return ReplyHelp(
        ctx,
        {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "SET-ACTIVE-EXPIRE <0|1>", "    Setting it to 0 disables expiring keys in background.",
         "SLEEP <seconds>", "    Stop the worker for <seconds>.", "HELP", "    Print this help."});
  }
  W(ctx).ErrorLine(Cat("ERR unknown subcommand '", sub, "'. Try DEBUG HELP."));
}

void CmdContainer(vsl_ctx*) {}

constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint64_t kL = kCmdLoading | kCmdStale;
constexpr uint64_t kA = VSL_CMD_ADMIN;

}  // namespace

void RegisterServerCommands(Registry& r) {
  const char* c = "connection";
  const char* s = "server";
  AddBuiltins(
      r,
      {
          {"PING",
           -1,
           kF | kCmdSentinel,
           {},
           CmdPing,
           c,
           "1.0.0",
           "Returns the server's liveliness response.",
           "[message]",
           "O(1)"},
          {"ECHO", 2, kF, {}, CmdEcho, c, "1.0.0", "Returns the given string.", "message", "O(1)"},
          {"QUIT",
           -1,
           kF | kL | kCmdNoAuth | kCmdTxControl | kCmdAllowBusy,
           {},
           CmdQuit,
           c,
           "1.0.0",
           "Closes the connection.",
           "",
           "O(1)"},
          {"RESET",
           1,
           kF | kL | kCmdNoAuth | kCmdTxControl,
           {},
           CmdReset,
           c,
           "6.2.0",
           "Resets the connection.",
           "",
           "O(1)"},
          {"HELLO",
           -1,
           kF | kL | kCmdNoAuth,
           {},
           CmdHello,
           c,
           "6.0.0",
           "Handshakes with the Redis server.",
           "[protover [AUTH username password] [SETNAME clientname]]",
           "O(1)"},
          {"AUTH",
           -2,
           kF | kL | kCmdNoAuth,
           {},
           CmdAuth,
           c,
           "1.0.0",
           "Authenticates the connection.",
           "[username] password",
           "O(N)"},
          {"TIME", 1, kF | kL, {}, CmdTime, s, "2.6.0", "Returns the server time.", "", "O(1)"},
          {"ROLE",
           1,
           kF | kL,
           {},
           CmdRole,
           s,
           "2.8.12",
           "Returns the replication role.",
           "",
           "O(1)"},
          {"LASTSAVE",
           1,
           kF | kL,
           {},
           CmdLastSave,
           s,
           "1.0.0",
           "Returns the Unix timestamp of the last successful save to disk.",
           "",
           "O(1)"},
          {"WAIT",
           3,
           0,
           {},
           CmdWait,
           "generic",
           "3.0.0",
           "Blocks until the asynchronous replication of all preceding write commands sent by the "
           "connection is completed.",
           "numreplicas timeout",
           "O(1)"},
          {"SHUTDOWN",
           -1,
           kA | kL | kCmdNoMulti,
           {},
           CmdShutdown,
           s,
           "1.0.0",
           "Synchronously saves the database(s) to disk and shuts down the Redis server.",
           "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]",
           "O(N)"},
          {"DEBUG",
           -2,
           kA | kL | kCmdProtected,
           {},
           CmdDebug,
           s,
           "1.0.0",
           "A container for debugging commands.",
           "subcommand [argument]",
           "Depends on subcommand."},
          {"CLIENT",
           -2,
           0,
           {},
           CmdContainer,
           c,
           "2.4.0",
           "A container for client connection commands.",
           "",
           "Depends on subcommand."},
          {"MODULE",
           -2,
           0,
           {},
           CmdContainer,
           s,
           "4.0.0",
           "A container for module commands.",
           "",
           "Depends on subcommand."},
          {"MEMORY",
           -2,
           0,
           {},
           CmdContainer,
           s,
           "4.0.0",
           "A container for memory diagnostics commands.",
           "",
           "Depends on subcommand."},
      });
  AddBuiltins(
      r,
      {
          {"ID",
           2,
           kF | kL,
           {},
           CmdClientId,
           c,
           "5.0.0",
           "Returns the unique client ID of the connection.",
           "",
           "O(1)"},
          {"SETNAME",
           3,
           kF | kL,
           {},
           CmdClientSetName,
           c,
           "2.6.9",
           "Sets the connection name.",
           "connection-name",
           "O(1)"},
          {"GETNAME",
           2,
           kF | kL,
           {},
           CmdClientGetName,
           c,
           "2.6.9",
           "Returns the name of the connection.",
           "",
           "O(1)"},
          {"SETINFO",
           4,
           kF | kL,
           {},
           CmdClientSetInfo,
           c,
           "7.2.0",
           "Sets information specific to the client or connection.",
           "LIB-NAME libname | LIB-VER libver",
           "O(1)"},
          {"INFO",
           2,
           kF | kL,
           {},
           CmdClientInfo,
           c,
           "6.2.0",
           "Returns information about the connection.",
           "",
           "O(1)"},
          {"LIST",
           -2,
           kA | kL,
           {},
           CmdClientList,
           c,
           "2.4.0",
           "Lists open connections.",
           "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]",
           "O(N) where N is the number of client connections"},
          {"KILL",
           -3,
           kA | kL,
           {},
           CmdClientKill,
           c,
           "2.4.0",
           "Terminates open connections.",
           "ip:port | [ID client-id] [TYPE NORMAL|MASTER|SLAVE|REPLICA|PUBSUB] [USER username] "
           "[ADDR ip:port] [LADDR ip:port] [SKIPME yes|no] [MAXAGE maxage]",
           "O(N) where N is the number of client connections"},
          {"NO-EVICT",
           3,
           kA | kL,
           {},
           CmdClientOnOff,
           c,
           "7.0.0",
           "Sets the client eviction mode of the connection.",
           "ON|OFF",
           "O(1)"},
          {"NO-TOUCH",
           3,
           kF | kL,
           {},
           CmdClientOnOff,
           c,
           "7.2.0",
           "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
           "ON|OFF",
           "O(1)"},
          {"UNBLOCK",
           -3,
           kA | kL,
           {},
           CmdClientUnblock,
           c,
           "5.0.0",
           "Unblocks a client blocked by a blocking command from a different connection.",
           "client-id [TIMEOUT|ERROR]",
           "O(log N) where N is the number of client connections"},
          {"HELP",
           2,
           kL,
           {},
           CmdClientHelp,
           c,
           "5.0.0",
           "Returns helpful text about the different subcommands.",
           "",
           "O(1)"},
      },
      "client");
  AddBuiltins(r,
              {
                  {"LIST",
                   2,
                   kA | kL,
                   {},
                   CmdModuleList,
                   s,
                   "4.0.0",
                   "Returns all loaded modules.",
                   "",
                   "O(N) where N is the number of loaded modules"},
                  {"HELP",
                   2,
                   kL,
                   {},
                   CmdModuleHelp,
                   s,
                   "5.0.0",
                   "Returns helpful text about the different subcommands.",
                   "",
                   "O(1)"},
              },
              "module");
  AddBuiltins(r,
              {
                  {"USAGE",
                   -3,
                   VSL_CMD_READONLY,
                   {KeyAt(2, VSL_KS_RO)},
                   CmdMemoryUsage,
                   s,
                   "4.0.0",
                   "Estimates the memory usage of a key.",
                   "key [SAMPLES count]",
                   "O(N) where N is the number of samples"},
                  {"STATS",
                   2,
                   0,
                   {},
                   CmdMemoryStats,
                   s,
                   "4.0.0",
                   "Returns details about memory usage.",
                   "",
                   "O(1)"},
                  {"PURGE",
                   2,
                   0,
                   {},
                   CmdMemoryPurge,
                   s,
                   "4.0.0",
                   "Asks the allocator to release memory.",
                   "",
                   "Depends on how much memory is allocated, could be slow"},
                  {"MALLOC-STATS",
                   2,
                   0,
                   {},
                   CmdMemoryMallocStats,
                   s,
                   "4.0.0",
                   "Returns the allocator statistics.",
                   "",
                   "Depends on how much memory is allocated, could be slow"},
                  {"DOCTOR",
                   2,
                   0,
                   {},
                   CmdMemoryDoctor,
                   s,
                   "4.0.0",
                   "Outputs a memory problems report.",
                   "",
                   "O(1)"},
                  {"HELP",
                   2,
                   kL,
                   {},
                   CmdMemoryHelp,
                   s,
                   "4.0.0",
                   "Returns helpful text about the different subcommands.",
                   "",
                   "O(1)"},
              },
              "memory");
}

}  // namespace vessel::engine
