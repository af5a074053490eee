// Redis-exact number parsing and formatting, glob matching, and ASCII case helpers.
#ifndef VESSEL_HOST_ENGINE_STRUTIL_H_
#define VESSEL_HOST_ENGINE_STRUTIL_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace vessel::engine {

// Redis string2ll: optional '-', digits, no spaces, no '+', no leading zeros, no overflow.
bool ParseInt64(std::string_view s, int64_t* out);
// Redis getDoubleFromObject: strtod over the whole string; no leading space, no NaN, and
// overflow is an error. Accepts "inf", "-inf", "+1.5", "1e3".
bool ParseDouble(std::string_view s, double* out);
// Redis getLongDoubleFromObject (string2ld): as ParseDouble, in long double precision.
bool ParseLongDouble(std::string_view s, long double* out);

// Redis stringmatchlen: * ? [abc] [^abc] [a-z] and \ escapes, optionally case-insensitive.
bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

// Splits on spaces, dropping empty words.
std::vector<std::string> SplitWords(std::string_view s);
// s in double quotes with Redis's escapes (sdscatrepr): \n \r \t \a \b \" \\, \xHH for other
// unprintable bytes.
std::string QuoteRepr(std::string_view s);

// Lowercases ASCII letters into out (cleared first).
void AsciiLower(std::string_view in, std::string* out);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Debian's abseil is built with its own absl::string_view, distinct from std::string_view; these
// give absl containers transparent lookup by std::string_view.
struct SvHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
  }
};
struct SvEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};
template <typename V>
using StrMap = absl::flat_hash_map<std::string, V, SvHash, SvEq>;
using StrSet = absl::flat_hash_set<std::string, SvHash, SvEq>;

namespace internal {
inline void CatOne(std::string* out, std::string_view s) { out->append(s); }
inline void CatOne(std::string* out, char c) { out->push_back(c); }
template <typename T>
requires std::is_integral_v<T> &&
    (!std::is_same_v<T, char>)&&(!std::is_same_v<T, bool>)void CatOne(std::string* out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}
}  // namespace internal

// Concatenates strings, string views, chars and integers.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (internal::CatOne(&out, args), ...);
  return out;
}

// Formats v as "%.17g" the way Redis formats doubles in replies.
std::string FormatDouble(double v);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_STRUTIL_H_
