// The subscription registry and the delivery of pushes (pub/sub messages, tracking
// invalidations) to sessions on any worker.
//
// Registry. Channels and shard channels live in 64 shards each, by hash of the channel name, every
// shard a map channel -> subscribers under its own std::shared_mutex: PUBLISH holds one shard
// shared (publishers to different channels never share a lock, to the same channel only share
// it), (UN)SUBSCRIBE holds it exclusively. Patterns, which every PUBLISH must scan, are
// replicated per worker slot: slot w's copy is guarded by its own std::mutex, which only the
// publishers of worker w take (uncontended), while PSUBSCRIBE / PUNSUBSCRIBE update every copy one
// lock at a time under patterns_mu_ (which also guards the authoritative map). A subscriber is
// (session id, worker, seq): seq numbers the session's subscriptions, so a message routed to a
// subscription that has since ended is dropped on delivery.
//
// Delivery. Pushes to a session of the publishing worker are appended to its output at once (in
// Redis's order: a client that publishes to itself reads the message before the PUBLISH reply),
// and the session is woken once the current work returns to the event loop. Pushes to other
// workers are collected in the publishing slot's outbox, one batch per target worker, and the
// batches are posted to their workers once per batch of commands (EndOfBatch: before the replies
// of the PUBLISHes are written, so a client that reads a reply and then publishes elsewhere
// cannot overtake them), or at the end of the event-loop turn for pushes made outside commands
// (expiry, BCAST): the first push posts a flush to the publishing worker itself. The target worker
// appends every push of a batch and wakes each session once, so a subscriber gets one write per
// batch, not one per message. Batches from one worker are posted in order and run in order, so
// the messages of one publisher reach every subscriber in publishing order. Outbox state is
// guarded by the slot's std::mutex (only the external slot, used by threads that are not
// workers, ever sees contention).
//
// Lock order: keyspace shard locks (keyspace events, tracking) -> a channel shard (shared or
// exclusive) or a slot's pattern copy -> a slot's outbox mutex. Nothing here takes a keyspace lock.
#ifndef VESSEL_HOST_PUBSUB_HUB_H_
#define VESSEL_HOST_PUBSUB_HUB_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "host/engine/engine.h"
#include "host/engine/strutil.h"

namespace vessel::pubsub {

struct Subscriber {
  uint64_t session;
  uint64_t seq;  // the session's subscription number
  int worker;
};

enum class Space { kChannel = 0, kShard = 1 };  // SUBSCRIBE / SSUBSCRIBE channels

enum class PushKind : uint8_t { kMessage, kPMessage, kSMessage, kCustom };

// One kind of push routed to sessions of one worker.
struct Push {
  PushKind kind;
  uint32_t frame_off, frame_len;  // the RESP2 frame in Batch::bytes ('*' becomes '>' for RESP3)
  uint32_t name_off, name_len;    // the channel or pattern subscribed to, inside the frame
  uint32_t first, end;            // its targets in Batch::targets
  uint32_t custom;                // kCustom: index in Batch::custom
};

// Work one worker posts to another.
struct Batch {
  std::string bytes;
  std::vector<Push> pushes;
  std::vector<std::pair<uint64_t, uint64_t>> targets;  // (session id, seq)
  // Pushes whose content depends on the target's state (tracking invalidations): run on the
  // target worker, in order with the other pushes.
  std::vector<absl::AnyInvocable<void() &&>> custom;
  bool empty() const { return pushes.empty(); }
};

class Hub;

// Checks, on delivery, that a subscription still holds. Implemented by the session state.
using SubscriptionCheck = bool (*)(engine::Session* s, PushKind kind, std::string_view name,
                                   uint64_t seq);

class Hub {
 public:
  Hub(engine::Engine* engine, SubscriptionCheck check);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // ---- registry (called on the subscriber's worker) ----
  void Subscribe(Space space, std::string_view channel, const Subscriber& sub);
  void Unsubscribe(Space space, std::string_view channel, uint64_t session);
  void SubscribePattern(std::string_view pattern, const Subscriber& sub);
  void UnsubscribePattern(std::string_view pattern, uint64_t session);

  // PUBLISH / SPUBLISH: routes the message to every subscriber of the channel (and, for global
  // channels, of every matching pattern) and returns how many receive it.
  int64_t Publish(Space space, std::string_view channel, std::string_view message);

  // PUBSUB CHANNELS / SHARDCHANNELS (all when pattern is null), NUMSUB / SHARDNUMSUB, NUMPAT.
  std::vector<std::string> Channels(Space space, const std::string_view* pattern);
  int64_t NumSub(Space space, std::string_view channel);
  int64_t NumPat() const { return pattern_count_.load(std::memory_order_relaxed); }
  int64_t ChannelCount(Space space) const {
    return channel_count_[static_cast<int>(space)].load(std::memory_order_relaxed);
  }

  // ---- delivery ----
  // Appends a push to session s (on its worker). A push to the session whose command is running
  // on this thread waits until that command's reply is complete when `hold` or when the reply has
  // begun (or the command runs inside EXEC): messages never split a reply.
  void Append(engine::Session* s, std::string_view frame, bool resp3_frame_fixup, bool hold);
  // Runs fn on `worker` with the other pushes of this slot, in order (at once when this is that
  // worker and no command of the target... runs: see RouteCustom in hub.cc).
  void RouteCustom(int worker, absl::AnyInvocable<void() &&> fn);
  // Appends the pushes held back for s while its command ran (AfterCommand).
  void ReleaseHeld(engine::Session* s);
  // Wakes s (on this worker) once the current work returns to the event loop.
  void WakeLater(engine::Session* s);
  engine::Engine* engine() const { return engine_; }
  // The slot of the calling thread: its worker index, or the external slot.
  int CurrentSlot() const;
  // Drains the slot's outbox: runs on worker `slot` (or at once for the external slot).
  void Flush(int slot);
  // Called before the outbox is drained (tracking: BCAST invalidations of the turn).
  void set_before_flush(absl::AnyInvocable<void(int slot)> fn) { before_flush_ = std::move(fn); }
  // Makes sure Flush(slot) runs soon (after the current work of that worker).
  void ScheduleFlush(int slot);
  // Flushes slot now when it has something scheduled (before a batch's replies are written).
  void FlushPending(int slot);

 private:
  struct ChannelShard;
  struct Slot;
  friend class Router;

  ChannelShard& ShardOf(Space space, std::string_view channel);
  void Deliver(int worker, Batch& batch);
  Batch& OutboxLocked(Slot& slot, int target);

  engine::Engine* engine_;
  SubscriptionCheck check_;
  static constexpr int kShards = 64;
  std::unique_ptr<ChannelShard[]> shards_[2];
  std::atomic<int64_t> channel_count_[2];
  std::mutex patterns_mu_;  // guards patterns_ and serializes updates of the slot copies
  engine::StrMap<std::vector<Subscriber>> patterns_;
  std::atomic<int64_t> pattern_count_{0};
  std::vector<std::unique_ptr<Slot>> slots_;  // index = worker; the last one is external
  absl::AnyInvocable<void(int)> before_flush_;
};

// The RESP2 frames of pub/sub pushes.
std::string MessageFrame(std::string_view kind, std::string_view channel, std::string_view message,
                         size_t* name_off);
std::string PMessageFrame(std::string_view pattern, std::string_view channel,
                          std::string_view message, size_t* name_off);

}  // namespace vessel::pubsub

#endif  // VESSEL_HOST_PUBSUB_HUB_H_
