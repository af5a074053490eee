// A real redis-server started with --cluster-enabled yes for the cluster tests: free client and
// bus ports (bus = client + 10000, Redis's default), its own directory (nodes.conf lives there),
// stopped and removed when the object goes.
#ifndef VESSEL_TESTS_CLUSTER_REDIS_NODE_H_
#define VESSEL_TESTS_CLUSTER_REDIS_NODE_H_

#include <string>
#include <vector>

#include "tests/support/resp_client.h"

namespace vessel::test {

class RedisNode {
 public:
  // Starts the node and returns once it answers PING (its bus port listens by then). Throws when
  // redis-server does not start.
  explicit RedisNode(const std::vector<std::string>& extra_args = {});
  ~RedisNode();
  RedisNode(const RedisNode&) = delete;
  RedisNode& operator=(const RedisNode&) = delete;

  int port() const { return port_; }
  int bus_port() const { return port_ + 10000; }
  const std::string& dir() const { return dir_; }
  std::string nodes_conf_path() const { return dir_ + "/nodes.conf"; }
  RespClient Client() const { return RespClient("127.0.0.1", port_); }
  // CLUSTER MYID.
  std::string Id() const;

 private:
  int pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

// A TCP connection to 127.0.0.1:port (-1 on failure), with a receive timeout of 10 s.
int ConnectTcp(int port);
// A socket listening on 127.0.0.1 on a free port (in *port); -1 on failure.
int ListenTcp(int* port);
// The next connection to listen_fd within 10 s (with a receive timeout of 10 s), or -1.
int AcceptTcp(int listen_fd);
// Reads one whole cluster bus packet (framed by its totlen) from fd; "" on EOF, timeout or a
// stream the framer refuses.
std::string ReadBusPacket(int fd);
// Whether the peer closes fd (EOF or reset) before the receive timeout.
bool PeerCloses(int fd);
// Reads a whole file ("" when missing).
std::string ReadFile(const std::string& path);

}  // namespace vessel::test

#endif  // VESSEL_TESTS_CLUSTER_REDIS_NODE_H_
