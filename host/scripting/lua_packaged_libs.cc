// Debian's packaged Lua libraries cjson and bit, wrapped where Redis's bundled copies behave
// differently: cjson's options are put back after each run and its sizes are bounded, and
// bit.tohex has Redis's fix for an INT32_MIN width.
#include <cstdint>
#include <cstring>

#include "host/scripting/scripting.h"
#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace vessel::scripting {
namespace {

constexpr char kCjsonDefaults[] = "vsl_cjson";  // cjson option setter -> {its defaults}

// ---- cjson: its options and its sizes ----

constexpr const char* kCjsonOptions[] = {"encode_sparse_array",   "encode_max_depth",
                                         "decode_max_depth",      "encode_number_precision",
                                         "encode_keep_buffer",    "encode_invalid_numbers",
                                         "decode_invalid_numbers"};

// Calls the real function (upvalue 1, named by upvalue 2) with this call's arguments and returns
// its results. Its errors read as if the script had called it: called from C, Lua names the
// function '?' in an argument error and gives no position, so both are put back. (cjson's
// functions raise only their own errors: no user code runs inside them.)
int CallReal(lua_State* L) {
  const int argc = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  const int status = lua_pcall(L, argc, LUA_MULTRET, 0);
  if (status == 0) return lua_gettop(L);
  if (status == LUA_ERRMEM || lua_type(L, -1) != LUA_TSTRING) return lua_error(L);
  const char* msg = lua_tostring(L, -1);
  const char* unnamed = std::strstr(msg, " to '?'");
  luaL_where(L, 1);
  if (std::strncmp(msg, "bad argument #", 14) != 0 || unnamed == nullptr) {
    lua_pushvalue(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }
  lua_pushlstring(L, msg, static_cast<size_t>(unnamed - msg));
  lua_pushliteral(L, " to '");
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushstring(L, unnamed + 6);  // "'" and the rest
  lua_concat(L, 5);
  return lua_error(L);
}

// An option setter: notes that a script changed cjson's settings (ResetScriptSettings puts them
// back after the run).
int CjsonOption(lua_State* L) {
  if (lua_gettop(L) > 0) NoteCjsonChanged(L);
  return CallReal(L);
}

// Debian's lua-cjson 2.1.0 keeps buffer sizes in an int: an encoding whose buffer must pass
// 1 GiB (a string may take six times its length) loops forever in its resize, and a decode input
// of 2 GiB or more is written past its buffer. Redis's copy uses size_t. Values that could get
// there are refused before cjson sees them.
constexpr size_t kCjsonMax = (size_t{1} << 30) - (size_t{1} << 20);

// Adds the worst-case encoded size of the value at idx to *total; false once past kCjsonMax.
bool CjsonBound(lua_State* L, int idx, int depth, size_t* total, uint32_t* visits) {
  if ((++*visits & 4095) == 0) CheckKilled(L);
  switch (lua_type(L, idx)) {
    case LUA_TSTRING:
      *total += 6 * lua_objlen(L, idx) + 2;
      break;
    case LUA_TTABLE: {
      *total += 2;
      // cjson itself refuses what is deeper than this (its depth limit or the Lua stack).
      if (depth > 3000 || !lua_checkstack(L, 3)) break;
      idx = AbsIndex(L, idx);
      // cjson would see a read-only proxy as empty; Redis's cjson sees the library table and
      // fails on its first function, as it does for every protected table.
      PushProxyTarget(L, idx);
      const bool proxy = !lua_rawequal(L, idx, -1);
      lua_pop(L, 1);
      if (proxy) luaL_error(L, "Cannot serialise function: type not supported");
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        *total += 2;
        if (!CjsonBound(L, -2, depth + 1, total, visits) ||
            !CjsonBound(L, -1, depth + 1, total, visits)) {
          lua_pop(L, 2);
          return false;
        }
        lua_pop(L, 1);
      }
      break;
    }
    default:
      *total += 32;
  }
  const size_t cap = LuaMemoryLimit();
  return *total <= (cap != 0 && cap < kCjsonMax ? cap : kCjsonMax);
}

int CjsonEncode(lua_State* L) {
  size_t total = 0;
  uint32_t visits = 0;
  if (lua_gettop(L) >= 1 && !CjsonBound(L, 1, 0, &total, &visits))
    return luaL_error(L, "Cannot serialise: the encoding could be too large");
  return CallReal(L);
}

int CjsonDecode(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING && lua_objlen(L, 1) >= kCjsonMax)
    return luaL_error(L, "Cannot decode: the input exceeds 1 GiB");
  return CallReal(L);
}

// Replaces field `name` of the table at idx (a real function) by a C closure of fn over it.
void WrapField(lua_State* L, int idx, const char* name, lua_CFunction fn) {
  idx = AbsIndex(L, idx);
  lua_getfield(L, idx, name);
  if (!lua_isfunction(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  lua_pushstring(L, name);
  lua_pushcclosure(L, fn, 2);
  lua_setfield(L, idx, name);
}

// cjson.new(): a module of its own, with the size guards too (its options are its own).
int CjsonNew(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, 1);
  if (lua_istable(L, -1)) {
    WrapField(L, -1, "encode", CjsonEncode);
    WrapField(L, -1, "decode", CjsonDecode);
  }
  return 1;
}

}  // namespace

// Wraps cjson's functions (the table on top) and records the options' defaults.
void WrapCjson(lua_State* L) {
  const int cjson = lua_gettop(L);
  WrapField(L, cjson, "encode", CjsonEncode);
  WrapField(L, cjson, "decode", CjsonDecode);
  WrapField(L, cjson, "new", CjsonNew);
  lua_newtable(L);  // setter -> {defaults}
  for (const char* name : kCjsonOptions) {
    lua_getfield(L, cjson, name);
    if (!lua_isfunction(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    const int real = lua_gettop(L);
    lua_pushvalue(L, real);
    lua_call(L, 0, LUA_MULTRET);  // the getter form: the current (default) settings
    const int n = lua_gettop(L) - real;
    lua_createtable(L, n, 0);
    for (int j = n; j >= 1; --j) {
      lua_insert(L, -2);
      lua_rawseti(L, -2, j);
    }
    lua_pushvalue(L, real);
    lua_insert(L, -2);
    lua_rawset(L, cjson + 1);
    lua_pushstring(L, name);
    lua_pushcclosure(L, CjsonOption, 2);
    lua_setfield(L, cjson, name);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kCjsonDefaults);
}

int RestoreCjson(lua_State* L, void*) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCjsonDefaults);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    const int n = static_cast<int>(lua_objlen(L, -1));
    lua_pushvalue(L, -2);
    for (int j = 1; j <= n; ++j) lua_rawgeti(L, -2 - (j - 1), j);
    lua_call(L, n, 0);
    lua_pop(L, 1);
  }
  return 0;
}

namespace {

// ---- bit.tohex with Redis's fix for an INT32_MIN width (CVE-2024-31449) ----

// LuaBitOp's barg: the number's low 32 bits through the 2^52+2^51 trick.
uint32_t BitArg(lua_State* L, int idx) {
  const lua_Number n = lua_tonumber(L, idx) + 6755399441055744.0;  // 2^52 + 2^51
  uint64_t bits;
  std::memcpy(&bits, &n, sizeof(bits));
  const auto b = static_cast<uint32_t>(bits);
  if (b == 0 && !lua_isnumber(L, idx)) luaL_typerror(L, idx, "number");
  return b;
}

}  // namespace

int BitTohex(lua_State* L) {
  uint32_t b = BitArg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(BitArg(L, 2));
  const char* digits = "0123456789abcdef";
  char buf[8];
  if (n == INT32_MIN) n = INT32_MIN + 1;
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  for (int i = n; --i >= 0;) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace vessel::scripting
