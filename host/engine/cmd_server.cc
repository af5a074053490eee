// Connection and server commands: PING ECHO QUIT RESET HELLO AUTH TIME ROLE WAIT
// SHUTDOWN MODULE MEMORY.
//
// AUTH and HELLO AUTH check passwords through the engine's access control (host/acl).
// Deliberate difference from Redis: HELLO reports server "vessel" with the Redis version whose
// behaviour it implements.
#include <unistd.h>

#include <chrono>
#include <thread>

#include "host/config/params.h"
#include "host/engine/access.h"
#include "host/engine/builtins.h"
#include "host/engine/lazy_free.h"
#include "host/engine/memory.h"
#include "host/engine/version.h"

namespace vessel::engine {

const char kProtectedModeDenied[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

bool RedactedArgument(const CommandSpec& cmd, const std::string_view* argv, int argc, int i) {
  if (cmd.name == "auth") return i >= 1;
  if (cmd.name == "acl|setuser") return i >= 2;
  if (cmd.name == "hello") {
    for (int j = 2; j < argc;) {
      if (EqualsIgnoreCase(argv[j], "auth") && j + 2 < argc) {
        if (i == j + 1 || i == j + 2) return true;
        j += 3;
      } else if (EqualsIgnoreCase(argv[j], "setname") && j + 1 < argc) {
        j += 2;
      } else {
        break;
      }
    }
    return false;
  }
  if (cmd.name == "config|set" && i >= 3 && i % 2 == 1) {
    const config::ParamDef* p = config::FindGenericParam(argv[i - 1]);
    return p != nullptr && (p->flags & config::kSensitive);
  }
  return false;
}

namespace {

Engine& E(vsl_ctx* ctx) { return *ctx->engine; }

// PING [message]
void CmdPing(vsl_ctx* ctx) {
  if (ctx->argc > 2) return W(ctx).ErrorLine("ERR wrong number of arguments for 'ping' command");
  if (ctx->session != nullptr && W(ctx).protocol() == 2 && S(ctx).info().messaging.in_pubsub()) {
    // A subscribed RESP2 client gets its pong as a message-like array, as in Redis.
    W(ctx).Aggregate(resp::AggKind::kArray, 2);
    W(ctx).Bulk("pong");
    return W(ctx).Bulk(ctx->argc == 1 ? std::string_view() : Arg(ctx, 1));
  }
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

// WAIT numreplicas timeout
void CmdWait(vsl_ctx* ctx) {
  int64_t n, timeout;
  if (!IntArg(ctx, 1, &n) || !IntArg(ctx, 2, &timeout)) return;
  if (timeout < 0) return W(ctx).ErrorLine("ERR timeout is negative");
  W(ctx).Int(0);  // no replicas
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

// Checks a user and password for AUTH and HELLO AUTH; on success the session runs as that user.
bool Authenticate(vsl_ctx* ctx, std::string_view user, std::string_view password) {
  AccessControl* ac = E(ctx).access();
  if (ac == nullptr) {
    if (user == "default") return true;
  } else if (auto u = ac->Authenticate(S(ctx), user, password, Arg(ctx, 0)); u != nullptr) {
    S(ctx).SetUser(std::move(u), true);
    return true;
  }
  W(ctx).ErrorLine("WRONGPASS invalid username-password pair or user is disabled.");
  return false;
}

// AUTH [username] password
void CmdAuth(vsl_ctx* ctx) {
  if (ctx->argc > 3) return ReplySyntaxError(ctx);
  AccessControl* ac = E(ctx).access();
  if (ctx->argc == 2 && (ac == nullptr || ac->DefaultUser()->nopass()))
    return W(ctx).ErrorLine(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  const std::string_view user = ctx->argc == 2 ? std::string_view("default") : Arg(ctx, 1);
  if (Authenticate(ctx, user, Arg(ctx, ctx->argc - 1))) ReplyOk(ctx);
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
  // Options take effect in order, as in Redis: AUTH, then SETNAME, each at once.
  for (; i < ctx->argc; ++i) {
    const int more = ctx->argc - i - 1;
    if (EqualsIgnoreCase(Arg(ctx, i), "auth") && more >= 2) {
      if (!Authenticate(ctx, Arg(ctx, i + 1), Arg(ctx, i + 2))) return;
      i += 2;
    } else if (EqualsIgnoreCase(Arg(ctx, i), "setname") && more >= 1) {
      const std::string_view name = Arg(ctx, ++i);
      if (!ValidClientAttr(name))
        return W(ctx).ErrorLine(
            "ERR Client names cannot contain spaces, newlines or special characters.");
      std::lock_guard l(S(ctx).info().mu);
      S(ctx).info().name = std::string(name);
    } else {
      return W(ctx).ErrorLine(Cat("ERR Syntax error in HELLO option '", Arg(ctx, i), "'"));
    }
  }
  if (!S(ctx).authenticated())
    return W(ctx).ErrorLine(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
        "protocol version at the same time");
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
  int save = -1;  // default: save when save rules exist
  bool force = false, nosave = false;
  for (int i = 1; i < ctx->argc; ++i) {
    const std::string_view o = Arg(ctx, i);
    if (EqualsIgnoreCase(o, "abort")) return W(ctx).ErrorLine("ERR No shutdown in progress.");
    if (EqualsIgnoreCase(o, "nosave")) {
      save = 0;
    } else if (EqualsIgnoreCase(o, "save")) {
      save = 1;
    } else if (EqualsIgnoreCase(o, "force")) {
      force = true;
    } else if (!EqualsIgnoreCase(o, "now")) {
      return ReplySyntaxError(ctx);
    }
    nosave |= EqualsIgnoreCase(o, "nosave");
  }
  // A script past busy-reply-threshold: only SHUTDOWN NOSAVE stops it (and the server), as in
  // Redis; running scripts end at their next hook so the workers can stop.
  if (BusyProbe* probe = E(ctx).busy_probe()) {
    const std::string busy = probe->BusyAnyError();
    if (!busy.empty() && !nosave) return W(ctx).ErrorLine(busy);
    probe->OnShutdown();
  }
  // Persistence (host/persist) writes the final snapshot; a failure keeps the server running.
  std::string error;
  if (E(ctx).persist() != nullptr && !E(ctx).persist()->Shutdown(save, force, &error))
    return W(ctx).ErrorLine(error);
  // Like Redis, no reply: the connection closes as the server stops.
  S(ctx).CloseAfterReply();
  E(ctx).RequestShutdown();
}

// MODULE LIST
void CmdModuleList(vsl_ctx* ctx) { ReplyModules(ctx); }
// MODULE LOAD path [arg ...] | MODULE LOADEX path [CONFIG name value ...] [ARGS arg ...] |
// MODULE UNLOAD name: refused, as Redis refuses them without enable-module-command, and with it
// because Vessel loads modules at startup only (the registry is read-only while serving).
void CmdModuleLoad(vsl_ctx* ctx) {
  if (!E(ctx).ModuleCommandAllowed(S(ctx).peer())) {
    return W(ctx).ErrorLine(
        "ERR MODULE command not allowed. If the enable-module-command option is set to "
        "\"local\", you can run it from a local connection, otherwise you need to set this "
        "option in the configuration file, and then restart the server.");
  }
  W(ctx).ErrorLine(
      "ERR Vessel loads and unloads modules at startup only: list them under [[modules]] in the "
      "config file or pass --loadmodule");
}

// LOLWUT [VERSION version]
void CmdLolwut(vsl_ctx* ctx) {
  if (ctx->argc == 3 && EqualsIgnoreCase(Arg(ctx, 1), "version")) {
    int64_t v;
    if (!IntArg(ctx, 2, &v)) return;
  } else if (ctx->argc != 1) {
    return ReplySyntaxError(ctx);
  }
  W(ctx).Verbatim("txt", Cat("Vessel ", kVesselVersion, ". Redis ver. ", kRedisVersion, "\n"));
}

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
           kF | kL | kCmdNoAuth | VSL_CMD_NOSCRIPT | kCmdAllowBusy,
           {},
           CmdHello,
           c,
           "6.0.0",
           "Handshakes with the Redis server.",
           "[protover [AUTH username password] [SETNAME clientname]]",
           "O(1)"},
          {"AUTH",
           -2,
           kF | kL | kCmdNoAuth | VSL_CMD_NOSCRIPT | kCmdAllowBusy,
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
           "O(1)",
           nullptr,
           nullptr,
           "!connection"},
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
                  {"LOAD",
                   -3,
                   kA | VSL_CMD_NOSCRIPT,
                   {},
                   CmdModuleLoad,
                   s,
                   "4.0.0",
                   "Loads a module.",
                   "path [arg [arg ...]]",
                   "O(1)"},
                  {"LOADEX",
                   -3,
                   kA | VSL_CMD_NOSCRIPT,
                   {},
                   CmdModuleLoad,
                   s,
                   "7.0.0",
                   "Loads a module using extended parameters.",
                   "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]",
                   "O(1)"},
                  {"UNLOAD",
                   3,
                   kA | VSL_CMD_NOSCRIPT,
                   {},
                   CmdModuleLoad,
                   s,
                   "4.0.0",
                   "Unloads a module.",
                   "name",
                   "O(1)"},
              },
              "module");
  AddBuiltins(r, {{"LOLWUT",
                   -1,
                   VSL_CMD_READONLY | VSL_CMD_FAST,
                   {},
                   CmdLolwut,
                   s,
                   "5.0.0",
                   "Displays computer art and the Redis version",
                   "[VERSION version]",
                   ""}});
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
