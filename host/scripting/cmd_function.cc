// FCALL, FCALL_RO and FUNCTION LOAD|DELETE|FLUSH|LIST|DUMP|RESTORE|STATS|KILL|HELP.
//
// Locking follows EVAL's rule (cmd_eval.cc): declared keys under their locks, the whole keyspace
// for a function never run or seen touching undeclared keys; a no-writes function (or FCALL_RO)
// locks its keys shared.
//
// Difference from Redis: FUNCTION LIST orders libraries by name (Redis's order is its hash
// table's).
#include <cctype>
#include <optional>

#include "host/engine/builtins.h"
#include "host/scripting/local.h"
#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
}

namespace vessel::scripting {
namespace {

using engine::Arg;
using engine::Cat;
using engine::EqualsIgnoreCase;
using engine::W;

const Function* FindFunction(Scripting* sc, std::string_view name,
                             std::shared_ptr<const FunctionSet>* keep) {
  *keep = sc->functions();
  auto it = (*keep)->functions.find(std::string(name));
  return it == (*keep)->functions.end() ? nullptr : it->second;
}

bool FcallNeedsWorld(const std::string_view* argv, int argc) {
  Scripting* sc = Scripting::Any();
  if (sc == nullptr) return false;
  std::shared_ptr<const FunctionSet> keep;
  const Function* f = FindFunction(sc, argv[1], &keep);
  return f != nullptr &&
         f->mode.load(std::memory_order_relaxed) != static_cast<int>(KeyMode::kDeclared);
}

// call_flags: a function is checked with the flags it declares (Redis's fcallGetCommandFlags).
uint64_t FcallCallFlags(const std::string_view* argv, int argc, uint64_t flags) {
  Scripting* sc = Scripting::Any();
  if (sc == nullptr) return flags;
  std::shared_ptr<const FunctionSet> keep;
  const Function* f = FindFunction(sc, argv[1], &keep);
  return f == nullptr ? flags : ScriptCommandFlags(flags, f->flags);
}

void FcallResolve(engine::CommandCtx* ctx) {
  std::shared_ptr<const FunctionSet> keep;
  const Function* f = FindFunction(Scripting::Of(ctx->engine), ctx->argv[1], &keep);
  if (f == nullptr || !(f->flags & kFlagNoWrites)) return;
  for (engine::CommandKey& k : ctx->keys) k.flags = VSL_KS_RO | VSL_KS_ACCESS;
}

// Redis's addReplySubcommandSyntaxError.
void ReplySubcommandSyntax(engine::CommandCtx* ctx) {
  std::string upper(Arg(ctx, 0));
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  W(ctx).ErrorLine(Cat("ERR unknown subcommand or wrong number of arguments for '",
                       Arg(ctx, 1).substr(0, 128), "'. Try ", upper, " HELP."));
}

void FcallGeneric(engine::CommandCtx* ctx, bool ro) {
  Scripting* sc = Scripting::Of(ctx->engine);
  lua_State* L = FunctionState(sc);
  if (L == nullptr)
    return W(ctx).ErrorLine(
        Cat("ERR Error running script ", Arg(ctx, 1).substr(0, 128), ", not enough memory"));
  LocalState& ls = Local(sc);
  auto it = ls.fns->functions.find(std::string(Arg(ctx, 1)));
  if (it == ls.fns->functions.end()) return W(ctx).ErrorLine("ERR Function not found");
  const Function* f = it->second;
  int64_t n = 0;
  if (!engine::ParseInt64(Arg(ctx, 2), &n))
    return W(ctx).ErrorLine("ERR Bad number of keys provided");
  if (n > ctx->argc - 3)
    return W(ctx).ErrorLine("ERR Number of keys can't be greater than number of args");
  if (n < 0) return W(ctx).ErrorLine("ERR Number of keys can't be negative");
  if (!(f->flags & kFlagNoWrites) && ro)
    return W(ctx).ErrorLine("ERR Can not execute a script with write flag using *_ro command.");
  auto ref = ls.refs.find(f);
  if (ref == ls.refs.end()) return W(ctx).ErrorLine("ERR Function not found");
  PushErrorHandler(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref->second);
  RunSpec spec;
  spec.eval = false;
  spec.name = f->name;
  spec.flags = f->flags;
  spec.ro = ro;
  spec.mode = const_cast<std::atomic<int>*>(&f->mode);
  spec.nkeys = static_cast<int>(n);
  RunScript(ctx, L, spec);
}

// FCALL function numkeys [key [key ...]] [arg [arg ...]]
void CmdFcall(engine::CommandCtx* ctx) { FcallGeneric(ctx, false); }
// FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]
void CmdFcallRo(engine::CommandCtx* ctx) { FcallGeneric(ctx, true); }

// FUNCTION LOAD [REPLACE] function-code
void CmdFunctionLoad(engine::CommandCtx* ctx) {
  bool replace = false;
  int pos = 2;
  for (; pos < ctx->argc - 1; ++pos) {
    if (!EqualsIgnoreCase(Arg(ctx, pos), "replace"))
      return W(ctx).ErrorLine(Cat("ERR Unknown option given: ", Arg(ctx, pos)));
    replace = true;
  }
  std::string error;
  const std::string name = Scripting::Of(ctx->engine)->LoadLibrary(Arg(ctx, pos), replace, &error);
  if (name.empty()) return W(ctx).ErrorLine(Cat("ERR ", error));
  ctx->engine->AddDirty();  // logged and saved, as Redis's server.dirty++
  W(ctx).Bulk(name);
}

// FUNCTION DELETE library-name
void CmdFunctionDelete(engine::CommandCtx* ctx) {
  if (!Scripting::Of(ctx->engine)->DeleteLibrary(Arg(ctx, 2)))
    return W(ctx).ErrorLine("ERR Library not found");
  ctx->engine->AddDirty();
  engine::ReplyOk(ctx);
}

// FUNCTION FLUSH [ASYNC|SYNC]
void CmdFunctionFlush(engine::CommandCtx* ctx) {
  if (ctx->argc > 3) return ReplySubcommandSyntax(ctx);
  if (ctx->argc == 3 && !EqualsIgnoreCase(Arg(ctx, 2), "sync") &&
      !EqualsIgnoreCase(Arg(ctx, 2), "async"))
    return W(ctx).ErrorLine("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  Scripting::Of(ctx->engine)->FlushFunctions();
  ctx->engine->AddDirty();
  engine::ReplyOk(ctx);
}

// FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]
void CmdFunctionList(engine::CommandCtx* ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (int i = 2; i < ctx->argc; ++i) {
    if (!with_code && EqualsIgnoreCase(Arg(ctx, i), "withcode")) {
      with_code = true;
      continue;
    }
    if (!pattern && EqualsIgnoreCase(Arg(ctx, i), "libraryname")) {
      if (i >= ctx->argc - 1) return W(ctx).ErrorLine("ERR library name argument was not given");
      pattern = Arg(ctx, ++i);
      continue;
    }
    return W(ctx).ErrorLine(Cat("ERR Unknown argument ", Arg(ctx, i)));
  }
  auto set = Scripting::Of(ctx->engine)->functions();
  std::vector<const Library*> libs;
  for (const auto& [name, lib] : set->libs)
    if (!pattern || engine::GlobMatch(*pattern, name)) libs.push_back(lib.get());
  resp::Writer& w = W(ctx);
  w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(libs.size()));
  for (const Library* lib : libs) {
    w.Aggregate(resp::AggKind::kMap, with_code ? 4 : 3);
    w.Bulk("library_name");
    w.Bulk(lib->name);
    w.Bulk("engine");
    w.Bulk(lib->engine);
    w.Bulk("functions");
    w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(lib->functions.size()));
    for (const auto& f : lib->functions) {
      w.Aggregate(resp::AggKind::kMap, 3);
      w.Bulk("name");
      w.Bulk(f->name);
      w.Bulk("description");
      if (f->has_desc) {
        w.Bulk(f->desc);
      } else {
        w.Null();
      }
      w.Bulk("flags");
      int count = 0;
      for (const FlagName& n : kFlagNames) count += (f->flags & n.flag) != 0;
      w.Aggregate(resp::AggKind::kSet, count);
      for (const FlagName& n : kFlagNames)
        if (f->flags & n.flag) w.Simple(n.name);
    }
    if (with_code) {
      w.Bulk("library_code");
      w.Bulk(lib->code);
    }
  }
}

// FUNCTION DUMP
void CmdFunctionDump(engine::CommandCtx* ctx) { W(ctx).Bulk(Scripting::Of(ctx->engine)->Dump()); }

// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE]
void CmdFunctionRestore(engine::CommandCtx* ctx) {
  if (ctx->argc > 4) return ReplySubcommandSyntax(ctx);
  RestorePolicy policy = RestorePolicy::kAppend;
  if (ctx->argc == 4) {
    const std::string_view p = Arg(ctx, 3);
    if (EqualsIgnoreCase(p, "append")) {
      policy = RestorePolicy::kAppend;
    } else if (EqualsIgnoreCase(p, "replace")) {
      policy = RestorePolicy::kReplace;
    } else if (EqualsIgnoreCase(p, "flush")) {
      policy = RestorePolicy::kFlush;
    } else {
      return W(ctx).ErrorLine(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    }
  }
  std::string error;
  if (!Scripting::Of(ctx->engine)->Restore(Arg(ctx, 2), policy, &error))
    return W(ctx).ErrorLine(Cat("ERR ", error));
  ctx->engine->AddDirty();
  engine::ReplyOk(ctx);
}

// FUNCTION STATS
void CmdFunctionStats(engine::CommandCtx* ctx) {
  Scripting* sc = Scripting::Of(ctx->engine);
  std::string name;
  std::vector<std::string> argv;
  int64_t ms = 0;
  bool eval = false;
  const bool running = sc->RunningInfo(&name, &argv, &ms, &eval);
  if (running && eval) {
    return W(ctx).ErrorLine(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
  }
  auto set = sc->functions();
  resp::Writer& w = W(ctx);
  w.Aggregate(resp::AggKind::kMap, 2);
  w.Bulk("running_script");
  if (!running) {
    w.Null();
  } else {
    w.Aggregate(resp::AggKind::kMap, 3);
    w.Bulk("name");
    w.Bulk(name);
    w.Bulk("command");
    w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(argv.size()));
    for (const auto& a : argv) w.Bulk(a);
    w.Bulk("duration_ms");
    w.Int(ms);
  }
  w.Bulk("engines");
  w.Aggregate(resp::AggKind::kMap, 1);
  w.Bulk("LUA");
  w.Aggregate(resp::AggKind::kMap, 2);
  w.Bulk("libraries_count");
  w.Int(static_cast<int64_t>(set->libs.size()));
  w.Bulk("functions_count");
  w.Int(static_cast<int64_t>(set->functions.size()));
}

// FUNCTION KILL
void CmdFunctionKill(engine::CommandCtx* ctx) {
  const std::string reply = Scripting::Of(ctx->engine)->Kill(/*eval=*/false);
  if (reply == "+OK") return engine::ReplyOk(ctx);
  W(ctx).ErrorLine(reply[0] == '-' ? std::string_view(reply).substr(1) : reply);
}

// FUNCTION HELP
void CmdFunctionHelp(engine::CommandCtx* ctx) {
  engine::ReplyHelp(
      ctx,
      {"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
       "LOAD [REPLACE] <FUNCTION CODE>",
       "    Create a new library with the given library name and code.",
       "DELETE <LIBRARY NAME>",
       "    Delete the given library.",
       "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
       "    Return general information on all the libraries:",
       "    * Library name",
       "    * The engine used to run the Library",
       "    * Library description",
       "    * Functions list",
       "    * Library code (if WITHCODE is given)",
       "    It also possible to get only function that matches a pattern using LIBRARYNAME "
       "argument.",
       "STATS",
       "    Return information about the current function running:",
       "    * Function name",
       "    * Command used to run the function",
       "    * Duration in MS that the function is running",
       "    If no function is running, return nil",
       "    In addition, returns a list of available engines.",
       "KILL",
       "    Kill the current running function.",
       "FLUSH [ASYNC|SYNC]",
       "    Delete all the libraries.",
       "    When called without the optional mode argument, the behavior is determined by the",
       "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
       "    * ASYNC: Asynchronously flush the libraries.",
       "    * SYNC: Synchronously flush the libraries.",
       "DUMP",
       "    Return a serialized payload representing the current libraries, can be restored "
       "using FUNCTION RESTORE command",
       "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
       "    Restore the libraries represented by the given payload, it is possible to give a "
       "restore policy to",
       "    control how to handle existing libraries (default APPEND):",
       "    * FLUSH: delete all existing libraries.",
       "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
       "abort.",
       "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
       "replace the old",
       "      libraries with the new libraries (notice that even on this option there is a "
       "chance of failure",
       "      in case of functions name collision with another library).",
       "HELP",
       "    Print this help."});
}

void CmdContainer(engine::CommandCtx*) {}

}  // namespace

void RegisterFunctionCommands(engine::Registry& r) {
  const char* g = "scripting";
  // clang-format off
  AddScriptCalls(r, {"Depends on the function that is executed.", FcallResolve, FcallNeedsWorld,
                     FcallCallFlags}, {
      {.name = "FCALL", .first_arg = "function", .fn = CmdFcall, .since = "7.0.0",
       .summary = "Invokes a function."},
      {.name = "FCALL_RO", .ro = true, .first_arg = "function", .fn = CmdFcallRo, .since = "7.0.0",
       .summary = "Invokes a read-only function."},
  });
  // clang-format on
  engine::AddBuiltins(r, {{.name = "FUNCTION",
                           .arity = -2,
                           .flags = 0,
                           .fn = CmdContainer,
                           .group = "server",
                           .since = "7.0.0",
                           .summary = "A container for function commands.",
                           .syntax = "",
                           .complexity = "Depends on subcommand."}});
  constexpr uint64_t kN = VSL_CMD_NOSCRIPT;
  constexpr uint64_t kW = VSL_CMD_WRITE | kN;
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "LOAD", .arity = -3, .flags = kW | VSL_CMD_DENYOOM, .fn = CmdFunctionLoad,
       .group = g, .since = "7.0.0", .summary = "Creates a library.",
       .syntax = "[REPLACE] function-code",
       .complexity = "O(1) (considering compilation time is redundant)",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "DELETE", .arity = 3, .flags = kW, .fn = CmdFunctionDelete, .group = g,
       .since = "7.0.0", .summary = "Deletes a library and its functions.",
       .syntax = "library-name", .complexity = "O(1)",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "FLUSH", .arity = -2, .flags = kW, .fn = CmdFunctionFlush, .group = g,
       .since = "7.0.0", .summary = "Deletes all libraries and functions.",
       .syntax = "[ASYNC | SYNC]", .complexity = "O(N) where N is the number of functions deleted",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "LIST", .arity = -2, .flags = kN, .fn = CmdFunctionList, .group = g,
       .since = "7.0.0", .summary = "Returns information about all libraries.",
       .syntax = "[LIBRARYNAME library-name-pattern] [WITHCODE]",
       .complexity = "O(N) where N is the number of functions",
       .tips = "nondeterministic_output_order"},
      {.name = "DUMP", .arity = 2, .flags = kN, .fn = CmdFunctionDump, .group = g, .since = "7.0.0",
       .summary = "Dumps all libraries into a serialized binary payload.", .syntax = "",
       .complexity = "O(N) where N is the number of functions"},
      {.name = "RESTORE", .arity = -3, .flags = kW | VSL_CMD_DENYOOM, .fn = CmdFunctionRestore,
       .group = g, .since = "7.0.0", .summary = "Restores all libraries from a payload.",
       .syntax = "serialized-value [FLUSH | APPEND | REPLACE]",
       .complexity = "O(N) where N is the number of functions on the payload",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "STATS", .arity = 2, .flags = kN | engine::kCmdAllowBusy, .fn = CmdFunctionStats,
       .group = g, .since = "7.0.0",
       .summary = "Returns information about a function during execution.", .syntax = "",
       .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
      {.name = "KILL", .arity = 2, .flags = kN | engine::kCmdAllowBusy, .fn = CmdFunctionKill,
       .group = g, .since = "7.0.0", .summary = "Terminates a function during execution.",
       .syntax = "", .complexity = "O(1)",
       .tips = "request_policy:all_shards response_policy:one_succeeded"},
      {.name = "HELP", .arity = 2, .flags = engine::kCmdLoading | engine::kCmdStale,
       .fn = CmdFunctionHelp, .group = g, .since = "7.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "function");
  // clang-format on
}

}  // namespace vessel::scripting
