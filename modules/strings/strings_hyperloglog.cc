// The HyperLogLog commands of the strings module: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST. An
// HLL is a string value in Redis's exact representation (hll.h), so values move between Redis and
// vessel with GET/SET and count the same on both; replies and errors are Redis 7.0's.
// The sparse representation turns dense past the host's hll-sparse-max-bytes (default 3000).
//
// Deliberate differences from Redis:
//   - PFCOUNT has no "may_replicate" flag in COMMAND INFO (the SDK has none yet).
//   - PFDEBUG GETREG/TODENSE and a PFADD that fails on a corrupt value after growing it report
//     the key modified to WATCH when the value moved to a new block; Redis does not.
//   - A sparse value cut in the middle of its last XZERO opcode reads the missing byte as zero;
//     Redis reads whatever follows the string in memory (its terminator, or a byte an earlier
//     PFADD left there), so such corrupt values may evolve differently.
#include <cstring>
#include <string>

#include "bits.h"
#include "hll.h"
#include "strings_commands.h"
#include "strings_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::strings {
namespace {

using vsl::Ctx;
using vsl::Key;

[[noreturn]] void Corrupt() { throw vsl::Error{"INVALIDOBJ", hll::kCorrupt}; }

size_t SparseMaxBytes(const Ctx& ctx) {
  const int64_t v = ctx.Setting("hll-sparse-max-bytes", hll::kDefaultSparseMaxBytes);
  return v < 0 ? 0 : static_cast<size_t>(v);
}

// Redis's isHLLObjectOrReply for a string value.
void CheckHll(Value v) {
  if (!hll::IsHll(Bytes(v).view())) throw vsl::Error{"WRONGTYPE", hll::kNotHll};
}

// The key's value when it holds an HLL, nullptr without a key; otherwise Redis's WRONGTYPE
// errors (the standard one for another type, its own for a string that is no HLL).
Value LookupHll(const Key& key) {
  const Value v = Lookup(key);
  if (v != nullptr) CheckHll(v);
  return v;
}

// An HLL value being changed in place (or in a new block when it grows or turns dense); a new
// key starts as Redis's empty sparse HLL. Every value it touches becomes "raw", as Redis unshares
// a string it opens for writing.
class HllWriter {
 public:
  explicit HllWriter(Value v) : e_(v) {
    if (v == nullptr) {
      e_.Reserve(hll::Empty().size() + 3);  // room for the first register's split
      e_.Assign(hll::Empty());
    }
    e_.set_hint(Hint::kRaw);
  }
  uint8_t* data() { return e_.data(); }
  size_t size() const { return e_.size(); }
  bool dense() { return hll::Encoding(e_.data()) == hll::kDense; }

  // Redis's hllAdd step for one register: 1 raised, 0 not, -1 corrupt opcodes.
  int Set(uint32_t index, uint8_t count, size_t sparse_max_bytes) {
    if (dense()) return hll::DenseSet(data() + hll::kHeaderSize, index, count) ? 1 : 0;
    size_t len = e_.size();
    hll::SparseResult r =
        hll::SparseSet(e_.data(), &len, e_.capacity(), index, count, sparse_max_bytes);
    if (r == hll::kNeedRoom) {
      e_.Reserve(3);
      r = hll::SparseSet(e_.data(), &len, e_.capacity(), index, count, sparse_max_bytes);
    }
    if (r == hll::kInvalid) return -1;
    if (r != hll::kPromote) {
      e_.Resize(len);
      return r == hll::kUpdated ? 1 : 0;
    }
    if (!ToDense()) return -1;
    return hll::DenseSet(data() + hll::kHeaderSize, index, count) ? 1 : 0;
  }

  // Redis's hllSparseToDense; false for corrupt opcodes (the value is unchanged then).
  bool ToDense() {
    if (dense()) return true;
    uint8_t buf[hll::kDenseSize];
    if (!hll::SparseToDense(e_.data(), e_.size(), buf)) return false;
    e_.Assign({reinterpret_cast<const char*>(buf), sizeof(buf)});
    return true;
  }

  // Stores the result: a value that moved replaces the old one (keeping the TTL); an in-place
  // change is reported to WATCH when `signal`, as Redis signals it.
  void Store(Key& key, bool signal) {
    const bool moved = e_.moved();
    const Value v = e_.Release();
    if (moved) return key.SetRaw(g_string_type, v, VSL_SET_KEEPTTL);
    if (signal) key.Modified();
  }

 private:
  StringEditor e_;
};

// PFADD key [element [element ...]]
void CmdPfAdd(Ctx& ctx) {
  Key key = ctx.key(0);
  const Value old = LookupHll(key);
  HllWriter w(old);
  const size_t max_bytes = SparseMaxBytes(ctx);
  // Redis counts a change for the new key and one for every element that raised a register.
  uint64_t changes = old == nullptr ? 1 : 0;
  bool corrupt = false;
  for (int j = 2; j < ctx.argc() && !corrupt; ++j) {
    uint32_t index;
    const uint8_t count = hll::PatLen(ctx.arg(j), &index);
    const int r = w.Set(index, count, max_bytes);
    corrupt = r < 0;
    changes += r > 0 ? 1 : 0;
  }
  const bool updated = changes != 0;
  // As in Redis, registers raised before a corrupt opcode was met stay raised.
  if (updated && !corrupt) hll::InvalidateCache(w.data());
  w.Store(key, updated && !corrupt);
  ctx.AddChanges(corrupt ? 0 : changes);
  if (corrupt) Corrupt();
  if (updated) key.Notify(VSL_NOTIFY_STRING, "pfadd");
  ctx.Int(updated ? 1 : 0);
}

// PFCOUNT key [key ...]
void CmdPfCount(Ctx& ctx) {
  const int n = ctx.key_count();
  if (n > 1) {  // the union; nothing is cached
    uint8_t max[hll::kRegisters] = {};
    for (int i = 0; i < n; ++i) {
      const Value v = LookupHll(ctx.key(i));
      if (v == nullptr) continue;
      Bytes b(v);
      if (!hll::Merge(max, reinterpret_cast<const uint8_t*>(b.view().data()), b.size())) Corrupt();
    }
    return ctx.Int(static_cast<int64_t>(hll::CountRaw(max)));
  }
  Key key = ctx.key(0);
  const Value v = LookupHll(key);
  if (v == nullptr) return ctx.Int(0);
  MarkRaw(v);
  StringEditor e(v);  // an HLL is at least 16 bytes: always a heap value, edited in place
  uint64_t card;
  if (!hll::CachedCount(e.data(), &card)) {
    bool invalid = false;
    card = hll::Count(e.data(), e.size(), &invalid);
    if (invalid) Corrupt();
    hll::SetCachedCount(e.data(), card);
    key.Modified();
  }
  ctx.Int(static_cast<int64_t>(card));
}

// PFMERGE destkey [sourcekey [sourcekey ...]]
void CmdPfMerge(Ctx& ctx) {
  // The maximum of every register over the destination and the sources, in argument order.
  uint8_t max[hll::kRegisters] = {};
  bool use_dense = false;
  for (int i = 0; i < ctx.key_count(); ++i) {
    const Value v = LookupHll(ctx.key(i));
    if (v == nullptr) continue;
    Bytes b(v);
    const auto* p = reinterpret_cast<const uint8_t*>(b.view().data());
    use_dense |= hll::Encoding(p) == hll::kDense;
    if (!hll::Merge(max, p, b.size())) Corrupt();
  }
  Key dest = ctx.key(0);
  HllWriter w(Lookup(dest));  // created even with no source, as Redis 7.0 does
  if (use_dense && !w.ToDense()) Corrupt();
  const size_t max_bytes = SparseMaxBytes(ctx);
  for (uint32_t j = 0; j < hll::kRegisters; ++j) {
    if (max[j] != 0) w.Set(j, max[j], max_bytes);
  }
  hll::InvalidateCache(w.data());
  w.Store(dest, true);
  dest.Notify(VSL_NOTIFY_STRING, "pfadd");
  ctx.Ok();
}

// Redis's addReplyErrorFormat: the text stops at a NUL and carries no line breaks.
std::string ErrorText(std::string_view s) {
  std::string out(s.substr(0, s.find('\0')));
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

// PFDEBUG <GETREG | DECODE | ENCODING | TODENSE> key
void CmdPfDebug(Ctx& ctx) {
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  if (old == nullptr) vsl::Fail("The specified key does not exist");
  CheckHll(old);
  HllWriter w(old);
  const std::string_view sub = ctx.arg(1);
  if (bits::WordIs(sub, "getreg")) {
    if (!w.ToDense()) Corrupt();
    ctx.Array(hll::kRegisters);
    for (uint32_t j = 0; j < hll::kRegisters; ++j)
      ctx.Int(hll::DenseGet(w.data() + hll::kHeaderSize, j));
  } else if (bits::WordIs(sub, "decode")) {
    if (w.dense()) vsl::Fail("HLL encoding is not sparse");
    ctx.Bulk(hll::DecodeSparse(w.data(), w.size()));
  } else if (bits::WordIs(sub, "encoding")) {
    ctx.Simple(w.dense() ? "dense" : "sparse");
  } else if (bits::WordIs(sub, "todense")) {
    const bool was_sparse = !w.dense();
    if (!w.ToDense()) Corrupt();
    ctx.Int(was_sparse ? 1 : 0);
  } else {
    vsl::Fail("Unknown PFDEBUG subcommand '" + ErrorText(sub) + "'");
  }
  w.Store(key, false);
}

// PFSELFTEST
void CmdPfSelfTest(Ctx& ctx) {
  std::string error;
  if (!hll::SelfTest(SparseMaxBytes(ctx), static_cast<uint64_t>(ctx.now_ms()), &error))
    vsl::Fail(error);
  ctx.Ok();
}

// ---- the command table ----

using namespace vsl::table;

constexpr char kPfCountNotes[] =
    "RW because it may change the internal representation of the key, and propagate to replicas";
constexpr char kPfCountSummary[] =
    "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).";
constexpr char kPfCountComplexity[] =
    "O(1) with a very small average constant time when called with a single key. O(N) with N being "
    "the number of keys, and much bigger constant times, when called with multiple keys.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "PFADD", .arity = -2, .flags = kWrite | kDenyOom | kFast, .keys = {kRwInsert},
     .handler = vsl::Handler<CmdPfAdd>, .since = "2.8.9",
     .summary = "Adds the specified elements to the specified HyperLogLog.",
     .syntax = "key [element [element ...]]", .complexity = "O(1) to add every element."},
    {.name = "PFCOUNT", .arity = -2, .flags = kRead,
     .keys = {vsl::WithNotes(vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS, -1), kPfCountNotes)},
     .handler = vsl::Handler<CmdPfCount>, .since = "2.8.9", .summary = kPfCountSummary,
     .syntax = "key [key ...]", .complexity = kPfCountComplexity},
    {.name = "PFMERGE", .arity = -2, .flags = kWrite | kDenyOom,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_INSERT),
              vsl::KeyAt(2, VSL_KS_RO | VSL_KS_ACCESS, -1)}, .handler = vsl::Handler<CmdPfMerge>,
     .since = "2.8.9", .summary = "Merge N different HyperLogLogs into a single one.",
     .syntax = "destkey [sourcekey [sourcekey ...]]",
     .complexity = "O(N) to merge N HyperLogLogs, but with high constant times."},
    {.name = "PFDEBUG", .arity = 3, .flags = kWrite | kDenyOom | VSL_CMD_ADMIN,
     .keys = {vsl::KeyAt(2, VSL_KS_RW | VSL_KS_ACCESS)}, .handler = vsl::Handler<CmdPfDebug>,
     .since = "2.8.9", .summary = "Internal commands for debugging HyperLogLog values",
     .syntax = "subcommand key", .complexity = "N/A"},
    {.name = "PFSELFTEST", .arity = 1, .flags = VSL_CMD_ADMIN,
     .handler = vsl::Handler<CmdPfSelfTest>, .since = "2.8.9",
     .summary = "An internal command for testing HyperLogLog values", .syntax = "",
     .complexity = "N/A"},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> HyperLogLogCommands() { return kCommands; }

}  // namespace vessel::strings
