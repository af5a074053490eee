// Per-thread Lua states and the execution of one script or function (scripting.cc).
#ifndef VESSEL_HOST_SCRIPTING_LOCAL_H_
#define VESSEL_HOST_SCRIPTING_LOCAL_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
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

// The key spec of EVAL and FCALL and their read-only forms: the keys after numkeys, with the
// given VSL_KS_* access and Redis's note on it (cmd_eval.cc).
engine::KeySpec ScriptKeySpec(uint32_t flags);

}  // namespace vessel::scripting

#endif  // VESSEL_HOST_SCRIPTING_LOCAL_H_
