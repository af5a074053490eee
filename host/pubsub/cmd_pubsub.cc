// Pub/sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH SSUBSCRIBE SUNSUBSCRIBE
// SPUBLISH and PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP, with Redis 7.0's
// replies (push frames in RESP3, arrays in RESP2). Vessel is not a cluster: shard channels work as
// in a single-node Redis 7.0 (their own namespace, no pattern matching).
//
// Deliberate differences from Redis: UNSUBSCRIBE / SUNSUBSCRIBE without arguments go through the
// channels in the order of Vessel's hash table, not Redis's dict order (both are unspecified).
#include "host/engine/builtins.h"
#include "host/pubsub/pubsub.h"

namespace vessel::pubsub {
namespace {

using engine::Arg;
using engine::S;
using engine::W;

PubSub& P(engine::CommandCtx* ctx) { return *static_cast<PubSub*>(ctx->engine->messaging()); }

// What SUBSCRIBE-like replies count: channels and patterns, or shard channels.
int64_t Count(engine::CommandCtx* ctx, Space space) {
  const SessionState* st = StateOf(&S(ctx), false);
  if (st == nullptr) return 0;
  return space == Space::kShard ? static_cast<int64_t>(st->shard_channels.size())
                                : st->subscription_count();
}

// ["subscribe", channel, count] and its kin; a null channel when there was nothing to leave. A
// push: CLIENT REPLY OFF or SKIP does not silence it (Redis's CLIENT_PUSHING).
void ReplyEvent(engine::CommandCtx* ctx, std::string_view kind, const std::string_view* name,
                int64_t count) {
  const size_t from = W(ctx).Mark();
  W(ctx).Aggregate(resp::AggKind::kPush, 3);
  W(ctx).Bulk(kind);
  name != nullptr ? W(ctx).Bulk(*name) : W(ctx).Null();
  W(ctx).Int(count);
  if (W(ctx).out() == &S(ctx).output()) S(ctx).NotePush(from, W(ctx).Mark());
}

void SubscribeGeneric(engine::CommandCtx* ctx, Space space) {
  const std::string_view kind = space == Space::kShard ? "ssubscribe" : "subscribe";
  for (int i = 1; i < ctx->argc; ++i) {
    const std::string_view channel = Arg(ctx, i);
    P(ctx).Subscribe(&S(ctx), space, channel);
    ReplyEvent(ctx, kind, &channel, Count(ctx, space));
  }
}

void UnsubscribeGeneric(engine::CommandCtx* ctx, Space space) {
  const std::string_view kind = space == Space::kShard ? "sunsubscribe" : "unsubscribe";
  if (ctx->argc > 1) {
    for (int i = 1; i < ctx->argc; ++i) {
      const std::string_view channel = Arg(ctx, i);
      P(ctx).Unsubscribe(&S(ctx), space, channel);
      ReplyEvent(ctx, kind, &channel, Count(ctx, space));
    }
    return;
  }
  std::vector<std::string> all;
  if (const SessionState* st = StateOf(&S(ctx), false)) {
    for (const auto& [name, seq] : space == Space::kShard ? st->shard_channels : st->channels)
      all.push_back(name);
  }
  for (const std::string& channel : all) {
    P(ctx).Unsubscribe(&S(ctx), space, channel);
    const std::string_view name = channel;
    ReplyEvent(ctx, kind, &name, Count(ctx, space));
  }
  if (all.empty()) ReplyEvent(ctx, kind, nullptr, Count(ctx, space));
}

// SUBSCRIBE channel [channel ...]
void CmdSubscribe(engine::CommandCtx* ctx) { SubscribeGeneric(ctx, Space::kChannel); }

// SSUBSCRIBE shardchannel [shardchannel ...]
void CmdSSubscribe(engine::CommandCtx* ctx) {
  // As Redis: EXEC runs its commands as a "deny blocking" client, which SSUBSCRIBE refuses
  // (SUBSCRIBE and PSUBSCRIBE make an exception for MULTI).
  if (ctx->in_exec)
    return W(ctx).ErrorLine("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
  SubscribeGeneric(ctx, Space::kShard);
}

// UNSUBSCRIBE [channel [channel ...]]
void CmdUnsubscribe(engine::CommandCtx* ctx) { UnsubscribeGeneric(ctx, Space::kChannel); }

// SUNSUBSCRIBE [shardchannel [shardchannel ...]]
void CmdSUnsubscribe(engine::CommandCtx* ctx) { UnsubscribeGeneric(ctx, Space::kShard); }

// PSUBSCRIBE pattern [pattern ...]
void CmdPSubscribe(engine::CommandCtx* ctx) {
  for (int i = 1; i < ctx->argc; ++i) {
    const std::string_view pattern = Arg(ctx, i);
    P(ctx).SubscribePattern(&S(ctx), pattern);
    ReplyEvent(ctx, "psubscribe", &pattern, Count(ctx, Space::kChannel));
  }
}

// PUNSUBSCRIBE [pattern [pattern ...]]
void CmdPUnsubscribe(engine::CommandCtx* ctx) {
  std::vector<std::string> patterns;
  if (ctx->argc > 1) {
    for (int i = 1; i < ctx->argc; ++i) patterns.emplace_back(Arg(ctx, i));
  } else if (const SessionState* st = StateOf(&S(ctx), false)) {
    for (const auto& [p, seq] : st->patterns) patterns.push_back(p);  // subscription order
  }
  for (const std::string& p : patterns) {
    P(ctx).UnsubscribePattern(&S(ctx), p);
    const std::string_view name = p;
    ReplyEvent(ctx, "punsubscribe", &name, Count(ctx, Space::kChannel));
  }
  if (patterns.empty()) ReplyEvent(ctx, "punsubscribe", nullptr, Count(ctx, Space::kChannel));
}

// PUBLISH channel message
void CmdPublish(engine::CommandCtx* ctx) {
  W(ctx).Int(P(ctx).hub().Publish(Space::kChannel, Arg(ctx, 1), Arg(ctx, 2)));
}

// SPUBLISH shardchannel message
void CmdSPublish(engine::CommandCtx* ctx) {
  W(ctx).Int(P(ctx).hub().Publish(Space::kShard, Arg(ctx, 1), Arg(ctx, 2)));
}

// Redis's addReplySubcommandSyntaxError.
void ReplySubcommandSyntax(engine::CommandCtx* ctx) {
  W(ctx).ErrorLine(engine::Cat("ERR unknown subcommand or wrong number of arguments for '",
                               Arg(ctx, 1).substr(0, 128), "'. Try PUBSUB HELP."));
}

void ChannelsGeneric(engine::CommandCtx* ctx, Space space) {
  if (ctx->argc > 3) return ReplySubcommandSyntax(ctx);
  const std::string_view pattern = ctx->argc == 3 ? Arg(ctx, 2) : std::string_view();
  const auto names = P(ctx).hub().Channels(space, ctx->argc == 3 ? &pattern : nullptr);
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(names.size()));
  for (const std::string& n : names) W(ctx).Bulk(n);
}

void NumSubGeneric(engine::CommandCtx* ctx, Space space) {
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(ctx->argc - 2) * 2);
  for (int i = 2; i < ctx->argc; ++i) {
    W(ctx).Bulk(Arg(ctx, i));
    W(ctx).Int(P(ctx).hub().NumSub(space, Arg(ctx, i)));
  }
}

// PUBSUB CHANNELS [pattern]
void CmdPubsubChannels(engine::CommandCtx* ctx) { ChannelsGeneric(ctx, Space::kChannel); }
// PUBSUB SHARDCHANNELS [pattern]
void CmdPubsubShardChannels(engine::CommandCtx* ctx) { ChannelsGeneric(ctx, Space::kShard); }
// PUBSUB NUMSUB [channel [channel ...]]
void CmdPubsubNumSub(engine::CommandCtx* ctx) { NumSubGeneric(ctx, Space::kChannel); }
// PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]
void CmdPubsubShardNumSub(engine::CommandCtx* ctx) { NumSubGeneric(ctx, Space::kShard); }
// PUBSUB NUMPAT
void CmdPubsubNumPat(engine::CommandCtx* ctx) { W(ctx).Int(P(ctx).hub().NumPat()); }

void CmdPubsubHelp(engine::CommandCtx* ctx) {
  engine::ReplyHelp(
      ctx,
      {"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "CHANNELS [<pattern>]",
       "    Return the currently active channels matching a <pattern> (default: '*').", "NUMPAT",
       "    Return number of subscriptions to patterns.", "NUMSUB [<channel> ...]",
       "    Return the number of subscribers for the specified channels, excluding",
       "    pattern subscriptions(default: no channels).", "SHARDCHANNELS [<pattern>]",
       "    Return the currently active shard level channels matching a <pattern> (default: "
       "'*').",
       "SHARDNUMSUB [<shardchannel> ...]",
       "    Return the number of subscribers for the specified shard level channel(s)", "HELP",
       "    Prints this help."});
}

void CmdContainer(engine::CommandCtx*) {}

// Shard channel commands declare their channels as keys that are not keys (cluster routing only).
engine::KeySpec Channels(int32_t last) { return engine::KeyAt(1, engine::kKsNotKey, last); }

constexpr uint64_t kPs = engine::kCmdPubsub;
constexpr uint64_t kL = engine::kCmdLoading | engine::kCmdStale;
constexpr uint64_t kNs = VSL_CMD_NOSCRIPT;
constexpr uint64_t kF = VSL_CMD_FAST;

}  // namespace

void RegisterPubsubCommands(engine::Registry& r) {
  const char* g = "pubsub";
  // clang-format off
  engine::AddBuiltins(r, {
      {"SUBSCRIBE", -2, kPs | kNs | kL, {}, CmdSubscribe, g, "2.0.0",
       "Listens for messages published to channels.", "channel [channel ...]",
       "O(N) where N is the number of channels to subscribe to."},
      {"UNSUBSCRIBE", -1, kPs | kNs | kL, {}, CmdUnsubscribe, g, "2.0.0",
       "Stops listening to messages posted to channels.", "[channel [channel ...]]",
       "O(N) where N is the number of clients already subscribed to a channel."},
      {"PSUBSCRIBE", -2, kPs | kNs | kL, {}, CmdPSubscribe, g, "2.0.0",
       "Listens for messages published to channels that match one or more patterns.",
       "pattern [pattern ...]", "O(N) where N is the number of patterns to subscribe to."},
      {"PUNSUBSCRIBE", -1, kPs | kNs | kL, {}, CmdPUnsubscribe, g, "2.0.0",
       "Stops listening to messages published to channels that match one or more patterns.",
       "[pattern [pattern ...]]",
       "O(N) where N is the number of patterns to unsubscribe."},
      {"PUBLISH", 3, kPs | kL | kF, {}, CmdPublish, g, "2.0.0", "Posts a message to a channel.",
       "channel message",
       "O(N+M) where N is the number of clients subscribed to the receiving channel and M is "
       "the total number of subscribed patterns (by any client)."},
      {"SSUBSCRIBE", -2, kPs | kNs | kL, {Channels(-1)}, CmdSSubscribe, g, "7.0.0",
       "Listens for messages published to shard channels.", "shardchannel [shardchannel ...]",
       "O(N) where N is the number of shard channels to subscribe to."},
      {"SUNSUBSCRIBE", -1, kPs | kNs | kL, {Channels(-1)}, CmdSUnsubscribe, g, "7.0.0",
       "Stops listening to messages posted to shard channels.",
       "[shardchannel [shardchannel ...]]",
       "O(N) where N is the number of clients already subscribed to a shard channel."},
      {"SPUBLISH", 3, kPs | kL | kF, {Channels(0)}, CmdSPublish, g, "7.0.0",
       "Post a message to a shard channel", "shardchannel message",
       "O(N) where N is the number of clients subscribed to the receiving shard channel."},
      {"PUBSUB", -2, 0, {}, CmdContainer, g, "2.8.0",
       "A container for Pub/Sub commands.", "", "Depends on subcommand."},
  });
  engine::AddBuiltins(r, {
      {"CHANNELS", -2, kPs | kL, {}, CmdPubsubChannels, g, "2.8.0",
       "Returns the active channels.", "[pattern]",
       "O(N) where N is the number of active channels, and assuming constant time pattern "
       "matching (relatively short channels and patterns)"},
      {"NUMSUB", -2, kPs | kL, {}, CmdPubsubNumSub, g, "2.8.0",
       "Returns a count of subscribers to channels.", "[channel [channel ...]]",
       "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
      {"NUMPAT", 2, kPs | kL, {}, CmdPubsubNumPat, g, "2.8.0",
       "Returns a count of unique pattern subscriptions.", "", "O(1)"},
      {"SHARDCHANNELS", -2, kPs | kL, {}, CmdPubsubShardChannels, g, "7.0.0",
       "Returns the active shard channels.", "[pattern]",
       "O(N) where N is the number of active shard channels, and assuming constant time "
       "pattern matching (relatively short shard channels)."},
      {"SHARDNUMSUB", -2, kPs | kL, {}, CmdPubsubShardNumSub, g, "7.0.0",
       "Returns the count of subscribers of shard channels.",
       "[shardchannel [shardchannel ...]]",
       "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels"},
      {"HELP", 2, kL, {}, CmdPubsubHelp, g, "6.2.0",
       "Returns helpful text about the different subcommands.", "", "O(1)"},
  }, "pubsub");
  // clang-format on
}

}  // namespace vessel::pubsub
