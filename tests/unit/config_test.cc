// Tests for host/config: the shipped conf/vessel.toml, TOML errors, memory sizes, command line.
#include "host/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace vessel::config {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every field as a tuple of values. The structured bindings stop compiling when a field is
// added, so the comparison cannot fall behind the structs.
auto Fields(const ServerConfig& s) {
  const auto& [bind, port, threads, maxclients, timeout, tcp_keepalive, tcp_backlog, max_bulk_len,
               max_multibulk_len, query_buffer_limit, output_buffer_limit] = s;
  return std::tuple(bind, port, threads, maxclients, timeout, tcp_keepalive, tcp_backlog,
                    max_bulk_len, max_multibulk_len, query_buffer_limit, output_buffer_limit);
}
auto Fields(const StorageConfig& s) {
  const auto& [shards, databases, maxmemory, maxmemory_policy, maxmemory_samples, hz,
               lazyfree_threshold] = s;
  return std::tuple(shards, databases, maxmemory, maxmemory_policy, maxmemory_samples, hz,
                    lazyfree_threshold);
}
auto Fields(const LogConfig& s) {
  const auto& [level, file] = s;
  return std::tuple(level, file);
}

void ExpectSameConfig(const Config& actual, const Config& expected) {
  const auto& [server, storage, log, modules, users, params] = actual;
  EXPECT_EQ(Fields(server), Fields(expected.server));
  EXPECT_EQ(Fields(storage), Fields(expected.storage));
  EXPECT_EQ(Fields(log), Fields(expected.log));
  EXPECT_EQ(modules, expected.modules);
  EXPECT_EQ(users, expected.users);
  EXPECT_EQ(params, expected.params);
}

// A config in which every struct field differs from its default (the generic Redis parameters,
// which the shipped file lists only in part, keep theirs: the file must not change them).
Config Scrambled() {
  Config c = Defaults();
  c.server = {"10.0.0.1", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  c.storage = {2, 3, 4, "allkeys-lru", 7, 5, 6};
  c.log = {"debug", "/tmp/x.log"};
  c.modules = {{"other", {"a"}}};
  return c;
}

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, DefaultsAreTheStructDefaultsPlusBareModules) {
  const Config config = Defaults();
  EXPECT_EQ(config.server.port, 6379);
  EXPECT_EQ(config.server.bind, "127.0.0.1");
  EXPECT_EQ(config.storage.shards, 1024);
  EXPECT_EQ(config.log.level, "info");
  ASSERT_FALSE(config.modules.empty());
  for (const ModuleConfig& module : config.modules) {
    EXPECT_EQ(module.path.find('/'), std::string::npos) << module.path;
    EXPECT_TRUE(module.args.empty()) << module.path;
  }
}

TEST(ConfigTest, ShippedFileSetsEveryFieldToItsDefault) {
  Config config = Scrambled();
  std::string error;
  ASSERT_TRUE(LoadFile(VESSEL_SOURCE_DIR "/conf/vessel.toml", &config, &error)) << error;
  ExpectSameConfig(config, Defaults());
}

TEST(ConfigTest, EmptyFileChangesNothing) {
  Config config = Scrambled();
  std::string error;
  ASSERT_TRUE(LoadToml("# nothing\n", "vessel.toml", &config, &error)) << error;
  ExpectSameConfig(config, Scrambled());
}

TEST(ConfigTest, LoadsEveryKindOfValue) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(LoadToml(R"(
[server]
bind = "0.0.0.0"
port = 0
threads = 1024
max_bulk_len = "1MB"
query_buffer_limit = 2097152
output_buffer_limit = 0
[storage]
shards = 1
maxmemory = "1g"
maxmemory_policy = "volatile-ttl"
maxmemory_samples = 10
hz = 500
[log]
level = "off"
file = "/var/log/vessel.log"
)",
                       "vessel.toml", &config, &error))
      << error;
  Config expected = Defaults();
  expected.server.bind = "0.0.0.0";
  expected.server.port = 0;
  expected.server.threads = 1024;
  expected.server.max_bulk_len = 1 << 20;
  expected.server.query_buffer_limit = 2 << 20;
  expected.server.output_buffer_limit = 0;
  expected.storage.shards = 1;
  expected.storage.maxmemory = 1000000000;
  expected.storage.maxmemory_policy = "volatile-ttl";
  expected.storage.maxmemory_samples = 10;
  expected.storage.hz = 500;
  expected.log.level = "off";
  expected.log.file = "/var/log/vessel.log";
  ExpectSameConfig(config, expected);
}

TEST(ConfigTest, ModulesInTheFileReplaceTheDefaults) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(
      LoadToml("[[modules]]\npath = \"lists\"\nargs = [\"a\", \"b\"]\n"
               "[[modules]]\npath = \"/opt/x.so\"\n",
               "vessel.toml", &config, &error))
      << error;
  EXPECT_EQ(config.modules, (std::vector<ModuleConfig>{{"lists", {"a", "b"}}, {"/opt/x.so", {}}}));

  ASSERT_TRUE(LoadToml("modules = []\n", "vessel.toml", &config, &error)) << error;
  EXPECT_TRUE(config.modules.empty());

  // Relative file paths are relative to the file's folder; bare names and absolute paths stay.
  ASSERT_TRUE(
      LoadToml("[[modules]]\npath = \"mods/x.so\"\n[[modules]]\npath = \"y.so\"\n"
               "[[modules]]\npath = \"lists\"\n[[modules]]\npath = \"/abs/z.so\"\n",
               "/etc/vessel/vessel.toml", &config, &error))
      << error;
  EXPECT_EQ(config.modules, (std::vector<ModuleConfig>{{"/etc/vessel/mods/x.so", {}},
                                                       {"/etc/vessel/y.so", {}},
                                                       {"lists", {}},
                                                       {"/abs/z.so", {}}}));
}

TEST(ConfigTest, UsersInTheFile) {
  Config config = Defaults();
  EXPECT_TRUE(config.users.empty());
  std::string error;
  ASSERT_TRUE(
      LoadToml("[[users]]\nname = \"app\"\nrules = \"on >secret ~app:* +@read\"\n"
               "[[users]]\nname = \"default\"\nrules = \"on nopass ~* +@all\"\n",
               "vessel.toml", &config, &error))
      << error;
  EXPECT_EQ(config.users, (std::vector<UserConfig>{{"app", "on >secret ~app:* +@read"},
                                                   {"default", "on nopass ~* +@all"}}));
}

struct ErrorCase {
  std::string toml;
  std::string error;
};

TEST(ConfigTest, ErrorsNameFileLineAndKey) {
  const std::string kMemory = "(bytes, or a string like \"512mb\")";
  const ErrorCase cases[] = {
      {"[server]\nport = 1\n\nprot = 7\n", "vessel.toml:4: server.prot: unknown setting"},
      {"[serve]\nport = 1\n", "vessel.toml:1: serve: unknown section"},
      {"port = 1\n", "vessel.toml:1: port: unknown setting"},
      {"server = 1\n", "vessel.toml:1: server: expected a table ([server])"},
      {"[server]\nport = \"6379\"\n",
       "vessel.toml:2: server.port: expected an integer between 0 and 65535"},
      {"[server]\nport = 65536\n",
       "vessel.toml:2: server.port: expected an integer between 0 and 65535"},
      {"[server]\nport = -1\n",
       "vessel.toml:2: server.port: expected an integer between 0 and 65535"},
      {"[server]\nport = 6379.0\n",
       "vessel.toml:2: server.port: expected an integer between 0 and 65535"},
      {"[server]\nthreads = 1025\n",
       "vessel.toml:2: server.threads: expected an integer between 0 and 1024"},
      {"[server]\nmaxclients = 0\n", "vessel.toml:2: server.maxclients: expected an integer >= 1"},
      {"[server]\ntimeout = -1\n", "vessel.toml:2: server.timeout: expected an integer >= 0"},
      {"[server]\ntcp_keepalive = -5\n",
       "vessel.toml:2: server.tcp_keepalive: expected an integer >= 0"},
      {"[server]\ntcp_backlog = 0\n",
       "vessel.toml:2: server.tcp_backlog: expected an integer >= 1"},
      {"[server]\nbind = \"\"\n", "vessel.toml:2: server.bind: expected a non-empty string"},
      {"[server]\nbind = 1\n", "vessel.toml:2: server.bind: expected a non-empty string"},
      {"[server]\nmax_bulk_len = \"512k\"\n",
       "vessel.toml:2: server.max_bulk_len: expected a memory size >= 1mb " + kMemory},
      {"[server]\nmax_bulk_len = \"lots\"\n",
       "vessel.toml:2: server.max_bulk_len: expected a memory size >= 1mb " + kMemory},
      {"[server]\nquery_buffer_limit = 1048575\n",
       "vessel.toml:2: server.query_buffer_limit: expected a memory size >= 1mb " + kMemory},
      {"[server]\noutput_buffer_limit = \"1.5gb\"\n",
       "vessel.toml:2: server.output_buffer_limit: expected a memory size " + kMemory},
      {"[storage]\nmaxmemory = -1\n",
       "vessel.toml:2: storage.maxmemory: expected a memory size " + kMemory},
      {"[storage]\nmaxmemory = true\n",
       "vessel.toml:2: storage.maxmemory: expected a memory size " + kMemory},
      {"[storage]\nshards = 3\n",
       "vessel.toml:2: storage.shards: expected a power of two between 1 and 65536"},
      {"[storage]\nshards = 0\n",
       "vessel.toml:2: storage.shards: expected a power of two between 1 and 65536"},
      {"[storage]\nshards = 131072\n",
       "vessel.toml:2: storage.shards: expected a power of two between 1 and 65536"},
      {"[storage]\ndatabases = 0\n",
       "vessel.toml:2: storage.databases: expected an integer between 1 and 1024"},
      {"[storage]\nhz = 501\n", "vessel.toml:2: storage.hz: expected an integer between 1 and 500"},
      {"[storage]\nmaxmemory_policy = \"lru\"\n",
       "vessel.toml:2: storage.maxmemory_policy: expected one of noeviction, allkeys-lru, "
       "allkeys-lfu, allkeys-random, volatile-lru, volatile-lfu, volatile-random, volatile-ttl"},
      {"[storage]\nmaxmemory_samples = 0\n",
       "vessel.toml:2: storage.maxmemory_samples: expected an integer between 1 and 2147483647"},
      {"[log]\nlevel = \"loud\"\n",
       "vessel.toml:2: log.level: expected one of trace, debug, info, warn, error, critical, off, "
       "verbose, notice, warning, nothing"},
      {"[encoding]\nhash_max_listpack_entries = -1\n",
       "vessel.toml:2: encoding.hash_max_listpack_entries: argument must be between 0 and "
       "9223372036854775807 inclusive"},
      {"[persistence]\nappendonly = \"maybe\"\n",
       "vessel.toml:2: persistence.appendonly: argument must be 'yes' or 'no'"},
      {"[persistence]\nappendfsync = 1.5\n",
       "vessel.toml:2: persistence.appendfsync: expected a string, an integer or a boolean"},
      {"[log]\nfile = 1\n", "vessel.toml:2: log.file: expected a string"},
      {"[server.tls]\nport = 1\n", "vessel.toml:1: server.tls: unknown setting"},
      {"[[modules]]\npath = \"a\"\n[[modules]]\nargs = [\"x\"]\n",
       "vessel.toml:3: modules[1].path: missing required setting"},
      {"[[modules]]\npath = 5\n", "vessel.toml:2: modules[0].path: expected a non-empty string"},
      {"[[modules]]\npath = \"\"\n", "vessel.toml:2: modules[0].path: expected a non-empty string"},
      {"[[modules]]\npath = \"a\"\nargs = [1]\n",
       "vessel.toml:3: modules[0].args: expected an array of strings"},
      {"[[modules]]\npath = \"a\"\nargs = \"x\"\n",
       "vessel.toml:3: modules[0].args: expected an array of strings"},
      {"[[modules]]\npath = \"a\"\nname = \"x\"\n",
       "vessel.toml:3: modules[0].name: unknown setting"},
      {"modules = 5\n", "vessel.toml:1: modules: expected an array of tables ([[modules]])"},
      {"[[users]]\nrules = \"on\"\n", "vessel.toml:1: users[0].name: missing required setting"},
      {"[[users]]\nname = \"\"\n", "vessel.toml:2: users[0].name: expected a non-empty string"},
      {"[[users]]\nname = \"a\"\nrules = [\"on\"]\n",
       "vessel.toml:3: users[0].rules: expected a string of ACL rules"},
      {"[[users]]\nname = \"a\"\npassword = \"x\"\n",
       "vessel.toml:3: users[0].password: unknown setting"},
      {"users = 1\n", "vessel.toml:1: users: expected an array of tables ([[users]])"},
      {"modules = [\"strings\"]\n",
       "vessel.toml:1: modules[0]: expected a table with path and args"},
      // Several errors: the one nearest the top of the file wins, whatever the key order.
      {"[storage]\nzzz = 1\n[log]\nlevel = \"x\"\n[server]\naaa = 1\n",
       "vessel.toml:2: storage.zzz: unknown setting"},
  };
  for (const ErrorCase& c : cases) {
    Config config = Defaults();
    std::string error;
    EXPECT_FALSE(LoadToml(c.toml, "vessel.toml", &config, &error)) << c.toml;
    EXPECT_EQ(error, c.error) << c.toml;
  }
}

TEST(ConfigTest, BadFileChangesNothing) {
  Config config = Scrambled();
  std::string error;
  EXPECT_FALSE(LoadToml("[server]\nport = 7000\nbind = \"\"\n[[modules]]\npath = \"x\"\n",
                        "vessel.toml", &config, &error));
  ExpectSameConfig(config, Scrambled());
}

TEST(ConfigTest, SyntaxErrorHasLineAndColumn) {
  Config config = Defaults();
  std::string error;
  EXPECT_FALSE(LoadToml("[server]\nport = = 1\n", "vessel.toml", &config, &error));
  EXPECT_THAT(error, StartsWith("vessel.toml:2:8: "));
  EXPECT_GT(error.size(), std::string("vessel.toml:2:8: ").size());

  EXPECT_FALSE(LoadToml("[server]\nport = 1\nport = 2\n", "conf/x.toml", &config, &error));
  EXPECT_THAT(error, StartsWith("conf/x.toml:3:"));
  ExpectSameConfig(config, Defaults());
}

TEST(ConfigTest, LoadFileReportsAMissingFile) {
  Config config = Defaults();
  std::string error;
  EXPECT_FALSE(LoadFile("/nonexistent/vessel.toml", &config, &error));
  EXPECT_EQ(error, "/nonexistent/vessel.toml: cannot open: No such file or directory");
}

TEST(ConfigTest, ParseMemory) {
  const struct {
    const char* text;
    int64_t bytes;
  } good[] = {
      {"0", 0},
      {"100", 100},
      {"5b", 5},
      {"1k", 1000},
      {"1kb", 1024},
      {"64KB", 64 * 1024},
      {"64Kb", 64 * 1024},
      {"3m", 3000000},
      {"512mb", int64_t{512} << 20},
      {"2g", 2000000000},
      {"1gb", int64_t{1} << 30},
      {"1GB", int64_t{1} << 30},
      {"9223372036854775807", INT64_MAX},
      {"8589934591gb", int64_t{8589934591} << 30},
  };
  for (const auto& c : good) {
    int64_t bytes = -1;
    EXPECT_TRUE(ParseMemory(c.text, &bytes)) << c.text;
    EXPECT_EQ(bytes, c.bytes) << c.text;
  }
  const char* bad[] = {"",
                       "mb",
                       "-1",
                       "+1",
                       " 1",
                       "1 mb",
                       "1.5gb",
                       "1tb",
                       "1kbb",
                       "0x10",
                       "9223372036854775808",
                       "8589934592gb"};
  for (const char* text : bad) {
    int64_t bytes = 0;
    EXPECT_FALSE(ParseMemory(text, &bytes)) << text;
  }
}

// Runs ApplyCommandLine on `args` (argv[0] is added).
bool Apply(std::vector<std::string> args, Config* config, std::string* error,
           bool* exit_now = nullptr) {
  args.insert(args.begin(), "vessel-server");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  bool ignored = false;
  return ApplyCommandLine(static_cast<int>(argv.size()), argv.data(), config, error,
                          exit_now != nullptr ? exit_now : &ignored);
}

TEST(CommandLineTest, NoArgumentsChangeNothing) {
  Config config = Scrambled();
  std::string error;
  bool exit_now = true;
  EXPECT_TRUE(Apply({}, &config, &error, &exit_now)) << error;
  EXPECT_FALSE(exit_now);
  ExpectSameConfig(config, Scrambled());
}

TEST(CommandLineTest, FileFirstThenFlagsInOrder) {
  const std::string path = WriteTempFile(
      "cli_precedence.toml",
      "[server]\nport = 7000\nbind = \"0.0.0.0\"\n[log]\nlevel = \"warn\"\n[[modules]]\npath = "
      "\"lists\"\n");
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(Apply({"--port", "7001", "--config", path, "--log-level=debug", "--port=7002"},
                    &config, &error))
      << error;
  EXPECT_EQ(config.server.port, 7002);
  EXPECT_EQ(config.server.bind, "0.0.0.0");
  EXPECT_EQ(config.log.level, "debug");
  EXPECT_EQ(config.modules, (std::vector<ModuleConfig>{{"lists", {}}}));
}

// A script that starts redis-server works by changing the binary: every Redis parameter is a
// flag under its Redis name, and the words after a flag form its value.
TEST(CommandLineTest, RedisServerFlags) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(Apply({"--port",
                     "6380",
                     "--maxmemory",
                     "1gb",
                     "--maxmemory-policy",
                     "allkeys-lru",
                     "--save",
                     "",
                     "--appendonly",
                     "yes",
                     "--appendfsync",
                     "always",
                     "--dir",
                     "/data",
                     "--dbfilename",
                     "x.rdb",
                     "--hash-max-ziplist-entries",
                     "7",
                     "--loglevel",
                     "warning",
                     "--proto-max-bulk-len",
                     "2mb"},
                    &config, &error))
      << error;
  auto param = [&](std::string_view name) { return config.params[FindRedisName(name).generic]; };
  EXPECT_EQ(config.server.port, 6380);
  EXPECT_EQ(config.storage.maxmemory, int64_t{1} << 30);
  EXPECT_EQ(config.storage.maxmemory_policy, "allkeys-lru");
  EXPECT_EQ(config.server.max_bulk_len, int64_t{2} << 20);
  EXPECT_EQ(config.log.level, "warning");
  EXPECT_EQ(LogLevelForSpdlog(config.log.level), "warn");
  EXPECT_EQ(param("save"), "");
  EXPECT_EQ(param("appendonly"), "yes");
  EXPECT_EQ(param("appendfsync"), "always");
  EXPECT_EQ(param("dir"), "/data");
  EXPECT_EQ(param("dbfilename"), "x.rdb");
  EXPECT_EQ(param("hash-max-listpack-entries"), "7");

  ASSERT_TRUE(Apply({"--save", "900", "1", "300", "10", "--port", "1"}, &config, &error)) << error;
  EXPECT_EQ(param("save"), "900 1 300 10");
  EXPECT_EQ(config.server.port, 1);
  ASSERT_TRUE(Apply({"--encoding.zset_max_listpack_value", "32mb"}, &config, &error)) << error;
  EXPECT_EQ(param("zset-max-listpack-value"), "33554432");
}

// Generic parameters in TOML: under their section, with the Redis name's dashes as underscores;
// booleans, integers, memory strings.
TEST(ConfigTest, GenericParametersInToml) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(
      LoadToml("[persistence]\nappendonly = true\nsave = \"60 1\"\n"
               "[encoding]\nhash_max_listpack_value = \"1kb\"\n",
               "vessel.toml", &config, &error))
      << error;
  EXPECT_EQ(config.params[FindRedisName("appendonly").generic], "yes");
  EXPECT_EQ(config.params[FindRedisName("save").generic], "60 1");
  EXPECT_EQ(config.params[FindRedisName("hash-max-listpack-value").generic], "1024");
}

TEST(CommandLineTest, AliasesAndGenericFlags) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(
      Apply({"--bind", "::1", "--threads", "4", "--server.timeout", "30", "--storage.maxmemory=1gb",
             "--server.max_bulk_len", "2097152", "--storage.maxmemory_policy=noeviction",
             "--log.file=", "--storage.shards", "16"},
            &config, &error))
      << error;
  Config expected = Defaults();
  expected.server.bind = "::1";
  expected.server.threads = 4;
  expected.server.timeout = 30;
  expected.storage.maxmemory = int64_t{1} << 30;
  expected.server.max_bulk_len = 2 << 20;
  expected.storage.maxmemory_policy = "noeviction";
  expected.log.file = "";
  expected.storage.shards = 16;
  ExpectSameConfig(config, expected);
}

TEST(CommandLineTest, LoadModuleAppendsWithArgs) {
  Config config = Defaults();
  std::string error;
  ASSERT_TRUE(Apply({"--loadmodule", "/opt/a.so", "x", "-y", "z=1", "--port", "1", "--loadmodule=b",
                     "--loadmodule", "c"},
                    &config, &error))
      << error;
  std::vector<ModuleConfig> expected = Defaults().modules;
  expected.push_back({"/opt/a.so", {"x", "-y", "z=1"}});
  expected.push_back({"b", {}});
  expected.push_back({"c", {}});
  EXPECT_EQ(config.modules, expected);
  EXPECT_EQ(config.server.port, 1);
}

TEST(CommandLineTest, Errors) {
  const struct {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"--prot", "1"}, "--prot: unknown flag (see --help)"},
      {{"--server.prot=1"}, "--server.prot: unknown flag (see --help)"},
      {{"--modules.path", "x"}, "--modules.path: unknown flag (see --help)"},
      {{"6380"}, "6380: unexpected argument (flags start with --; see --help)"},
      {{"-p", "1"}, "-p: unexpected argument (flags start with --; see --help)"},
      {{"--port"}, "--port: missing value"},
      {{"--port", "--bind", "x"}, "--port: missing value"},
      {{"--config"}, "--config: missing value"},
      {{"--loadmodule"}, "--loadmodule: missing value"},
      {{"--loadmodule="}, "--loadmodule: expected a module path"},
      {{"--config="}, "--config: expected a file path"},
      {{"--port", "70000"}, "--port: expected an integer between 0 and 65535"},
      {{"--server.port", "abc"}, "--server.port: expected an integer between 0 and 65535"},
      {{"--server.port=12x"}, "--server.port: expected an integer between 0 and 65535"},
      {{"--threads", ""}, "--threads: expected an integer between 0 and 1024"},
      {{"--storage.shards", "3"}, "--storage.shards: expected a power of two between 1 and 65536"},
      {{"--server.max_bulk_len", "1kb"},
       "--server.max_bulk_len: expected a memory size >= 1mb (bytes, or a string like \"512mb\")"},
      {{"--log-level", "loud"},
       "--log-level: expected one of trace, debug, info, warn, error, critical, off, verbose, "
       "notice, warning, nothing"},
      {{"--maxmemory-policy", "lru"},
       "--maxmemory-policy: expected one of noeviction, allkeys-lru, allkeys-lfu, allkeys-random, "
       "volatile-lru, volatile-lfu, volatile-random, volatile-ttl"},
      {{"--appendonly", "maybe"}, "--appendonly: argument must be 'yes' or 'no'"},
      {{"--no-such-redis-param", "1"}, "--no-such-redis-param: unknown flag (see --help)"},
      {{"--config", "/nonexistent.toml"},
       "/nonexistent.toml: cannot open: No such file or directory"},
  };
  for (const auto& c : cases) {
    Config config = Scrambled();
    std::string error;
    bool exit_now = true;
    EXPECT_FALSE(Apply(c.args, &config, &error, &exit_now)) << c.args[0];
    EXPECT_FALSE(exit_now) << c.args[0];
    EXPECT_EQ(error, c.error) << c.args[0];
    ExpectSameConfig(config, Scrambled());
  }
}

TEST(CommandLineTest, ErrorInTheConfigFileNamesTheFile) {
  const std::string path = WriteTempFile("cli_bad.toml", "[server]\n\nport = 99999\n");
  Config config = Defaults();
  std::string error;
  EXPECT_FALSE(Apply({"--port", "1", "--config=" + path}, &config, &error));
  EXPECT_EQ(error, path + ":3: server.port: expected an integer between 0 and 65535");
  ExpectSameConfig(config, Defaults());
}

TEST(CommandLineTest, HelpAndVersionExitAndWinOverBadFlags) {
  Config config = Defaults();
  std::string error;
  bool exit_now = false;
  EXPECT_TRUE(Apply({"--bogus", "--help"}, &config, &error, &exit_now));
  EXPECT_TRUE(exit_now);
  EXPECT_THAT(error, StartsWith("Usage: vessel-server"));
  EXPECT_THAT(error, HasSubstr("--server.port"));
  EXPECT_THAT(error, HasSubstr("--storage.maxmemory_policy"));
  EXPECT_THAT(error, HasSubstr("--log.file"));

  exit_now = false;
  EXPECT_TRUE(Apply({"--port", "70000", "--version"}, &config, &error, &exit_now));
  EXPECT_TRUE(exit_now);
  EXPECT_EQ(error, "vessel-server 0.1.0");
  ExpectSameConfig(config, Defaults());
}

}  // namespace
}  // namespace vessel::config
