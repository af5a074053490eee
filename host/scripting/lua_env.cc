// The sandboxed Lua 5.1 state scripts and functions run in, with Redis 7.0's libraries and
// redis.* API (except redis.call/pcall, in lua_call.cc).
//
// Redis patches its Lua with read-only tables; Debian's liblua5.1 has none, so the sandbox is
// built from metatables: the globals seen by scripts are an empty proxy whose reads fall through
// to the real globals (an unknown name raises Redis's "Script attempted to access nonexistent
// global variable") and whose writes raise "Attempt to modify a readonly table"; the library
// tables (redis, string, math, table, cjson, bit, struct, cmsgpack, coroutine) are read-only
// proxies too. pairs/next see through the proxies and rawset refuses them, so scripts observe
// Redis's behaviour; what differs is documented in README (rawset on a user table is fine).
#include <cmath>
#include <cstring>

#include "host/engine/version.h"
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
namespace {

constexpr char kGlobalsRef[] = "vsl_globals";      // the real globals table
constexpr char kProxyMeta[] = "vsl_proxy_meta";    // metatable of the globals proxy
constexpr char kProxyTargets[] = "vsl_proxies";    // proxy -> target (weak keys)
constexpr char kErrHandler[] = "vsl_err_handler";  // the error handler
constexpr char kLoadApi[] = "vsl_load_api";        // globals while a library loads

// ---- Redis's lrand48 (rand.c): math.random is deterministic per worker thread ----
thread_local uint64_t t_rand_state = 0x1234ABCD330Eull;

int32_t Lrand48() {
  t_rand_state = (0x5DEECE66Dull * t_rand_state + 0xB) & ((1ull << 48) - 1);
  return static_cast<int32_t>(t_rand_state >> 17);
}

int MathRandom(lua_State* L) {
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
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  const auto seed = static_cast<uint32_t>(luaL_checkint(L, 1));
  t_rand_state = (uint64_t{seed} << 16) | 0x330E;
  return 0;
}

// ---- protection ----

int ReadonlyError(lua_State* L) {
  luaL_where(L, 1);
  lua_pushstring(L, "Attempt to modify a readonly table");
  lua_concat(L, 2);
  return lua_error(L);
}

int MissingGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name != nullptr ? name : "?");
}

// Replaces the table on top of the stack by a read-only proxy of it.
void MakeReadonlyProxy(lua_State* L) {
  const int target = lua_gettop(L);
  lua_newtable(L);  // proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, target);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargets);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, target);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_replace(L, target);
}

// Pushes the table a proxy stands for, or the value itself.
void PushTarget(lua_State* L, int idx) {
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargets);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
  }
  lua_remove(L, -2);
}

bool IsProtected(lua_State* L, int idx) {
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargets);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  bool is_proxy = !lua_isnil(L, -1);
  lua_pop(L, 2);
  if (is_proxy) return true;
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsRef);
  const bool is_globals = lua_rawequal(L, -1, idx);
  lua_pop(L, 1);
  return is_globals;
}

// next(t, k) that walks the table behind a read-only proxy.
int SafeNext(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  PushTarget(L, 1);
  lua_replace(L, 1);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

int SafePairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushcfunction(L, SafeNext);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int SafeRawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsProtected(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int SafeRawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  PushTarget(L, 1);
  lua_replace(L, 1);
  lua_settop(L, 2);
  lua_rawget(L, 1);
  return 1;
}

// ---- the redis.* API ----

int PushError(lua_State* L, std::string_view msg) {
  PushErrorTable(L, msg);
  return lua_error(L);
}

int Sha1hexCmd(lua_State* L) {
  if (lua_gettop(L) != 1) return PushError(L, "wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string hex = Sha1Hex(std::string_view(s != nullptr ? s : "", s != nullptr ? len : 0));
  lua_pushstring(L, hex.c_str());
  return 1;
}

int SingleFieldTable(lua_State* L, const char* field) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int ErrorReplyCmd(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  std::string err = lua_tostring(L, -1);
  if (err.empty() || err[0] != '-') err.insert(0, "-");
  PushErrorTable(L, err);
  return 1;
}

int StatusReplyCmd(lua_State* L) { return SingleFieldTable(L, "ok"); }

// Redis's verbosity levels: LL_DEBUG 0 .. LL_WARNING 3.
int LogCmd(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return PushError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, -argc)) return PushError(L, "First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tonumber(L, -argc));
  if (level < 0 || level > 3) return PushError(L, "Invalid debug level.");
  std::string line;
  for (int j = 1; j < argc; ++j) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -argc + j, &len);
    if (s == nullptr) continue;
    if (j != 1) line.push_back(' ');
    line.append(s, len);
  }
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::info, spdlog::level::warn};
  spdlog::log(kLevels[level], "{}", line);
  return 0;
}

int SetRespCmd(lua_State* L) {
  if (t_run == nullptr)
    return PushError(L, "redis.setresp can only be called inside a script invocation");
  if (lua_gettop(L) != 1) return PushError(L, "redis.setresp() requires one argument.");
  const int resp = static_cast<int>(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) return PushError(L, "RESP version must be 2 or 3.");
  t_run->resp = resp;
  return 0;
}

// Effects are what Vessel propagates: set_repl only validates its flags (REPL_AOF | REPL_REPLICA).
int SetReplCmd(lua_State* L) {
  if (t_run == nullptr)
    return PushError(L, "redis.set_repl can only be called inside a script invocation");
  if (lua_gettop(L) != 1) return PushError(L, "redis.set_repl() requires two arguments.");
  const int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0)
    return PushError(
        L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  return 0;
}

// Permissions are the ACL subsystem's: every known command is allowed here.
int AclCheckCmd(lua_State* L) {
  if (t_run == nullptr)
    return PushError(L, "redis.acl_check_cmd can only be called inside a script invocation");
  if (lua_gettop(L) == 0)
    return PushError(L, "Please specify at least one argument for this redis lib call");
  size_t len = 0;
  const char* name = lua_tolstring(L, 1, &len);
  std::string lower;
  engine::AsciiLower(std::string_view(name != nullptr ? name : "", name != nullptr ? len : 0),
                     &lower);
  if (t_run->engine->registry().Find(lower) == nullptr)
    return PushError(L, "Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(L, 1);
  return 1;
}

int ReturnTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}
int ReturnFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}
int ReturnNothing(lua_State*) { return 0; }

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

void SetFn(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
}
void SetNum(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

void AddLogAndVersion(lua_State* L) {
  SetFn(L, "log", LogCmd);
  SetNum(L, "LOG_DEBUG", 0);
  SetNum(L, "LOG_VERBOSE", 1);
  SetNum(L, "LOG_NOTICE", 2);
  SetNum(L, "LOG_WARNING", 3);
  const int64_t v = engine::VersionNumber(engine::kRedisVersion);  // 70015
  SetNum(L, "REDIS_VERSION_NUM",
         static_cast<lua_Number>(((v / 10000) << 16) | (((v / 100) % 100) << 8) | (v % 100)));
  lua_pushlstring(L, engine::kRedisVersion.data(), engine::kRedisVersion.size());
  lua_setfield(L, -2, "REDIS_VERSION");
}

// Pushes the runtime `redis` table.
void PushRedisApi(lua_State* L, LuaKind kind) {
  lua_newtable(L);
  SetFn(L, "call", LuaRedisCall);
  SetFn(L, "pcall", LuaRedisPcall);
  AddLogAndVersion(L);
  SetFn(L, "setresp", SetRespCmd);
  SetFn(L, "sha1hex", Sha1hexCmd);
  SetFn(L, "error_reply", ErrorReplyCmd);
  SetFn(L, "status_reply", StatusReplyCmd);
  SetFn(L, "set_repl", SetReplCmd);
  SetNum(L, "REPL_NONE", 0);
  SetNum(L, "REPL_AOF", 1);
  SetNum(L, "REPL_SLAVE", 2);
  SetNum(L, "REPL_REPLICA", 2);
  SetNum(L, "REPL_ALL", 3);
  SetFn(L, "acl_check_cmd", AclCheckCmd);
  if (kind == LuaKind::kEval) {
    // The debugger (SCRIPT DEBUG) is not offered: breakpoint() is false, debug() does nothing.
    SetFn(L, "breakpoint", ReturnFalse);
    SetFn(L, "debug", ReturnNothing);
    SetFn(L, "replicate_commands", ReturnTrue);
  }
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

}  // namespace

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
  std::string code = "ERR", msg;
  if (!error.empty() && error[0] == '-') {
    const size_t sp = error.find(' ');
    if (sp == std::string_view::npos) {
      msg = std::string(error.substr(1));
    } else {
      code = std::string(error.substr(1, sp - 1));
      msg = std::string(error.substr(sp + 1));
    }
  } else {
    msg = std::string(error);
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.erase(0, 1);
  const std::string full = code + " " + msg;
  lua_newtable(L);
  lua_pushlstring(L, full.data(), full.size());
  lua_setfield(L, -2, "err");
}

void PushErrorHandler(lua_State* L) { lua_getfield(L, LUA_REGISTRYINDEX, kErrHandler); }

void PushStringArray(lua_State* L, const std::string_view* v, int n) {
  lua_createtable(L, n, 0);
  for (int j = 0; j < n; ++j) {
    lua_pushlstring(L, v[j].data(), v[j].size());
    lua_rawseti(L, -2, j + 1);
  }
}

void SetEvalGlobals(lua_State* L, const std::string_view* keys, int nkeys,
                    const std::string_view* args, int nargs) {
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsRef);
  PushStringArray(L, keys, nkeys);
  lua_setfield(L, -2, "KEYS");  // the real globals have no __newindex: plain set
  PushStringArray(L, args, nargs);
  lua_setfield(L, -2, "ARGV");
  lua_pop(L, 1);
}

void SetLoadApi(lua_State* L, bool loading) {
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyMeta);
  if (loading) {
    lua_getfield(L, LUA_REGISTRYINDEX, kLoadApi);
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsRef);
  }
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

int LuaRegisterFunction(lua_State* L);  // functions.cc

lua_State* NewLuaState(LuaKind kind) {
  lua_State* L = luaL_newstate();
  OpenLib(L, "", luaopen_base);
  OpenLib(L, LUA_TABLIBNAME, luaopen_table);
  OpenLib(L, LUA_STRLIBNAME, luaopen_string);
  OpenLib(L, LUA_MATHLIBNAME, luaopen_math);
  OpenLib(L, LUA_DBLIBNAME, luaopen_debug);
  OpenModule(L, "cjson", luaopen_cjson);
  OpenModule(L, "struct", OpenStruct);
  OpenModule(L, "cmsgpack", OpenCmsgpack);
  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_setglobal(L, "bit");
  // Redis's deny list, and what 7.0.15 removed since (getfenv/setfenv reach the real globals).
  for (const char* name : {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, RedisStylePcall);
  lua_setglobal(L, "pcall");
  lua_newtable(L);  // proxy -> target, weak keys
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyTargets);
  lua_pushcfunction(L, SafeNext);
  lua_setglobal(L, "next");
  lua_pushcfunction(L, SafePairs);
  lua_setglobal(L, "pairs");
  lua_pushcfunction(L, SafeRawset);
  lua_setglobal(L, "rawset");
  lua_pushcfunction(L, SafeRawget);
  lua_setglobal(L, "rawget");

  PushRedisApi(L, kind);
  lua_setglobal(L, "redis");
  lua_getglobal(L, "math");
  SetFn(L, "random", MathRandom);
  SetFn(L, "randomseed", MathRandomSeed);
  lua_pop(L, 1);

  // The error handler keeps `debug` as an upvalue; scripts do not see it.
  luaL_loadbuffer(L, kErrHandlerSrc, sizeof(kErrHandlerSrc) - 1, "@err_handler_def");
  lua_call(L, 0, 1);
  if (kind == LuaKind::kEval) {
    lua_pushvalue(L, -1);
    lua_setglobal(L, "__redis__err__handler");
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kErrHandler);
  lua_pushnil(L);
  lua_setglobal(L, "debug");

  // Library tables become read-only proxies.
  for (const char* lib :
       {"redis", "string", "math", "table", "cjson", "bit", "struct", "cmsgpack", "coroutine"}) {
    lua_getglobal(L, lib);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    MakeReadonlyProxy(L);
    lua_setglobal(L, lib);
  }

  // The globals proxy: reads fall through to the real globals, writes fail; unknown names fail.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsRef);
  lua_newtable(L);  // the real globals' metatable
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
  lua_newtable(L);  // proxy
  lua_newtable(L);  // proxy metatable
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyMeta);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_GLOBALSINDEX, "_G");
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargets);  // pairs(_G) walks the real globals
  lua_pushvalue(L, -2);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_rawset(L, -3);
  lua_pop(L, 1);

  if (kind == LuaKind::kFunction) {
    // What library code sees while FUNCTION LOAD runs it: only `redis`, with register_function,
    // log and the version (Redis's LIBRARY_API).
    lua_newtable(L);
    lua_newtable(L);
    lua_pushcfunction(L, LuaRegisterFunction);
    lua_setfield(L, -2, "register_function");
    AddLogAndVersion(L);
    lua_newtable(L);  // unknown names fail as unknown globals do
    lua_pushcfunction(L, MissingGlobal);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    MakeReadonlyProxy(L);
    lua_setfield(L, -2, "redis");
    lua_newtable(L);
    lua_pushcfunction(L, MissingGlobal);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, kLoadApi);
  }
  lua_replace(L, LUA_GLOBALSINDEX);
  return L;
}

}  // namespace vessel::scripting
