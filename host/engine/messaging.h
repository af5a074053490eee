// The engine's view of the messaging subsystem (host/pubsub): pub/sub, keyspace notifications and
// client-side caching (CLIENT TRACKING). The engine calls these hooks at the few places where
// messaging needs to know something (a key changed, a command read keys, a session went away);
// host/pubsub implements them and is installed once, before serving (Engine::set_messaging). An
// Engine without it (unit tests that build one alone) skips every hook.
//
// Threads: every hook runs on the thread of the command or session it is about. KeyModified and
// EndCommand run under the command's key locks (so a read and a later write of the same key are
// seen in that order); the others hold no shard lock.
#ifndef VESSEL_HOST_ENGINE_MESSAGING_H_
#define VESSEL_HOST_ENGINE_MESSAGING_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::engine {

struct CommandCtx;
class Session;
struct CommandSpec;

// Keyspace event classes: Redis's NOTIFY_* bits, which are also the integer value of the
// notify-keyspace-events parameter (config/params.cc parses and prints its letters).
inline constexpr int kNotifyKeyspace = 1 << 0;  // K: __keyspace@<db>__:<key> channels
inline constexpr int kNotifyKeyevent = 1 << 1;  // E: __keyevent@<db>__:<event> channels
inline constexpr int kNotifyGeneric = 1 << 2;   // g: del, expire, rename_from, ...
inline constexpr int kNotifyString = 1 << 3;    // $
inline constexpr int kNotifyList = 1 << 4;      // l
inline constexpr int kNotifySet = 1 << 5;       // s
inline constexpr int kNotifyHash = 1 << 6;      // h
inline constexpr int kNotifyZset = 1 << 7;      // z
inline constexpr int kNotifyExpired = 1 << 8;   // x
inline constexpr int kNotifyEvicted = 1 << 9;   // e
inline constexpr int kNotifyStream = 1 << 10;   // t
inline constexpr int kNotifyKeyMiss = 1 << 11;  // m
inline constexpr int kNotifyLoaded = 1 << 12;   // (modules only)
inline constexpr int kNotifyModule = 1 << 13;   // d
inline constexpr int kNotifyNew = 1 << 14;      // n

// Per-session state the messaging subsystem keeps in Session::messaging() (created on first use,
// touched and destroyed only on the session's worker).
class SessionMessaging {
 public:
  virtual ~SessionMessaging() = default;
};

// What CLIENT LIST / CLIENT INFO show about a session's messaging state: written by its worker,
// read by any thread (relaxed).
struct MessagingInfo {
  static constexpr uint32_t kTracking = 1u << 0;     // flag t
  static constexpr uint32_t kBrokenRedir = 1u << 1;  // flag R
  static constexpr uint32_t kBcast = 1u << 2;        // flag B
  std::atomic<int> subs{0}, psubs{0}, ssubs{0};      // channels, patterns, shard channels
  std::atomic<uint32_t> tracking{0};
  std::atomic<int64_t> redirect{-1};  // CLIENT TRACKING REDIRECT id; -1 when not tracking
  // Redis's CLIENT_PUBSUB: subscribed to anything (the RESP2 subscribed context).
  bool in_pubsub() const {
    return subs.load(std::memory_order_relaxed) + psubs.load(std::memory_order_relaxed) +
               ssubs.load(std::memory_order_relaxed) >
           0;
  }
};

// CLIENT TRACKING ON|OFF options, parsed by cmd_client.cc.
struct TrackingOptions {
  bool on = false;
  uint64_t redirect = 0;  // 0: none
  int redirect_worker = -1;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
};

// CLIENT TRACKINGINFO.
struct TrackingInfo {
  std::vector<std::string> flags;
  int64_t redirect = -1;
  std::vector<std::string> prefixes;
};

class Messaging {
 public:
  virtual ~Messaging() = default;

  // Sessions with CLIENT TRACKING on. The engine skips KeyModified and EndCommand while it is 0,
  // so a server where nobody tracks pays one relaxed load per write and per command.
  std::atomic<int> tracking_clients{0};

  // Publishes a keyspace event (Engine::NotifyKeyspaceEvent has checked the class is enabled).
  virtual void NotifyKeyspaceEvent(int type, std::string_view event, std::string_view key,
                                   int db) = 0;
  // A key changed (Engine::Touch): invalidates it for the clients that track it.
  virtual void KeyModified(std::string_view key, uint64_t hash) = 0;
  // After a command's handler, before its locks are released: a tracking client remembers the
  // keys a read-only command opened.
  virtual void EndCommand(CommandCtx* ctx) = 0;
  // After a client's top-level command (not each command of an EXEC), for sessions with messaging
  // state: ends a CLIENT CACHING window and sends what was held back until the reply was out.
  virtual void AfterCommand(Session* s, const CommandSpec* cmd) = 0;
  // A session's batch of commands ran on this worker and its replies are about to be written:
  // pushes bound for other workers leave first, so that a client that reads a reply (say, of a
  // PUBLISH) and reacts cannot overtake them.
  virtual void EndOfBatch(int worker) = 0;
  // FLUSHDB / FLUSHALL ran: every tracking client is told to drop everything.
  virtual void Flushed() = 0;
  // RESET (unsubscribe from everything, tracking off) and disconnect (the same, and forget it).
  virtual void ResetSession(Session* s) = 0;
  virtual void CloseSession(Session* s) = 0;
  // Calls fn for each of s's subscriptions (channels and shard channels with is_pattern false,
  // patterns with true). On s's worker.
  virtual void ForEachSubscription(
      Session* s, const std::function<void(std::string_view name, bool is_pattern)>& fn) = 0;

  // CLIENT TRACKING / CACHING: "" or the error line to reply.
  virtual std::string SetTracking(Session* s, const TrackingOptions& o) = 0;
  virtual std::string SetCaching(Session* s, std::string_view option) = 0;  // YES / NO
  virtual TrackingInfo GetTrackingInfo(Session* s) = 0;

  // INFO figures.
  struct Counts {
    int64_t channels = 0, patterns = 0, shard_channels = 0;
    int64_t tracking_keys = 0, tracking_items = 0, tracking_prefixes = 0;
  };
  virtual Counts GetCounts() = 0;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_MESSAGING_H_
