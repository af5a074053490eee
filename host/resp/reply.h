// Decoding a reply (RESP2 or RESP3) back into a tree: what the host needs when it runs a command
// internally and reads its answer (SORT's lookups, scripts' redis.call).
#ifndef VESSEL_HOST_RESP_REPLY_H_
#define VESSEL_HOST_RESP_REPLY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::resp {

struct ReplyValue {
  enum class Type {
    kSimple,    // +
    kError,     // - (str without the leading '-')
    kInt,       // :
    kBulk,      // $
    kNull,      // $-1, *-1, _
    kArray,     // *
    kMap,       // % (elems: k1, v1, k2, v2, ...)
    kSet,       // ~
    kPush,      // >
    kDouble,    // , (str holds the text)
    kBool,      // # (integer 0/1)
    kVerbatim,  // = (str without the "txt:" prefix; format holds it)
    kBigNumber  // ( (str holds the digits)
  };
  Type type = Type::kNull;
  std::string str;
  std::string format;  // verbatim: "txt", "mkd"
  int64_t integer = 0;
  std::vector<ReplyValue> elems;
};

// Decodes one reply at the start of `in`; returns the bytes it used, 0 when the input is
// incomplete or malformed (replies written by the host's Writer are always well formed).
size_t ParseReply(std::string_view in, ReplyValue* out);

}  // namespace vessel::resp

#endif  // VESSEL_HOST_RESP_REPLY_H_
