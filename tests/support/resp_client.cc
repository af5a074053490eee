// A small blocking RESP2/RESP3 client for tests: sends commands, parses replies into Reply trees.
#include "tests/support/resp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace vessel::test {

std::string Reply::ToString() const {
  switch (type) {
    case Type::kStatus:
      return str;
    case Type::kError:
      return "(error) " + str;
    case Type::kInt:
      return "(integer) " + std::to_string(integer);
    case Type::kBulk:
      return "\"" + str + "\"";
    case Type::kNil:
      return "(nil)";
    case Type::kNilArray:
      return "(nil array)";
    case Type::kDouble:
      return "(double) " + str;
    case Type::kBool:
      return integer ? "(true)" : "(false)";
    case Type::kVerbatim:
      return "(verbatim) \"" + str + "\"";
    case Type::kBigNumber:
      return "(big number) " + str;
    case Type::kClosed:
      return "(connection closed or timed out)";
    default:
      break;
  }
  std::string out = type == Type::kMap ? "{" : type == Type::kSet ? "~[" : "[";
  for (size_t i = 0; i < elems.size(); ++i) {
    if (i) out += type == Type::kMap && i % 2 ? ": " : ", ";
    out += elems[i].ToString();
  }
  return out + (type == Type::kMap ? "}" : "]");
}

bool Reply::operator==(const Reply& o) const {
  return type == o.type && str == o.str && integer == o.integer && elems == o.elems;
}

bool Reply::EqualsUnordered(const Reply& o) const {
  if (type != o.type || str != o.str || integer != o.integer || elems.size() != o.elems.size())
    return false;
  std::vector<bool> used(o.elems.size());
  for (const Reply& e : elems) {
    bool found = false;
    for (size_t j = 0; j < o.elems.size() && !found; ++j) {
      if (!used[j] && e.EqualsUnordered(o.elems[j])) used[j] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

RespClient::~RespClient() { Close(); }

RespClient::RespClient(RespClient&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), buf_(std::move(o.buf_)), pos_(o.pos_) {}

RespClient& RespClient::operator=(RespClient&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = std::exchange(o.fd_, -1);
    buf_ = std::move(o.buf_);
    pos_ = o.pos_;
  }
  return *this;
}

void RespClient::Connect(const std::string& host, int port) {
  Close();
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Close();
    throw std::runtime_error("cannot connect to " + host + ":" + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SetTimeout(10000);
}

void RespClient::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  buf_.clear();
  pos_ = 0;
}

void RespClient::SetTimeout(int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

std::string RespClient::Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

void RespClient::SendRaw(std::string_view bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the reply read reports the closed connection
    off += static_cast<size_t>(n);
  }
}

void RespClient::Send(const std::vector<std::string>& args) { SendRaw(Encode(args)); }

Reply RespClient::Cmd(const std::vector<std::string>& args) {
  Send(args);
  return Read();
}

bool RespClient::Fill() {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  char tmp[65536];
  const ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

bool RespClient::ReadLine(std::string* line) {
  for (;;) {
    const size_t nl = buf_.find("\r\n", pos_);
    if (nl != std::string::npos) {
      line->assign(buf_, pos_, nl - pos_);
      pos_ = nl + 2;
      return true;
    }
    if (!Fill()) return false;
  }
}

bool RespClient::ReadN(size_t n, std::string* out) {
  while (buf_.size() - pos_ < n + 2) {
    if (!Fill()) return false;
  }
  out->assign(buf_, pos_, n);
  pos_ += n + 2;
  return true;
}

Reply RespClient::Read() {
  if (fd_ < 0) return Reply{Reply::Type::kClosed};
  return Parse();
}

bool RespClient::ReadEof() {
  if (pos_ < buf_.size()) return false;
  char c;
  const ssize_t n = recv(fd_, &c, 1, 0);
  if (n == 1) buf_.push_back(c);
  // A server closing with unread input sends a reset instead of a FIN.
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

Reply RespClient::Parse() {
  Reply r;
  std::string line;
  if (!ReadLine(&line)) return Reply{Reply::Type::kClosed};
  // Bare newlines are a master's keepalives to a replica waiting for its snapshot (before and
  // after +FULLRESYNC): they lead the next line.
  line.erase(0, std::min(line.find_first_not_of('\n'), line.size()));
  if (line.empty()) return Reply{Reply::Type::kClosed};
  const char t = line[0];
  const std::string rest = line.substr(1);
  auto aggregate = [&](Reply::Type type, int64_t n) {
    r.type = type;
    for (int64_t i = 0; i < n; ++i) {
      r.elems.push_back(Parse());
      if (r.elems.back().type == Reply::Type::kClosed) return Reply{Reply::Type::kClosed};
    }
    return r;
  };
  switch (t) {
    case '+':
      r.type = Reply::Type::kStatus;
      r.str = rest;
      return r;
    case '-':
      r.type = Reply::Type::kError;
      r.str = rest;
      return r;
    case ':':
      r.type = Reply::Type::kInt;
      r.integer = std::stoll(rest);
      return r;
    case '_':
      r.type = Reply::Type::kNil;
      return r;
    case ',':
      r.type = Reply::Type::kDouble;
      r.str = rest;
      return r;
    case '(':
      r.type = Reply::Type::kBigNumber;
      r.str = rest;
      return r;
    case '#':
      r.type = Reply::Type::kBool;
      r.integer = rest == "t";
      return r;
    case '$':
    case '=': {
      const int64_t n = std::stoll(rest);
      if (n < 0) return r;  // $-1: nil
      if (!ReadN(static_cast<size_t>(n), &r.str)) return Reply{Reply::Type::kClosed};
      r.type = t == '$' ? Reply::Type::kBulk : Reply::Type::kVerbatim;
      if (t == '=') r.str = r.str.substr(4);
      return r;
    }
    case '*': {
      const int64_t n = std::stoll(rest);
      if (n < 0) return Reply{Reply::Type::kNilArray};
      return aggregate(Reply::Type::kArray, n);
    }
    case '~':
      return aggregate(Reply::Type::kSet, std::stoll(rest));
    case '>':
      return aggregate(Reply::Type::kPush, std::stoll(rest));
    case '%':
      return aggregate(Reply::Type::kMap, 2 * std::stoll(rest));
    default:
      r.type = Reply::Type::kError;
      r.str = "test client: unknown reply type '" + line + "'";
      return r;
  }
}

}  // namespace vessel::test
