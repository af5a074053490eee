// What the engine asks of a cluster node (host/cluster implements it; the engine does not link
// it). Installed once before serving (Engine::set_cluster) and never changed; null outside cluster
// mode, so the only cost of cluster support to a server without it is one null test per command.
//
// Threads: every method runs on any worker and is thread safe. Implementations read an immutable
// snapshot of the cluster state and never wait for the cluster bus thread.
#ifndef VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_
#define VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "host/engine/registry.h"

namespace vessel::engine {

class Session;

// The keys routing found in a command it lets run here, for the dispatcher to reuse
// (Engine::ResolveKeys) instead of walking the key specs and hashing every key's slot again.
struct RoutedKeys {
  bool found = false;  // refs holds ExtractKeys(partial) of the command as it runs
  int slot = -1;       // the slot all of them hash to (-1: no key)
  KeyRefs refs;
};

class ClusterHooks {
 public:
  virtual ~ClusterHooks() = default;
  // Redis's getNodeByQuery for a command from a normal client about to run or be queued (EXEC:
  // the queued commands of `session`): true to serve it here (*keys: what it found, when it can
  // tell), otherwise false with the error line to answer in *refusal (-CROSSSLOT, -MOVED,
  // -CLUSTERDOWN), without the leading '-'.
  virtual bool Route(Session* session, const CommandSpec* cmd, const std::string_view* argv,
                     int argc, RoutedKeys* keys, std::string* refusal) = 0;
  // PUBLISH (shard: SPUBLISH) in cluster mode, after the local delivery: the message goes to every
  // other node (shard: to the other nodes of this node's shard) over the bus, as Redis's
  // clusterPropagatePublish. Queued for the bus thread; never waits for it.
  virtual void Publish(std::string_view channel, std::string_view message, bool shard) = 0;
  // The body of INFO cluster after cluster_enabled:1 (nothing today).
  virtual void Info(std::string* out) = 0;
  // INFO's cluster_connections (two per other known node, as Redis counts them) and
  // mem_cluster_links (the bus links' buffers), as the bus cron last counted them.
  virtual uint64_t Connections() const = 0;
  virtual uint64_t LinksMemory() const = 0;
  // Stops the bus thread (before the workers stop). Idempotent.
  virtual void Stop() = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_CLUSTER_HOOKS_H_
