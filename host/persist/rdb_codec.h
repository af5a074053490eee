// Redis's RDB building blocks, byte for byte as Redis 7.0 writes them (rdb.c, listpack.c,
// intset.c) and as older versions did (ziplist.c, zipmap.c): the length and string encodings, the
// compact encodings of small values, CRC64, and a bounds-checked reader for all of them. Pure
// code: no engine, no I/O. Every reader function fails (returns false) on malformed input rather
// than trusting a length; nothing here allocates more than the input can justify.
#ifndef VESSEL_HOST_PERSIST_RDB_CODEC_H_
#define VESSEL_HOST_PERSIST_RDB_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"

namespace vessel::persist {

namespace rdb {
inline constexpr int kVersion = 10;     // what Redis 7.0 writes
inline constexpr int kMaxVersion = 12;  // the newest we read (Redis 7.4: hash field TTLs)

// Value types (rdb.h).
enum Type : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZset = 3,
  kHash = 4,
  kZset2 = 5,
  kModulePreGa = 6,
  kModule2 = 7,
  kHashZipmap = 9,
  kListZiplist = 10,
  kSetIntset = 11,
  kZsetZiplist = 12,
  kHashZiplist = 13,
  kListQuicklist = 14,
  kStreamListpacks = 15,
  kHashListpack = 16,
  kZsetListpack = 17,
  kListQuicklist2 = 18,
  kStreamListpacks2 = 19,
  kSetListpack = 20,
  kStreamListpacks3 = 21,
  kHashMetadataPreGa = 22,
  kHashListpackExPreGa = 23,
  kHashMetadata = 24,
  kHashListpackEx = 25,
};

// Opcodes between keys.
enum Opcode : uint8_t {
  kOpFunction2 = 245,
  kOpFunction = 246,
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireMs = 252,
  kOpExpire = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// Opcodes inside a module value (RDB_TYPE_MODULE_2).
enum ModuleOp : uint64_t {
  kModEof = 0,
  kModSint = 1,
  kModUint = 2,
  kModFloat = 3,
  kModDouble = 4,
  kModString = 5,
};

// Quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2).
inline constexpr uint64_t kContainerPlain = 1;
inline constexpr uint64_t kContainerPacked = 2;
}  // namespace rdb

// Redis's CRC64 (Jones polynomial, reflected, initial value 0, no final xor): the RDB trailer
// and the DUMP payload checksum. crc64(0, "123456789") = 0xe9c6d914c4b8d9ca.
uint64_t Crc64(uint64_t crc, const void* data, size_t len);

// Redis's strict integer syntax (string2ll / lpStringToInt64): no spaces, no '+', no leading
// zeros, "-0" refused; the text round-trips through the integer.
bool StrictInt64(std::string_view s, int64_t* out);

// ---- writing ----

// Appends RDB encodings to a byte string.
class RdbOut {
 public:
  RdbOut(std::string* buf, bool compress) : buf_(buf), compress_(compress) {}
  std::string& buf() { return *buf_; }
  void Byte(uint8_t b) { buf_->push_back(static_cast<char>(b)); }
  void Raw(std::string_view s) { buf_->append(s); }
  // rdbSaveLen: 6, 14, 32 or 64 bits.
  void Len(uint64_t n);
  // rdbSaveRawString: an integer encoding when the text is a small strict integer, LZF when
  // compression is on and it pays (longer than 20 bytes), else the bytes with their length.
  void String(std::string_view s);
  // rdbSaveMillisecondTime: 8 bytes little endian.
  void Millis(int64_t ms);
  void BinaryDouble(double v);
  void BinaryFloat(float v);

 private:
  std::string* buf_;
  bool compress_;
};

// Builds a listpack (listpack.c) by appending: strict integers are stored as integers.
class ListpackBuilder {
 public:
  void Add(std::string_view s);
  void AddInt(int64_t v);
  size_t count() const { return count_; }
  // The size of the listpack if finished now.
  size_t bytes() const { return body_.size() + 7; }
  bool empty() const { return count_ == 0; }
  // The listpack (header, entries, end byte); the builder is empty again.
  std::string Finish();

 private:
  void Entry(const unsigned char* enc, size_t enclen, std::string_view data);
  std::string body_;
  size_t count_ = 0;
};

// An intset (intset.c) of sorted, distinct integers in the narrowest width that holds them.
std::string BuildIntset(const std::vector<int64_t>& sorted);

// Formats a double as Redis's d2string ("%.17g", "inf", "-inf"), as sorted-set listpacks hold
// scores.
std::string FormatScore(double v);

// ---- reading ----

// A bounds-checked reader over RDB bytes. Every method returns false at the end of the input or
// on a malformed encoding, with the reason in error().
class RdbIn {
 public:
  explicit RdbIn(std::string_view data) : data_(data) {}
  bool Byte(uint8_t* out);
  // rdbLoadLen; *encoded (when given) is set for a special string encoding (then *out is the
  // RDB_ENC_* kind).
  bool Len(uint64_t* out, bool* encoded = nullptr);
  // Any string encoding: integer, LZF or plain. Fails on a length beyond the input.
  bool String(std::string* out);
  bool Millis(int64_t* out);
  bool Seconds32(int32_t* out);
  bool BinaryDouble(double* out);
  bool BinaryFloat(float* out);
  // rdbLoadDoubleValue: a length byte then text (253 nan, 254 +inf, 255 -inf).
  bool TextDouble(double* out);
  bool Raw(size_t n, std::string_view* out);
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  const std::string& error() const { return error_; }
  bool Fail(std::string why);

 private:
  std::string_view data_;
  size_t pos_ = 0;
  std::string error_;
};

// Walks the elements of a compact encoding, validating it entirely (header sizes and counts,
// every entry inside the blob, the end marker); integers are handed over as their decimal text.
// false on any inconsistency, or when fn returns false.
using ElementFn = absl::FunctionRef<bool(std::string_view)>;
bool ForEachListpack(std::string_view lp, ElementFn fn);
bool ForEachZiplist(std::string_view zl, ElementFn fn);
bool ForEachIntset(std::string_view is, ElementFn fn);
// A zipmap (Redis 2.4 hashes): field, value, field, value, ...
bool ForEachZipmap(std::string_view zm, ElementFn fn);

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_RDB_CODEC_H_
