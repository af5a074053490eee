// The messaging subsystem as the engine sees it (engine::Messaging): pub/sub subscriptions,
// keyspace notifications and client tracking, across all workers. Install() creates it for a
// server whose workers are attached and registers its commands (SUBSCRIBE ... PUBSUB).
//
// Threads: a session's subscriptions and tracking mode change only on its worker (its own
// commands, RESET, disconnect); the shared structures are the Hub's (hub.h) and Tracking's
// (tracking.h), each with its locking rules stated there.
#ifndef VESSEL_HOST_PUBSUB_PUBSUB_H_
#define VESSEL_HOST_PUBSUB_PUBSUB_H_

#include <memory>
#include <string>
#include <string_view>

#include "host/engine/engine.h"
#include "host/engine/messaging.h"
#include "host/pubsub/hub.h"
#include "host/pubsub/state.h"
#include "host/pubsub/tracking.h"

namespace vessel::pubsub {

class PubSub : public engine::Messaging {
 public:
  explicit PubSub(engine::Engine* engine);
  ~PubSub() override;

  Hub& hub() { return hub_; }

  // A session's subscriptions (on its worker): true when it changed something.
  bool Subscribe(engine::Session* s, Space space, std::string_view channel);
  bool Unsubscribe(engine::Session* s, Space space, std::string_view channel);
  bool SubscribePattern(engine::Session* s, std::string_view pattern);
  bool UnsubscribePattern(engine::Session* s, std::string_view pattern);

  // engine::Messaging
  void NotifyKeyspaceEvent(int type, std::string_view event, std::string_view key, int db) override;
  void KeyModified(std::string_view key, uint64_t hash) override;
  void EndCommand(engine::CommandCtx* ctx) override;
  void AfterCommand(engine::Session* s, const engine::CommandSpec* cmd) override;
  void EndOfBatch(int worker) override;
  void Flushed() override;
  void ResetSession(engine::Session* s) override;
  void CloseSession(engine::Session* s) override;
  void ForEachSubscription(
      engine::Session* s,
      const std::function<void(std::string_view name, bool is_pattern)>& fn) override;
  std::string SetTracking(engine::Session* s, const engine::TrackingOptions& o) override;
  std::string SetCaching(engine::Session* s, std::string_view option) override;
  engine::TrackingInfo GetTrackingInfo(engine::Session* s) override;
  Counts GetCounts() override;

 private:
  void UnsubscribeAll(engine::Session* s, SessionState* st);

  engine::Engine* engine_;
  Hub hub_;
  Tracking tracking_;
  int p_notify_;  // notify-keyspace-events
};

// Creates the subsystem for engine (workers attached), hooks it in and registers its commands.
std::unique_ptr<PubSub> Install(engine::Engine* engine);

// Registers SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH SSUBSCRIBE SUNSUBSCRIBE SPUBLISH
// and PUBSUB (cmd_pubsub.cc).
void RegisterPubsubCommands(engine::Registry& r);

}  // namespace vessel::pubsub

#endif  // VESSEL_HOST_PUBSUB_PUBSUB_H_
