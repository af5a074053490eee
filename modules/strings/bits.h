// Pure bit-string operations behind the bitmap commands (SETBIT ... BITFIELD): counting and
// searching bit ranges, BITOP's combination, Redis's bitfield integer codec and overflow rules,
// and the BITFIELD argument parser. No vsl_api call: the fuzz target links this file alone.
//
// Bit numbering follows Redis: bit 0 is the most significant bit of byte 0.
#ifndef VESSEL_MODULES_STRINGS_BITS_H_
#define VESSEL_MODULES_STRINGS_BITS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::strings::bits {

// Redis's strcasecmp(arg, word) on C strings: the argument stops at its first NUL; word is
// lower case.
bool WordIs(std::string_view arg, std::string_view word);

// Redis's string2ll: a canonical decimal int64 (no '+', no leading zero, shorter than 21 bytes).
bool ParseInt64(std::string_view s, int64_t* out);

// Set bits in bytes [0, n).
uint64_t PopCount(const uint8_t* p, size_t n);
// Set bits between bit offsets first and last inclusive (first <= last < 8 * length of p).
uint64_t CountBits(const uint8_t* p, uint64_t first, uint64_t last);
// The offset of the first bit equal to `bit` (0 or 1) between first and last inclusive, or -1.
int64_t FindBit(const uint8_t* p, uint64_t first, uint64_t last, int bit);

enum class BitOp { kAnd, kOr, kXor, kNot };
// BITOP: out[0, n) = op over srcs (NOT: exactly one source), a source's bytes past its end
// reading as zero; n is the longest source's length (at least one byte). out must not overlap
// any source.
void Combine(BitOp op, std::span<const std::string_view> srcs, uint8_t* out, size_t n);

// ---- bitfield integers (1 to 64 bits at any bit offset) ----

// The unsigned integer of `bits` bits at bit `offset` of p[0, len); bits past len read as zero.
uint64_t GetUnsigned(const uint8_t* p, size_t len, uint64_t offset, int bits);
// The same, sign-extended from its top bit.
int64_t GetSigned(const uint8_t* p, size_t len, uint64_t offset, int bits);
// Writes the low `bits` bits of value at bit `offset`; the bytes must exist.
void SetUnsigned(uint8_t* p, uint64_t offset, int bits, uint64_t value);

enum class Overflow { kWrap, kSat, kFail };
// Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow: 0 when value + incr fits
// in `bits`, 1 on overflow, -1 on underflow; then *limit is what WRAP or SAT stores (unchanged
// for FAIL).
int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, Overflow ow, uint64_t* limit);
int CheckSignedOverflow(int64_t value, int64_t incr, int bits, Overflow ow, int64_t* limit);

// ---- arguments ----

inline constexpr char kOffsetError[] = "bit offset is not an integer or out of range";
inline constexpr char kTypeError[] =
    "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";

// A bit offset argument (Redis's getBitOffsetFromArgument): a non-negative integer whose byte
// is below max_bulk_len; with `hash` and bits > 0, "#N" means N * bits.
bool ParseBitOffset(std::string_view s, bool hash, int bits, uint64_t max_bulk_len, uint64_t* out);

struct FieldOp {
  enum class Kind : uint8_t { kGet, kSet, kIncrBy };
  Kind kind;
  bool is_signed;
  int bits;
  Overflow overflow;
  uint64_t offset;
  int64_t value;  // SET value or INCRBY increment
};

struct FieldCommand {
  std::vector<FieldOp> ops;
  bool readonly = true;            // only GET operations
  uint64_t highest_write_bit = 0;  // the last bit a SET or INCRBY touches
  std::string error;               // the error message (after "ERR ") when parsing failed
};

// Runs a SET or INCRBY on p[0, len), which holds the field, as Redis does: false on an overflow
// under FAIL (nothing written); otherwise *reply is Redis's reply (the old value for SET, the
// new one for INCRBY) and *changed whether the stored bits differ from the old ones.
bool ApplyField(uint8_t* p, size_t len, const FieldOp& op, int64_t* reply, bool* changed);

// Parses BITFIELD's operations (the arguments after the key) as Redis does, stopping at the
// first error; false with out->error set then.
bool ParseBitfield(std::span<const std::string_view> args, uint64_t max_bulk_len,
                   FieldCommand* out);

}  // namespace vessel::strings::bits

#endif  // VESSEL_MODULES_STRINGS_BITS_H_
