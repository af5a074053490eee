// Incremental, zero-copy RESP2 request parser: arrays of bulk strings and inline commands.
#ifndef VESSEL_HOST_RESP_PARSER_H_
#define VESSEL_HOST_RESP_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vessel::resp {

struct ParserLimits {
  int64_t max_bulk_len = int64_t{512} << 20;  // proto-max-bulk-len
  int64_t max_multibulk_len = INT32_MAX;      // arguments per command
  size_t max_inline_len = 64 * 1024;          // an inline command or a count line without \n
  // A client that must still authenticate: at most 10 arguments of 16 KiB each, as in Redis.
  bool unauthenticated = false;
};

enum class ParseStatus { kOk, kNeedMore, kError };

// One parser per connection. Parse() is called with the unconsumed bytes of the connection's read
// buffer; it remembers its progress across kNeedMore returns (as offsets, so the caller may move
// or grow the buffer between calls as long as the unconsumed bytes stay the same prefix), so a
// large bulk arriving in many reads is scanned once.
class Parser {
 public:
  explicit Parser(const ParserLimits& limits = {}) : limits_(limits) {}

  // kOk: *args holds one command (never empty; empty lines and "*0" are skipped), consumed()
  //   is its size in bytes. The views point into `input`, or into the parser's own scratch space
  //   for inline arguments that had quotes or escapes; they stay valid until the next call.
  // kNeedMore: no complete command yet; call again with the same bytes plus more.
  //   consumed() may be > 0 when empty commands were skipped.
  // kError: error() is Redis's text without the "-ERR " prefix, e.g.
  //   "Protocol error: invalid bulk length". The connection should reply and close.
  ParseStatus Parse(std::string_view input, std::vector<std::string_view>* args);

  size_t consumed() const { return consumed_; }
  std::string_view error() const { return error_; }
  // While kNeedMore inside a bulk: the total bytes of `input` needed to finish that bulk, so the
  // caller can reserve its buffer once. 0 when unknown.
  size_t bytes_hint() const { return bytes_hint_; }
  void set_limits(const ParserLimits& limits) { limits_ = limits; }
  void Reset();

 private:
  ParseStatus ParseMultibulk(std::string_view input, std::vector<std::string_view>* args);
  ParseStatus ParseInline(std::string_view input, std::vector<std::string_view>* args);
  ParseStatus Fail(const char* message);
  ParseStatus FailExpectedDollar(char got);
  ParseStatus FindLineEnd(const char* p, size_t start, size_t n, size_t* line_end);
  bool SplitInline(const char* line, size_t len, std::vector<std::string_view>* args);
  void ResetProgress();  // forgets the command in progress
  void SaveSpans(const char* base, std::vector<std::string_view>* args);

  static constexpr size_t kKeepSpans = 1024;

  ParserLimits limits_;
  size_t consumed_ = 0;
  size_t bytes_hint_ = 0;
  std::string_view error_;
  // Progress through a partially received multibulk command (offsets into the input).
  int64_t multibulk_len_ = 0;  // 0 = not inside a multibulk command
  int64_t bulk_len_ = -1;      // length of the bulk being read; -1 = its header comes next
  size_t pos_ = 0;             // where parsing resumes
  size_t line_scan_ = 0;       // bytes of the current line already searched for its end
  size_t command_len_ = 0;     // size of the command just parsed (or skipped)
  std::vector<std::pair<size_t, size_t>> spans_;  // offset, length of the arguments so far
  std::string scratch_;                           // unescaped inline arguments
  std::string error_text_;                        // error_ when it had to be formatted
};

}  // namespace vessel::resp

#endif  // VESSEL_HOST_RESP_PARSER_H_
