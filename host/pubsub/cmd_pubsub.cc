// Pub/sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH SSUBSCRIBE SUNSUBSCRIBE
// SPUBLISH and PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP, with Redis 7.0's
// replies (push frames in RESP3, arrays in RESP2). Vessel is not a cluster: shard channels work as
// in a single-node Redis 7.0 (their own namespace, no pattern matching).
//
// Deliberate differences from Redis: UNSUBSCRIBE / SUNSUBSCRIBE without arguments go through the
// channels in the order of Vessel's hash table, not Redis's dict order (both are unspecified).
#include "host/engine/builtins.h"
#include "host/engine/cluster_hooks.h"
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

// Redis propagates PUBLISH and SPUBLISH to its replicas (not to the append-only file), so that
// the replicas' subscribers get the messages too: persistence records the command for the
// replication stream only, in its place inside a transaction or a script.
// In cluster mode the bus carries the message to every node instead (replicas included).
void PropagateToReplicas(engine::CommandCtx* ctx, bool shard) {
  if (engine::ClusterHooks* cluster = ctx->engine->cluster(); cluster != nullptr)
    return cluster->Publish(Arg(ctx, 1), Arg(ctx, 2), shard);
  engine::ReplicationHooks* repl = ctx->engine->repl();
  if (repl != nullptr && repl->Recording()) ctx->propagate_set = true;
}

// PUBLISH channel message
void CmdPublish(engine::CommandCtx* ctx) {
  W(ctx).Int(P(ctx).hub().Publish(Space::kChannel, Arg(ctx, 1), Arg(ctx, 2)));
  PropagateToReplicas(ctx, /*shard=*/false);
}

// SPUBLISH shardchannel message
void CmdSPublish(engine::CommandCtx* ctx) {
  W(ctx).Int(P(ctx).hub().Publish(Space::kShard, Arg(ctx, 1), Arg(ctx, 2)));
  PropagateToReplicas(ctx, /*shard=*/true);
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
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "SUBSCRIBE", .arity = -2, .flags = kPs | kNs | kL, .fn = CmdSubscribe, .group = g,
       .since = "2.0.0", .summary = "Listens for messages published to channels.",
       .syntax = "channel [channel ...]",
       .complexity = "O(N) where N is the number of channels to subscribe to."},
      {.name = "UNSUBSCRIBE", .arity = -1, .flags = kPs | kNs | kL, .fn = CmdUnsubscribe,
       .group = g, .since = "2.0.0", .summary = "Stops listening to messages posted to channels.",
       .syntax = "[channel [channel ...]]",
       .complexity = "O(N) where N is the number of clients already subscribed to a channel."},
      {.name = "PSUBSCRIBE", .arity = -2, .flags = kPs | kNs | kL, .fn = CmdPSubscribe, .group = g,
       .since = "2.0.0",
       .summary = "Listens for messages published to channels that match one or more patterns.",
       .syntax = "pattern [pattern ...]",
       .complexity = "O(N) where N is the number of patterns to subscribe to."},
      {.name = "PUNSUBSCRIBE", .arity = -1, .flags = kPs | kNs | kL, .fn = CmdPUnsubscribe,
       .group = g, .since = "2.0.0",
       .summary = "Stops listening to messages published to channels that match one or more "
         "patterns.", .syntax = "[pattern [pattern ...]]",
       .complexity = "O(N) where N is the number of patterns to unsubscribe."},
      {.name = "PUBLISH", .arity = 3, .flags = kPs | kL | kF, .fn = CmdPublish, .group = g,
       .since = "2.0.0", .summary = "Posts a message to a channel.", .syntax = "channel message",
       .complexity = "O(N+M) where N is the number of clients subscribed to the receiving "
         "channel and M is the total number of subscribed patterns (by any client)."},
      {.name = "SSUBSCRIBE", .arity = -2, .flags = kPs | kNs | kL, .keys = {Channels(-1)},
       .fn = CmdSSubscribe, .group = g, .since = "7.0.0",
       .summary = "Listens for messages published to shard channels.",
       .syntax = "shardchannel [shardchannel ...]",
       .complexity = "O(N) where N is the number of shard channels to subscribe to."},
      {.name = "SUNSUBSCRIBE", .arity = -1, .flags = kPs | kNs | kL, .keys = {Channels(-1)},
       .fn = CmdSUnsubscribe, .group = g, .since = "7.0.0",
       .summary = "Stops listening to messages posted to shard channels.",
       .syntax = "[shardchannel [shardchannel ...]]",
       .complexity = "O(N) where N is the number of clients already subscribed to a shard "
         "channel."},
      {.name = "SPUBLISH", .arity = 3, .flags = kPs | kL | kF, .keys = {Channels(0)},
       .fn = CmdSPublish, .group = g, .since = "7.0.0",
       .summary = "Post a message to a shard channel", .syntax = "shardchannel message",
       .complexity = "O(N) where N is the number of clients subscribed to the receiving shard "
         "channel."},
      {.name = "PUBSUB", .arity = -2, .flags = 0, .fn = CmdContainer, .group = g, .since = "2.8.0",
       .summary = "A container for Pub/Sub commands.", .syntax = "",
       .complexity = "Depends on subcommand."},
  });
  // clang-format on
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "CHANNELS", .arity = -2, .flags = kPs | kL, .fn = CmdPubsubChannels, .group = g,
       .since = "2.8.0", .summary = "Returns the active channels.", .syntax = "[pattern]",
       .complexity = "O(N) where N is the number of active channels, and assuming constant time "
         "pattern matching (relatively short channels and patterns)"},
      {.name = "NUMSUB", .arity = -2, .flags = kPs | kL, .fn = CmdPubsubNumSub, .group = g,
       .since = "2.8.0", .summary = "Returns a count of subscribers to channels.",
       .syntax = "[channel [channel ...]]",
       .complexity = "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
      {.name = "NUMPAT", .arity = 2, .flags = kPs | kL, .fn = CmdPubsubNumPat, .group = g,
       .since = "2.8.0", .summary = "Returns a count of unique pattern subscriptions.",
       .syntax = "", .complexity = "O(1)"},
      {.name = "SHARDCHANNELS", .arity = -2, .flags = kPs | kL, .fn = CmdPubsubShardChannels,
       .group = g, .since = "7.0.0", .summary = "Returns the active shard channels.",
       .syntax = "[pattern]",
       .complexity = "O(N) where N is the number of active shard channels, and assuming constant "
         "time pattern matching (relatively short shard channels)."},
      {.name = "SHARDNUMSUB", .arity = -2, .flags = kPs | kL, .fn = CmdPubsubShardNumSub,
       .group = g, .since = "7.0.0",
       .summary = "Returns the count of subscribers of shard channels.",
       .syntax = "[shardchannel [shardchannel ...]]",
       .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested "
         "shard channels"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdPubsubHelp, .group = g, .since = "6.2.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)"},
  }, "pubsub");
  // clang-format on
  // clang-format on
}

}  // namespace vessel::pubsub
