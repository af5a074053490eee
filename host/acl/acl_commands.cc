// The ACL command: CAT DELUSER DRYRUN GENPASS GETUSER LIST LOAD LOG SAVE SETUSER USERS WHOAMI
// HELP, with Redis 7.0's replies and errors.
//
// Deliberate differences from Redis: single-command rules in ACL LIST and GETUSER come in a fixed
// order (Redis's follows its command dictionary, which changes from one process to the next);
// module commands belong to the categories their flags and group give them (Redis leaves module
// commands out of categories), and a module's commands outside Redis's categories to the
// module's own (@vectors), which ACL CAT lists after Redis's, as Redis 7.2 lists the categories
// modules add.
#include "host/acl/acl.h"
#include "host/acl/crypto.h"
#include "host/engine/builtins.h"

namespace vessel::acl {
namespace {

using engine::Arg;
using engine::Cat;
using engine::EqualsIgnoreCase;
using engine::S;
using engine::W;

Acl& A(engine::CommandCtx* ctx) { return *static_cast<Acl*>(ctx->engine->access()); }

void SubcommandSyntaxError(engine::CommandCtx* ctx) {
  std::string cmd(Arg(ctx, 0));
  for (char& c : cmd) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  W(ctx).ErrorLine(Cat("ERR unknown subcommand or wrong number of arguments for '",
                       Arg(ctx, 1).substr(0, 128), "'. Try ", cmd, " HELP."));
}

// ACL SETUSER username [rule [rule ...]]
void CmdSetUser(engine::CommandCtx* ctx) {
  std::vector<std::string> rules;
  for (int i = 3; i < ctx->argc; ++i) rules.emplace_back(Arg(ctx, i));
  const std::string err = A(ctx).SetUser(Arg(ctx, 2), rules);
  if (!err.empty()) return W(ctx).ErrorLine(Cat("ERR ", err));
  A(ctx).KillRevokedSubscribers(Arg(ctx, 2), ctx->session);
  engine::ReplyOk(ctx);
}

// ACL DELUSER username [username ...]
void CmdDelUser(engine::CommandCtx* ctx) {
  std::vector<std::string> names;
  for (int i = 2; i < ctx->argc; ++i) {
    if (Arg(ctx, i) == "default")
      return W(ctx).ErrorLine("ERR The 'default' user cannot be removed");
    names.emplace_back(Arg(ctx, i));
  }
  W(ctx).Int(A(ctx).DelUsers(names, ctx->session));
}

void ReplySelector(engine::CommandCtx* ctx, const Selector& s) {
  const Catalog& catalog = A(ctx).catalog();
  W(ctx).Bulk("commands");
  W(ctx).Bulk(DescribeCommandRules(s, catalog));
  W(ctx).Bulk("keys");
  W(ctx).Bulk(DescribeKeys(s));
  W(ctx).Bulk("channels");
  W(ctx).Bulk(DescribeChannels(s));
}

// ACL GETUSER username
void CmdGetUser(engine::CommandCtx* ctx) {
  const auto u = A(ctx).Find(Arg(ctx, 2));
  if (u == nullptr) return W(ctx).Null();
  W(ctx).Aggregate(resp::AggKind::kMap, 6);
  W(ctx).Bulk("flags");
  const auto flags = u->FlagNames();
  W(ctx).Aggregate(resp::AggKind::kSet, static_cast<int64_t>(flags.size()));
  for (auto f : flags) W(ctx).Bulk(f);
  W(ctx).Bulk("passwords");
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(u->passwords().size()));
  for (const auto& p : u->passwords()) W(ctx).Bulk(p);
  ReplySelector(ctx, u->selectors()[0]);
  W(ctx).Bulk("selectors");
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(u->selectors().size() - 1));
  for (size_t i = 1; i < u->selectors().size(); ++i) {
    W(ctx).Aggregate(resp::AggKind::kMap, 3);
    ReplySelector(ctx, u->selectors()[i]);
  }
}

// ACL LIST
void CmdList(engine::CommandCtx* ctx) {
  const auto users = A(ctx).Users();
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(users.size()));
  for (const auto& u : users)
    W(ctx).Bulk(Cat("user ", u->name(), " ", DescribeUser(*u, A(ctx).catalog())));
}

// ACL USERS
void CmdUsers(engine::CommandCtx* ctx) {
  const auto users = A(ctx).Users();
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(users.size()));
  for (const auto& u : users) W(ctx).Bulk(u->name());
}

// ACL WHOAMI
void CmdWhoAmI(engine::CommandCtx* ctx) {
  const engine::AccessUser* u = S(ctx).user();
  W(ctx).Bulk(u != nullptr ? u->name() : std::string("default"));
}

void ReplyNoFile(engine::CommandCtx* ctx) {
  W(ctx).ErrorLine(
      "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
      "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
      "Redis configuration file set) in order to store users in the Redis configuration.");
}

// ACL LOAD
void CmdLoad(engine::CommandCtx* ctx) {
  if (!A(ctx).has_file()) return ReplyNoFile(ctx);
  const std::string err = A(ctx).LoadFile(ctx->session);
  err.empty() ? engine::ReplyOk(ctx) : W(ctx).ErrorLine(Cat("ERR ", err));
}

// ACL SAVE
void CmdSave(engine::CommandCtx* ctx) {
  if (!A(ctx).has_file()) return ReplyNoFile(ctx);
  const std::string err = A(ctx).SaveFile();
  err.empty() ? engine::ReplyOk(ctx) : W(ctx).ErrorLine(Cat("ERR ", err));
}

void CatCommands(const std::vector<Catalog::Entry>& entries, uint64_t bit,
                 std::vector<std::string>* out) {
  for (const auto& e : entries) {
    if (e.categories & bit) out->push_back(e.spec->name);
    if (!e.subs.empty()) CatCommands(e.subs, bit, out);
  }
}

// ACL CAT [category]
void CmdCat(engine::CommandCtx* ctx) {
  if (ctx->argc > 3) return SubcommandSyntaxError(ctx);
  if (ctx->argc == 2) {
    const std::vector<std::string>& all = A(ctx).catalog().categories();
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(all.size()));
    for (const std::string& c : all) W(ctx).Bulk(c);
    return;
  }
  const int cat = A(ctx).catalog().CategoryIndex(Arg(ctx, 2));
  if (cat < 0)
    return W(ctx).ErrorLine(Cat("ERR Unknown category '", Arg(ctx, 2).substr(0, 128), "'"));
  std::vector<std::string> names;
  CatCommands(A(ctx).catalog().top(), uint64_t{1} << cat, &names);
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(names.size()));
  for (const auto& n : names) W(ctx).Bulk(n);
}

// ACL GENPASS [bits]
void CmdGenPass(engine::CommandCtx* ctx) {
  if (ctx->argc > 3) return SubcommandSyntaxError(ctx);
  int64_t bits = 256;
  if (ctx->argc == 3 && !engine::IntArg(ctx, 2, &bits)) return;
  if (bits <= 0 || bits > 4096)
    return W(ctx).ErrorLine(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
  W(ctx).Bulk(RandomHex(static_cast<size_t>((bits + 3) / 4)));
}

// ACL LOG [count | RESET]
void CmdLog(engine::CommandCtx* ctx) {
  if (ctx->argc > 3) return SubcommandSyntaxError(ctx);
  int64_t count = 10;
  if (ctx->argc == 3) {
    if (EqualsIgnoreCase(Arg(ctx, 2), "reset")) {
      A(ctx).ResetLog();
      return engine::ReplyOk(ctx);
    }
    if (!engine::IntArg(ctx, 2, &count)) return;
    if (count < 0) count = 0;
  }
  const auto entries = A(ctx).Log(static_cast<size_t>(count));
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(entries.size()));
  const int64_t now = ctx->engine->Now();
  for (const LogEntry& e : entries) {
    W(ctx).Aggregate(resp::AggKind::kMap, 7);
    W(ctx).Bulk("count");
    W(ctx).Int(static_cast<int64_t>(e.count));
    W(ctx).Bulk("reason");
    W(ctx).Bulk(e.reason == Verdict::kCommand ? "command"
                : e.reason == Verdict::kKey   ? "key"
                : e.reason == Verdict::kAuth  ? "auth"
                                              : "channel");
    W(ctx).Bulk("context");
    W(ctx).Bulk(e.multi ? "multi" : "toplevel");
    W(ctx).Bulk("object");
    W(ctx).Bulk(e.object);
    W(ctx).Bulk("username");
    W(ctx).Bulk(e.username);
    W(ctx).Bulk("age-seconds");
    W(ctx).Double(static_cast<double>(now - e.ctime_ms) / 1000);
    W(ctx).Bulk("client-info");
    W(ctx).Bulk(e.client_info);
  }
}

// ACL DRYRUN username command [arg [arg ...]]
void CmdDryRun(engine::CommandCtx* ctx) {
  const auto u = A(ctx).Find(Arg(ctx, 2));
  if (u == nullptr) return W(ctx).ErrorLine(Cat("ERR User '", Arg(ctx, 2), "' not found"));
  const std::string_view* argv = ctx->argv + 3;
  const int argc = ctx->argc - 3;
  const engine::CommandSpec* cmd = ctx->engine->registry().Resolve(argv, argc);
  if (cmd == nullptr) return W(ctx).ErrorLine(Cat("ERR Command '", argv[0], "' not found"));
  if (!cmd->ArityOk(argc))
    return W(ctx).ErrorLine(Cat("ERR wrong number of arguments for '", cmd->name, "' command"));
  int pos = 0;
  switch (CheckCommand(*u, *cmd, argv, argc, &pos)) {
    case Verdict::kOk:
      return engine::ReplyOk(ctx);
    case Verdict::kCommand:
      return W(ctx).Bulk(Cat("This user has no permissions to run the '", cmd->name, "' command"));
    case Verdict::kKey:
      return W(ctx).Bulk(Cat("This user has no permissions to access the '", argv[pos], "' key"));
    default:
      return W(ctx).Bulk(
          Cat("This user has no permissions to access the '", argv[pos], "' channel"));
  }
}

void CmdHelp(engine::CommandCtx* ctx) {
  engine::ReplyHelp(
      ctx, {"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the "
            "command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
            "HELP",
            "    Prints this help."});
}

void CmdContainer(engine::CommandCtx*) {}

constexpr uint64_t kL = engine::kCmdLoading | engine::kCmdStale | VSL_CMD_NOSCRIPT;
constexpr uint64_t kA = VSL_CMD_ADMIN | kL;

}  // namespace

void RegisterAclCommands(engine::Registry& r) {
  const char* s = "server";
  const char* o1 = "O(1)";
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "ACL", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s, .since = "6.0.0",
       .summary = "A container for Access List Control commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "CAT", .arity = -2, .flags = kL, .fn = CmdCat, .group = s, .since = "6.0.0",
       .summary = "Lists the ACL categories, or the commands inside a category.",
       .syntax = "[category]",
       .complexity = "O(1) since the categories and commands are a fixed set."},
      {.name = "DELUSER", .arity = -3, .flags = kA, .fn = CmdDelUser, .group = s, .since = "6.0.0",
       .summary = "Deletes ACL users, and terminates their connections.",
       .syntax = "username [username ...]",
       .complexity = "O(1) amortized time considering the typical user."},
      {.name = "DRYRUN", .arity = -4, .flags = kA, .fn = CmdDryRun, .group = s, .since = "7.0.0",
       .summary = "Simulates the execution of a command by a user, without executing the command.",
       .syntax = "username command [arg [arg ...]]", .complexity = o1},
      {.name = "GENPASS", .arity = -2, .flags = kL, .fn = CmdGenPass, .group = s, .since = "6.0.0",
       .summary = "Generates a pseudorandom, secure password that can be used to identify ACL "
         "users.", .syntax = "[bits]", .complexity = o1},
      {.name = "GETUSER", .arity = 3, .flags = kA, .fn = CmdGetUser, .group = s, .since = "6.0.0",
       .summary = "Lists the ACL rules of a user.", .syntax = "username",
       .complexity = "O(N). Where N is the number of password, command and pattern rules that "
         "the user has."},
      {.name = "LIST", .arity = 2, .flags = kA, .fn = CmdList, .group = s, .since = "6.0.0",
       .summary = "Dumps the effective rules in ACL file format.", .syntax = "",
       .complexity = "O(N). Where N is the number of configured users."},
      {.name = "LOAD", .arity = 2, .flags = kA, .fn = CmdLoad, .group = s, .since = "6.0.0",
       .summary = "Reloads the rules from the configured ACL file.", .syntax = "",
       .complexity = "O(N). Where N is the number of configured users."},
      {.name = "LOG", .arity = -2, .flags = kA, .fn = CmdLog, .group = s, .since = "6.0.0",
       .summary = "Lists recent security events generated due to ACL rules.",
       .syntax = "[count | RESET]", .complexity = "O(N) with N being the number of entries shown."},
      {.name = "SAVE", .arity = 2, .flags = kA, .fn = CmdSave, .group = s, .since = "6.0.0",
       .summary = "Saves the effective ACL rules in the configured ACL file.", .syntax = "",
       .complexity = "O(N). Where N is the number of configured users."},
      {.name = "SETUSER", .arity = -3, .flags = kA, .fn = CmdSetUser, .group = s, .since = "6.0.0",
       .summary = "Creates and modifies an ACL user and its rules.",
       .syntax = "username [rule [rule ...]]",
       .complexity = "O(N). Where N is the number of rules provided."},
      {.name = "USERS", .arity = 2, .flags = kA, .fn = CmdUsers, .group = s, .since = "6.0.0",
       .summary = "Lists all ACL users.", .syntax = "",
       .complexity = "O(N). Where N is the number of configured users."},
      {.name = "WHOAMI", .arity = 2, .flags = kL, .fn = CmdWhoAmI, .group = s, .since = "6.0.0",
       .summary = "Returns the authenticated username of the current connection.", .syntax = "",
       .complexity = o1},
      {.name = "HELP", .arity = 2, .flags = engine::kCmdLoading | engine::kCmdStale, .fn = CmdHelp,
       .group = s, .since = "6.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = o1},
  }, "acl");
  // clang-format on
}

}  // namespace vessel::acl
