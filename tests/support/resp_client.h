// A small blocking RESP2/RESP3 client for tests: sends commands, parses replies into Reply trees.
#ifndef VESSEL_TESTS_SUPPORT_RESP_CLIENT_H_
#define VESSEL_TESTS_SUPPORT_RESP_CLIENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::test {

struct Reply {
  enum class Type {
    kStatus,
    kError,
    kInt,
    kBulk,
    kNil,
    kNilArray,
    kArray,
    kMap,
    kSet,
    kDouble,
    kBool,
    kVerbatim,
    kBigNumber,
    kPush,
    kClosed
  };
  Type type = Type::kNil;
  std::string str;           // status, error, bulk, double, verbatim (without "txt:"), big number
  int64_t integer = 0;       // int, bool
  std::vector<Reply> elems;  // array, set, push; map as k1, v1, k2, v2, ...

  bool is_error() const { return type == Type::kError; }
  // A redis-cli like rendering for failure messages.
  std::string ToString() const;
  bool operator==(const Reply& o) const;
  // Same value, ignoring the order of array/set elements at every level.
  bool EqualsUnordered(const Reply& o) const;
};

class RespClient {
 public:
  RespClient() = default;
  RespClient(const std::string& host, int port) { Connect(host, port); }
  ~RespClient();
  RespClient(RespClient&& o) noexcept;
  RespClient& operator=(RespClient&& o) noexcept;
  RespClient(const RespClient&) = delete;

  void Connect(const std::string& host, int port);
  void Close();
  bool connected() const { return fd_ >= 0; }
  // Receive timeout in milliseconds (default 10 s): a read past it gives a kClosed reply.
  void SetTimeout(int ms);

  // Sends one command (as a multibulk) and reads its reply.
  Reply Cmd(const std::vector<std::string>& args);
  template <typename... A>
  Reply operator()(const A&... args) {
    return Cmd({std::string(args)...});
  }
  // Pipelining: Send many, then Read each reply.
  void Send(const std::vector<std::string>& args);
  void SendRaw(std::string_view bytes);
  Reply Read();
  // True when the server closed the connection (EOF or reset) within the timeout.
  bool ReadEof();

  static std::string Encode(const std::vector<std::string>& args);

 private:
  bool Fill();
  bool ReadLine(std::string* line);
  bool ReadN(size_t n, std::string* out);
  Reply Parse();

  int fd_ = -1;
  std::string buf_;
  size_t pos_ = 0;
};

// Reads frames until the connection stays quiet for quiet_ms (pushes: messages, keyspace events).
inline std::vector<Reply> ReadQuiet(RespClient& c, int quiet_ms) {
  std::vector<Reply> out;
  c.SetTimeout(quiet_ms);
  for (Reply r = c.Read(); r.type != Reply::Type::kClosed; r = c.Read()) out.push_back(r);
  c.SetTimeout(10000);
  return out;
}

}  // namespace vessel::test

#endif  // VESSEL_TESTS_SUPPORT_RESP_CLIENT_H_
