// Host built-in commands: registration helpers and shared handler utilities.
#include "host/engine/builtins.h"

#include "spdlog/spdlog.h"

namespace vessel::engine {

KeySpec KeyAt(int32_t index, uint32_t flags, int32_t last, int32_t step) {
  KeySpec k;
  k.flags = flags;
  k.begin_index = index;
  k.last_key = last;
  k.key_step = step;
  return k;
}

KeySpec KeyNum(int32_t begin, uint32_t flags, int32_t keynum_index, int32_t first_key) {
  KeySpec k;
  k.flags = flags | VSL_KS_KEYNUM;
  k.begin_index = begin;
  k.keynum_index = keynum_index;
  k.first_key = first_key;
  return k;
}

KeySpec KeyUnknown(uint32_t flags, const char* notes) {
  KeySpec k;
  k.flags = flags | kKsUnknown;
  k.notes = notes;
  return k;
}

void AddBuiltins(Registry& r, const std::vector<BuiltinDef>& defs, const char* parent) {
  for (const BuiltinDef& d : defs) {
    auto spec = std::make_unique<CommandSpec>();
    std::string lower;
    AsciiLower(d.name, &lower);
    spec->arity = d.arity;
    spec->flags = d.flags;
    spec->keyspecs = d.keys;
    spec->native = d.fn;
    spec->resolve_hook = d.resolve;
    spec->needs_world = d.needs_world;
    spec->call_flags = d.call_flags;
    spec->getkeys = d.getkeys;
    if (d.tips != nullptr) spec->tips = SplitWords(d.tips);
    if (d.acl != nullptr) spec->extra_acl = SplitWords(d.acl);
    spec->group = d.group;
    spec->since = d.since;
    spec->summary = d.summary;
    spec->syntax = d.syntax;
    spec->complexity = d.complexity;
    std::string error;
    bool ok;
    if (parent != nullptr) {
      spec->name = Cat(parent, "|", lower);
      spec->sub_name = lower;
      ok = r.AddSubcommand(parent, std::move(spec), &error);
    } else {
      spec->name = lower;
      ok = r.AddCommand(std::move(spec), &error);
    }
    if (!ok) spdlog::critical("built-in registration failed: {}", error);
  }
}

Entry* LookupKey(CommandCtx* ctx, int i) {
  CommandKey& k = ctx->keys[i];
  Entry* e =
      ctx->engine->Lookup(*k.db, *k.shard, k.name, k.hash, ctx->now_ms, k.writable() || ctx->world);
  // A read that misses is a "keymiss" event, as Redis's lookupKeyRead (OBJECT and MEMORY USAGE
  // look without notifying).
  const CommandSpec* parent = ctx->cmd->parent;
  if (e == nullptr && (k.flags & VSL_KS_RO) &&
      !(parent != nullptr && (parent->name == "object" || parent->name == "memory")))
    ctx->engine->NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", k.name, k.db->index());
  return e;
}

void ReplyNotInteger(CommandCtx* ctx) {
  W(ctx).ErrorLine("ERR value is not an integer or out of range");
}

void ReplySyntaxError(CommandCtx* ctx) { W(ctx).ErrorLine("ERR syntax error"); }

void ReplyHelp(CommandCtx* ctx, std::initializer_list<const char*> lines) {
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(lines.size()));
  for (const char* l : lines) W(ctx).Simple(l);
}

bool IntArg(CommandCtx* ctx, int i, int64_t* out) {
  if (ParseInt64(Arg(ctx, i), out)) return true;
  ReplyNotInteger(ctx);
  return false;
}

bool DbArg(CommandCtx* ctx, int i, int* out) {
  int64_t v;
  if (!ParseInt64(Arg(ctx, i), &v) || v < INT32_MIN || v > INT32_MAX) {
    ReplyNotInteger(ctx);
    return false;
  }
  if (v < 0 || v >= ctx->engine->db_count()) {
    W(ctx).ErrorLine("ERR DB index is out of range");
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

void ReplyOk(CommandCtx* ctx) { W(ctx).Simple("OK"); }

void Engine::RegisterBuiltins() {
  RegisterKeyspaceCommands(registry_);
  RegisterDbCommands(registry_);
  RegisterExpireCommands(registry_);
  RegisterConnectionCommands(registry_);
  RegisterServerCommands(registry_);
  RegisterModuleCommands(registry_);
  RegisterMemoryCommands(registry_);
  RegisterIntrospectionCommands(registry_);
  RegisterConfigCommands(registry_);
  RegisterMonitorCommands(registry_);
  RegisterClientCommands(registry_);
  RegisterDebugCommands(registry_);
  RegisterSortCommands(registry_);
  RegisterTransactionCommands(registry_);
  RegisterDumpCommands(registry_);
}

}  // namespace vessel::engine
