// Decoding replies (reply.h).
#include "host/resp/reply.h"

#include <charconv>

namespace vessel::resp {
namespace {

class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  size_t pos() const { return pos_; }

  bool Value(ReplyValue* out, int depth = 0) {
    if (depth > 64 || pos_ >= in_.size()) return false;
    const char type = in_[pos_++];
    std::string_view line;
    if (!Line(&line)) return false;
    using T = ReplyValue::Type;
    switch (type) {
      case '+':
        out->type = T::kSimple;
        out->str = line;
        return true;
      case '-':
        out->type = T::kError;
        out->str = line;
        return true;
      case ':':
        out->type = T::kInt;
        return Int(line, &out->integer);
      case ',':
        out->type = T::kDouble;
        out->str = line;
        return true;
      case '(':
        out->type = T::kBigNumber;
        out->str = line;
        return true;
      case '#':
        out->type = T::kBool;
        out->integer = line == "t" ? 1 : 0;
        return line == "t" || line == "f";
      case '_':
        out->type = T::kNull;
        return true;
      case '$':
      case '=':
      case '!': {
        int64_t n;
        if (!Int(line, &n)) return false;
        if (n < 0) {
          out->type = T::kNull;
          return true;
        }
        if (in_.size() - pos_ < static_cast<size_t>(n) + 2) return false;
        std::string_view body = in_.substr(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n) + 2;
        if (type == '=') {
          out->type = T::kVerbatim;
          if (body.size() >= 4 && body[3] == ':') {
            out->format = body.substr(0, 3);
            body.remove_prefix(4);
          }
        } else {
          out->type = type == '!' ? T::kError : T::kBulk;
        }
        out->str = body;
        return true;
      }
      case '*':
      case '~':
      case '>':
      case '%': {
        int64_t n;
        if (!Int(line, &n)) return false;
        if (n < 0) {
          out->type = T::kNull;
          return true;
        }
        out->type = type == '*'   ? T::kArray
                    : type == '~' ? T::kSet
                    : type == '>' ? T::kPush
                                  : T::kMap;
        const int64_t count = type == '%' ? n * 2 : n;
        out->elems.resize(static_cast<size_t>(count));
        for (ReplyValue& e : out->elems)
          if (!Value(&e, depth + 1)) return false;
        return true;
      }
      default:
        return false;
    }
  }

 private:
  bool Line(std::string_view* line) {
    const size_t end = in_.find("\r\n", pos_);
    if (end == std::string_view::npos) return false;
    *line = in_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return true;
  }
  static bool Int(std::string_view s, int64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size();
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

size_t ParseReply(std::string_view in, ReplyValue* out) {
  Decoder d(in);
  *out = ReplyValue();
  return d.Value(out) ? d.pos() : 0;
}

}  // namespace vessel::resp
