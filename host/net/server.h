// The network layer: one asio io_context per worker thread, a SO_REUSEPORT listener per worker,
// connections (plain TCP or TLS) that feed engine Sessions and write each batch of replies with
// one syscall. `bind` takes several addresses, "-addr" (optional), "*" and "::*" as Redis does.
#ifndef VESSEL_HOST_NET_SERVER_H_
#define VESSEL_HOST_NET_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "host/engine/engine.h"

namespace vessel::net {

class Worker;
class TlsContexts;

class NetServer {
 public:
  explicit NetServer(engine::Engine* engine);
  ~NetServer();
  NetServer(const NetServer&) = delete;
  NetServer& operator=(const NetServer&) = delete;

  // Binds every worker's listeners and attaches the workers to the engine. Returns false with
  // *error when an address cannot be bound. Nothing runs until Start().
  bool Listen(std::string* error);
  // The plain port (the TLS port when there is no plain listener).
  int port() const { return port_; }
  int tls_port() const { return tls_port_; }
  void Start();
  // Closes listeners and connections, stops and joins the workers. Idempotent.
  void Stop();

 private:
  engine::Engine* engine_;
  std::unique_ptr<TlsContexts> tls_;  // with a tls-port; outlives the workers
  std::vector<std::unique_ptr<Worker>> workers_;
  int port_ = 0;
  int tls_port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace vessel::net

#endif  // VESSEL_HOST_NET_SERVER_H_
