// FUNCTION libraries: the `#!lua name=...` header, redis.register_function while a library
// loads, and the library set's changes (LOAD, DELETE, FLUSH, RESTORE), as Redis 7.0's
// functions.c and function_lua.c do them.
#include <strings.h>

#include <chrono>

#include "host/engine/strutil.h"
#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
}

namespace vessel::scripting {
namespace {

using engine::Cat;

constexpr int64_t kLoadTimeoutMs = 500;  // Redis's LOAD_TIMEOUT_MS
constexpr char kBadName[] =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least "
    "one character long";

struct LoadCtx {
  std::vector<Registered>* out;
  std::chrono::steady_clock::time_point start;
};
thread_local LoadCtx* t_load = nullptr;

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

// A coroutine made while a library loaded keeps this hook; resumed later by a function, it must
// still let SCRIPT KILL / FUNCTION KILL and busy-reply-threshold act.
void LoadHook(lua_State* L, lua_Debug* ar) {
  if (t_load == nullptr) return RunHookFromOtherHook(L, ar);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t_load->start)
                      .count();
  if (ms > kLoadTimeoutMs) {
    lua_sethook(L, LoadHook, LUA_MASKLINE, 0);
    PushErrorTable(L, "FUNCTION LOAD timeout");
    lua_error(L);
  }
}

int Fail(lua_State* L, const char* msg) {
  PushErrorTable(L, msg);
  return lua_error(L);
}

// Reads the flags table at idx (as Redis, with lua_gettable: its metamethods run); false on an
// unknown flag.
bool ReadFlags(lua_State* L, int idx, uint32_t* flags) {
  uint32_t read = 0;
  for (int j = 1;; ++j) {
    lua_pushnumber(L, j);
    lua_gettable(L, idx);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      *flags = read;
      return true;
    }
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    const char* f = lua_tostring(L, -1);
    uint32_t bit = 0;
    for (const FlagName& n : kFlagNames)
      if (strcasecmp(f, n.name) == 0) bit = n.flag;
    lua_pop(L, 1);
    if (bit == 0) return false;
    read |= bit;
  }
}

// The arguments of redis.register_function end up on top of the stack as three Lua values:
// name (a string), callback (a function), description (a string, or nil). The readers below
// hold no C++ object: the flags table's metamethods and memory errors may raise.

// Pushes a copy of the value at idx converted to a string.
void PushAsString(lua_State* L, int idx) {
  lua_pushvalue(L, idx);
  lua_tolstring(L, -1, nullptr);
}

const char* ReadPositionalArgs(lua_State* L) {
  if (!lua_isstring(L, 1)) return "first argument to redis.register_function must be a string";
  if (!lua_isfunction(L, 2)) return "second argument to redis.register_function must be a function";
  PushAsString(L, 1);
  lua_pushvalue(L, 2);
  lua_pushnil(L);
  return nullptr;
}

const char* ReadNamedArgs(lua_State* L, uint32_t* flags) {
  if (!lua_istable(L, 1))
    return "calling redis.register_function with a single argument is only applicable to Lua "
           "table (representing named arguments).";
  lua_settop(L, 1);
  lua_pushnil(L);  // 2: name
  lua_pushnil(L);  // 3: callback
  lua_pushnil(L);  // 4: description
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (!lua_isstring(L, -2))
      return "named argument key given to redis.register_function is not a string";
    // lua_tostring would turn a numeric key into a string in place and confuse lua_next.
    PushAsString(L, -2);
    const char* key = lua_tostring(L, -1);
    const int value = lua_gettop(L) - 1;
    if (strcasecmp(key, "function_name") == 0) {
      if (!lua_isstring(L, value))
        return "function_name argument given to redis.register_function must be a string";
      PushAsString(L, value);
      lua_replace(L, 2);
    } else if (strcasecmp(key, "description") == 0) {
      if (!lua_isstring(L, value))
        return "description argument given to redis.register_function must be a string";
      PushAsString(L, value);
      lua_replace(L, 4);
    } else if (strcasecmp(key, "callback") == 0) {
      if (!lua_isfunction(L, value))
        return "callback argument given to redis.register_function must be a function";
      lua_pushvalue(L, value);
      lua_replace(L, 3);
    } else if (strcasecmp(key, "flags") == 0) {
      if (!lua_istable(L, value))
        return "flags argument to redis.register_function must be a table representing "
               "function flags";
      if (!ReadFlags(L, value, flags)) return "unknown flag given";
    } else {
      return "unknown argument given to redis.register_function";
    }
    lua_pop(L, 2);  // the key's copy and the value
  }
  if (lua_isnil(L, 2)) return "redis.register_function must get a function name argument";
  if (lua_isnil(L, 3)) return "redis.register_function must get a callback argument";
  return nullptr;
}

}  // namespace

// redis.register_function(name, callback) | redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}
int LuaRegisterFunction(lua_State* L) {
  if (t_load == nullptr)
    return Fail(L, "redis.register_function can only be called on FUNCTION LOAD command");
  const int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) return Fail(L, "wrong number of arguments to redis.register_function");
  uint32_t flags = 0;
  const char* err = argc == 1 ? ReadNamedArgs(L, &flags) : ReadPositionalArgs(L);
  if (err != nullptr) return Fail(L, err);
  // top: name, callback, description
  size_t len = 0;
  const char* name = lua_tolstring(L, -3, &len);
  const std::string_view name_view(name, len);
  if (!ValidName(name_view)) return Fail(L, kBadName);
  for (const Registered& r : *t_load->out)
    if (r.name == name_view) return Fail(L, "Function already exists in the library");
  lua_pushvalue(L, -2);
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);  // may raise: no C++ object is alive yet
  // No Lua call from here on.
  Registered reg;
  reg.name.assign(name_view);
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t dlen = 0;
    const char* desc = lua_tolstring(L, -1, &dlen);
    reg.desc.assign(desc, dlen);
    reg.has_desc = true;
  }
  reg.flags = flags;
  reg.ref = ref;
  t_load->out->push_back(std::move(reg));
  return 0;
}

namespace {

// What a failed library load raised, as Redis's luaExtractErrorInformation reads it.
struct LoadError {
  bool raw = false;
  bool has = false;
  std::string msg;
};

int ExtractLoadError(lua_State* L, void* arg) {
  auto* e = static_cast<LoadError*>(arg);
  if (lua_isstring(L, 1)) {
    const char* s = lua_tostring(L, 1);
    e->msg = Cat("ERR ", s);
    e->has = true;
    return 0;
  }
  if (!lua_istable(L, 1)) return 0;
  if (e->raw) {
    lua_pushliteral(L, "err");
    lua_rawget(L, 1);
  } else {
    lua_getfield(L, 1, "err");
  }
  if (lua_isstring(L, -1)) {
    const char* s = lua_tostring(L, -1);
    e->msg.assign(s);
    e->has = true;
  }
  return 0;
}

}  // namespace

bool LoadLibraryCode(lua_State* L, std::string_view code, std::vector<Registered>* out,
                     std::string* error) {
  if (LoadChunk(L, code.data(), code.size(), "@user_function")) {
    *error = Cat("Error compiling function: ", lua_tostring(L, -1));
    lua_pop(L, 1);
    return false;
  }
  LoadCtx load{out, std::chrono::steady_clock::now()};
  LoadCtx* saved = t_load;
  t_load = &load;
  SetLoadApi(L, true);
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, 100000);
  const int rc = lua_pcall(L, 0, 0, 0);
  lua_sethook(L, nullptr, 0, 0);
  SetLoadApi(L, false);
  t_load = saved;
  if (rc != 0) {
    // Redis reads the error with lua_getfield (metamethods run) and crashes when that raises;
    // here it is read protected, then raw.
    LoadError e;
    lua_pushvalue(L, -1);
    if (CallProtected(L, 1, 0, ExtractLoadError, &e) != 0) {
      lua_pop(L, 1);
      e = LoadError();
      e.raw = true;
      lua_pushvalue(L, -1);
      if (CallProtected(L, 1, 0, ExtractLoadError, &e) != 0) lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *error = Cat("Error registering functions: ", e.has ? e.msg : "(null)");
    for (const Registered& r : *out) luaL_unref(L, LUA_REGISTRYINDEX, r.ref);
    out->clear();
    ResetScriptSettings(L);
    return false;
  }
  ResetScriptSettings(L);
  return true;
}

bool ParseLibraryHeader(std::string_view code, std::string* engine_name, std::string* name,
                        size_t* header_len, std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "Missing library metadata";
    return false;
  }
  const size_t nl = code.find('\n');
  if (nl == std::string_view::npos) {
    *error = "Invalid library metadata";
    return false;
  }
  const std::vector<std::string> parts = engine::SplitWords(code.substr(0, nl));
  if (parts.empty()) {
    *error = "Invalid library metadata";
    return false;
  }
  *engine_name = parts[0].substr(2);
  bool has_name = false;
  for (size_t j = 1; j < parts.size(); ++j) {
    if (parts[j].size() >= 5 && engine::EqualsIgnoreCase(parts[j].substr(0, 5), "name=")) {
      if (has_name) {
        *error = "Invalid metadata value, name argument was given multiple times";
        return false;
      }
      *name = parts[j].substr(5);
      has_name = true;
      continue;
    }
    *error = Cat("Invalid metadata value given: ", parts[j]);
    return false;
  }
  if (!has_name) {
    *error = "Library name was not given";
    return false;
  }
  *header_len = nl;
  return true;
}

namespace {

// Compiles and runs a library's code in a fresh function state to learn its functions.
std::shared_ptr<Library> BuildLibrary(std::string_view code, std::string* error) {
  std::string engine_name, name;
  size_t header = 0;
  if (!ParseLibraryHeader(code, &engine_name, &name, &header, error)) return nullptr;
  if (!ValidName(name)) {
    *error = kBadName;
    return nullptr;
  }
  if (!engine::EqualsIgnoreCase(engine_name, "lua")) {
    *error = Cat("Engine '", engine_name, "' not found");
    return nullptr;
  }
  lua_State* L = NewLuaState(LuaKind::kFunction);
  if (L == nullptr) {
    *error = "Error registering functions: not enough memory";
    return nullptr;
  }
  std::vector<Registered> regs;
  const bool ok = LoadLibraryCode(L, code.substr(header), &regs, error);
  CloseLuaState(L);
  if (!ok) return nullptr;
  if (regs.empty()) {
    *error = "No functions registered";
    return nullptr;
  }
  auto lib = std::make_shared<Library>();
  lib->name = name;
  lib->code = std::string(code);
  for (Registered& r : regs) {
    auto f = std::make_unique<Function>();
    f->name = std::move(r.name);
    f->desc = std::move(r.desc);
    f->has_desc = r.has_desc;
    f->flags = r.flags;
    f->lib = lib.get();
    lib->functions.push_back(std::move(f));
  }
  return lib;
}

// Adds libs to set (replacing same-named ones when `replace`); false with Redis's error.
bool Join(FunctionSet* set, const std::vector<std::shared_ptr<Library>>& libs, bool replace,
          bool restore, std::string* error) {
  for (const auto& lib : libs) {
    auto it = set->libs.find(lib->name);
    if (it == set->libs.end()) continue;
    if (!replace) {
      *error = restore ? Cat("Library ", lib->name, " already exists")
                       : Cat("Library '", lib->name, "' already exists");
      return false;
    }
    for (const auto& f : it->second->functions) set->functions.erase(f->name);
    set->libs.erase(it);
  }
  for (const auto& lib : libs) {
    for (const auto& f : lib->functions) {
      if (set->functions.contains(f->name)) {
        *error = Cat("Function ", f->name, " already exists");
        return false;
      }
    }
  }
  for (const auto& lib : libs) {
    set->libs[lib->name] = lib;
    for (const auto& f : lib->functions) set->functions[f->name] = f.get();
  }
  return true;
}

}  // namespace

std::string Scripting::LoadLibrary(std::string_view code, bool replace, std::string* error) {
  auto lib = BuildLibrary(code, error);
  if (lib == nullptr) return "";
  std::lock_guard l(functions_mu_);
  auto next = std::make_shared<FunctionSet>(*functions_);
  if (!Join(next.get(), {lib}, replace, false, error)) return "";
  functions_ = std::move(next);
  fn_generation_.fetch_add(1, std::memory_order_acq_rel);
  return lib->name;
}

bool Scripting::DeleteLibrary(std::string_view name) {
  std::lock_guard l(functions_mu_);
  auto it = functions_->libs.find(std::string(name));
  if (it == functions_->libs.end()) return false;
  auto next = std::make_shared<FunctionSet>(*functions_);
  for (const auto& f : it->second->functions) next->functions.erase(f->name);
  next->libs.erase(std::string(name));
  functions_ = std::move(next);
  fn_generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void Scripting::FlushFunctions() {
  std::lock_guard l(functions_mu_);
  functions_ = std::make_shared<FunctionSet>();
  fn_generation_.fetch_add(1, std::memory_order_acq_rel);
}

bool Scripting::Restore(std::string_view payload, RestorePolicy policy, std::string* error) {
  std::vector<std::string> codes;
  if (!DecodeFunctionPayload(payload, &codes, error)) return false;
  std::vector<std::shared_ptr<Library>> libs;
  FunctionSet incoming;
  for (const std::string& code : codes) {
    auto lib = BuildLibrary(code, error);
    if (lib == nullptr) return false;
    // Collisions inside the payload itself.
    if (!Join(&incoming, {lib}, false, true, error)) return false;
    libs.push_back(std::move(lib));
  }
  std::lock_guard l(functions_mu_);
  auto next = policy == RestorePolicy::kFlush ? std::make_shared<FunctionSet>()
                                              : std::make_shared<FunctionSet>(*functions_);
  if (!Join(next.get(), libs, policy == RestorePolicy::kReplace, true, error)) return false;
  functions_ = std::move(next);
  fn_generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

std::vector<std::string> Scripting::LibrarySources() {
  auto set = functions();
  std::vector<std::string> out;
  out.reserve(set->libs.size());
  for (const auto& [name, lib] : set->libs) out.push_back(lib->code);
  return out;
}

bool Scripting::AddLibrarySource(std::string_view code, std::string* error) {
  return !LoadLibrary(code, /*replace=*/false, error).empty();
}

std::string Scripting::Dump() {
  auto set = functions();
  return EncodeFunctionPayload(*set);
}

}  // namespace vessel::scripting
