// The SDK's function table (vsl_api): what modules call, implemented on the engine.
#include <atomic>
#include <cstring>

#include "host/config/params.h"
#include "host/engine/abi.h"
#include "host/engine/builtins.h"
#include "host/engine/context.h"
#include "host/engine/engine.h"
#include "host/engine/memory.h"
#include "host/engine/serialize.h"
#include "host/engine/strutil.h"
#include "spdlog/spdlog.h"
#include "vessel/module.h"

namespace vessel::engine {
namespace {

// ---- misuse ----
// A call the API refuses (a NULL or stale handle, a write through a read-only key, a key the
// command did not declare, ...) returns an error status and is logged with the module and the
// command running on this thread (module=- cmd=- for a call from outside any command, e.g. a
// thread of the module), at most once a second per call site: a broken module must not flood the
// log.

struct MisuseSite {
  std::atomic<int64_t> last_ms{0};
  std::atomic<uint64_t> suppressed{0};
};

void LogMisuse(MisuseSite& site, std::string_view fn, std::string_view what,
               const vsl_module* caller = nullptr) {
  const int64_t now = Engine::WallMs();
  int64_t last = site.last_ms.load(std::memory_order_relaxed);
  if (now - last < 1000 || !site.last_ms.compare_exchange_strong(last, now)) {
    site.suppressed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const CommandCtx* c = RunningCtx();
  const CommandSpec* cmd = c != nullptr ? c->cmd : nullptr;
  std::string slot;  // the vsl_api slot's name: KeyOpen -> key_open
  for (char ch : fn) {
    if (ch >= 'A' && ch <= 'Z') {
      if (!slot.empty()) slot += '_';
      ch = static_cast<char>(ch - 'A' + 'a');
    }
    slot += ch;
  }
  // Each branch a string_view: a ternary of std::string and a literal would yield a temporary.
  std::string_view module = "-";
  if (cmd != nullptr) {
    module = cmd->module != nullptr ? std::string_view(cmd->module->name) : "(host)";
  } else if (caller != nullptr) {
    module = caller->name;
  }
  spdlog::error("module misuse: {} {} (refused) module={} cmd={} suppressed={}", slot, what, module,
                cmd == nullptr ? "-" : cmd->name,
                site.suppressed.exchange(0, std::memory_order_relaxed));
}
#define VSL_MISUSE_BY(m, fn, what)      \
  do {                                  \
    static MisuseSite site;             \
    LogMisuse(site, (fn), (what), (m)); \
  } while (0)
#define VSL_MISUSE(fn, what) VSL_MISUSE_BY(nullptr, fn, what)
#define VSL_LOG_BAD_HANDLE(fn) VSL_MISUSE(fn, "called with a NULL or stale handle")

// ---- handle checks ----
// Every entry point that takes a handle accepts only the running invocation's context and its
// declared keys: NULL, a handle kept from an earlier call or one from another thread is refused
// with VSL_ERR (logged), never dereferenced.

bool CtxOk(const CommandCtx* ctx) { return ctx != nullptr && ctx == RunningCtx(); }
bool KeyOk(const CommandKey* k) {
  const CommandCtx* c = RunningCtx();
  return k != nullptr && c != nullptr && !c->keys.empty() && k >= c->keys.data() &&
         k < c->keys.data() + c->keys.size();
}
#define CHECK_CTX(ctx, fail)      \
  if (!CtxOk(ctx)) {              \
    VSL_LOG_BAD_HANDLE(__func__); \
    return fail;                  \
  }
#define CHECK_KEY(k, fail)        \
  if (!KeyOk(k)) {                \
    VSL_LOG_BAD_HANDLE(__func__); \
    return fail;                  \
  }

// ---- registration ----

int RegisterType(vsl_module* m, const vsl_type_desc* desc, const vsl_type** out) {
  if (m == nullptr || !m->initializing || out == nullptr) {
    if (m != nullptr) m->last_error = "register_type called outside vsl_module_init";
    VSL_MISUSE_BY(m, __func__,
                  m == nullptr || m->initializing ? "called with a NULL module or result"
                                                  : "called outside vsl_module_init");
    return VSL_ERR;
  }
  return m->registry->AddType(m, desc, out, &m->last_error) ? VSL_OK : VSL_ERR;
}

int RegisterCommand(vsl_module* m, const vsl_command_desc* desc) {
  if (m == nullptr || !m->initializing) {
    if (m != nullptr) m->last_error = "register_command called outside vsl_module_init";
    VSL_MISUSE_BY(m, __func__,
                  m == nullptr ? "called with a NULL module" : "called outside vsl_module_init");
    return VSL_ERR;
  }
  return m->registry->AddModuleCommand(m, desc, &m->last_error) ? VSL_OK : VSL_ERR;
}

// ---- keys ----

int KeyCount(CommandCtx* ctx) { CHECK_CTX(ctx, VSL_ERR) return static_cast<int>(ctx->keys.size()); }

CommandKey* KeyOpen(CommandCtx* ctx, int i) {
  CHECK_CTX(ctx, nullptr)
  if (i < 0 || i >= static_cast<int>(ctx->keys.size())) {
    VSL_MISUSE(__func__, Cat("opened key ", i, " of ", ctx->keys.size(), " declared"));
    return nullptr;
  }
  return &ctx->keys[i];
}

vsl_slice KeyName(CommandKey* k) {
  CHECK_KEY(k, (vsl_slice{nullptr, 0})) return {k->name.data(), k->name.size()};
}

bool HeldExclusively(const CommandKey* k) { return k->writable() || k->ctx->world; }

// The key's live entry, looked up once per command: the handle caches what it found for as long
// as its shard's table links or unlinks nothing (EntryTable::generation).
Entry* Find(CommandKey* k) {
  const EntryTable& table = k->shard->table;
  if (k->found_gen == table.generation()) return k->found;
  Entry* e = k->ctx->engine->Lookup(*k->db, *k->shard, k->name, k->hash, k->ctx->now_ms,
                                    HeldExclusively(k));
  k->found = e;
  k->found_gen = table.generation();
  return e;
}

// A module may only store values of its own types (built-ins may store any).
bool OwnsType(const CommandCtx* ctx, const vsl_type* t) {
  return t != nullptr && (ctx->cmd->module == nullptr || ctx->cmd->module == t->module);
}

int KeyGet(CommandKey* k, const vsl_type* type, void** out) {
  CHECK_KEY(k, VSL_ERR)
  if (type == nullptr || out == nullptr) {
    VSL_MISUSE(__func__, "called with a NULL type or result pointer");
    return VSL_ERR;
  }
  Entry* e = Find(k);
  if (k->flags & VSL_KS_RO) {
    WorkerStats& st = k->ctx->engine->stats(k->ctx->engine->current_worker().index);
    st.Add(e != nullptr ? st.keyspace_hits : st.keyspace_misses);
    if (e == nullptr)  // Redis's lookupKeyRead miss
      k->ctx->engine->NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", k->name, k->db->index());
  }
  k->asked_type = type->id;
  if (e == nullptr) return VSL_EMPTY;
  if (e->type_id() != type->id) {
    // A parked client re-run after its key was overwritten with another type stays blocked,
    // as in Redis: to it, the key it waits on is still empty.
    Session* s = k->ctx->session;
    return s != nullptr && s->blocked() && s->WaitsOn(k->db->index(), k->name) ? VSL_EMPTY
                                                                               : VSL_WRONGTYPE;
  }
  k->ctx->engine->StampAccess(e, k->ctx->now_ms);
  *out = e->value;
  return VSL_OK;
}

int KeySet(CommandKey* k, const vsl_type* type, void* value, uint32_t flags) {
  CHECK_KEY(k, VSL_ERR)
  CommandCtx* ctx = k->ctx;
  if (!k->writable() || !OwnsType(ctx, type) || (flags & ~VSL_SET_KEEPTTL)) {
    VSL_MISUSE(__func__, !k->writable()         ? "stores through a key declared read-only"
                         : type == nullptr      ? "stores a value without a type"
                         : !OwnsType(ctx, type) ? "stores a value of another module's type"
                                                : "called with unknown flag bits");
    if (type != nullptr) ctx->engine->FreeValue(type->id, value, false);
    return VSL_ERR;
  }
  // Looking up drops an expired entry, so KEEPTTL cannot revive its expiry.
  k->found = ctx->engine->Store(*k->db, *k->shard, k->name, k->hash, type->id, value,
                                flags & VSL_SET_KEEPTTL, Find(k));
  k->found_gen = k->shard->table.generation();
  k->changed = true;
  return VSL_OK;
}

int KeyDelete(CommandKey* k) {
  CHECK_KEY(k, VSL_ERR)
  if (!k->writable()) {
    VSL_MISUSE(__func__, "deletes a key declared read-only");
    return VSL_ERR;
  }
  Entry* e = Find(k);
  if (e == nullptr) return 0;
  k->ctx->engine->Remove(*k->db, *k->shard, e, k->hash);
  k->changed = true;
  return 1;
}

int64_t KeyExpireGet(CommandKey* k) {
  CHECK_KEY(k, VSL_ERR)
  Entry* e = Find(k);
  if (e == nullptr) return -2;
  return e->expire_ms == 0 ? -1 : e->expire_ms;
}

int KeyExpireSet(CommandKey* k, int64_t abs_ms) {
  CHECK_KEY(k, VSL_ERR)
  if (!k->writable()) {
    VSL_MISUSE(__func__, "sets the expiry of a key declared read-only");
    return VSL_ERR;
  }
  Entry* e = Find(k);
  if (e == nullptr) return VSL_ERR;
  Engine* engine = k->ctx->engine;
  k->changed = true;
  if (abs_ms >= 0 && abs_ms <= k->ctx->now_ms) {
    engine->Remove(*k->db, *k->shard, e, k->hash);  // a time in the past deletes the key
    return VSL_OK;
  }
  engine->SetExpire(*k->db, *k->shard, e, abs_ms < 0 ? 0 : abs_ms);
  engine->Touch(*k->db, *k->shard, k->name, k->hash);
  return VSL_OK;
}

void KeyModified(CommandKey* k) {
  CHECK_KEY(k, )
  if (!k->writable()) {
    VSL_MISUSE(__func__, "reports a change of a key declared read-only");
    return;
  }
  Engine* engine = k->ctx->engine;
  k->changed = true;
  engine->Touch(*k->db, *k->shard, k->name, k->hash);
  if (Entry* e = Find(k))
    engine->ScheduleParts(*k->db, *k->shard, e);  // the value's expiring parts may have changed
}

// ---- replies ----

int ReplyNull(CommandCtx* ctx) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Null();
  return VSL_OK;
}

int ReplyNullArray(CommandCtx* ctx) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->NullArray();
  return VSL_OK;
}

int ReplyBool(CommandCtx* ctx, int v) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Bool(v != 0);
  return VSL_OK;
}

int ReplyInt64(CommandCtx* ctx, int64_t v) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Int(v);
  return VSL_OK;
}

int ReplyDouble(CommandCtx* ctx, double v) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Double(v);
  return VSL_OK;
}

int ReplyDoubleText(CommandCtx* ctx, const char* s, size_t len) {
  CHECK_CTX(ctx, VSL_ERR)
  if (s == nullptr || len == 0) return VSL_ERR;
  ctx->CountScalar();
  ctx->w->DoubleText({s, len});
  return VSL_OK;
}

static_assert(VSL_NOTIFY_GENERIC == kNotifyGeneric && VSL_NOTIFY_STRING == kNotifyString &&
              VSL_NOTIFY_LIST == kNotifyList && VSL_NOTIFY_SET == kNotifySet &&
              VSL_NOTIFY_HASH == kNotifyHash && VSL_NOTIFY_ZSET == kNotifyZset &&
              VSL_NOTIFY_STREAM == kNotifyStream && VSL_NOTIFY_MODULE == kNotifyModule);

int Notify(CommandKey* k, int type, const char* event) {
  CHECK_KEY(k, VSL_ERR)
  constexpr int kModuleClasses = VSL_NOTIFY_GENERIC | VSL_NOTIFY_STRING | VSL_NOTIFY_LIST |
                                 VSL_NOTIFY_SET | VSL_NOTIFY_HASH | VSL_NOTIFY_ZSET |
                                 VSL_NOTIFY_STREAM | VSL_NOTIFY_MODULE;
  if (event == nullptr || *event == '\0' || (type & ~kModuleClasses) != 0 ||
      (type & (type - 1)) != 0 || type == 0)
    return VSL_ERR;
  k->ctx->engine->NotifyKeyspaceEvent(type, event, k->name, k->db->index());
  return VSL_OK;
}

int ReplySimple(CommandCtx* ctx, const char* s, size_t len) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Simple({s, len});
  return VSL_OK;
}

int ReplyBulk(CommandCtx* ctx, const char* s, size_t len) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->w->Bulk({s, len});
  return VSL_OK;
}

int ReplyVerbatim(CommandCtx* ctx, const char* format3, const char* s, size_t len) {
  CHECK_CTX(ctx, VSL_ERR)
  if (format3 == nullptr || std::strlen(format3) != 3) return VSL_ERR;
  ctx->CountScalar();
  ctx->w->Verbatim(format3, {s, len});
  return VSL_OK;
}

int ReplyError(CommandCtx* ctx, const char* code, const char* msg) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->CountScalar();
  ctx->reply_error = true;
  ctx->w->Error(code != nullptr && *code ? code : "ERR", msg != nullptr ? msg : "");
  return VSL_OK;
}

vsl_agg OpenAggregate(CommandCtx* ctx, resp::AggKind kind, int64_t len) {
  CHECK_CTX(ctx, (vsl_agg{0}))
  ctx->CountElement();
  const uint64_t id = ctx->next_agg_id++;
  if (len == VSL_LEN_DEFERRED) {
    ctx->open.push_back({kind, -1, 0, ctx->w->Mark(), id});
    return {id};
  }
  if (len < 0) {
    ctx->reply_invalid = true;
    len = 0;
  }
  ctx->w->Aggregate(kind, len);
  const int64_t elements = kind == resp::AggKind::kMap ? len * 2 : len;
  if (elements > 0) {
    ctx->open.push_back({kind, elements, 0, 0, id});
  } else {
    ctx->PopCompleted();
  }
  return {id};
}

vsl_agg ReplyArray(CommandCtx* ctx, int64_t len) {
  return OpenAggregate(ctx, resp::AggKind::kArray, len);
}
vsl_agg ReplyMap(CommandCtx* ctx, int64_t pairs) {
  return OpenAggregate(ctx, resp::AggKind::kMap, pairs);
}
vsl_agg ReplySet(CommandCtx* ctx, int64_t len) {
  return OpenAggregate(ctx, resp::AggKind::kSet, len);
}

void ReplySetLen(CommandCtx* ctx, vsl_agg agg, int64_t len) {
  CHECK_CTX(ctx, )
  if (ctx->open.empty() || ctx->open.back().id != agg.id || ctx->open.back().remaining != -1) {
    ctx->reply_invalid = true;  // not the innermost open deferred aggregate
    return;
  }
  CommandCtx::Open o = ctx->open.back();
  const int64_t expected = o.kind == resp::AggKind::kMap ? len * 2 : len;
  if (len < 0 || o.written != expected) ctx->reply_invalid = true;
  ctx->w->FinishDeferred(o.mark, o.kind, len < 0 ? 0 : len);
  ctx->open.pop_back();
  ctx->PopCompleted();
}

// ---- blocking ----

int BlockEx(CommandCtx* ctx, int64_t timeout_ms, uint32_t flags, const char* state,
            size_t state_len) {
  CHECK_CTX(ctx, VSL_ERR)
  if (flags & ~VSL_BLOCK_ALL_FLAGS) {
    VSL_MISUSE(__func__, Cat("called with unknown flag bits ", flags & ~VSL_BLOCK_ALL_FLAGS));
    return VSL_ERR;
  }
  if (!ctx->can_block || ctx->session == nullptr || timeout_ms < 0) return VSL_ERR;
  ctx->blocked = true;
  ctx->block_timeout_ms = timeout_ms;
  ctx->block_flags = flags;
  ctx->block_state.assign(state != nullptr ? state : "", state != nullptr ? state_len : 0);
  return VSL_OK;
}

int Block(CommandCtx* ctx, int64_t timeout_ms) { return BlockEx(ctx, timeout_ms, 0, nullptr, 0); }

// ABI 1.7: a re-run of a parked command sees the state it parked with.
int BlockState(CommandCtx* ctx, vsl_slice* out) {
  CHECK_CTX(ctx, VSL_ERR)
  if (out == nullptr) return VSL_ERR;
  const std::string* state = ctx->session != nullptr ? ctx->session->BlockedState() : nullptr;
  if (state == nullptr) return VSL_EMPTY;
  *out = {state->data(), state->size()};
  return VSL_OK;
}

int InTransaction(CommandCtx* ctx) { CHECK_CTX(ctx, VSL_ERR) return ctx->in_exec ? 1 : 0; }
int InScript(CommandCtx* ctx) { CHECK_CTX(ctx, VSL_ERR) return ctx->script_call ? 1 : 0; }

// ---- misc ----

int64_t NowMs(CommandCtx* ctx) { CHECK_CTX(ctx, Engine::WallMs()) return ctx->now_ms; }
int Protocol(CommandCtx* ctx) { CHECK_CTX(ctx, VSL_ERR) return ctx->w->protocol(); }

void Log(vsl_module* m, int level, const char* msg) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  const auto lvl = kLevels[level < 0 ? 0 : (level > 3 ? 3 : level)];
  spdlog::log(lvl, "module={} {}", m != nullptr ? m->name : "?", msg != nullptr ? msg : "");
}

int Glob(const char* p, size_t plen, const char* s, size_t slen, int nocase) {
  return GlobMatch({p, plen}, {s, slen}, nocase != 0) ? 1 : 0;
}

int ParseInt(const char* s, size_t len, int64_t* out) {
  return ParseInt64({s, len}, out) ? VSL_OK : VSL_ERR;
}

int ParseDbl(const char* s, size_t len, double* out) {
  return ParseDouble({s, len}, out) ? VSL_OK : VSL_ERR;
}

// ---- serialization ----

void WriteU64(vsl_writer* w, uint64_t v) {
  if (w->format != nullptr) return w->format->u64(w, v);
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  w->buf.append(b, 8);
}

void WriteDouble(vsl_writer* w, double v) {
  if (w->format != nullptr) return w->format->dbl(w, v);
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  WriteU64(w, bits);
}

void WriteBytes(vsl_writer* w, const char* p, size_t len) {
  if (w->format != nullptr) return w->format->bytes(w, p, len);
  WriteU64(w, len);
  w->buf.append(p, len);
}

int ReadU64(vsl_reader* r, uint64_t* v) {
  if (r->format != nullptr && !r->failed) {
    if (r->format->u64(r, v) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  if (r->failed || r->data.size() < 8) return r->failed = true, VSL_ERR;
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= uint64_t{static_cast<unsigned char>(r->data[i])} << (8 * i);
  r->data.remove_prefix(8);
  *v = x;
  return VSL_OK;
}

int ReadDouble(vsl_reader* r, double* v) {
  if (r->format != nullptr && !r->failed) {
    if (r->format->dbl(r, v) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  uint64_t bits;
  if (ReadU64(r, &bits) != VSL_OK) return VSL_ERR;
  std::memcpy(v, &bits, 8);
  return VSL_OK;
}

int ReadBytes(vsl_reader* r, vsl_slice* out) {
  if (r->format != nullptr && !r->failed) {
    if (r->format->bytes(r, out) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  uint64_t len;
  if (ReadU64(r, &len) != VSL_OK) return VSL_ERR;
  if (len > r->data.size()) return r->failed = true, VSL_ERR;
  *out = {r->data.data(), static_cast<size_t>(len)};
  r->data.remove_prefix(len);
  return VSL_OK;
}

// ABI 1.4: signed integers; the default framing stores them as their two's complement u64.
void WriteI64(vsl_writer* w, int64_t v) {
  if (w->format != nullptr) return w->format->i64(w, v);
  WriteU64(w, static_cast<uint64_t>(v));
}

int ReadI64(vsl_reader* r, int64_t* v) {
  if (r->format != nullptr && !r->failed) {
    if (r->format->i64(r, v) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  uint64_t u;
  if (ReadU64(r, &u) != VSL_OK) return VSL_ERR;
  *v = static_cast<int64_t>(u);
  return VSL_OK;
}

// ---- settings (ABI 1.1) ----

int SettingInt64(CommandCtx* ctx, const char* name, int64_t* out) {
  CHECK_CTX(ctx, VSL_ERR)
  if (name == nullptr || out == nullptr) return VSL_ERR;
  // Generic parameters (the encoding thresholds modules read on every write) are one map lookup
  // and an atomic load.
  if (const int g = ParamValues::Find(name); g >= 0) {
    const config::ParamKind kind = config::GenericParams()[g].kind;
    if (kind != config::ParamKind::kInteger && kind != config::ParamKind::kMemory &&
        kind != config::ParamKind::kBool)
      return VSL_ERR;
    *out = ctx->engine->settings().params.Int(g);
    return VSL_OK;
  }
  std::string value;
  if (!ReadSetting(*ctx->engine, name, &value)) return VSL_ERR;
  return ParseInt64(value, out) ? VSL_OK : VSL_ERR;
}

// ---- generic access to any type's value (ABI 1.2) ----

const vsl_type* TypeOf(CommandKey* k, Entry** entry) {
  Entry* e = Find(k);
  *entry = e;
  return e == nullptr ? nullptr : k->ctx->engine->registry().TypeById(e->type_id());
}

const char* KeyTypeName(CommandKey* k) {
  CHECK_KEY(k, nullptr)
  Entry* e;
  const vsl_type* t = TypeOf(k, &e);
  return t == nullptr ? nullptr : t->name.c_str();
}

int KeyVisit(CommandKey* k, vsl_visit_fn fn, void* ud) {
  CHECK_KEY(k, VSL_ERR)
  if (fn == nullptr) return VSL_ERR;
  Entry* e;
  const vsl_type* t = TypeOf(k, &e);
  if (e == nullptr) return VSL_EMPTY;
  if (t == nullptr || t->desc.visit == nullptr) return VSL_ENOTSUP;
  k->ctx->engine->StampAccess(e, k->ctx->now_ms);
  return t->desc.visit(nullptr, e->value, fn, ud) == VSL_OK ? VSL_OK : VSL_ERR;
}

// ---- what the append-only file records (ABI 1.4) ----

int Propagate(CommandCtx* ctx, const vsl_slice* argv, int argc) {
  if (ctx == nullptr || argc < 0 || (argc > 0 && argv == nullptr)) return VSL_ERR;
  ctx->propagate_set = true;
  if (argc == 0) return VSL_OK;
  std::vector<std::string> cmd;
  cmd.reserve(argc);
  for (int i = 0; i < argc; ++i) cmd.emplace_back(argv[i].ptr, argv[i].len);
  ctx->propagated.push_back(std::move(cmd));
  return VSL_OK;
}

// ---- ABI 1.7: RDB encodings (Redis's own, for types with rdb_type; else u64 and bytes) ----

void WriteRdbLen(vsl_writer* w, uint64_t v) {
  if (w->format != nullptr && w->format->rdb_len != nullptr) return w->format->rdb_len(w, v);
  WriteU64(w, v);
}

void WriteRdbString(vsl_writer* w, const char* p, size_t len) {
  if (w->format != nullptr && w->format->rdb_string != nullptr)
    return w->format->rdb_string(w, p, len);
  WriteBytes(w, p, len);
}

void WriteRaw(vsl_writer* w, const char* p, size_t len) {
  if (w->format != nullptr && w->format->raw != nullptr) return w->format->raw(w, p, len);
  if (w->format != nullptr) return w->format->bytes(w, p, len);
  w->buf.append(p, len);
}

int ReadRdbLen(vsl_reader* r, uint64_t* v) {
  if (r->format != nullptr && r->format->rdb_len != nullptr && !r->failed) {
    if (r->format->rdb_len(r, v) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  return ReadU64(r, v);
}

int ReadRdbString(vsl_reader* r, vsl_slice* out) {
  if (r->format != nullptr && r->format->rdb_string != nullptr && !r->failed) {
    if (r->format->rdb_string(r, out) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  return ReadBytes(r, out);
}

int ReadRaw(vsl_reader* r, size_t len, vsl_slice* out) {
  if (r->failed) return VSL_ERR;
  if (r->format != nullptr && r->format->raw != nullptr) {
    if (r->format->raw(r, len, out) == VSL_OK) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  if (r->format != nullptr) {
    if (ReadBytes(r, out) == VSL_OK && out->len == len) return VSL_OK;
    return r->failed = true, VSL_ERR;
  }
  if (len > r->data.size()) return r->failed = true, VSL_ERR;
  *out = {r->data.data(), len};
  r->data.remove_prefix(len);
  return VSL_OK;
}

// ---- what one command may allocate, and what it changed (ABI 1.6) ----

constexpr uint64_t kDefaultValueSizeLimit = uint64_t{512} << 20;  // Redis's proto-max-bulk-len

uint64_t ValueSizeLimit(CommandCtx* ctx) {
  if (ctx == nullptr) return kDefaultValueSizeLimit;  // outside a command (a type callback)
  CHECK_CTX(ctx, kDefaultValueSizeLimit)
  const int64_t v = ctx->engine->settings().max_bulk_len.load(std::memory_order_relaxed);
  return v > 0 ? static_cast<uint64_t>(v) : 0;
}

int MayAllocate(CommandCtx* ctx, uint64_t bytes) {
  CHECK_CTX(ctx, VSL_ERR)
  return ctx->engine->MayGrow(*ctx, bytes) ? VSL_OK : VSL_ERR;
}

int AddChanges(CommandCtx* ctx, uint64_t n) {
  CHECK_CTX(ctx, VSL_ERR)
  ctx->AddChanges(n);
  return VSL_OK;
}

// Designated initializers keep the table in declaration order: the compiler rejects a slot
// written out of place, and ABI tests freeze every offset.
const vsl_api kApi = {
    .struct_size = sizeof(vsl_api),
    .abi_major = VSL_ABI_MAJOR,
    .abi_minor = VSL_ABI_MINOR,
    .register_type = RegisterType,
    .register_command = RegisterCommand,
    .key_count = AbiEntry<KeyCount>::Call,
    .key_open = AbiEntry<KeyOpen>::Call,
    .key_name = AbiEntry<KeyName>::Call,
    .key_get = AbiEntry<KeyGet>::Call,
    .key_set = AbiEntry<KeySet>::Call,
    .key_delete = AbiEntry<KeyDelete>::Call,
    .key_expire_get = AbiEntry<KeyExpireGet>::Call,
    .key_expire_set = AbiEntry<KeyExpireSet>::Call,
    .key_modified = AbiEntry<KeyModified>::Call,
    .reply_null = AbiEntry<ReplyNull>::Call,
    .reply_null_array = AbiEntry<ReplyNullArray>::Call,
    .reply_bool = AbiEntry<ReplyBool>::Call,
    .reply_int64 = AbiEntry<ReplyInt64>::Call,
    .reply_double = AbiEntry<ReplyDouble>::Call,
    .reply_simple = AbiEntry<ReplySimple>::Call,
    .reply_bulk = AbiEntry<ReplyBulk>::Call,
    .reply_verbatim = AbiEntry<ReplyVerbatim>::Call,
    .reply_error = AbiEntry<ReplyError>::Call,
    .reply_array = AbiEntry<ReplyArray>::Call,
    .reply_map = AbiEntry<ReplyMap>::Call,
    .reply_set = AbiEntry<ReplySet>::Call,
    .reply_set_len = AbiEntry<ReplySetLen>::Call,
    .block = AbiEntry<Block>::Call,
    .in_transaction = AbiEntry<InTransaction>::Call,
    .alloc = memory::Alloc,
    .realloc = memory::Realloc,
    .free = memory::Free,
    .usable_size = memory::UsableSize,
    .now_ms = AbiEntry<NowMs>::Call,
    .protocol = AbiEntry<Protocol>::Call,
    .log = Log,
    .glob_match = Glob,
    .parse_int64 = ParseInt,
    .parse_double = ParseDbl,
    .write_u64 = WriteU64,
    .write_double = WriteDouble,
    .write_bytes = WriteBytes,
    .read_u64 = ReadU64,
    .read_double = ReadDouble,
    .read_bytes = ReadBytes,
    .setting_int64 = AbiEntry<SettingInt64>::Call,
    .key_type_name = AbiEntry<KeyTypeName>::Call,
    .key_visit = AbiEntry<KeyVisit>::Call,
    .reply_double_text = AbiEntry<ReplyDoubleText>::Call,
    .notify = AbiEntry<Notify>::Call,
    .write_i64 = WriteI64,
    .read_i64 = ReadI64,
    .propagate = AbiEntry<Propagate>::Call,
    .value_size_limit = AbiEntry<ValueSizeLimit>::Call,
    .may_allocate = AbiEntry<MayAllocate>::Call,
    .add_changes = AbiEntry<AddChanges>::Call,
    .block_ex = AbiEntry<BlockEx>::Call,
    .block_state = AbiEntry<BlockState>::Call,
    .write_rdb_len = WriteRdbLen,
    .write_rdb_string = WriteRdbString,
    .write_raw = WriteRaw,
    .read_rdb_len = ReadRdbLen,
    .read_rdb_string = ReadRdbString,
    .read_raw = ReadRaw,
    .in_script = AbiEntry<InScript>::Call,
};

}  // namespace

const vsl_api* Engine::api() const { return &kApi; }

void CommandCtx::CountElement() {
  if (open.empty()) {
    ++top_replies;
    return;
  }
  Open& o = open.back();
  if (o.remaining > 0) {
    --o.remaining;
  } else if (o.remaining == -1) {
    ++o.written;
  } else {
    reply_invalid = true;
  }
}

}  // namespace vessel::engine
