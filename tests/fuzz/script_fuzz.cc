// Fuzzes the Lua scripting subsystem: each input becomes a script (built from a small grammar of
// snippets that reach metatables, cycles, deep nesting, huge strings, coroutines, error objects
// of every type, redis.call with odd arguments, the bundled libraries, RESP3 results; or, in
// raw mode, the input's bytes as the script), run through EVAL and as a FUNCTION (FUNCTION LOAD,
// then FCALL) on the real engine with the in-tree modules and the scripting sources compiled in.
// Anything but a reply is a bug, and so is a run after which a probe script sees the sandbox
// changed (the probe runs in both kinds of state after every input).
//
// Bounds: the Lua states are capped at 64 MiB (Redis has no cap; the fuzzer's RSS limit needs
// one), and a watchdog stops any run past 100 ms with Scripting::KillAll (the count hook and the
// C loops that poll it).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/config/config.h"
#include "host/engine/engine.h"
#include "host/engine/session.h"
#include "host/modules/loader.h"
#include "host/scripting/scripting.h"
#include "host/scripting/state.h"
#include "spdlog/spdlog.h"

namespace {

using vessel::engine::Engine;
using vessel::engine::Session;

constexpr int64_t kRunBudgetMs = 100;
constexpr size_t kLuaMemory = size_t{64} << 20;

class NullIo : public vessel::engine::SessionIo {
 public:
  void Wake() override {}
  void Close() override {}
};

std::string Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct World {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<vessel::scripting::Subsystem> scripting;
  NullIo io;
  std::unique_ptr<Session> session;
  // When the command running now started (0: none). The watchdog kills under the same lock, so
  // it never stops a command that started after the one it timed.
  std::mutex mu;
  int64_t run_started = 0;
  uint64_t inputs = 0;

  World() {
    spdlog::set_level(spdlog::level::critical);  // redis.log from scripts stays quiet
    vessel::config::Config cfg = vessel::config::Defaults();
    cfg.storage.shards = 4;
    engine = std::make_unique<Engine>(cfg);
    scripting = vessel::scripting::Install(engine.get());
    std::string why;
    const std::vector<std::string> dirs = {VESSEL_FUZZ_MODULE_DIR};
    for (const auto& m : cfg.modules) vessel::modules::LoadModule(engine.get(), m, dirs, &why);
    session =
        std::make_unique<Session>(engine.get(), engine->external_worker(), &io, "fuzz", "fuzz", -1);
    vessel::scripting::SetLuaMemoryLimit(kLuaMemory);
    std::thread([this] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::lock_guard l(mu);
        if (run_started != 0 && NowMs() - run_started > kRunBudgetMs)
          vessel::scripting::Scripting::Of(engine.get())->KillAll();
      }
    }).detach();
  }

  // Runs one command; returns its reply bytes. A bounded command is stopped past the budget;
  // the probes are not (on a loaded machine a trivial script can still exceed it).
  std::string Run(const std::vector<std::string>& args, bool bounded = true) {
    session->output().clear();
    const std::string wire = Encode(args);
    if (bounded) {
      std::lock_guard l(mu);
      run_started = NowMs();
    }
    const size_t used = session->Process(wire);
    {
      std::lock_guard l(mu);
      run_started = 0;
    }
    if (used != wire.size()) {
      std::fprintf(stderr, "session consumed %zu of %zu bytes\n", used, wire.size());
      std::abort();
    }
    return session->output();
  }
};

World& Get() {
  static World* w = new World();
  return *w;
}

// ---- the grammar ----

class Gen {
 public:
  Gen(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  std::string Script() {
    std::string out = "local v1, v2, v3, v4 = {}, {1, 2}, 'x', 1\n";
    const int n = 1 + Byte() % 8;
    for (int i = 0; i < n && !Done(); ++i) out += Statement(0) + "\n";
    out += "return " + Expr(0) + "\n";
    return out;
  }

  std::string Statement(int depth) {
    if (depth > 3) return "v4 = " + Expr(depth + 1);
    switch (Byte() % 26) {
      case 0:
        return "v" + std::to_string(1 + Byte() % 4) + " = " + Expr(depth + 1);
      case 1:
        return "v1[" + Expr(depth + 1) + "] = " + Expr(depth + 1);
      case 2:
        return "setmetatable(v1, " + Metatable(depth + 1) + ")";
      case 3:
        return "v1 = {v1, v1}";
      case 4:
        return "for i = 1, " + Count() + " do " + Statement(depth + 1) + " end";
      case 5:
        return "if " + Expr(depth + 1) + " then " + Statement(depth + 1) + " else " +
               Statement(depth + 1) + " end";
      case 6:
        return "local ok, e = pcall(function() " + Statement(depth + 1) + " end) v4 = e";
      case 7:
        return "v4 = redis.pcall(" + CallArgs(depth + 1) + ")";
      case 8:
        return "v4 = redis.call(" + CallArgs(depth + 1) + ")";
      case 9:
        return "error(" + Expr(depth + 1) + ")";
      case 10:
        return "coroutine.wrap(function() " + Statement(depth + 1) + " end)()";
      case 11:
        return "local co = coroutine.create(function(a) " + Statement(depth + 1) +
               " coroutine.yield(" + Expr(depth + 1) + ") " + Statement(depth + 1) +
               " end) v4 = {coroutine.resume(co, v1)} v3 = {coroutine.resume(co)}";
      case 12:
        return "redis.setresp(" + Pick({"2", "3", "3", "1e300", "0/0", "'3'"}) + ")";
      case 13:
        return "v4 = " + LibCall(depth + 1);
      case 14:
        return Tamper(depth + 1);
      case 15:
        return "v1 = setmetatable({}, {__index = function(t, k) return " + Expr(depth + 1) +
               " end})";
      case 16:
        return "local s = string.rep(" + Expr(depth + 1) + ", " + Count() + ") v3 = s";
      case 17:
        return "v2 = {err = " + Expr(depth + 1) + ", source = " + Expr(depth + 1) +
               ", line = " + Expr(depth + 1) + "}";
      case 18:
        return "local t = {} for i = 1, " + Count() + " do t = {t} end v1 = t";
      case 19:
        return "v1[#v1 + 1] = v1";
      case 20:
        return "v4 = select('#', " + Expr(depth + 1) + ", " + Expr(depth + 1) + ")";
      case 21:
        return "v4 = loadstring(" + Expr(depth + 1) + ")";
      case 22:
        return "v4 = table.concat({" + Expr(depth + 1) + ", " + Expr(depth + 1) + "}, " +
               Expr(depth + 1) + ")";
      case 23:
        return "while " + Expr(depth + 1) + " do " + Statement(depth + 1) + " break end";
      case 24:
        return "v4 = xpcall(function() " + Statement(depth + 1) + " end, function(e) " +
               Statement(depth + 1) + " return e end)";
      default:
        return "v4 = " + Expr(depth + 1);
    }
  }

  std::string Expr(int depth) {
    if (depth > 4) return Literal();
    switch (Byte() % 24) {
      case 0:
      case 1:
      case 2:
        return Literal();
      case 3:
        return "{" + Expr(depth + 1) + ", " + Expr(depth + 1) + "}";
      case 4:
        return "{err = " + Expr(depth + 1) + "}";
      case 5:
        return "{ok = " + Expr(depth + 1) + "}";
      case 6:
        return "{double = " + Expr(depth + 1) + "}";
      case 7:
        return "{big_number = " + Expr(depth + 1) + "}";
      case 8:
        return "{map = {[" + Expr(depth + 1) + "] = " + Expr(depth + 1) + "}}";
      case 9:
        return "{set = {[" + Expr(depth + 1) + "] = true}}";
      case 10:
        return "{verbatim_string = {format = " + Expr(depth + 1) + ", string = " + Expr(depth + 1) +
               "}}";
      case 11:
        return "setmetatable({" + Expr(depth + 1) + "}, " + Metatable(depth + 1) + ")";
      case 12:
        return Pick({"v1", "v2", "v3", "v4", "KEYS", "ARGV", "_G", "string", "redis", "cjson",
                     "getmetatable('')", "getmetatable(_G)", "math", "table", "coroutine"});
      case 13:
        return "function() " + Statement(depth + 1) + " end";
      case 14:
        return LibCall(depth + 1);
      case 15:
        return "redis.pcall(" + CallArgs(depth + 1) + ")";
      case 16:
        return "redis.error_reply(" + Expr(depth + 1) + ")";
      case 17:
        return "redis.status_reply(" + Expr(depth + 1) + ")";
      case 18:
        return "(" + Expr(depth + 1) + ")" + Pick({" .. ", " + ", " == ", " < ", " and ", " or "}) +
               "(" + Expr(depth + 1) + ")";
      case 19:
        return "string.rep(" + Expr(depth + 1) + ", " + Count() + ")";
      case 20:
        return "select(2, pcall(" + Expr(depth + 1) + "))";
      case 21:
        return "({" + Expr(depth + 1) + "})[1]";
      case 22:
        return "coroutine.create(function() " + Statement(depth + 1) + " end)";
      default:
        return "tostring(" + Expr(depth + 1) + ")";
    }
  }

  std::string Metatable(int depth) {
    static const char* const kFields[] = {"__index", "__newindex", "__tostring", "__len",
                                          "__call",  "__eq",       "__concat",   "__metatable",
                                          "__gc",    "__mode",     "__lt",       "__add"};
    std::string out = "{";
    const int n = 1 + Byte() % 3;
    for (int i = 0; i < n; ++i) {
      out += std::string(kFields[Byte() % 12]) + " = ";
      out += (Byte() & 1)
                 ? "function(...) " + Statement(depth + 1) + " return " + Expr(depth + 1) + " end"
                 : Expr(depth + 1);
      out += ", ";
    }
    return out + "}";
  }

  std::string CallArgs(int depth) {
    std::string out = Pick(
        {"'set'",  "'get'",   "'rpush'",  "'lrange'", "'hset'",     "'hgetall'", "'incr'",
         "'del'",  "'ping'",  "'echo'",   "'sadd'",   "'smembers'", "'zadd'",    "'zrange'",
         "'eval'", "'multi'", "'nosuch'", "'hello'",  "'object'",   "'debug'",   Expr(depth + 1)});
    const int n = Byte() % 4;
    for (int i = 0; i < n; ++i)
      out += ", " + Pick({"KEYS[1]", "'k'", "'1'", "'-1'", "'0'", "'a'", Expr(depth + 1)});
    return out;
  }

  std::string LibCall(int depth) {
    const std::string a = Expr(depth + 1), b = Expr(depth + 1);
    switch (Byte() % 28) {
      case 0:
        return "cjson.encode(" + a + ")";
      case 1:
        return "cjson.decode(" + a + ")";
      case 2:
        return "cmsgpack.pack(" + a + ", " + b + ")";
      case 3:
        return "cmsgpack.unpack(" + a + ")";
      case 4:
        return "cmsgpack.unpack_one(" + a + ", " + b + ")";
      case 5:
        return "cmsgpack.unpack_limit(" + a + ", " + b + ")";
      case 6:
        return "struct.pack(" + Format() + ", " + a + ", " + b + ")";
      case 7:
        return "struct.unpack(" + Format() + ", " + a + ", " + b + ")";
      case 8:
        return "struct.size(" + Format() + ")";
      case 9:
        return "bit.tohex(" + a + ", " + b + ")";
      case 10:
        return "bit." +
               Pick({"band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "bswap", "tobit",
                     "bnot"}) +
               "(" + a + ", " + b + ")";
      case 11:
        return "string.format(" + a + ", " + b + ")";
      case 12:
        return "string." + Pick({"find", "match", "gsub", "gmatch"}) + "(" + a + ", " + b + ")";
      case 13:
        return "string." + Pick({"byte", "sub", "upper", "lower", "reverse", "char", "len"}) + "(" +
               a + ", " + b + ")";
      case 14:
        return "redis.sha1hex(" + a + ")";
      case 15:
        return "redis.log(" + a + ", " + b + ")";
      case 16:
        return "math.random(" + a + ", " + b + ")";
      case 17:
        return "redis.acl_check_cmd(" + a + ", " + b + ")";
      case 18:
        return "unpack(" + a + ")";
      case 19:
        return "table.insert(" + a + ", " + b + ")";
      case 20:
        return "table.sort(" + a + ")";
      case 21:
        return "tonumber(" + a + ", " + b + ")";
      case 22:
        return "cjson.encode_max_depth(" + a + ")";
      case 23:
        return "collectgarbage(" +
               Pick({"'count'", "'step'", "'stop'", "'setpause'", "'collect'", a}) + ")";
      case 24:
        return "rawget(" + a + ", " + b + ")";
      case 25:
        return "next(" + a + ")";
      case 26:
        return "getmetatable(" + a + ")";
      default:
        return "load(function() return " + a + " end)";
    }
  }

  // Attempts on the shared environment: each must fail.
  std::string Tamper(int depth) {
    const std::string v = Expr(depth + 1);
    switch (Byte() % 14) {
      case 0:
        return "getmetatable('').__index = " + v;
      case 1:
        return "string.upper = " + v;
      case 2:
        return "rawset(" +
               Pick({"string", "_G", "redis", "getmetatable('')", "getmetatable(_G)", "cjson",
                     "math"}) +
               ", " + Expr(depth + 1) + ", " + v + ")";
      case 3:
        return "setmetatable(" + Pick({"string", "_G", "redis", "getmetatable('')", "table"}) +
               ", " + v + ")";
      case 4:
        return "table.insert(" + Pick({"string", "_G", "redis", "getmetatable('')"}) + ", " + v +
               ")";
      case 5:
        return "x = " + v;
      case 6:
        return "redis.call = " + v;
      case 7:
        return "getmetatable(_G).__index = " + v;
      case 8:
        return "_G[" + Expr(depth + 1) + "] = " + v;
      case 9:
        return "table.foreach(string, function(k, f) string[k] = " + v + " end)";
      case 10:
        return "for k in pairs(_G) do _G[k] = nil end";
      case 11:
        return "loadstring('tostring = nil')()";
      case 12:
        return "table.remove(" + Pick({"string", "_G", "KEYS"}) + ")";
      default:
        return "cjson.encode_number_precision(1)";
    }
  }

  std::string Literal() {
    switch (Byte() % 20) {
      case 0:
        return "nil";
      case 1:
        return Pick({"true", "false"});
      case 2:
        return Pick({"0", "-1", "1.5", "0/0", "1/0", "-1/0", "2^31", "-2^31", "2^53", "2^63",
                     "1e308", "-2147483648", "4294967296", "3"});
      case 3:
        return Pick({"''", "'abc'", "'\\0'", "'\\r\\n'", "'a\\0b'", "'%'", "'%d%s'", "'[a-'",
                     "'(.-)%s*$'", "'\\27Lua'", "'[1,2,{\"a\":null}]'", "'{\"x\":'",
                     "'\\145\\145\\145'", "'\\221\\255\\255\\255\\255'", "'>i4c0'"});
      case 4:
        return "string.rep('x', " + Count() + ")";
      case 5:
        return "KEYS[1]";
      case 6:
        return "ARGV[" + std::to_string(Byte() % 3) + "]";
      default:
        return Quoted();
    }
  }

  // A string literal from the input's bytes.
  std::string Quoted() {
    const size_t n = Byte() % 12;
    std::string out = "'";
    for (size_t i = 0; i < n && !Done(); ++i) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%u", Byte());
      out += buf;
    }
    return out + "'";
  }

  std::string Format() {
    static const char kOpts[] = "bBhHlLTiIfdxcs<>!0123456789 ";
    const size_t n = 1 + Byte() % 6;
    std::string out = "'";
    for (size_t i = 0; i < n; ++i) out += kOpts[Byte() % (sizeof(kOpts) - 1)];
    return out + "'";
  }

  std::string Count() {
    return Pick({"0", "1", "2", "3", "10", "100", "1000", "10000", "1e5", "1e6", "3e7", "-1",
                 "8000", "2^31"});
  }

  std::string Pick(std::initializer_list<std::string> options) {
    const size_t i = Byte() % options.size();
    return *(options.begin() + i);
  }

  uint8_t Byte() { return p_ < end_ ? *p_++ : 0; }
  bool Done() const { return p_ >= end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// What a script sees of the environment when nothing changed it.
constexpr char kProbe[] =
    "return {('a'):upper(), string.upper('b'), type(redis.call), tostring(1), type(type), #_G, "
    "cjson.encode({1.5}), math.floor(1.5), getmetatable('').__index == string, "
    "type(getmetatable(_G).__index), rawget(_G, 'x') == nil, select('#', pcall(error)), "
    "next(getmetatable('')), #string.rep('ab', 3)}";

void CheckProbe(const std::string& reply, const std::string& expected, const char* where) {
  if (reply == expected) return;
  std::fprintf(stderr, "the sandbox changed (%s):\n%s\nexpected:\n%s\n", where, reply.c_str(),
               expected.c_str());
  std::abort();
}

std::string ProbeLibrary() {
  return std::string("#!lua name=probe\nredis.register_function('probe', function() ") + kProbe +
         " end)";
}

// The probe's replies on a fresh server.
struct Expected {
  std::string eval, fcall;
  explicit Expected(World& w) {
    eval = w.Run({"EVAL", kProbe, "0"}, false);
    w.Run({"FUNCTION", "LOAD", "REPLACE", ProbeLibrary()}, false);
    fcall = w.Run({"FCALL", "probe", "0"}, false);
    if (eval.empty() || eval[0] != '*' || eval != fcall) {
      std::fprintf(stderr, "the probe fails on a fresh server: %s / %s\n", eval.c_str(),
                   fcall.c_str());
      std::abort();
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = Get();
  static const Expected expected(w);
  if (size == 0) return 0;
  std::string script;
  const bool raw = data[0] < 24;
  if (raw) {
    script.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  } else {
    Gen gen(data + 1, size - 1);
    script = gen.Script();
  }
  const bool resp3 = (data[0] & 1) != 0;
  if (resp3) w.Run({"HELLO", "3"});
  w.Run({"EVAL", script, "1", "k", "a", std::string("\xff\x00z", 3)});
  w.Run({"FUNCTION", "LOAD", "REPLACE",
         "#!lua name=fz\nredis.register_function{function_name='f', "
         "callback=function(KEYS, ARGV)\n" +
             script + "\nend}"});
  w.Run({"FCALL", "f", "1", "k", "a"});
  if (raw) {  // the raw bytes as a library's load-time code too
    w.Run({"FUNCTION", "LOAD", "REPLACE", "#!lua name=fz2\n" + script});
    w.Run({"FCALL", "f2", "0"});
    w.Run({"FUNCTION", "DELETE", "fz2"});
  }
  if (resp3) w.Run({"HELLO", "2"});
  CheckProbe(w.Run({"EVAL", kProbe, "0"}, false), expected.eval, "EVAL");
  CheckProbe(w.Run({"FCALL", "probe", "0"}, false), expected.fcall, "FCALL");
  w.Run({"FLUSHALL"});
  if (++w.inputs % 64 == 0) {
    w.Run({"SCRIPT", "FLUSH"});
    w.Run({"FUNCTION", "DELETE", "fz"});
  }
  return 0;
}
