// Per-thread Lua states and the execution of one script or function (scripting.cc).
#ifndef VESSEL_HOST_SCRIPTING_LOCAL_H_
#define VESSEL_HOST_SCRIPTING_LOCAL_H_

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "host/engine/builtins.h"
#include "host/scripting/state.h"

namespace vessel::scripting {

// The Lua states of the current thread for one Scripting instance. Touched by its thread only.
struct LocalState {
  Scripting* owner = nullptr;
  lua_State* eval = nullptr;
  uint64_t eval_gen = 0;
  lua_State* fn = nullptr;
  uint64_t fn_gen = 0;
  std::shared_ptr<const FunctionSet> fns;          // the set `fn` was built from
  absl::flat_hash_map<const Function*, int> refs;  // function -> registry ref in `fn`
  std::string memo_body, memo_sha;                 // EVAL's last body and its SHA1
  absl::flat_hash_map<std::string, std::shared_ptr<Script>> scripts;  // memo of the cache
  uint64_t scripts_gen = 0;
  ~LocalState();
  void Reset();
};
LocalState& Local(Scripting* sc);

// This thread's EVAL state, rebuilt after SCRIPT FLUSH.
lua_State* EvalState(Scripting* sc);
// Pushes the compiled function of a script (compiling it in this state on first use); false
// with Redis's error text.
bool PushScriptFunction(lua_State* L, const Script& s, std::string* error);
// This thread's function state, rebuilt when the libraries changed; Local(sc).fns and .refs
// describe it.
lua_State* FunctionState(Scripting* sc);
// SHA1 of an EVAL body, memoized for the hooks that ask before the handler runs.
const std::string& BodySha(Scripting* sc, std::string_view body);

struct RunSpec {
  bool eval = true;
  std::string_view name;
  uint32_t flags = 0;
  bool ro = false;                   // EVAL_RO, EVALSHA_RO, FCALL_RO
  std::atomic<int>* mode = nullptr;  // the script's KeyMode, updated after the run
  int nkeys = 0;
};
// Runs the function on top of L (the error handler below it) for ctx, under ctx's locks, and
// writes the reply.
void RunScript(engine::CommandCtx* ctx, lua_State* L, const RunSpec& spec);

// A command that runs a script or function (EVAL, EVALSHA, FCALL and their read-only forms): what
// its registration row does not share with the others.
struct ScriptCallDef {
  const char* name;
  bool ro = false;        // a _RO form: READONLY, its keys RO and ACCESS (else RW and UPDATE)
  const char* first_arg;  // the syntax is "<first_arg> numkeys [key [key ...]] [arg [arg ...]]"
  engine::NativeHandler fn;
  const char* since;
  const char* summary;
  bool key_notes = true;  // Redis's note on the key spec (Redis 7.0 has none for EVALSHA*)
};
// What the commands of one kind (EVAL's four forms, FCALL's two) share.
struct ScriptCallKind {
  const char* complexity;
  engine::NativeHandler resolve;
  bool (*needs_world)(const std::string_view* argv, int argc);
  uint64_t (*call_flags)(const std::string_view* argv, int argc, uint64_t flags);
};
// Registers the commands, in order: arity -3, flags NOSCRIPT STALE SKIP_MONITOR
// NO_MANDATORY_KEYS, the keys after numkeys, group "scripting" (cmd_eval.cc).
void AddScriptCalls(engine::Registry& r, const ScriptCallKind& kind,
                    std::initializer_list<ScriptCallDef> calls);

}  // namespace vessel::scripting

#endif  // VESSEL_HOST_SCRIPTING_LOCAL_H_
