// redis.call / redis.pcall and the conversions between replies and Lua values, as Redis 7.0's
// script_lua.c does them: integers become numbers, nulls false (RESP2) or nil (RESP3), status
// {ok=...}, errors {err=...}, RESP3 maps {map=...}, sets {set=...}, doubles {double=...}, big
// numbers {big_number=...}, verbatim {verbatim_string={format=..., string=...}}; and back:
// numbers truncated to integers, false -> null, arrays stop at the first nil.
//
// Commands run through Engine::Call under the script's locks. Before each call the keys it
// names are checked against what the script holds: a key of a shard it does not hold (a key it
// did not declare) is try-locked without waiting; when that fails the call fails (README).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "host/engine/entry_table.h"
#include "host/scripting/state.h"
#include "spdlog/spdlog.h"

extern "C" {
#include <lauxlib.h>
}

namespace vessel::scripting {

thread_local RunCtx* t_run = nullptr;

namespace {

using engine::CommandSpec;

// ---- reply bytes -> Lua ----

const char* ParseLine(const char* p, const char* end, std::string_view* line) {
  const char* cr = static_cast<const char*>(memchr(p, '\r', end - p));
  if (cr == nullptr) cr = end;
  *line = std::string_view(p, cr - p);
  return cr + 2 <= end ? cr + 2 : end;
}

int64_t LineInt(std::string_view s) { return std::strtoll(std::string(s).c_str(), nullptr, 10); }

void SetTableField(lua_State* L, const char* field) {  // t[field] = top; pops top
  lua_setfield(L, -2, field);
}

// Pushes the reply at p (or nothing when L is null: attributes are skipped); returns its end.
const char* PushReply(lua_State* L, const char* p, const char* end, int resp) {
  if (p >= end) return end;
  if (L != nullptr) lua_checkstack(L, 8);
  const char type = *p++;
  std::string_view line;
  p = ParseLine(p, end, &line);
  switch (type) {
    case '+':
      if (L) {
        lua_newtable(L);
        lua_pushlstring(L, line.data(), line.size());
        SetTableField(L, "ok");
      }
      return p;
    case '-':
      if (L) {
        PushErrorTable(L, std::string("-").append(line));
        lua_pushboolean(L, 1);
        SetTableField(L, "ignore_error_stats_update");
      }
      return p;
    case ':':
      if (L) lua_pushnumber(L, static_cast<lua_Number>(LineInt(line)));
      return p;
    case '$': {
      const int64_t n = LineInt(line);
      if (n < 0) {
        if (L) lua_pushboolean(L, 0);
        return p;
      }
      if (L) lua_pushlstring(L, p, static_cast<size_t>(n));
      return p + n + 2;
    }
    case '=': {  // verbatim: "txt:" + text
      const int64_t n = LineInt(line);
      if (L) {
        lua_newtable(L);
        lua_newtable(L);
        lua_pushlstring(L, p + 4, static_cast<size_t>(n - 4));
        SetTableField(L, "string");
        lua_pushlstring(L, p, 3);
        SetTableField(L, "format");
        SetTableField(L, "verbatim_string");
      }
      return p + n + 2;
    }
    case '*':
    case '>': {
      const int64_t n = LineInt(line);
      if (n < 0) {
        if (L) lua_pushboolean(L, 0);
        return p;
      }
      if (L) lua_createtable(L, static_cast<int>(n), 0);
      for (int64_t j = 0; j < n; ++j) {
        if (L) lua_pushnumber(L, static_cast<lua_Number>(j + 1));
        p = PushReply(L, p, end, resp);
        if (L) lua_settable(L, -3);
      }
      return p;
    }
    case '%': {
      const int64_t n = LineInt(line);
      if (L) {
        lua_newtable(L);
        lua_newtable(L);
      }
      for (int64_t j = 0; j < n; ++j) {
        p = PushReply(L, p, end, resp);
        p = PushReply(L, p, end, resp);
        if (L) lua_settable(L, -3);
      }
      if (L) SetTableField(L, "map");
      return p;
    }
    case '~': {
      const int64_t n = LineInt(line);
      if (L) {
        lua_newtable(L);
        lua_newtable(L);
      }
      for (int64_t j = 0; j < n; ++j) {
        p = PushReply(L, p, end, resp);
        if (L) {
          lua_pushboolean(L, 1);
          lua_settable(L, -3);
        }
      }
      if (L) SetTableField(L, "set");
      return p;
    }
    case '|': {  // attributes are not shown to scripts
      const int64_t n = LineInt(line);
      for (int64_t j = 0; j < 2 * n; ++j) p = PushReply(nullptr, p, end, resp);
      return PushReply(L, p, end, resp);
    }
    case '_':
      if (L) lua_pushnil(L);
      return p;
    case '#':
      if (L) lua_pushboolean(L, line == "t");
      return p;
    case ',':
      if (L) {
        lua_newtable(L);
        lua_pushnumber(L, std::strtod(std::string(line).c_str(), nullptr));
        SetTableField(L, "double");
      }
      return p;
    case '(':
      if (L) {
        lua_newtable(L);
        lua_pushlstring(L, line.data(), line.size());
        SetTableField(L, "big_number");
      }
      return p;
    default:
      if (L) lua_pushnil(L);
      return end;
  }
}

// ---- running one command for the script ----

thread_local std::vector<std::string> t_args;
thread_local std::vector<std::string_view> t_views;

const CommandSpec* FindCommand(engine::Engine& e, const std::vector<std::string_view>& argv) {
  std::string lower;
  engine::AsciiLower(argv[0], &lower);
  const CommandSpec* cmd = e.registry().Find(lower);
  if (cmd != nullptr && cmd->is_container() && argv.size() >= 2) {
    engine::AsciiLower(argv[1], &lower);
    auto it = cmd->subcommands.find(lower);
    cmd = it == cmd->subcommands.end() ? nullptr : it->second.get();
  }
  return cmd;
}

// Redis 7.0's noscript commands whose host rows lack VSL_CMD_NOSCRIPT (COMMAND INFO differs
// there too): refused by name as well, since several would change the caller's session (MULTI,
// WATCH, CLIENT REPLY, SUBSCRIBE, ...).
bool NoScriptByName(std::string_view name) {
  static const absl::flat_hash_set<std::string> kNames = {"acl|cat",
                                                          "acl|deluser",
                                                          "acl|dryrun",
                                                          "acl|genpass",
                                                          "acl|getuser",
                                                          "acl|list",
                                                          "acl|load",
                                                          "acl|log",
                                                          "acl|save",
                                                          "acl|setuser",
                                                          "acl|users",
                                                          "acl|whoami",
                                                          "auth",
                                                          "bgrewriteaof",
                                                          "bgsave",
                                                          "client|caching",
                                                          "client|getname",
                                                          "client|getredir",
                                                          "client|id",
                                                          "client|info",
                                                          "client|kill",
                                                          "client|list",
                                                          "client|no-evict",
                                                          "client|pause",
                                                          "client|reply",
                                                          "client|setname",
                                                          "client|setinfo",
                                                          "client|tracking",
                                                          "client|trackinginfo",
                                                          "client|unblock",
                                                          "client|unpause",
                                                          "client|no-touch",
                                                          "cluster|reset",
                                                          "config|get",
                                                          "config|resetstat",
                                                          "config|rewrite",
                                                          "config|set",
                                                          "debug",
                                                          "discard",
                                                          "exec",
                                                          "failover",
                                                          "hello",
                                                          "latency|doctor",
                                                          "latency|graph",
                                                          "latency|histogram",
                                                          "latency|history",
                                                          "latency|latest",
                                                          "latency|reset",
                                                          "module|list",
                                                          "monitor",
                                                          "multi",
                                                          "psubscribe",
                                                          "psync",
                                                          "punsubscribe",
                                                          "quit",
                                                          "replconf",
                                                          "replicaof",
                                                          "reset",
                                                          "role",
                                                          "save",
                                                          "shutdown",
                                                          "slaveof",
                                                          "ssubscribe",
                                                          "subscribe",
                                                          "sunsubscribe",
                                                          "sync",
                                                          "unsubscribe",
                                                          "unwatch",
                                                          "wait",
                                                          "watch"};
  return kNames.contains(std::string(name));
}

// SELECT inside a script changes the script's database only (Redis's script client).
void ScriptSelect(RunCtx* r, const std::vector<std::string_view>& argv, std::string* out) {
  int64_t db = 0;
  if (!engine::ParseInt64(argv[1], &db)) {
    out->append("-ERR value is not an integer or out of range\r\n");
  } else if (db < 0 || db >= r->engine->db_count()) {
    out->append("-ERR DB index is out of range\r\n");
  } else {
    r->db = static_cast<int>(db);
    out->append("+OK\r\n");
  }
}

// Stops the run so that the command runs again with the whole keyspace held, when that is
// invisible: the caller may run it again and the script has not written or published yet.
bool Restart(RunCtx* r) {
  if (!r->can_restart || r->side_effects) return false;
  r->abort = Abort::kRestart;
  SetAbortHook(r->main);
  return true;
}

// Checks (and extends) the locks for the keys of the call: "" when the call may run, else the
// error text.
std::string CheckKeys(RunCtx* r, const CommandSpec& cmd,
                      const std::vector<std::string_view>& argv) {
  engine::KeyRefs refs;
  engine::ExtractKeys(cmd, argv.data(), static_cast<int>(argv.size()), &refs, /*partial=*/true);
  engine::CommandCtx* c = r->caller;
  engine::Database& db = r->engine->db(r->db);
  // Commands over the whole keyspace (FLUSHALL, SWAPDB, KEYS, SCAN, ...) need all of it held.
  const bool needs_world =
      engine::Engine::NeedsWorld(cmd, argv.data(), static_cast<int>(argv.size())) ||
      (cmd.flags & engine::kCmdTxWorld);
  if (needs_world) r->undeclared = true;  // its later runs hold the whole keyspace
  if (needs_world && !c->world) {
    if (Restart(r)) return "ERR the script runs again with the whole keyspace";
    return "ERR This command needs the whole keyspace: it runs in a script only when the script "
           "has run before and is known to touch keys it does not declare.";
  }
  for (const engine::KeyRef& ref : refs) {
    const std::string_view key = argv[ref.arg_index];
    if (c->world) {
      // Learns whether the script keeps to its declared keys (exact names).
      bool declared = false;
      if (c->db != nullptr && c->db->index() == r->db) {
        for (const engine::CommandKey& k : c->keys) declared |= k.name == key;
      }
      r->undeclared |= !declared;
      continue;
    }
    const uint32_t shard = db.ShardOf(engine::HashKey(key));
    const auto dbi = static_cast<uint32_t>(r->db);
    const bool excl = !(ref.flags & VSL_KS_RO) || (cmd.flags & engine::kCmdExclusiveKeys);
    if ((c->locks != nullptr && c->locks->Holds(dbi, shard, excl)) ||
        r->extra.Holds(dbi, shard, excl))
      continue;
    r->undeclared = true;
    // Another client holds the shard, and waiting for it here could deadlock: a script that
    // changed nothing yet runs again holding the whole keyspace instead.
    if (!r->extra.TryAdd(r->engine->dbs(), dbi, shard, excl)) {
      if (Restart(r)) return "ERR the script runs again with the whole keyspace";
      return engine::Cat("ERR Script attempted to access key '", key.substr(0, 128),
                         "' that is not in KEYS while another client holds it. Declare every "
                         "key a script touches in KEYS.");
    }
    r->sc->NoteShard(r->running, (uint64_t{dbi} << 32) | shard, excl);
  }
  return "";
}

// The caller's ACL rules apply to the commands its script calls: "" when allowed, else Redis's
// "The user executing the script can't ..." (the denial is in ACL LOG).
std::string ScriptAclError(RunCtx* r, const CommandSpec& cmd,
                           const std::vector<std::string_view>& argv) {
  const std::string denied = r->caller->session->CheckAccess(
      &cmd, argv.data(), static_cast<int>(argv.size()), /*in_exec=*/false);
  if (denied.empty()) return "";
  const char* why = denied.find("keys") != std::string::npos
                        ? "can't access at least one of the keys mentioned in the command arguments"
                    : denied.find("channels") != std::string::npos
                        ? "can't publish to the channel mentioned in the command"
                        : "can't run this command or subcommand";
  return engine::Cat("The user executing the script ", why);
}

// Runs argv for the script; the reply (or Redis's error) is appended to *out. false when the
// call was refused before running (the error then counts as the script's).
bool RunCommand(RunCtx* r, const std::vector<std::string_view>& argv, std::string* out) {
  const CommandSpec* cmd = FindCommand(*r->engine, argv);
  std::string err;
  if (cmd == nullptr) {
    err = "Unknown Redis command called from script";
  } else if (!cmd->ArityOk(static_cast<int>(argv.size()))) {
    err = "Wrong number of args calling Redis command from script";
  } else if ((cmd->flags & VSL_CMD_NOSCRIPT) || NoScriptByName(cmd->name)) {
    err = "This Redis command is not allowed from script";
  } else if (r->read_only && (cmd->flags & (VSL_CMD_WRITE | engine::kCmdMayReplicate))) {
    err = "Write commands are not allowed from read-only scripts.";
  }
  if (err.empty() && cmd->name == "select") {
    ScriptSelect(r, argv, out);
    return true;
  }
  if (err.empty() && r->caller->session != nullptr) err = ScriptAclError(r, *cmd, argv);
  // Over maxmemory when the script started, its first write that may grow memory is refused
  // (Redis's scriptVerifyOOM); after a write it cannot stop halfway.
  if (err.empty() && r->caller->oom && !r->allow_oom && !r->side_effects &&
      (cmd->flags & VSL_CMD_DENYOOM))
    err = "OOM command not allowed when used memory > 'maxmemory'.";
  if (err.empty()) err = CheckKeys(r, *cmd, argv);
  if (!err.empty()) {
    out->append(err.starts_with("ERR ") ? "-" : "-ERR ").append(err).append("\r\n");
    return false;
  }
  if (cmd->is_write() && r->running != nullptr)
    r->running->wrote.store(true, std::memory_order_relaxed);
  r->side_effects |= cmd->is_write() || (cmd->flags & engine::kCmdMayReplicate);
  engine::CommandCtx parent;
  parent.engine = r->engine;
  parent.session = r->caller->session;
  parent.db = &r->engine->db(r->db);
  parent.now_ms = r->caller->now_ms;
  parent.world = r->caller->world;
  parent.locks = r->caller->locks;
  parent.extra_locks = &r->extra;
  parent.oom = r->caller->oom;
  parent.script_caller = r->caller;  // client tracking remembers the script's declared keys
  r->engine->Call(&parent, argv, r->resp, out);
  return true;
}

// The body of redis.call/pcall: pushes the reply, or an error table and returns true. It never
// raises: lua_error longjmps, which would skip the destructors of its C++ locals.
bool CallBody(lua_State* L) {
  RunCtx* r = t_run;
  if (r == nullptr) {
    PushErrorTable(L, "redis.call/pcall can only be called inside a script invocation");
    return true;
  }
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return true;
  }
  t_args.resize(argc);
  int j = 0;
  for (; j < argc; ++j) {
    if (lua_type(L, j + 1) == LUA_TNUMBER) {
      char buf[64];
      const int n =
          snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, j + 1)));
      t_args[j].assign(buf, n);
    } else {
      size_t len = 0;
      const char* s = lua_tolstring(L, j + 1, &len);
      if (s == nullptr) break;
      t_args[j].assign(s, len);
    }
  }
  lua_pop(L, argc);
  if (j != argc) {
    PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
    return true;
  }
  t_views.assign(t_args.begin(), t_args.end());
  std::string out;
  const bool ran = RunCommand(r, t_views, &out);
  const char* end = out.data() + out.size();
  if (!ran) {
    std::string_view line;
    ParseLine(out.data(), end, &line);  // "-ERR ..."
    PushErrorTable(L, line);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ignore_error_stats_update");
    return true;
  }
  PushReply(L, out.data(), end, r->resp);
  return !out.empty() && out[0] == '-';
}

int GenericCall(lua_State* L, bool raise) {
  const bool error = CallBody(L);
  if (error && (raise || t_run == nullptr)) return lua_error(L);  // no C++ object alive here
  return 1;
}

bool StringField(lua_State* L, const char* field, std::string* out) {
  lua_getfield(L, -1, field);
  const bool ok = lua_isstring(L, -1);
  if (ok) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out->assign(s, len);
  }
  lua_pop(L, 1);
  return ok;
}

void AppendBigNumber(resp::Writer& w, std::string s) {
  for (char& c : s)
    if (c == '\r' || c == '\n') c = ' ';
  if (w.protocol() == 3) {
    w.out()->append("(").append(s).append("\r\n");
  } else {
    w.Bulk(s);
  }
}

}  // namespace

int LuaRedisCall(lua_State* L) { return GenericCall(L, true); }
int LuaRedisPcall(lua_State* L) { return GenericCall(L, false); }

void LuaToReply(lua_State* L, resp::Writer& w, int script_resp) {
  if (!lua_checkstack(L, 4)) {
    w.ErrorLine("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      w.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          w.Int(1);
        } else {
          w.Null();
        }
      } else {
        w.Bool(lua_toboolean(L, -1));
      }
      break;
    case LUA_TNUMBER: {
      // (long long) of a double, as Redis does; out-of-range values as x86 converts them.
      const double d = lua_tonumber(L, -1);
      const bool fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
      w.Int(fits ? static_cast<int64_t>(d) : INT64_MIN);
      break;
    }
    case LUA_TTABLE: {
      std::string s;
      if (StringField(L, "err", &s)) {
        w.ErrorLine(s.empty() ? "" : s);
        break;
      }
      if (StringField(L, "ok", &s)) {
        w.Simple(s);
        break;
      }
      lua_getfield(L, -1, "double");
      if (lua_type(L, -1) == LUA_TNUMBER) {
        w.Double(lua_tonumber(L, -1));
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      if (StringField(L, "big_number", &s)) {
        AppendBigNumber(w, std::move(s));
        break;
      }
      lua_getfield(L, -1, "verbatim_string");
      if (lua_istable(L, -1)) {
        std::string format, text;
        if (StringField(L, "format", &format) && StringField(L, "string", &text)) {
          lua_pop(L, 1);
          w.Verbatim(format.substr(0, 3), text);
          break;
        }
      }
      lua_pop(L, 1);
      lua_getfield(L, -1, "map");
      if (lua_istable(L, -1)) {
        const size_t mark = w.Mark();
        int64_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pushvalue(L, -2);
          LuaToReply(L, w, script_resp);  // key
          LuaToReply(L, w, script_resp);  // value
          ++n;
        }
        lua_pop(L, 1);
        w.FinishDeferred(mark, resp::AggKind::kMap, n);
        break;
      }
      lua_pop(L, 1);
      lua_getfield(L, -1, "set");
      if (lua_istable(L, -1)) {
        const size_t mark = w.Mark();
        int64_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pop(L, 1);
          lua_pushvalue(L, -1);
          LuaToReply(L, w, script_resp);
          ++n;
        }
        lua_pop(L, 1);
        w.FinishDeferred(mark, resp::AggKind::kSet, n);
        break;
      }
      lua_pop(L, 1);
      const size_t mark = w.Mark();
      int64_t n = 0;
      for (int j = 1;; ++j) {
        lua_rawgeti(L, -1, j);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        LuaToReply(L, w, script_resp);
        ++n;
      }
      w.FinishDeferred(mark, resp::AggKind::kArray, n);
      break;
    }
    default:
      w.Null();
  }
  lua_pop(L, 1);
}

void ReplyLuaError(lua_State* L, resp::Writer& w, std::string_view name) {
  if (!lua_istable(L, -1)) {
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    w.ErrorLine(engine::Cat("ERR Error running script ", name, ", ",
                            std::string_view(msg).substr(0, 100), " "));
    lua_pop(L, 1);
    return;
  }
  std::string msg, source, line;
  if (!StringField(L, "err", &msg)) msg = "ERR unknown error";
  StringField(L, "source", &source);
  StringField(L, "line", &line);
  if (!source.empty() && !line.empty())
    msg = engine::Cat(msg, " script: ", name, ", on ", source, ":", line, ".");
  w.ErrorLine(msg);
  lua_pop(L, 1);
}

// ---- the hook: busy-reply-threshold, SCRIPT KILL, SHUTDOWN, restarts ----

namespace {
void RunHook(lua_State* L, lua_Debug*) {
  RunCtx* r = t_run;
  if (r == nullptr || r->running == nullptr) return;
  Running* run = r->running;
  if (r->abort == Abort::kNone && run->kill.load(std::memory_order_relaxed)) {
    r->abort = Abort::kKill;
    SetAbortHook(r->main);
  }
  if (r->abort != Abort::kNone) {
    // Every line raises from now on, so a pcall in the script cannot swallow the stop.
    if (L != r->main) SetAbortHook(L);  // a coroutine has its own hook
    PushErrorTable(L, r->abort == Abort::kKill ? "Script killed by user with SCRIPT KILL..."
                                               : "Script needs the whole keyspace");
    lua_error(L);
  }
  if (r->threshold_ms <= 0 || r->engine->Now() - r->start_ms < r->threshold_ms) return;
  if (!run->timedout.load(std::memory_order_relaxed)) {
    run->timedout.store(true, std::memory_order_relaxed);
    spdlog::warn(
        "Slow script detected: still in execution after {} milliseconds. You can try killing "
        "the script using the {} command. Script name is: {}.",
        r->engine->Now() - r->start_ms, r->eval ? "SCRIPT KILL" : "FUNCTION KILL", r->name);
    r->sc->NoteTimedOut();  // what waits for this script is answered BUSY now
  }
  // As Redis's processEventsWhileBlocked: this worker's clients are answered (BUSY), and a
  // SCRIPT KILL sent to this worker is read.
  r->engine->PumpWhileBusy();
}
}  // namespace

void SetAbortHook(lua_State* L) { lua_sethook(L, RunHook, LUA_MASKLINE | LUA_MASKCOUNT, 1); }

void SetRunHook(lua_State* L, bool on) {
  if (on) {
    lua_sethook(L, RunHook, LUA_MASKCOUNT, 100000);
  } else {
    lua_sethook(L, nullptr, 0, 0);
  }
}

}  // namespace vessel::scripting
