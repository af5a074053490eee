// Stream entry IDs (<ms>-<seq>, two unsigned 64-bit numbers ordered as one 128-bit number) and
// their text forms, as Redis 7.0 parses and prints them (t_stream.c).
#ifndef VESSEL_MODULES_STREAMS_STREAM_ID_H_
#define VESSEL_MODULES_STREAMS_STREAM_ID_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace vessel::streams {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;
  bool zero() const { return ms == 0 && seq == 0; }
  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }

  // The next / previous ID; false (and 0-0 / max) when there is none, as streamIncrID.
  bool Incr() {
    if (seq != UINT64_MAX) return ++seq, true;
    if (ms != UINT64_MAX) return ++ms, seq = 0, true;
    ms = seq = 0;
    return false;
  }
  bool Decr() {
    if (seq != 0) return --seq, true;
    if (ms != 0) return --ms, seq = UINT64_MAX, true;
    ms = seq = UINT64_MAX;
    return false;
  }

  std::string ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

// Redis's string2ll (and listpack's lpStringToInt64): the canonical decimal text of an int64 only
// (no spaces, no '+', no leading zeros, no "-0", at most 20 characters).
inline bool StrictInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() >= 21) return false;
  if (s == "0") return *out = 0, true;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == s.size()) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const auto d = static_cast<unsigned>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

// Redis's string2ull: string2ll when that accepts the text (refusing negatives), else strtoull's
// rules: leading white space, an optional sign ("-n" wraps around), decimal digits to the end,
// no overflow.
inline bool ParseU64(std::string_view s, uint64_t* out) {
  int64_t ll;
  if (StrictInt64(s, &ll)) {
    if (ll < 0) return false;
    *out = static_cast<uint64_t>(ll);
    return true;
  }
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const size_t digits = i;
  uint64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const auto d = static_cast<unsigned>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;  // ERANGE
    v = v * 10 + d;
  }
  if (i == digits || i != s.size()) return false;
  *out = negative ? 0 - v : v;
  return true;
}

// How an ID argument was written.
enum class IdForm {
  kFull,     // <ms>-<seq>, or - / + where allowed
  kMsOnly,   // <ms>: the sequence is the caller's missing_seq
  kAutoSeq,  // <ms>-* (XADD only, when accepted)
};

// Redis's streamGenericParseIDOrReply: "<ms>[-<seq>]"; "-" and "+" (the minimum and maximum)
// unless strict; "<ms>-*" only when auto_seq is given. A text longer than 127 bytes is invalid.
inline bool ParseStreamId(std::string_view s, StreamId* id, uint64_t missing_seq, bool strict,
                          IdForm* form = nullptr, bool auto_seq = false) {
  if (s.size() > 127) return false;
  // Redis copies the argument into a C string: an embedded NUL ends it there.
  if (const size_t nul = s.find('\0'); nul != std::string_view::npos) s = s.substr(0, nul);
  if (form != nullptr) *form = IdForm::kFull;
  if (s == "-" || s == "+") {
    if (strict) return false;
    *id = s == "-" ? StreamId{} : StreamId::Max();
    return true;
  }
  const size_t dash = s.find('-');
  uint64_t ms, seq = missing_seq;
  if (!ParseU64(s.substr(0, dash), &ms)) return false;
  if (dash != std::string_view::npos) {
    const std::string_view tail = s.substr(dash + 1);
    if (auto_seq && tail == "*") {
      seq = 0;
      if (form != nullptr) *form = IdForm::kAutoSeq;
    } else if (!ParseU64(tail, &seq)) {
      return false;
    }
  } else if (form != nullptr) {
    *form = IdForm::kMsOnly;
  }
  *id = {ms, seq};
  return true;
}

}  // namespace vessel::streams

#endif  // VESSEL_MODULES_STREAMS_STREAM_ID_H_
