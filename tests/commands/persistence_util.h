// Helpers of the persistence tests: temporary directories, servers started in them, a dataset
// with every Redis family in its small and big encodings, and a canonical description of a
// server's whole dataset to compare two servers.
#ifndef VESSEL_TESTS_COMMANDS_PERSISTENCE_UTIL_H_
#define VESSEL_TESTS_COMMANDS_PERSISTENCE_UTIL_H_

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {

namespace fs = std::filesystem;

// A fresh temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vessel-persist-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// vessel in-process with dir = `dir` and the given generic parameters.
inline std::unique_ptr<Server> StartVessel(
    const std::string& dir, const std::vector<std::pair<std::string, std::string>>& params,
    std::string* error = nullptr, const std::string& without_module = "") {
  config::Config cfg = config::Defaults();
  std::erase_if(cfg.modules, [&](const config::ModuleConfig& m) {
    return !without_module.empty() && m.path.find(without_module) != std::string::npos;
  });
  cfg.server.port = 0;
  cfg.server.bind = "127.0.0.1";
  cfg.server.threads = 2;
  std::string why;
  config::SetGenericParam(&cfg, "save", "", &why);
  config::SetGenericParam(&cfg, "dir", dir, &why);
  // A full synchronization starts at once, as Redis's own tests set it (`params` may differ).
  config::SetGenericParam(&cfg, "repl-diskless-sync-delay", "0", &why);
  for (const auto& [k, v] : params) EXPECT_TRUE(config::SetGenericParam(&cfg, k, v, &why)) << why;
  auto s = std::make_unique<Server>(cfg);
  std::string err;
  if (!s->Start(&err)) {
    if (error != nullptr) *error = err;
    return nullptr;
  }
  return s;
}

inline RespClient Client(Server& s) { return RespClient("127.0.0.1", s.port()); }

// A redis-server child using dir/dump.rdb.
struct RedisIn {
  explicit RedisIn(const std::string& dir) {
    pid = StartRedis(&port, {"--dir", dir, "--dbfilename", "dump.rdb"});
  }
  ~RedisIn() { StopProcess(pid); }
  RespClient Client() const { return RespClient("127.0.0.1", port); }
  int pid = -1, port = 0;
};

inline std::string Big(char c, size_t n) { return std::string(n, c); }

// Every Redis family in its small and big encodings, in databases 0, 1 and 15, with TTLs.
inline void Fill(RespClient& c) {
  for (int db : {0, 1, 15}) {
    const std::string p = "db" + std::to_string(db) + ":";
    ASSERT_EQ(c("SELECT", std::to_string(db)).str, "OK");
    c("SET", p + "str", "hello world");
    c("SET", p + "int", "123456789");
    c("SET", p + "neg", "-42");
    c("SET", p + "notint", "0123");
    c("SET", p + "long", Big('x', 5000));  // compressible: LZF
    c("SET", p + "empty", "");
    c("SET", p + "ttl", "soon", "EX", "5000");
    c("RPUSH", p + "list", "a", "1", "-7", "long-" + Big('y', 100), "", "9223372036854775807");
    std::vector<std::string> cmd = {"RPUSH", p + "biglist"};
    for (int i = 0; i < 3000; ++i)
      cmd.push_back(i % 3 ? std::to_string(i) : "v" + std::to_string(i));
    c.Cmd(cmd);
    c("RPUSH", p + "hugeelems", Big('h', 9000), Big('i', 10), Big('j', 70000));
    c("SADD", p + "intset", "1", "-5", "300", "70000", "5000000000");
    c("SADD", p + "set", "a", "b", "1");
    cmd = {"SADD", p + "bigintset"};
    for (int i = 0; i < 600; ++i) cmd.push_back(std::to_string(i * 7));
    c.Cmd(cmd);
    c("HSET", p + "hash", "f", "v", "n", "12", "e", "");
    cmd = {"HSET", p + "bighash"};
    for (int i = 0; i < 700; ++i) {
      cmd.push_back("field" + std::to_string(i));
      cmd.push_back(std::to_string(i * 3));
    }
    c.Cmd(cmd);
    c("HSET", p + "longvalhash", "f", Big('q', 100));
    c("ZADD", p + "zset", "1", "a", "2.5", "b", "-inf", "c", "inf", "d", "0", "e");
    cmd = {"ZADD", p + "bigzset"};
    for (int i = 0; i < 300; ++i) {
      cmd.push_back(std::to_string(i * 0.5));
      cmd.push_back("m" + std::to_string(i));
    }
    c.Cmd(cmd);
    c("ZADD", p + "longmember", "3", Big('z', 80));
    c("PEXPIRE", p + "hash", "9000000");
    c("EXPIRE", p + "biglist", "100000");
  }
  c("SELECT", "0");
}

// A canonical description of the whole dataset: per key its type, contents (sorted where the
// order is not the type's) and TTL rounded to 10 s.
inline std::map<std::string, std::string> Describe(RespClient& c, bool encodings = false) {
  std::map<std::string, std::string> out;
  for (int db = 0; db < 16; ++db) {
    c("SELECT", std::to_string(db));
    Reply keys = c("KEYS", "*");
    for (const Reply& k : keys.elems) {
      const std::string& key = k.str;
      std::string type = c("TYPE", key).str, d = type + ":";
      std::vector<std::string> parts;
      if (type == "string") {
        d += c("GET", key).str;
      } else if (type == "list") {
        for (const Reply& e : c("LRANGE", key, "0", "-1").elems) d += e.str + ",";
      } else if (type == "set") {
        for (const Reply& e : c("SMEMBERS", key).elems) parts.push_back(e.str);
      } else if (type == "hash") {
        Reply r = c("HGETALL", key);
        for (size_t i = 0; i + 1 < r.elems.size(); i += 2)
          parts.push_back(r.elems[i].str + "=" + r.elems[i + 1].str);
      } else if (type == "zset") {
        Reply r = c("ZRANGE", key, "0", "-1", "WITHSCORES");
        for (const Reply& e : r.elems) d += e.str + ",";
      }
      std::sort(parts.begin(), parts.end());
      for (const auto& p : parts) d += p + ",";
      // The absolute expiry (to 10 s): unlike the time left, it does not move while a slow run
      // (a sanitizer on a busy machine) saves, restarts and reloads.
      const int64_t at = c("PEXPIRETIME", key).integer;
      d += " ttl:" + std::to_string(at < 0 ? at : (at + 5000) / 10000);
      if (encodings) d += " enc:" + c("OBJECT", "ENCODING", key).str;
      out[std::to_string(db) + "/" + key] = d;
    }
  }
  c("SELECT", "0");
  return out;
}

inline void ExpectSameData(const std::map<std::string, std::string>& a,
                           const std::map<std::string, std::string>& b) {
  EXPECT_EQ(a.size(), b.size());
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) {
      ADD_FAILURE() << "missing key " << k;
      continue;
    }
    EXPECT_EQ(v.substr(0, 300), it->second.substr(0, 300)) << k;
    EXPECT_TRUE(v == it->second) << k;
  }
}

inline std::string InfoField(RespClient& c, const std::string& field) {
  const std::string info = c("INFO", "persistence").str;
  const size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  const size_t from = at + field.size() + 1;
  return info.substr(from, info.find('\r', from) - from);
}

inline bool WaitFor(const std::function<bool()>& cond, int ms = 10000) {
  for (int i = 0; i < ms / 10; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace vessel::test

#endif  // VESSEL_TESTS_COMMANDS_PERSISTENCE_UTIL_H_
