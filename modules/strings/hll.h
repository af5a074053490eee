// Redis's HyperLogLog representation, byte for byte, as pure functions on byte buffers (no
// vsl_api call: the fuzz target links this file alone).
//
// A value is a string: a 16-byte header ("HYLL", the encoding byte 0 = dense or 1 = sparse,
// three unused bytes, the cached cardinality as 8 little-endian bytes whose top bit set means
// "stale"), then the registers: dense = 16384 six-bit registers packed from the least
// significant bit of each byte (12288 bytes), sparse = ZERO (00xxxxxx), XZERO (01xxxxxx
// yyyyyyyy) and VAL (1vvvvvxx) run-length opcodes. Elements are hashed with MurmurHash64A (seed
// 0xadc83b19); the low 14 bits pick the register, the run of zeros above them (plus one) is the
// count. The estimate is Ertl's improved estimator (Redis 7.0's hllTau/hllSigma), computed in the
// same order of double operations, so every count equals Redis's.
//
// Every function here tolerates arbitrary bytes: a corrupt value gives false / kInvalid, never
// an out-of-bounds access. Where Redis reads the byte after the end of a string (its implicit
// NUL terminator), these read zero.
#ifndef VESSEL_MODULES_STRINGS_HLL_H_
#define VESSEL_MODULES_STRINGS_HLL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vessel::strings::hll {

inline constexpr size_t kHeaderSize = 16;
inline constexpr uint32_t kRegisters = 16384;
inline constexpr size_t kDenseSize = kHeaderSize + kRegisters * 6 / 8;  // 12304
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;
inline constexpr size_t kDefaultSparseMaxBytes = 3000;  // Redis's hll-sparse-max-bytes

inline constexpr char kNotHll[] = "Key is not a valid HyperLogLog string value.";  // WRONGTYPE
inline constexpr char kCorrupt[] = "Corrupted HLL object detected";                // INVALIDOBJ

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed);
// The register an element falls in (*index) and its count (1 to 51).
uint8_t PatLen(std::string_view element, uint32_t* index);

// Redis's isHLLObjectOrReply: a header with the magic, a known encoding, and the exact length for
// dense. (Sparse opcodes are only checked when they are read.)
bool IsHll(std::string_view s);
// The value PFADD creates: sparse, all registers zero (XZERO 16384), cached cardinality 0.
std::string_view Empty();

uint8_t Encoding(const uint8_t* hll);
void InvalidateCache(uint8_t* hll);
// The cached cardinality when valid.
bool CachedCount(const uint8_t* hll, uint64_t* out);
void SetCachedCount(uint8_t* hll, uint64_t card);

// ---- dense ----

uint8_t DenseGet(const uint8_t* regs, uint32_t index);
void DenseSetRaw(uint8_t* regs, uint32_t index, uint8_t value);
// Raises the register to count; true when it changed.
bool DenseSet(uint8_t* regs, uint32_t index, uint8_t count);

// ---- sparse ----

enum SparseResult : int {
  kInvalid = -1,
  kUnchanged = 0,
  kUpdated = 1,
  kPromote = 2,
  kNeedRoom = 3
};
// Redis's hllSparseSet on the whole value hll[0, *len) in a buffer of cap bytes: raises the
// register (editing the opcodes in place, updating *len and invalidating the cache) and answers
// kUpdated or kUnchanged. Nothing is changed when it answers kPromote (the value must become
// dense first: a count above 32, or growing past sparse_max_bytes), kNeedRoom (the opcodes grow
// by up to 3 bytes past cap: make room and call again) or kInvalid (the opcodes do not reach the
// register).
SparseResult SparseSet(uint8_t* hll, size_t* len, size_t cap, uint32_t index, uint8_t count,
                       size_t sparse_max_bytes);
// Redis's hllSparseToDense: dense (kDenseSize bytes) gets the header (encoding dense) and the
// registers; false when the opcodes do not describe exactly 16384 registers.
bool SparseToDense(const uint8_t* hll, size_t len, uint8_t* dense);
// PFDEBUG DECODE's text ("Z:16384", "z:3 v:2,1 ...").
std::string DecodeSparse(const uint8_t* hll, size_t len);

// ---- counting and merging ----

// The estimate of a value that passed IsHll; *invalid is set for broken sparse opcodes.
uint64_t Count(const uint8_t* hll, size_t len, bool* invalid);
// The estimate of 16384 registers, one byte each (PFCOUNT of several keys).
uint64_t CountRaw(const uint8_t* max);
// max[i] = MAX(max[i], register i) over a value that passed IsHll; false for broken opcodes.
bool Merge(uint8_t* max, const uint8_t* hll, size_t len);

// PFSELFTEST: Redis's register and estimate checks; false with the failure in *error.
bool SelfTest(size_t sparse_max_bytes, uint64_t seed, std::string* error);

}  // namespace vessel::strings::hll

#endif  // VESSEL_MODULES_STRINGS_HLL_H_
