// Reply encoding for RESP2 and RESP3, byte-compatible with Redis 7.0's addReply* functions.
#include "host/resp/writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace vessel::resp {
namespace {

constexpr char kDigitPairs[] =
    "00010203040506070809"
    "10111213141516171819"
    "20212223242526272829"
    "30313233343536373839"
    "40414243444546474849"
    "50515253545556575859"
    "60616263646566676869"
    "70717273747576777879"
    "80818283848586878889"
    "90919293949596979899";

constexpr size_t kMaxIntChars = 20;  // "-9223372036854775808"

// Writes the decimal digits of v so that they end at `end`; returns where they start.
char* FormatUnsignedBackwards(uint64_t v, char* end) {
  char* p = end;
  while (v >= 100) {
    const unsigned pair = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--p = kDigitPairs[pair + 1];
    *--p = kDigitPairs[pair];
  }
  if (v >= 10) {
    const unsigned pair = static_cast<unsigned>(v) * 2;
    *--p = kDigitPairs[pair + 1];
    *--p = kDigitPairs[pair];
  } else {
    *--p = static_cast<char>('0' + v);
  }
  return p;
}

char* FormatIntBackwards(int64_t v, char* end) {
  if (v >= 0) return FormatUnsignedBackwards(static_cast<uint64_t>(v), end);
  char* p = FormatUnsignedBackwards(0 - static_cast<uint64_t>(v), end);
  *--p = '-';
  return p;
}

// Appends "<prefix><v>\r\n".
void AppendLine(std::string* out, char prefix, int64_t v) {
  char buf[kMaxIntChars + 4];
  char* end = buf + sizeof(buf);
  *--end = '\n';
  *--end = '\r';
  char* start = FormatIntBackwards(v, end);
  *--start = prefix;
  out->append(start, buf + sizeof(buf) - start);
}

// Appends s with \r and \n replaced by spaces.
void AppendSanitized(std::string* out, std::string_view s) {
  const size_t start = out->size();
  out->append(s);
  for (char* p = out->data() + start; p != out->data() + out->size(); ++p) {
    if (*p == '\r' || *p == '\n') *p = ' ';
  }
}

// Appends prefix, s sanitized as above, and "\r\n": one append when s is short (most replies).
void AppendLineSanitized(std::string* out, char prefix, std::string_view s) {
  char buf[128];
  if (s.size() + 3 > sizeof(buf)) {
    out->push_back(prefix);
    AppendSanitized(out, s);
    out->append("\r\n");
    return;
  }
  buf[0] = prefix;
  if (!s.empty()) std::memcpy(buf + 1, s.data(), s.size());  // an empty view may hold nullptr
  for (size_t i = 1; i <= s.size(); ++i) {
    if (buf[i] == '\r' || buf[i] == '\n') buf[i] = ' ';
  }
  buf[s.size() + 1] = '\r';
  buf[s.size() + 2] = '\n';
  out->append(buf, s.size() + 3);
}

// Formats a finite double as "%.17g" (or "nan"); returns the length.
size_t FormatDouble(double v, char* buf, size_t size) {
  if (std::isnan(v)) {
    std::memcpy(buf, "nan", 3);
    return 3;
  }
  const auto result = std::to_chars(buf, buf + size, v, std::chars_format::general, 17);
  return result.ptr - buf;
}

}  // namespace

void Writer::Null() { out_->append(protocol_ >= 3 ? "_\r\n" : "$-1\r\n"); }

void Writer::NullArray() { out_->append(protocol_ >= 3 ? "_\r\n" : "*-1\r\n"); }

void Writer::Bool(bool v) {
  if (protocol_ >= 3) {
    out_->append(v ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(v ? ":1\r\n" : ":0\r\n");
  }
}

void Writer::Int(int64_t v) { AppendLine(out_, ':', v); }

void Writer::Double(double v) {
  if (std::isinf(v)) {
    if (protocol_ >= 3) {
      out_->append(v > 0 ? ",inf\r\n" : ",-inf\r\n");
    } else {
      out_->append(v > 0 ? "$3\r\ninf\r\n" : "$4\r\n-inf\r\n");
    }
    return;
  }
  char buf[64];
  const size_t len = FormatDouble(v, buf, sizeof(buf));
  if (protocol_ >= 3) {
    out_->push_back(',');
    out_->append(buf, len);
    out_->append("\r\n");
  } else {
    Bulk(std::string_view(buf, len));
  }
}

void Writer::DoubleText(std::string_view text) {
  if (protocol_ < 3) return Bulk(text);
  out_->push_back(',');
  out_->append(text);
  out_->append("\r\n");
}

void Writer::Simple(std::string_view s) { AppendLineSanitized(out_, '+', s); }

void Writer::Bulk(std::string_view s) {
  if (s.size() < 100) {  // most values: the whole frame in one append
    char buf[108];
    size_t n = 0;
    buf[n++] = '$';
    if (s.size() >= 10) buf[n++] = static_cast<char>('0' + s.size() / 10);
    buf[n++] = static_cast<char>('0' + s.size() % 10);
    buf[n++] = '\r';
    buf[n++] = '\n';
    if (!s.empty()) std::memcpy(buf + n, s.data(), s.size());  // an empty view may hold nullptr
    n += s.size();
    buf[n++] = '\r';
    buf[n++] = '\n';
    out_->append(buf, n);
    return;
  }
  AppendLine(out_, '$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
}

void Writer::Verbatim(std::string_view format3, std::string_view s) {
  if (protocol_ < 3) {
    Bulk(s);
    return;
  }
  AppendLine(out_, '=', static_cast<int64_t>(s.size() + 4));
  // The format is exactly three bytes on the wire; pad or cut a malformed one to keep framing.
  char format[4] = {' ', ' ', ' ', ':'};
  std::memcpy(format, format3.data(), std::min<size_t>(format3.size(), 3));
  out_->append(format, 4);
  out_->append(s);
  out_->append("\r\n");
}

void Writer::Error(std::string_view code, std::string_view msg) {
  out_->push_back('-');
  AppendSanitized(out_, code);
  out_->push_back(' ');
  AppendSanitized(out_, msg);
  out_->append("\r\n");
}

void Writer::ErrorLine(std::string_view line) { AppendLineSanitized(out_, '-', line); }

void Writer::Aggregate(AggKind kind, int64_t len) {
  char buf[32];
  out_->append(buf, FormatHeader(buf, kind, len));
}

void Writer::FinishDeferred(size_t mark, AggKind kind, int64_t len) {
  char buf[32];
  out_->insert(mark, buf, FormatHeader(buf, kind, len));
}

size_t Writer::FormatHeader(char* buf, AggKind kind, int64_t len) const {
  char prefix = '*';
  if (protocol_ >= 3) {
    switch (kind) {
      case AggKind::kArray:
        prefix = '*';
        break;
      case AggKind::kMap:
        prefix = '%';
        break;
      case AggKind::kSet:
        prefix = '~';
        break;
      case AggKind::kPush:
        prefix = '>';
        break;
    }
  } else if (kind == AggKind::kMap && len > 0 && len <= INT64_MAX / 2) {
    len *= 2;
  }
  char digits[kMaxIntChars];
  char* end = digits + sizeof(digits);
  char* start = FormatIntBackwards(len, end);
  const size_t n = end - start;
  buf[0] = prefix;
  std::memcpy(buf + 1, start, n);
  buf[n + 1] = '\r';
  buf[n + 2] = '\n';
  return n + 3;
}

}  // namespace vessel::resp
