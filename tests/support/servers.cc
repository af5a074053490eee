// The servers command tests talk to: vessel in-process and a real redis-server child process.
#include "tests/support/servers.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "gtest/gtest.h"
#include "host/engine/engine.h"
#include "host/engine/memory.h"
#include "host/engine/registry.h"
#include "host/engine/serialize.h"
#include "host/engine/session.h"
#include "host/engine/strutil.h"
#include "host/modules/loader.h"
#include "host/scripting/scripting.h"

namespace vessel::test {
namespace {

std::function<void(config::Config&)>& ConfigureHook() {
  static std::function<void(config::Config&)> fn;
  return fn;
}

}  // namespace

void Servers::Configure(std::function<void(config::Config&)> fn) {
  ConfigureHook() = std::move(fn);
}

Servers& Servers::Get() {
  static Servers* servers = new Servers();
  static bool registered = [] {
    std::atexit([] { delete servers; });
    return true;
  }();
  (void)registered;
  return *servers;
}

Servers::Servers() {
  config::Config cfg = config::Defaults();
  cfg.server.port = 0;
  cfg.server.bind = "127.0.0.1";
  cfg.server.threads = 2;
  std::string why;
  config::SetGenericParam(&cfg, "enable-debug-command", "yes", &why);  // as redis-server's args
  config::SetGenericParam(&cfg, "save", "", &why);                     // as redis-server's args
  if (ConfigureHook()) ConfigureHook()(cfg);
  vessel_ = std::make_unique<vessel::Server>(cfg);
  std::string error;
  if (!vessel_->Start(&error)) throw std::runtime_error("vessel did not start: " + error);
  redis_pid_ = StartRedis(&redis_port_);
}

Servers::~Servers() {
  StopProcess(redis_pid_);
  if (vessel_) vessel_->Stop();
}

void OnBoth(const std::function<void(RespClient&)>& check) {
  for (const bool vessel : {true, false}) {
    SCOPED_TRACE(vessel ? "on vessel" : "on redis-server");
    RespClient c = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
    check(c);
  }
}

void Servers::Reset() {
  for (int port : {vessel_port(), redis_port_}) {
    RespClient c("127.0.0.1", port);
    c("FLUSHALL");
    c("CONFIG", "SET", "maxmemory", "0");
  }
}

void SetLuaMemoryLimit(size_t bytes) { scripting::SetLuaMemoryLimit(bytes); }

int64_t Servers::ModuleBytes() {
  int64_t n = 0;
  for (int m = 1; m < engine::memory::kMaxModules; ++m) n += engine::memory::ModuleBytes(m);
  return n;
}

int64_t Servers::UseModuleBytesAsUsedMemory() {
  vessel_->engine().set_used_memory_source(&Servers::ModuleBytes);
  return ModuleBytes();
}

// ---- expectations ----

Expect Any() {
  return {"anything", [](const Reply&) { return true; }};
}
Expect Ok() { return Simple("OK"); }
Expect Simple(std::string s) {
  return {s, [s](const Reply& r) { return r.type == Reply::Type::kStatus && r.str == s; }};
}
Expect Int(int64_t v) {
  return {"(integer) " + std::to_string(v),
          [v](const Reply& r) { return r.type == Reply::Type::kInt && r.integer == v; }};
}
Expect IntRange(int64_t lo, int64_t hi) {
  return {"(integer) in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
          [lo, hi](const Reply& r) {
            return r.type == Reply::Type::kInt && r.integer >= lo && r.integer <= hi;
          }};
}
Expect ClockReading(int64_t lo, int64_t hi) {
  Expect e = IntRange(lo, hi);
  e.clock = true;
  return e;
}
Expect Bulk(std::string s) {
  return {"\"" + s + "\"", [s](const Reply& r) {
            return (r.type == Reply::Type::kBulk || r.type == Reply::Type::kVerbatim) && r.str == s;
          }};
}
Expect Nil() {
  return {"(nil)", [](const Reply& r) { return r.type == Reply::Type::kNil; }};
}
Expect NilArray() {
  return {"(nil array)", [](const Reply& r) {
            return r.type == Reply::Type::kNilArray || r.type == Reply::Type::kNil;
          }};
}
Expect Err(std::string glob) {
  return {"(error) " + glob, [glob](const Reply& r) {
            return r.type == Reply::Type::kError && engine::GlobMatch(glob, r.str);
          }};
}
Expect Dbl(std::string text) {
  return {"(double) " + text, [text](const Reply& r) {
            return (r.type == Reply::Type::kDouble || r.type == Reply::Type::kBulk) &&
                   r.str == text;
          }};
}

Expect Error(std::string text) {
  return {"(error) " + text,
          [text](const Reply& r) { return r.type == Reply::Type::kError && r.str == text; }};
}
Expect WrongType() { return Error(kWrongType); }

Strings Seq(const std::string& prefix, int from, int to) {
  Strings out;
  for (int i = from; i < to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TypeCallbacks::TypeCallbacks(const std::string& name) {
  for (const auto& t : Servers::Get().vessel().engine().registry().types()) {
    if (t != nullptr && t->name == name) type_ = t.get();
  }
}

const vsl_type_desc& TypeCallbacks::desc() const { return type_->desc; }

uint32_t TypeCallbacks::encoding_version() const { return type_->encoding_version; }

void* TypeCallbacks::Load(const std::string& bytes, uint32_t encver) const {
  engine::memory::ModuleScope scope(type_->module->id);
  vsl_reader r{bytes, false};
  return type_->desc.deserialize(nullptr, &r, encver);
}

std::string TypeCallbacks::Save(const void* v) const {
  vsl_writer w;
  EXPECT_EQ(type_->desc.serialize(nullptr, v, &w), VSL_OK);
  return w.buf;
}

void TypeCallbacks::Free(void* v) const {
  engine::memory::ModuleScope scope(type_->module->id);
  type_->desc.free(nullptr, v);
}

std::string TypeCallbacks::SaveKey(const std::string& key) const {
  engine::Engine& e = Servers::Get().vessel().engine();
  engine::WorkerScope worker(&e, e.external_worker());
  engine::Database& db = e.db(0);
  const uint64_t hash = engine::HashKey(key);
  engine::Shard& shard = db.shard(db.ShardOf(hash));
  std::unique_lock lock(shard.mu);
  engine::Entry* entry = shard.table.Find(key, hash);
  if (entry == nullptr || entry->type_id() != type_->id) {
    ADD_FAILURE() << "no " << type_->name << " at " << key;
    return "";
  }
  engine::memory::ModuleScope scope(type_->module->id);
  return Save(entry->value);
}

void TypeCallbacks::StoreKey(const std::string& key, void* value) const {
  engine::Engine& e = Servers::Get().vessel().engine();
  engine::WorkerScope worker(&e, e.external_worker());
  engine::memory::ModuleScope scope(type_->module->id);
  engine::Database& db = e.db(0);
  const uint64_t hash = engine::HashKey(key);
  engine::Shard& shard = db.shard(db.ShardOf(hash));
  std::unique_lock lock(shard.mu);
  e.Store(db, shard, key, hash, type_->id, value, false);
}

int WorkerOfClient(int64_t client_id) {
  int worker = -1;
  Servers::Get().vessel().engine().ForEachSession([&](engine::Session* s) {
    if (static_cast<int64_t>(s->id()) == client_id) worker = s->worker();
  });
  return worker;
}

void LoadOnlyBuiltModules() {
  Servers::Configure([](config::Config& cfg) {
    const auto dirs = modules::DefaultModuleDirs();
    std::erase_if(cfg.modules, [&](const config::ModuleConfig& m) {
      return access(modules::ResolvePath(m.path, dirs).c_str(), F_OK) != 0;
    });
  });
}

std::string U64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

int64_t ModuleAllocated(RespClient& c, const std::string& module) {
  const std::string field = "module." + module + ".allocated";
  const Reply r = c("MEMORY", "STATS");
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
    if (r.elems[i].str == field) return r.elems[i + 1].integer;
  }
  ADD_FAILURE() << "no " << field << " in MEMORY STATS";
  return -1;
}

void ExpectEntryOverheads(const std::vector<int64_t>& overheads) {
  for (size_t i = 0; i < overheads.size(); ++i) {
    EXPECT_NEAR(overheads[i], overheads[0], kEntryJitter) << "MEMORY USAGE is off for key " << i;
    EXPECT_GE(overheads[i], 0);
    EXPECT_LT(overheads[i], 256);
  }
}

void Parallel(int threads, const std::function<void(int)>& body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
  for (auto& th : pool) th.join();
}

Strings Cat(Strings head, const Strings& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

namespace {
std::string Describe(const std::vector<Expect>& elems, bool unordered) {
  std::string d = unordered ? "unordered[" : "[";
  for (size_t i = 0; i < elems.size(); ++i) d += (i ? ", " : "") + elems[i].description;
  return d + "]";
}
bool IsList(const Reply& r) {
  return r.type == Reply::Type::kArray || r.type == Reply::Type::kSet ||
         r.type == Reply::Type::kMap;
}
}  // namespace

static bool AnyClock(const std::vector<Expect>& elems) {
  return std::any_of(elems.begin(), elems.end(), [](const Expect& e) { return e.clock; });
}

Expect Arr(std::vector<Expect> elems) {
  const std::string d = Describe(elems, false);
  const bool clock = AnyClock(elems);
  return {d,
          [elems](const Reply& r) {
            if (!IsList(r) || r.elems.size() != elems.size()) return false;
            for (size_t i = 0; i < elems.size(); ++i)
              if (!elems[i].match(r.elems[i])) return false;
            return true;
          },
          clock};
}

Expect UnorderedArr(std::vector<Expect> elems) {
  const std::string d = Describe(elems, true);
  return {d, [elems](const Reply& r) {
            if (!IsList(r) || r.elems.size() != elems.size()) return false;
            std::vector<bool> used(elems.size());
            for (const Reply& e : r.elems) {
              bool found = false;
              for (size_t j = 0; j < elems.size() && !found; ++j)
                if (!used[j] && elems[j].match(e)) used[j] = found = true;
              if (!found) return false;
            }
            return true;
          }};
}

Expect BulkArr(std::vector<std::string> elems) {
  std::vector<Expect> e;
  for (auto& s : elems) e.push_back(Bulk(s));
  return Arr(std::move(e));
}

Expect UnorderedBulkArr(std::vector<std::string> elems) {
  std::vector<Expect> e;
  for (auto& s : elems) e.push_back(Bulk(s));
  return UnorderedArr(std::move(e));
}

std::string Show(const std::vector<std::string>& cmd) {
  std::string s;
  for (const auto& a : cmd) {
    if (!s.empty()) s += ' ';
    const bool quote = a.empty() || a.find_first_of(" \t\r\n\"") != std::string::npos;
    s += quote ? "\"" + a + "\"" : a;
  }
  return s;
}

namespace {

void Run(const std::vector<Row>& rows, int protocol, bool with_redis) {
  Servers& s = Servers::Get();
  RespClient v = s.Vessel();
  RespClient r;
  if (with_redis) r = s.Redis();
  // Every row is owed a reply: the slowest ones (LCS of long strings, a 512 MB SETBIT under a
  // sanitizer on a busy machine) get a minute before the row counts as unanswered.
  v.SetTimeout(60000);
  if (with_redis) r.SetTimeout(60000);
  if (protocol == 3) {
    v("HELLO", "3");
    if (with_redis) r("HELLO", "3");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const Reply got = v.Cmd(row.cmd);
    EXPECT_TRUE(row.expect.match(got))
        << "row " << i << ": " << Show(row.cmd) << "\n  expected: " << row.expect.description
        << "\n  vessel:   " << got.ToString();
    if (!with_redis) continue;
    const Reply want = r.Cmd(row.cmd);
    EXPECT_TRUE(row.expect.match(want))
        << "row " << i << ": " << Show(row.cmd) << "\n  expected: " << row.expect.description
        << "\n  redis:    " << want.ToString() << "  (the table is wrong)";
    if (row.diff == Diff::kSkip || row.expect.clock) continue;
    const bool same = row.diff == Diff::kUnordered ? got.EqualsUnordered(want) : got == want;
    EXPECT_TRUE(same) << "row " << i << ": " << Show(row.cmd) << "\n  vessel: " << got.ToString()
                      << "\n  redis:  " << want.ToString();
  }
}

}  // namespace

void RunTable(const std::vector<Row>& rows, int protocol) { Run(rows, protocol, true); }
void RunVesselTable(const std::vector<Row>& rows, int protocol) { Run(rows, protocol, false); }

}  // namespace vessel::test
