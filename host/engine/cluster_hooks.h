// What the engine asks of a cluster node (host/cluster implements it; the engine does not link
// it). Installed once before serving (Engine::set_cluster) and never changed; null outside cluster
// mode, so the only cost of cluster support to a server without it is one null test per command.
//
// Threads: every method runs on any worker and is thread safe. Implementations read an immutable
// snapshot of the cluster state and never wait for the cluster bus thread.
#ifndef VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_
#define VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_

#include <string>
#include <string_view>

namespace vessel::engine {

class Session;
struct CommandSpec;

class ClusterHooks {
 public:
  virtual ~ClusterHooks() = default;
  // Redis's getNodeByQuery for a command from a normal client about to run or be queued (EXEC:
  // the queued commands of `session`): "" to serve it here, otherwise the error line to answer
  // (-CROSSSLOT, -MOVED, -CLUSTERDOWN), without the leading '-'.
  virtual std::string Redirect(Session* session, const CommandSpec* cmd,
                               const std::string_view* argv, int argc) = 0;
  // PUBLISH (shard: SPUBLISH) in cluster mode, after the local delivery: the message goes to every
  // other node (shard: to the other nodes of this node's shard) over the bus, as Redis's
  // clusterPropagatePublish. Queued for the bus thread; never waits for it.
  virtual void Publish(std::string_view channel, std::string_view message, bool shard) = 0;
  // The body of INFO cluster after cluster_enabled:1 (nothing today).
  virtual void Info(std::string* out) = 0;
  // Stops the bus thread (before the workers stop). Idempotent.
  virtual void Stop() = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_
