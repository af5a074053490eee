// Server configuration: defaults, the TOML file (toml++) and command-line overrides -> structs.
#ifndef VESSEL_HOST_CONFIG_CONFIG_H_
#define VESSEL_HOST_CONFIG_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vessel::config {

struct ServerConfig {
  std::string bind = "127.0.0.1";
  int port = 6379;  // 0 = any free port
  int threads = 0;  // worker threads; 0 = one per core
  int64_t maxclients = 10000;
  int64_t timeout = 0;          // close idle clients after N seconds; 0 = never
  int64_t tcp_keepalive = 300;  // seconds; 0 = off
  int64_t tcp_backlog = 511;
  int64_t max_bulk_len = int64_t{512} << 20;         // bytes, "proto-max-bulk-len"
  int64_t max_multibulk_len = 2147483647;            // arguments per command
  int64_t query_buffer_limit = int64_t{1} << 30;     // bytes per client
  int64_t output_buffer_limit = int64_t{256} << 20;  // unsent reply bytes per client; 0 = none
};

struct StorageConfig {
  int64_t shards = 1024;  // per database; a power of two
  int64_t databases = 16;
  int64_t maxmemory = 0;  // bytes; 0 = no limit
  std::string maxmemory_policy = "noeviction";
  int maxmemory_samples = 5;        // keys sampled per eviction
  int64_t hz = 10;                  // active expiry cycles per second
  int64_t lazyfree_threshold = 64;  // values with more elements are freed off the hot path
};

struct LogConfig {
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  std::string file;            // empty = stderr
};

struct ModuleConfig {
  std::string path;  // a file path, or a bare name looked up in the module directory
  std::vector<std::string> args;
  bool operator==(const ModuleConfig&) const = default;
};

// An ACL user declared in the file ([[users]]): its name and its rules in ACL SETUSER syntax
// ("on >secret ~app:* +@read"), applied once the modules are loaded.
struct UserConfig {
  std::string name;
  std::string rules;
  bool operator==(const UserConfig&) const = default;
};

struct Config {
  ServerConfig server;
  StorageConfig storage;
  LogConfig log;
  std::vector<ModuleConfig> modules;  // default: every in-tree module
  std::vector<UserConfig> users;      // [[users]]; none by default
  // The Redis parameters without a field above (params.h), by GenericParams() index, as CONFIG
  // GET shows them.
  std::vector<std::string> params;
};

// The built-in defaults, identical to conf/vessel.toml.
Config Defaults();

// Replaces the values set in the TOML text. Errors name the source, line and key, e.g.
// "conf/vessel.toml:12: server.port: expected an integer between 0 and 65535". Unknown
// sections and keys are errors. A [[modules]] array in the file replaces the default list.
bool LoadToml(std::string_view text, std::string_view source_name, Config* config,
              std::string* error);
bool LoadFile(const std::string& path, Config* config, std::string* error);

// Command line: --config FILE --port N --bind ADDR --threads N --loadmodule PATH [ARGS...]
// --log-level LEVEL, --<section>.<key> VALUE for any setting, and --<redis-name> VALUE for every
// Redis parameter (as redis-server takes them: `--maxmemory 1gb --save ""`; several words after
// one flag are joined with spaces, `--save 900 1 300 10`). --config is applied first, then the
// other flags in order; --loadmodule appends to the module list. Sets *exit_now (with the text
// to print in *error, exit code 0) for --help and --version.
bool ApplyCommandLine(int argc, const char* const* argv, Config* config, std::string* error,
                      bool* exit_now);

// Parses "512mb", "1gb", "100" (bytes), as Redis does for memory settings.
bool ParseMemory(std::string_view text, int64_t* out);

// Where a Redis parameter lives: a setting of the structs (its TOML section and key), or a
// generic parameter (params.h). `found` is false for a name Vessel does not know.
struct RedisName {
  bool found = false;
  std::string_view section, key;  // the TOML home
  int generic = -1;               // index in GenericParams(), or -1 for a struct setting
};
RedisName FindRedisName(std::string_view redis_name);
// Sets a generic Redis parameter (params.h) by name; false with Redis's reason in *why.
bool SetGenericParam(Config* config, std::string_view name, std::string_view value,
                     std::string* why);
// The built-in default of a struct setting as plain text (numbers in decimal, memory in bytes).
std::string DefaultText(std::string_view section, std::string_view key);
// The spdlog level for a log.level value, which may also be one of Redis's names (debug,
// verbose, notice, warning, nothing).
std::string_view LogLevelForSpdlog(std::string_view level);

}  // namespace vessel::config

#endif  // VESSEL_HOST_CONFIG_CONFIG_H_
