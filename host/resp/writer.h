// Reply encoding for RESP2 and RESP3 into a connection's output buffer.
#ifndef VESSEL_HOST_RESP_WRITER_H_
#define VESSEL_HOST_RESP_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vessel::resp {

enum class AggKind { kArray, kMap, kSet, kPush };

// Appends encoded replies to *out, in the protocol given (2 or 3). RESP2 downgrades: null -> $-1,
// null array -> *-1, bool -> :0/:1, double -> bulk string, map -> flat array of 2n, set -> array,
// verbatim -> bulk, push -> array. Not thread safe; one per connection.
class Writer {
 public:
  Writer(std::string* out, int protocol) : out_(out), protocol_(protocol) {}

  int protocol() const { return protocol_; }
  void set_protocol(int protocol) { protocol_ = protocol; }
  std::string* out() const { return out_; }

  void Null();       // RESP3 "_", RESP2 "$-1"
  void NullArray();  // RESP3 "_", RESP2 "*-1"
  void Bool(bool v);
  void Int(int64_t v);
  // Redis's addReplyDouble: "%.17g", "inf"/"-inf" (and "nan" in RESP3).
  void Double(double v);
  // A double already formatted by the caller: RESP3 ",text", RESP2 a bulk string.
  void DoubleText(std::string_view text);
  void Simple(std::string_view s);  // \r and \n are replaced by spaces, as Redis does
  void Bulk(std::string_view s);
  void Verbatim(std::string_view format3, std::string_view s);  // format3: "txt", "mkd"
  // "-<code> <msg>". code is "ERR", "WRONGTYPE", ...; \r and \n in msg become spaces.
  void Error(std::string_view code, std::string_view msg);
  // A full error line as Redis writes it, e.g. "ERR unknown command" or "WRONGTYPE ...".
  void ErrorLine(std::string_view line);
  void Aggregate(AggKind kind, int64_t len);  // len = elements (pairs for a map)

  // Deferred lengths: Mark() returns the current position; FinishDeferred inserts the header for
  // `len` elements (pairs for a map) at that position. Marks taken later must be finished first
  // (nesting), or their positions shift.
  size_t Mark() const { return out_->size(); }
  void FinishDeferred(size_t mark, AggKind kind, int64_t len);

  // Formats the aggregate header into buf (at least 32 bytes); returns its length.
  size_t FormatHeader(char* buf, AggKind kind, int64_t len) const;

 private:
  std::string* out_;
  int protocol_;
};

}  // namespace vessel::resp

#endif  // VESSEL_HOST_RESP_WRITER_H_
