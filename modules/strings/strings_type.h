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

// Redis's dbUnshareStringValue for a value whose bytes stay the same: a heap value becomes
// "raw" in place (no change to report); an inline value keeps its encoding.
void MarkRaw(Value v);

// A value opened for editing its bytes (the bit and HyperLogLog commands). A heap value with
// room is edited in place; otherwise (an inline value, no value, growth past the block) the
// bytes move to a new block. Release() gives the result: `v` itself when it was edited in place
// (report it with key.Modified()), or a new value that must replace it (store it with key.Set;
// `v`, possibly edited before the move, is then freed by the host). A new block that is never
// released is freed by the destructor. Growing throws std::bad_alloc, or vsl::Error past the
// largest value; edits made in place before that stay.
class StringEditor {
 public:
  explicit StringEditor(Value v);  // nullptr: the empty string
  ~StringEditor();
  StringEditor(const StringEditor&) = delete;
  StringEditor& operator=(const StringEditor&) = delete;

  uint8_t* data() { return data_; }
  size_t size() const { return len_; }
  // Grows to len bytes, zero-filled (never shrinks); `greedy` leaves room as APPEND does.
  void GrowZero(size_t len, bool greedy);
  // Room for size() + extra bytes, so that Resize up to that does not move data(); `greedy`
  // leaves more room when a new block is needed.
  void Reserve(size_t extra, bool greedy = true);
  // The bytes data() can hold without moving.
  size_t capacity() const;
  // Sets the length within the room Reserve made; new bytes are not initialised.
  void Resize(size_t len);
  // Replaces the bytes with s (exact size when a new block is needed).
  void Assign(std::string_view s);
  void set_hint(Hint hint) { hint_ = hint; }
  // True when Release() will return a new value rather than `v`.
  bool moved() const;
  Value Release();

 private:
  void MoveTo(size_t need, size_t cap);  // a new block for need bytes, holding data()
  Value orig_;
  void* blob_ = nullptr;  // the block edited: orig_ or a new one (owned_)
  bool owned_ = false;
  Hint hint_;
  uint8_t small_[8];
  uint8_t* data_;
  size_t len_ = 0;
};

// Numbers with Redis's exact parsing and formatting.

}  // namespace vessel::strings

#endif  // VESSEL_MODULES_STRINGS_STRINGS_TYPE_H_
