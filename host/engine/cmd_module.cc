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
  AddBuiltins(r, {
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
                 });
  AddBuiltins(r,
              {
                  {"LIST",
                   2,
                   kA | VSL_CMD_NOSCRIPT,
                   {},
                   CmdModuleList,
                   s,
                   "4.0.0",
                   "Returns all loaded modules.",
                   "",
                   "O(N) where N is the number of loaded modules",
                   nullptr,
                   "nondeterministic_output_order"},
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
                   kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
                   {},
                   CmdModuleLoad,
                   s,
                   "4.0.0",
                   "Loads a module.",
                   "path [arg [arg ...]]",
                   "O(1)"},
                  {"LOADEX",
                   -3,
                   kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
                   {},
                   CmdModuleLoad,
                   s,
                   "7.0.0",
                   "Loads a module using extended parameters.",
                   "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]",
                   "O(1)"},
                  {"UNLOAD",
                   3,
                   kA | VSL_CMD_NOSCRIPT | kCmdNoAsyncLoading,
                   {},
                   CmdModuleLoad,
                   s,
                   "4.0.0",
                   "Unloads a module.",
                   "name",
                   "O(1)"},
              },
              "module");
}

}  // namespace vessel::engine
