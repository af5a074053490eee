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

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

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
  if (const int64_t ms = e.ShutdownRemainingMs(); ms >= 0)
    Line(out, "shutdown_in_milliseconds", ms);
  Line(out, "vessel_version", kVesselVersion);
  Line(out, "vessel_threads", e.worker_count());
  Line(out, "vessel_shards", e.db(0).shard_count());
}

void InfoClients(Engine& e, std::string* out) {
  Line(out, "connected_clients", e.connected_clients().load());
  Line(out, "cluster_connections",
       e.cluster() != nullptr ? static_cast<int64_t>(e.cluster()->Connections()) : 0);
  Line(out, "maxclients", e.settings().maxclients.load());
  Line(out, "client_recent_max_input_buffer", 0);
  Line(out, "client_recent_max_output_buffer", 0);
  Line(out, "blocked_clients", e.blocked_clients());
  Line(out, "tracking_clients",
       e.messaging() != nullptr ? e.messaging()->tracking_clients.load(std::memory_order_relaxed)
                                : 0);
  Line(out, "clients_in_timeout_table", e.blocked_clients());
}

std::string Ratio(int64_t a, int64_t b) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", b != 0 ? 1.0 * a / b : 1.0);
  return text;
}

// Redis 7.0's INFO memory, field for field. The overhead is what Redis counts as such (buffers of
// clients and replicas, the backlog, the cluster bus, script caches); Vessel has no startup
// allocation of its own to subtract (used_memory_startup 0) and counts its keyspace's tables as
// dataset.
void InfoMemory(Engine& e, std::string* out) {
  const memory::AllocatorStats st = memory::ReadStats();
  const int64_t rss = static_cast<int64_t>(memory::ProcessRss());
  const int64_t used = static_cast<int64_t>(st.allocated);
  const int64_t active = static_cast<int64_t>(st.active);
  const int64_t resident = static_cast<int64_t>(st.resident);
  const int64_t peak = e.PeakMemory(used);
  const int64_t total_system =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const int64_t maxmemory = e.settings().maxmemory.load();
  int64_t clients_normal = 0, clients_replicas = 0;
  e.ForEachSession([&](Session* s) {
    const auto bytes = static_cast<int64_t>(ClientMemory(s));
    (s->repl_role() == kReplRoleReplica ? clients_replicas : clients_normal) += bytes;
  });
  int64_t backlog = 0, queued = 0;
  if (e.repl() != nullptr) e.repl()->Memory(&backlog, &queued);
  clients_replicas += queued;
  const int64_t links =
      e.cluster() != nullptr ? static_cast<int64_t>(e.cluster()->LinksMemory()) : 0;
  const ScriptMemory sm =
      e.script_figures() != nullptr ? e.script_figures()->Memory() : ScriptMemory{};
  const int64_t overhead = std::min(
      used, backlog + clients_replicas + clients_normal + links + sm.scripts_eval + sm.functions);
  const int64_t dataset = used - overhead;
  Line(out, "used_memory", used);
  Line(out, "used_memory_human", Human(used));
  Line(out, "used_memory_rss", rss);
  Line(out, "used_memory_rss_human", Human(rss));
  Line(out, "used_memory_peak", peak);
  Line(out, "used_memory_peak_human", Human(peak));
  char perc[32];
  std::snprintf(perc, sizeof(perc), "%.2f%%", peak != 0 ? 100.0 * used / peak : 100.0);
  Line(out, "used_memory_peak_perc", perc);
  Line(out, "used_memory_overhead", overhead);
  Line(out, "used_memory_startup", 0);
  Line(out, "used_memory_dataset", dataset);
  std::snprintf(perc, sizeof(perc), "%.2f%%", used != 0 ? 100.0 * dataset / used : 0.0);
  Line(out, "used_memory_dataset_perc", perc);
  Line(out, "allocator_allocated", used);
  Line(out, "allocator_active", active);
  Line(out, "allocator_resident", resident);
  Line(out, "total_system_memory", total_system);
  Line(out, "total_system_memory_human", Human(total_system));
  Line(out, "used_memory_lua", sm.vm_eval);
  Line(out, "used_memory_vm_eval", sm.vm_eval);
  Line(out, "used_memory_lua_human", Human(sm.vm_eval));
  Line(out, "used_memory_scripts_eval", sm.scripts_eval);
  Line(out, "number_of_cached_scripts", sm.cached_scripts);
  Line(out, "number_of_functions", sm.function_count);
  Line(out, "number_of_libraries", sm.library_count);
  Line(out, "used_memory_vm_functions", sm.vm_functions);
  Line(out, "used_memory_vm_total", sm.vm_eval + sm.vm_functions);
  Line(out, "used_memory_vm_total_human", Human(sm.vm_eval + sm.vm_functions));
  Line(out, "used_memory_functions", sm.functions);
  Line(out, "used_memory_scripts", sm.scripts_eval + sm.functions);
  Line(out, "used_memory_scripts_human", Human(sm.scripts_eval + sm.functions));
  Line(out, "maxmemory", maxmemory);
  Line(out, "maxmemory_human", Human(maxmemory));
  {
    std::lock_guard l(e.settings().mu);
    Line(out, "maxmemory_policy", e.settings().maxmemory_policy);
  }
  Line(out, "allocator_frag_ratio", Ratio(active, used));
  Line(out, "allocator_frag_bytes", active - used);
  Line(out, "allocator_rss_ratio", Ratio(resident, active));
  Line(out, "allocator_rss_bytes", resident - active);
  Line(out, "rss_overhead_ratio", Ratio(rss, resident));
  Line(out, "rss_overhead_bytes", rss - resident);
  Line(out, "mem_fragmentation_ratio", Ratio(rss, used));
  Line(out, "mem_fragmentation_bytes", rss - used);
  // Redis 7.0 leaves the replicas' buffers and the AOF buffer out of what eviction counts;
  // Vessel's eviction counts every allocated byte (evict.cc).
  Line(out, "mem_not_counted_for_evict", 0);
  Line(out, "mem_replication_backlog", backlog);
  Line(out, "mem_total_replication_buffers", backlog + queued);
  Line(out, "mem_clients_slaves", clients_replicas);
  Line(out, "mem_clients_normal", clients_normal);
  Line(out, "mem_cluster_links", links);
  Line(out, "mem_aof_buffer", 0);  // appends are written out at the end of each batch
  std::string_view version = st.version != nullptr ? st.version : "";
  version = version.substr(0, version.find('-'));  // Redis: jemalloc-5.3.0
  Line(out, "mem_allocator",
       !st.jemalloc      ? std::string("libc")
       : version.empty() ? std::string("jemalloc")
                         : Cat("jemalloc-", version));
  Line(out, "active_defrag_running", 0);
  Line(out, "lazyfree_pending_objects", static_cast<int64_t>(LazyFree::Instance().pending()));
  Line(out, "lazyfreed_objects", static_cast<int64_t>(LazyFree::Instance().freed()));
}

void InfoPersistence(Engine& e, std::string* out) {
  if (e.persist() != nullptr) return e.persist()->Info(out);  // host/persist
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
  Line(out, "expired_subkeys",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.expired_subkeys; }));
  Line(out, "evicted_keys",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.evicted_keys; }));
  Line(out, "keyspace_hits",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.keyspace_hits; }));
  Line(out, "keyspace_misses",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.keyspace_misses; }));
  const Messaging::Counts m =
      e.messaging() != nullptr ? e.messaging()->GetCounts() : Messaging::Counts();
  Line(out, "pubsub_channels", m.channels);
  Line(out, "pubsub_patterns", m.patterns);
  Line(out, "pubsubshard_channels", m.shard_channels);
  Line(out, "tracking_total_keys", m.tracking_keys);
  Line(out, "tracking_total_items", m.tracking_items);
  Line(out, "tracking_total_prefixes", m.tracking_prefixes);
  if (e.repl() != nullptr) {
    e.repl()->InfoStats(out);
  } else {
    Line(out, "sync_full", 0);
    Line(out, "sync_partial_ok", 0);
    Line(out, "sync_partial_err", 0);
  }
  Line(out, "unexpected_error_replies", 0);  // errors from replicas/AOF: neither exists here
  Line(out, "total_error_replies",
       SumStats(
           e, [](WorkerStats & s) -> auto& { return s.error_replies; }));
}

void InfoReplication(Engine& e, std::string* out) {
  if (e.repl() != nullptr) return e.repl()->Info(out);
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

// The commands with counters, summed over the workers, in name order.
struct CommandTotals {
  const CommandSpec* cmd;
  uint64_t calls, nsec, rejected, failed;
  std::unique_ptr<LatencyHistogram> histogram;  // null when never timed
};
std::vector<CommandTotals> SumCommands(Engine& e) {
  std::vector<CommandTotals> out;
  for (const CommandSpec* c : e.registry().AllCommands()) {
    CommandTotals t{c, 0, 0, 0, 0, nullptr};
    for (int w = 0; w <= e.worker_count(); ++w) {
      const CommandCounters& k = e.stats(w).by_command[c->id];
      t.calls += k.calls.load(std::memory_order_relaxed);
      t.nsec += k.nsec.load(std::memory_order_relaxed);
      t.rejected += k.rejected.load(std::memory_order_relaxed);
      t.failed += k.failed.load(std::memory_order_relaxed);
      if (const LatencyHistogram* h = k.histogram.load(std::memory_order_acquire)) {
        if (t.histogram == nullptr) t.histogram = std::make_unique<LatencyHistogram>();
        t.histogram->MergeFrom(*h);
      }
    }
    if (t.calls != 0 || t.rejected != 0 || t.failed != 0 ||
        (t.histogram != nullptr && t.histogram->count() != 0))
      out.push_back(std::move(t));
  }
  return out;
}

void InfoCommandStats(Engine& e, std::string* out) {
  for (const CommandTotals& t : SumCommands(e)) {
    if (t.calls == 0 && t.rejected == 0 && t.failed == 0) continue;
    const uint64_t usec = t.nsec / 1000;
    char per_call[32];
    std::snprintf(per_call, sizeof(per_call), "%.2f",
                  t.calls == 0 ? 0.0 : static_cast<double>(t.nsec) / 1000.0 / t.calls);
    Line(out, Cat("cmdstat_", t.cmd->name),
         Cat("calls=", t.calls, ",usec=", usec, ",usec_per_call=", per_call,
             ",rejected_calls=", t.rejected, ",failed_calls=", t.failed));
  }
}

void InfoErrorStats(Engine& e, std::string* out) {
  for (const auto& [code, count] : e.error_counts().Snapshot())
    Line(out, Cat("errorstat_", code), Cat("count=", count));
}

// "50 99 99.9" -> the percentiles and their labels as Redis prints them ("p99.9").
std::vector<std::pair<double, std::string>> InfoPercentiles(Engine& e) {
  std::string text;
  ReadSetting(e, "latency-tracking-info-percentiles", &text);
  std::vector<std::pair<double, std::string>> out;
  for (const std::string& word : SplitWords(text)) {
    double p;
    if (!ParseDouble(word, &p)) continue;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%f", p);
    std::string label = buf;
    if (label.find('.') != std::string::npos) {
      while (label.back() == '0') label.pop_back();
      if (label.back() == '.') label.pop_back();
    }
    out.emplace_back(p, "p" + label);
  }
  return out;
}

void InfoLatencyStats(Engine& e, std::string* out) {
  std::string on;
  ReadSetting(e, "latency-tracking", &on);
  if (on != "yes") return;
  const auto percentiles = InfoPercentiles(e);
  for (const CommandTotals& t : SumCommands(e)) {
    if (t.histogram == nullptr || t.histogram->count() == 0) continue;
    std::string values;
    for (const auto& [p, label] : percentiles) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%s=%.3f", label.c_str(),
                    static_cast<double>(t.histogram->ValueAtPercentile(p)) / 1000.0);
      values = Cat(values, values.empty() ? "" : ",", buf);
    }
    Line(out, Cat("latency_percentiles_usec_", t.cmd->name), values);
  }
}

void InfoCluster(Engine& e, std::string* out) {
  Line(out, "cluster_enabled", e.cluster() != nullptr ? 1 : 0);
  if (e.cluster() != nullptr) e.cluster()->Info(out);
}

struct Section {
  const char* name;
  const char* title;
  void (*fn)(Engine&, std::string*);
  bool in_default;
};
// Redis's sections in Redis's order; `default` is what INFO without arguments prints.
constexpr Section kSections[] = {
    {"server", "Server", InfoServer, true},
    {"clients", "Clients", InfoClients, true},
    {"memory", "Memory", InfoMemory, true},
    {"persistence", "Persistence", InfoPersistence, true},
    {"stats", "Stats", InfoStats, true},
    {"replication", "Replication", InfoReplication, true},
    {"cpu", "CPU", InfoCpu, true},
    {"modules", "Modules", InfoModules, true},
    {"commandstats", "Commandstats", InfoCommandStats, false},
    {"errorstats", "Errorstats", InfoErrorStats, true},
    {"latencystats", "Latencystats", InfoLatencyStats, false},
    {"cluster", "Cluster", InfoCluster, true},
    {"keyspace", "Keyspace", InfoKeyspace, true},
};

// INFO [section [section ...]]
void CmdInfo(CommandCtx* ctx) {
  bool defaults = ctx->argc == 1, all = false;
  StrSet wanted;
  for (int i = 1; i < ctx->argc; ++i) {
    std::string s;
    AsciiLower(Arg(ctx, i), &s);
    if (s == "all" || s == "everything") {
      all = true;
    } else if (s == "default") {
      defaults = true;
    } else {
      wanted.insert(s == "module_list" ? "modules" : s);
    }
  }
  std::string out;
  for (const Section& sec : kSections) {
    if (!(all || (defaults && sec.in_default) || wanted.contains(sec.name))) continue;
    if (!out.empty()) out += "\r\n";
    out += Cat("# ", sec.title, "\r\n");
    sec.fn(E(ctx), &out);
  }
  W(ctx).Verbatim("txt", out);
}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterIntrospectionCommands(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "INFO", .arity = -1, .flags = kL | kCmdSentinel, .fn = CmdInfo, .group = s,
       .since = "1.0.0", .summary = "Returns information and statistics about the server.",
       .syntax = "[section [section ...]]", .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_shards response_policy:special",
       .acl = "dangerous"},
  });
  // clang-format on
  RegisterCommandCommand(r);
}

}  // namespace vessel::engine
