// FUNCTION libraries: the `#!lua name=...` header, redis.register_function while a library
// loads, and the library set's changes (LOAD, DELETE, FLUSH, RESTORE), as Redis 7.0's
// functions.c and function_lua.c do them.
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

void LoadHook(lua_State* L, lua_Debug*) {
  if (t_load == nullptr) return;
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

bool StringAt(lua_State* L, int idx, std::string* out) {
  if (!lua_isstring(L, idx)) return false;
  size_t len = 0;
  const char* s = lua_tolstring(L, idx, &len);
  out->assign(s, len);
  return true;
}

// Reads the flags table on top of the stack; false on an unknown flag.
bool ReadFlags(lua_State* L, uint32_t* flags) {
  *flags = 0;
  for (int j = 1;; ++j) {
    lua_rawgeti(L, -1, j);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    const std::string_view f = lua_tostring(L, -1);
    uint32_t bit = 0;
    for (const FlagName& n : kFlagNames)
      if (engine::EqualsIgnoreCase(f, n.name)) bit = n.flag;
    lua_pop(L, 1);
    if (bit == 0) return false;
    *flags |= bit;
  }
}

const char* ReadNamedArgs(lua_State* L, Registered* reg) {
  if (!lua_istable(L, 1))
    return "calling redis.register_function with a single argument is only applicable to Lua "
           "table (representing named arguments).";
  bool has_name = false, has_callback = false;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (!lua_isstring(L, -2)) {
      lua_pop(L, 2);
      return "named argument key given to redis.register_function is not a string";
    }
    // lua_tostring would turn a numeric key into a string in place and confuse lua_next.
    lua_pushvalue(L, -2);
    const std::string key = lua_tostring(L, -1);
    lua_pop(L, 1);
    const char* err = nullptr;
    if (engine::EqualsIgnoreCase(key, "function_name")) {
      if (!StringAt(L, -1, &reg->name))
        err = "function_name argument given to redis.register_function must be a string";
      has_name = err == nullptr;
    } else if (engine::EqualsIgnoreCase(key, "description")) {
      if (!StringAt(L, -1, &reg->desc))
        err = "description argument given to redis.register_function must be a string";
      reg->has_desc = err == nullptr;
    } else if (engine::EqualsIgnoreCase(key, "callback")) {
      if (!lua_isfunction(L, -1)) {
        err = "callback argument given to redis.register_function must be a function";
      } else {
        if (has_callback) luaL_unref(L, LUA_REGISTRYINDEX, reg->ref);
        lua_pushvalue(L, -1);
        reg->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        has_callback = true;
      }
    } else if (engine::EqualsIgnoreCase(key, "flags")) {
      if (!lua_istable(L, -1)) {
        err =
            "flags argument to redis.register_function must be a table representing "
            "function flags";
      } else if (!ReadFlags(L, &reg->flags)) {
        err = "unknown flag given";
      }
    } else {
      err = "unknown argument given to redis.register_function";
    }
    lua_pop(L, 1);
    if (err != nullptr) {
      lua_pop(L, 1);
      if (has_callback) luaL_unref(L, LUA_REGISTRYINDEX, reg->ref);
      return err;
    }
  }
  const char* err = nullptr;
  if (!has_name) {
    err = "redis.register_function must get a function name argument";
  } else if (!has_callback) {
    err = "redis.register_function must get a callback argument";
  }
  if (err != nullptr && has_callback) luaL_unref(L, LUA_REGISTRYINDEX, reg->ref);
  return err;
}

}  // namespace

// redis.register_function(name, callback) | redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}
int LuaRegisterFunction(lua_State* L) {
  if (t_load == nullptr)
    return Fail(L, "redis.register_function can only be called on FUNCTION LOAD command");
  const int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) return Fail(L, "wrong number of arguments to redis.register_function");
  Registered reg;
  if (argc == 1) {
    if (const char* err = ReadNamedArgs(L, &reg)) return Fail(L, err);
  } else {
    if (!StringAt(L, 1, &reg.name))
      return Fail(L, "first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2))
      return Fail(L, "second argument to redis.register_function must be a function");
    lua_pushvalue(L, 2);
    reg.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  const char* err = nullptr;
  if (!ValidName(reg.name)) {
    err = kBadName;
  } else {
    for (const Registered& r : *t_load->out)
      if (r.name == reg.name) err = "Function already exists in the library";
  }
  if (err != nullptr) {
    luaL_unref(L, LUA_REGISTRYINDEX, reg.ref);
    return Fail(L, err);
  }
  t_load->out->push_back(std::move(reg));
  return 0;
}

bool LoadLibraryCode(lua_State* L, std::string_view code, std::vector<Registered>* out,
                     std::string* error) {
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_function")) {
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
    std::string msg;
    if (lua_isstring(L, -1)) {
      msg = Cat("ERR ", lua_tostring(L, -1));
    } else if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *error = Cat("Error registering functions: ", msg);
    for (const Registered& r : *out) luaL_unref(L, LUA_REGISTRYINDEX, r.ref);
    out->clear();
    return false;
  }
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
  std::vector<Registered> regs;
  const bool ok = LoadLibraryCode(L, code.substr(header), &regs, error);
  lua_close(L);
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
