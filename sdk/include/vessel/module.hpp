// Optional header-only C++20 layer over vessel/module.h: string_view arguments, key handles,
// typed values with the host allocator, a constexpr command table, and exceptions turned into
// error replies at the boundary. Nothing here crosses the ABI: it compiles into the module.
//
// A handler is `void CmdFoo(vsl::Ctx& ctx)`; it replies through ctx or throws vsl::Error (only
// before it started replying). Register it with vsl::Handler<CmdFoo> in a vsl::CommandDef table.
#ifndef VESSEL_MODULE_HPP_
#define VESSEL_MODULE_HPP_

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vessel/module.h"

namespace vsl {

// ---- the API table of the running host (one per module: hidden visibility) ----

inline const vsl_api* g_api = nullptr;
inline const vsl_api& Api() { return *g_api; }

// ---- errors ----

// Thrown by a handler (before it replies) to send "-<code> <message>".
struct Error {
  std::string code;
  std::string message;
};
[[noreturn]] inline void Fail(std::string message) { throw Error{"ERR", std::move(message)}; }
[[noreturn]] inline void WrongType() { throw Error{"WRONGTYPE", VSL_WRONGTYPE_MSG}; }
[[noreturn]] inline void NotInteger() { Fail("value is not an integer or out of range"); }
[[noreturn]] inline void NotFloat() { Fail("value is not a valid float"); }
[[noreturn]] inline void SyntaxError() { Fail("syntax error"); }
// Redis's refusal at maxmemory: "-OOM command not allowed when used memory > 'maxmemory'.".
[[noreturn]] inline void FailOom() { throw Error{"OOM", VSL_OOM_MSG}; }

inline std::string_view View(vsl_slice s) { return {s.ptr, s.len}; }

// Redis's strict number parsing; nullopt-free: returns false on bad input.
inline bool ParseInt(std::string_view s, int64_t* out) {
  return Api().parse_int64(s.data(), s.size(), out) == VSL_OK;
}
inline bool ParseDouble(std::string_view s, double* out) {
  return Api().parse_double(s.data(), s.size(), out) == VSL_OK;
}
// Redis's string2ld: strtold over the whole argument (an embedded NUL fails), no leading space,
// no NaN, no overflow, under Redis's MAX_LONG_DOUBLE_CHARS.
inline bool ParseLongDouble(std::string_view s, long double* out) {
  constexpr size_t kMaxChars = 5 * 1024;
  if (s.empty() || s.size() >= kMaxChars) return false;
  char buf[kMaxChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(buf, &end);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || end != buf + s.size() ||
      (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) || errno == EINVAL ||
      std::isnan(v))
    return false;
  *out = v;
  return true;
}
// Redis's parseScanCursorOrReply (SCAN cursors): strtoul() semantics, so "+5", "-1" (ULONG_MAX)
// and "" (0) are cursors; a leading space, trailing garbage or an overflow are not.
inline bool ParseCursor(std::string_view s, uint64_t* out) {
  if (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) return false;
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) i = 1;
  const size_t digits = i;
  uint64_t v = 0;
  bool overflow = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const unsigned d = static_cast<unsigned>(s[i] - '0');
    overflow = overflow || v > (UINT64_MAX - d) / 10;
    v = v * 10 + d;
  }
  if (i == digits) {  // no number: strtoul points back at the start
    *out = 0;
    return s.empty() || s[0] == '\0';
  }
  if ((i < s.size() && s[i] != '\0') || overflow) return false;  // a NUL ends a C string
  *out = negative ? 0 - v : v;
  return true;
}
// Redis's ld2string in LD_STR_HUMAN mode (INCRBYFLOAT, HINCRBYFLOAT): %.17Lf without trailing
// zeros, "inf"/"-inf", "-0" as "0".
inline std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n < 0 || static_cast<size_t>(n) >= sizeof(buf)) return {};
  if (std::memchr(buf, '.', static_cast<size_t>(n)) != nullptr) {
    while (buf[n - 1] == '0') --n;
    if (buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return {buf, static_cast<size_t>(n)};
}
inline bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

// ---- host memory: values and everything they own live here, so INFO and MEMORY see them ----

inline void* Alloc(size_t n) {
  void* p = Api().alloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
inline void* Realloc(void* p, size_t n) {
  void* q = Api().realloc(p, n);
  if (q == nullptr) throw std::bad_alloc();  // p is still valid and unchanged
  return q;
}
inline void Free(void* p) { Api().free(p); }

template <class T, class... A>
T* New(A&&... args) {
  void* p = Alloc(sizeof(T));
  try {
    return new (p) T(std::forward<A>(args)...);
  } catch (...) {
    Free(p);
    throw;
  }
}
template <class T>
void Delete(T* p) {
  if (p == nullptr) return;
  p->~T();
  Free(p);
}

// An STL allocator over the host allocator, for containers inside values.
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(Alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { Free(p); }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
};
using String = std::basic_string<char, std::char_traits<char>, Allocator<char>>;

// ---- serialization ----

class Writer {
 public:
  explicit Writer(vsl_writer* w) : w_(w) {}
  void U64(uint64_t v) { Api().write_u64(w_, v); }
  // A signed integer (ABI 1.5; two's complement through U64 on older hosts).
  void I64(int64_t v) {
    if (VSL_HAS(g_api, write_i64)) {
      Api().write_i64(w_, v);
    } else {
      U64(static_cast<uint64_t>(v));
    }
  }
  void Double(double v) { Api().write_double(w_, v); }
  void Bytes(std::string_view b) { Api().write_bytes(w_, b.data(), b.size()); }
  // Redis's RDB encodings (ABI 1.7), for types saved as one of Redis's own (T::kRdbType).
  void RdbLen(uint64_t v) { Api().write_rdb_len(w_, v); }
  void RdbString(std::string_view b) { Api().write_rdb_string(w_, b.data(), b.size()); }
  void Raw(std::string_view b) { Api().write_raw(w_, b.data(), b.size()); }

 private:
  vsl_writer* w_;
};

class Reader {
 public:
  explicit Reader(vsl_reader* r) : r_(r) {}
  bool U64(uint64_t* v) { return Api().read_u64(r_, v) == VSL_OK; }
  bool I64(int64_t* v) {
    if (VSL_HAS(g_api, read_i64)) return Api().read_i64(r_, v) == VSL_OK;
    uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Double(double* v) { return Api().read_double(r_, v) == VSL_OK; }
  bool Bytes(std::string_view* out) {
    vsl_slice s;
    if (Api().read_bytes(r_, &s) != VSL_OK) return false;
    *out = View(s);
    return true;
  }
  // Redis's RDB encodings (ABI 1.7); views valid until Deserialize returns.
  bool RdbLen(uint64_t* v) { return Api().read_rdb_len(r_, v) == VSL_OK; }
  bool RdbString(std::string_view* out) {
    vsl_slice s;
    if (Api().read_rdb_string(r_, &s) != VSL_OK) return false;
    *out = View(s);
    return true;
  }
  bool Raw(size_t n, std::string_view* out) {
    vsl_slice s;
    if (Api().read_raw(r_, n, &s) != VSL_OK) return false;
    *out = View(s);
    return true;
  }

 private:
  vsl_reader* r_;
};

// ---- value types ----

// A value type T stored as T* allocated with vsl::New. T provides:
//   size_t MemUsage() const;                                  (required)
//   T* Clone() const;                                         (optional: COPY)
//   void Serialize(vsl::Writer&) const;                       (required, with Deserialize,
//   static T* Deserialize(vsl::Reader&, uint32_t encver);      nullptr on bad input; unless
//   static constexpr bool kNotPersisted = true;                kNotPersisted: ABI 1.6, see
//                                                              VSL_TYPE_NOT_PERSISTED)
//   size_t FreeEffort() const;                                (optional: lazy free)
//   const char* Encoding() const;                             (optional: OBJECT ENCODING)
//   int Visit(vsl_visit_fn fn, void* ud) const;               (optional, ABI 1.2: visit)
//   int64_t NextDue() const;                                  (optional, ABI 1.3, with
//   size_t ExpireDue(int64_t now_ms, bool* empty);             ExpireDue: parts that expire)
//   static constexpr uint32_t kRdbType = 19;                  (optional, ABI 1.7, with
//   static constexpr uint64_t kRdbLoadTypes = ...;             kRdbLoadTypes: saved in Redis's
//                                                              own RDB encoding; Deserialize gets
//                                                              the RDB type byte as encver)
template <class T>
class Type {
 public:
  const vsl_type* handle() const { return handle_; }

  // rdb_name: the type's 9-character name in RDB files (ABI 1.5; see vsl_type_desc.rdb_name).
  bool Register(vsl_module* m, const char* name, uint32_t encoding_version,
                const char* rdb_name = nullptr) {
    vsl_type_desc d{};
    d.struct_size = sizeof(d);
    d.name = name;
    d.encoding_version = encoding_version;
    d.rdb_name = rdb_name;
    d.free = [](vsl_type_ctx*, void* v) { Delete(static_cast<T*>(v)); };
    d.mem_usage = [](vsl_type_ctx*, const void* v) { return static_cast<const T*>(v)->MemUsage(); };
    if constexpr (requires(const T& t) { t.Clone(); }) {
      d.copy = [](vsl_type_ctx*, const void* v) -> void* {
        try {
          return static_cast<const T*>(v)->Clone();
        } catch (...) {
          return nullptr;
        }
      };
    }
    constexpr bool kSerializable = requires(const T& t, Writer& w, Reader& r) {
      t.Serialize(w);
      T::Deserialize(r, 0u);
    };
    if constexpr (requires { T::kNotPersisted; }) {
      static_assert(T::kNotPersisted, "kNotPersisted, when declared, is true");
      d.flags |= VSL_TYPE_NOT_PERSISTED;
    } else {
      static_assert(kSerializable,
                    "a value type has Serialize and Deserialize, or declares "
                    "`static constexpr bool kNotPersisted = true;`");
    }
    if constexpr (kSerializable) {
      d.serialize = [](vsl_type_ctx*, const void* v, vsl_writer* w) {
        Writer writer(w);
        try {
          static_cast<const T*>(v)->Serialize(writer);
          return VSL_OK;
        } catch (...) {
          return VSL_ERR;
        }
      };
      d.deserialize = [](vsl_type_ctx*, vsl_reader* r, uint32_t encver) -> void* {
        Reader reader(r);
        try {
          return T::Deserialize(reader, encver);
        } catch (...) {
          return nullptr;
        }
      };
    }
    if constexpr (requires(const T& t) { t.FreeEffort(); }) {
      d.free_effort = [](vsl_type_ctx*, const void* v) {
        return static_cast<const T*>(v)->FreeEffort();
      };
    }
    if constexpr (requires(const T& t) { t.Encoding(); }) {
      d.encoding = [](vsl_type_ctx*, const void* v) {
        return static_cast<const T*>(v)->Encoding();
      };
    }
    if constexpr (requires(const T& t, vsl_visit_fn fn, void* ud) { t.Visit(fn, ud); }) {
      d.visit = [](vsl_type_ctx*, const void* v, vsl_visit_fn fn, void* ud) {
        try {
          return static_cast<const T*>(v)->Visit(fn, ud);
        } catch (...) {
          return VSL_ERR;
        }
      };
    }
    if constexpr (requires(T & t, bool* empty) {
                    static_cast<const T&>(t).NextDue();
                    t.ExpireDue(int64_t{0}, empty);
                  }) {
      d.next_due = [](vsl_type_ctx*, const void* v) -> int64_t {
        return static_cast<const T*>(v)->NextDue();
      };
      d.expire_due = [](vsl_type_ctx*, void* v, int64_t now_ms, int* empty) -> size_t {
        bool e = false;
        const size_t n = static_cast<T*>(v)->ExpireDue(now_ms, &e);
        *empty = e ? 1 : 0;
        return n;
      };
    }
    if constexpr (requires {
                    T::kRdbType;
                    T::kRdbLoadTypes;
                  }) {
      d.rdb_type = T::kRdbType;
      d.rdb_load_types = T::kRdbLoadTypes;
    }
    return Api().register_type(m, &d, &handle_) == VSL_OK;
  }

 private:
  const vsl_type* handle_ = nullptr;
};

// ---- keys ----

class Key {
 public:
  explicit Key(vsl_key* k) : k_(k) {}
  std::string_view name() const { return View(Api().key_name(k_)); }

  // Raw access: VSL_OK (*out set), VSL_EMPTY or VSL_WRONGTYPE.
  int GetRaw(const vsl_type* t, void** out) const { return Api().key_get(k_, t, out); }
  // The value, or nullptr when the key does not exist; throws the WRONGTYPE error.
  template <class T>
  T* Get(const Type<T>& t) const {
    void* v = nullptr;
    const int rc = Api().key_get(k_, t.handle(), &v);
    if (rc == VSL_WRONGTYPE) WrongType();
    return rc == VSL_OK ? static_cast<T*>(v) : nullptr;
  }
  bool Exists() const { return Api().key_expire_get(k_) != -2; }
  // Stores a new value (ownership passes to the host) replacing the old one.
  template <class T>
  void Set(const Type<T>& t, T* value, uint32_t flags = 0) {
    SetRaw(t.handle(), value, flags);
  }
  void SetRaw(const vsl_type* t, void* value, uint32_t flags = 0) {
    if (Api().key_set(k_, t, value, flags) != VSL_OK) Fail("internal error: key not writable");
  }
  bool Delete() { return Api().key_delete(k_) == 1; }
  int64_t ExpireMs() const { return Api().key_expire_get(k_); }
  void SetExpireMs(int64_t abs_ms) { Api().key_expire_set(k_, abs_ms); }
  // Reports an in-place change (WATCH, blocked clients).
  void Modified() { Api().key_modified(k_); }
  // The TYPE name of the key's value, whatever module owns it; nullptr when the key does not
  // exist, or on a host older than ABI 1.2.
  const char* TypeName() const {
    return VSL_HAS(g_api, key_type_name) ? Api().key_type_name(k_) : nullptr;
  }
  // Walks the value read-only, whatever its type (ABI 1.2): f(std::string_view element, double
  // score) returns true to go on, false to stop. VSL_OK, VSL_EMPTY (no key) or VSL_ENOTSUP (the
  // type cannot be visited, or the host is older than 1.2). f must not throw.
  template <class F>
  int Visit(F&& f) const {
    if (!VSL_HAS(g_api, key_visit)) return VSL_ENOTSUP;
    auto thunk = [](void* ud, const char* p, size_t n, double score) -> int {
      return (*static_cast<F*>(ud))(std::string_view(p, n), score) ? 0 : 1;
    };
    return Api().key_visit(k_, thunk, &f);
  }
  // Fires a keyspace event (ABI 1.4; nothing on older hosts): Notify(VSL_NOTIFY_LIST, "lpush").
  void Notify(int type, const char* event) const {
    if (VSL_HAS(g_api, notify)) Api().notify(k_, type, event);
  }
  vsl_key* raw() const { return k_; }

 private:
  vsl_key* k_;
};

// ---- the invocation ----

class Ctx {
 public:
  Ctx(vsl_ctx* c, const vsl_slice* argv, int argc) : c_(c), argv_(argv), argc_(argc) {}

  int argc() const { return argc_; }
  std::string_view arg(int i) const { return View(argv_[i]); }
  std::span<const vsl_slice> args() const { return {argv_, static_cast<size_t>(argc_)}; }
  int key_count() const { return Api().key_count(c_); }
  Key key(int i) const {
    vsl_key* k = Api().key_open(c_, i);
    if (k == nullptr) Fail("internal error: undeclared key");
    return Key(k);
  }
  int64_t now_ms() const { return Api().now_ms(c_); }
  int protocol() const { return Api().protocol(c_); }
  bool in_transaction() const { return Api().in_transaction(c_) != 0; }
  // From a Lua script or function (ABI 1.8; false on an older host).
  bool in_script() const { return VSL_HAS(g_api, in_script) && Api().in_script(c_) == 1; }
  // Parks the client (see vsl_api.block); false when it cannot block: reply "nothing" then.
  bool Block(int64_t timeout_ms) { return Api().block(c_, timeout_ms) == VSL_OK; }
  // The same with VSL_BLOCK_* flags and a state for the re-runs (ABI 1.7; on an older host the
  // flags and state are dropped).
  bool Block(int64_t timeout_ms, uint32_t flags, std::string_view state) {
    if (!VSL_HAS(g_api, block_ex)) return Block(timeout_ms);
    return Api().block_ex(c_, timeout_ms, flags, state.data(), state.size()) == VSL_OK;
  }
  // In a re-run of a parked command: true with the state it parked with (ABI 1.7).
  bool Rerun(std::string_view* state = nullptr) const {
    vsl_slice s{};
    if (!VSL_HAS(g_api, block_state) || Api().block_state(c_, &s) != VSL_OK) return false;
    if (state != nullptr) *state = View(s);
    return true;
  }
  // A host setting by CONFIG name (ABI 1.1); `fallback` on older hosts or unknown names.
  int64_t Setting(const char* name, int64_t fallback) const {
    int64_t v;
    if (!VSL_HAS(g_api, setting_int64) || Api().setting_int64(c_, name, &v) != VSL_OK)
      return fallback;
    return v;
  }

  // What the append-only file records for this call instead of the command as called (ABI 1.5,
  // see vsl_api.propagate): each call appends one command. No-op on older hosts.
  void Propagate(std::span<const std::string_view> argv) {
    if (!VSL_HAS(g_api, propagate)) return;
    vsl_slice buf[16];
    std::vector<vsl_slice> big;
    vsl_slice* s = buf;
    if (argv.size() > 16) {
      big.resize(argv.size());
      s = big.data();
    }
    for (size_t i = 0; i < argv.size(); ++i) s[i] = {argv[i].data(), argv[i].size()};
    Api().propagate(c_, s, static_cast<int>(argv.size()));
  }
  void Propagate(std::initializer_list<std::string_view> argv) {
    Propagate(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  // Records nothing for this call (a write that changed nothing worth replaying).
  void PropagateNothing() {
    if (VSL_HAS(g_api, propagate)) Api().propagate(c_, nullptr, 0);
  }

  // ---- what one command may allocate, and what it changed (ABI 1.6) ----
  // The most bytes one command may create from its arguments (vsl_api.value_size_limit: the
  // host's proto-max-bulk-len); on an older host the setting, or Redis's default.
  uint64_t ValueSizeLimit() const {
    if (VSL_HAS(g_api, value_size_limit)) return Api().value_size_limit(c_);
    return static_cast<uint64_t>(Setting("proto-max-bulk-len", int64_t{512} << 20));
  }
  // Whether `bytes` more may be allocated under maxmemory, the host evicting first
  // (vsl_api.may_allocate); true on an older host.
  bool MayAllocate(uint64_t bytes) const {
    return !VSL_HAS(g_api, may_allocate) || Api().may_allocate(c_, bytes) == VSL_OK;
  }
  // Before allocating `bytes` that an argument decided (not the bytes the client sent): fails
  // with "ERR <what> exceeds maximum allowed size (proto-max-bulk-len)" past ValueSizeLimit(),
  // and with Redis's OOM error when maxmemory leaves no room. Call it before changing anything.
  void CheckGrowth(uint64_t bytes, std::string_view what) const {
    if (bytes > ValueSizeLimit())
      Fail(std::string(what) + " exceeds maximum allowed size (proto-max-bulk-len)");
    if (!MayAllocate(bytes)) FailOom();
  }
  // Adds n to what the call changed as Redis's server.dirty counts it (vsl_api.add_changes);
  // without a call the host counts one per key changed. No-op on an older host.
  void AddChanges(uint64_t n) {
    if (VSL_HAS(g_api, add_changes)) Api().add_changes(c_, n);
  }

  // Argument parsing with Redis's errors.
  int64_t IntArg(int i) const {
    int64_t v;
    if (!ParseInt(arg(i), &v)) NotInteger();
    return v;
  }
  double DoubleArg(int i) const {
    double v;
    if (!ParseDouble(arg(i), &v)) NotFloat();
    return v;
  }
  bool ArgIs(int i, std::string_view word) const { return EqualsNoCase(arg(i), word); }
  // The timeout of a blocking command in seconds (Redis 7.0's getTimeoutFromObjectOrReply):
  // fractional, rounded up to whole milliseconds; the milliseconds for Block (0 = forever).
  int64_t TimeoutMsArg(int i) const {
    long double seconds;
    if (!ParseLongDouble(arg(i), &seconds)) Fail("timeout is not a float or out of range");
    const long double ms = std::ceil(seconds * 1000.0L);
    // Out of range conversions give INT64_MIN, as the x86 conversion Redis relies on does.
    const int64_t t = (ms >= -0x1p63L && ms < 0x1p63L) ? static_cast<int64_t>(ms) : INT64_MIN;
    if (t < 0) Fail("timeout is negative");
    // Redis 7.0's deadline overflows there and the client never times out.
    if (t > INT64_MAX - now_ms()) return 0;
    return t;
  }

  // Replies.
  void Null() { Api().reply_null(c_); }
  void NullArray() { Api().reply_null_array(c_); }
  void Bool(bool v) { Api().reply_bool(c_, v); }
  void Int(int64_t v) { Api().reply_int64(c_, v); }
  void Double(double v) { Api().reply_double(c_, v); }
  // A double with the module's own text (ABI 1.3; a bulk string on older hosts).
  void DoubleText(std::string_view text) {
    if (VSL_HAS(g_api, reply_double_text)) {
      Api().reply_double_text(c_, text.data(), text.size());
    } else {
      Bulk(text);
    }
  }
  void Simple(std::string_view s) { Api().reply_simple(c_, s.data(), s.size()); }
  void Ok() { Simple("OK"); }
  void Bulk(std::string_view s) { Api().reply_bulk(c_, s.data(), s.size()); }
  void Verbatim(std::string_view s) { Api().reply_verbatim(c_, "txt", s.data(), s.size()); }
  void Error(const char* code, const std::string& msg) { Api().reply_error(c_, code, msg.c_str()); }
  vsl_agg Array(int64_t n) { return Api().reply_array(c_, n); }
  vsl_agg Map(int64_t pairs) { return Api().reply_map(c_, pairs); }
  vsl_agg Set(int64_t n) { return Api().reply_set(c_, n); }
  vsl_agg DeferredArray() { return Api().reply_array(c_, VSL_LEN_DEFERRED); }
  vsl_agg DeferredMap() { return Api().reply_map(c_, VSL_LEN_DEFERRED); }
  vsl_agg DeferredSet() { return Api().reply_set(c_, VSL_LEN_DEFERRED); }
  void SetLen(vsl_agg agg, int64_t n) { Api().reply_set_len(c_, agg, n); }

  vsl_ctx* raw() const { return c_; }

 private:
  vsl_ctx* c_;
  const vsl_slice* argv_;
  int argc_;
};

// Redis's arity error for a command whose optional arguments are malformed in number (the host
// checks the descriptor's arity; this is for shapes the arity cannot express, as RPOP's).
[[noreturn]] inline void FailArity(const Ctx& ctx) {
  std::string name(ctx.arg(0));
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  Fail("wrong number of arguments for '" + name + "' command");
}

// Adapts `void F(Ctx&)` to the C handler signature; exceptions become error replies.
template <void (*F)(Ctx&)>
int Handler(vsl_ctx* c, const vsl_slice* argv, int argc) noexcept {
  Ctx ctx(c, argv, argc);
  try {
    F(ctx);
  } catch (const Error& e) {
    ctx.Error(e.code.c_str(), e.message);
  } catch (const std::bad_alloc&) {
    ctx.Error("OOM", VSL_OOM_MSG);
  } catch (const std::exception& e) {
    ctx.Error("ERR", e.what());
  } catch (...) {
    ctx.Error("ERR", "internal error in module command");
  }
  return VSL_OK;
}

// ---- the command table ----

constexpr vsl_keyspec KeyAt(int32_t index, uint32_t flags, int32_t last_key = 0, int32_t step = 1) {
  return vsl_keyspec{sizeof(vsl_keyspec), flags, index, nullptr, last_key, step, 0, 0, 0, nullptr};
}
constexpr vsl_keyspec KeyNum(int32_t begin, uint32_t flags, int32_t keynum_index, int32_t first_key,
                             int32_t step = 1) {
  return vsl_keyspec{sizeof(vsl_keyspec),
                     flags | VSL_KS_KEYNUM,
                     begin,
                     nullptr,
                     0,
                     step,
                     0,
                     keynum_index,
                     first_key,
                     nullptr};
}
// The same key spec with notes for COMMAND INFO.
constexpr vsl_keyspec WithNotes(vsl_keyspec k, const char* notes) {
  k.notes = notes;
  return k;
}

// One row of a module's command table; up to four key specs inline (unused ones stay zero).
// Write rows with designated initializers, in this order, one command per row, and keep
// clang-format from spreading them (it would put each field on its own line):
//
//   // clang-format off
//   constexpr vsl::CommandDef kCommands[] = {
//       {.name = "CTR.GET", .arity = 2, .flags = VSL_CMD_READONLY | VSL_CMD_FAST,
//        .keys = {vsl::KeyAt(1, VSL_KS_RO)}, .handler = vsl::Handler<CmdCtrGet>, .since = "1.0.0",
//        .summary = "Returns a counter.", .syntax = "key", .complexity = "O(1)"},
//   };
//   // clang-format on
//
// A row without .group takes the group given to RegisterCommands.
struct CommandDef {
  const char* name;
  int32_t arity;
  uint64_t flags;
  vsl_keyspec keys[4];
  vsl_cmd_fn handler;
  const char* group;
  const char* since;
  const char* summary;
  const char* syntax;
  const char* complexity;
  const char* tips = nullptr;  // COMMAND INFO tips, space separated
  const char* acl = nullptr;   // ACL categories beyond the flags' (ABI 1.4), e.g. "@sortedset @geo"
  // COMMAND DOCS arguments (ABI 1.6); none: the host derives them from syntax.
  std::span<const vsl_command_arg> args = {};
};

// Registers every row; a row without .group takes `group` (COMMAND DOCS's group, e.g. "list").
// On failure writes the reason to err and returns false.
inline bool RegisterCommands(vsl_module* m, std::span<const CommandDef> defs, const char* group,
                             char* err, size_t errlen) {
  for (const CommandDef& d : defs) {
    uint32_t n = 0;
    while (n < 4 && d.keys[n].flags != 0) ++n;
    vsl_command_desc desc{};
    desc.struct_size = sizeof(desc);
    desc.name = d.name;
    desc.arity = d.arity;
    desc.flags = d.flags;
    desc.keyspecs = d.keys;
    desc.n_keyspecs = n;
    desc.keyspec_stride = sizeof(vsl_keyspec);
    desc.handler = d.handler;
    desc.summary = d.summary;
    desc.syntax = d.syntax;
    desc.complexity = d.complexity;
    desc.since = d.since;
    desc.group = d.group != nullptr ? d.group : group;
    desc.tips = d.tips;
    desc.acl_categories = d.acl;
    desc.args = d.args.data();
    desc.n_args = static_cast<uint32_t>(d.args.size());
    if (Api().register_command(m, &desc) != VSL_OK) {
      std::snprintf(err, errlen, "cannot register command %s", d.name);
      return false;
    }
  }
  return true;
}
// The same, for tables whose rows all name their group.
inline bool RegisterCommands(vsl_module* m, std::span<const CommandDef> defs, char* err,
                             size_t errlen) {
  return RegisterCommands(m, defs, nullptr, err, errlen);
}

// Checks the host has every ABI 1.0 slot, then stores the table. Call first in init. (The
// manifest already refused hosts older than the module's min_abi_minor; wrappers of newer slots
// check VSL_HAS.)
inline bool Init(const vsl_api* api, char* err, size_t errlen) {
  if (api == nullptr || api->abi_major != VSL_ABI_MAJOR || !VSL_HAS(api, read_bytes)) {
    std::snprintf(err, errlen, "host API table too old");
    return false;
  }
  g_api = api;
  return true;
}

}  // namespace vsl

#endif  // VESSEL_MODULE_HPP_
