// Redis's HyperLogLog representation and estimator on plain byte buffers (see hll.h). The
// algorithms follow Redis 7.0's hyperloglog.c so that values and counts are identical; the code
// works on offsets checked against the buffer's end instead of pointers past it.
#include "hll.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace vessel::strings::hll {
namespace {

constexpr uint64_t kSeed = 0xadc83b19ull;
constexpr int kP = 14;
constexpr int kQ = 64 - kP;
constexpr size_t kRegisterBytes = kDenseSize - kHeaderSize;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// Sparse opcodes.
constexpr int kZeroMaxLen = 64;
constexpr int kValMaxValue = 32;
constexpr int kValMaxLen = 4;
bool IsZero(uint8_t b) { return (b & 0xC0) == 0; }
bool IsXZero(uint8_t b) { return (b & 0xC0) == 0x40; }
bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
int ZeroLen(uint8_t b) { return (b & 0x3F) + 1; }
int ValValue(uint8_t b) { return ((b >> 2) & 0x1F) + 1; }
int ValLen(uint8_t b) { return (b & 0x3) + 1; }
uint8_t Val(int value, int len) {
  return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80);
}
uint8_t Zero(int len) { return static_cast<uint8_t>(len - 1); }

// An XZERO's run at p[at]; its second byte reads zero past the end (Redis's NUL terminator).
int XZeroLen(const uint8_t* p, size_t at, size_t end) {
  return (((p[at] & 0x3F) << 8) | (at + 1 < end ? p[at + 1] : 0)) + 1;
}
// Writes a ZERO or XZERO run of len registers at out; returns the bytes written.
int PutZeros(uint8_t* out, int len) {
  if (len > kZeroMaxLen) {
    out[0] = static_cast<uint8_t>(((len - 1) >> 8) | 0x40);
    out[1] = static_cast<uint8_t>((len - 1) & 0xFF);
    return 2;
  }
  out[0] = Zero(len);
  return 1;
}

// Registers histogram, then Ertl's estimator exactly as Redis computes it.
using Histogram = int64_t[64];

double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

uint64_t Estimate(const Histogram histo) {
  const double m = kRegisters;
  double z = m * Tau((m - static_cast<double>(histo[kQ + 1])) / m);
  for (int j = kQ; j >= 1; --j) {
    z += static_cast<double>(histo[j]);
    z *= 0.5;
  }
  z += m * Sigma(static_cast<double>(histo[0]) / m);
  const double e = kAlphaInf * m * m / z;
  // Redis's llroundl answers LLONG_MIN out of range, which it then reports as 2^63.
  if (!(e < 9223372036854775808.0)) return uint64_t{1} << 63;
  return static_cast<uint64_t>(std::llround(e));
}

void DenseHistogram(const uint8_t* r, Histogram histo) {
  for (size_t i = 0; i < kRegisterBytes; i += 3, r += 3) {  // 4 registers in 3 bytes
    histo[r[0] & 63]++;
    histo[(r[0] >> 6 | r[1] << 2) & 63]++;
    histo[(r[1] >> 4 | r[2] << 4) & 63]++;
    histo[(r[2] >> 2) & 63]++;
  }
}

// False when the opcodes do not cover exactly 16384 registers.
bool SparseHistogram(const uint8_t* p, size_t len, Histogram histo) {
  int64_t idx = 0;
  for (size_t at = kHeaderSize; at < len;) {
    const uint8_t b = p[at];
    if (IsZero(b)) {
      idx += ZeroLen(b);
      histo[0] += ZeroLen(b);
      at += 1;
    } else if (IsXZero(b)) {
      const int run = XZeroLen(p, at, len);
      idx += run;
      histo[0] += run;
      at += 2;
    } else {
      idx += ValLen(b);
      histo[ValValue(b)] += ValLen(b);
      at += 1;
    }
  }
  return idx == kRegisters;
}

// Visits the sparse opcodes as Redis's hllSparseToDense and hllMerge do: each VAL run calls
// fn(first register, value, run). True when the runs cover exactly 16384 registers; false at the
// first run that would pass the last register (the redis-server this follows, Debian's 7.0.15
// with the CVE-2025-32023 fix, rejects any such run, where 7.0.15 ignored a VAL run past it).
template <class Fn>
bool ForEachSparseRun(const uint8_t* p, size_t len, Fn fn) {
  int64_t idx = 0;
  for (size_t at = kHeaderSize; at < len;) {
    const uint8_t b = p[at];
    int64_t run;
    if (IsZero(b)) {
      run = ZeroLen(b);
      at += 1;
    } else if (IsXZero(b)) {
      run = XZeroLen(p, at, len);
      at += 2;
    } else {
      run = ValLen(b);
      at += 1;
    }
    if (idx + run > kRegisters) return false;
    if (IsVal(b)) fn(static_cast<uint32_t>(idx), ValValue(b), static_cast<int>(run));
    idx += run;
  }
  return idx == kRegisters;
}

}  // namespace

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ull;
  constexpr int r = 47;
  uint64_t h = seed ^ (len * m);
  const auto* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = k << 8 | data[i];  // little endian on every host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7:
      h ^= uint64_t{data[6]} << 48;
      [[fallthrough]];
    case 6:
      h ^= uint64_t{data[5]} << 40;
      [[fallthrough]];
    case 5:
      h ^= uint64_t{data[4]} << 32;
      [[fallthrough]];
    case 4:
      h ^= uint64_t{data[3]} << 24;
      [[fallthrough]];
    case 3:
      h ^= uint64_t{data[2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= uint64_t{data[1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= uint64_t{data[0]};
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint8_t PatLen(std::string_view element, uint32_t* index) {
  // Redis hashes with an int length; elements are far below 2 GiB.
  uint64_t hash = MurmurHash64A(element.data(), element.size(), kSeed);
  *index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // the run ends by bit Q: count <= Q + 1
  return static_cast<uint8_t>(__builtin_ctzll(hash) + 1);
}

bool IsHll(std::string_view s) {
  if (s.size() < kHeaderSize || s.substr(0, 4) != "HYLL") return false;
  const auto encoding = static_cast<uint8_t>(s[4]);
  if (encoding > kSparse) return false;
  return encoding != kDense || s.size() == kDenseSize;
}

std::string_view Empty() {
  static constexpr char kEmpty[] = "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff";  // XZERO 16384
  return {kEmpty, sizeof(kEmpty) - 1};
}

uint8_t Encoding(const uint8_t* hll) { return hll[4]; }
void InvalidateCache(uint8_t* hll) { hll[15] |= 0x80; }

bool CachedCount(const uint8_t* hll, uint64_t* out) {
  if (hll[15] & 0x80) return false;
  uint64_t card = 0;
  for (int i = 7; i >= 0; --i) card = card << 8 | hll[8 + i];
  *out = card;
  return true;
}

void SetCachedCount(uint8_t* hll, uint64_t card) {
  for (int i = 0; i < 8; ++i) hll[8 + i] = static_cast<uint8_t>(card >> (8 * i));
}

uint8_t DenseGet(const uint8_t* regs, uint32_t index) {
  const size_t byte = size_t{index} * 6 / 8;
  const unsigned fb = index * 6 & 7;
  const unsigned b0 = regs[byte];
  const unsigned b1 = byte + 1 < kRegisterBytes ? regs[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & 63);
}

void DenseSetRaw(uint8_t* regs, uint32_t index, uint8_t value) {
  const size_t byte = size_t{index} * 6 / 8;
  const unsigned fb = index * 6 & 7;
  const unsigned v = value;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(63u << fb)) | (v << fb));
  if (byte + 1 < kRegisterBytes) {
    regs[byte + 1] = static_cast<uint8_t>((regs[byte + 1] & ~(63u >> (8 - fb))) | (v >> (8 - fb)));
  }
}

bool DenseSet(uint8_t* regs, uint32_t index, uint8_t count) {
  if (count <= DenseGet(regs, index)) return false;
  DenseSetRaw(regs, index, count);
  return true;
}

SparseResult SparseSet(uint8_t* hll, size_t* len_io, size_t cap, uint32_t index, uint8_t count,
                       size_t sparse_max_bytes) {
  if (count > kValMaxValue) return kPromote;
  size_t end = *len_io;

  // 1. The opcode covering the register: it starts at `at`, its first register is `first`.
  size_t at = kHeaderSize;
  size_t prev = 0;  // 0: none
  int64_t first = 0, span = 0;
  while (at < end) {
    size_t oplen = 1;
    const uint8_t b = hll[at];
    if (IsZero(b)) {
      span = ZeroLen(b);
    } else if (IsVal(b)) {
      span = ValLen(b);
    } else {
      span = XZeroLen(hll, at, end);
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = at;
    at += oplen;
    first += span;
  }
  if (span == 0 || at >= end) return kInvalid;
  const uint8_t op = hll[at];
  const bool is_xzero = IsXZero(op);
  size_t next = at + (is_xzero ? 2 : 1);
  if (next >= end) next = 0;

  // 2. Changes that keep the length: a VAL already high enough, or a single register.
  bool in_place = false;
  if (IsVal(op)) {
    if (ValValue(op) >= count) return kUnchanged;
    in_place = ValLen(op) == 1;
  } else if (IsZero(op)) {
    in_place = ZeroLen(op) == 1;
  }
  if (in_place) {
    hll[at] = Val(count, 1);
  } else {
    // 3. Split the run into (before) VAL:count,1 (after), and put the new opcodes in its place.
    uint8_t seq[5];
    int n = 0;
    const int64_t last = first + span - 1;
    if (IsVal(op)) {
      if (index != first) seq[n++] = Val(ValValue(op), static_cast<int>(index - first));
      seq[n++] = Val(count, 1);
      if (index != last) seq[n++] = Val(ValValue(op), static_cast<int>(last - index));
    } else {
      if (index != first) n += PutZeros(seq + n, static_cast<int>(index - first));
      seq[n++] = Val(count, 1);
      if (index != last) n += PutZeros(seq + n, static_cast<int>(last - index));
    }
    const int64_t delta = n - (is_xzero ? 2 : 1);
    if (delta > 0 && end + static_cast<size_t>(delta) > sparse_max_bytes) return kPromote;
    if (delta > 0 && end + static_cast<size_t>(delta) > cap) return kNeedRoom;
    if (delta != 0 && next != 0) std::memmove(hll + next + delta, hll + next, end - next);
    end = static_cast<size_t>(static_cast<int64_t>(end) + delta);
    // Only bytes inside the new length (a truncated XZERO at the end would put one past it).
    std::memcpy(hll + at, seq, std::min<size_t>(static_cast<size_t>(n), end - at));
  }

  // 4. Merge adjacent VALs of the same value, scanning up to five opcodes from the previous.
  size_t p = prev != 0 ? prev : kHeaderSize;
  int scan = 5;
  while (p < end && scan-- > 0) {
    if (IsXZero(hll[p])) {
      p += 2;
      continue;
    }
    if (IsZero(hll[p])) {
      p += 1;
      continue;
    }
    if (p + 1 < end && IsVal(hll[p + 1]) && ValValue(hll[p]) == ValValue(hll[p + 1])) {
      const int len = ValLen(hll[p]) + ValLen(hll[p + 1]);
      if (len <= kValMaxLen) {
        hll[p + 1] = Val(ValValue(hll[p]), len);
        std::memmove(hll + p, hll + p + 1, end - p - 1);
        --end;
        continue;
      }
    }
    p += 1;
  }
  *len_io = end;
  InvalidateCache(hll);
  return kUpdated;
}

bool SparseToDense(const uint8_t* hll, size_t len, uint8_t* dense) {
  std::memset(dense, 0, kDenseSize);
  std::memcpy(dense, hll, kHeaderSize);
  dense[4] = kDense;
  uint8_t* regs = dense + kHeaderSize;
  return ForEachSparseRun(hll, len, [regs](uint32_t idx, int value, int run) {
    for (int i = 0; i < run; ++i) DenseSetRaw(regs, idx + i, static_cast<uint8_t>(value));
  });
}

std::string DecodeSparse(const uint8_t* hll, size_t len) {
  std::string out;
  for (size_t at = kHeaderSize; at < len;) {
    const uint8_t b = hll[at];
    if (IsZero(b)) {
      out += "z:" + std::to_string(ZeroLen(b)) + " ";
      at += 1;
    } else if (IsXZero(b)) {
      out += "Z:" + std::to_string(XZeroLen(hll, at, len)) + " ";
      at += 2;
    } else {
      out += "v:" + std::to_string(ValValue(b)) + "," + std::to_string(ValLen(b)) + " ";
      at += 1;
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

uint64_t Count(const uint8_t* hll, size_t len, bool* invalid) {
  Histogram histo = {};
  if (Encoding(hll) == kDense) {
    DenseHistogram(hll + kHeaderSize, histo);
  } else if (!SparseHistogram(hll, len, histo)) {
    *invalid = true;
  }
  return Estimate(histo);
}

uint64_t CountRaw(const uint8_t* max) {
  Histogram histo = {};
  for (uint32_t i = 0; i < kRegisters; ++i) histo[max[i] & 63]++;
  return Estimate(histo);
}

bool Merge(uint8_t* max, const uint8_t* hll, size_t len) {
  if (Encoding(hll) == kDense) {
    const uint8_t* r = hll + kHeaderSize;
    for (size_t i = 0; i < kRegisterBytes; i += 3, r += 3, max += 4) {  // 4 registers in 3 bytes
      max[0] = std::max<uint8_t>(max[0], r[0] & 63);
      max[1] = std::max<uint8_t>(max[1], (r[0] >> 6 | r[1] << 2) & 63);
      max[2] = std::max<uint8_t>(max[2], (r[1] >> 4 | r[2] << 4) & 63);
      max[3] = std::max<uint8_t>(max[3], r[2] >> 2);
    }
    return true;
  }
  return ForEachSparseRun(hll, len, [max](uint32_t idx, int value, int run) {
    for (int i = 0; i < run; ++i) {
      if (value > max[idx + i]) max[idx + i] = static_cast<uint8_t>(value);
    }
  });
}

namespace {

// A growable value for the self test, as the module's string values behave.
struct TestHll {
  std::string buf{Empty()};
  size_t len = buf.size();

  // hllAdd: 1 updated, 0 unchanged, -1 corrupt.
  int Add(std::string_view element, size_t sparse_max_bytes) {
    uint32_t index;
    const uint8_t count = PatLen(element, &index);
    auto* p = reinterpret_cast<uint8_t*>(buf.data());
    if (Encoding(p) == kDense) return DenseSet(p + kHeaderSize, index, count) ? 1 : 0;
    if (buf.size() < len + 3) buf.resize(len + 3);
    p = reinterpret_cast<uint8_t*>(buf.data());
    const SparseResult r = SparseSet(p, &len, buf.size(), index, count, sparse_max_bytes);
    if (r != kPromote) return r;
    std::string dense(kDenseSize, '\0');
    auto* d = reinterpret_cast<uint8_t*>(dense.data());
    if (!SparseToDense(p, len, d)) return -1;
    buf = std::move(dense);
    len = kDenseSize;
    return DenseSet(d + kHeaderSize, index, count) ? 1 : 0;
  }
  uint64_t Count() const {
    bool invalid = false;
    return hll::Count(reinterpret_cast<const uint8_t*>(buf.data()), len, &invalid);
  }
};

}  // namespace

bool SelfTest(size_t sparse_max_bytes, uint64_t seed, std::string* error) {
  std::mt19937_64 rng(seed);
  std::string dense(kDenseSize, '\0');
  auto* regs = reinterpret_cast<uint8_t*>(dense.data()) + kHeaderSize;
  uint8_t bytes[kRegisters];
  // 1. Every register keeps its value without disturbing its neighbours.
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      bytes[i] = static_cast<uint8_t>(rng() & 63);
      DenseSetRaw(regs, i, bytes[i]);
    }
    for (uint32_t i = 0; i < kRegisters; ++i) {
      const uint8_t v = DenseGet(regs, i);
      if (v != bytes[i]) {
        *error = "TESTFAILED Register " + std::to_string(i) + " should be " +
                 std::to_string(bytes[i]) + " but is " + std::to_string(v);
        return false;
      }
    }
  }
  // 2. Estimates within bounds, dense and sparse agreeing, sparse used while small.
  std::memset(regs, 0, kRegisterBytes);
  const auto* hdr = reinterpret_cast<const uint8_t*>(dense.data());
  TestHll sparse;
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  const uint64_t xor_seed = rng();
  int64_t checkpoint = 1;
  for (int64_t j = 1; j <= 10000000; ++j) {
    const uint64_t ele = static_cast<uint64_t>(j) ^ xor_seed;
    char raw[8];
    std::memcpy(raw, &ele, sizeof(raw));
    uint32_t index;
    const uint8_t count = PatLen({raw, sizeof(raw)}, &index);
    DenseSet(regs, index, count);
    sparse.Add({raw, sizeof(raw)}, sparse_max_bytes);
    if (j != checkpoint) continue;
    if (static_cast<uint64_t>(j) < sparse_max_bytes / 2 &&
        Encoding(reinterpret_cast<const uint8_t*>(sparse.buf.data())) != kSparse) {
      *error = "TESTFAILED sparse encoding not used";
      return false;
    }
    bool invalid = false;
    const uint64_t est = Count(hdr, kDenseSize, &invalid);
    if (est != sparse.Count()) {
      *error = "TESTFAILED dense/sparse disagree";
      return false;
    }
    int64_t abserr = checkpoint - static_cast<int64_t>(est);
    auto maxerr = static_cast<uint64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) maxerr = 1;
    if (abserr < 0) abserr = -abserr;
    if (abserr > static_cast<int64_t>(maxerr)) {
      *error = "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
               " abserr:" + std::to_string(abserr);
      return false;
    }
    checkpoint *= 10;
  }
  return true;
}

}  // namespace vessel::strings::hll
