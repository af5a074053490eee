// The server as a whole: engine, modules and network, with a start/stop lifecycle. The binary
// (main.cc) and the in-process test fixture both use it.
#ifndef VESSEL_HOST_SERVER_H_
#define VESSEL_HOST_SERVER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "host/acl/acl.h"
#include "host/config/config.h"
#include "host/engine/engine.h"
#include "host/net/server.h"
#include "host/persist/persistence.h"
#include "host/pubsub/pubsub.h"
#include "host/repl/replication.h"
#include "host/scripting/scripting.h"

namespace vessel {

namespace cluster {
class Node;
}

class Server {
 public:
  explicit Server(config::Config config, std::string config_file = "");
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads the modules, binds and starts the workers; returns once the server accepts
  // connections. false with a one-line *error otherwise.
  bool Start(std::string* error);
  int port() const { return net_->port(); }
  engine::Engine& engine() { return *engine_; }

  // On SIGTERM/SIGINT, as Redis: waits for lagging replicas (up to shutdown-timeout), stops a
  // background save and writes the final snapshot when save rules exist (shutdown-on-sigterm /
  // shutdown-on-sigint may say save, nosave, now or force). true when the server may stop; false
  // when the save failed (logged: the server keeps serving, and a later signal or SHUTDOWN tries
  // again) or when the shutdown waits for replicas (its own thread stops the server, unless
  // SHUTDOWN ABORT cancels it). Never concurrently with itself.
  bool ShutdownOnSignal(int sig);
  // Thread safe: asks Wait() to return (SHUTDOWN, signals).
  void RequestStop();
  void Wait();
  // Stops the workers and frees every value. Idempotent.
  void Stop();

 private:
  bool VerifyClusterWithData(std::string* error);

  config::Config config_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<acl::Acl> acl_;  // installed in engine_ once the modules are loaded
  std::unique_ptr<persist::Persistence> persist_;    // installed in engine_ before the modules
  std::unique_ptr<repl::Replication> repl_;          // installed with persist_
  std::unique_ptr<scripting::Subsystem> scripting_;  // EVAL, FUNCTION (host/scripting)
  std::unique_ptr<net::NetServer> net_;
  std::unique_ptr<pubsub::PubSub> pubsub_;  // messaging, installed once the workers exist
  cluster::Node* cluster_node_ = nullptr;   // owned by engine_, in cluster mode
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
};

}  // namespace vessel

#endif  // VESSEL_HOST_SERVER_H_
