// INFO and CONFIG: server introspection with Redis's field and parameter names.
//
// Deliberate differences from Redis: persistence and replication fields report a server without
// either.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <functional>

#include "host/engine/builtins.h"
#include "host/engine/lazy_free.h"
#include "host/engine/memory.h"
#include "host/engine/version.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

Engine& E(vsl_ctx* ctx) { return *ctx->engine; }

std::string Human(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (b < 1024) {
    std::snprintf(buf, sizeof(buf), "%lldB", static_cast<long long>(bytes));
  } else if (b < 1024.0 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fK", b / 1024);
  } else if (b < 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fM", b / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fG", b / (1024.0 * 1024 * 1024));
  }
  return buf;
}

template <typename F>
uint64_t SumStats(Engine& e, F field) {
  uint64_t n = 0;
  for (int w = 0; w <= e.worker_count(); ++w)
    n += field(e.stats(w)).load(std::memory_order_relaxed);
  return n;
}

std::string RunId() {
  static const std::string id = [] {
    std::string s;
    uint64_t x = static_cast<uint64_t>(Engine::WallMs()) ^ (static_cast<uint64_t>(getpid()) << 32);
    for (int i = 0; i < 40; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      s += "0123456789abcdef"[(x >> 59) & 15];
    }
    return s;
  }();
  return id;
}

void Line(std::string* out, std::string_view k, std::string_view v) {
  out->append(k);
  out->push_back(':');
  out->append(v);
  out->append("\r\n");
}
void Line(std::string* out, std::string_view k, int64_t v) { Line(out, k, std::to_string(v)); }

void InfoServer(Engine& e, std::string* out) {
  struct utsname u;
  uname(&u);
  const int64_t uptime = (Engine::WallMs() - e.start_ms()) / 1000;
  Line(out, "redis_version", kRedisVersion);
  Line(out, "redis_git_sha1", "00000000");
  Line(out, "redis_git_dirty", 0);
  Line(out, "redis_build_id", "0");
  Line(out, "redis_mode", "standalone");
  Line(out, "os", Cat(u.sysname, " ", u.release, " ", u.machine));
  Line(out, "arch_bits", 64);
  Line(out, "monotonic_clock", "POSIX clock_gettime");
  Line(out, "multiplexing_api", "epoll");
  Line(out, "gcc_version", Cat(__GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__));
  Line(out, "process_id", getpid());
  Line(out, "process_supervised", "no");
  Line(out, "run_id", RunId());
  Line(out, "tcp_port", e.port());
  Line(out, "server_time_usec", Engine::WallMs() * 1000);
  Line(out, "uptime_in_seconds", uptime);
  Line(out, "uptime_in_days", uptime / 86400);
  Line(out, "hz", e.settings().hz.load());
  Line(out, "configured_hz", e.settings().hz.load());
  Line(out, "executable", "vessel-server");
  Line(out, "config_file", e.config_file());
  Line(out, "io_threads_active", 0);
  Line(out, "vessel_version", kVesselVersion);
  Line(out, "vessel_threads", e.worker_count());
  Line(out, "vessel_shards", e.db(0).shard_count());
}

void InfoClients(Engine& e, std::string* out) {
  Line(out, "connected_clients", e.connected_clients().load());
  Line(out, "cluster_connections", 0);
  Line(out, "maxclients", e.settings().maxclients.load());
  Line(out, "client_recent_max_input_buffer", 0);
  Line(out, "client_recent_max_output_buffer", 0);
  Line(out, "blocked_clients", e.blocked_clients());
  Line(out, "tracking_clients", 0);
  Line(out, "clients_in_timeout_table", e.blocked_clients());
}

void InfoMemory(Engine& e, std::string* out) {
  const memory::AllocatorStats st = memory::ReadStats();
  const int64_t rss = static_cast<int64_t>(memory::ProcessRss());
  const int64_t used = static_cast<int64_t>(st.allocated);
  const int64_t peak = e.PeakMemory(used);
  const int64_t total_system =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const int64_t maxmemory = e.settings().maxmemory.load();
  Line(out, "used_memory", used);
  Line(out, "used_memory_human", Human(used));
  Line(out, "used_memory_rss", rss);
  Line(out, "used_memory_rss_human", Human(rss));
  Line(out, "used_memory_peak", peak);
  Line(out, "used_memory_peak_human", Human(peak));
  Line(out, "used_memory_peak_perc",
       Cat(peak ? static_cast<int64_t>(100.0 * used / peak) : 100, "%"));
  Line(out, "used_memory_startup", 0);
  Line(out, "used_memory_dataset", used);
  Line(out, "allocator_allocated", static_cast<int64_t>(st.allocated));
  Line(out, "allocator_active", static_cast<int64_t>(st.active));
  Line(out, "allocator_resident", static_cast<int64_t>(st.resident));
  Line(out, "total_system_memory", total_system);
  Line(out, "total_system_memory_human", Human(total_system));
  Line(out, "used_memory_lua", 0);
  Line(out, "maxmemory", maxmemory);
  Line(out, "maxmemory_human", Human(maxmemory));
  {
    std::lock_guard l(e.settings().mu);
    Line(out, "maxmemory_policy", e.settings().maxmemory_policy);
  }
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.2f", st.allocated ? 1.0 * st.active / st.allocated : 1.0);
  Line(out, "allocator_frag_ratio", ratio);
  Line(out, "allocator_frag_bytes", static_cast<int64_t>(st.active - st.allocated));
  std::snprintf(ratio, sizeof(ratio), "%.2f", used ? 1.0 * rss / used : 1.0);
  Line(out, "mem_fragmentation_ratio", ratio);
  Line(out, "mem_allocator", st.jemalloc ? "jemalloc" : "libc");
  Line(out, "lazyfree_pending_objects", static_cast<int64_t>(LazyFree::Instance().pending()));
  Line(out, "lazyfreed_objects", static_cast<int64_t>(LazyFree::Instance().freed()));
}

void InfoPersistence(Engine& e, std::string* out) {
  Line(out, "loading", 0);
  Line(out, "async_loading", 0);
  Line(out, "rdb_changes_since_last_save", 0);
  Line(out, "rdb_bgsave_in_progress", 0);
  Line(out, "rdb_last_save_time", e.start_ms() / 1000);
  Line(out, "rdb_last_bgsave_status", "ok");
  Line(out, "aof_enabled", 0);
  Line(out, "aof_rewrite_in_progress", 0);
  Line(out, "aof_last_bgrewrite_status", "ok");
  Line(out, "aof_last_write_status", "ok");
}

void InfoStats(Engine& e, std::string* out) {
  Line(out, "total_connections_received",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.connections; }));
  Line(out, "total_commands_processed",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.commands; }));
  Line(out, "instantaneous_ops_per_sec", e.InstantaneousOps());
  Line(out, "total_net_input_bytes",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.net_input_bytes; }));
  Line(out, "total_net_output_bytes",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.net_output_bytes; }));
  Line(out, "rejected_connections",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.rejected_connections; }));
  Line(out, "expired_keys",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.expired_keys; }));
  Line(out, "evicted_keys",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.evicted_keys; }));
  Line(out, "keyspace_hits",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.keyspace_hits; }));
  Line(out, "keyspace_misses",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.keyspace_misses; }));
  Line(out, "pubsub_channels", 0);
  Line(out, "pubsub_patterns", 0);
  Line(out, "unexpected_error_replies", 0);  // errors from replicas/AOF: neither exists here
  Line(out, "total_error_replies",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.error_replies; }));
}

void InfoReplication(Engine&, std::string* out) {
  Line(out, "role", "master");
  Line(out, "connected_slaves", 0);
  Line(out, "master_failover_state", "no-failover");
  Line(out, "master_replid", RunId());
  Line(out, "master_replid2", std::string(40, '0'));
  Line(out, "master_repl_offset", 0);
  Line(out, "second_repl_offset", -1);
  Line(out, "repl_backlog_active", 0);
}

void InfoCpu(Engine&, std::string* out) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(ru.ru_stime.tv_sec),
                static_cast<long>(ru.ru_stime.tv_usec));
  Line(out, "used_cpu_sys", buf);
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(ru.ru_utime.tv_sec),
                static_cast<long>(ru.ru_utime.tv_usec));
  Line(out, "used_cpu_user", buf);
  Line(out, "used_cpu_sys_children", "0.000000");
  Line(out, "used_cpu_user_children", "0.000000");
}

void InfoModules(Engine& e, std::string* out) {
  for (const auto& m : e.registry().modules()) {
    out->append(Cat("module:name=", m->name, ",ver=", VersionNumber(m->version),
                    ",api=", VSL_ABI_MAJOR, ",filters=0,usedby=[],using=[],options=[]\r\n"));
  }
}

void InfoKeyspace(Engine& e, std::string* out) {
  for (auto& db : e.dbs()) {
    const uint64_t keys = db->KeyCount();
    if (keys == 0) continue;
    Line(out, Cat("db", db->index()),
         Cat("keys=", keys, ",expires=", db->VolatileCount(), ",avg_ttl=0"));
  }
}

struct Section {
  const char* name;
  void (*fn)(Engine&, std::string*);
  bool in_default;
};
constexpr Section kSections[] = {
    {"server", InfoServer, true},     {"clients", InfoClients, true},
    {"memory", InfoMemory, true},     {"persistence", InfoPersistence, true},
    {"stats", InfoStats, true},       {"replication", InfoReplication, true},
    {"cpu", InfoCpu, true},           {"modules", InfoModules, true},
    {"keyspace", InfoKeyspace, true},
};

// INFO [section [section ...]]
void CmdInfo(vsl_ctx* ctx) {
  bool all = ctx->argc == 1, everything = false;
  StrSet wanted;
  for (int i = 1; i < ctx->argc; ++i) {
    std::string s;
    AsciiLower(Arg(ctx, i), &s);
    if (s == "all" || s == "everything") {
      everything = true;
    } else if (s == "default") {
      all = true;
    } else {
      wanted.insert(s);
    }
  }
  std::string out;
  for (const Section& sec : kSections) {
    if (!(everything || (all && sec.in_default) || wanted.contains(sec.name))) continue;
    if (!out.empty()) out += "\r\n";
    std::string title = sec.name;
    title[0] = static_cast<char>(std::toupper(title[0]));
    out += Cat("# ", title, "\r\n");
    sec.fn(E(ctx), &out);
  }
  W(ctx).Verbatim("txt", out);
}

// ---- CONFIG ----

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

std::function<std::string(Engine&)> Const(std::string v) {
  return [v](Engine&) { return v; };
}

// Accepts only the value the server already has (e.g. save "" without persistence).
std::function<std::string(Engine&, std::string_view)> OnlyValue(std::string v) {
  return [v](Engine&, std::string_view x) -> std::string {
    return x == v ? "" : Cat("only '", v, "' is supported");
  };
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
      {"client-output-buffer-limit",
       [](Engine& e) {
         return Cat("normal ", e.settings().output_buffer_limit.load(),
                    " 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
       },
       nullptr},
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
      {"lazyfree-lazy-user-del", Const("no"), OnlyValue("no")},
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
      {"save", Const(""), OnlyValue("")},
      {"appendonly", Const("no"), OnlyValue("no")},
      {"appendfsync", Const("everysec"), nullptr},
      {"dbfilename", Const("dump.rdb"), nullptr},
      {"dir",
       [](Engine&) {
         char buf[4096];
         return std::string(getcwd(buf, sizeof(buf)) != nullptr ? buf : "");
       },
       nullptr},
      {"requirepass", Const(""), nullptr},
      {"protected-mode", Const("no"), nullptr},
      {"daemonize", Const("no"), nullptr},
      {"cluster-enabled", Const("no"), nullptr},
      {"notify-keyspace-events", Const(""), OnlyValue("")},
      {"vessel-shards", [](Engine& e) { return std::to_string(e.db(0).shard_count()); }, nullptr},
      {"lazyfree-threshold", Get(&RS::lazyfree_threshold),
       SetInt(&RS::lazyfree_threshold, 0, INT64_MAX)},
  };
  return params;
}

}  // namespace

bool ReadSetting(Engine& engine, std::string_view name, std::string* value) {
  for (const Param& p : Params()) {
    if (EqualsIgnoreCase(name, p.name)) {
      *value = p.get(engine);
      return true;
    }
  }
  return false;
}

namespace {

// CONFIG GET parameter [parameter ...]
void CmdConfigGet(vsl_ctx* ctx) {
  std::vector<const Param*> matched;
  for (int i = 2; i < ctx->argc; ++i) {
    for (const Param& p : Params()) {
      if (!GlobMatch(Arg(ctx, i), p.name, /*nocase=*/true)) continue;
      if (std::find(matched.begin(), matched.end(), &p) == matched.end()) matched.push_back(&p);
    }
  }
  W(ctx).Aggregate(resp::AggKind::kMap, static_cast<int64_t>(matched.size()));
  for (const Param* p : matched) {
    W(ctx).Bulk(p->name);
    W(ctx).Bulk(p->get(E(ctx)));
  }
}

// CONFIG SET parameter value [parameter value ...]
void CmdConfigSet(vsl_ctx* ctx) {
  if ((ctx->argc - 2) % 2 != 0) return ReplySyntaxError(ctx);
  std::vector<std::pair<const Param*, std::string_view>> todo;
  for (int i = 2; i < ctx->argc; i += 2) {
    const Param* found = nullptr;
    for (const Param& p : Params())
      if (EqualsIgnoreCase(Arg(ctx, i), p.name)) found = &p;
    if (found == nullptr)
      return W(ctx).ErrorLine(
          Cat("ERR Unknown option or number of arguments for CONFIG SET - '", Arg(ctx, i), "'"));
    auto fail = [&](std::string_view why) {
      W(ctx).ErrorLine(
          Cat("ERR CONFIG SET failed (possibly related to argument '", Arg(ctx, i), "') - ", why));
    };
    if (!found->set) return fail("can't set immutable config");
    for (auto& [p, v] : todo)
      if (p == found) return fail("duplicate parameter");
    todo.emplace_back(found, Arg(ctx, i + 1));
  }
  for (auto& [p, v] : todo) {
    const std::string err = p->set(E(ctx), v);
    if (!err.empty())
      return W(ctx).ErrorLine(
          Cat("ERR CONFIG SET failed (possibly related to argument '", p->name, "') - ", err));
  }
  ReplyOk(ctx);
}

// CONFIG RESETSTAT
void CmdConfigResetStat(vsl_ctx* ctx) {
  E(ctx).ResetStats();
  ReplyOk(ctx);
}

// CONFIG REWRITE
void CmdConfigRewrite(vsl_ctx* ctx) {
  W(ctx).ErrorLine("ERR CONFIG REWRITE is not supported; edit the TOML file");
}

void CmdConfigHelp(vsl_ctx* ctx) {
  static const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Not supported: the configuration file is TOML.",
      "HELP",
      "    Print this help."};
  W(ctx).Aggregate(resp::AggKind::kArray, std::size(kLines));
  for (const char* l : kLines) W(ctx).Simple(l);
}

void CmdContainer(vsl_ctx*) {}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterIntrospectionCommands(Registry& r) {
  const char* s = "server";
  AddBuiltins(r, {
                     {"INFO",
                      -1,
                      kL | kCmdSentinel,
                      {},
                      CmdInfo,
                      s,
                      "1.0.0",
                      "Returns information and statistics about the server.",
                      "[section [section ...]]",
                      "O(1)"},
                     {"CONFIG",
                      -2,
                      0,
                      {},
                      CmdContainer,
                      s,
                      "2.0.0",
                      "A container for server configuration commands.",
                      "",
                      "Depends on subcommand."},
                 });
  AddBuiltins(r,
              {
                  {"GET",
                   -3,
                   VSL_CMD_ADMIN | kL,
                   {},
                   CmdConfigGet,
                   s,
                   "2.0.0",
                   "Returns the effective values of configuration parameters.",
                   "parameter [parameter ...]",
                   "O(N) when N is the number of configuration parameters provided"},
                  {"SET",
                   -4,
                   VSL_CMD_ADMIN | kL,
                   {},
                   CmdConfigSet,
                   s,
                   "2.0.0",
                   "Sets configuration parameters in-flight.",
                   "parameter value [parameter value ...]",
                   "O(N) when N is the number of configuration parameters provided"},
                  {"RESETSTAT",
                   2,
                   VSL_CMD_ADMIN | kL,
                   {},
                   CmdConfigResetStat,
                   s,
                   "2.0.0",
                   "Resets the server's statistics.",
                   "",
                   "O(1)"},
                  {"REWRITE",
                   2,
                   VSL_CMD_ADMIN | kL,
                   {},
                   CmdConfigRewrite,
                   s,
                   "2.8.0",
                   "Persists the effective configuration to file.",
                   "",
                   "O(1)"},
                  {"HELP",
                   2,
                   kL,
                   {},
                   CmdConfigHelp,
                   s,
                   "5.0.0",
                   "Returns helpful text about the different subcommands.",
                   "",
                   "O(1)"},
              },
              "config");
  RegisterCommandCommand(r);
}

}  // namespace vessel::engine
