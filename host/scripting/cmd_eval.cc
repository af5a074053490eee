// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP|DEBUG.
//
// Locking: the declared keys (numkeys) are locked by the engine from the key specs, exclusively
// unless the run is read-only (the *_RO commands, or a `#!lua flags=no-writes` script: the
// resolve hook downgrades its keys). A script never seen run, or seen touching keys it did not
// declare, runs with the whole keyspace held (the needs_world hook). See docs/scripting.md.
//
// Differences from Redis: SCRIPT DEBUG (the Lua debugger) is refused; the script cache and
// compiled functions are per worker thread (each compiles a script on its first use there).
#include "host/engine/builtins.h"
#include "host/scripting/local.h"
#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
}

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace vessel::scripting {
namespace {

using engine::Arg;
using engine::Cat;
using engine::CommandSpec;
using engine::EqualsIgnoreCase;
using engine::W;

constexpr char kNoScript[] = "NOSCRIPT No matching script. Please use EVAL.";

bool IsEvalSha(const std::string_view* argv) {
  return argv[0].size() >= 7 && EqualsIgnoreCase(argv[0].substr(0, 7), "evalsha");
}

// A 40-character SHA1 in lower case, on the stack (EVALSHA looks its script up three times).
struct LowerSha {
  explicit LowerSha(std::string_view sha) {  // sha has 40 bytes; lowered 8 at a time (SWAR)
    constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
    for (size_t i = 0; i < sizeof(c); i += 8) {
      uint64_t x;
      std::memcpy(&x, sha.data() + i, 8);
      const uint64_t low7 = x & ~kHigh;
      const uint64_t ge_a = low7 + kOnes * (0x80 - 'A');  // high bit: byte >= 'A'
      const uint64_t gt_z = low7 + kOnes * (0x7f - 'Z');  // high bit: byte > 'Z'
      const uint64_t upper = (ge_a ^ gt_z) & ~x & kHigh;  // ASCII bytes in 'A'..'Z'
      x ^= upper >> 2;                                    // 0x80 >> 2 is the case bit
      std::memcpy(c + i, &x, 8);
    }
  }
  operator std::string_view() const { return {c, sizeof(c)}; }
  char c[40];
};

// The cached script an EVAL/EVALSHA names, or null (not cached yet).
std::shared_ptr<Script> Lookup(Scripting* sc, const std::string_view* argv) {
  if (IsEvalSha(argv)) {
    if (argv[1].size() != 40) return nullptr;
    return sc->FindScript(LowerSha(argv[1]));
  }
  return sc->FindScript(BodySha(sc, argv[1]));
}

// needs_world: a script not known to keep to its declared keys runs with the keyspace held.
bool EvalNeedsWorld(const std::string_view* argv, int argc) {
  Scripting* sc = Scripting::Any();  // the hook has no context: see Scripting::Any
  if (sc == nullptr) return false;
  auto s = Lookup(sc, argv);
  if (s == nullptr) return !IsEvalSha(argv);  // EVAL of a new script: its first run
  return s->mode.load(std::memory_order_relaxed) != static_cast<int>(KeyMode::kDeclared);
}

// call_flags: a script with a shebang is checked with the flags it declares.
uint64_t EvalCallFlags(const std::string_view* argv, int argc, uint64_t flags) {
  Scripting* sc = Scripting::Any();  // the hook has no context: see Scripting::Any
  if (sc == nullptr) return flags;
  uint32_t script_flags = kFlagEvalCompat;
  if (auto s = Lookup(sc, argv)) {
    script_flags = s->flags;
  } else if (!IsEvalSha(argv)) {  // not cached yet: its shebang
    size_t len = 0;
    std::string error;
    if (!ParseShebang(argv[1], &script_flags, &len, &error)) return flags;
  }
  if (script_flags & kFlagEvalCompat) return flags;
  return ScriptCommandFlags(flags, script_flags);
}

// resolve hook: a no-writes script locks its keys shared.
void EvalResolve(engine::CommandCtx* ctx) {
  Scripting* sc = Scripting::Of(ctx->engine);
  auto s = Lookup(sc, ctx->argv);
  if (s == nullptr || (s->flags & kFlagEvalCompat) || !(s->flags & kFlagNoWrites)) return;
  for (engine::CommandKey& k : ctx->keys) k.flags = VSL_KS_RO | VSL_KS_ACCESS;
}

// Parses numkeys (argv[2]); false after replying Redis's error.
bool NumKeys(engine::CommandCtx* ctx, int* out) {
  int64_t n = 0;
  if (!engine::ParseInt64(Arg(ctx, 2), &n)) {
    engine::ReplyNotInteger(ctx);
    return false;
  }
  if (n > ctx->argc - 3) {
    W(ctx).ErrorLine("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (n < 0) {
    W(ctx).ErrorLine("ERR Number of keys can't be negative");
    return false;
  }
  *out = static_cast<int>(n);
  return true;
}

void EvalGeneric(engine::CommandCtx* ctx, bool evalsha, bool ro) {
  Scripting* sc = Scripting::Of(ctx->engine);
  int nkeys = 0;
  if (!NumKeys(ctx, &nkeys)) return;
  std::shared_ptr<Script> s;
  std::string error;
  if (evalsha) {
    if (Arg(ctx, 1).size() == 40) s = sc->FindScript(LowerSha(Arg(ctx, 1)));
    if (s == nullptr) return W(ctx).ErrorLine(kNoScript);
  } else {
    s = sc->FindScript(BodySha(sc, Arg(ctx, 1)));
    if (s == nullptr) s = sc->AddScript(Arg(ctx, 1), &error);
    if (s == nullptr) return W(ctx).ErrorLine(error);
  }
  if (!(s->flags & kFlagEvalCompat) && !(s->flags & kFlagNoWrites) && ro)
    return W(ctx).ErrorLine("ERR Can not execute a script with write flag using *_ro command.");
  lua_State* L = EvalState(sc);
  if (L == nullptr)
    return W(ctx).ErrorLine(Cat("ERR Error running script ", s->sha, ", not enough memory"));
  PushErrorHandler(L);
  if (!PushScriptFunction(L, *s, &error)) {
    lua_pop(L, 1);
    return W(ctx).ErrorLine(error);
  }
  RunSpec spec;
  spec.eval = true;
  spec.name = s->sha;
  spec.flags = s->flags;
  spec.ro = ro;
  spec.mode = &s->mode;
  spec.nkeys = nkeys;
  RunScript(ctx, L, spec);
}

// EVAL script numkeys [key [key ...]] [arg [arg ...]]
void CmdEval(engine::CommandCtx* ctx) { EvalGeneric(ctx, false, false); }
// EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]
void CmdEvalRo(engine::CommandCtx* ctx) { EvalGeneric(ctx, false, true); }
// EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]
void CmdEvalSha(engine::CommandCtx* ctx) { EvalGeneric(ctx, true, false); }
// EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]
void CmdEvalShaRo(engine::CommandCtx* ctx) { EvalGeneric(ctx, true, true); }

// SCRIPT LOAD script
void CmdScriptLoad(engine::CommandCtx* ctx) {
  std::string error;
  auto s = Scripting::Of(ctx->engine)->AddScript(Arg(ctx, 2), &error);
  if (s == nullptr) return W(ctx).ErrorLine(error);
  W(ctx).Bulk(s->sha);
}

// SCRIPT EXISTS sha1 [sha1 ...]
void CmdScriptExists(engine::CommandCtx* ctx) {
  Scripting* sc = Scripting::Of(ctx->engine);
  W(ctx).Aggregate(resp::AggKind::kArray, ctx->argc - 2);
  for (int j = 2; j < ctx->argc; ++j) {  // case-insensitive, as Redis's script dict
    const std::string_view sha = Arg(ctx, j);
    W(ctx).Int(sha.size() == 40 && sc->FindScript(LowerSha(sha)) != nullptr ? 1 : 0);
  }
}

// SCRIPT FLUSH [ASYNC|SYNC]
void CmdScriptFlush(engine::CommandCtx* ctx) {
  if (ctx->argc > 3 || (ctx->argc == 3 && !EqualsIgnoreCase(Arg(ctx, 2), "sync") &&
                        !EqualsIgnoreCase(Arg(ctx, 2), "async")))
    return W(ctx).ErrorLine("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  Scripting::Of(ctx->engine)->FlushScripts();
  engine::ReplyOk(ctx);
}

// SCRIPT KILL
void CmdScriptKill(engine::CommandCtx* ctx) {
  const std::string reply = Scripting::Of(ctx->engine)->Kill(/*eval=*/true);
  if (reply == "+OK") return engine::ReplyOk(ctx);
  W(ctx).ErrorLine(reply[0] == '-' ? std::string_view(reply).substr(1) : reply);
}

// SCRIPT DEBUG YES|SYNC|NO
void CmdScriptDebug(engine::CommandCtx* ctx) {
  const std::string_view mode = Arg(ctx, 2);
  if (EqualsIgnoreCase(mode, "no")) return engine::ReplyOk(ctx);
  if (!EqualsIgnoreCase(mode, "yes") && !EqualsIgnoreCase(mode, "sync"))
    return W(ctx).ErrorLine("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  W(ctx).ErrorLine("ERR SCRIPT DEBUG (the Lua debugger) is not supported by this server");
}

// SCRIPT HELP
void CmdScriptHelp(engine::CommandCtx* ctx) {
  engine::ReplyHelp(
      ctx,
      {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DEBUG (YES|SYNC|NO)",
       "    Set the debug mode for subsequent scripts executed.", "EXISTS <sha1> [<sha1> ...]",
       "    Return information about the existence of the scripts in the script cache.",
       "FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache. Very dangerous on replicas.",
       "    When called without the optional mode argument, the behavior is determined by the",
       "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
       "    * ASYNC: Asynchronously flush the scripts cache.",
       "    * SYNC: Synchronously flush the scripts cache.", "KILL",
       "    Kill the currently executing Lua script.", "LOAD <script>",
       "    Load a script into the scripts cache without executing it.", "HELP",
       "    Print this help."});
}

void CmdContainer(engine::CommandCtx*) {}

}  // namespace

// ---- helpers shared with cmd_function.cc ----

const std::string& BodySha(Scripting* sc, std::string_view body) {
  LocalState& ls = Local(sc);
  if (ls.memo_sha.empty() || ls.memo_body != body) {
    ls.memo_body.assign(body);
    ls.memo_sha = Sha1Hex(body);
  }
  return ls.memo_sha;
}

uint64_t ScriptCommandFlags(uint64_t cmd_flags, uint32_t script_flags) {
  cmd_flags &= ~(engine::kCmdStale | VSL_CMD_DENYOOM | VSL_CMD_WRITE | engine::kCmdMayReplicate);
  if (!(script_flags & (kFlagAllowOom | kFlagNoWrites))) cmd_flags |= VSL_CMD_DENYOOM;
  if (!(script_flags & kFlagNoWrites)) cmd_flags |= VSL_CMD_WRITE;
  if (script_flags & kFlagAllowStale) cmd_flags |= engine::kCmdStale;
  return cmd_flags;
}

bool ParseShebang(std::string_view body, uint32_t* flags, size_t* len, std::string* error) {
  *flags = kFlagEvalCompat;
  *len = 0;
  if (!body.starts_with("#!")) return true;
  const size_t nl = body.find('\n');
  if (nl == std::string_view::npos) {
    *error = "Invalid script shebang";
    return false;
  }
  *len = nl;
  const std::vector<std::string> parts = engine::SplitWords(body.substr(0, nl));
  if (parts.empty()) {
    *error = "Invalid engine in script shebang";
    return false;
  }
  if (parts[0] != "#!lua") {
    *error = Cat("Unexpected engine in script shebang: ", parts[0]);
    return false;
  }
  *flags = 0;
  for (size_t j = 1; j < parts.size(); ++j) {
    if (!parts[j].starts_with("flags=")) {
      *error = Cat("Unknown lua shebang option: ", parts[j]);
      return false;
    }
    std::string_view list = std::string_view(parts[j]).substr(6);
    while (!list.empty()) {  // Redis splits on ',': "a,,b" has an empty, unknown flag
      const size_t comma = list.find(',');
      const std::string_view f = list.substr(0, comma);
      uint32_t bit = 0;
      for (const FlagName& n : kFlagNames)
        if (f == n.name) bit = n.flag;
      if (bit == 0) {
        *error = Cat("Unexpected flag in script shebang: ", f);
        return false;
      }
      *flags |= bit;
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
      if (list.empty()) {
        *error = "Unexpected flag in script shebang: ";
        return false;
      }
    }
  }
  return true;
}

void AddScriptCalls(engine::Registry& r, const ScriptCallKind& kind,
                    std::initializer_list<ScriptCallDef> calls) {
  constexpr uint64_t kFlags =
      VSL_CMD_NOSCRIPT | engine::kCmdStale | engine::kCmdSkipMonitor | engine::kCmdNoMandatoryKeys;
  std::vector<std::string> syntax;  // the rows point into it until AddBuiltins copied them
  syntax.reserve(calls.size());
  std::vector<engine::BuiltinDef> rows;
  for (const ScriptCallDef& c : calls) {
    syntax.push_back(Cat(c.first_arg, " numkeys [key [key ...]] [arg [arg ...]]"));
    engine::KeySpec keys = engine::KeyNum(
        2, c.ro ? VSL_KS_RO | VSL_KS_ACCESS : VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE, 0, 1);
    if (c.key_notes)
      keys.notes = Cat("We cannot tell how the keys will be used so we assume the worst, ",
                       c.ro ? "RO and ACCESS" : "RW and UPDATE");
    rows.push_back({.name = c.name,
                    .arity = -3,
                    .flags = c.ro ? kFlags | VSL_CMD_READONLY : kFlags,
                    .keys = {std::move(keys)},
                    .fn = c.fn,
                    .group = "scripting",
                    .since = c.since,
                    .summary = c.summary,
                    .syntax = syntax.back().c_str(),
                    .complexity = kind.complexity,
                    .resolve = kind.resolve,
                    .needs_world = kind.needs_world,
                    .call_flags = kind.call_flags});
  }
  engine::AddBuiltins(r, rows);
}

void RegisterEvalCommands(engine::Registry& r) {
  const char* g = "scripting";
  // clang-format off
  AddScriptCalls(r, {"Depends on the script that is executed.", EvalResolve, EvalNeedsWorld,
                     EvalCallFlags}, {
      {.name = "EVAL", .first_arg = "script", .fn = CmdEval, .since = "2.6.0",
       .summary = "Executes a server-side Lua script."},
      {.name = "EVAL_RO", .ro = true, .first_arg = "script", .fn = CmdEvalRo, .since = "7.0.0",
       .summary = "Executes a read-only server-side Lua script."},
      {.name = "EVALSHA", .first_arg = "sha1", .fn = CmdEvalSha, .since = "2.6.0",
       .summary = "Executes a server-side Lua script by SHA1 digest.", .key_notes = false},
      {.name = "EVALSHA_RO", .ro = true, .first_arg = "sha1", .fn = CmdEvalShaRo, .since = "7.0.0",
       .summary = "Executes a read-only server-side Lua script by SHA1 digest.",
       .key_notes = false},
  });
  // clang-format on
  engine::AddBuiltins(r, {{.name = "SCRIPT",
                           .arity = -2,
                           .flags = 0,
                           .fn = CmdContainer,
                           .group = "server",
                           .since = "2.6.0",
                           .summary = "A container for Lua scripts management commands.",
                           .syntax = "",
                           .complexity = "Depends on subcommand."}});
  constexpr uint64_t kN = VSL_CMD_NOSCRIPT;
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "LOAD", .arity = 3, .flags = kN | engine::kCmdStale, .fn = CmdScriptLoad, .group = g,
       .since = "2.6.0", .summary = "Loads a server-side Lua script to the script cache.",
       .syntax = "script",
       .complexity = "O(N) with N being the length in bytes of the script body.",
       .tips = "request_policy:all_nodes response_policy:all_succeeded"},
      {.name = "EXISTS", .arity = -3, .flags = kN, .fn = CmdScriptExists, .group = g,
       .since = "2.6.0",
       .summary = "Determines whether server-side Lua scripts exist in the script cache.",
       .syntax = "sha1 [sha1 ...]",
       .complexity = "O(N) with N being the number of scripts to check",
       .tips = "request_policy:all_shards response_policy:agg_logical_and"},
      {.name = "FLUSH", .arity = -2, .flags = kN, .fn = CmdScriptFlush, .group = g,
       .since = "2.6.0", .summary = "Removes all server-side Lua scripts from the script cache.",
       .syntax = "[ASYNC | SYNC]", .complexity = "O(N) with N being the number of scripts in cache",
       .tips = "request_policy:all_nodes response_policy:all_succeeded"},
      {.name = "KILL", .arity = 2, .flags = kN | engine::kCmdAllowBusy, .fn = CmdScriptKill,
       .group = g, .since = "2.6.0",
       .summary = "Terminates a server-side Lua script during execution.", .syntax = "",
       .complexity = "O(1)", .tips = "request_policy:all_shards response_policy:one_succeeded"},
      {.name = "DEBUG", .arity = 3, .flags = kN, .fn = CmdScriptDebug, .group = g, .since = "3.2.0",
       .summary = "Sets the debug mode of server-side Lua scripts.", .syntax = "YES | SYNC | NO",
       .complexity = "O(1)"},
      {.name = "HELP", .arity = 2, .flags = engine::kCmdLoading | engine::kCmdStale,
       .fn = CmdScriptHelp, .group = g, .since = "5.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "script");
  // clang-format on
}

}  // namespace vessel::scripting
