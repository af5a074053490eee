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
  // clang-format off
  AddBuiltins(r, {
      {.name = "MEMORY", .arity = -2, .flags = 0, .fn = CmdContainer, .group = s, .since = "4.0.0",
       .summary = "A container for memory diagnostics commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "USAGE", .arity = -3, .flags = VSL_CMD_READONLY, .keys = {KeyAt(2, VSL_KS_RO)},
       .fn = CmdMemoryUsage, .group = s, .since = "4.0.0",
       .summary = "Estimates the memory usage of a key.", .syntax = "key [SAMPLES count]",
       .complexity = "O(N) where N is the number of samples"},
      {.name = "STATS", .arity = 2, .flags = 0, .fn = CmdMemoryStats, .group = s, .since = "4.0.0",
       .summary = "Returns details about memory usage.", .syntax = "", .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
      {.name = "PURGE", .arity = 2, .flags = 0, .fn = CmdMemoryPurge, .group = s, .since = "4.0.0",
       .summary = "Asks the allocator to release memory.", .syntax = "",
       .complexity = "Depends on how much memory is allocated, could be slow",
       .tips = "request_policy:all_shards response_policy:all_succeeded"},
      {.name = "MALLOC-STATS", .arity = 2, .flags = 0, .fn = CmdMemoryMallocStats, .group = s,
       .since = "4.0.0", .summary = "Returns the allocator statistics.", .syntax = "",
       .complexity = "Depends on how much memory is allocated, could be slow",
       .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
      {.name = "DOCTOR", .arity = 2, .flags = 0, .fn = CmdMemoryDoctor, .group = s,
       .since = "4.0.0", .summary = "Outputs a memory problems report.", .syntax = "",
       .complexity = "O(1)",
       .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdMemoryHelp, .group = s, .since = "4.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "memory");
  // clang-format on
}

}  // namespace vessel::engine
