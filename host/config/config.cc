// Builds a Config from the defaults, a TOML file and the command line; every setting is declared
// once, in kSettings, and both the file loader and the --section.key flags read that table.
#include "host/config/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <concepts>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <variant>

#include "host/config/params.h"

namespace vessel::config {
namespace {

// absl::StrCat would do, but Debian's abseil is built with its own string_view type, which
// std::string_view does not convert to.
void Append(std::string* out, std::string_view text) { out->append(text); }
void Append(std::string* out, std::integral auto n) { out->append(std::to_string(n)); }

template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (Append(&out, parts), ...);
  return out;
}

// The in-tree modules, in load order, used when neither the file nor the command line lists
// any. Keep conf/vessel.toml in step (config_test checks that the two agree).
constexpr std::string_view kDefaultModules[] = {"strings", "lists",   "sets",    "hashes",
                                                "zsets",   "streams", "vectors", "multi_index",
                                                "deque",   "omap",    "bag",     "multimap"};

constexpr std::string_view kVersion = "vessel-server 0.1.0";

constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kKiB = int64_t{1} << 10;
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// Redis's maxmemory policies (host/engine/evict.h implements them).
constexpr std::string_view kPolicies[] = {"noeviction",      "allkeys-lru",  "allkeys-lfu",
                                          "allkeys-random",  "volatile-lru", "volatile-lfu",
                                          "volatile-random", "volatile-ttl"};
// spdlog's levels, then Redis's (LogLevelForSpdlog maps them).
constexpr std::string_view kLevels[] = {"trace",  "debug",    "info",   "warn",
                                        "error",  "critical", "off",    "verbose",
                                        "notice", "warning",  "nothing"};

// What a setting accepts. kMemory takes an integer or a string ParseMemory understands.
enum class Check { kInteger, kPowerOfTwo, kMemory, kString, kNonEmpty, kOneOf };

constexpr bool IsNumeric(Check check) {
  return check == Check::kInteger || check == Check::kPowerOfTwo || check == Check::kMemory;
}

// Where a setting lives in a Config.
using Field = std::variant<int* (*)(Config&), int64_t* (*)(Config&), std::string* (*)(Config&)>;

struct Setting {
  std::string_view section;
  std::string_view key;
  std::string_view redis;  // Redis's parameter name, if it has one
  Field field;
  Check check;
  int64_t min = 0;  // kInteger, kPowerOfTwo and kMemory: the accepted range
  int64_t max = kNoMax;
  std::span<const std::string_view> choices = {};  // kOneOf
};

// Every setting, in struct order. The TOML key is `key` under [section]; the flags are
// --section.key and --<redis name>.
constexpr Setting kSettings[] = {
    {"server", "bind", "bind", [](Config& c) { return &c.server.bind; }, Check::kNonEmpty},
    {"server", "port", "port", [](Config& c) { return &c.server.port; }, Check::kInteger, 0, 65535},
    {"server", "threads", "io-threads", [](Config& c) { return &c.server.threads; },
     Check::kInteger, 0, 1024},
    {"server", "maxclients", "maxclients", [](Config& c) { return &c.server.maxclients; },
     Check::kInteger, 1},
    {"server", "timeout", "timeout", [](Config& c) { return &c.server.timeout; }, Check::kInteger,
     0},
    {"server", "tcp_keepalive", "tcp-keepalive", [](Config& c) { return &c.server.tcp_keepalive; },
     Check::kInteger, 0},
    {"server", "tcp_backlog", "tcp-backlog", [](Config& c) { return &c.server.tcp_backlog; },
     Check::kInteger, 1},
    // Redis requires proto-max-bulk-len and client-query-buffer-limit >= 1mb.
    {"server", "max_bulk_len", "proto-max-bulk-len",
     [](Config& c) { return &c.server.max_bulk_len; }, Check::kMemory, kMiB},
    {"server", "max_multibulk_len", "", [](Config& c) { return &c.server.max_multibulk_len; },
     Check::kInteger, 1, std::numeric_limits<int32_t>::max()},
    {"server", "query_buffer_limit", "client-query-buffer-limit",
     [](Config& c) { return &c.server.query_buffer_limit; }, Check::kMemory, kMiB},
    {"server", "output_buffer_limit", "", [](Config& c) { return &c.server.output_buffer_limit; },
     Check::kMemory, 0},
    {"storage", "shards", "", [](Config& c) { return &c.storage.shards; }, Check::kPowerOfTwo, 1,
     65536},
    {"storage", "databases", "databases", [](Config& c) { return &c.storage.databases; },
     Check::kInteger, 1, 1024},
    {"storage", "maxmemory", "maxmemory", [](Config& c) { return &c.storage.maxmemory; },
     Check::kMemory, 0},
    {"storage", "maxmemory_policy", "maxmemory-policy",
     [](Config& c) { return &c.storage.maxmemory_policy; }, Check::kOneOf, 0, 0, kPolicies},
    {"storage", "maxmemory_samples", "maxmemory-samples",
     [](Config& c) { return &c.storage.maxmemory_samples; }, Check::kInteger, 1,
     std::numeric_limits<int32_t>::max()},
    {"storage", "hz", "hz", [](Config& c) { return &c.storage.hz; }, Check::kInteger, 1, 500},
    {"storage", "lazyfree_threshold", "lazyfree-threshold",
     [](Config& c) { return &c.storage.lazyfree_threshold; }, Check::kInteger, 0},
    {"log", "level", "loglevel", [](Config& c) { return &c.log.level; }, Check::kOneOf, 0, 0,
     kLevels},
    {"log", "file", "logfile", [](Config& c) { return &c.log.file; }, Check::kString},
};

// A row whose check does not fit its field could never be set; catch that when compiling.
constexpr bool SettingsAreConsistent() {
  for (const Setting& s : kSettings) {
    const bool is_string = std::holds_alternative<std::string* (*)(Config&)>(s.field);
    const bool is_int = std::holds_alternative<int* (*)(Config&)>(s.field);
    if (IsNumeric(s.check) == is_string || s.min > s.max) return false;
    if (is_int &&
        (s.min < std::numeric_limits<int>::min() || s.max > std::numeric_limits<int>::max()))
      return false;
    if ((s.check == Check::kOneOf) == s.choices.empty()) return false;
  }
  return true;
}
static_assert(SettingsAreConsistent());

// Short command-line names for the most used settings.
struct Alias {
  std::string_view flag;  // without the leading "--"
  std::string_view section;
  std::string_view key;
};
constexpr Alias kAliases[] = {
    {"port", "server", "port"},
    {"bind", "server", "bind"},
    {"threads", "server", "threads"},
    {"log-level", "log", "level"},
};

const Setting* FindSetting(std::string_view section, std::string_view key) {
  for (const Setting& s : kSettings) {
    if (s.section == section && s.key == key) return &s;
  }
  return nullptr;
}

bool IsSection(std::string_view name) {
  return std::any_of(std::begin(kSettings), std::end(kSettings),
                     [&](const Setting& s) { return s.section == name; }) ||
         std::any_of(GenericParams().begin(), GenericParams().end(),
                     [&](const ParamDef& p) { return p.section == name; });
}

const Setting* FindSettingByRedisName(std::string_view name) {
  for (const Setting& s : kSettings) {
    if (!s.redis.empty() && s.redis == name) return &s;
  }
  return nullptr;
}

// The index of a generic parameter in GenericParams().
int IndexOf(const ParamDef* p) { return static_cast<int>(p - GenericParams().data()); }

// Validates a generic parameter's value and stores it; false with the reason in *why.
bool StoreGeneric(const ParamDef& p, std::string_view text, Config* config, std::string* why) {
  std::string normalized;
  if (!NormalizeParam(p, text, &normalized, why)) return false;
  config->params[IndexOf(&p)] = std::move(normalized);
  return true;
}

// "512mb" for exact multiples, else the byte count.
std::string FormatMemory(int64_t bytes) {
  if (bytes != 0 && bytes % kGiB == 0) return Cat(bytes / kGiB, "gb");
  if (bytes != 0 && bytes % kMiB == 0) return Cat(bytes / kMiB, "mb");
  if (bytes != 0 && bytes % kKiB == 0) return Cat(bytes / kKiB, "kb");
  return Cat(bytes);
}

// What the setting accepts, as it follows "expected " in an error.
std::string Describe(const Setting& s) {
  switch (s.check) {
    case Check::kInteger:
      if (s.max == kNoMax) return Cat("an integer >= ", s.min);
      return Cat("an integer between ", s.min, " and ", s.max);
    case Check::kPowerOfTwo:
      return Cat("a power of two between ", s.min, " and ", s.max);
    case Check::kMemory:
      return Cat("a memory size", s.min > 0 ? " >= " + FormatMemory(s.min) : "",
                 " (bytes, or a string like \"512mb\")");
    case Check::kString:
      return "a string";
    case Check::kNonEmpty:
      return "a non-empty string";
    case Check::kOneOf: {
      std::string text = "one of ";
      for (size_t i = 0; i < s.choices.size(); ++i) {
        Append(&text, Cat(i > 0 ? ", " : "", s.choices[i]));
      }
      return text;
    }
  }
  return "";
}

// A value as written: an integer, a string, or anything else (TOML only).
using Value = std::variant<std::monostate, int64_t, std::string>;

// The integer a numeric setting would take from `value`, if it is one.
std::optional<int64_t> ToInteger(const Setting& s, const Value& value) {
  if (const auto* n = std::get_if<int64_t>(&value)) return *n;
  const auto* text = std::get_if<std::string>(&value);
  int64_t n = 0;
  if (text != nullptr && s.check == Check::kMemory && ParseMemory(*text, &n)) return n;
  return std::nullopt;
}

// Validates `value` for `s` and stores it. Returns false, leaving *config alone, when the value
// is not acceptable; the caller reports "expected " + Describe(s).
bool Store(const Setting& s, const Value& value, Config* config) {
  if (IsNumeric(s.check)) {
    std::optional<int64_t> n = ToInteger(s, value);
    if (!n || *n < s.min || *n > s.max) return false;
    if (s.check == Check::kPowerOfTwo && (*n & (*n - 1)) != 0) return false;
    return std::visit(
        [&](auto get) {
          auto* out = get(*config);
          if constexpr (std::is_same_v<decltype(out), std::string*>) {
            return false;
          } else {
            *out = static_cast<std::remove_pointer_t<decltype(out)>>(*n);
            return true;
          }
        },
        s.field);
  }
  const auto* text = std::get_if<std::string>(&value);
  if (text == nullptr) return false;
  if (s.check == Check::kNonEmpty && text->empty()) return false;
  if (s.check == Check::kOneOf &&
      std::find(s.choices.begin(), s.choices.end(), *text) == s.choices.end()) {
    return false;
  }
  auto* const* out = std::get_if<std::string* (*)(Config&)>(&s.field);
  if (out == nullptr) return false;
  *(*out)(*config) = *text;
  return true;
}

// The value a setting has in `config`, as the usage text shows it.
std::string Show(const Setting& s, Config& config) {
  return std::visit(
      [&](auto get) -> std::string {
        const auto* value = get(config);
        if constexpr (std::is_same_v<decltype(value), const std::string*>) {
          return Cat("\"", *value, "\"");
        } else {
          return s.check == Check::kMemory ? FormatMemory(*value) : Cat(*value);
        }
      },
      s.field);
}

// ---- TOML ----

Value FromToml(const toml::node& node) {
  if (const auto* n = node.as_integer()) return n->get();
  if (const auto* text = node.as_string()) return text->get();
  return std::monostate{};
}

// Collects errors while a file is walked (toml++ tables are sorted by key, not by position) and
// keeps the one nearest the top of the file.
class Errors {
 public:
  explicit Errors(std::string_view source) : source_(source) {}

  void Add(const toml::source_region& where, std::string_view name, std::string_view what) {
    // Line 0 means toml++ does not know; such errors sort last.
    uint32_t line = where.begin.line;
    uint64_t rank = line == 0 ? std::numeric_limits<uint64_t>::max() : line;
    if (!first_.empty() && rank >= rank_) return;
    rank_ = rank;
    first_ = Cat(source_, ":", line, ": ", name, ": ", what);
  }

  bool empty() const { return first_.empty(); }
  const std::string& first() const { return first_; }
  // The folder of the file being read ("" when the source is not a path with a folder).
  std::string_view source_dir() const {
    const size_t slash = source_.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : source_.substr(0, slash);
  }

 private:
  std::string_view source_;
  std::string first_;
  uint64_t rank_ = 0;
};

// A generic parameter's value from TOML: a string, an integer, or a boolean (yes / no).
bool GenericFromToml(const toml::node& node, std::string* text) {
  if (const auto* b = node.as_boolean()) {
    *text = b->get() ? "yes" : "no";
  } else if (const auto* n = node.as_integer()) {
    *text = Cat(n->get());
  } else if (const auto* str = node.as_string()) {
    *text = str->get();
  } else {
    return false;
  }
  return true;
}

void LoadSection(std::string_view section, const toml::table& table, Config* config,
                 Errors* errors) {
  for (auto&& [key, node] : table) {
    const std::string name = Cat(section, ".", key.str());
    const Setting* s = FindSetting(section, key.str());
    if (s != nullptr) {
      if (!Store(*s, FromToml(node), config))
        errors->Add(node.source(), name, Cat("expected ", Describe(*s)));
      continue;
    }
    const ParamDef* p = FindGenericParamToml(section, key.str());
    std::string text, why = "expected a string, an integer or a boolean";
    if (p == nullptr) {
      errors->Add(key.source(), name, "unknown setting");
    } else if (!GenericFromToml(node, &text) || !StoreGeneric(*p, text, config, &why)) {
      errors->Add(node.source(), name, why);
    }
  }
}

// One [[modules]] entry: path (a non-empty string, required) and args (strings, optional).
void LoadModule(std::string_view name, const toml::table& table, std::vector<ModuleConfig>* out,
                Errors* errors) {
  ModuleConfig module;
  bool has_path = false;
  for (auto&& [key, node] : table) {
    const std::string field = Cat(name, ".", key.str());
    if (key.str() == "path") {
      has_path = true;
      const auto* path = node.as_string();
      if (path == nullptr || path->get().empty()) {
        errors->Add(node.source(), field, "expected a non-empty string");
      } else {
        module.path = path->get();
        // A relative file path (not a bare name, which is looked up in the module directory)
        // is relative to the config file's folder, wherever the server was started from.
        const std::string_view dir = errors->source_dir();
        const bool file_path =
            module.path.find('/') != std::string::npos || module.path.ends_with(".so");
        if (file_path && module.path[0] != '/' && !dir.empty())
          module.path = Cat(dir, "/", module.path);
      }
    } else if (key.str() == "args") {
      const auto* args = node.as_array();
      bool ok = args != nullptr;
      for (size_t i = 0; ok && i < args->size(); ++i) {
        const auto* arg = args->get(i)->as_string();
        ok = arg != nullptr;
        if (ok) module.args.push_back(arg->get());
      }
      if (!ok) errors->Add(node.source(), field, "expected an array of strings");
    } else {
      errors->Add(key.source(), field, "unknown setting");
    }
  }
  if (!has_path) errors->Add(table.source(), Cat(name, ".path"), "missing required setting");
  out->push_back(std::move(module));
}

void LoadModules(const toml::key& key, const toml::node& node, std::vector<ModuleConfig>* out,
                 Errors* errors) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    errors->Add(node.source(), "modules", "expected an array of tables ([[modules]])");
    return;
  }
  out->clear();
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string name = Cat("modules[", i, "]");
    const toml::node& entry = *array->get(i);
    if (const auto* table = entry.as_table()) {
      LoadModule(name, *table, out, errors);
    } else {
      // Elements of an inline array may lack a position; the key's line is close enough.
      errors->Add(entry.source().begin.line != 0 ? entry.source() : key.source(), name,
                  "expected a table with path and args");
    }
  }
}

// [[users]]: each a table with a non-empty name and a rules string.
void LoadUsers(const toml::key& key, const toml::node& node, std::vector<UserConfig>* out,
               Errors* errors) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    errors->Add(node.source(), "users", "expected an array of tables ([[users]])");
    return;
  }
  out->clear();
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string name = Cat("users[", i, "]");
    const auto* table = array->get(i)->as_table();
    if (table == nullptr) {
      errors->Add(key.source(), name, "expected a table with name and rules");
      continue;
    }
    UserConfig user;
    bool has_name = false;
    for (auto&& [k, v] : *table) {
      const std::string field = Cat(name, ".", k.str());
      const auto* text = v.as_string();
      if (k.str() == "name") {
        has_name = true;
        if (text == nullptr || text->get().empty()) {
          errors->Add(v.source(), field, "expected a non-empty string");
        } else {
          user.name = text->get();
        }
      } else if (k.str() == "rules") {
        if (text == nullptr) {
          errors->Add(v.source(), field, "expected a string of ACL rules");
        } else {
          user.rules = text->get();
        }
      } else {
        errors->Add(k.source(), field, "unknown setting");
      }
    }
    if (!has_name) errors->Add(table->source(), Cat(name, ".name"), "missing required setting");
    out->push_back(std::move(user));
  }
}

// ---- Command line ----

// One parsed flag: what it sets and its value(s).
struct Flag {
  std::string_view name;  // as typed, without "=value"
  enum class Kind { kConfig, kLoadModule, kSetting, kGeneric } kind;
  const Setting* setting = nullptr;
  const ParamDef* param = nullptr;
  std::string value;
  std::vector<std::string_view> args;  // --loadmodule only
};

const Setting* SettingForFlag(std::string_view flag) {
  for (const Alias& alias : kAliases) {
    if (alias.flag == flag) return FindSetting(alias.section, alias.key);
  }
  if (const Setting* s = FindSettingByRedisName(flag)) return s;
  const size_t dot = flag.find('.');
  if (dot == std::string_view::npos) return nullptr;
  return FindSetting(flag.substr(0, dot), flag.substr(dot + 1));
}

const ParamDef* GenericForFlag(std::string_view flag) {
  if (const ParamDef* p = FindGenericParam(flag)) return p;
  const size_t dot = flag.find('.');
  if (dot == std::string_view::npos) return nullptr;
  return FindGenericParamToml(flag.substr(0, dot), flag.substr(dot + 1));
}

std::string Usage() {
  std::string text =
      "Usage: vessel-server [--config FILE] [--port N] [--bind ADDR] [--threads N]\n"
      "                     [--log-level LEVEL] [--loadmodule PATH [ARGS...]]\n"
      "                     [--<section>.<key> VALUE]...\n"
      "       vessel-server --help | --version\n"
      "\n"
      "--config is applied first, then the other flags in order, so flags override the file.\n"
      "--loadmodule adds a module to those of the file (or to the built-in list); its ARGS run\n"
      "up to the next argument that starts with --. Every flag also takes the --flag=VALUE form.\n"
      "\n"
      "Settings (--<section>.<key> VALUE):";
  Config defaults = Defaults();
  size_t width = 0;
  for (const Setting& s : kSettings) width = std::max(width, s.section.size() + s.key.size() + 3);
  for (const Setting& s : kSettings) {
    std::string flag = Cat("--", s.section, ".", s.key);
    flag.resize(width, ' ');
    Append(&text, Cat("\n  ", flag, "  ", Describe(s), "; default ", Show(s, defaults)));
  }
  return text;
}

// Splits argv into flags, resolving every name. Returns false with *error on a bad argument.
bool ParseFlags(int argc, const char* const* argv, std::vector<Flag>* flags, std::string* error) {
  auto is_flag = [](std::string_view arg) { return arg.starts_with("--"); };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!is_flag(arg)) {
      *error = Cat(arg, ": unexpected argument (flags start with --; see --help)");
      return false;
    }
    Flag flag;
    const size_t eq = arg.find('=');
    flag.name = arg.substr(0, eq);
    const std::string_view bare = flag.name.substr(2);
    if (bare == "config") {
      flag.kind = Flag::Kind::kConfig;
    } else if (bare == "loadmodule") {
      flag.kind = Flag::Kind::kLoadModule;
    } else if ((flag.setting = SettingForFlag(bare)) != nullptr) {
      flag.kind = Flag::Kind::kSetting;
    } else if ((flag.param = GenericForFlag(bare)) != nullptr) {
      flag.kind = Flag::Kind::kGeneric;
    } else {
      *error = Cat(flag.name, ": unknown flag (see --help)");
      return false;
    }
    if (eq != std::string_view::npos) {
      flag.value = arg.substr(eq + 1);
    } else if (i + 1 < argc && !is_flag(argv[i + 1])) {
      flag.value = argv[++i];
      // As redis-server does, the words up to the next flag form one value: --save 900 1 300 10.
      while ((flag.kind == Flag::Kind::kSetting || flag.kind == Flag::Kind::kGeneric) &&
             i + 1 < argc && !is_flag(argv[i + 1]))
        flag.value = Cat(flag.value, " ", argv[++i]);
    } else {
      *error = Cat(flag.name, ": missing value");
      return false;
    }
    if ((flag.kind == Flag::Kind::kConfig || flag.kind == Flag::Kind::kLoadModule) &&
        flag.value.empty()) {
      *error = Cat(flag.name, flag.kind == Flag::Kind::kConfig ? ": expected a file path"
                                                               : ": expected a module path");
      return false;
    }
    if (flag.kind == Flag::Kind::kLoadModule) {
      while (i + 1 < argc && !is_flag(argv[i + 1])) flag.args.push_back(argv[++i]);
    }
    flags->push_back(std::move(flag));
  }
  return true;
}

// The command line gives every value as text; numbers are parsed here so that Store sees the
// same kinds of value as from the file.
Value FromText(const Setting& s, std::string_view text) {
  if (s.check == Check::kInteger || s.check == Check::kPowerOfTwo) {
    int64_t n = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, n);
    if (text.empty() || ec != std::errc() || ptr != end) return std::monostate{};
    return n;
  }
  return std::string(text);
}

}  // namespace

Config Defaults() {
  Config config;
  for (std::string_view name : kDefaultModules) config.modules.push_back({std::string(name), {}});
  for (const ParamDef& p : GenericParams()) config.params.emplace_back(p.def);
  return config;
}

RedisName FindRedisName(std::string_view redis_name) {
  RedisName out;
  if (const Setting* s = FindSettingByRedisName(redis_name)) {
    out.found = true;
    out.section = s->section;
    out.key = s->key;
  } else if (const ParamDef* p = FindGenericParam(redis_name)) {
    out.found = true;
    out.section = p->section;
    out.generic = IndexOf(p);
  }
  return out;
}

bool SetGenericParam(Config* config, std::string_view name, std::string_view value,
                     std::string* why) {
  const ParamDef* p = FindGenericParam(name);
  if (p == nullptr) {
    *why = "unknown parameter";
    return false;
  }
  if (config->params.size() != GenericParams().size()) {
    for (size_t i = config->params.size(); i < GenericParams().size(); ++i)
      config->params.emplace_back(GenericParams()[i].def);
  }
  return StoreGeneric(*p, value, config, why);
}

std::string DefaultText(std::string_view section, std::string_view key) {
  const Setting* s = FindSetting(section, key);
  if (s == nullptr) return "";
  Config defaults = Defaults();
  return std::visit(
      [&](auto get) -> std::string {
        const auto* value = get(defaults);
        if constexpr (std::is_same_v<decltype(value), const std::string*>) {
          return *value;
        } else {
          return Cat(*value);
        }
      },
      s->field);
}

std::string_view LogLevelForSpdlog(std::string_view level) {
  if (level == "verbose") return "debug";
  if (level == "notice") return "info";
  if (level == "warning") return "warn";
  if (level == "nothing") return "off";
  return level;
}

bool ParseMemory(std::string_view text, int64_t* out) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const size_t digits = std::find_if_not(text.begin(), text.end(), is_digit) - text.begin();
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, n);
  if (digits == 0 || ec != std::errc()) return false;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int64_t multiplier = 0;
  if (unit.empty() || unit == "b") {
    multiplier = 1;
  } else if (unit == "k") {
    multiplier = 1000;
  } else if (unit == "kb") {
    multiplier = kKiB;
  } else if (unit == "m") {
    multiplier = 1000 * 1000;
  } else if (unit == "mb") {
    multiplier = kMiB;
  } else if (unit == "g") {
    multiplier = 1000 * 1000 * 1000;
  } else if (unit == "gb") {
    multiplier = kGiB;
  } else {
    return false;
  }
  if (n > kNoMax / multiplier) return false;
  *out = n * multiplier;
  return true;
}

bool LoadToml(std::string_view text, std::string_view source_name, Config* config,
              std::string* error) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    // toml++ reports syntax errors only by exception in the build Debian ships.
    *error = Cat(source_name, ":", e.source().begin.line, ":", e.source().begin.column, ": ",
                 e.description());
    return false;
  }
  // Work on a copy so that a bad file changes nothing.
  Config next = *config;
  Errors errors(source_name);
  for (auto&& [key, node] : root) {
    const std::string_view name = key.str();
    if (name == "modules") {
      LoadModules(key, node, &next.modules, &errors);
    } else if (name == "users") {
      LoadUsers(key, node, &next.users, &errors);
    } else if (!IsSection(name)) {
      errors.Add(key.source(), name, node.is_table() ? "unknown section" : "unknown setting");
    } else if (const auto* table = node.as_table()) {
      LoadSection(name, *table, &next, &errors);
    } else {
      errors.Add(node.source(), name, Cat("expected a table ([", name, "])"));
    }
  }
  if (!errors.empty()) {
    *error = errors.first();
    return false;
  }
  *config = std::move(next);
  return true;
}

bool LoadFile(const std::string& path, Config* config, std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = Cat(path, ": cannot open: ", std::strerror(errno));
    return false;
  }
  std::string text;
  char buf[8192];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text.append(buf, n);
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) {
    *error = Cat(path, ": cannot read: ", std::strerror(read_errno));
    return false;
  }
  return LoadToml(text, path, config, error);
}

bool ApplyCommandLine(int argc, const char* const* argv, Config* config, std::string* error,
                      bool* exit_now) {
  *exit_now = false;
  // --help and --version win over everything else, even over bad flags.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "--version") {
      *exit_now = true;
      *error = arg == "--help" ? Usage() : std::string(kVersion);
      return true;
    }
  }
  std::vector<Flag> flags;
  if (!ParseFlags(argc, argv, &flags, error)) return false;
  Config next = *config;
  for (const Flag& flag : flags) {
    if (flag.kind == Flag::Kind::kConfig && !LoadFile(std::string(flag.value), &next, error)) {
      return false;
    }
  }
  for (const Flag& flag : flags) {
    if (flag.kind == Flag::Kind::kLoadModule) {
      next.modules.push_back({std::string(flag.value), {flag.args.begin(), flag.args.end()}});
    } else if (flag.kind == Flag::Kind::kSetting &&
               !Store(*flag.setting, FromText(*flag.setting, flag.value), &next)) {
      *error = Cat(flag.name, ": expected ", Describe(*flag.setting));
      return false;
    } else if (std::string why; flag.kind == Flag::Kind::kGeneric &&
                                !StoreGeneric(*flag.param, flag.value, &next, &why)) {
      *error = Cat(flag.name, ": ", why);
      return false;
    }
  }
  *config = std::move(next);
  return true;
}

}  // namespace vessel::config
