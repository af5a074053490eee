// Watching the server at work: SLOWLOG, LATENCY and MONITOR, with Redis 7.0's replies.
//
// MONITOR: every command a worker executes (but admin ones, as Redis hides them) is formatted
// once and posted to the workers of the monitoring clients, so each monitor sees the commands of
// one client in the order they ran. Deliberate difference from Redis: commands of different
// workers may interleave in a different order than their wall-clock order (each line carries its
// time stamp).
#include <sys/time.h>

#include <cmath>
#include <cstdio>

#include "host/engine/access.h"
#include "host/engine/builtins.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// ---- SLOWLOG ----

// SLOWLOG GET [count]
void CmdSlowlogGet(CommandCtx* ctx) {
  int64_t count = 10;
  if (ctx->argc == 3 && (!ParseInt64(Arg(ctx, 2), &count) || count < -1)) {
    return W(ctx).ErrorLine("ERR count should be greater than or equal to -1");
  }
  const std::vector<SlowLogEntry> entries = E(ctx).slowlog().Get(count);
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(entries.size()));
  for (const SlowLogEntry& e : entries) {
    W(ctx).Aggregate(resp::AggKind::kArray, 6);
    W(ctx).Int(e.id);
    W(ctx).Int(e.unix_seconds);
    W(ctx).Int(e.duration_us);
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(e.args.size()));
    for (const std::string& a : e.args) W(ctx).Bulk(a);
    W(ctx).Bulk(e.peer);
    W(ctx).Bulk(e.name);
  }
}

// SLOWLOG LEN
void CmdSlowlogLen(CommandCtx* ctx) { W(ctx).Int(static_cast<int64_t>(E(ctx).slowlog().size())); }

// SLOWLOG RESET
void CmdSlowlogReset(CommandCtx* ctx) {
  E(ctx).slowlog().Reset();
  ReplyOk(ctx);
}

void CmdSlowlogHelp(CommandCtx* ctx) {
  ReplyHelp(ctx,
            {"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "GET [<count>]",
             "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
             "    Entries are made of:",
             "    id, timestamp, time in microseconds, arguments array, client IP and port,",
             "    client name", "LEN", "    Return the length of the slowlog.", "RESET",
             "    Reset the slowlog.", "HELP", "    Prints this help."});
}

// ---- LATENCY ----

// LATENCY LATEST
void CmdLatencyLatest(CommandCtx* ctx) {
  const auto events = E(ctx).latency_monitor().Snapshot();
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(events.size()));
  for (const auto& [name, e] : events) {
    W(ctx).Aggregate(resp::AggKind::kArray, 4);
    W(ctx).Bulk(name);
    W(ctx).Int(e.samples.back().time);
    W(ctx).Int(e.samples.back().latency_ms);
    W(ctx).Int(e.max_ms);
  }
}

// LATENCY HISTORY event
void CmdLatencyHistory(CommandCtx* ctx) {
  const auto events = E(ctx).latency_monitor().Snapshot();
  auto it = events.find(std::string(Arg(ctx, 2)));
  if (it == events.end()) return W(ctx).Aggregate(resp::AggKind::kArray, 0);
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(it->second.samples.size()));
  for (const LatencyMonitor::Sample& s : it->second.samples) {
    W(ctx).Aggregate(resp::AggKind::kArray, 2);
    W(ctx).Int(s.time);
    W(ctx).Int(s.latency_ms);
  }
}

// LATENCY RESET [event [event ...]]
void CmdLatencyReset(CommandCtx* ctx) {
  std::vector<std::string> events;
  for (int i = 2; i < ctx->argc; ++i) events.emplace_back(Arg(ctx, i));
  W(ctx).Int(E(ctx).latency_monitor().Reset(events));
}

// LATENCY GRAPH event: the samples as a column chart, newest on the right.
void CmdLatencyGraph(CommandCtx* ctx) {
  const auto events = E(ctx).latency_monitor().Snapshot();
  auto it = events.find(std::string(Arg(ctx, 2)));
  if (it == events.end() || it->second.samples.empty()) {
    return W(ctx).ErrorLine(Cat("ERR No samples available for event '", Arg(ctx, 2), "'"));
  }
  const auto& samples = it->second.samples;
  int64_t lo = samples.front().latency_ms, hi = lo;
  for (const auto& s : samples) {
    lo = std::min(lo, s.latency_ms);
    hi = std::max(hi, s.latency_ms);
  }
  std::string out = Cat(Arg(ctx, 2), " - high ", hi, " ms, low ", lo, " ms (all time high ",
                        it->second.max_ms, " ms)\n");
  out += std::string(80, '-') + "\n";
  constexpr int kRows = 4;
  for (int row = kRows; row >= 1; --row) {
    for (const auto& s : samples) {
      const double level =
          hi == lo ? kRows : 1.0 + (kRows - 1) * double(s.latency_ms - lo) / double(hi - lo);
      out += level >= row ? '#' : ' ';
    }
    out += '\n';
  }
  W(ctx).Verbatim("txt", out);
}

// LATENCY DOCTOR
void CmdLatencyDoctor(CommandCtx* ctx) {
  const auto events = E(ctx).latency_monitor().Snapshot();
  if (events.empty()) {
    return W(ctx).Verbatim(
        "txt",
        "Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
        "the slightest bit. I honestly think you ought to sleep tonight.\n");
  }
  std::string out =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
      "about it, do you Dave?\n\n";
  int n = 0;
  for (const auto& [name, e] : events) {
    int64_t sum = 0;
    for (const auto& s : e.samples) sum += s.latency_ms;
    out += Cat(++n, ". ", name, ": ", e.samples.size(), " latency spikes (average ",
               sum / static_cast<int64_t>(e.samples.size()), "ms, mean deviation 0ms, period ",
               "0 sec). Worst all time event ", e.max_ms, "ms.\n");
  }
  out +=
      "\nI have a few advices for you:\n\n- Check your slow log (SLOWLOG GET) for the commands "
      "that took long.\n";
  W(ctx).Verbatim("txt", out);
}

// LATENCY HISTOGRAM [command [command ...]]
void CmdLatencyHistogram(CommandCtx* ctx) {
  Engine& e = E(ctx);
  std::vector<const CommandSpec*> cmds;
  if (ctx->argc == 2) {
    cmds = e.registry().AllCommands();
  } else {
    for (int i = 2; i < ctx->argc; ++i) {
      std::string name;
      AsciiLower(Arg(ctx, i), &name);
      const CommandSpec* c = nullptr;
      const size_t bar = name.find('|');
      if (bar == std::string::npos) {
        c = e.registry().Find(name);
      } else if (const CommandSpec* parent = e.registry().Find(name.substr(0, bar))) {
        auto it = parent->subcommands.find(name.substr(bar + 1));
        if (it != parent->subcommands.end()) c = it->second.get();
      }
      if (c != nullptr && std::find(cmds.begin(), cmds.end(), c) == cmds.end()) {
        cmds.push_back(c);
        if (bar == std::string::npos)
          for (const auto& [sub, sc] : c->subcommands) cmds.push_back(sc.get());
      }
    }
  }
  struct Row {
    const CommandSpec* cmd;
    LatencyHistogram h;
  };
  std::vector<std::unique_ptr<Row>> rows;
  for (const CommandSpec* c : cmds) {
    auto row = std::make_unique<Row>();
    row->cmd = c;
    for (int w = 0; w <= e.worker_count(); ++w) {
      if (const LatencyHistogram* h = e.stats(w).by_command[c->id].histogram.load())
        row->h.MergeFrom(*h);
    }
    if (row->h.count() != 0) rows.push_back(std::move(row));
  }
  W(ctx).Aggregate(resp::AggKind::kMap, static_cast<int64_t>(rows.size()));
  for (const auto& row : rows) {
    W(ctx).Bulk(row->cmd->name);
    W(ctx).Aggregate(resp::AggKind::kMap, 2);
    W(ctx).Bulk("calls");
    W(ctx).Int(static_cast<int64_t>(row->h.count()));
    W(ctx).Bulk("histogram_usec");
    const auto buckets = row->h.CumulativePowersOfTwo();
    W(ctx).Aggregate(resp::AggKind::kMap, static_cast<int64_t>(buckets.size()));
    for (const auto& [bound_ns, cumulative] : buckets) {
      W(ctx).Int(static_cast<int64_t>(bound_ns / 1000));
      W(ctx).Int(static_cast<int64_t>(cumulative));
    }
  }
}

void CmdLatencyHelp(CommandCtx* ctx) {
  ReplyHelp(ctx, {"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DOCTOR",
                  "    Return a human readable latency analysis report.", "GRAPH <event>",
                  "    Return an ASCII latency graph for the <event> class.", "HISTORY <event>",
                  "    Return time-latency samples for the <event> class.", "LATEST",
                  "    Return the latest latency samples for all events.", "RESET [<event> ...]",
                  "    Reset latency data of one or more <event> classes.",
                  "    (default: reset all data for all event classes)", "HISTOGRAM [COMMAND ...]",
                  "    Return a cumulative distribution of latencies in the format of a "
                  "histogram for the specified command names.",
                  "    If no commands are specified then all histograms are replied.", "HELP",
                  "    Prints this help."});
}

// ---- MONITOR ----

// MONITOR
void CmdMonitor(CommandCtx* ctx) {
  if (ctx->in_exec) return W(ctx).ErrorLine("ERR MONITOR isn't allowed for DENY BLOCKING client");
  if (!E(ctx).AddMonitor(&S(ctx))) return;  // already monitoring: nothing more (Redis: no reply)
  ReplyOk(ctx);
}

void CmdContainer(CommandCtx*) {}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

// "+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"" for the command in ctx.
std::string MonitorLine(const CommandCtx& ctx) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  char head[64];
  std::snprintf(head, sizeof(head), "+%ld.%06ld [", static_cast<long>(tv.tv_sec),
                static_cast<long>(tv.tv_usec));
  // The database after the command, as Redis feeds monitors once it ran (SELECT shows its own).
  const int db = ctx.session != nullptr ? ctx.session->db() : ctx.db->index();
  std::string line =
      Cat(head, db, " ", ctx.session != nullptr ? ctx.session->peer() : std::string("lua"), "]");
  for (int i = 0; i < ctx.argc; ++i) {
    line += ' ';
    line += RedactedArgument(*ctx.cmd, ctx.argv, ctx.argc, i) ? std::string("\"(redacted)\"")
                                                              : QuoteRepr(ctx.argv[i]);
  }
  line += "\r\n";
  return line;
}

void RegisterMonitorCommands(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "SLOWLOG", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s,
       .since = "2.2.12", .summary = "A container for slow log commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
      {.name = "LATENCY", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s,
       .since = "2.8.13", .summary = "A container for latency diagnostics commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
      {.name = "MONITOR", .arity = 1, .flags = VSL_CMD_ADMIN | VSL_CMD_NOSCRIPT | kL,
       .fn = CmdMonitor, .group = s, .since = "1.0.0",
       .summary = "Listens for all requests received by the server in real-time.", .syntax = "",
       .complexity = ""},
  });
  // clang-format on
  const uint64_t kA = VSL_CMD_ADMIN | kL;
  // clang-format off
  AddBuiltins(r, {
      {.name = "GET", .arity = -2, .flags = kA, .fn = CmdSlowlogGet, .group = s, .since = "2.2.12",
       .summary = "Returns the slow log's entries.", .syntax = "[count]",
       .complexity = "O(N) where N is the number of entries returned",
       .tips = "request_policy:all_nodes nondeterministic_output"},
      {.name = "LEN", .arity = 2, .flags = kA, .fn = CmdSlowlogLen, .group = s, .since = "2.2.12",
       .summary = "Returns the number of entries in the slow log.", .syntax = "",
       .complexity = "O(1)",
       .tips = "request_policy:all_nodes response_policy:agg_sum nondeterministic_output"},
      {.name = "RESET", .arity = 2, .flags = kA, .fn = CmdSlowlogReset, .group = s,
       .since = "2.2.12", .summary = "Clears all entries from the slow log.", .syntax = "",
       .complexity = "O(N) where N is the number of entries in the slowlog",
       .tips = "request_policy:all_nodes response_policy:all_succeeded"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdSlowlogHelp, .group = s, .since = "6.2.0",
       .summary = "Show helpful text about the different subcommands", .syntax = "",
       .complexity = "O(1)"},
  }, "slowlog");
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "LATEST", .arity = 2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyLatest,
       .group = s, .since = "2.8.13",
       .summary = "Returns the latest latency samples for all events.", .syntax = "",
       .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
      {.name = "HISTORY", .arity = 3, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyHistory,
       .group = s, .since = "2.8.13", .summary = "Returns timestamp-latency samples for an event.",
       .syntax = "event", .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
      {.name = "RESET", .arity = -2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyReset,
       .group = s, .since = "2.8.13", .summary = "Resets the latency data for one or more events.",
       .syntax = "[event [event ...]]", .complexity = "O(1)",
       .tips = "request_policy:all_nodes response_policy:all_succeeded"},
      {.name = "GRAPH", .arity = 3, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyGraph,
       .group = s, .since = "2.8.13", .summary = "Returns a latency graph for an event.",
       .syntax = "event", .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
      {.name = "DOCTOR", .arity = 2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyDoctor,
       .group = s, .since = "2.8.13",
       .summary = "Returns a human-readable latency analysis report.", .syntax = "",
       .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
      {.name = "HISTOGRAM", .arity = -2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = CmdLatencyHistogram,
       .group = s, .since = "7.0.0",
       .summary = "Returns the cumulative distribution of latencies of a subset or all commands.",
       .syntax = "[command [command ...]]",
       .complexity = "O(N) where N is the number of commands with latency information being "
         "retrieved.",
       .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdLatencyHelp, .group = s, .since = "2.8.13",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "latency");
  // clang-format on
}

}  // namespace vessel::engine

namespace vessel::engine {

// ---- the monitors' registry ----

bool Engine::AddMonitor(Session* s) {
  if (s->monitor_) return false;
  s->monitor_ = true;
  std::lock_guard l(monitors_mu_);
  monitors_.emplace_back(s->id(), s->worker());
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
  return true;
}

void Engine::RemoveMonitor(Session* s) {
  if (!s->monitor_) return;
  s->monitor_ = false;
  std::lock_guard l(monitors_mu_);
  std::erase_if(monitors_, [&](const auto& m) { return m.first == s->id(); });
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

// Posts the command's MONITOR line to every monitor's worker, where it is appended to the
// monitor's output; lines from one worker arrive in order.
void Engine::FeedMonitors(const CommandCtx& ctx) {
  std::vector<std::pair<uint64_t, int>> targets;
  {
    std::lock_guard l(monitors_mu_);
    targets = monitors_;
  }
  if (targets.empty()) return;
  auto line = std::make_shared<const std::string>(MonitorLine(ctx));
  for (const auto& [id, worker] : targets) {
    if (worker >= worker_count()) continue;
    PostToWorker(worker, [this, id = id, worker = worker, line] {
      auto& sessions = workers_[worker]->sessions;
      auto it = sessions.find(id);
      if (it == sessions.end() || !it->second->monitor_ || it->second->closing()) return;
      it->second->out_ += *line;
      it->second->io()->Wake();
    });
  }
}

}  // namespace vessel::engine
