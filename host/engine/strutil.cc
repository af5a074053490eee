// Redis-exact number parsing and formatting, glob matching, and ASCII case helpers.
#include "host/engine/strutil.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vessel::engine {
namespace {

inline char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// Copies s into a NUL-terminated buffer for strtod/strtold; false when too long to be a number.
bool Terminated(std::string_view s, char (&buf)[512]) {
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  // strtod skips leading spaces and stops at an embedded NUL: Redis rejects both.
  return !std::isspace(static_cast<unsigned char>(buf[0])) && std::strlen(buf) == s.size();
}

// One step of Redis glob matching; `skip_longer` short-circuits hopeless '*' retries.
bool Match(const char* p, size_t plen, const char* s, size_t slen, bool nocase, bool* skip_longer,
           int depth) {
  if (depth > 1000) return false;  // abusive patterns
  while (plen > 0 && slen > 0) {
    switch (*p) {
      case '*': {
        while (plen > 1 && p[1] == '*') ++p, --plen;
        if (plen == 1) return true;
        for (; slen > 0; ++s, --slen) {
          if (Match(p + 1, plen - 1, s, slen, nocase, skip_longer, depth + 1)) return true;
          if (*skip_longer) return false;
        }
        *skip_longer = true;
        return false;
      }
      case '?':
        break;
      case '[': {
        ++p, --plen;
        const bool negate = plen > 0 && *p == '^';
        if (negate) ++p, --plen;
        bool matched = false;
        for (;;) {
          if (plen >= 2 && *p == '\\') {
            ++p, --plen;
            if (*p == *s) matched = true;
          } else if (plen == 0) {
            --p, ++plen;  // an unterminated class ends at the last pattern byte
            break;
          } else if (*p == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            int lo = p[0], hi = p[2], c = *s;
            if (lo > hi) std::swap(lo, hi);
            if (nocase) lo = Lower(lo), hi = Lower(hi), c = Lower(static_cast<char>(c));
            if (c >= lo && c <= hi) matched = true;
            p += 2, plen -= 2;
          } else if (nocase ? Lower(*p) == Lower(*s) : *p == *s) {
            matched = true;
          }
          ++p, --plen;
        }
        if (matched == negate) return false;
        break;
      }
      case '\\':
        if (plen >= 2) ++p, --plen;
        [[fallthrough]];
      default:
        if (nocase ? Lower(*p) != Lower(*s) : *p != *s) return false;
        break;
    }
    ++s, --slen;
    ++p, --plen;
    if (slen == 0) {
      while (plen > 0 && *p == '*') ++p, --plen;
      break;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) {
    if (s.size() == 1) return false;
    i = 1;
  }
  if (s[i] == '0') {
    if (s.size() == i + 1 && !negative) return *out = 0, true;
    return false;  // leading zeros and "-0" are not integers to Redis
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  char buf[512];
  if (!Terminated(s, buf)) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(buf, &end);
  if (end != buf + s.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  *out = v;
  return true;
}

bool ParseLongDouble(std::string_view s, long double* out) {
  char buf[512];
  if (!Terminated(s, buf)) return false;
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(buf, &end);
  if (end != buf + s.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return false;
  *out = v;
  return true;
}

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  bool skip_longer = false;
  return Match(pattern.data(), pattern.size(), str.data(), str.size(), nocase, &skip_longer, 0);
}

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

void AsciiLower(std::string_view in, std::string* out) {
  out->resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) (*out)[i] = Lower(in[i]);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (Lower(a[i]) != Lower(b[i])) return false;
  return true;
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, n);
}

std::string QuoteRepr(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (c >= 32 && c < 127) {
          out += static_cast<char>(c);
        } else {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        }
    }
  }
  return out + "\"";
}

}  // namespace vessel::engine
