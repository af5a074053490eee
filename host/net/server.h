// The network layer: one asio io_context per worker thread, a SO_REUSEPORT listener per worker,
// connections that feed engine Sessions and write each batch of replies with one syscall.
#ifndef VESSEL_HOST_NET_SERVER_H_
#define VESSEL_HOST_NET_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "host/engine/engine.h"

namespace vessel::net {

class Worker;

class NetServer {
 public:
  explicit NetServer(engine::Engine* engine);
  ~NetServer();
  NetServer(const NetServer&) = delete;
  NetServer& operator=(const NetServer&) = delete;

  // Binds every worker's listeners and attaches the workers to the engine. Returns false with
  // *error when an address cannot be bound. Nothing runs until Start().
  bool Listen(std::string* error);
  int port() const { return port_; }
  void Start();
  // Closes listeners and connections, stops and joins the workers. Idempotent.
  void Stop();

 private:
  engine::Engine* engine_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace vessel::net

#endif  // VESSEL_HOST_NET_SERVER_H_
