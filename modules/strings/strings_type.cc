// The string value type: inline/heap representation, the type callbacks, the Op functions and
// Redis's long double parsing and formatting.
#include "strings_type.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vessel::strings {
namespace {

static_assert(sizeof(uintptr_t) == 8, "inline strings need 64-bit pointers");

// A heap string: the header, then cap bytes of which len are used. The capacity has 30 bits
// (the top two hold the Hint), so a value holds at most 1 GiB - 1 bytes.
struct Blob {
  uint32_t len;
  uint32_t cap_hint;
  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
};
constexpr uint32_t kCapBits = 30;
constexpr size_t kMaxCap = (size_t{1} << kCapBits) - 1;

// Redis's MAX_LONG_DOUBLE_CHARS: the longest string string2ld accepts, and ld2string's buffer.

uintptr_t Word(const void* v) { return reinterpret_cast<uintptr_t>(v); }
bool IsInline(const void* v) { return (Word(v) & 1) != 0; }
size_t InlineLen(uintptr_t w) { return (w >> 1) & 7; }
Hint InlineHint(uintptr_t w) { return static_cast<Hint>((w >> 4) & 3); }

Blob* AsBlob(void* v) { return static_cast<Blob*>(v); }
const Blob* AsBlob(const void* v) { return static_cast<const Blob*>(v); }
size_t Cap(const Blob* b) { return b->cap_hint & kMaxCap; }
Hint BlobHint(const Blob* b) { return static_cast<Hint>(b->cap_hint >> kCapBits); }
void SetCap(Blob* b, size_t cap, Hint hint) {
  b->cap_hint = static_cast<uint32_t>(cap) | (static_cast<uint32_t>(hint) << kCapBits);
}

Hint HintOf(const void* v) { return IsInline(v) ? InlineHint(Word(v)) : BlobHint(AsBlob(v)); }

Value MakeInline(std::string_view s, Hint hint) {
  uintptr_t w = 1 | (s.size() << 1) | (static_cast<uintptr_t>(hint) << 4);
  for (size_t i = 0; i < s.size(); ++i)
    w |= static_cast<uintptr_t>(static_cast<unsigned char>(s[i])) << (8 * (i + 1));
  return reinterpret_cast<Value>(w);
}

// A heap block for len bytes with room for cap (>= len); the bytes are not initialised.
Blob* NewBlob(size_t len, size_t cap, Hint hint) {
  if (cap > kMaxCap) cap = std::max(len, kMaxCap);
  if (cap > kMaxCap) vsl::Fail("string exceeds maximum allowed size (proto-max-bulk-len)");
  Blob* b = static_cast<Blob*>(vsl::Alloc(sizeof(Blob) + cap));
  b->len = static_cast<uint32_t>(len);
  SetCap(b, cap, hint);
  return b;
}

// Room for `need` bytes in b, taking the allocator's slack first; false when b must be replaced.
bool ReserveBlob(Blob* b, size_t need) {
  if (need <= Cap(b)) return true;
  const size_t usable = std::min(vsl::Api().usable_size(b) - sizeof(Blob), kMaxCap);
  if (need > usable) return false;
  SetCap(b, usable, BlobHint(b));
  return true;
}

// The capacity of a string growing to len, as Redis's sdsMakeRoomFor: double below 1 MiB.
size_t Greedy(size_t len) {
  constexpr size_t kPrealloc = size_t{1} << 20;
  return len < kPrealloc ? len * 2 : len + kPrealloc;
}

// A new value of len = max(head.size(), at + piece.size()) bytes: head, zeros up to `at`, then
// piece written over the rest. Greedy capacity when growing an existing string.
Value Build(std::string_view head, size_t at, std::string_view piece, size_t len, bool greedy) {
  auto fill = [&](char* dst) {
    if (!head.empty()) std::memcpy(dst, head.data(), head.size());
    if (at > head.size()) std::memset(dst + head.size(), 0, at - head.size());
    if (!piece.empty()) std::memcpy(dst + at, piece.data(), piece.size());
  };
  if (len <= kMaxInline) {
    char buf[kMaxInline];
    fill(buf);
    return MakeInline({buf, len}, Hint::kRaw);
  }
  Blob* b = NewBlob(len, greedy ? Greedy(len) : len, Hint::kRaw);
  fill(b->data());
  return b;
}

const char* Encoding(const void* v) {
  const Hint hint = HintOf(v);
  if (hint == Hint::kRaw) return "raw";
  Bytes b(v);
  int64_t ignored;
  if (hint == Hint::kAuto && b.size() <= 20 && vsl::ParseInt(b.view(), &ignored)) return "int";
  return b.size() <= 44 ? "embstr" : "raw";
}

}  // namespace

Bytes::Bytes(const void* v) {
  const uintptr_t w = Word(v);
  if (w & 1) {
    const size_t n = InlineLen(w);
    for (size_t i = 0; i < n; ++i) buf_[i] = static_cast<char>(w >> (8 * (i + 1)));
    view_ = {buf_, n};
  } else if (v != nullptr) {
    view_ = {AsBlob(v)->data(), AsBlob(v)->len};
  }
}

Value MakeValue(std::string_view s, Hint hint) {
  if (s.size() <= kMaxInline) return MakeInline(s, hint);
  Blob* b = NewBlob(s.size(), s.size(), hint);
  std::memcpy(b->data(), s.data(), s.size());
  return b;
}

void FreeValue(Value v) {
  if (!IsInline(v)) vsl::Free(v);
}

size_t ValueLen(const void* v) { return IsInline(v) ? InlineLen(Word(v)) : AsBlob(v)->len; }

Value OpAppend(Value v, std::string_view tail) {
  const size_t len = ValueLen(v);
  if (!IsInline(v) && ReserveBlob(AsBlob(v), len + tail.size())) {
    Blob* b = AsBlob(v);
    if (!tail.empty()) std::memcpy(b->data() + len, tail.data(), tail.size());
    b->len = static_cast<uint32_t>(len + tail.size());
    SetCap(b, Cap(b), Hint::kRaw);
    return v;
  }
  Bytes old(v);
  return Build(old.view(), len, tail, len + tail.size(), true);
}

Value OpSetRange(Value v, size_t offset, std::string_view piece) {
  const size_t len = v == nullptr ? 0 : ValueLen(v);
  const size_t need = std::max(len, offset + piece.size());
  if (v != nullptr && !IsInline(v) && ReserveBlob(AsBlob(v), need)) {
    Blob* b = AsBlob(v);
    if (offset > len) std::memset(b->data() + len, 0, offset - len);
    std::memcpy(b->data() + offset, piece.data(), piece.size());
    b->len = static_cast<uint32_t>(need);
    SetCap(b, Cap(b), Hint::kRaw);
    return v;
  }
  Bytes old(v);
  return Build(old.view(), offset, piece, need, v != nullptr);
}

Value OpAssign(Value v, std::string_view s, Hint hint) {
  if (v != nullptr && !IsInline(v) && s.size() > kMaxInline) {
    Blob* b = AsBlob(v);
    const size_t cap = Cap(b);
    if (s.size() <= cap && s.size() * 2 >= cap) {  // reuse a block that is not oversized
      std::memcpy(b->data(), s.data(), s.size());
      b->len = static_cast<uint32_t>(s.size());
      SetCap(b, cap, hint);
      return v;
    }
  }
  return MakeValue(s, hint);
}

void MarkRaw(Value v) {
  if (v != nullptr && !IsInline(v)) SetCap(AsBlob(v), Cap(AsBlob(v)), Hint::kRaw);
}

StringEditor::StringEditor(Value v)
    : orig_(v), hint_(v == nullptr ? Hint::kAuto : HintOf(v)), data_(small_) {
  if (v == nullptr) return;
  if (IsInline(v)) {
    Bytes b(v);
    len_ = b.size();
    std::memcpy(small_, b.view().data(), len_);
  } else {
    blob_ = v;
    data_ = reinterpret_cast<uint8_t*>(AsBlob(v)->data());
    len_ = AsBlob(v)->len;
  }
}

StringEditor::~StringEditor() {
  if (owned_) vsl::Free(blob_);
}

bool StringEditor::moved() const { return orig_ == nullptr || IsInline(orig_) || blob_ != orig_; }

void StringEditor::MoveTo(size_t need, size_t cap) {
  Blob* b = NewBlob(need, std::max(need, cap), hint_);  // fails when need is too long
  b->len = static_cast<uint32_t>(len_);
  if (len_ != 0) std::memcpy(b->data(), data_, len_);
  if (owned_) vsl::Free(blob_);
  blob_ = b;
  owned_ = true;
  data_ = reinterpret_cast<uint8_t*>(b->data());
}

void StringEditor::Reserve(size_t extra, bool greedy) {
  const size_t need = len_ + extra;
  if (blob_ != nullptr ? ReserveBlob(AsBlob(blob_), need) : need <= kMaxInline) return;
  MoveTo(need, greedy ? Greedy(need) : need);
}

size_t StringEditor::capacity() const { return blob_ != nullptr ? Cap(AsBlob(blob_)) : kMaxInline; }

void StringEditor::Resize(size_t len) {
  len_ = len;
  if (blob_ != nullptr) AsBlob(blob_)->len = static_cast<uint32_t>(len);
}

void StringEditor::GrowZero(size_t len, bool greedy) {
  if (len <= len_) return;
  const bool fits = blob_ != nullptr ? ReserveBlob(AsBlob(blob_), len) : len <= kMaxInline;
  if (!fits) MoveTo(len, greedy ? Greedy(len) : len);
  std::memset(data_ + len_, 0, len - len_);
  Resize(len);
}

void StringEditor::Assign(std::string_view s) {
  const bool fits =
      blob_ != nullptr ? ReserveBlob(AsBlob(blob_), s.size()) : s.size() <= kMaxInline;
  if (!fits) {
    len_ = 0;
    MoveTo(s.size(), s.size());
  }
  if (!s.empty()) std::memcpy(data_, s.data(), s.size());
  Resize(s.size());
}

Value StringEditor::Release() {
  if (blob_ == nullptr) return MakeInline({reinterpret_cast<char*>(small_), len_}, hint_);
  Blob* b = AsBlob(blob_);
  b->len = static_cast<uint32_t>(len_);
  SetCap(b, Cap(b), hint_);
  owned_ = false;
  return b;
}

bool RegisterStringType(vsl_module* m) {
  vsl_type_desc d{};
  d.struct_size = sizeof(d);
  d.name = "string";
  d.encoding_version = 1;
  d.free = [](vsl_type_ctx*, void* v) { FreeValue(v); };
  d.mem_usage = [](vsl_type_ctx*, const void* v) -> size_t {
    return IsInline(v) ? 0 : vsl::Api().usable_size(const_cast<void*>(v));
  };
  d.copy = [](vsl_type_ctx*, const void* v) -> void* {
    try {
      Bytes b(v);
      return MakeValue(b.view(), HintOf(v));
    } catch (...) {
      return nullptr;
    }
  };
  d.serialize = [](vsl_type_ctx*, const void* v, vsl_writer* w) {
    Bytes b(v);
    vsl::Writer(w).Bytes(b.view());
    return VSL_OK;
  };
  d.deserialize = [](vsl_type_ctx*, vsl_reader* r, uint32_t encver) -> void* {
    std::string_view s;
    if (encver != 1 || !vsl::Reader(r).Bytes(&s)) return nullptr;
    try {
      return MakeValue(s);
    } catch (...) {
      return nullptr;
    }
  };
  d.free_effort = [](vsl_type_ctx*, const void*) -> size_t { return 1; };
  d.encoding = [](vsl_type_ctx*, const void* v) { return Encoding(v); };
  // One element, the bytes (ABI 1.2 visit; RDB files and DUMP payloads are written from it).
  d.visit = [](vsl_type_ctx*, const void* v, vsl_visit_fn fn, void* ud) {
    Bytes b(v);
    fn(ud, b.view().data(), b.view().size(), 0);
    return VSL_OK;
  };
  return vsl::Api().register_type(m, &d, &g_string_type) == VSL_OK;
}

}  // namespace vessel::strings
