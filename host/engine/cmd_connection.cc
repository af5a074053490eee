// Connection commands: PING ECHO QUIT RESET HELLO AUTH, and what else concerns clients
// logging in: the protected-mode refusal and the arguments MONITOR and SLOWLOG redact.
//
// AUTH and HELLO AUTH check passwords through the engine's access control (host/acl).
// Deliberate difference from Redis: HELLO reports server "vessel" with the Redis version whose
// behaviour it implements.
#include "host/config/params.h"
#include "host/engine/access.h"
#include "host/engine/builtins.h"
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

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// Checks a user and password for AUTH and HELLO AUTH; on success the session runs as that user.
bool Authenticate(CommandCtx* ctx, std::string_view user, std::string_view password) {
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

// PING [message]
void CmdPing(CommandCtx* ctx) {
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
void CmdEcho(CommandCtx* ctx) { W(ctx).Bulk(Arg(ctx, 1)); }

// QUIT
void CmdQuit(CommandCtx* ctx) {
  ReplyOk(ctx);
  S(ctx).CloseAfterReply();
}

// AUTH [username] password
void CmdAuth(CommandCtx* ctx) {
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
void CmdHello(CommandCtx* ctx) {
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
void CmdReset(CommandCtx* ctx) {
  E(ctx).ResetSession(&S(ctx));
  W(ctx).Simple("RESET");
}

constexpr uint64_t kF = VSL_CMD_FAST;
constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterConnectionCommands(Registry& r) {
  const char* c = "connection";
  // clang-format off
  AddBuiltins(r, {
      {.name = "PING", .arity = -1, .flags = kF | kCmdSentinel, .fn = CmdPing, .group = c,
       .since = "1.0.0", .summary = "Returns the server's liveliness response.",
       .syntax = "[message]", .complexity = "O(1)",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "ECHO", .arity = 2, .flags = kF | kL, .fn = CmdEcho, .group = c, .since = "1.0.0",
       .summary = "Returns the given string.", .syntax = "message", .complexity = "O(1)"},
      {.name = "QUIT", .arity = -1,
       .flags = kF | kL | VSL_CMD_NOSCRIPT | kCmdNoAuth | kCmdTxControl | kCmdAllowBusy,
       .fn = CmdQuit, .group = c, .since = "1.0.0", .summary = "Closes the connection.",
       .syntax = "", .complexity = "O(1)"},
      {.name = "RESET", .arity = 1,
       .flags = kF | kL | VSL_CMD_NOSCRIPT | kCmdNoAuth | kCmdTxControl | kCmdAllowBusy,
       .fn = CmdReset, .group = c, .since = "6.2.0", .summary = "Resets the connection.",
       .syntax = "", .complexity = "O(1)"},
      {.name = "HELLO", .arity = -1,
       .flags = kF | kL | kCmdNoAuth | VSL_CMD_NOSCRIPT | kCmdAllowBusy, .fn = CmdHello, .group = c,
       .since = "6.0.0", .summary = "Handshakes with the Redis server.",
       .syntax = "[protover [AUTH username password] [SETNAME clientname]]", .complexity = "O(1)"},
      {.name = "AUTH", .arity = -2,
       .flags = kF | kL | kCmdNoAuth | VSL_CMD_NOSCRIPT | kCmdAllowBusy, .fn = CmdAuth, .group = c,
       .since = "1.0.0", .summary = "Authenticates the connection.",
       .syntax = "[username] password", .complexity = "O(N)"},
  });
  // clang-format on
}

}  // namespace vessel::engine
