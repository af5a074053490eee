// MEMORY (USAGE STATS PURGE MALLOC-STATS DOCTOR HELP): memory diagnostics.
#include "host/engine/builtins.h"
#include "host/engine/memory.h"

namespace vessel::engine {

namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// MEMORY USAGE key [SAMPLES count]
void CmdMemoryUsage(CommandCtx* ctx) {
  if (ctx->argc == 5) {
    int64_t samples;
    if (!EqualsIgnoreCase(Arg(ctx, 3), "samples")) return ReplySyntaxError(ctx);
    if (!IntArg(ctx, 4, &samples)) return;
    if (samples < 0) return ReplySyntaxError(ctx);
  } else if (ctx->argc != 3) {
    return ReplySyntaxError(ctx);
  }
  const Entry* e = LookupKey(ctx, 0);
  if (e == nullptr) return W(ctx).Null();
  const vsl_type* t = E(ctx).registry().TypeById(e->type_id());
  size_t bytes = e->AllocatedBytes() + sizeof(void*);  // the entry and its bucket slot
  {
    memory::ModuleScope scope(t->module->id);
    bytes += t->desc.mem_usage(nullptr, e->value);
  }
  W(ctx).Int(static_cast<int64_t>(bytes));
}

// MEMORY STATS
void CmdMemoryStats(CommandCtx* ctx) {
  const memory::AllocatorStats st = memory::ReadStats();
  const size_t rss = memory::ProcessRss();
  uint64_t keys = 0;
  for (auto& db : E(ctx).dbs()) keys += db->KeyCount();
  const auto& mods = E(ctx).registry().modules();
  W(ctx).Aggregate(resp::AggKind::kMap, 12 + static_cast<int64_t>(mods.size()));
  auto kv = [&](std::string_view k, int64_t v) {
    W(ctx).Bulk(k);
    W(ctx).Int(v);
  };
  kv("peak.allocated", static_cast<int64_t>(st.allocated));
  kv("total.allocated", static_cast<int64_t>(st.allocated));
  kv("startup.allocated", 0);
  kv("clients.normal", static_cast<int64_t>(E(ctx).connected_clients().load()));
  kv("keys.count", static_cast<int64_t>(keys));
  kv("keys.bytes-per-key", keys ? static_cast<int64_t>(st.allocated / keys) : 0);
  kv("allocator.allocated", static_cast<int64_t>(st.allocated));
  kv("allocator.active", static_cast<int64_t>(st.active));
  kv("allocator.resident", static_cast<int64_t>(st.resident));
  kv("allocator.mapped", static_cast<int64_t>(st.mapped));
  kv("rss", static_cast<int64_t>(rss));
  W(ctx).Bulk("allocator.name");
  W(ctx).Bulk(st.jemalloc ? "jemalloc" : "libc");
  for (const auto& m : mods) kv(Cat("module.", m->name, ".allocated"), memory::ModuleBytes(m->id));
}

// MEMORY PURGE
void CmdMemoryPurge(CommandCtx* ctx) {
  memory::Purge();
  ReplyOk(ctx);
}

// MEMORY MALLOC-STATS
void CmdMemoryMallocStats(CommandCtx* ctx) { W(ctx).Verbatim("txt", memory::AllocatorReport()); }

// MEMORY DOCTOR
void CmdMemoryDoctor(CommandCtx* ctx) {
  W(ctx).Verbatim("txt",
                  "Hi Sam, I can't find any memory issue in your instance. I can only "
                  "account for what occurs on this base.");
}

void CmdMemoryHelp(CommandCtx* ctx) {
  ReplyHelp(ctx, {"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DOCTOR",
                  "    Return memory problems reports.", "MALLOC-STATS",
                  "    Return internal statistics report from the memory allocator.", "PURGE",
                  "    Attempt to purge dirty pages for reclamation by the allocator.", "STATS",
                  "    Return information about the memory usage of the server.",
                  "USAGE <key> [SAMPLES <count>]",
                  "    Return memory in bytes used by <key> and its value.", "HELP",
                  "    Print this help."});
}

void CmdContainer(CommandCtx*) {}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterMemoryCommands(Registry& r) {
  const char* s = "server";
  AddBuiltins(r, {
                     {"MEMORY",
                      -2,
                      0,
                      {},
                      CmdContainer,
                      s,
                      "4.0.0",
                      "A container for memory diagnostics commands.",
                      "",
                      "Depends on subcommand."},
                 });
  AddBuiltins(r,
              {
                  {"USAGE",
                   -3,
                   VSL_CMD_READONLY,
                   {KeyAt(2, VSL_KS_RO)},
                   CmdMemoryUsage,
                   s,
                   "4.0.0",
                   "Estimates the memory usage of a key.",
                   "key [SAMPLES count]",
                   "O(N) where N is the number of samples"},
                  {"STATS",
                   2,
                   0,
                   {},
                   CmdMemoryStats,
                   s,
                   "4.0.0",
                   "Returns details about memory usage.",
                   "",
                   "O(1)",
                   nullptr,
                   "nondeterministic_output request_policy:all_shards response_policy:special"},
                  {"PURGE",
                   2,
                   0,
                   {},
                   CmdMemoryPurge,
                   s,
                   "4.0.0",
                   "Asks the allocator to release memory.",
                   "",
                   "Depends on how much memory is allocated, could be slow",
                   nullptr,
                   "request_policy:all_shards response_policy:all_succeeded"},
                  {"MALLOC-STATS",
                   2,
                   0,
                   {},
                   CmdMemoryMallocStats,
                   s,
                   "4.0.0",
                   "Returns the allocator statistics.",
                   "",
                   "Depends on how much memory is allocated, could be slow",
                   nullptr,
                   "nondeterministic_output request_policy:all_shards response_policy:special"},
                  {"DOCTOR",
                   2,
                   0,
                   {},
                   CmdMemoryDoctor,
                   s,
                   "4.0.0",
                   "Outputs a memory problems report.",
                   "",
                   "O(1)",
                   nullptr,
                   "nondeterministic_output request_policy:all_shards response_policy:special"},
                  {"HELP",
                   2,
                   kL,
                   {},
                   CmdMemoryHelp,
                   s,
                   "4.0.0",
                   "Returns helpful text about the different subcommands.",
                   "",
                   "O(1)"},
              },
              "memory");
}

}  // namespace vessel::engine
