// Optional header-only helpers over vessel/module.hpp for what value families keep needing: short
// names for the command table, vsl_module_init in a few lines, the argument shapes Redis's
// families share (SCAN options, counts, indexes, ranges, *MPOP), a seeded hash of bytes, a
// per-thread random generator and a set of positions for drawing distinct elements. Like
// module.hpp it compiles into the module: nothing here crosses the ABI, and its state (the hash
// seed, the random seed) belongs to the module that includes it.
//
// Threads: ModuleInit runs on the main thread before any handler; RandomU64 keeps one state per
// thread; everything else is a pure function or works on the caller's objects.
#ifndef VESSEL_UTIL_HPP_
#define VESSEL_UTIL_HPP_

#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "vessel/module.hpp"

namespace vsl {

// ---- the command table: short names, brought in with `using namespace vsl::table;` ----

namespace table {

inline constexpr uint64_t kRead = VSL_CMD_READONLY;
inline constexpr uint64_t kWrite = VSL_CMD_WRITE;
inline constexpr uint64_t kFast = VSL_CMD_FAST;
inline constexpr uint64_t kDenyOom = VSL_CMD_DENYOOM;
inline constexpr uint64_t kBlocking = VSL_CMD_BLOCKING;
inline constexpr uint64_t kNoScript = VSL_CMD_NOSCRIPT;

// The key at argument 1 with the flags its name spells: RO / RW / OW, then ACCESS, UPDATE,
// INSERT, DELETE (Redis 7's key-spec flags). Keys elsewhere are written with KeyAt / KeyNum.
inline constexpr vsl_keyspec kRo = KeyAt(1, VSL_KS_RO);
inline constexpr vsl_keyspec kRoAccess = KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS);
inline constexpr vsl_keyspec kRwUpdate = KeyAt(1, VSL_KS_RW | VSL_KS_UPDATE);
inline constexpr vsl_keyspec kRwAccessUpdate = KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE);
inline constexpr vsl_keyspec kRwInsert = KeyAt(1, VSL_KS_RW | VSL_KS_INSERT);
inline constexpr vsl_keyspec kRwDelete = KeyAt(1, VSL_KS_RW | VSL_KS_DELETE);
inline constexpr vsl_keyspec kRwAccessDelete = KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE);
inline constexpr vsl_keyspec kOwUpdate = KeyAt(1, VSL_KS_OW | VSL_KS_UPDATE);

// COMMAND INFO tips (CommandDef::tips).
inline constexpr char kTipOrder[] = "nondeterministic_output_order";
inline constexpr char kTipRandom[] = "nondeterministic_output";

// Redis's complexity text of HSCAN, SSCAN and ZSCAN, its doubled period included.
inline constexpr char kScanComplexity[] =
    "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
    "cursor to return back to 0. N is the number of elements inside the collection..";

}  // namespace table

// ---- containers in the host allocator ----

template <class T>
using Vec = std::vector<T, Allocator<T>>;

// Owns a value allocated with vsl::New until it is stored in a key (Key::Set(type, p.release())).
template <class T>
struct Deleter {
  void operator()(T* p) const { Delete(p); }
};
template <class T>
using Owned = std::unique_ptr<T, Deleter<T>>;

// ---- the module's hash of bytes and its random generator ----

namespace detail {
__extension__ typedef unsigned __int128 U128;  // GCC and clang; __extension__ for -pedantic
// 64x64 -> 128-bit multiply folded to 64 bits: the mixing step of wyhash-style hashes.
inline uint64_t Mum(uint64_t a, uint64_t b) {
  const U128 r = static_cast<U128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline constexpr uint64_t kK0 = 0xa0761d6478bd642full;
inline constexpr uint64_t kK1 = 0xe7037ed1a0b428dbull;
inline constexpr uint64_t kK2 = 0x8ebc6af09c88c6e3ull;

inline uint64_t g_hash_seed = 0x2d358dccaa6c78a5ull;
inline std::atomic<uint64_t> g_random_seed{0x9E3779B97F4A7C15ull};
inline thread_local uint64_t t_random_state = 0;
inline thread_local bool t_random_seeded = false;
}  // namespace detail

// The seed of HashBytes. ModuleInit sets a random one (hash flooding); set it only before the
// module's containers hold anything, since it moves every element's hash.
inline void SetHashSeed(uint64_t seed) { detail::g_hash_seed = seed; }

// A seeded 64-bit hash of bytes (wyhash-style), for the module's hash tables.
inline uint64_t HashBytes(std::string_view s) {
  namespace d = detail;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = d::g_hash_seed ^ d::Mum(n ^ d::kK0, d::kK1);
  for (; n > 16; p += 16, n -= 16) h = d::Mum(d::Load64(p) ^ d::kK1 ^ h, d::Load64(p + 8) ^ d::kK2);
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = d::Load64(p);
    b = d::Load64(p + n - 8);
  } else if (n >= 4) {
    a = d::Load32(p);
    b = d::Load32(p + n - 4);
  } else if (n > 0) {
    a = uint64_t{static_cast<unsigned char>(p[0])} << 16 |
        uint64_t{static_cast<unsigned char>(p[n >> 1])} << 8 | static_cast<unsigned char>(p[n - 1]);
  }
  h = d::Mum(a ^ d::kK2 ^ h, b ^ d::kK0 ^ s.size());
  return d::Mum(h ^ d::kK1, h ^ d::kK0);
}
// The same folded to 32 bits, for tables that keep the hash beside a 32-bit position.
inline uint32_t HashBytes32(std::string_view s) {
  const uint64_t h = HashBytes(s);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// The seed the threads' generators start from (each thread takes its own from it on first use).
// ModuleInit sets a random one.
inline void SeedRandom(uint64_t seed) {
  detail::g_random_seed.store(seed, std::memory_order_relaxed);
}
// A uniform 64-bit number (wyrand, one state per thread: no lock, no sharing).
inline uint64_t RandomU64() {
  namespace d = detail;
  if (!d::t_random_seeded) {
    d::t_random_state =
        d::g_random_seed.fetch_add(0x6A09E667F3BCC909ull, std::memory_order_relaxed);
    d::t_random_seeded = true;
  }
  d::t_random_state += d::kK0;
  return d::Mum(d::t_random_state ^ d::kK1, d::t_random_state);
}
// A uniform integer in [0, n), n > 0.
inline uint64_t RandomBelow(uint64_t n) {
  return static_cast<uint64_t>((static_cast<detail::U128>(RandomU64()) * n) >> 64);
}

// A set of positions (or any 64-bit values below UINT64_MAX), for drawing distinct random
// elements by rejection: open addressing sized for n of them. Throws std::bad_alloc.
class PositionSet {
 public:
  explicit PositionSet(size_t n) {
    size_t cap = 8;
    while (cap < n * 2) cap *= 2;
    slots_.assign(cap, 0);
  }
  // False when pos was already in.
  bool Insert(uint64_t pos) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = (pos * 0x9E3779B97F4A7C15ull) >> 20 & mask;; i = (i + 1) & mask) {
      if (slots_[i] == pos + 1) return false;
      if (slots_[i] == 0) {
        slots_[i] = pos + 1;
        return true;
      }
    }
  }

 private:
  Vec<uint64_t> slots_;
};

// ---- vsl_module_init ----

// The steps of a vsl_module_init for a module that takes no arguments, each skipped once one
// failed, the first failure's reason in err:
//
//   extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m,
//                                             const vsl_slice*, size_t nargs, char* err,
//                                             size_t errlen) {
//     vsl::ModuleInit init(api, m, "lists", nargs, err, errlen);
//     init.Type(g_list_type, "list", 1);
//     init.Commands(kCommands, "list");
//     return init.result();
//   }
class ModuleInit {
 public:
  // Checks the host (vsl::Init), refuses arguments ("the <module> module takes no arguments")
  // and seeds the module's HashBytes and random generator from std::random_device.
  ModuleInit(const vsl_api* api, vsl_module* m, const char* module, size_t nargs, char* err,
             size_t errlen)
      : m_(m), err_(err), errlen_(errlen) {
    ok_ = Init(api, err, errlen);
    if (ok_ && nargs != 0) Fail("the %s module takes no arguments", module);
    if (!ok_) return;
    std::random_device rd;
    SetHashSeed((uint64_t{rd()} << 32) ^ rd());
    SeedRandom((uint64_t{rd()} << 32) ^ rd());
  }

  bool ok() const { return ok_; }
  vsl_module* module() const { return m_; }
  int result() const { return ok_ ? VSL_OK : VSL_ERR; }

  // Registers a value type ("cannot register the <name> type").
  template <class T>
  void Type(vsl::Type<T>& t, const char* name, uint32_t encoding_version,
            const char* rdb_name = nullptr) {
    if (ok_ && !t.Register(m_, name, encoding_version, rdb_name)) Fail(kTypeError, name);
  }
  // The same for a type registered by the module's own function.
  void Type(bool (*register_type)(vsl_module*), const char* name) {
    if (ok_ && !register_type(m_)) Fail(kTypeError, name);
  }
  // Registers a table of commands (rows without .group take `group`).
  void Commands(std::span<const CommandDef> defs, const char* group) {
    if (ok_) ok_ = RegisterCommands(m_, defs, group, err_, errlen_);
  }

 private:
  static constexpr char kTypeError[] = "cannot register the %s type";
  void Fail(const char* format, const char* what) {
    std::snprintf(err_, errlen_, format, what);
    ok_ = false;
  }

  vsl_module* m_;
  char* err_;
  size_t errlen_;
  bool ok_ = false;
};

// ---- keys ----

// After elements were removed in place from the value of `key`: fires `event` (of class `type`,
// a VSL_NOTIFY_*), then deletes the key and fires "del" when the value is left `empty`, else
// reports the change (Redis's order: an empty container never stays behind).
inline void CommitRemoval(Key& key, bool empty, int type, const char* event) {
  key.Notify(type, event);
  if (empty) {
    key.Delete();
    key.Notify(VSL_NOTIFY_GENERIC, "del");
  } else {
    key.Modified();
  }
}

// ---- arguments, with Redis's errors ----

// An integer in [min, max]; anything else fails with "ERR <msg>" (Redis's
// getRangeLongFromObjectOrReply with a message).
inline int64_t IntArgInRange(const Ctx& ctx, int i, int64_t min, int64_t max, const char* msg) {
  int64_t v;
  if (!ParseInt(ctx.arg(i), &v) || v < min || v > max) Fail(msg);
  return v;
}
// A count of elements to pop or return (LPOP, SPOP, ZPOPMIN): an integer >= 0, anything else
// "value is out of range, must be positive" (Redis's getPositiveLongFromObjectOrReply).
inline int64_t PositiveArg(const Ctx& ctx, int i) {
  return IntArgInRange(ctx, i, 0, INT64_MAX, "value is out of range, must be positive");
}
// The count of HRANDFIELD, SRANDMEMBER and ZRANDMEMBER: any integer but INT64_MIN, whose
// negation a negative count needs.
inline int64_t RandomCountArg(const Ctx& ctx, int i) {
  const int64_t count = ctx.IntArg(i);
  if (count == INT64_MIN) {
    Fail(
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  }
  return count;
}
// Before replying `count` random elements (repetitions allowed) of about `per_element` reply
// bytes each: the reply one command builds stays under the host's limit on one value
// (proto-max-bulk-len); Redis 7.0 builds it until memory runs out.
inline void CheckRandomReply(const Ctx& ctx, uint64_t count, uint64_t per_element) {
  if (count > ctx.ValueSizeLimit() / per_element) {
    Fail("value is out of range, the reply would be too large");
  }
}

// The position of `index` among `len` elements, a negative index counting from the end (-1 is
// the last); -1 when it is out of range (LINDEX, LSET).
inline int64_t Position(int64_t index, size_t len) {
  const int64_t n = static_cast<int64_t>(len);
  if (index < 0) index += n;
  return index < 0 || index >= n ? -1 : index;
}
// The inclusive range start..stop over `len` elements as LRANGE reads it (negative indexes from
// the end, then clamped): [*first, *last), or false when it holds nothing.
inline bool ClampRange(int64_t start, int64_t stop, size_t len, size_t* first, size_t* last) {
  const int64_t n = static_cast<int64_t>(len);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *first = static_cast<size_t>(start);
  *last = static_cast<size_t>(stop) + 1;
  return true;
}

// The arguments of LMPOP / ZMPOP and their blocking forms: numkeys key [key ...] A | B
// [COUNT count], numkeys at argument `first` (Redis's lmpopGenericCommand, zmpopGenericCommand).
struct MPopArgs {
  int numkeys;
  bool second;    // B (RIGHT, MAX) rather than A (LEFT, MIN)
  int64_t count;  // 1 without COUNT
};
inline MPopArgs MPopArg(const Ctx& ctx, int first, std::string_view a, std::string_view b) {
  MPopArgs r{};
  const int64_t numkeys =
      IntArgInRange(ctx, first, 1, INT64_MAX, "numkeys should be greater than 0");
  if (numkeys >= ctx.argc() - first - 1) SyntaxError();  // no room for A | B
  r.numkeys = static_cast<int>(numkeys);
  const int where = first + r.numkeys + 1;
  if (ctx.ArgIs(where, b)) {
    r.second = true;
  } else if (!ctx.ArgIs(where, a)) {
    SyntaxError();
  }
  r.count = -1;
  for (int j = where + 1; j < ctx.argc(); ++j) {
    if (r.count == -1 && ctx.ArgIs(j, "count") && j + 1 < ctx.argc()) {
      r.count = IntArgInRange(ctx, ++j, 1, INT64_MAX, "count should be greater than 0");
    } else {
      SyntaxError();
    }
  }
  if (r.count == -1) r.count = 1;
  return r;
}

// ---- SCAN of one value: key cursor [MATCH pattern] [COUNT count] (HSCAN, SSCAN, ZSCAN) ----
//
// Redis's order: the cursor is checked first, then the key; a missing key answers an empty scan
// without its options being parsed, an existing one parses them:
//
//   const uint64_t cursor = vsl::CursorArg(ctx, 2);
//   const Set* s = Lookup(ctx.key(0));
//   if (s == nullptr) return vsl::ReplyEmptyScan(ctx);
//   const vsl::ScanOptions o = vsl::ScanOptionsArg(ctx, 3);
//   vsl::ReplyScanCursor(ctx, next);  // then the array of elements

// The cursor at argument i ("ERR invalid cursor"; see ParseCursor).
inline uint64_t CursorArg(const Ctx& ctx, int i) {
  uint64_t cursor;
  if (!ParseCursor(ctx.arg(i), &cursor)) Fail("invalid cursor");
  return cursor;
}

struct ScanOptions {
  uint64_t count = 10;       // elements to examine (a bound on the work, not on the reply)
  std::string_view pattern;  // MATCH's, when match
  bool match = false;        // a pattern other than "*"
  // Whether s passes MATCH (the host's glob matching, as Redis's stringmatchlen).
  bool Matches(std::string_view s) const {
    return !match || Api().glob_match(pattern.data(), pattern.size(), s.data(), s.size(), 0) != 0;
  }
};
// [MATCH pattern] [COUNT count] from argument `first`, repeatable, the last one winning
// (Redis's scanGenericCommand); a COUNT below 1 or anything else is "ERR syntax error".
inline ScanOptions ScanOptionsArg(const Ctx& ctx, int first) {
  ScanOptions o;
  for (int i = first; i < ctx.argc(); i += 2) {
    const bool more = i + 1 < ctx.argc();
    if (more && ctx.ArgIs(i, "count")) {
      const int64_t count = ctx.IntArg(i + 1);
      if (count < 1) SyntaxError();
      o.count = static_cast<uint64_t>(count);
    } else if (more && ctx.ArgIs(i, "match")) {
      o.pattern = ctx.arg(i + 1);
      o.match = o.pattern != "*";
    } else {
      SyntaxError();
    }
  }
  return o;
}
// Opens a scan reply: the two-element array and the next cursor (0 when the walk is over); the
// caller's array of elements follows.
inline void ReplyScanCursor(Ctx& ctx, uint64_t next) {
  ctx.Array(2);
  char num[24];
  const auto end = std::to_chars(num, num + sizeof(num), next);
  ctx.Bulk({num, static_cast<size_t>(end.ptr - num)});
}
// The whole reply of a scan of a missing key: cursor 0 and no elements.
inline void ReplyEmptyScan(Ctx& ctx) {
  ReplyScanCursor(ctx, 0);
  ctx.Array(0);
}

}  // namespace vsl

#endif  // VESSEL_UTIL_HPP_
