// A real redis-server cluster node for the cluster tests (see redis_node.h).
#include "tests/cluster/redis_node.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "host/cluster/bus_message.h"
#include "tests/support/processes.h"

namespace vessel::test {
namespace {

// Binds 127.0.0.1:port (0: any free port) and returns the port bound, or 0.
int BindablePort(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  int bound = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    bound = ntohs(addr.sin_port);
  }
  close(fd);
  return bound;
}

// A free client port whose bus port (+10000) is free too.
int FreeClusterPort() {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = BindablePort(0);
    if (port > 0 && port + 10000 <= 65535 && BindablePort(port + 10000) == port + 10000) {
      return port;
    }
  }
  throw std::runtime_error("no free port pair for a cluster node");
}

}  // namespace

RedisNode::RedisNode(const std::vector<std::string>& extra_args) {
  char dir_template[] = "/tmp/vessel-cluster-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = dir_template;
  std::vector<std::string> args = {"--dir",
                                   dir_,
                                   "--logfile",
                                   dir_ + "/redis.log",
                                   "--cluster-enabled",
                                   "yes",
                                   "--cluster-config-file",
                                   "nodes.conf"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  try {
    pid_ = StartRedis(&port_, args, FreeClusterPort);
  } catch (...) {
    std::filesystem::remove_all(dir_);
    throw;
  }
}

RedisNode::~RedisNode() {
  StopProcess(pid_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string RedisNode::Id() const {
  RespClient c = Client();
  return c("CLUSTER", "MYID").str;
}

int ConnectTcp(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

int ListenTcp(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int AcceptTcp(int listen_fd) {
  pollfd p{.fd = listen_fd, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, 10000) != 1) return -1;
  const int fd = accept(listen_fd, nullptr, nullptr);
  if (fd < 0) return -1;
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

std::string ReadBusPacket(int fd) {
  std::string buf;
  while (true) {
    const cluster::Frame frame = cluster::NextFrame(buf);
    if (frame.status == cluster::FrameStatus::kError) return "";
    if (frame.status == cluster::FrameStatus::kReady) return buf.substr(0, frame.length);
    char chunk[4096];
    const size_t want = std::min<size_t>(sizeof(chunk), frame.length - buf.size());
    const ssize_t n = recv(fd, chunk, want, 0);
    if (n <= 0) return "";
    buf.append(chunk, static_cast<size_t>(n));
  }
}

bool PeerCloses(int fd) {
  char chunk[4096];
  while (true) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace vessel::test
