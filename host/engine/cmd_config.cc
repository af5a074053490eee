// CONFIG GET / SET / RESETSTAT / REWRITE / HELP: every Redis 7.0 parameter by its Redis name.
//
// Two kinds of parameter: those of the config structs, each with a getter and (when it can change
// at runtime) a setter below; and the generic ones of config/params.h, whose values live in
// RuntimeSettings::params. CONFIG SET of several parameters is all or nothing, as in Redis 7:
// when one fails, those already applied get their old values back. CONFIG REWRITE writes the
// values that changed into the TOML file the server was started with, line by line, so the
// file's comments and layout stay.
#include <toml++/toml.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "host/config/params.h"
#include "host/engine/builtins.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// A CONFIG parameter: Redis's name, a getter and (for mutable ones) a setter that returns an
// error reason or "".
struct Param {
  const char* name;
  std::function<std::string(Engine&)> get;
  std::function<std::string(Engine&, std::string_view)> set;
};

std::function<std::string(Engine&, std::string_view)> SetInt(
    std::atomic<int64_t> RuntimeSettings::*field, int64_t min, int64_t max) {
  return [=](Engine& e, std::string_view v) -> std::string {
    int64_t x;
    if (!ParseInt64(v, &x)) return "argument couldn't be parsed into an integer";
    if (x < min || x > max)
      return Cat("argument must be between ", min, " and ", max, " inclusive");
    (e.settings().*field).store(x);
    return "";
  };
}

std::function<std::string(Engine&, std::string_view)> SetMemory(
    std::atomic<int64_t> RuntimeSettings::*field, int64_t min) {
  return [=](Engine& e, std::string_view v) -> std::string {
    int64_t x;
    if (!config::ParseMemory(v, &x)) return "argument must be a memory value";
    if (x < min) return Cat("argument must be a memory value >= ", min);
    (e.settings().*field).store(x);
    return "";
  };
}

std::function<std::string(Engine&)> Get(std::atomic<int64_t> RuntimeSettings::*field) {
  return [=](Engine& e) { return std::to_string((e.settings().*field).load()); };
}

// client-output-buffer-limit: "<class> <hard> <soft> <soft seconds>" for normal, slave, pubsub.
std::string GetObufLimits(Engine& e) {
  const RuntimeSettings& rs = e.settings();
  std::string out;
  for (int cls : {RuntimeSettings::kObufNormal, RuntimeSettings::kObufReplica,
                  RuntimeSettings::kObufPubsub}) {
    const int64_t hard = cls == RuntimeSettings::kObufNormal ? rs.output_buffer_limit.load()
                                                             : rs.obuf[cls].hard.load();
    static constexpr const char* kNames[] = {"normal", "slave", "pubsub"};
    out += Cat(out.empty() ? "" : " ", kNames[cls], " ", hard, " ", rs.obuf[cls].soft.load(), " ",
               rs.obuf[cls].seconds.load());
  }
  return out;
}

// As Redis's updateClientOutputBufferLimit: all classes given are valid, or nothing changes.
std::string SetObufLimits(Engine& e, std::string_view v) {
  const std::vector<std::string> words = SplitWords(v);
  if (words.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
  struct Limit {
    int cls;
    int64_t hard, soft, seconds;
  };
  std::vector<Limit> limits;
  for (size_t i = 0; i < words.size(); i += 4) {
    const std::string& c = words[i];
    Limit l{-1, 0, 0, 0};
    if (EqualsIgnoreCase(c, "normal")) l.cls = RuntimeSettings::kObufNormal;
    if (EqualsIgnoreCase(c, "slave") || EqualsIgnoreCase(c, "replica"))
      l.cls = RuntimeSettings::kObufReplica;
    if (EqualsIgnoreCase(c, "pubsub")) l.cls = RuntimeSettings::kObufPubsub;
    if (l.cls < 0) return "Invalid client class specified in buffer limit configuration.";
    // Seconds: strtoll over the whole word, not negative (Redis accepts a leading '+').
    std::string_view secs = words[i + 3];
    if (!secs.empty() && secs[0] == '+') secs.remove_prefix(1);
    if (!config::ParseMemory(words[i + 1], &l.hard) ||
        !config::ParseMemory(words[i + 2], &l.soft) || !ParseInt64(secs, &l.seconds) ||
        l.seconds < 0)
      return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    limits.push_back(l);
  }
  RuntimeSettings& rs = e.settings();
  for (const Limit& l : limits) {
    if (l.cls == RuntimeSettings::kObufNormal) {
      rs.output_buffer_limit.store(l.hard);
    } else {
      rs.obuf[l.cls].hard.store(l.hard);
    }
    rs.obuf[l.cls].soft.store(l.soft);
    rs.obuf[l.cls].seconds.store(l.seconds);
  }
  return "";
}

const std::vector<Param>& Params() {
  using RS = RuntimeSettings;
  static const std::vector<Param> params = {
      {"port", [](Engine& e) { return std::to_string(e.port()); }, nullptr},
      {"bind", [](Engine& e) { return e.config().server.bind; }, nullptr},
      {"databases", [](Engine& e) { return std::to_string(e.db_count()); }, nullptr},
      {"io-threads", [](Engine& e) { return std::to_string(e.worker_count()); }, nullptr},
      {"maxclients", Get(&RS::maxclients), SetInt(&RS::maxclients, 1, INT32_MAX)},
      {"timeout", Get(&RS::timeout), SetInt(&RS::timeout, 0, INT32_MAX)},
      {"hz", Get(&RS::hz), SetInt(&RS::hz, 1, 500)},
      {"tcp-keepalive", [](Engine& e) { return std::to_string(e.config().server.tcp_keepalive); },
       nullptr},
      {"tcp-backlog", [](Engine& e) { return std::to_string(e.config().server.tcp_backlog); },
       nullptr},
      {"proto-max-bulk-len", Get(&RS::max_bulk_len), SetMemory(&RS::max_bulk_len, 1 << 20)},
      {"client-query-buffer-limit", Get(&RS::query_buffer_limit),
       SetMemory(&RS::query_buffer_limit, 1 << 20)},
      {"client-output-buffer-limit", GetObufLimits, SetObufLimits},
      {"maxmemory", Get(&RS::maxmemory), SetMemory(&RS::maxmemory, 0)},
      {"maxmemory-policy",
       [](Engine& e) {
         std::lock_guard l(e.settings().mu);
         return e.settings().maxmemory_policy;
       },
       [](Engine& e, std::string_view v) -> std::string {
         EvictionPolicy policy;
         if (!ParsePolicy(v, &policy)) {
           std::string names;
           for (std::string_view n : kPolicyNames) names = Cat(names, names.empty() ? "" : ", ", n);
           return Cat("argument(s) must be one of the following: ", names);
         }
         std::lock_guard l(e.settings().mu);
         AsciiLower(v, &e.settings().maxmemory_policy);
         e.settings().eviction_policy.store(static_cast<int>(policy));
         return "";
       }},
      {"maxmemory-samples", Get(&RS::maxmemory_samples),
       SetInt(&RS::maxmemory_samples, 1, INT32_MAX)},
      {"loglevel",
       [](Engine&) {
         return std::string(spdlog::level::to_string_view(spdlog::get_level()).data());
       },
       [](Engine&, std::string_view v) -> std::string {
         static const std::pair<const char*, spdlog::level::level_enum> kLevels[] = {
             {"debug", spdlog::level::debug}, {"verbose", spdlog::level::info},
             {"notice", spdlog::level::info}, {"warning", spdlog::level::warn},
             {"nothing", spdlog::level::off}, {"trace", spdlog::level::trace},
             {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
             {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
             {"off", spdlog::level::off}};
         for (auto& [name, lvl] : kLevels) {
           if (EqualsIgnoreCase(v, name)) {
             spdlog::set_level(lvl);
             return "";
           }
         }
         return "argument(s) must be one of the following: debug, verbose, notice, warning, "
                "nothing";
       }},
      {"logfile", [](Engine& e) { return e.config().log.file; }, nullptr},
      {"vessel-shards", [](Engine& e) { return std::to_string(e.db(0).shard_count()); }, nullptr},
      {"lazyfree-threshold", Get(&RS::lazyfree_threshold),
       SetInt(&RS::lazyfree_threshold, 0, INT64_MAX)},
  };
  return params;
}

const Param* FindNative(std::string_view name) {
  for (const Param& p : Params())
    if (EqualsIgnoreCase(name, p.name)) return &p;
  return nullptr;
}

// One parameter by whichever kind it is: a native Param or a generic index.
struct AnyParam {
  const Param* native = nullptr;
  int generic = -1;
  std::string_view name;  // the canonical Redis name

  static AnyParam Find(std::string_view name) {
    AnyParam p;
    if ((p.native = FindNative(name)) != nullptr) {
      p.name = p.native->name;
    } else if ((p.generic = ParamValues::Find(name)) >= 0) {
      p.name = config::GenericParams()[p.generic].name;
    }
    return p;
  }
  bool found() const { return native != nullptr || generic >= 0; }
  std::string Get(Engine& e) const {
    return native != nullptr ? native->get(e) : e.settings().params.Text(generic);
  }
  // "" or the reason it cannot be set to v; applies it when it can.
  std::string Set(Engine& e, std::string_view v) const {
    if (native != nullptr) return native->set(e, v);
    const config::ParamDef& def = config::GenericParams()[generic];
    std::string normalized, why;
    if (!config::NormalizeParam(def, v, &normalized, &why)) return why;
    // Parameters a subsystem applies itself (persistence: save, dir, appendonly, ...).
    if (const Engine::ParamFilter* hook = e.param_filter(generic)) {
      if (std::string refused = (*hook)(&normalized); !refused.empty()) return refused;
    }
    e.settings().params.Set(generic, std::move(normalized));
    return "";
  }
  // Why CONFIG SET refuses the parameter whatever the value, or "".
  std::string Refusal(Engine& e) const {
    if (native != nullptr) return native->set ? "" : "can't set immutable config";
    const config::ParamDef& def = config::GenericParams()[generic];
    if (def.flags & config::kImmutable) return "can't set immutable config";
    if ((def.flags & config::kProtected) &&
        e.settings().params.Text(ParamValues::Find("enable-protected-configs")) != "yes")
      return "can't set protected config";
    return "";
  }
};

}  // namespace

bool ReadSetting(Engine& engine, std::string_view name, std::string* value) {
  const AnyParam p = AnyParam::Find(name);
  if (!p.found()) return false;
  *value = p.Get(engine);
  return true;
}

namespace {

// CONFIG GET parameter [parameter ...]
void CmdConfigGet(CommandCtx* ctx) {
  // Names in order of first match; aliases are listed under their own name, as Redis does.
  std::vector<std::pair<std::string_view, AnyParam>> matched;
  auto add = [&](std::string_view shown, const AnyParam& p) {
    for (auto& [name, _] : matched)
      if (name == shown) return;
    matched.emplace_back(shown, p);
  };
  const auto generic = config::GenericParams();
  for (int i = 2; i < ctx->argc; ++i) {
    const std::string_view pattern = Arg(ctx, i);
    for (const Param& p : Params()) {
      if (GlobMatch(pattern, p.name, /*nocase=*/true)) add(p.name, AnyParam::Find(p.name));
    }
    const bool glob = pattern.find_first_of("[*?") != std::string_view::npos;
    for (size_t g = 0; g < generic.size(); ++g) {
      if (glob && (generic[g].flags & config::kHidden) != 0) continue;
      AnyParam p;
      p.generic = static_cast<int>(g);
      p.name = generic[g].name;
      if (GlobMatch(pattern, generic[g].name, true)) add(generic[g].name, p);
      if (!generic[g].alias.empty() && GlobMatch(pattern, generic[g].alias, true))
        add(generic[g].alias, p);
    }
  }
  W(ctx).Aggregate(resp::AggKind::kMap, static_cast<int64_t>(matched.size()));
  for (auto& [name, p] : matched) {
    W(ctx).Bulk(name);
    W(ctx).Bulk(p.Get(E(ctx)));
  }
}

// CONFIG SET parameter value [parameter value ...]
void CmdConfigSet(CommandCtx* ctx) {
  if ((ctx->argc - 2) % 2 != 0) return ReplySyntaxError(ctx);
  struct Change {
    AnyParam param;
    std::string_view arg;  // the name as given
    std::string_view value;
    std::string old;
  };
  std::vector<Change> todo;
  auto fail = [&](std::string_view arg, std::string_view why) {
    W(ctx).ErrorLine(
        Cat("ERR CONFIG SET failed (possibly related to argument '", arg, "') - ", why));
  };
  for (int i = 2; i < ctx->argc; i += 2) {
    const AnyParam p = AnyParam::Find(Arg(ctx, i));
    if (!p.found())
      return W(ctx).ErrorLine(
          Cat("ERR Unknown option or number of arguments for CONFIG SET - '", Arg(ctx, i), "'"));
    if (const std::string why = p.Refusal(E(ctx)); !why.empty()) return fail(Arg(ctx, i), why);
    // As Redis: the same name twice is refused; a name and its alias both apply, in order.
    for (const Change& c : todo)
      if (EqualsIgnoreCase(c.arg, Arg(ctx, i))) return fail(Arg(ctx, i), "duplicate parameter");
    todo.push_back({p, Arg(ctx, i), Arg(ctx, i + 1), p.Get(E(ctx))});
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    const std::string err = todo[i].param.Set(E(ctx), todo[i].value);
    if (err.empty()) continue;
    // All or nothing: the parameters set before this one get their old values back.
    for (size_t j = i; j-- > 0;) todo[j].param.Set(E(ctx), todo[j].old);
    return fail(todo[i].arg, err);
  }
  // Parameters with an apply function (Engine::OnParamSet) take effect together, each function
  // once; if one fails, every parameter gets its old value back and the functions run again.
  std::vector<std::pair<const Engine::ParamApply*, std::string_view>> hooks;
  for (const Change& c : todo) {
    const auto& h = E(ctx).ParamHook(c.param.generic);
    if (h == nullptr) continue;
    bool seen = false;
    for (auto& [f, _] : hooks) seen |= f == h.get();
    if (!seen) hooks.emplace_back(h.get(), c.param.name);
  }
  for (auto& [apply, name] : hooks) {
    const std::string err = (*apply)();
    if (err.empty()) continue;
    for (size_t j = todo.size(); j-- > 0;) todo[j].param.Set(E(ctx), todo[j].old);
    for (auto& [f, _] : hooks) (*f)();
    return fail(name, err);
  }
  ReplyOk(ctx);
}

// CONFIG RESETSTAT
void CmdConfigResetStat(CommandCtx* ctx) {
  E(ctx).ResetStats();
  ReplyOk(ctx);
}

// ---- CONFIG REWRITE ----

std::string TomlQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool IsInteger(std::string_view s) {
  int64_t v;
  return ParseInt64(s, &v);
}

// A parameter's current value as a TOML value: booleans for yes/no parameters, integers for
// numbers, strings otherwise.
std::string TomlValue(const AnyParam& p, const std::string& value) {
  if (p.generic >= 0 && config::GenericParams()[p.generic].kind == config::ParamKind::kBool)
    return value == "yes" ? "true" : "false";
  if (IsInteger(value)) return value;
  return TomlQuote(value);
}

// The parameters CONFIG REWRITE considers: every one with a TOML home, its section and key.
struct Rewritable {
  AnyParam param;
  std::string section, key;
  std::string def;  // the value it has with nothing in the file
};
std::vector<Rewritable> RewritableParams() {
  std::vector<Rewritable> out;
  for (const Param& p : Params()) {
    if (!p.set) continue;  // what cannot change at runtime is what the file already says
    const config::RedisName where = config::FindRedisName(p.name);
    if (!where.found || where.generic >= 0) continue;
    out.push_back({AnyParam::Find(p.name), std::string(where.section), std::string(where.key),
                   config::DefaultText(where.section, where.key)});
  }
  const auto generic = config::GenericParams();
  for (size_t g = 0; g < generic.size(); ++g) {
    AnyParam p;
    p.generic = static_cast<int>(g);
    p.name = generic[g].name;
    out.push_back(
        {p, std::string(generic[g].section), generic[g].toml_key(), std::string(generic[g].def)});
  }
  return out;
}

// Rewrites `text` (the TOML file) so that every rewritable parameter has its current value:
// a key already in the file gets its line replaced; a changed parameter not in the file is
// added at the end of its section (the section is added at the end of the file if missing).
bool RewriteToml(Engine& e, const std::string& text, const std::string& source, std::string* out,
                 std::string* error) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& err) {
    *error = Cat("the config file does not parse: ", err.description());
    return false;
  }
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::map<size_t, std::string> replace;                    // line index -> new text
  std::map<size_t, std::vector<std::string>> insert_after;  // line index -> new lines
  std::map<std::string, std::vector<std::string>> new_sections;
  for (const Rewritable& r : RewritableParams()) {
    const std::string value = r.param.Get(e);
    const toml::table* section = root[r.section].as_table();
    const toml::node* node = section != nullptr ? section->get(r.key) : nullptr;
    const std::string line = Cat(r.key, " = ", TomlValue(r.param, value));
    if (node != nullptr) {
      const size_t at = node->source().begin.line;
      if (at == 0 || at > lines.size() || node->source().end.line != at) continue;
      // Unchanged values keep their line as written ("512mb" stays "512mb").
      std::string current;
      if (const auto* s = node->as_string()) current = s->get();
      if (const auto* n = node->as_integer()) current = std::to_string(n->get());
      if (const auto* b = node->as_boolean()) current = b->get() ? "yes" : "no";
      std::string normalized = current, why;
      if (r.param.generic >= 0)
        config::NormalizeParam(config::GenericParams()[r.param.generic], current, &normalized,
                               &why);
      int64_t bytes;
      if (r.param.native != nullptr && config::ParseMemory(current, &bytes))
        normalized = std::to_string(bytes);
      if (normalized == value || current == value) continue;
      replace[at - 1] = line;
      continue;
    }
    if (value == r.def) continue;  // absent from the file and still the default
    if (section != nullptr && section->source().begin.line != 0) {
      size_t last = section->source().begin.line;  // the [section] header
      for (auto&& [k, v] : *section) last = std::max<size_t>(last, v.source().end.line);
      insert_after[last - 1].push_back(line);
    } else {
      new_sections[r.section].push_back(line);
    }
  }
  out->clear();
  for (size_t i = 0; i < lines.size(); ++i) {
    auto rep = replace.find(i);
    *out += rep != replace.end() ? rep->second : lines[i];
    *out += '\n';
    auto ins = insert_after.find(i);
    if (ins != insert_after.end())
      for (const std::string& l : ins->second) *out += l + '\n';
  }
  for (auto& [section, added] : new_sections) {
    *out += Cat("\n[", section, "]\n");
    for (const std::string& l : added) *out += l + '\n';
  }
  return true;
}

// CONFIG REWRITE
void CmdConfigRewrite(CommandCtx* ctx) {
  const std::string& path = E(ctx).config_file();
  if (path.empty()) return W(ctx).ErrorLine("ERR The server is running without a config file");
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in.good() && !in.eof())
    return W(ctx).ErrorLine(Cat("ERR Rewriting config file: ", std::strerror(errno)));
  std::string text, error;
  if (!RewriteToml(E(ctx), buf.str(), path, &text, &error))
    return W(ctx).ErrorLine(Cat("ERR Rewriting config file: ", error));
  // Write next to it and rename over it, so a crash leaves the old or the new file whole.
  const std::string tmp = Cat(path, ".rewrite.", getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = f != nullptr && std::fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
  const int err = errno;
  if (f != nullptr) std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = ok ? errno : err;
    std::remove(tmp.c_str());
    return W(ctx).ErrorLine(Cat("ERR Rewriting config file: ", std::strerror(rename_err)));
  }
  spdlog::info("config rewritten file={}", path);
  ReplyOk(ctx);
}

void CmdConfigHelp(CommandCtx* ctx) {
  static const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Print this help."};
  W(ctx).Aggregate(resp::AggKind::kArray, std::size(kLines));
  for (const char* l : kLines) W(ctx).Simple(l);
}

void CmdContainer(CommandCtx*) {}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterConfigCommands(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "CONFIG", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s, .since = "2.0.0",
       .summary = "A container for server configuration commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "GET", .arity = -3, .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kL,
       .fn = CmdConfigGet, .group = s, .since = "2.0.0",
       .summary = "Returns the effective values of configuration parameters.",
       .syntax = "parameter [parameter ...]",
       .complexity = "O(N) when N is the number of configuration parameters provided"},
      {.name = "SET", .arity = -4, .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kL,
       .fn = CmdConfigSet, .group = s, .since = "2.0.0",
       .summary = "Sets configuration parameters in-flight.",
       .syntax = "parameter value [parameter value ...]",
       .complexity = "O(N) when N is the number of configuration parameters provided",
       .tips = "request_policy:all_nodes response_policy:all_succeeded"},
      {.name = "RESETSTAT", .arity = 2, .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kL,
       .fn = CmdConfigResetStat, .group = s, .since = "2.0.0",
       .summary = "Resets the server's statistics.", .syntax = "", .complexity = "O(1)"},
      {.name = "REWRITE", .arity = 2, .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kL,
       .fn = CmdConfigRewrite, .group = s, .since = "2.8.0",
       .summary = "Persists the effective configuration to file.", .syntax = "",
       .complexity = "O(1)"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdConfigHelp, .group = s, .since = "5.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "config");
  // clang-format on
}

}  // namespace vessel::engine
