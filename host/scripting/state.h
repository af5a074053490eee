// The scripting subsystem's shared state: the EVAL script cache, the FUNCTION libraries, the
// registry of running scripts (BUSY, SCRIPT KILL) and the per-thread Lua states.
//
// Threads and locks:
//  - Each worker thread runs scripts in its own Lua states (one for EVAL, one for functions),
//    created lazily and touched by that thread only (LocalState, thread_local).
//  - Scripting::scripts_mu_ guards the script cache (sha -> Script); a Script never changes once
//    cached, except its atomic `mode`. SCRIPT FLUSH empties the cache and bumps
//    eval_generation_: each thread drops its EVAL state at its next script.
//  - Scripting::functions_mu_ guards `functions_` (an immutable FunctionSet replaced as a whole
//    on every change, copy-on-write) and serializes FUNCTION LOAD/DELETE/FLUSH/RESTORE;
//    fn_generation_ tells threads to rebuild their function state.
//  - Scripting::running_mu_ guards `running_` (the scripts executing now, one per worker at
//    most); each Running's flags are atomics its script's hook polls. Nothing on an event loop
//    waits for a running script: the engine asks ShardHold/WorldHold/AnyHold and postpones or
//    refuses its work; Unregister and the first hook past busy-reply-threshold tell it
//    (Engine::ScriptsChanged) so that the postponed work runs again.
#ifndef VESSEL_HOST_SCRIPTING_STATE_H_
#define VESSEL_HOST_SCRIPTING_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "host/engine/context.h"
#include "host/engine/engine.h"
#include "host/scripting/scripting.h"

extern "C" {
#include <lua.h>
}

namespace vessel::scripting {

// Redis's SCRIPT_FLAG_* (script shebang flags and function flags).
enum ScriptFlag : uint32_t {
  kFlagNoWrites = 1u << 0,
  kFlagAllowOom = 1u << 1,
  kFlagAllowStale = 1u << 2,
  kFlagNoCluster = 1u << 3,
  kFlagAllowCrossSlot = 1u << 4,
  kFlagEvalCompat = 1u << 5,  // an EVAL script without a shebang (Redis's compat mode)
};
// The flag names in Redis's order (FUNCTION LIST prints them in it).
struct FlagName {
  uint32_t flag;
  const char* name;
};
inline constexpr FlagName kFlagNames[] = {{kFlagNoWrites, "no-writes"},
                                          {kFlagAllowOom, "allow-oom"},
                                          {kFlagAllowStale, "allow-stale"},
                                          {kFlagNoCluster, "no-cluster"},
                                          {kFlagAllowCrossSlot, "allow-cross-slot-keys"}};

// What runs of a script taught us about the keys it touches (docs/scripting.md, "Atomicity on
// many threads"): unknown (never ran: the next run holds the whole keyspace), declared (touched
// only its declared keys: runs under their locks), undeclared (touched others: always the whole
// keyspace).
enum class KeyMode : int { kUnknown = 0, kDeclared = 1, kUndeclared = 2 };

struct Script {
  std::string sha;  // 40 lowercase hex digits
  std::string body;
  uint32_t flags = kFlagEvalCompat;
  size_t shebang_len = 0;  // the shebang line is skipped when compiling (its \n is kept)
  std::atomic<int> mode{0};
};

struct Library;
struct Function {
  std::string name;
  std::string desc;  // empty: none
  bool has_desc = false;
  uint32_t flags = 0;
  Library* lib = nullptr;
  std::atomic<int> mode{0};
};
struct Library {
  std::string name;
  std::string engine = "LUA";
  std::string code;  // the whole source, shebang included
  std::vector<std::unique_ptr<Function>> functions;
};
// An immutable set of libraries, replaced as a whole when one changes.
struct FunctionSet {
  std::map<std::string, std::shared_ptr<Library>> libs;
  absl::flat_hash_map<std::string, Function*> functions;
  size_t function_count() const { return functions.size(); }
};

// A script or function executing now. Written by its own thread; the atomics are read by others.
struct Running {
  int worker = 0;
  int64_t start_ms = 0;
  bool world = false;  // holds the whole keyspace
  bool eval = true;    // EVAL (SCRIPT KILL) or FCALL (FUNCTION KILL)
  std::string name;    // sha or function name
  std::vector<std::string> argv;
  std::vector<std::pair<uint64_t, bool>> shards;  // (db << 32 | shard, exclusive) it holds
  std::atomic<bool> kill{false};
  std::atomic<bool> wrote{false};
  std::atomic<bool> timedout{false};  // past busy-reply-threshold
};

// Why a run stops before its end, whatever pcalls the script has: from then on every line of
// the script raises (the hook), so the error cannot be swallowed.
enum class Abort {
  kNone,
  kKill,     // SCRIPT KILL / FUNCTION KILL / SHUTDOWN (Running::kill)
  kRestart,  // it needs keys or the whole keyspace it does not hold, and changed nothing yet:
             // the command runs again with the whole keyspace held (CommandCtx::rerun)
};

// The context of one script run, reachable from the Lua callbacks through t_run.
struct RunCtx {
  class Scripting* sc = nullptr;
  engine::Engine* engine = nullptr;
  engine::CommandCtx* caller = nullptr;
  int db = 0;
  int resp = 2;  // redis.setresp
  bool read_only = false;
  bool allow_oom = false;
  bool eval = true;
  std::string_view name;
  engine::LockSet extra;    // shards try-locked for keys the script did not declare
  bool undeclared = false;  // it touched a key outside its declared keys
  Running* running = nullptr;
  int64_t start_ms = 0;
  int64_t threshold_ms = 0;
  lua_State* main = nullptr;  // the state the script runs in (the hook is set on it)
  // The command may run again with the whole keyspace held when the script learns it needs more
  // than its locks (a client's command, not inside EXEC: CommandCtx::rerun).
  bool can_restart = false;
  bool side_effects = false;  // it wrote or published: a restart would repeat that
  Abort abort = Abort::kNone;
  int hook_period = 0;     // the count hook's period now (lua_hook.cc)
  int64_t hook_at_us = 0;  // when the hook last ran (steady clock)
};
extern thread_local RunCtx* t_run;

class Scripting : public engine::BusyProbe,
                  public engine::FunctionLibraries,
                  public engine::ScriptFigures,
                  public Subsystem {
 public:
  explicit Scripting(engine::Engine* engine);
  ~Scripting() override;
  static Scripting* Of(engine::Engine* engine);
  // The instance installed last: for the engine hooks that get no context (needs_world). One
  // server per process in production; tests with several servers share script knowledge wrongly
  // at worst (a run under the whole keyspace when not needed), never incorrectly.
  static Scripting* Any();

  engine::Engine* engine() const { return engine_; }

  // ---- EVAL script cache ----
  // The cached script with this sha (lowercase hex), or null.
  std::shared_ptr<Script> FindScript(std::string_view sha);
  // Adds a script (compiling it in this thread's state first); null with *error on a bad
  // shebang or a compile error.
  std::shared_ptr<Script> AddScript(std::string_view body, std::string* error);
  void FlushScripts();
  uint64_t eval_generation() const { return eval_generation_.load(std::memory_order_acquire); }

  // ---- FUNCTION libraries ----
  std::shared_ptr<const FunctionSet> functions();
  uint64_t fn_generation() const { return fn_generation_.load(std::memory_order_acquire); }
  // FUNCTION LOAD: the library name, or "" with *error.
  std::string LoadLibrary(std::string_view code, bool replace, std::string* error);
  bool DeleteLibrary(std::string_view name);
  void FlushFunctions();
  bool Restore(std::string_view payload, RestorePolicy policy, std::string* error);
  std::string Dump();
  // engine::FunctionLibraries (snapshots).
  std::vector<std::string> LibrarySources() override;
  bool AddLibrarySource(std::string_view code, std::string* error) override;

  // ---- running scripts ----
  void Register(Running* r);
  void Unregister(Running* r);
  // Records a shard a running script added to its locks (db << 32 | shard).
  void NoteShard(Running* r, uint64_t order, bool exclusive);
  // SCRIPT KILL (eval=true) / FUNCTION KILL: the reply line ("OK" or an error).
  std::string Kill(bool eval);
  // Stops every running script at its next hook or poll, whether or not it wrote (as SHUTDOWN
  // NOSAVE does, without shutting down): for harnesses that bound each run's time (the fuzzer).
  void KillAll();
  // FUNCTION STATS' running_script: false when none runs; with *eval_busy when an EVAL runs.
  bool RunningInfo(std::string* name, std::vector<std::string>* argv, int64_t* ms, bool* eval);
  int64_t threshold_ms() const;

  // The running script passed busy-reply-threshold (its hook noticed): every client is answered
  // BUSY now, and what waits for scripts tries again.
  void NoteTimedOut() { engine_->CountBusyScript(+1); }

  // engine::BusyProbe
  engine::ScriptHold ShardHold(uint32_t db, uint32_t shard, std::string* busy) override;
  engine::ScriptHold WorldHold(std::string* busy) override;
  engine::ScriptHold AnyHold(std::string* busy) override;
  void OnShutdown() override;
  // engine::ScriptFigures (INFO memory).
  engine::ScriptMemory Memory() override;

 private:
  engine::Engine* engine_;
  int p_threshold_;

  std::shared_mutex scripts_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Script>> scripts_;
  std::atomic<uint64_t> eval_generation_{1};

  std::mutex functions_mu_;
  std::shared_ptr<const FunctionSet> functions_;
  std::atomic<uint64_t> fn_generation_{1};

  std::mutex running_mu_;
  std::vector<Running*> running_;
  std::atomic<int> running_count_{0};
  std::atomic<bool> shutting_down_{false};
};

// ---- pieces implemented in the other files of this folder ----

// The flags a call of a script with these flags is checked with, as Redis's
// scriptFlagsToCmdFlags: a script that declared its flags (a shebang, or a function) is a write
// unless no-writes, deny-oom unless allow-oom or no-writes, stale only with allow-stale.
uint64_t ScriptCommandFlags(uint64_t cmd_flags, uint32_t script_flags);

// Parses a script shebang ("#!lua flags=..."): flags and the line's length; false with Redis's
// error text.
bool ParseShebang(std::string_view body, uint32_t* flags, size_t* len, std::string* error);
// 40 lowercase hex digits of SHA1(data) (OpenSSL).
std::string Sha1Hex(std::string_view data);

enum class LuaKind { kEval, kFunction };
// A new sandboxed state with Redis's libraries and API (lua_env.cc); null when memory ran out
// while building it. Close it with CloseLuaState.
lua_State* NewLuaState(LuaKind kind);
void CloseLuaState(lua_State* L);
// Bytes the state has allocated (its cap: SetLuaMemoryLimit in scripting.h).
size_t LuaMemoryUsed(lua_State* L);
// INFO memory's Lua heaps: every live state's bytes of one kind as each last published them. A
// state publishes when built and after each run (PublishLuaMemory, on its own thread), so the
// figure trails a running script by that run; a closed state takes its bytes back.
void PublishLuaMemory(lua_State* L);
int64_t LuaMemoryOfKind(LuaKind kind);

// A host-side sequence of Lua API calls that may raise (a metamethod, a memory error) runs
// through CallProtected: fn(L, arg) runs as a Lua C function under lua_pcall, taking the nargs
// values on top of the stack as its arguments, so an error comes back as lua_pcall's status
// with the error object on the stack (nresults as lua_pcall's) instead of ending the process in
// Lua's panic. The rule for fn, and for every C function Lua calls: no C++ object with a
// destructor may be alive across a Lua API call that can raise, since Lua 5.1 longjmps over it.
int CallProtected(lua_State* L, int nargs, int nresults, int (*fn)(lua_State*, void*), void* arg);
template <typename F>
int CallProtected(lua_State* L, int nargs, int nresults, F& f) {
  return CallProtected(
      L, nargs, nresults, [](lua_State* S, void* a) { return (*static_cast<F*>(a))(S); }, &f);
}
// Loads a chunk as source text only, as Redis's Lua does: a chunk starting with the bytecode
// signature is parsed as text (and fails to compile) rather than undumped. lua_load's status.
int LoadChunk(lua_State* L, const char* code, size_t len, const char* name);

// Function states: points the globals at the library-loading API (FUNCTION LOAD) or back.
void SetLoadApi(lua_State* L, bool loading);
// Pushes the error handler of the state (Redis's __redis__err__handler).
void PushErrorHandler(lua_State* L);
// With the error handler and the function on top: sets KEYS/ARGV (EVAL) or pushes the keys and
// arguments tables (FCALL), protected. On failure (memory) the function is replaced by the
// error object, as a failed lua_pcall leaves the stack; returns lua_pcall's status.
int PushRunArgs(lua_State* L, bool eval, const std::string_view* keys, int nkeys,
                const std::string_view* args, int nargs);
// Pushes Redis's error table {err="CODE msg"} for an error text (with or without '-'). Like
// Redis, the text ends at its first NUL and leading/trailing CR/LF are dropped.
void PushErrorTable(lua_State* L, std::string_view error);
// The table a read-only proxy stands for (the value itself when it is not a proxy), pushed.
void PushProxyTarget(lua_State* L, int idx);
// Undoes what a script changed in state-wide settings that are not Lua values (cjson's encoder
// and decoder options, the collector's parameters), so that nothing one script sets reaches
// the next one. Cheap when nothing changed; call after every run and library load.
void ResetScriptSettings(lua_State* L);
// ---- the run hook (lua_hook.cc) ----
// The error a killed script ends with (SCRIPT KILL, FUNCTION KILL).
inline constexpr char kScriptKilled[] = "Script killed by user with SCRIPT KILL...";
// Installs the count hook that enforces busy-reply-threshold and SCRIPT KILL.
void SetRunHook(lua_State* L, bool on);
// Makes the hook fire on every line and count tick: a run being stopped (RunCtx::abort).
void SetAbortHook(lua_State* L);
// The run hook's work, for other hooks a coroutine may carry into a run (functions.cc).
void RunHookFromOtherHook(lua_State* L, lua_Debug* ar);
// Raises the SCRIPT KILL error when the running script was killed; for long loops in C (reply
// conversion, cmsgpack) that the count hook cannot interrupt. Call only from protected code.
void CheckKilled(lua_State* L);
// True while the script running on this thread has been killed. The allocator then refuses to
// grow anything, so a C function that works in proportion to its allocations (string.rep,
// table.concat, ...) stops at once rather than at the next count hook, which a loop of such
// calls may reach only after hours.
bool KillPending();

// The libraries Redis bundles and Debian does not package (lua_libs.cc).
int OpenStruct(lua_State* L);
int OpenCmsgpack(lua_State* L);
// Replaces rep, find, match, gmatch and gsub in the string table on top of the stack
// (lua_patterns.cc).
void ReplaceStringPatterns(lua_State* L);
// Debian's cjson and bit with Redis's differences (lua_packaged_libs.cc): WrapCjson wraps the
// functions of the cjson table on top of the stack and records its options' defaults, which
// RestoreCjson (a CallProtected body) puts back; BitTohex is bit.tohex.
void WrapCjson(lua_State* L);
int RestoreCjson(lua_State* L, void*);
int BitTohex(lua_State* L);
// A script changed cjson's options: ResetScriptSettings puts them back after the run (lua_env.cc).
void NoteCjsonChanged(lua_State* L);
// The stack index idx as one that stays valid after pushes (Lua 5.1 has no lua_absindex).
int AbsIndex(lua_State* L, int idx);
// The redis table (lua_redis.cc): PushRedisApi pushes the one scripts see at run time;
// AddLogAndVersion adds log, its levels and the version fields to the table on top of the stack
// (also all library code sees of `redis` while FUNCTION LOAD runs it, with register_function).
void PushRedisApi(lua_State* L, LuaKind kind);
void AddLogAndVersion(lua_State* L);

// redis.call / redis.pcall and the conversions (lua_call.cc).
int LuaRedisCall(lua_State* L);
int LuaRedisPcall(lua_State* L);
// redis.acl_check_cmd: whether the caller's ACL rules allow the command with these arguments.
int LuaAclCheckCmd(lua_State* L);
// Converts the value on top of the stack into a reply (and pops it), with raw access as Redis
// does; protected: a memory error or SCRIPT KILL midway replaces the partial reply by an error.
void LuaToReply(lua_State* L, resp::Writer& w, int script_resp);
// Reports the error object on top of the stack (pops it) the way Redis does after a failed run;
// protected, as LuaToReply.
void ReplyLuaError(lua_State* L, resp::Writer& w, std::string_view name);

// Function libraries in a function state (functions.cc): runs a library's code, registering
// its functions. Returns the functions (name -> registry ref) or false with *error.
struct Registered {
  std::string name, desc;
  bool has_desc = false;
  uint32_t flags = 0;
  int ref = 0;
};
bool LoadLibraryCode(lua_State* L, std::string_view code_after_shebang,
                     std::vector<Registered>* out, std::string* error);
// Parses "#!lua name=lib" (FUNCTION LOAD's metadata): false with Redis's error text.
bool ParseLibraryHeader(std::string_view code, std::string* engine, std::string* name,
                        size_t* header_len, std::string* error);

// FUNCTION DUMP payloads (function_payload.cc).
std::string EncodeFunctionPayload(const FunctionSet& set);
// The library codes in a payload; false with Redis's error text.
bool DecodeFunctionPayload(std::string_view payload, std::vector<std::string>* codes,
                           std::string* error);

}  // namespace vessel::scripting

#endif  // VESSEL_HOST_SCRIPTING_STATE_H_
