// MODULE (LIST HELP LOAD LOADEX UNLOAD): the modules loaded at startup.
#include "host/engine/builtins.h"
#include "host/engine/version.h"

namespace vessel::engine {

namespace {
Engine& E(CommandCtx* ctx) { return *ctx->engine; }

}  // namespace

void ReplyModules(CommandCtx* ctx) {
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

namespace {

// MODULE LIST
void CmdModuleList(CommandCtx* ctx) { ReplyModules(ctx); }
// MODULE LOAD path [arg ...] | MODULE LOADEX path [CONFIG name value ...] [ARGS arg ...] |
// MODULE UNLOAD name: refused, as Redis refuses them without enable-module-command, and with it
// because Vessel loads modules at startup only (the registry is read-only while serving).
void CmdModuleLoad(CommandCtx* ctx) {
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

void CmdModuleHelp(CommandCtx* ctx) {
  ReplyHelp(ctx, {"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "LIST",
                  "    Return a list of loaded modules.", "HELP", "    Print this help."});
}

// ---- MEMORY ----

void CmdContainer(CommandCtx*) {}

constexpr uint64_t kL = kCmdLoading | kCmdStale;
constexpr uint64_t kA = VSL_CMD_ADMIN;

}  // namespace

void RegisterModuleCommands(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "MODULE", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s, .since = "4.0.0",
       .summary = "A container for module commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "LIST", .arity = 2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdModuleList, .group = s,
       .since = "4.0.0", .summary = "Returns all loaded modules.", .syntax = "",
       .complexity = "O(N) where N is the number of loaded modules",
       .tips = "nondeterministic_output_order"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdModuleHelp, .group = s, .since = "5.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
      {.name = "LOAD", .arity = -3, .flags = kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
       .fn = CmdModuleLoad, .group = s, .since = "4.0.0", .summary = "Loads a module.",
       .syntax = "path [arg [arg ...]]", .complexity = "O(1)"},
      {.name = "LOADEX", .arity = -3, .flags = kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
       .fn = CmdModuleLoad, .group = s, .since = "7.0.0",
       .summary = "Loads a module using extended parameters.",
       .syntax = "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]",
       .complexity = "O(1)"},
      {.name = "UNLOAD", .arity = 3, .flags = kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
       .fn = CmdModuleLoad, .group = s, .since = "4.0.0", .summary = "Unloads a module.",
       .syntax = "name", .complexity = "O(1)"},
  }, "module");
  // clang-format on
}

}  // namespace vessel::engine
