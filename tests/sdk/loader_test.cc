// The module loader and the registry's descriptor checks: every way a module can fail to load,
// each with its exact one-line message, on a fresh engine; and vessel-server refusing to start.
// The modules are built from test_module.c into VSL_TEST_MODULE_DIR (see CMakeLists.txt).
#include "host/modules/loader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/config/config.h"
#include "host/engine/engine.h"
#include "vessel/module.h"

namespace vessel::modules {
namespace {

const std::string kDir = VSL_TEST_MODULE_DIR;
const std::string kMinor = std::to_string(VSL_ABI_MINOR);

std::string So(const std::string& name) { return kDir + "/" + name + ".so"; }

// True when any code of module `name` ran in this process (its constructor sets the variable).
bool CodeRan(const std::string& name) {
  return std::getenv(("VSL_TEST_RAN_" + name).c_str()) != nullptr;
}

// Loads modules in order into one fresh engine; "" when all loaded, else the first error.
class Loader {
 public:
  Loader() : engine_(std::make_unique<engine::Engine>(config::Defaults())) {}

  std::string Load(const std::string& path, std::vector<std::string> args = {},
                   const std::vector<std::string>& dirs = {kDir}) {
    std::string error;
    const bool ok = LoadModule(engine_.get(), {path, std::move(args)}, dirs, &error);
    EXPECT_EQ(ok, error.empty()) << error;
    return error;
  }
  engine::Engine& engine() { return *engine_; }
  const vsl_module* Module(const std::string& name) {
    for (const auto& m : engine_->registry().modules())
      if (m->name == name) return m.get();
    return nullptr;
  }

 private:
  std::unique_ptr<engine::Engine> engine_;
};

// One module into a fresh engine.
std::string LoadAlone(const std::string& name, std::vector<std::string> args = {}) {
  return Loader().Load(So(name), std::move(args));
}

bool StringsModuleBuilt() {
  return access(ResolvePath("strings", DefaultModuleDirs()).c_str(), R_OK) == 0;
}

// ---- modules that load ----

TEST(LoadModule, GoodModuleRegistersItsTypeAndCommands) {
  Loader l;
  ASSERT_EQ(l.Load(So("good")), "");
  const vsl_module* m = l.Module("good");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version, "1.2.3");
  EXPECT_EQ(m->path, So("good"));
  EXPECT_EQ(m->commands,
            (std::vector<std::string>{"good.put", "good.get", "good.misuse", "good.twice"}));
  EXPECT_EQ(m->types, (std::vector<std::string>{"goodval"}));
  const engine::CommandSpec* put = l.engine().registry().Find("good.put");
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(put->module, m);
  EXPECT_EQ(put->arity, 3);
  EXPECT_EQ(put->flags, VSL_CMD_WRITE | VSL_CMD_DENYOOM);
  ASSERT_EQ(put->keyspecs.size(), 1u);
  EXPECT_EQ(put->keyspecs[0].begin_index, 1);
  EXPECT_TRUE(CodeRan("good"));
}

TEST(LoadModule, BareNameIsFoundInTheModuleDirectories) {
  EXPECT_EQ(ResolvePath("good", {"/nonexistent", kDir}), So("good"));
  EXPECT_EQ(ResolvePath("good.so", {kDir}), "good.so");
  EXPECT_EQ(ResolvePath("./x/good", {kDir}), "./x/good");
  EXPECT_EQ(Loader().Load("good"), "");
}

TEST(LoadModule, OlderMinorLoads) {
  vsl_manifest m;
  std::string error;
  ASSERT_TRUE(ReadManifest(So("older_minor"), &m, &error)) << error;
  EXPECT_EQ(m.min_abi_minor, VSL_ABI_MINOR > 0 ? VSL_ABI_MINOR - 1 : 0);
  EXPECT_EQ(CheckAbi(m), "");
  EXPECT_EQ(LoadAlone("older_minor"), "");
  EXPECT_TRUE(CodeRan("older_minor"));
}

// A module built against an older header passes a shorter command descriptor (SDK 1.0's): it
// loads, and the host reads none of the fields past its struct_size (the module set an unknown
// ACL category and a NULL argument array there, either refused if read).
TEST(LoadModule, ShorterDescriptorFromAnOlderHeader) {
  Loader l;
  ASSERT_EQ(l.Load(So("bad"), {"old-desc"}), "");
  const engine::CommandSpec* c = l.engine().registry().Find("bad.cmd");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->summary, "documented");  // within SDK 1.0's descriptor
  EXPECT_TRUE(c->extra_acl.empty());
  EXPECT_TRUE(c->args.empty());
  EXPECT_EQ(c->group, "module");
  Loader full;
  ASSERT_EQ(full.Load(So("bad"), {"valid"}), "");
  EXPECT_EQ(full.engine().registry().Find("bad.cmd")->summary, "documented");
}

// A newer SDK's longer descriptor loads when the fields this host does not know are zero (the
// module did not use them), and is refused when it set one: the host would silently drop it.
TEST(LoadModule, LongerDescriptorFromANewerHeader) {
  EXPECT_EQ(LoadAlone("bad", {"newer-desc"}), "");
  EXPECT_EQ(LoadAlone("bad", {"newer-desc-set"}),
            "module bad: command descriptor: vsl_command_desc struct_size " +
                std::to_string(sizeof(vsl_command_desc) + 16) +
                " is from a newer SDK and sets fields this host (ABI 1." + kMinor +
                ") does not know");
}

// A type of a module built before VSL_TYPE_NOT_PERSISTED existed (SDK 1.5's descriptor) without
// serialize: it could not declare itself, so it loads as not persisted.
TEST(LoadModule, OldTypeWithoutSerializeIsNotPersisted) {
  Loader l;
  ASSERT_EQ(l.Load(So("bad"), {"type-old"}), "");
  const vsl_type* t = l.engine().registry().TypeByName("badtype");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->persisted);
}

// The good module's type declares VSL_TYPE_NOT_PERSISTED; GOOD.GET declares its COMMAND DOCS
// arguments, GOOD.PUT's are derived from its syntax "key value".
TEST(LoadModule, TypeFlagsAndArgumentTrees) {
  Loader l;
  ASSERT_EQ(l.Load(So("good")), "");
  const vsl_type* t = l.engine().registry().TypeByName("goodval");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->persisted);
  using engine::CommandArg;
  const engine::CommandSpec* get = l.engine().registry().Find("good.get");
  ASSERT_NE(get, nullptr);
  ASSERT_EQ(get->args.size(), 2u);
  EXPECT_EQ(
      get->args[0],
      (CommandArg{
          .name = "key", .type = VSL_ARG_KEY, .key_spec_index = 0, .summary = "the key to read"}));
  CommandArg form{.name = "form", .type = VSL_ARG_ONEOF, .token = "AS", .flags = VSL_ARG_OPTIONAL};
  form.subargs = {
      CommandArg{.name = "bulk", .type = VSL_ARG_PURE_TOKEN, .token = "BULK"},
      CommandArg{
          .name = "simple", .type = VSL_ARG_PURE_TOKEN, .token = "SIMPLE", .since = "1.2.0"}};
  EXPECT_EQ(get->args[1], form);
  const engine::CommandSpec* put = l.engine().registry().Find("good.put");
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(put->args, (std::vector<CommandArg>{
                           CommandArg{.name = "key", .type = VSL_ARG_KEY, .key_spec_index = 0},
                           CommandArg{.name = "value"}}));
  EXPECT_TRUE(l.engine().registry().Find("good.misuse")->args.empty());  // no syntax, no args
}

// ---- refused from the manifest, before any module code runs ----

TEST(LoadModule, NewerMinorIsRefusedBeforeItsCodeRuns) {
  EXPECT_EQ(LoadAlone("newer_minor"), "module newer_minor: needs ABI 1." +
                                          std::to_string(VSL_ABI_MINOR + 1) + ", host has 1." +
                                          kMinor);
  EXPECT_FALSE(CodeRan("newer_minor"));
}

TEST(LoadModule, OtherMajorIsRefusedBeforeItsCodeRuns) {
  EXPECT_EQ(LoadAlone("other_major"),
            "module other_major: built for ABI major 2, host has ABI 1." + kMinor);
  EXPECT_FALSE(CodeRan("other_major"));
}

TEST(LoadModule, NoManifestIsRefusedBeforeItsCodeRuns) {
  const std::string p = So("no_manifest");
  EXPECT_EQ(LoadAlone("no_manifest"),
            "module " + p + ": " + p +
                ": no vsl_manifest section (not a Vessel module? define VSL_MODULE)");
  EXPECT_FALSE(CodeRan("no_manifest"));
}

TEST(LoadModule, ManifestOfNoReleasedSizeIsRefusedBeforeItsCodeRuns) {
  const std::string p = So("odd_manifest");
  EXPECT_EQ(LoadAlone("odd_manifest"),
            "module " + p + ": " + p +
                ": malformed vsl_manifest section: vsl_manifest struct_size 72 matches no SDK "
                "release; known sizes: 80 (ABI 1.0)");
  EXPECT_FALSE(CodeRan("odd_manifest"));
}

TEST(LoadModule, MalformedManifestIsRefusedBeforeItsCodeRuns) {
  const std::string p = So("bad_magic");
  EXPECT_EQ(LoadAlone("bad_magic"), "module " + p + ": " + p +
                                        ": malformed vsl_manifest section: bad magic (not built "
                                        "with VSL_MODULE?)");
  EXPECT_FALSE(CodeRan("bad_magic"));
}

TEST(LoadModule, EmptyNameIsRefusedBeforeItsCodeRuns) {
  const std::string p = So("empty_name");
  EXPECT_EQ(LoadAlone("empty_name"),
            "module " + p + ": " + p + ": malformed vsl_manifest section: empty module name");
  EXPECT_FALSE(CodeRan("empty_name"));
}

TEST(LoadModule, MissingFile) {
  EXPECT_EQ(Loader().Load("nosuch"),
            "module nosuch: cannot open " + kDir + "/nosuch.so: No such file or directory");
  EXPECT_EQ(Loader().Load("/nonexistent/x.so"),
            "module /nonexistent/x.so: cannot open /nonexistent/x.so: No such file or directory");
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("vessel_loader_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::filesystem::path dir_;
};

using ReadManifestTest = TempDir;

TEST_F(ReadManifestTest, NotAnElfFile) {
  const std::string p = Write("notelf.so", "#!/bin/sh\necho this is not a shared object\n");
  vsl_manifest m;
  std::string error;
  EXPECT_FALSE(ReadManifest(p, &m, &error));
  EXPECT_EQ(error, p + " is not a 64-bit ELF shared object");
  EXPECT_EQ(Loader().Load(p), "module " + p + ": " + p + " is not a 64-bit ELF shared object");
  const std::string empty = Write("empty.so", "");
  EXPECT_FALSE(ReadManifest(empty, &m, &error));
  EXPECT_EQ(error, empty + " is not a 64-bit ELF shared object");
}

TEST_F(ReadManifestTest, TruncatedElfFile) {
  std::ifstream in(So("good"), std::ios::binary);
  std::string head(64, '\0');  // the ELF header alone: the section table is past the end
  in.read(head.data(), 64);
  const std::string p = Write("truncated.so", head);
  vsl_manifest m;
  std::string error;
  EXPECT_FALSE(ReadManifest(p, &m, &error));
  EXPECT_EQ(error, p + ": unreadable ELF section table");
}

TEST_F(ReadManifestTest, ReadsTheSectionWithoutLoading) {
  vsl_manifest m;
  std::string error;
  ASSERT_TRUE(ReadManifest(So("other_major"), &m, &error)) << error;
  EXPECT_EQ(m.magic, VSL_MANIFEST_MAGIC);
  EXPECT_EQ(m.struct_size, sizeof(vsl_manifest));
  EXPECT_EQ(m.abi_major, 2);
  EXPECT_STREQ(m.name, "other_major");
  EXPECT_STREQ(m.version, "2.0.0");
  EXPECT_FALSE(CodeRan("other_major"));
}

// ---- refused by dlopen/dlsym ----

TEST(LoadModule, MissingInit) {
  EXPECT_EQ(LoadAlone("no_init"), "module no_init: missing symbol vsl_module_init");
}

// module.h declares vsl_module_init with VSL_EXPORT, so a definition that forgets it is still
// exported under -fvisibility=hidden.
TEST(LoadModule, InitWithoutVslExportIsStillExported) { EXPECT_EQ(LoadAlone("hidden_init"), ""); }

TEST(LoadModule, UnresolvedSymbolFailsAtLoadNotLater) {
  EXPECT_EQ(LoadAlone("unresolved"), "module unresolved: dlopen failed: " + So("unresolved") +
                                         ": undefined symbol: vsl_test_no_such_function");
}

// ---- refused by init ----

TEST(LoadModule, InitError) {
  EXPECT_EQ(LoadAlone("init_error"), "module init_error: init failed: (no message)");
  EXPECT_EQ(LoadAlone("init_error", {"--fast", "x"}),
            "module init_error: init failed: bad argument '--fast' (2 arguments)");
  EXPECT_EQ(LoadAlone("init_error", {"ok"}), "");
}

TEST(LoadModule, InitErrorWithoutTerminatorIsCut) {
  const std::string e = LoadAlone("init_error", {"overflow"});
  EXPECT_EQ(e, "module init_error: init failed: " + std::string(511, 'x'));
}

TEST(LoadModule, SameModuleTwice) {
  Loader l;
  ASSERT_EQ(l.Load(So("good")), "");
  EXPECT_EQ(l.Load(So("good")), "module good: a module named 'good' is already loaded");
}

// ---- refused by the registry: collisions ----

TEST(LoadModule, CommandCollidesWithABuiltin) {
  EXPECT_EQ(LoadAlone("collide", {"command", "PING"}),
            "module collide: duplicate command name 'PING' (already registered by the host)");
  EXPECT_EQ(LoadAlone("collide", {"command", "ping"}),
            "module collide: duplicate command name 'ping' (already registered by the host)");
  // A subcommand only of a container the module registered itself (ABI 1.7).
  EXPECT_EQ(LoadAlone("collide", {"command", "config|get"}),
            "module collide: command 'config|get': 'config' is no container this module "
            "registered");
}

TEST(LoadModule, CommandCollidesWithAnotherModule) {
  Loader l;
  ASSERT_EQ(l.Load(So("good")), "");
  EXPECT_EQ(l.Load(So("collide"), {"command", "Good.Get"}),
            "module collide: duplicate command name 'Good.Get' (already registered by module "
            "good)");
}

TEST(LoadModule, CommandCollidesWithStrings) {
  if (!StringsModuleBuilt()) GTEST_SKIP() << "TODO: the strings module is not built yet";
  Loader l;
  ASSERT_EQ(l.Load("strings", {}, DefaultModuleDirs()), "");
  EXPECT_EQ(l.Load(So("collide"), {"command", "GET"}),
            "module collide: duplicate command name 'GET' (already registered by module strings)");
  Loader t;
  ASSERT_EQ(t.Load("strings", {}, DefaultModuleDirs()), "");
  EXPECT_EQ(t.Load(So("collide"), {"type", "string"}),
            "module collide: duplicate type name 'string' (already registered by module strings)");
}

TEST(LoadModule, DuplicateTypeName) {
  Loader l;
  ASSERT_EQ(l.Load(So("good")), "");
  EXPECT_EQ(l.Load(So("collide"), {"type", "goodval"}),
            "module collide: duplicate type name 'goodval' (already registered by module good)");
  EXPECT_EQ(LoadAlone("collide", {"type", "t1", "type", "t1"}),
            "module collide: duplicate type name 't1' (already registered by module collide)");
  EXPECT_EQ(LoadAlone("collide", {"type", "t1", "type", "t2", "command", "C.ONE"}), "");
}

// ---- refused by the registry: malformed descriptors ----

TEST(LoadModule, MalformedDescriptors) {
  const std::string cmd = "module bad: command 'bad.cmd': ";
  const std::string ks = cmd + "key spec 0: ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"flags", cmd + "unknown flag bits 1048576"},
      {"write-readonly", cmd + "both WRITE and READONLY"},
      {"readonly-writes", cmd + "READONLY command with an overwritten or deleted key"},
      {"keyless-write", cmd + "WRITE or READONLY command without key specs (declare its keys, or "
                              "flag it VSL_CMD_NO_KEYS)"},
      {"keyless-read", cmd + "WRITE or READONLY command without key specs (declare its keys, or "
                             "flag it VSL_CMD_NO_KEYS)"},
      {"arity", cmd + "arity must not be 0"},
      {"no-handler", cmd + "no handler (a container has arity -2, no flags and no key specs)"},
      {"name", "module bad: invalid command name 'BAD CMD'"},
      {"small-desc",
       "module bad: command descriptor: vsl_command_desc struct_size 8 matches no "
       "SDK release; known sizes: 104 (ABI 1.0), 112 (ABI 1.4), 128 (ABI 1.6)"},
      // Large enough to hold the args pointer, but no release had that size: refused, not read
      // up to where it reaches.
      {"odd-desc",
       "module bad: command descriptor: vsl_command_desc struct_size 120 matches no "
       "SDK release; known sizes: 104 (ABI 1.0), 112 (ABI 1.4), 128 (ABI 1.6)"},
      {"small-stride", cmd + "keyspec_stride 8 is no released vsl_keyspec size"},
      {"keyspec-null", cmd + "n_keyspecs > 0 but no keyspecs"},
      {"keyspec-flags", ks + "unknown key spec flags 32768"},
      {"keyspec-access", ks + "key spec needs one of RO, RW, OW, RM"},
      {"keyspec-begin", ks + "key spec begin_index must be > 0 without a keyword"},
      {"keyspec-step", ks + "key spec has a negative step, limit or index"},
      {"keyspec-size",
       ks + "vsl_keyspec struct_size 4 matches no SDK release; known sizes: 56 (ABI 1.0)"},
      {"args-key",
       cmd + "args: argument 0 'key': key_spec_index 1 names no key spec of the command"},
      {"args-type", cmd + "args: argument 1 'value': unknown type 42"},
      {"args-size", cmd + "args: vsl_command_arg struct_size 40 matches no SDK release; known "
                          "sizes: 72 (ABI 1.6)"},
      {"args-oneof", cmd + "args: argument 1 'value': oneof or block without sub-arguments"},
      {"type-no-free", "module bad: type 'badtype': free and mem_usage are required"},
      {"type-no-serialize",
       "module bad: type 'badtype': serialize and deserialize are required "
       "(or flag it VSL_TYPE_NOT_PERSISTED)"},
      {"type-odd-size",
       "module bad: type descriptor: vsl_type_desc struct_size 96 matches no SDK "
       "release; known sizes: 80 (ABI 1.0), 88 (ABI 1.2), 104 (ABI 1.3), 112 "
       "(ABI 1.5), 128 (ABI 1.5), 136 (ABI 1.6), 152 (ABI 1.7)"},
      {"type-flags", "module bad: type 'badtype': unknown flag bits 1099511627776"},
      // init returned VSL_OK, but a registration failed: the load fails all the same.
      {"type-ignored", "module bad: invalid type name 'bad type'"},
  };
  for (const auto& [arg, want] : cases) {
    EXPECT_EQ(LoadAlone("bad", {arg}), want) << "bad " << arg;
  }
}

// ---- the binary: a module that fails to load stops startup with one log line ----

struct ServerRun {
  int status = -1;
  std::string output;
};

// Runs vessel-server with `args` (shell-quoted by the caller), stdout and stderr together.
ServerRun RunServer(const std::string& args) {
  // `timeout` guards against a server that starts after all: the test then fails, not hangs.
  const std::string cmd = "timeout 30 " + std::string(VESSEL_SERVER_BIN) + " " + args + " 2>&1";
  ServerRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The one line that names the failure, e.g. "[...] [critical] module x: why".
std::string CriticalLine(const std::string& output) {
  size_t at = output.find("[critical] ");
  if (at == std::string::npos) return "";
  at += 11;
  return output.substr(at, output.find('\n', at) - at);
}

using ServerBinary = TempDir;

// A loopback port nothing listens on now.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return static_cast<int>(ntohs(a.sin_port));
}

// A connection to the server starting on `port` once it listens (up to 20 s), or -1. A connect
// to a loopback port nobody listens on can connect the socket to itself when the kernel picks
// that port as the source (TCP simultaneous open): such a connection is dropped and retried.
int ConnectWhenListening(int port) {
  for (int i = 0; i < 800; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      sockaddr_in local{};
      socklen_t len = sizeof(local);
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
      if (local.sin_port != a.sin_port) return fd;
    }
    close(fd);
    usleep(25000);
  }
  return -1;
}

// A module command that faults takes the process down with a report naming the command and the
// module, and a backtrace, on stderr and in the log file (the server runs in a child process).
TEST_F(ServerBinary, ACrashingModuleCommandIsReported) {
  const std::string conf = Write("crash.toml", "modules = []\n");
  const std::string log = Write("crash.log", "");
  const int port = FreeLoopbackPort();
  const std::string out = Write("crash.out", "");
  const std::string cmd = "timeout 30 " + std::string(VESSEL_SERVER_BIN) + " --config " + conf +
                          " --port " + std::to_string(port) + " --log.file " + log +
                          " --loadmodule " + So("crash") + " > " + out + " 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Connect when it listens, wait until it serves (a command sent while the dataset loads gets
  // -LOADING), send CRASH.NOW, and wait for the server to die.
  const int fd = ConnectWhenListening(port);
  ASSERT_GE(fd, 0) << "the server did not start";
  std::string pong;
  for (int i = 0; i < 400 && pong != "+PONG\r\n"; ++i) {
    const char ping[] = "*1\r\n$4\r\nPING\r\n";
    ASSERT_EQ(write(fd, ping, sizeof(ping) - 1), static_cast<ssize_t>(sizeof(ping) - 1));
    char buf[256];
    const ssize_t n = read(fd, buf, sizeof(buf));
    ASSERT_GT(n, 0);
    pong.assign(buf, static_cast<size_t>(n));
    if (pong != "+PONG\r\n") usleep(25000);
  }
  ASSERT_EQ(pong, "+PONG\r\n");
  const char request[] = "*1\r\n$9\r\nCRASH.NOW\r\n";
  ASSERT_EQ(write(fd, request, sizeof(request) - 1), static_cast<ssize_t>(sizeof(request) - 1));
  int status = 0;
  waitpid(pid, &status, 0);
  close(fd);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  for (const std::string& text : {slurp(out), slurp(log)}) {
    EXPECT_NE(text.find("VESSEL BUG REPORT START: crashed by SIGSEGV"), std::string::npos) << text;
    EXPECT_NE(text.find("command=crash.now module=crash"), std::string::npos) << text;
    EXPECT_NE(text.find("backtrace:"), std::string::npos) << text;
    EXPECT_NE(text.find("crash.so"), std::string::npos) << text;  // a frame in the module
  }
}

// Misuse of the API while serving is refused and logged with the module and the command that
// did it: NULL and stale handles, an undeclared key, a write through a read-only key, two replies.
TEST_F(ServerBinary, MisuseIsLoggedWithModuleAndCommand) {
  const std::string conf = Write("misuse.toml", "modules = []\n");
  const std::string log = Write("misuse.log", "");
  const int port = FreeLoopbackPort();
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec timeout 60 " + std::string(VESSEL_SERVER_BIN) + " --config " +
                            conf + " --port " + std::to_string(port) + " --log.file " + log +
                            " --save '' --loadmodule " + So("good") + " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const int fd = ConnectWhenListening(port);
  ASSERT_GE(fd, 0) << "the server did not start";
  // Each of these replies with one line.
  auto call = [fd](const std::string& name) {
    const std::string req =
        "*2\r\n$" + std::to_string(name.size()) + "\r\n" + name + "\r\n$1\r\nk\r\n";
    EXPECT_EQ(write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
    std::string line;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') line += c;
    return line;
  };
  // Serving once PING answers (before, commands get -LOADING).
  const std::string ping = "*1\r\n$4\r\nPING\r\n";
  bool ready = false;
  for (int i = 0; i < 400 && !ready; ++i) {
    ASSERT_EQ(write(fd, ping.data(), ping.size()), static_cast<ssize_t>(ping.size()));
    std::string line;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') line += c;
    ready = line == "+PONG\r";
    if (!ready) usleep(25000);
  }
  ASSERT_TRUE(ready);
  EXPECT_EQ(call("GOOD.MISUSE"), ":5\r");
  EXPECT_EQ(call("GOOD.TWICE"), "-ERR command 'good.twice' sent an invalid reply\r");
  close(fd);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* line :
       {"module misuse: key_get called with a NULL or stale handle (refused) module=good "
        "cmd=good.misuse",
        "module misuse: reply_int64 called with a NULL or stale handle (refused) module=good "
        "cmd=good.misuse",
        "module misuse: key_open opened key 1 of 1 declared (refused) module=good cmd=good.misuse",
        "module misuse: key_delete deletes a key declared read-only (refused) module=good "
        "cmd=good.misuse",
        "module misuse: command sent 2 replies (0 unfinished aggregates) module=good "
        "cmd=good.twice"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
  }
}

TEST_F(ServerBinary, RefusesToStartWithAModuleOfAnotherMajor) {
  // No in-tree modules: only the one under test.
  const std::string conf = Write("empty.toml", "modules = []\n");
  const ServerRun r = RunServer("--config " + conf + " --port 0 --loadmodule " + So("other_major"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(CriticalLine(r.output),
            "module other_major: built for ABI major 2, host has ABI 1." + kMinor)
      << r.output;
  EXPECT_EQ(r.output.find("ready to accept"), std::string::npos) << r.output;
}

TEST_F(ServerBinary, RefusesToStartWhenInitFails) {
  const std::string conf = Write("empty.toml", "modules = []\n");
  ServerRun r =
      RunServer("--config " + conf + " --port 0 --loadmodule " + So("init_error") + " a b");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(CriticalLine(r.output),
            "module init_error: init failed: bad argument 'a' (2 arguments)")
      << r.output;

  // The same from a [[modules]] entry of the config file.
  const std::string conf2 = Write(
      "init_error.toml", "[[modules]]\npath = \"" + So("init_error") + "\"\nargs = [\"--x\"]\n");
  r = RunServer("--config " + conf2 + " --port 0");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(CriticalLine(r.output),
            "module init_error: init failed: bad argument '--x' (1 arguments)")
      << r.output;
}

TEST_F(ServerBinary, RefusesToStartWithAMissingModule) {
  const std::string conf = Write("empty.toml", "modules = []\n");
  const ServerRun r =
      RunServer("--config " + conf + " --port 0 --loadmodule /nonexistent/nosuch.so");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(CriticalLine(r.output),
            "module /nonexistent/nosuch.so: cannot open /nonexistent/nosuch.so: No such file or "
            "directory")
      << r.output;
}

}  // namespace
}  // namespace vessel::modules