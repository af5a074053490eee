// Host built-in commands: definitions shared by the cmd_*.cc files, which hold the handlers.
#ifndef VESSEL_HOST_ENGINE_BUILTINS_H_
#define VESSEL_HOST_ENGINE_BUILTINS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "host/engine/context.h"
#include "host/engine/engine.h"
#include "host/engine/registry.h"

namespace vessel::engine {

// One row of a built-in registration table.
struct BuiltinDef {
  const char* name;
  int32_t arity;
  uint64_t flags;
  std::vector<KeySpec> keys;
  NativeHandler fn;
  const char* group;
  const char* since;
  const char* summary;
  const char* syntax;
  const char* complexity;
  NativeHandler resolve = nullptr;
  const char* tips = nullptr;  // space separated COMMAND INFO tips
  const char* acl = nullptr;   // extra ACL categories, e.g. "dangerous"
  bool (*needs_world)(const std::string_view* argv, int argc) = nullptr;  // see CommandSpec
  void (*getkeys)(const std::string_view* argv, int argc, KeyRefs* out) = nullptr;
  uint64_t (*call_flags)(const std::string_view* argv, int argc, uint64_t flags) = nullptr;
};

// Key spec shorthands: a range of keys from argv[index] (last relative to it, -1 = the last
// argument) and a keynum spec.
KeySpec KeyAt(int32_t index, uint32_t flags, int32_t last = 0, int32_t step = 1);
KeySpec KeyNum(int32_t begin, uint32_t flags, int32_t keynum_index, int32_t first_key);
// A key spec COMMAND INFO shows with Redis's "unknown" begin_search and find_keys: keys the
// command finds itself (CommandSpec::getkeys or its handler), with a note saying where.
KeySpec KeyUnknown(uint32_t flags, const char* notes);

// Registers the rows; with a parent, as its subcommands (the parent must be registered first).
void AddBuiltins(Registry& r, const std::vector<BuiltinDef>& defs, const char* parent = nullptr);

void RegisterKeyspaceCommands(Registry& r);
void RegisterDbCommands(Registry& r);
void RegisterExpireCommands(Registry& r);
void RegisterConnectionCommands(Registry& r);
void RegisterServerCommands(Registry& r);
void RegisterModuleCommands(Registry& r);
void RegisterMemoryCommands(Registry& r);
void RegisterIntrospectionCommands(Registry& r);
void RegisterTransactionCommands(Registry& r);
void RegisterCommandCommand(Registry& r);
void RegisterConfigCommands(Registry& r);
void RegisterMonitorCommands(Registry& r);
void RegisterClientCommands(Registry& r);
void RegisterDebugCommands(Registry& r);
void RegisterSortCommands(Registry& r);
// The line MONITOR shows for the command in ctx.
std::string MonitorLine(const CommandCtx& ctx);
void RegisterDumpCommands(Registry& r);

// ---- helpers for handlers ----

inline resp::Writer& W(CommandCtx* ctx) { return *ctx->w; }
inline std::string_view Arg(CommandCtx* ctx, int i) { return ctx->argv[i]; }
inline Session& S(CommandCtx* ctx) { return *ctx->session; }

// The live entry of declared key i (expired entries hidden or dropped).
Entry* LookupKey(CommandCtx* ctx, int i);
// Standard errors, Redis's exact texts.
void ReplyNotInteger(CommandCtx* ctx);   // "ERR value is not an integer or out of range"
void ReplySyntaxError(CommandCtx* ctx);  // "ERR syntax error"
// Parses argv[i] as an integer or replies the standard error and returns false.
bool IntArg(CommandCtx* ctx, int i, int64_t* out);
// Parses a database index argument: false after replying the error.
bool DbArg(CommandCtx* ctx, int i, int* out);
void ReplyOk(CommandCtx* ctx);
// A HELP reply: one simple string per line.
void ReplyHelp(CommandCtx* ctx, std::initializer_list<const char*> lines);
// The loaded modules as MODULE LIST and HELLO show them (cmd_module.cc).
void ReplyModules(CommandCtx* ctx);
// The CLIENT LIST line of a session (also the client-info of ACL LOG entries).
std::string ClientInfoLine(Session* s, int64_t now);
// A session's memory as CLIENT LIST's tot-mem counts it from the figures its worker published
// (INFO memory's mem_clients_normal and mem_clients_slaves add these up).
size_t ClientMemory(Session* s);
// Client names and library names: printable, no spaces (Redis validateClientAttr).
bool ValidClientAttr(std::string_view v);
// The value CONFIG GET shows for a parameter (exact name, case-insensitive); false if unknown.
bool ReadSetting(Engine& engine, std::string_view name, std::string* value);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_BUILTINS_H_
