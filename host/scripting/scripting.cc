// The scripting subsystem's shared state (state.h) and how one script or function runs:
// per-thread Lua states, the script cache, the running-scripts registry behind BUSY and
// SCRIPT/FUNCTION KILL, and the lock rule (docs/scripting.md, "Atomicity on many threads").
#include "host/scripting/scripting.h"

#include <algorithm>

#include "host/engine/builtins.h"
#include "host/scripting/local.h"
#include "host/scripting/state.h"
#include "spdlog/spdlog.h"

extern "C" {
#include <lauxlib.h>
}

namespace vessel::scripting {
namespace {

constexpr char kBusyEval[] =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
constexpr char kBusyFunction[] =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

// Scripting instances by engine (several servers may live in one test process); g_epoch changes
// with the list so the per-thread lookup cache notices.
std::mutex g_instances_mu;
std::vector<std::pair<engine::Engine*, Scripting*>> g_instances;
std::atomic<uint64_t> g_epoch{0};
// Generations start apart per instance so a thread never mistakes one instance's state for
// another's.
std::atomic<uint64_t> g_generation_base{1};

}  // namespace

// ---- per-thread Lua states ----

thread_local LocalState t_local;

LocalState::~LocalState() { Reset(); }

void LocalState::Reset() {
  if (eval != nullptr) CloseLuaState(eval);
  if (fn != nullptr) CloseLuaState(fn);
  eval = fn = nullptr;
  eval_gen = fn_gen = 0;
  scripts.clear();
  scripts_gen = 0;
  fns.reset();
  refs.clear();
  owner = nullptr;
}

LocalState& Local(Scripting* sc) {
  if (t_local.owner != sc) {
    t_local.Reset();
    t_local.owner = sc;
  }
  return t_local;
}

lua_State* EvalState(Scripting* sc) {
  LocalState& ls = Local(sc);
  const uint64_t gen = sc->eval_generation();
  if (ls.eval == nullptr || ls.eval_gen != gen) {
    if (ls.eval != nullptr) CloseLuaState(ls.eval);
    ls.eval = NewLuaState(LuaKind::kEval);
    ls.eval_gen = ls.eval != nullptr ? gen : 0;
  }
  return ls.eval;
}

namespace {

struct CompileJob {
  const Script* script;
  const char* key;  // the registry key of its compiled function
  std::string* error;
};

// Pushes the script's function, compiling it on first use (protected: registry writes can fail
// for memory); nil with job->error on a compile error.
int CompileScript(lua_State* L, void* arg) {
  auto* job = static_cast<CompileJob*>(arg);
  lua_getfield(L, LUA_REGISTRYINDEX, job->key);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  // The shebang line is skipped but its newline kept, so line numbers stay the user's.
  const Script& s = *job->script;
  if (LoadChunk(L, s.body.data() + s.shebang_len, s.body.size() - s.shebang_len, "@user_script") !=
      0) {
    job->error->assign(
        engine::Cat("ERR Error compiling script (new function): ", lua_tostring(L, -1)));
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, job->key);
  return 1;
}

}  // namespace

bool PushScriptFunction(lua_State* L, const Script& s, std::string* error) {
  const std::string key = "f_" + s.sha;
  CompileJob job{&s, key.c_str(), error};
  if (CallProtected(L, 0, 1, CompileScript, &job) != 0) {
    *error = engine::Cat("ERR Error compiling script (new function): ",
                         lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error");
    lua_pop(L, 1);
    return false;
  }
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

lua_State* FunctionState(Scripting* sc) {
  LocalState& ls = Local(sc);
  const uint64_t gen = sc->fn_generation();
  if (ls.fn != nullptr && ls.fn_gen == gen) return ls.fn;
  if (ls.fn != nullptr) CloseLuaState(ls.fn);
  ls.refs.clear();
  ls.fns = sc->functions();
  ls.fn = NewLuaState(LuaKind::kFunction);
  ls.fn_gen = ls.fn != nullptr ? gen : 0;
  if (ls.fn == nullptr) return nullptr;
  for (const auto& [name, lib] : ls.fns->libs) {
    std::string engine_name, lib_name, error;
    size_t header = 0;
    std::vector<Registered> regs;
    if (!ParseLibraryHeader(lib->code, &engine_name, &lib_name, &header, &error) ||
        !LoadLibraryCode(ls.fn, std::string_view(lib->code).substr(header), &regs, &error)) {
      spdlog::error("function library failed to load on a worker lib={} error={}", name, error);
      continue;
    }
    for (const Registered& r : regs) {
      for (const auto& f : lib->functions)
        if (f->name == r.name) ls.refs[f.get()] = r.ref;
    }
  }
  return ls.fn;
}

// ---- Scripting ----

Scripting::Scripting(engine::Engine* engine)
    : engine_(engine),
      p_threshold_(engine::ParamValues::Find("busy-reply-threshold")),
      functions_(std::make_shared<FunctionSet>()) {
  const uint64_t base = g_generation_base.fetch_add(1u << 20) << 20;
  eval_generation_ = base + 1;
  fn_generation_ = base + 1;
  std::lock_guard l(g_instances_mu);
  g_instances.emplace_back(engine, this);
  g_epoch.fetch_add(1, std::memory_order_release);
}

Scripting::~Scripting() {
  if (engine_->busy_probe() == this) engine_->set_busy_probe(nullptr);
  if (engine_->function_libraries() == this) engine_->set_function_libraries(nullptr);
  if (engine_->script_figures() == this) engine_->set_script_figures(nullptr);
  std::lock_guard l(g_instances_mu);
  std::erase_if(g_instances, [this](const auto& p) { return p.second == this; });
  g_epoch.fetch_add(1, std::memory_order_release);
}

Scripting* Scripting::Of(engine::Engine* engine) {
  thread_local engine::Engine* last_engine = nullptr;
  thread_local Scripting* last = nullptr;
  thread_local uint64_t last_epoch = ~uint64_t{0};
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (engine == last_engine && epoch == last_epoch) return last;
  std::lock_guard l(g_instances_mu);
  last_engine = engine;
  last_epoch = epoch;
  last = nullptr;
  for (const auto& [e, s] : g_instances)
    if (e == engine) last = s;
  return last;
}

Scripting* Scripting::Any() {
  thread_local Scripting* last = nullptr;
  thread_local uint64_t last_epoch = ~uint64_t{0};
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (epoch == last_epoch) return last;
  std::lock_guard l(g_instances_mu);
  last_epoch = epoch;
  last = g_instances.empty() ? nullptr : g_instances.back().second;
  return last;
}

int64_t Scripting::threshold_ms() const { return engine_->ParamInt(p_threshold_); }

std::shared_ptr<Script> Scripting::FindScript(std::string_view sha) {
  // A per-thread memo keeps the shared lock off the path of scripts run again (EVALSHA asks
  // three times per call: needs_world, the resolve hook and the handler).
  LocalState& ls = Local(this);
  const uint64_t gen = eval_generation();
  if (ls.scripts_gen != gen) {
    ls.scripts.clear();
    ls.scripts_gen = gen;
  }
  const absl::string_view key(sha.data(), sha.size());  // absl's maps look up by absl's view
  if (auto it = ls.scripts.find(key); it != ls.scripts.end()) return it->second;
  std::shared_ptr<Script> found;
  {
    std::shared_lock l(scripts_mu_);
    auto it = scripts_.find(key);
    if (it == scripts_.end()) return nullptr;
    found = it->second;
  }
  if (ls.scripts.size() > 4096) ls.scripts.clear();
  ls.scripts.emplace(std::string(sha), found);
  return found;
}

std::shared_ptr<Script> Scripting::AddScript(std::string_view body, std::string* error) {
  const std::string sha = Sha1Hex(body);
  if (auto s = FindScript(sha)) return s;
  auto s = std::make_shared<Script>();
  s->sha = sha;
  s->body = std::string(body);
  if (!ParseShebang(body, &s->flags, &s->shebang_len, error)) {
    error->insert(0, "ERR ");
    return nullptr;
  }
  lua_State* L = EvalState(this);
  if (L == nullptr) {
    *error = "ERR Error compiling script (new function): not enough memory";
    return nullptr;
  }
  if (!PushScriptFunction(L, *s, error)) return nullptr;
  lua_pop(L, 1);
  std::unique_lock l(scripts_mu_);
  auto [it, added] = scripts_.emplace(sha, s);
  return it->second;
}

void Scripting::FlushScripts() {
  absl::flat_hash_map<std::string, std::shared_ptr<Script>> old;
  {
    std::unique_lock l(scripts_mu_);
    old.swap(scripts_);
    eval_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
}

std::shared_ptr<const FunctionSet> Scripting::functions() {
  std::lock_guard l(functions_mu_);
  return functions_;
}

// Redis counts a cached script as its SHA1 and body strings plus its dictionary entry, and the
// libraries as their sources and descriptions; the same here, with the structures' own sizes.
engine::ScriptMemory Scripting::Memory() {
  engine::ScriptMemory m;
  m.vm_eval = LuaMemoryOfKind(LuaKind::kEval);
  m.vm_functions = LuaMemoryOfKind(LuaKind::kFunction);
  {
    std::shared_lock l(scripts_mu_);
    m.cached_scripts = static_cast<int64_t>(scripts_.size());
    for (const auto& [sha, script] : scripts_) {
      m.scripts_eval += static_cast<int64_t>(sizeof(Script) + sha.capacity() +
                                             script->sha.capacity() + script->body.capacity());
    }
  }
  const std::shared_ptr<const FunctionSet> set = functions();
  if (set != nullptr) {
    m.library_count = static_cast<int64_t>(set->libs.size());
    m.function_count = static_cast<int64_t>(set->function_count());
    for (const auto& [name, lib] : set->libs) {
      m.functions += static_cast<int64_t>(sizeof(Library) + name.capacity() + lib->code.capacity());
      for (const auto& f : lib->functions)
        m.functions +=
            static_cast<int64_t>(sizeof(Function) + f->name.capacity() + f->desc.capacity());
    }
  }
  return m;
}

// ---- running scripts ----

void Scripting::Register(Running* r) {
  std::lock_guard l(running_mu_);
  if (shutting_down_.load(std::memory_order_relaxed)) r->kill.store(true);
  running_.push_back(r);
  running_count_.fetch_add(1, std::memory_order_release);
}

void Scripting::Unregister(Running* r) {
  {
    std::lock_guard l(running_mu_);
    std::erase(running_, r);
    running_count_.fetch_sub(1, std::memory_order_release);
  }
  // What waited for this script runs again.
  if (r->timedout.load(std::memory_order_relaxed)) {
    engine_->CountBusyScript(-1);
  } else {
    engine_->ScriptsChanged();
  }
}

void Scripting::NoteShard(Running* r, uint64_t order, bool exclusive) {
  if (r == nullptr) return;
  std::lock_guard l(running_mu_);
  r->shards.emplace_back(order, exclusive);
}

namespace {
bool IsBusy(const Running* r, int64_t now, int64_t threshold) {
  return threshold > 0 && now - r->start_ms >= threshold;
}
}  // namespace

engine::ScriptHold Scripting::ShardHold(uint32_t db, uint32_t shard, std::string* busy) {
  if (running_count_.load(std::memory_order_acquire) == 0) return engine::ScriptHold::kFree;
  const uint64_t order = (uint64_t{db} << 32) | shard;
  const int64_t now = engine_->Now(), threshold = threshold_ms();
  std::lock_guard l(running_mu_);
  for (const Running* r : running_) {
    bool holds = r->world;
    for (const auto& [o, excl] : r->shards) holds |= o == order;
    if (!holds) continue;
    if (!IsBusy(r, now, threshold)) return engine::ScriptHold::kHeld;
    *busy = r->eval ? kBusyEval : kBusyFunction;
    return engine::ScriptHold::kBusy;
  }
  return engine::ScriptHold::kFree;
}

engine::ScriptHold Scripting::WorldHold(std::string* busy) {
  if (running_count_.load(std::memory_order_acquire) == 0) return engine::ScriptHold::kFree;
  const int64_t now = engine_->Now(), threshold = threshold_ms();
  std::lock_guard l(running_mu_);
  for (const Running* r : running_) {
    if (!r->world) continue;
    if (!IsBusy(r, now, threshold)) return engine::ScriptHold::kHeld;
    *busy = r->eval ? kBusyEval : kBusyFunction;
    return engine::ScriptHold::kBusy;
  }
  return engine::ScriptHold::kFree;
}

engine::ScriptHold Scripting::AnyHold(std::string* busy) {
  if (running_count_.load(std::memory_order_acquire) == 0) return engine::ScriptHold::kFree;
  const int64_t now = engine_->Now(), threshold = threshold_ms();
  std::lock_guard l(running_mu_);
  engine::ScriptHold hold = engine::ScriptHold::kFree;
  for (const Running* r : running_) {
    if (IsBusy(r, now, threshold)) {
      *busy = r->eval ? kBusyEval : kBusyFunction;
      return engine::ScriptHold::kBusy;
    }
    hold = engine::ScriptHold::kHeld;
  }
  return hold;
}

void Scripting::OnShutdown() {
  std::lock_guard l(running_mu_);
  shutting_down_.store(true, std::memory_order_relaxed);
  for (Running* r : running_) r->kill.store(true, std::memory_order_relaxed);
}

void Scripting::KillAll() {
  std::lock_guard l(running_mu_);
  for (Running* r : running_) r->kill.store(true, std::memory_order_relaxed);
}

std::string Scripting::Kill(bool eval) {
  const int64_t now = engine_->Now(), threshold = threshold_ms();
  std::lock_guard l(running_mu_);
  std::vector<Running*> mine;
  bool other = false;
  for (Running* r : running_) {
    if (!IsBusy(r, now, threshold)) continue;
    (r->eval == eval ? mine.emplace_back(r) : (other = true, nullptr));
  }
  if (mine.empty()) {
    if (other) return eval ? kBusyFunction : kBusyEval;
    return "-NOTBUSY No scripts in execution right now.";
  }
  bool killed = false;
  for (Running* r : mine) {
    if (r->wrote.load(std::memory_order_relaxed)) continue;
    r->kill.store(true, std::memory_order_relaxed);
    killed = true;
  }
  if (!killed) {
    return "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
           "You can either wait the script termination or kill the server in a hard way using "
           "the SHUTDOWN NOSAVE command.";
  }
  return "+OK";
}

bool Scripting::RunningInfo(std::string* name, std::vector<std::string>* argv, int64_t* ms,
                            bool* eval) {
  const int64_t now = engine_->Now(), threshold = threshold_ms();
  std::lock_guard l(running_mu_);
  for (const Running* r : running_) {
    if (!IsBusy(r, now, threshold)) continue;
    *name = r->name;
    *argv = r->argv;
    *ms = now - r->start_ms;
    *eval = r->eval;
    return true;
  }
  return false;
}

// ---- one run ----

void RunScript(engine::CommandCtx* ctx, lua_State* L, const RunSpec& spec) {
  Scripting* sc = Scripting::Of(ctx->engine);
  resp::Writer& w = *ctx->w;
  // Used memory was over maxmemory when the command started: a script that may write and does
  // not say allow-oom is refused (EVAL without a shebang: its first write is, lua_call.cc).
  if (ctx->oom && !(spec.flags & kFlagEvalCompat) &&
      !(spec.flags & (kFlagAllowOom | kFlagNoWrites))) {
    lua_pop(L, 2);  // the function and the error handler
    return w.ErrorLine(
        "OOM allow-oom flag is not set on the script, can not run it when used memory > "
        "'maxmemory'");
  }
  RunCtx r;
  r.sc = sc;
  r.engine = ctx->engine;
  r.caller = ctx;
  r.db = ctx->db->index();
  r.eval = spec.eval;
  r.name = spec.name;
  r.read_only = spec.ro || (!(spec.flags & kFlagEvalCompat) && (spec.flags & kFlagNoWrites));
  r.allow_oom = !(spec.flags & kFlagEvalCompat) && (spec.flags & kFlagAllowOom);
  r.start_ms = ctx->engine->Now();
  r.threshold_ms = sc->threshold_ms();
  r.main = L;
  r.can_restart = !ctx->world && !ctx->in_exec && ctx->engine->CanPostpone(ctx);

  Running run;
  run.worker = ctx->engine->current_worker().index;
  run.start_ms = r.start_ms;
  run.world = ctx->world;
  run.eval = spec.eval;
  run.name = std::string(spec.name);
  run.argv.assign(ctx->argv, ctx->argv + ctx->argc);
  if (ctx->locks != nullptr) {
    for (const engine::CommandKey& k : ctx->keys) {
      run.shards.emplace_back((uint64_t(k.db->index()) << 32) | (k.shard - &k.db->shard(0)),
                              k.writable());
    }
  }
  r.running = &run;
  sc->Register(&run);

  const std::string_view* keys = ctx->argv + 3;
  const std::string_view* args = keys + spec.nkeys;
  const int nargs = ctx->argc - 3 - spec.nkeys;
  RunCtx* saved = t_run;
  t_run = &r;
  SetRunHook(L, true);
  // stack: handler, function
  int err = PushRunArgs(L, spec.eval, keys, spec.nkeys, args, nargs);
  if (err == 0) err = spec.eval ? lua_pcall(L, 0, 1, -2) : lua_pcall(L, 2, 1, -4);
  if (r.abort == Abort::kRestart) {
    lua_pop(L, 1);      // the error: nothing of this run is shown
    ctx->rerun = true;  // the engine runs the command again, with the whole keyspace
  } else if (err) {
    ReplyLuaError(L, w, spec.name);
  } else {
    LuaToReply(L, w, r.resp);
  }
  lua_pop(L, 1);  // the error handler
  if (!spec.eval) lua_settop(L, 0);
  ResetScriptSettings(L);
  SetRunHook(L, false);
  t_run = saved;
  // Lua's collector runs in small steps so a full cycle never lands on one script.
  thread_local int gc_count = 0;
  if (++gc_count == 50) {
    lua_gc(L, LUA_GCSTEP, 50);
    gc_count = 0;
  }
  // Under a memory cap, the garbage of one run must not fail the next script: Lua 5.1 reports an
  // allocation failure without collecting first, so a state past half its cap is collected now.
  if (const size_t cap = LuaMemoryLimit(); cap != 0 && LuaMemoryUsed(L) > cap / 2)
    lua_gc(L, LUA_GCCOLLECT, 0);
  PublishLuaMemory(L);
  sc->Unregister(&run);
  r.extra.Unlock();
  ctx->engine->EndPumpIfDue();  // the work its pump held back runs now
  if (spec.mode != nullptr) {
    const int next = r.undeclared ? static_cast<int>(KeyMode::kUndeclared)
                                  : static_cast<int>(KeyMode::kDeclared);
    int cur = spec.mode->load(std::memory_order_relaxed);
    if (cur != static_cast<int>(KeyMode::kUndeclared) && cur != next)
      spec.mode->store(next, std::memory_order_relaxed);
  }
}

// ---- the public face ----

void RegisterEvalCommands(engine::Registry& r);      // cmd_eval.cc
void RegisterFunctionCommands(engine::Registry& r);  // cmd_function.cc

std::unique_ptr<Subsystem> Install(engine::Engine* engine) {
  auto sc = std::make_unique<Scripting>(engine);
  engine->set_busy_probe(sc.get());
  engine->set_function_libraries(sc.get());
  engine->set_script_figures(sc.get());
  RegisterEvalCommands(engine->registry());
  RegisterFunctionCommands(engine->registry());
  return sc;
}

}  // namespace vessel::scripting
