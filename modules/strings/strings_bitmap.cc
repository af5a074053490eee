// The bitmap commands of the strings module: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
// BITFIELD_RO on string values, with Redis 7.0's replies, errors and argument order (bits.h holds
// the pure bit operations). Offsets are bounded by the host's proto-max-bulk-len, as in Redis.
//
// Deliberate differences from Redis:
//   - Redis makes a value it opens for writing "raw" (OBJECT ENCODING) even when SETBIT or
//     BITFIELD changes nothing; vessel does too, except for values of up to 7 bytes, which keep
//     their encoding when nothing changes (they live in the key's pointer, and storing them again
//     would count as a modification for WATCH).
//   - A BITFIELD that only grows the string (every write failing under OVERFLOW FAIL) reports
//     the key modified to WATCH when the grown string had to move to a new block; Redis does not.
#include <string>
#include <string_view>
#include <vector>

#include "bits.h"
#include "strings_commands.h"
#include "strings_type.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::strings {
namespace {

using vsl::Ctx;
using vsl::Key;

const uint8_t* U8(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// A SETBIT/GETBIT offset (no "#N" form).
uint64_t OffsetArg(const Ctx& ctx, int i) {
  uint64_t offset;
  if (!bits::ParseBitOffset(ctx.arg(i), false, 0, MaxBulkLen(ctx), &offset))
    vsl::Fail(bits::kOffsetError);
  return offset;
}

// BYTE or BIT at argument i: true for BIT; anything else is a syntax error.
bool BitUnitArg(const Ctx& ctx, int i) {
  if (bits::WordIs(ctx.arg(i), "bit")) return true;
  if (!bits::WordIs(ctx.arg(i), "byte")) vsl::SyntaxError();
  return false;
}

// Redis's range normalisation for BITCOUNT and BITPOS over `total` units (bytes or bits):
// negative indexes count from the end, then both are clamped.
void Clamp(int64_t total, int64_t* start, int64_t* end) {
  if (*start < 0) *start += total;
  if (*end < 0) *end += total;
  if (*start < 0) *start = 0;
  if (*end < 0) *end = 0;
  if (*end >= total) *end = total - 1;
}

// SETBIT key offset value
void CmdSetBit(Ctx& ctx) {
  const uint64_t offset = OffsetArg(ctx, 2);
  int64_t on;
  if (!bits::ParseInt64(ctx.arg(3), &on) || (on & ~int64_t{1}) != 0)
    vsl::Fail("bit is not an integer or out of range");
  Key key = ctx.key(0);
  const Value old = Lookup(key);
  StringEditor e(old);
  const size_t byte = offset >> 3;
  CheckRoomToGrow(ctx, e.size(), uint64_t{byte} + 1);
  const bool grown = e.size() <= byte;
  e.GrowZero(byte + 1, old != nullptr);
  uint8_t& b = e.data()[byte];
  const int shift = 7 - static_cast<int>(offset & 7);
  const int was = (b >> shift) & 1;
  if (grown || was != on) {
    b = static_cast<uint8_t>((b & ~(1 << shift)) | (on << shift));
    e.set_hint(Hint::kRaw);
    Commit(key, old, e.Release());
    key.Notify(VSL_NOTIFY_STRING, "setbit");
  } else {
    MarkRaw(old);
  }
  ctx.Int(was);
}

// GETBIT key offset
void CmdGetBit(Ctx& ctx) {
  const uint64_t offset = OffsetArg(ctx, 2);
  const Value v = Lookup(ctx.key(0));
  Bytes b(v);  // nullptr: no bytes
  const uint64_t byte = offset >> 3;
  ctx.Int(byte < b.size() ? (U8(b.view())[byte] >> (7 - (offset & 7))) & 1 : 0);
}

// BITCOUNT key [start end [BYTE | BIT]]
void CmdBitCount(Ctx& ctx) {
  const Value v = Lookup(ctx.key(0));  // before the arguments, as Redis
  if (v == nullptr) return ctx.Int(0);
  Bytes b(v);
  const auto len = static_cast<int64_t>(b.size());
  int64_t start = 0, end = len - 1;
  bool in_bits = false;
  if (ctx.argc() == 4 || ctx.argc() == 5) {
    start = ctx.IntArg(2);
    end = ctx.IntArg(3);
    if (start < 0 && end < 0 && start > end) return ctx.Int(0);
    if (ctx.argc() == 5) in_bits = BitUnitArg(ctx, 4);
    Clamp(in_bits ? len * 8 : len, &start, &end);
  } else if (ctx.argc() != 2) {
    vsl::SyntaxError();
  }
  if (start > end) return ctx.Int(0);
  const auto first = static_cast<uint64_t>(in_bits ? start : start * 8);
  const auto last = static_cast<uint64_t>(in_bits ? end : end * 8 + 7);
  ctx.Int(static_cast<int64_t>(bits::CountBits(U8(b.view()), first, last)));
}

// BITPOS key bit [start [end [BYTE | BIT]]]
void CmdBitPos(Ctx& ctx) {
  const int64_t bit = ctx.IntArg(2);
  if (bit != 0 && bit != 1) vsl::Fail("The bit argument must be 1 or 0.");
  const Value v = Lookup(ctx.key(0));
  if (v == nullptr) return ctx.Int(bit ? -1 : 0);  // an endless run of zeros
  Bytes b(v);
  const auto len = static_cast<int64_t>(b.size());
  int64_t start = 0, end = len - 1;
  bool in_bits = false, end_given = false;
  if (ctx.argc() >= 4 && ctx.argc() <= 6) {
    start = ctx.IntArg(3);
    if (ctx.argc() == 6) in_bits = BitUnitArg(ctx, 5);
    if (ctx.argc() >= 5) {
      end = ctx.IntArg(4);
      end_given = true;
    }
    Clamp(in_bits ? len * 8 : len, &start, &end);
  } else if (ctx.argc() != 3) {
    vsl::SyntaxError();
  }
  if (start > end) return ctx.Int(-1);
  const auto first = static_cast<uint64_t>(in_bits ? start : start * 8);
  const auto last = static_cast<uint64_t>(in_bits ? end : end * 8 + 7);
  int64_t pos = bits::FindBit(U8(b.view()), first, last, static_cast<int>(bit));
  // Without an explicit end the string counts as padded with zeros on the right.
  if (pos < 0 && bit == 0 && !end_given) pos = static_cast<int64_t>(last + 1);
  ctx.Int(pos);
}

// BITOP <AND | OR | XOR | NOT> destkey key [key ...]
void CmdBitOp(Ctx& ctx) {
  bits::BitOp op;
  if (bits::WordIs(ctx.arg(1), "and")) {
    op = bits::BitOp::kAnd;
  } else if (bits::WordIs(ctx.arg(1), "or")) {
    op = bits::BitOp::kOr;
  } else if (bits::WordIs(ctx.arg(1), "xor")) {
    op = bits::BitOp::kXor;
  } else if (bits::WordIs(ctx.arg(1), "not")) {
    op = bits::BitOp::kNot;
  } else {
    vsl::SyntaxError();
  }
  if (op == bits::BitOp::kNot && ctx.argc() != 4)
    vsl::Fail("BITOP NOT must be called with a single source key.");
  // Sources are keys 1.. (key 0 is the destination). Values of up to 7 bytes are copied out of
  // their pointers; longer ones are read in place until the result is stored.
  const int n = ctx.key_count() - 1;
  std::vector<std::string_view> srcs(n);
  std::vector<std::string> small;
  small.reserve(n);
  size_t maxlen = 0;
  for (int i = 0; i < n; ++i) {
    const Value v = Lookup(ctx.key(i + 1));
    if (v == nullptr) continue;
    Bytes b(v);
    srcs[i] = b.size() <= kMaxInline ? std::string_view(small.emplace_back(b.view())) : b.view();
    maxlen = std::max(maxlen, b.size());
  }
  Key dest = ctx.key(0);
  if (maxlen == 0) {
    if (dest.Delete()) dest.Notify(VSL_NOTIFY_GENERIC, "del");
    return ctx.Int(0);
  }
  StringEditor e(nullptr);
  e.Reserve(maxlen, false);
  e.Resize(maxlen);
  bits::Combine(op, srcs, e.data(), maxlen);
  e.set_hint(Hint::kRaw);
  dest.SetRaw(g_string_type, e.Release());  // the destination loses its TTL, as in Redis
  dest.Notify(VSL_NOTIFY_STRING, "set");
  ctx.Int(static_cast<int64_t>(maxlen));
}

// Replies one GET operation's value read from p[0, len).
void ReplyGet(Ctx& ctx, const bits::FieldOp& op, const uint8_t* p, size_t len) {
  if (op.is_signed) return ctx.Int(bits::GetSigned(p, len, op.offset, op.bits));
  ctx.Int(static_cast<int64_t>(bits::GetUnsigned(p, len, op.offset, op.bits)));
}

// The body of BITFIELD and BITFIELD_RO (Redis's bitfieldGeneric): every operation is parsed
// before the key is read; only a command with a SET or INCRBY writes (and creates) the key.
void BitfieldGeneric(Ctx& ctx, bool ro_command) {
  std::vector<std::string_view> args;
  args.reserve(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) args.push_back(ctx.arg(i));
  bits::FieldCommand cmd;
  if (!bits::ParseBitfield(args, MaxBulkLen(ctx), &cmd)) vsl::Fail(cmd.error);
  Key key = ctx.key(0);
  if (cmd.readonly) {
    Bytes b(Lookup(key));
    ctx.Array(static_cast<int64_t>(cmd.ops.size()));
    for (const bits::FieldOp& op : cmd.ops) ReplyGet(ctx, op, U8(b.view()), b.size());
    return;
  }
  if (ro_command) vsl::Fail("BITFIELD_RO only supports the GET subcommand");
  const Value old = Lookup(key);
  StringEditor e(old);
  const size_t need = (cmd.highest_write_bit >> 3) + 1;
  CheckRoomToGrow(ctx, e.size(), need);
  const bool grown = e.size() < need;
  e.GrowZero(need, old != nullptr);
  e.set_hint(Hint::kRaw);
  ctx.Array(static_cast<int64_t>(cmd.ops.size()));
  uint64_t changes = 0;  // Redis counts every write that grew the string or changed its bits
  for (const bits::FieldOp& op : cmd.ops) {
    if (op.kind == bits::FieldOp::Kind::kGet) {
      ReplyGet(ctx, op, e.data(), e.size());
      continue;
    }
    int64_t reply;
    bool op_changed;
    if (!bits::ApplyField(e.data(), e.size(), op, &reply, &op_changed)) {
      ctx.Null();  // OVERFLOW FAIL: nothing written
      continue;
    }
    ctx.Int(reply);
    changes += grown || op_changed ? 1 : 0;
  }
  ctx.AddChanges(changes);
  if (changes != 0) {
    Commit(key, old, e.Release());
    return key.Notify(VSL_NOTIFY_STRING, "setbit");
  }
  // Nothing to report; a grown string that moved must still be stored.
  if (grown && e.moved()) return key.SetRaw(g_string_type, e.Release(), VSL_SET_KEEPTTL);
  if (!e.moved()) e.Release();
}

// BITFIELD key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>]
//     <SET encoding offset value | INCRBY encoding offset increment> ...]
void CmdBitfield(Ctx& ctx) { BitfieldGeneric(ctx, false); }

// BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]
void CmdBitfieldRo(Ctx& ctx) { BitfieldGeneric(ctx, true); }

// ---- the command table ----

using namespace vsl::table;

constexpr char kPerField[] = "O(1) for each subcommand specified";

constexpr vsl_keyspec kBitfieldKey =
    vsl::WithNotes(vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE | VSL_KS_VARIABLE_FLAGS),
                   "This command allows both access and modification of the key");
constexpr char kBitfieldSyntax[] =
    "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY "
    "encoding offset increment> [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET "
    "encoding offset value | INCRBY encoding offset increment> ...]]";
constexpr char kBitfieldRoSummary[] =
    "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "SETBIT", .arity = 4, .flags = kWrite | kDenyOom, .keys = {kRwAccessUpdate},
     .handler = vsl::Handler<CmdSetBit>, .since = "2.2.0",
     .summary = "Sets or clears the bit at offset in the string value stored at key",
     .syntax = "key offset value", .complexity = "O(1)"},
    {.name = "GETBIT", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGetBit>, .since = "2.2.0",
     .summary = "Returns the bit value at offset in the string value stored at key",
     .syntax = "key offset", .complexity = "O(1)"},
    {.name = "BITCOUNT", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdBitCount>, .since = "2.6.0",
     .summary = "Count set bits in a string", .syntax = "key [start end [BYTE | BIT]]",
     .complexity = "O(N)"},
    {.name = "BITPOS", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdBitPos>, .since = "2.8.7",
     .summary = "Find first bit set or clear in a string",
     .syntax = "key bit [start [end [BYTE | BIT]]]", .complexity = "O(N)"},
    {.name = "BITOP", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {vsl::KeyAt(2, VSL_KS_OW | VSL_KS_UPDATE),
              vsl::KeyAt(3, VSL_KS_RO | VSL_KS_ACCESS, -1)}, .handler = vsl::Handler<CmdBitOp>,
     .since = "2.6.0", .summary = "Perform bitwise operations between strings",
     .syntax = "<AND | OR | XOR | NOT> destkey key [key ...]", .complexity = "O(N)"},
    {.name = "BITFIELD", .arity = -2, .flags = kWrite | kDenyOom,
     .keys = {kBitfieldKey},
     .handler = vsl::Handler<CmdBitfield>, .since = "3.2.0",
     .summary = "Perform arbitrary bitfield integer operations on strings",
     .syntax = kBitfieldSyntax, .complexity = kPerField},
    {.name = "BITFIELD_RO", .arity = -2, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdBitfieldRo>, .since = "6.0.0", .summary = kBitfieldRoSummary,
     .syntax = "key [GET encoding offset [GET encoding offset ...]]", .complexity = kPerField},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> BitmapCommands() { return kCommands; }

}  // namespace vessel::strings
