// The `redis` table scripts see, apart from redis.call/pcall (lua_call.cc) and register_function
// (functions.cc): sha1hex, status_reply, error_reply, log and its levels, setresp, set_repl and its
// flags, acl_check_cmd, the version fields and the debugger stubs.
#include <cstdint>
#include <string>
#include <string_view>

#include "host/engine/version.h"
#include "host/scripting/state.h"
#include "openssl/sha.h"
#include "spdlog/spdlog.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace vessel::scripting {
namespace {

// Stops a cast of an out-of-range double at INT_MIN, as x86's cvttsd2si (what Redis's C casts
// compile to) does, without the undefined behaviour.
int ToIntLikeRedis(lua_Number n) {
  return n >= -2147483648.0 && n < 2147483648.0 ? static_cast<int>(n) : INT32_MIN;
}

int PushError(lua_State* L, std::string_view msg) {
  PushErrorTable(L, msg);
  return lua_error(L);
}

int Sha1hexCmd(lua_State* L) {
  if (lua_gettop(L) != 1) return PushError(L, "wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  unsigned char hash[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(s != nullptr ? s : ""), s != nullptr ? len : 0, hash);
  static constexpr char kHex[] = "0123456789abcdef";
  char hex[40];
  for (int j = 0; j < SHA_DIGEST_LENGTH; ++j) {
    hex[j * 2] = kHex[hash[j] >> 4];
    hex[j * 2 + 1] = kHex[hash[j] & 0xF];
  }
  lua_pushlstring(L, hex, sizeof(hex));
  return 1;
}

int StatusReplyCmd(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int ErrorReplyCmd(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  // Redis prepends '-' when missing, then reads the code up to the first space.
  const char* err = lua_tostring(L, -1);
  if (err[0] == '-') {
    PushErrorTable(L, err);
  } else {
    lua_pushliteral(L, "-");
    lua_pushvalue(L, -2);
    lua_concat(L, 2);
    PushErrorTable(L, lua_tostring(L, -1));
  }
  return 1;
}

// Redis's verbosity levels: LL_DEBUG 0 .. LL_WARNING 3.
int LogCmd(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return PushError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, -argc)) return PushError(L, "First argument must be a number (log level).");
  const int level = ToIntLikeRedis(lua_tonumber(L, -argc));
  if (level < 0 || level > 3) return PushError(L, "Invalid debug level.");
  // Numbers become strings first (that may raise); the line is built with no Lua call after.
  for (int j = 2; j <= argc; ++j) lua_tolstring(L, j, nullptr);
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::info, spdlog::level::warn};
  if (!spdlog::should_log(kLevels[level])) return 0;
  std::string line;
  for (int j = 2; j <= argc; ++j) {
    size_t len = 0;
    const char* s = lua_tolstring(L, j, &len);
    if (s == nullptr) continue;
    if (j != 2) line.push_back(' ');
    line.append(s, len);
  }
  spdlog::log(kLevels[level], "{}", line);
  return 0;
}

int SetRespCmd(lua_State* L) {
  if (t_run == nullptr)
    return PushError(L, "redis.setresp can only be called inside a script invocation");
  if (lua_gettop(L) != 1) return PushError(L, "redis.setresp() requires one argument.");
  const int resp = ToIntLikeRedis(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) return PushError(L, "RESP version must be 2 or 3.");
  t_run->resp = resp;
  return 0;
}

// Effects are what Vessel propagates: set_repl only validates its flags (REPL_AOF | REPL_REPLICA).
int SetReplCmd(lua_State* L) {
  if (t_run == nullptr)
    return PushError(L, "redis.set_repl can only be called inside a script invocation");
  if (lua_gettop(L) != 1) return PushError(L, "redis.set_repl() requires two arguments.");
  const int flags = ToIntLikeRedis(lua_tonumber(L, -1));
  if ((flags & ~3) != 0)
    return PushError(
        L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  return 0;
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

void SetFn(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
}
void SetNum(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

}  // namespace

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
  SetFn(L, "acl_check_cmd", LuaAclCheckCmd);
  if (kind == LuaKind::kEval) {
    // The debugger (SCRIPT DEBUG) is not offered: breakpoint() is false, debug() does nothing.
    SetFn(L, "breakpoint", ReturnFalse);
    SetFn(L, "debug", ReturnNothing);
    SetFn(L, "replicate_commands", ReturnTrue);
  }
}

}  // namespace vessel::scripting
