// redis.call / redis.pcall and the conversions between replies and Lua values, as Redis 7.0's
// script_lua.c does them: integers become numbers, nulls false (RESP2) or nil (RESP3), status
// {ok=...}, errors {err=...}, RESP3 maps {map=...}, sets {set=...}, doubles {double=...}, big
// numbers {big_number=...}, verbatim {verbatim_string={format=..., string=...}}; and back:
// numbers truncated to integers, false -> null, arrays stop at the first nil.
//
// A script's result is read with raw access (no metamethod runs, as in Redis), inside a
// protected call: a memory error, SCRIPT KILL, or a reply growing past the client output
// buffer limit (a table that contains itself twice doubles at every level) replaces the partial
// reply by an error instead of ending or stalling the process. Redis hangs or crashes there.
//
// Commands run through Engine::Call under the script's locks. Before each call the keys it
// names are checked against what the script holds: a key of a shard it does not hold (a key it
// did not declare) is try-locked without waiting; when that fails the call fails
// (docs/scripting.md).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "host/engine/entry_table.h"
#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
}

namespace vessel::scripting {

thread_local RunCtx* t_run = nullptr;

namespace {

using engine::CommandSpec;

// A Lua string up to its first NUL, as Redis reads it into a C string.
std::string_view CString(lua_State* L, int idx) { return lua_tostring(L, idx); }

// ---- reply bytes -> Lua ----

const char* ParseLine(const char* p, const char* end, std::string_view* line) {
  const char* cr = static_cast<const char*>(memchr(p, '\r', end - p));
  if (cr == nullptr) cr = end;
  *line = std::string_view(p, cr - p);
  return cr + 2 <= end ? cr + 2 : end;
}

int64_t LineInt(std::string_view s) {
  int64_t v = 0;
  engine::ParseInt64(s, &v);
  return v;
}

// A length from the reply, kept inside the bytes that remain (the reply is the host's own, but a
// bad length must not read past it).
size_t Span(int64_t n, const char* p, const char* end) {
  return n <= 0 ? 0 : std::min(static_cast<size_t>(n), static_cast<size_t>(end - p));
}

void SetTableField(lua_State* L, const char* field) {  // t[field] = top; pops top
  lua_setfield(L, -2, field);
}

// Pushes the reply at p (or nothing when L is null: attributes are skipped); returns its end.
// Runs inside redis.call (protected); it may raise, so it keeps no C++ object alive.
const char* PushReply(lua_State* L, const char* p, const char* end, int resp) {
  if (p >= end) return end;
  if (L != nullptr && !lua_checkstack(L, 8)) luaL_error(L, "reached lua stack limit");
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
        PushErrorTable(L, std::string_view(line.data() - 1, line.size() + 1));  // with its '-'
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
      const size_t len = Span(n, p, end);
      if (L) lua_pushlstring(L, p, len);
      return std::min(p + len + 2, end);
    }
    case '=': {  // verbatim: "txt:" + text
      const size_t len = Span(LineInt(line), p, end);
      if (L) {
        lua_newtable(L);
        lua_newtable(L);
        lua_pushlstring(L, p + std::min<size_t>(len, 4), len - std::min<size_t>(len, 4));
        SetTableField(L, "string");
        lua_pushlstring(L, p, std::min<size_t>(len, 3));
        SetTableField(L, "format");
        SetTableField(L, "verbatim_string");
      }
      return std::min(p + len + 2, end);
    }
    case '*':
    case '>': {
      const int64_t n = LineInt(line);
      if (n < 0) {
        if (L) lua_pushboolean(L, 0);
        return p;
      }
      if (L) lua_createtable(L, static_cast<int>(std::min<int64_t>(n, 1 << 16)), 0);
      for (int64_t j = 0; j < n && p < end; ++j) {
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
      for (int64_t j = 0; j < n && p < end; ++j) {
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
      for (int64_t j = 0; j < n && p < end; ++j) {
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
      for (int64_t j = 0; j < 2 * n && p < end; ++j) p = PushReply(nullptr, p, end, resp);
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
        char buf[64];
        const size_t n = std::min(line.size(), sizeof(buf) - 1);
        std::memcpy(buf, line.data(), n);
        buf[n] = '\0';
        lua_newtable(L);
        lua_pushnumber(L, std::strtod(buf, nullptr));
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
  return e.registry().Resolve(argv.data(), static_cast<int>(argv.size()));
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

// The reply of the command a script runs. Thread-local rather than a local: the conversion to
// Lua may raise, and Lua's longjmp would skip a local's destructor.
thread_local std::string t_reply;

// Copies the arguments of redis.call into t_args (numbers as Redis formats them); false when one
// is neither a string nor a number. Makes no Lua call that can raise.
bool CollectArgs(lua_State* L, int argc) {
  t_args.resize(argc);
  for (int j = 0; j < argc; ++j) {
    if (lua_type(L, j + 1) == LUA_TNUMBER) {
      char buf[64];
      const int n =
          snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, j + 1)));
      t_args[j].assign(buf, n);
    } else {
      size_t len = 0;
      const char* s = lua_tolstring(L, j + 1, &len);  // a string: no conversion, no allocation
      if (s == nullptr) return false;
      t_args[j].assign(s, len);
    }
  }
  t_views.assign(t_args.begin(), t_args.end());
  return true;
}

// Pushes the error table for a refused call (its "-ERR ..." line in t_reply).
void PushRefusal(lua_State* L) {
  std::string_view line;
  ParseLine(t_reply.data(), t_reply.data() + t_reply.size(), &line);
  PushErrorTable(L, line);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "ignore_error_stats_update");
}

// redis.call (raise) and redis.pcall. No C++ object is alive across the Lua calls below.
int GenericCall(lua_State* L, bool raise) {
  RunCtx* r = t_run;
  if (r == nullptr) {
    PushErrorTable(L, "redis.call/pcall can only be called inside a script invocation");
    return lua_error(L);
  }
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return raise ? lua_error(L) : 1;
  }
  const bool args_ok = CollectArgs(L, argc);
  lua_pop(L, argc);
  if (!args_ok) {
    PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
    return raise ? lua_error(L) : 1;
  }
  t_reply.clear();
  if (!RunCommand(r, t_views, &t_reply)) {
    PushRefusal(L);
    return raise ? lua_error(L) : 1;
  }
  if (t_reply.capacity() > (size_t{1} << 20) && t_reply.size() < (size_t{1} << 16)) {
    t_reply.shrink_to_fit();  // a huge reply once does not pin its buffer to the thread
  }
  const bool error = !t_reply.empty() && t_reply[0] == '-';
  PushReply(L, t_reply.data(), t_reply.data() + t_reply.size(), r->resp);
  return error && raise ? lua_error(L) : 1;
}

// -1 when the command in t_views is unknown (a container with an unknown subcommand too), else
// whether the caller's ACL rules allow it with these arguments.
int AclAllows(RunCtx* r) {
  const CommandSpec* cmd = FindCommand(*r->engine, t_views);
  if (cmd == nullptr) return -1;
  if (r->caller->session == nullptr) return 1;
  return r->caller->session
      ->CheckAccess(cmd, t_views.data(), static_cast<int>(t_views.size()), false)
      .empty();
}

// ---- Lua -> reply ----

constexpr char kTooLarge[] =
    "-ERR The script's reply is larger than the client output buffer limit";

struct ReplyJob {
  resp::Writer* w;
  int resp;      // the script's protocol (redis.setresp)
  size_t start;  // where the reply begins in the output
  size_t limit;  // most bytes it may take; 0: no limit
  uint32_t count = 0;
};

// Every 1024 values: SCRIPT KILL, and the size bound.
void Checkpoint(lua_State* L, ReplyJob& job) {
  if ((++job.count & 1023) != 0) return;
  CheckKilled(L);
  if (job.limit != 0 && job.w->out()->size() - job.start > job.limit) {
    PushErrorTable(L, kTooLarge);
    lua_error(L);
  }
}

void ReplyDouble(resp::Writer& w, double d) {
  if (std::isinf(d)) return w.Double(d);
  char buf[64];  // "%.17g" as Redis's addReplyDouble, NaN's sign included ("-nan")
  const int n = snprintf(buf, sizeof(buf), "%.17g", d);
  w.DoubleText(std::string_view(buf, n));
}

void AppendBigNumber(resp::Writer& w, std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (c == '\r' || c == '\n') c = ' ';
  if (w.protocol() == 3) {
    w.out()->append("(").append(s).append("\r\n");
  } else {
    w.Bulk(s);
  }
}

// Pushes t[field] (raw) for the table on top: one more stack slot, as Redis's conversion uses.
int RawField(lua_State* L, const char* field, int table = -2) {
  lua_pushstring(L, field);
  lua_rawget(L, table);
  return lua_type(L, -1);
}

void Convert(lua_State* L, ReplyJob& job);

// The table on top (popped), as luaReplyToRedisReply reads it; the stack grows exactly as
// there, so "reached lua stack limit" comes at Redis's depth.
void ConvertTable(lua_State* L, ReplyJob& job) {
  resp::Writer& w = *job.w;
  if (RawField(L, "err") == LUA_TSTRING) {
    std::string_view msg = CString(L, -1);  // "-%s", trailing CR/LF trimmed
    while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
    w.ErrorLine(msg);
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, "ok") == LUA_TSTRING) {
    w.Simple(CString(L, -1));
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, "double") == LUA_TNUMBER) {
    ReplyDouble(w, lua_tonumber(L, -1));
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, "big_number") == LUA_TSTRING) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    AppendBigNumber(w, std::string_view(s, len));
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, "verbatim_string") == LUA_TTABLE) {
    if (RawField(L, "format") == LUA_TSTRING) {
      if (RawField(L, "string", -3) == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        w.Verbatim(CString(L, -2), std::string_view(s, len));
        lua_pop(L, 4);
        return;
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (RawField(L, "map") == LUA_TTABLE) {
    const size_t mark = w.Mark();
    int64_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pushvalue(L, -2);
      Convert(L, job);  // key
      Convert(L, job);  // value
      ++n;
    }
    w.FinishDeferred(mark, resp::AggKind::kMap, n);
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, "set") == LUA_TTABLE) {
    const size_t mark = w.Mark();
    int64_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      Convert(L, job);
      ++n;
    }
    w.FinishDeferred(mark, resp::AggKind::kSet, n);
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  const size_t mark = w.Mark();
  int64_t n = 0;
  for (int j = 1;; ++j) {
    lua_pushnumber(L, j);
    lua_rawget(L, -2);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    Convert(L, job);
    ++n;
  }
  w.FinishDeferred(mark, resp::AggKind::kArray, n);
  lua_pop(L, 1);
}

// The value on top (popped).
void Convert(lua_State* L, ReplyJob& job) {
  resp::Writer& w = *job.w;
  if (!lua_checkstack(L, 4)) {
    w.ErrorLine("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  Checkpoint(L, job);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      w.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (job.resp == 2) {
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
    case LUA_TTABLE:
      return ConvertTable(L, job);
    default:
      w.Null();
  }
  lua_pop(L, 1);
}

int ConvertResult(lua_State* L, void* arg) {
  // Redis converts with the error handler below the value: the same two slots here.
  lua_pushnil(L);
  lua_insert(L, 1);
  Convert(L, *static_cast<ReplyJob*>(arg));
  return 0;
}

// The text of an error object a protected host call left on top (popped).
void ReplyHostError(lua_State* L, resp::Writer& w) {
  if (lua_istable(L, -1)) {
    lua_pushliteral(L, "err");  // an error table this file made: no metamethod
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TSTRING) {
      w.ErrorLine(CString(L, -1));
      lua_pop(L, 2);
      return;
    }
    lua_pop(L, 1);
  }
  // A memory error's object is the string Lua preallocated: reading it allocates nothing. Once
  // the script is killed every allocation fails: say why.
  const char* msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error";
  w.ErrorLine(KillPending() ? engine::Cat("ERR ", kScriptKilled) : engine::Cat("ERR ", msg));
  lua_pop(L, 1);
}

// What ReplyLuaError reads from an error object.
struct ErrorInfo {
  bool table = false;
  bool has_msg = false, has_source = false, has_line = false;
  std::string msg, source, line;
  bool raw = false;  // read fields without metamethods
};

void ReadErrorField(lua_State* L, const char* field, bool raw, bool* has, std::string* out) {
  if (raw) {
    lua_pushstring(L, field);
    lua_rawget(L, 1);
  } else {
    lua_getfield(L, 1, field);
  }
  if (lua_isstring(L, -1)) {
    const char* s = lua_tostring(L, -1);  // converts a number; may raise before the copy
    out->assign(s);                       // a C string, as Redis's sdsnew
    *has = true;
  }
  lua_pop(L, 1);
}

int ExtractError(lua_State* L, void* arg) {
  auto* e = static_cast<ErrorInfo*>(arg);
  if (!lua_istable(L, 1)) {
    if (lua_isstring(L, 1)) {
      e->msg.assign(lua_tostring(L, 1));
      e->has_msg = true;
    }
    return 0;
  }
  e->table = true;
  ReadErrorField(L, "err", e->raw, &e->has_msg, &e->msg);
  ReadErrorField(L, "source", e->raw, &e->has_source, &e->source);
  ReadErrorField(L, "line", e->raw, &e->has_line, &e->line);
  return 0;
}

}  // namespace

int LuaRedisCall(lua_State* L) { return GenericCall(L, true); }
int LuaRedisPcall(lua_State* L) { return GenericCall(L, false); }

// redis.acl_check_cmd(command [, arg ...]), as Redis: the arguments are checked as redis.call's.
int LuaAclCheckCmd(lua_State* L) {
  RunCtx* r = t_run;
  if (r == nullptr) {
    PushErrorTable(L, "redis.acl_check_cmd can only be called inside a script invocation");
    return lua_error(L);
  }
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return lua_error(L);
  }
  const bool args_ok = CollectArgs(L, argc);
  lua_pop(L, argc);
  if (!args_ok) {
    PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
    return lua_error(L);
  }
  const int allowed = AclAllows(r);
  if (allowed < 0) {
    PushErrorTable(L, "Invalid command passed to redis.acl_check_cmd()");
    return lua_error(L);
  }
  lua_pushboolean(L, allowed);
  return 1;
}

void LuaToReply(lua_State* L, resp::Writer& w, int script_resp) {
  ReplyJob job{&w, script_resp, w.out()->size(), LuaMemoryLimit()};
  if (t_run != nullptr) {
    const auto obuf = static_cast<size_t>(std::max<int64_t>(
        0, t_run->engine->settings().output_buffer_limit.load(std::memory_order_relaxed)));
    if (obuf != 0 && (job.limit == 0 || obuf < job.limit)) job.limit = obuf;
  }
  if (CallProtected(L, 1, 0, ConvertResult, &job) != 0) {
    w.out()->resize(job.start);
    ReplyHostError(L, w);
  }
}

void ReplyLuaError(lua_State* L, resp::Writer& w, std::string_view name) {
  // Redis reads the error table with lua_getfield, so a user's metamethods run; here they run
  // protected, and one that raises (Redis then crashes) makes the fields read raw.
  ErrorInfo e;
  lua_pushvalue(L, -1);
  if (CallProtected(L, 1, 0, ExtractError, &e) != 0) {
    lua_pop(L, 1);
    e = ErrorInfo();
    e.raw = true;
    lua_pushvalue(L, -1);
    if (CallProtected(L, 1, 0, ExtractError, &e) != 0) {
      lua_pop(L, 1);
      e = ErrorInfo();  // out of memory: the message says so below
      e.has_msg = true;
      e.msg = "not enough memory";
    }
  }
  lua_pop(L, 1);
  if (!e.table && KillPending()) {
    // Killed inside a C function: its allocation failed, so the error is a memory error.
    w.ErrorLine(engine::Cat("ERR ", kScriptKilled));
    return;
  }
  if (!e.table) {
    std::string_view msg = e.has_msg ? std::string_view(e.msg) : "execution failure";
    msg = msg.substr(0, 100);  // "Error running script %s, %.100s\n", trailing CR/LF trimmed
    while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
    w.ErrorLine(engine::Cat("ERR Error running script ", name, ", ", msg));
    return;
  }
  std::string msg = e.has_msg ? e.msg : "ERR unknown error";
  if (e.has_source && e.has_line)
    msg = engine::Cat(msg, " script: ", name, ", on ", e.source, ":", e.line, ".");
  w.ErrorLine(msg);
}

}  // namespace vessel::scripting
