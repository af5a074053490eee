// The string value type: how a string is stored in the host's opaque value pointer, and the pure
// operations (Op*) the commands build on.
//
// Representation (memory per key is compared with Redis, and GET/SET are the hot path):
//   - up to 7 bytes: inline in the pointer bits, no allocation. The low byte is the tag:
//     bit 0 = 1 (a heap pointer is aligned, so its bit 0 is 0), bits 1-3 the length, bits 4-5 the
//     Hint; byte i of the string is byte i + 1 of the word (shifts, not memory order: the layout
//     does not depend on endianness).
//   - longer: a Blob from the host allocator (accounted to the module), {len, cap} then the bytes.
// Values are only touched under the key's lock; nothing here is thread-aware.
#ifndef VESSEL_MODULES_STRINGS_STRINGS_TYPE_H_
#define VESSEL_MODULES_STRINGS_STRINGS_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "vessel/module.hpp"

namespace vessel::strings {

// The largest string a value can represent (the top two bits of `cap` hold the Hint); APPEND
// and SETRANGE are limited by the smaller of this and the host's proto-max-bulk-len.
inline constexpr size_t kMaxValueLen = (size_t{1} << 30) - 1;
// Redis's default proto-max-bulk-len (LCS's scratch limit follows Redis's fixed 512 MiB).
inline constexpr size_t kMaxStringLen = size_t{512} << 20;
// The longest string stored inline in the pointer.
inline constexpr size_t kMaxInline = 7;

// What OBJECT ENCODING reports, following how Redis created the object: kAuto = "int" when the
// bytes are a canonical int64 (SET, INCR), else by length; kString = "embstr" up to 44 bytes,
// else "raw" (INCRBYFLOAT); kRaw = always "raw" (APPEND, SETRANGE).
enum class Hint : uint8_t { kAuto = 0, kString = 1, kRaw = 2 };

// The registered type (set once in vsl_module_init).
inline const vsl_type* g_string_type = nullptr;

// Registers the "string" type; false on failure.
bool RegisterStringType(vsl_module* m);

// A string value as the host stores it: an inline word or a Blob*. Never nullptr.
using Value = void*;

// A new value holding s. Throws std::bad_alloc, or vsl::Error past the 1 GiB representable size.
Value MakeValue(std::string_view s, Hint hint = Hint::kAuto);
void FreeValue(Value v);
size_t ValueLen(const void* v);

// The bytes of a value (nullptr: the empty string). Inline bytes are copied into the object:
// keep it alive, and the value unmodified, while using view().
class Bytes {
 public:
  explicit Bytes(const void* v);
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  std::string_view view() const { return view_; }
  size_t size() const { return view_.size(); }

 private:
  char buf_[8];
  std::string_view view_;
};

// The Op functions return the resulting value: `v` itself when it was changed in place (report
// it with key.Modified()), or a new value that replaces it (`v` is then untouched, and freed by
// the host when the new value is stored). `v` may be nullptr (no key) where noted.

// Appends tail. The result length is checked by the caller.
Value OpAppend(Value v, std::string_view tail);
// Writes piece (not empty) at offset, zero-padding a shorter string; v may be nullptr.
Value OpSetRange(Value v, size_t offset, std::string_view piece);
// Replaces the content with s (the INCR family), reusing v's block when it fits well; v may
// be nullptr.
Value OpAssign(Value v, std::string_view s, Hint hint);

// Numbers with Redis's exact parsing and formatting.
bool ParseLongDouble(std::string_view s, long double* out);  // string2ld
std::string FormatLongDouble(long double v);                 // ld2string, LD_STR_HUMAN

}  // namespace vessel::strings

#endif  // VESSEL_MODULES_STRINGS_STRINGS_TYPE_H_
