// The sandboxed Lua 5.1 state scripts and functions run in, with Redis 7.0's libraries and
// redis.* API (their code is in lua_redis.cc, lua_call.cc, lua_libs.cc, lua_packaged_libs.cc and
// lua_patterns.cc), and the host's protected entry into it.
//
// Every state of every worker is shared by all users who may run scripts, so nothing a script
// can reach may outlive it. Redis 7.0 patches its Lua with read-only tables; Debian's liblua5.1
// has no such flag, so the sandbox is built from what Lua 5.1 offers:
//  - the globals scripts see are an empty proxy: reads fall through to the real globals (an
//    unknown name raises Redis's "Script attempted to access nonexistent global variable"),
//    writes raise "Attempt to modify a readonly table";
//  - every table reachable from them (the libraries redis, string, math, table, cjson, bit,
//    struct, cmsgpack, coroutine; the globals' metatable; the string type's metatable) is a
//    read-only proxy of a table scripts never see, whose own metatable is protected;
//  - the functions that write around metamethods (rawset, setmetatable, table.insert) refuse
//    proxies with Redis's text, and the readers (rawget, next, pairs, getmetatable,
//    table.foreach) see through them, so scripts observe Redis's behaviour;
//  - loadstring/load, like EVAL and FUNCTION LOAD, compile source text only (Redis's Lua cannot
//    load bytecode, which Lua 5.1 does not verify);
//  - state-wide settings that are not Lua values (cjson's options, the collector's parameters)
//    are put back after a run that changed them (ResetScriptSettings).
// The host never calls a Lua function that may raise outside a protected call (CallProtected),
// and the C functions scripts call hold no C++ object with a destructor across a call that may
// raise: Lua 5.1 reports errors with longjmp.
#include <atomic>
#include <cmath>
#include <cstdlib>

#include "host/scripting/state.h"
#include "openssl/sha.h"
#include "spdlog/spdlog.h"

extern "C" {
#include <lauxlib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>
#include <lualib.h>
}

namespace vessel::scripting {

int LuaRegisterFunction(lua_State* L);  // functions.cc

namespace {

constexpr char kGlobalsRef[] = "vsl_globals";      // the real globals table
constexpr char kProxyMeta[] = "vsl_proxy_meta";    // metatable of the globals proxy
constexpr char kProxyTargets[] = "vsl_proxies";    // proxy -> target (weak keys)
constexpr char kErrHandler[] = "vsl_err_handler";  // the error handler
constexpr char kLoadApi[] = "vsl_load_api";        // globals while a library loads
constexpr char kReadonly[] = "Attempt to modify a readonly table";

// Lua 5.1's collector defaults (LUAI_GCPAUSE, LUAI_GCMUL).
constexpr int kGcPause = 200;
constexpr int kGcStepMul = 200;

// ---- the allocator: memory accounting and the optional cap ----

std::atomic<size_t> g_memory_limit{0};
std::atomic<int64_t> g_published[2];  // by LuaKind

// Per-state data, the allocator's userdata (lua_getallocf finds it without touching Lua).
struct StateData {
  size_t used = 0;
  LuaKind kind = LuaKind::kEval;
  size_t published = 0;  // what PublishLuaMemory last added to g_published
  bool capped = false;   // the cap applies once the state is built
  int trampoline = LUA_NOREF;
  bool cjson_changed = false;
  bool gc_changed = false;
};

StateData* Data(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<StateData*>(ud);
}

void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* d = static_cast<StateData*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    d->used -= osize;
    return nullptr;
  }
  if (nsize > osize && d->capped) {  // a failure here is Lua's "not enough memory"
    const size_t limit = g_memory_limit.load(std::memory_order_relaxed);
    if (limit != 0 && d->used - osize + nsize > limit) return nullptr;
    if (KillPending()) return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  d->used = d->used - osize + nsize;
  return p;
}

// An error outside any protected call: Lua exits the process after this returns. The host
// avoids it (CallProtected); should one slip through, the log says what it was.
int Panic(lua_State* L) {
  const char* msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(error object)";
  spdlog::critical("lua: unprotected error in call to Lua API ({})", msg);
  return 0;
}

// The protected entry: a C function kept in the registry, so calling it allocates nothing.
struct ProtectedCall {
  int (*fn)(lua_State*, void*);
  void* arg;
};

int Trampoline(lua_State* L) {
  const auto* call = static_cast<const ProtectedCall*>(lua_touserdata(L, 1));
  lua_remove(L, 1);
  return call->fn(L, call->arg);
}

// ---- Redis's lrand48 (rand.c): math.random is deterministic per worker thread ----
thread_local uint64_t t_rand_state = 0x1234ABCD330Eull;

int32_t Lrand48() {
  t_rand_state = (0x5DEECE66Dull * t_rand_state + 0xB) & ((1ull << 48) - 1);
  return static_cast<int32_t>(t_rand_state >> 17);
}

int MathRandom(lua_State* L) {
  if (t_run == nullptr)
    return luaL_error(L, "math.random can only be called inside a script invocation");
  constexpr int32_t kMax = INT32_MAX;
  const lua_Number r = static_cast<lua_Number>(Lrand48() % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      // u - l + 1 in 32-bit arithmetic, wrapping as Redis's int expression does on x86.
      const auto span =
          static_cast<int32_t>(static_cast<uint32_t>(u) - static_cast<uint32_t>(l) + 1u);
      lua_pushnumber(L, std::floor(r * span) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  if (t_run == nullptr)
    return luaL_error(L, "math.randomseed can only be called inside a script invocation");
  const auto seed = static_cast<uint32_t>(luaL_checkint(L, 1));
  t_rand_state = (uint64_t{seed} << 16) | 0x330E;
  return 0;
}

// ---- read-only tables ----

// __newindex of every proxy: Redis's text, with the script's position when a script assigned.
int ReadonlyError(lua_State* L) {
  luaL_where(L, 1);
  lua_pushstring(L, kReadonly);
  lua_concat(L, 2);
  return lua_error(L);
}

// What rawset, setmetatable and table.insert raise on a protected table (no position: Redis
// raises it inside the C function).
int RaiseReadonly(lua_State* L) {
  lua_pushstring(L, kReadonly);
  return lua_error(L);
}

// __index of the globals (Redis's luaProtectedTableError, arguments checked the same way).
int MissingGlobal(lua_State* L) {
  if (lua_gettop(L) != 2)
    return luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
  if (!lua_isstring(L, -1) && !lua_isnumber(L, -1))
    return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(L, -1));
}

// The proxy -> target table: the first upvalue of the C functions below.
constexpr int kTargets = lua_upvalueindex(1);

// Pushes the table the proxy at idx stands for (targets at `targets`), or the value itself.
void PushTargetOf(lua_State* L, int idx, int targets) {
  idx = AbsIndex(L, idx);
  lua_pushvalue(L, idx);
  lua_rawget(L, targets);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
  }
}

bool IsProxy(lua_State* L, int idx, int targets) {
  idx = AbsIndex(L, idx);
  lua_pushvalue(L, idx);
  lua_rawget(L, targets);
  const bool proxy = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return proxy;
}

// Replaces arg 1 by the table it stands for.
void ArgToTarget(lua_State* L) {
  PushTargetOf(L, 1, kTargets);
  lua_replace(L, 1);
}

// next(t, k) over the table behind a proxy.
int SafeNext(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  ArgToTarget(L);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

// pairs(t): the generator is SafeNext (upvalue 2), as Lua's pairs returns its own next.
int SafePairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int SafeRawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  ArgToTarget(L);
  lua_rawget(L, 1);
  return 1;
}

int SafeRawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsProxy(L, 1, kTargets)) return RaiseReadonly(L);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

// getmetatable: a proxy shows what Redis's table would (its __metatable; false marks "none").
int SafeGetmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  luaL_getmetafield(L, 1, "__metatable");
  if (IsProxy(L, 1, kTargets) && lua_isboolean(L, -1) && !lua_toboolean(L, -1)) lua_pushnil(L);
  return 1;
}

int SafeSetmetatable(lua_State* L) {
  const int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (IsProxy(L, 1, kTargets)) return RaiseReadonly(L);
  if (luaL_getmetafield(L, 1, "__metatable")) luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// table.insert (Lua 5.1's tinsert), refusing proxies where Redis's rawseti would.
int SafeTableInsert(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int e = static_cast<int>(lua_objlen(L, 1)) + 1;
  int pos;
  switch (lua_gettop(L)) {
    case 2:
      pos = e;
      break;
    case 3:
      pos = luaL_checkint(L, 2);
      if (pos > e) e = pos;
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  if (IsProxy(L, 1, kTargets)) return RaiseReadonly(L);
  for (int i = e; i > pos; --i) {
    lua_rawgeti(L, 1, i - 1);
    lua_rawseti(L, 1, i);
  }
  lua_rawseti(L, 1, pos);
  return 0;
}

// table.foreach (Lua 5.1's), over the table behind a proxy.
int SafeTableForeach(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  ArgToTarget(L);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -3);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 2);
  }
  return 0;
}

// collectgarbage (Lua 5.1's), noting the options whose effect would outlive the script.
int SafeCollectGarbage(lua_State* L) {
  static const char* const kOpts[] = {"stop", "restart",  "collect",    "count",
                                      "step", "setpause", "setstepmul", nullptr};
  static const int kOptNums[] = {LUA_GCSTOP, LUA_GCRESTART,  LUA_GCCOLLECT,   LUA_GCCOUNT,
                                 LUA_GCSTEP, LUA_GCSETPAUSE, LUA_GCSETSTEPMUL};
  const int o = luaL_checkoption(L, 1, "collect", kOpts);
  const int ex = luaL_optint(L, 2, 0);
  if (kOptNums[o] == LUA_GCSTOP || kOptNums[o] == LUA_GCSETPAUSE || kOptNums[o] == LUA_GCSETSTEPMUL)
    Data(L)->gc_changed = true;
  const int res = lua_gc(L, kOptNums[o], ex);
  switch (kOptNums[o]) {
    case LUA_GCCOUNT: {
      const int b = lua_gc(L, LUA_GCCOUNTB, 0);
      lua_pushnumber(L, res + static_cast<lua_Number>(b) / 1024);
      return 1;
    }
    case LUA_GCSTEP:
      lua_pushboolean(L, res);
      return 1;
    default:
      lua_pushnumber(L, res);
      return 1;
  }
}

// ---- source-only loading ----

struct TextReader {
  const char* code;
  size_t len;
  int step = 0;
};

// A space before a chunk that starts with the bytecode signature makes Lua parse it as text,
// with the same error Redis's Lua gives ("unexpected symbol near 'char(27)'", line 1).
const char* ReadText(lua_State*, void* ud, size_t* size) {
  auto* r = static_cast<TextReader*>(ud);
  if (r->step == 0) {
    r->step = 1;
    if (r->len > 0 && r->code[0] == LUA_SIGNATURE[0]) {
      *size = 1;
      return " ";
    }
  }
  if (r->step == 1) {
    r->step = 2;
    *size = r->len;
    return r->code;
  }
  *size = 0;
  return nullptr;
}

int LoadResult(lua_State* L, int status) {
  if (status == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

// loadstring(s [, chunkname])
int SafeLoadstring(lua_State* L) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  return LoadResult(L, LoadChunk(L, s, len, name));
}

// load(f [, chunkname]): Lua 5.1's generic_reader, with the text-only rule on the first piece.
struct FunctionReader {
  int step = 0;  // 0: first piece; 1: the first piece is waiting behind a space; 2: the rest
};

const char* ReadFromFunction(lua_State* L, void* ud, size_t* size) {
  auto* r = static_cast<FunctionReader*>(ud);
  if (r->step == 1) {
    r->step = 2;
    return lua_tolstring(L, 3, size);
  }
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    *size = 0;
    return nullptr;
  }
  if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
  lua_replace(L, 3);
  const char* piece = lua_tolstring(L, 3, size);
  if (r->step == 0) {
    r->step = 2;
    if (*size > 0 && piece[0] == LUA_SIGNATURE[0]) {
      r->step = 1;
      *size = 1;
      return " ";
    }
  }
  return piece;
}

int SafeLoad(lua_State* L) {
  const char* name = luaL_optstring(L, 2, "=(load)");
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 3);
  FunctionReader reader;
  return LoadResult(L, lua_load(L, ReadFromFunction, &reader, name));
}

// ---- building a state ----

// Redis's pcall: a failed call returns the error's "err" text rather than its table.
int RedisStylePcall(lua_State* L) {
  const int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

void OpenLib(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// Runs a library opener that returns its table and stores it as global `name`.
void OpenModule(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_call(L, 0, 1);
  if (lua_istable(L, -1)) {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

constexpr char kErrHandlerSrc[] =
    "local dbg = debug\n"
    "return function(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}\n"
    "  end\n"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end\n"
    "  return err\n"
    "end\n";

// Pushes a read-only proxy of the table at `target`, registered in the proxy table at
// `targets`. getmetatable(proxy) gives the value at `shown` (0: nil, as for Redis's library
// tables, which have no metatable).
void PushProxy(lua_State* L, int target, int shown, int targets) {
  target = AbsIndex(L, target);
  shown = shown != 0 ? AbsIndex(L, shown) : 0;
  targets = AbsIndex(L, targets);
  lua_newtable(L);
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, target);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  if (shown != 0) {
    lua_pushvalue(L, shown);
  } else {
    lua_pushboolean(L, 0);
  }
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_pushvalue(L, target);
  lua_rawset(L, targets);
}

// Sets the global `name` (in the table at `globals`) to a C closure of fn with the proxy table
// as upvalue 1.
void SetGuarded(lua_State* L, int globals, int targets, const char* name, lua_CFunction fn) {
  lua_pushvalue(L, targets);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, globals, name);
}

// An error metatable {__index = MissingGlobal}, pushed.
void PushErrorMetatable(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
}

struct BuildArgs {
  LuaKind kind;
};

// Builds the sandbox in a fresh state (run protected by NewLuaState).
int BuildState(lua_State* L) {
  const LuaKind kind = static_cast<const BuildArgs*>(lua_touserdata(L, 1))->kind;
  lua_settop(L, 0);
  StateData* data = Data(L);
  lua_pushcfunction(L, Trampoline);
  data->trampoline = luaL_ref(L, LUA_REGISTRYINDEX);

  OpenLib(L, "", luaopen_base);
  OpenLib(L, LUA_TABLIBNAME, luaopen_table);
  OpenLib(L, LUA_STRLIBNAME, luaopen_string);
  OpenLib(L, LUA_MATHLIBNAME, luaopen_math);
  OpenLib(L, LUA_DBLIBNAME, luaopen_debug);
  OpenModule(L, "cjson", luaopen_cjson);
  OpenModule(L, "struct", OpenStruct);
  OpenModule(L, "cmsgpack", OpenCmsgpack);
  OpenModule(L, "bit", luaopen_bit);

  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);  // 1
  lua_newtable(L);                    // proxy -> target, weak keys
  const int targets = lua_gettop(L);  // 2
  lua_newtable(L);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, targets);
  lua_pushvalue(L, targets);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyTargets);

  // Redis's deny list, and what Redis 7.0.15 does not offer (getfenv/setfenv reach the real
  // globals; newproxy makes userdata with __gc).
  for (const char* name : {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setfield(L, globals, name);
  }
  lua_pushcfunction(L, RedisStylePcall);
  lua_setfield(L, globals, "pcall");
  SetGuarded(L, globals, targets, "next", SafeNext);
  lua_pushvalue(L, targets);
  lua_getfield(L, globals, "next");
  lua_pushcclosure(L, SafePairs, 2);
  lua_setfield(L, globals, "pairs");
  SetGuarded(L, globals, targets, "rawget", SafeRawget);
  SetGuarded(L, globals, targets, "rawset", SafeRawset);
  SetGuarded(L, globals, targets, "getmetatable", SafeGetmetatable);
  SetGuarded(L, globals, targets, "setmetatable", SafeSetmetatable);
  lua_pushcfunction(L, SafeCollectGarbage);
  lua_setfield(L, globals, "collectgarbage");
  lua_pushcfunction(L, SafeLoadstring);
  lua_setfield(L, globals, "loadstring");
  lua_pushcfunction(L, SafeLoad);
  lua_setfield(L, globals, "load");

  lua_getfield(L, globals, "table");
  SetGuarded(L, lua_gettop(L), targets, "insert", SafeTableInsert);
  SetGuarded(L, lua_gettop(L), targets, "foreach", SafeTableForeach);
  lua_pop(L, 1);
  lua_getfield(L, globals, "string");
  ReplaceStringPatterns(L);
  lua_pop(L, 1);
  lua_getfield(L, globals, "math");
  lua_pushcfunction(L, MathRandom);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, MathRandomSeed);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
  lua_getfield(L, globals, "bit");
  if (lua_istable(L, -1)) {
    lua_pushcfunction(L, BitTohex);
    lua_setfield(L, -2, "tohex");
  }
  lua_pop(L, 1);
  lua_getfield(L, globals, "cjson");
  if (lua_istable(L, -1)) WrapCjson(L);
  lua_pop(L, 1);

  PushRedisApi(L, kind);
  lua_setfield(L, globals, "redis");

  // The error handler keeps `debug` as an upvalue; scripts do not see it.
  luaL_loadbuffer(L, kErrHandlerSrc, sizeof(kErrHandlerSrc) - 1, "@err_handler_def");
  lua_call(L, 0, 1);
  if (kind == LuaKind::kEval) {
    lua_pushvalue(L, -1);
    lua_setfield(L, globals, "__redis__err__handler");
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kErrHandler);
  lua_pushnil(L);
  lua_setfield(L, globals, "debug");

  // Library tables become read-only proxies.
  for (const char* lib :
       {"redis", "string", "math", "table", "cjson", "bit", "struct", "cmsgpack", "coroutine"}) {
    lua_getfield(L, globals, lib);
    if (lua_istable(L, -1)) {
      PushProxy(L, -1, 0, targets);
      lua_setfield(L, globals, lib);
    }
    lua_pop(L, 1);
  }

  // The string type's metatable: its __index stays the real string table (method calls cost
  // nothing more), and getmetatable('') shows a read-only {__index = string}.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_createtable(L, 0, 1);  // what scripts see
  lua_getfield(L, globals, "string");
  lua_setfield(L, -2, "__index");
  PushProxy(L, -1, 0, targets);
  lua_setfield(L, -3, "__metatable");
  lua_pop(L, 3);

  // The globals: reads of unknown names fail; scripts get a read-only proxy whose metatable
  // shows as the globals' error metatable (read-only too).
  PushErrorMetatable(L);
  lua_pushvalue(L, -1);
  lua_setmetatable(L, globals);
  PushProxy(L, -1, 0, targets);  // what getmetatable(_G) shows
  const int shown = lua_gettop(L);
  lua_newtable(L);  // the globals proxy
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, globals);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, shown);
  lua_setfield(L, -2, "__metatable");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyMeta);
  lua_setmetatable(L, -2);
  const int proxy = lua_gettop(L);
  lua_pushvalue(L, proxy);
  lua_pushvalue(L, globals);
  lua_rawset(L, targets);
  lua_pushvalue(L, proxy);
  lua_setfield(L, globals, "_G");
  lua_pushvalue(L, globals);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsRef);

  if (kind == LuaKind::kFunction) {
    // What library code sees while FUNCTION LOAD runs it: only `redis`, with register_function,
    // log and the version (Redis's LIBRARY_API), unknown names failing as unknown globals do.
    lua_newtable(L);  // the load globals
    const int load = lua_gettop(L);
    lua_newtable(L);  // the load redis table
    const int api = lua_gettop(L);
    lua_pushcfunction(L, LuaRegisterFunction);
    lua_setfield(L, api, "register_function");
    AddLogAndVersion(L);
    PushErrorMetatable(L);
    lua_pushvalue(L, -1);
    lua_setmetatable(L, api);
    PushProxy(L, -1, 0, targets);  // getmetatable(redis) shows it, read-only
    PushProxy(L, api, -1, targets);
    lua_setfield(L, load, "redis");
    lua_settop(L, load);
    PushErrorMetatable(L);
    lua_setmetatable(L, load);
    lua_setfield(L, LUA_REGISTRYINDEX, kLoadApi);
  }
  lua_settop(L, proxy);
  lua_replace(L, LUA_GLOBALSINDEX);
  return 0;
}

struct EvalArgs {
  const std::string_view* keys;
  int nkeys;
  const std::string_view* args;
  int nargs;
  bool eval;
};

void PushStringArray(lua_State* L, const std::string_view* v, int n) {
  lua_createtable(L, n, 0);
  for (int j = 0; j < n; ++j) {
    lua_pushlstring(L, v[j].data(), v[j].size());
    lua_rawseti(L, -2, j + 1);
  }
}

int PushRunArgsBody(lua_State* L, void* arg) {
  const auto* a = static_cast<const EvalArgs*>(arg);
  if (!a->eval) {
    PushStringArray(L, a->keys, a->nkeys);
    PushStringArray(L, a->args, a->nargs);
    return 2;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsRef);
  lua_pushliteral(L, "KEYS");
  PushStringArray(L, a->keys, a->nkeys);
  lua_rawset(L, -3);
  lua_pushliteral(L, "ARGV");
  PushStringArray(L, a->args, a->nargs);
  lua_rawset(L, -3);
  return 0;
}

}  // namespace

// ---- the host's entry points ----

void SetLuaMemoryLimit(size_t bytes) { g_memory_limit.store(bytes, std::memory_order_relaxed); }
size_t LuaMemoryLimit() { return g_memory_limit.load(std::memory_order_relaxed); }
size_t LuaMemoryUsed(lua_State* L) { return Data(L)->used; }

void PublishLuaMemory(lua_State* L) {
  StateData* d = Data(L);
  if (d->used == d->published) return;  // no write to the shared counter after most runs
  g_published[static_cast<int>(d->kind)].fetch_add(
      static_cast<int64_t>(d->used) - static_cast<int64_t>(d->published),
      std::memory_order_relaxed);
  d->published = d->used;
}

int64_t LuaMemoryOfKind(LuaKind kind) {
  return g_published[static_cast<int>(kind)].load(std::memory_order_relaxed);
}
void NoteCjsonChanged(lua_State* L) { Data(L)->cjson_changed = true; }

int AbsIndex(lua_State* L, int idx) {
  return idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : lua_gettop(L) + idx + 1;
}

int CallProtected(lua_State* L, int nargs, int nresults, int (*fn)(lua_State*, void*), void* arg) {
  ProtectedCall call{fn, arg};
  // Neither push allocates: the trampoline is a registry value, the argument a light userdata.
  lua_rawgeti(L, LUA_REGISTRYINDEX, Data(L)->trampoline);
  lua_insert(L, -(nargs + 1));
  lua_pushlightuserdata(L, &call);
  lua_insert(L, -(nargs + 1));
  return lua_pcall(L, nargs + 1, nresults, 0);
}

int LoadChunk(lua_State* L, const char* code, size_t len, const char* name) {
  TextReader reader{code, len};
  return lua_load(L, ReadText, &reader, name);
}

lua_State* NewLuaState(LuaKind kind) {
  auto* data = new StateData;
  data->kind = kind;
  lua_State* L = lua_newstate(Allocate, data);
  if (L == nullptr) {
    delete data;
    return nullptr;
  }
  lua_atpanic(L, Panic);
  BuildArgs args{kind};
  if (lua_cpcall(L, BuildState, &args) != 0) {
    spdlog::error("lua: could not build a scripting state: {}",
                  lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?");
    CloseLuaState(L);
    return nullptr;
  }
  data->capped = true;
  PublishLuaMemory(L);
  return L;
}

void CloseLuaState(lua_State* L) {
  StateData* data = Data(L);
  lua_close(L);
  g_published[static_cast<int>(data->kind)].fetch_sub(static_cast<int64_t>(data->published),
                                                      std::memory_order_relaxed);
  delete data;
}

std::string Sha1Hex(std::string_view data) {
  unsigned char hash[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), hash);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int j = 0; j < SHA_DIGEST_LENGTH; ++j) {
    out[j * 2] = kHex[hash[j] >> 4];
    out[j * 2 + 1] = kHex[hash[j] & 0xF];
  }
  return out;
}

void PushErrorTable(lua_State* L, std::string_view error) {
  // Views only: this raises on a memory error, and nothing here may need a destructor.
  error = error.substr(0, error.find('\0'));
  std::string_view code = "ERR", msg = error;
  if (!error.empty() && error[0] == '-') {
    const size_t sp = error.find(' ');
    if (sp == std::string_view::npos) {
      msg = error.substr(1);
    } else {
      code = error.substr(1, sp - 1);
      msg = error.substr(sp + 1);
    }
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.remove_prefix(1);
  lua_newtable(L);
  lua_pushlstring(L, code.data(), code.size());
  lua_pushliteral(L, " ");
  lua_pushlstring(L, msg.data(), msg.size());
  lua_concat(L, 3);
  lua_setfield(L, -2, "err");
}

void PushProxyTarget(lua_State* L, int idx) {
  idx = AbsIndex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargets);
  PushTargetOf(L, idx, lua_gettop(L));
  lua_remove(L, -2);
}

void PushErrorHandler(lua_State* L) { lua_getfield(L, LUA_REGISTRYINDEX, kErrHandler); }

int PushRunArgs(lua_State* L, bool eval, const std::string_view* keys, int nkeys,
                const std::string_view* args, int nargs) {
  EvalArgs a{keys, nkeys, args, nargs, eval};
  const int status = CallProtected(L, 0, eval ? 0 : 2, PushRunArgsBody, &a);
  if (status != 0) lua_replace(L, -2);  // the error object takes the function's place
  return status;
}

void SetLoadApi(lua_State* L, bool loading) {
  // Existing registry and metatable keys: nothing here allocates, so nothing raises.
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyMeta);
  lua_getfield(L, LUA_REGISTRYINDEX, loading ? kLoadApi : kGlobalsRef);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void ResetScriptSettings(lua_State* L) {
  StateData* data = Data(L);
  if (data->gc_changed) {
    data->gc_changed = false;
    lua_gc(L, LUA_GCSETPAUSE, kGcPause);
    lua_gc(L, LUA_GCSETSTEPMUL, kGcStepMul);
    lua_gc(L, LUA_GCRESTART, 0);
  }
  if (data->cjson_changed) {
    data->cjson_changed = false;
    if (CallProtected(L, 0, 0, RestoreCjson, nullptr) != 0) lua_pop(L, 1);
  }
}

}  // namespace vessel::scripting
