// Request parsing with the semantics of Redis 7.0 processMultibulkBuffer/processInlineBuffer.
#include "host/resp/parser.h"

#include <algorithm>
#include <cstring>

namespace vessel::resp {
namespace {

// Redis's string2ll: no spaces, no '+', no leading zeros, no "-0", at most 20 characters, and
// overflow of a long long is an error. Returns false when `s` is not such a number.
bool ParseInt64(const char* s, size_t len, int64_t* value) {
  if (len == 0 || len >= 21) return false;
  if (len == 1 && s[0] == '0') {
    *value = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == len) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < len; ++i) {
    const unsigned digit = static_cast<unsigned char>(s[i]) - '0';
    if (digit > 9) return false;
    if (v > UINT64_MAX / 10 || v * 10 > UINT64_MAX - digit) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *value = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *value = static_cast<int64_t>(v);
  }
  return true;
}

// The common header "<digits>\r" followed by at least one byte, read in one pass: no sign, no
// leading zero and at most 18 digits, so the value is what ParseInt64 would give for the bytes up
// to the first '\r'. Returns false for anything else, which the general path then handles.
inline bool ParseShortNumber(const char* p, size_t start, size_t n, int64_t* value,
                             size_t* line_end) {
  const size_t end = std::min(n, start + 19);
  uint64_t v = 0;
  size_t i = start;
  for (; i < end; ++i) {
    const unsigned digit = static_cast<unsigned char>(p[i]) - '0';
    if (digit > 9) break;
    v = v * 10 + digit;
  }
  if (i == start || i >= end || p[i] != '\r' || i + 1 >= n) return false;
  if (p[start] == '0' && i - start > 1) return false;
  *value = static_cast<int64_t>(v);
  *line_end = i;
  return true;
}

// isspace() in the C locale, which sdssplitargs uses to skip blanks and to check what follows a
// closing quote.
inline bool IsSpace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The bytes that end an unquoted token in sdssplitargs (not \v or \f, unlike isspace).
inline bool EndsToken(unsigned char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0';
}

inline int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// Offsets kept across kNeedMore (pos_, line_scan_, spans_) are relative to the start of the
// command in progress, which is the start of the next call's input once the caller has dropped
// the consumed() bytes of this call.
ParseStatus Parser::Parse(std::string_view input, std::vector<std::string_view>* args) {
  args->clear();
  consumed_ = 0;
  bytes_hint_ = 0;
  if (!error_.empty()) {
    Reset();
  }
  while (consumed_ < input.size()) {
    std::string_view rest = input.substr(consumed_);
    if (pos_ > rest.size() || line_scan_ > rest.size()) {
      ResetProgress();  // the caller broke the contract; start the command over
    }
    ParseStatus status =
        multibulk_len_ > 0 || rest[0] == '*' ? ParseMultibulk(rest, args) : ParseInline(rest, args);
    if (status != ParseStatus::kOk) {
      args->clear();  // a multibulk command parsed straight into *args may have stopped midway
      return status;
    }
    consumed_ += command_len_;
    if (!args->empty()) return ParseStatus::kOk;
  }
  return ParseStatus::kNeedMore;
}

void Parser::Reset() {
  consumed_ = 0;
  bytes_hint_ = 0;
  command_len_ = 0;
  error_ = {};
  ResetProgress();
}

void Parser::ResetProgress() {
  multibulk_len_ = 0;
  bulk_len_ = -1;
  pos_ = 0;
  line_scan_ = 0;
  // A command of millions of arguments does not keep their offsets for the connection's life.
  if (spans_.capacity() > kKeepSpans) {
    std::vector<std::pair<size_t, size_t>>().swap(spans_);
  } else {
    spans_.clear();
  }
}

ParseStatus Parser::Fail(const char* message) {
  error_ = message;
  ResetProgress();
  return ParseStatus::kError;
}

// A header line runs from `start` to the first '\r', which must have a byte after it (Redis never
// checks that the byte is '\n'). kError means no '\r' within max_inline_len bytes.
ParseStatus Parser::FindLineEnd(const char* p, size_t start, size_t n, size_t* line_end) {
  const size_t from = std::max(start, line_scan_);
  const void* cr = std::memchr(p + from, '\r', n - from);
  if (cr == nullptr) {
    if (n - start > limits_.max_inline_len) return ParseStatus::kError;
    line_scan_ = n;
    return ParseStatus::kNeedMore;
  }
  *line_end = static_cast<const char*>(cr) - p;
  if (*line_end + 2 > n) {
    line_scan_ = *line_end;
    return ParseStatus::kNeedMore;
  }
  return ParseStatus::kOk;
}

ParseStatus Parser::ParseMultibulk(std::string_view input, std::vector<std::string_view>* args) {
  const char* const p = input.data();
  const size_t n = input.size();

  if (multibulk_len_ == 0) {
    int64_t count;
    size_t line_end;
    if (!ParseShortNumber(p, 1, n, &count, &line_end)) {
      ParseStatus status = FindLineEnd(p, 0, n, &line_end);
      if (status == ParseStatus::kError) return Fail("Protocol error: too big mbulk count string");
      if (status == ParseStatus::kNeedMore) return status;
      if (!ParseInt64(p + 1, line_end - 1, &count)) {
        return Fail("Protocol error: invalid multibulk length");
      }
    }
    if (count > limits_.max_multibulk_len) return Fail("Protocol error: invalid multibulk length");
    if (count > 10 && limits_.unauthenticated)
      return Fail("Protocol error: unauthenticated multibulk length");
    if (count <= 0) {  // "*0" and "*-1" are empty commands, skipped
      ResetProgress();
      command_len_ = line_end + 2;
      return ParseStatus::kOk;
    }
    multibulk_len_ = count;
    pos_ = line_end + 2;
    line_scan_ = pos_;
    spans_.clear();
  }

  // A command that starts in this call is parsed straight into *args; one resumed after kNeedMore
  // collects offsets in spans_, because the bytes may have moved since the earlier call.
  const bool direct = spans_.empty();
  auto parsed = [&] { return static_cast<int64_t>(direct ? args->size() : spans_.size()); };
  while (parsed() < multibulk_len_) {
    if (bulk_len_ < 0) {
      int64_t len;
      size_t line_end;
      if (pos_ >= n || p[pos_] != '$' || !ParseShortNumber(p, pos_ + 1, n, &len, &line_end)) {
        ParseStatus status = FindLineEnd(p, pos_, n, &line_end);
        if (status == ParseStatus::kError) return Fail("Protocol error: too big bulk count string");
        if (status == ParseStatus::kNeedMore) {
          if (direct) SaveSpans(p, args);
          return status;
        }
        if (p[pos_] != '$') return FailExpectedDollar(p[pos_]);
        if (!ParseInt64(p + pos_ + 1, line_end - pos_ - 1, &len) || len < 0) {
          return Fail("Protocol error: invalid bulk length");
        }
      }
      if (len > limits_.max_bulk_len) return Fail("Protocol error: invalid bulk length");
      if (len > 16384 && limits_.unauthenticated)
        return Fail("Protocol error: unauthenticated bulk length");
      pos_ = line_end + 2;
      bulk_len_ = len;
    }
    // The payload and two more bytes, which Redis skips without checking for "\r\n".
    const uint64_t needed = static_cast<uint64_t>(bulk_len_) + 2;
    if (n - pos_ < needed) {
      if (direct) SaveSpans(p, args);
      line_scan_ = pos_;
      bytes_hint_ = consumed_ + pos_ + needed;
      return ParseStatus::kNeedMore;
    }
    if (direct) {
      args->emplace_back(p + pos_, static_cast<size_t>(bulk_len_));
    } else {
      spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    }
    pos_ += needed;
    bulk_len_ = -1;
  }

  if (!direct) {
    args->reserve(spans_.size());
    for (const auto& [offset, len] : spans_) {
      args->emplace_back(p + offset, len);
    }
  }
  command_len_ = pos_;
  ResetProgress();
  return ParseStatus::kOk;
}

void Parser::SaveSpans(const char* base, std::vector<std::string_view>* args) {
  for (std::string_view arg : *args) {
    spans_.emplace_back(arg.data() - base, arg.size());
  }
  args->clear();
}

ParseStatus Parser::FailExpectedDollar(char got) {
  error_text_ = "Protocol error: expected '$', got '";
  // Redis formats this with "%c" through a C string (a NUL ends the message there) and then
  // replaces \r and \n with spaces.
  if (got != '\0') {
    error_text_ += (got == '\r' || got == '\n') ? ' ' : got;
    error_text_ += '\'';
  }
  ResetProgress();
  error_ = error_text_;
  return ParseStatus::kError;
}

ParseStatus Parser::ParseInline(std::string_view input, std::vector<std::string_view>* args) {
  const char* const p = input.data();
  const size_t n = input.size();
  const void* lf = std::memchr(p + line_scan_, '\n', n - line_scan_);
  if (lf == nullptr) {
    if (n > limits_.max_inline_len) return Fail("Protocol error: too big inline request");
    line_scan_ = n;
    return ParseStatus::kNeedMore;
  }
  const size_t newline = static_cast<const char*>(lf) - p;
  size_t line_len = newline;
  if (line_len > 0 && p[line_len - 1] == '\r') --line_len;
  if (!SplitInline(p, line_len, args)) {
    args->clear();
    return Fail("Protocol error: unbalanced quotes in request");
  }
  ResetProgress();
  command_len_ = newline + 1;
  return ParseStatus::kOk;
}

// sdssplitargs over line[0, len). Redis splits a C string, so a NUL byte ends the line. Unquoted
// tokens are views into the line; a token with quotes is unescaped into scratch_, which is
// reserved to the line length first so that views into it stay put.
bool Parser::SplitInline(const char* line, size_t len, std::vector<std::string_view>* args) {
  if (const void* nul = std::memchr(line, '\0', len)) {
    len = static_cast<const char*>(nul) - line;
  }
  auto at = [line, len](size_t i) -> unsigned char {
    return i < len ? static_cast<unsigned char>(line[i]) : '\0';
  };
  scratch_.clear();
  size_t i = 0;
  while (true) {
    while (i < len && IsSpace(line[i])) ++i;
    if (i >= len) return true;

    const size_t start = i;
    while (i < len && !EndsToken(line[i]) && line[i] != '"' && line[i] != '\'') ++i;
    if (i >= len || EndsToken(line[i])) {
      args->emplace_back(line + start, i - start);
      if (i < len) ++i;
      continue;
    }

    if (scratch_.capacity() < len) scratch_.reserve(len);
    const size_t out_start = scratch_.size();
    scratch_.append(line + start, i - start);
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      const unsigned char c = at(i);
      if (in_double) {
        if (c == '\\' && at(i + 1) == 'x' && HexValue(at(i + 2)) >= 0 && HexValue(at(i + 3)) >= 0) {
          scratch_.push_back(static_cast<char>(HexValue(at(i + 2)) * 16 + HexValue(at(i + 3))));
          i += 3;
        } else if (c == '\\' && at(i + 1) != '\0') {
          ++i;
          char unescaped;
          switch (at(i)) {
            case 'n':
              unescaped = '\n';
              break;
            case 'r':
              unescaped = '\r';
              break;
            case 't':
              unescaped = '\t';
              break;
            case 'b':
              unescaped = '\b';
              break;
            case 'a':
              unescaped = '\a';
              break;
            default:
              unescaped = static_cast<char>(at(i));
              break;
          }
          scratch_.push_back(unescaped);
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          scratch_.push_back(static_cast<char>(c));
        }
      } else if (in_single) {
        if (c == '\\' && at(i + 1) == '\'') {
          ++i;
          scratch_.push_back('\'');
        } else if (c == '\'') {
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          scratch_.push_back(static_cast<char>(c));
        }
      } else if (EndsToken(c)) {
        done = true;
      } else if (c == '"') {
        in_double = true;
      } else if (c == '\'') {
        in_single = true;
      } else {
        scratch_.push_back(static_cast<char>(c));
      }
      if (at(i) != '\0') ++i;
    }
    args->emplace_back(scratch_.data() + out_start, scratch_.size() - out_start);
  }
}

}  // namespace vessel::resp
