// A session's messaging state: its subscriptions, its CLIENT TRACKING mode, and the pushes held
// back while its own command's reply is being written. Owned by the Session
// (Session::messaging()); read and written only on the session's worker. What other threads
// show (CLIENT LIST) is mirrored in ClientInfo::messaging.
#ifndef VESSEL_HOST_PUBSUB_STATE_H_
#define VESSEL_HOST_PUBSUB_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/engine/messaging.h"
#include "host/engine/session.h"
#include "host/engine/strutil.h"

namespace vessel::pubsub {

struct SessionState : engine::SessionMessaging {
  // Subscriptions: name -> the subscription's number (see Subscriber::seq).
  engine::StrMap<uint64_t> channels, shard_channels;
  std::vector<std::pair<std::string, uint64_t>> patterns;  // in subscription order, as Redis
  uint64_t next_seq = 0;
  // The highest number of an ended subscription: a push for a later number needs no lookup.
  uint64_t max_ended_seq = 0;

  // CLIENT TRACKING.
  bool tracking = false, bcast = false, optin = false, optout = false, noloop = false;
  bool caching = false;  // CLIENT CACHING YES/NO given for the next command
  bool broken_redirect = false;
  uint64_t redirect = 0;  // 0: none
  int redirect_worker = -1;
  std::vector<std::string> prefixes;  // BCAST prefixes, sorted

  // Pushes that arrived while this session's command was writing its reply.
  std::string held;
  bool release_posted = false;

  int subscription_count() const { return static_cast<int>(channels.size() + patterns.size()); }
  bool subscribed() const {
    return !channels.empty() || !patterns.empty() || !shard_channels.empty();
  }
  // Pushes appended to this session's output during its running command `push_ctx`, which end
  // at push_end: more of them may follow at once, before the reply (see Hub::Append).
  const engine::CommandCtx* push_ctx = nullptr;
  size_t push_mark = 0;  // push_ctx's out_mark, which tells it from a later context at its address
  size_t push_end = 0;

  // Copies the subscription counts to what CLIENT LIST shows.
  void Mirror(engine::MessagingInfo& info) const;
};

// The state of s, created on first use when `create`.
SessionState* StateOf(engine::Session* s, bool create);

}  // namespace vessel::pubsub

#endif  // VESSEL_HOST_PUBSUB_STATE_H_
