// The messaging subsystem: the engine's hooks, sessions' subscriptions and keyspace events.
#include "host/pubsub/pubsub.h"

#include <algorithm>

#include "host/engine/context.h"

namespace vessel::pubsub {

using engine::Cat;
using engine::Session;

namespace {

// Hub's check that a routed push still matches a subscription of s (see Subscriber::seq).
bool StillSubscribed(Session* s, PushKind kind, std::string_view name, uint64_t seq) {
  const SessionState* st = static_cast<const SessionState*>(s->messaging().get());
  if (st == nullptr) return false;
  if (seq > st->max_ended_seq) return true;  // nothing ended since it began
  switch (kind) {
    case PushKind::kMessage: {
      auto it = st->channels.find(name);
      return it != st->channels.end() && it->second == seq;
    }
    case PushKind::kSMessage: {
      auto it = st->shard_channels.find(name);
      return it != st->shard_channels.end() && it->second == seq;
    }
    case PushKind::kPMessage:
      return std::any_of(st->patterns.begin(), st->patterns.end(),
                         [&](const auto& p) { return p.second == seq && p.first == name; });
    case PushKind::kCustom:
      return true;
  }
  return false;
}

}  // namespace

void SessionState::Mirror(engine::MessagingInfo& info) const {
  info.subs.store(static_cast<int>(channels.size()), std::memory_order_relaxed);
  info.psubs.store(static_cast<int>(patterns.size()), std::memory_order_relaxed);
  info.ssubs.store(static_cast<int>(shard_channels.size()), std::memory_order_relaxed);
}

SessionState* StateOf(Session* s, bool create) {
  std::unique_ptr<engine::SessionMessaging>& p = s->messaging();
  if (p == nullptr && create) p = std::make_unique<SessionState>();
  return static_cast<SessionState*>(p.get());
}

PubSub::PubSub(engine::Engine* engine)
    : engine_(engine), hub_(engine, StillSubscribed), tracking_(engine, &hub_) {
  hub_.set_before_flush([this](int slot) { tracking_.Broadcast(slot); });
  p_notify_ = engine::ParamValues::Find("notify-keyspace-events");
}

PubSub::~PubSub() = default;

// ---- subscriptions ----

bool PubSub::Subscribe(Session* s, Space space, std::string_view channel) {
  SessionState* st = StateOf(s, true);
  auto& mine = space == Space::kShard ? st->shard_channels : st->channels;
  if (mine.contains(channel)) return false;
  const uint64_t seq = ++st->next_seq;
  mine.emplace(std::string(channel), seq);
  hub_.Subscribe(space, channel, {s->id(), seq, s->worker()});
  st->Mirror(s->info().messaging);
  return true;
}

bool PubSub::Unsubscribe(Session* s, Space space, std::string_view channel) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr) return false;
  auto& mine = space == Space::kShard ? st->shard_channels : st->channels;
  auto it = mine.find(channel);
  if (it == mine.end()) return false;
  st->max_ended_seq = std::max(st->max_ended_seq, it->second);
  hub_.Unsubscribe(space, channel, s->id());
  mine.erase(it);
  st->Mirror(s->info().messaging);
  return true;
}

bool PubSub::SubscribePattern(Session* s, std::string_view pattern) {
  SessionState* st = StateOf(s, true);
  for (const auto& [p, seq] : st->patterns)
    if (p == pattern) return false;
  const uint64_t seq = ++st->next_seq;
  st->patterns.emplace_back(std::string(pattern), seq);
  hub_.SubscribePattern(pattern, {s->id(), seq, s->worker()});
  st->Mirror(s->info().messaging);
  return true;
}

bool PubSub::UnsubscribePattern(Session* s, std::string_view pattern) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr) return false;
  auto it = std::find_if(st->patterns.begin(), st->patterns.end(),
                         [&](const auto& p) { return p.first == pattern; });
  if (it == st->patterns.end()) return false;
  st->max_ended_seq = std::max(st->max_ended_seq, it->second);
  hub_.UnsubscribePattern(pattern, s->id());
  st->patterns.erase(it);
  st->Mirror(s->info().messaging);
  return true;
}

void PubSub::UnsubscribeAll(Session* s, SessionState* st) {
  for (const auto& [name, seq] : st->channels) hub_.Unsubscribe(Space::kChannel, name, s->id());
  for (const auto& [name, seq] : st->shard_channels) hub_.Unsubscribe(Space::kShard, name, s->id());
  for (const auto& [name, seq] : st->patterns) hub_.UnsubscribePattern(name, s->id());
  st->channels.clear();
  st->shard_channels.clear();
  st->patterns.clear();
  st->max_ended_seq = st->next_seq;
  st->Mirror(s->info().messaging);
}

// ---- engine hooks ----

void PubSub::NotifyKeyspaceEvent(int type, std::string_view event, std::string_view key, int db) {
  (void)type;
  // Nobody subscribed to anything: no channel name to build.
  if (hub_.ChannelCount(Space::kChannel) == 0 && hub_.NumPat() == 0) return;
  const int64_t flags = engine_->ParamInt(p_notify_);
  if (flags & engine::kNotifyKeyspace)
    hub_.Publish(Space::kChannel, Cat("__keyspace@", db, "__:", key), event);
  if (flags & engine::kNotifyKeyevent)
    hub_.Publish(Space::kChannel, Cat("__keyevent@", db, "__:", event), key);
}

void PubSub::KeyModified(std::string_view key, uint64_t hash) { tracking_.KeyModified(key, hash); }

void PubSub::EndCommand(engine::CommandCtx* ctx) {
  tracking_.EnforceLimit();
  Session* s = ctx->session;
  if (s == nullptr) return;
  SessionState* st = StateOf(s, false);
  if (st == nullptr || !st->tracking || st->bcast) return;
  // As Redis: the keys of read-only commands (not those of shard channel commands). A script's
  // read remembers the script's declared keys; EVAL_RO and FCALL_RO themselves track nothing.
  if (!(ctx->cmd->flags & VSL_CMD_READONLY) || (ctx->cmd->flags & engine::kCmdPubsub)) return;
  const std::string& name = ctx->cmd->name;
  if (name == "eval_ro" || name == "evalsha_ro" || name == "fcall_ro") return;
  tracking_.Remember(ctx->script_caller != nullptr ? ctx->script_caller : ctx, st);
}

void PubSub::AfterCommand(Session* s, const engine::CommandSpec* cmd) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr) return;
  // CLIENT CACHING applies to the next command only (CLIENT commands and MULTI keep it).
  const bool client_cmd = cmd->parent != nullptr && cmd->parent->name == "client";
  if (st->caching && !s->in_multi() && !client_cmd) st->caching = false;
  hub_.ReleaseHeld(s);
  // QUIT (or CLIENT KILL of itself): it leaves its channels before its reply is out, so a
  // PUBLISH that follows the reply does not count it, as in Redis.
  if (s->closing()) ResetSession(s);
}

void PubSub::EndOfBatch(int worker) { hub_.FlushPending(worker); }

void PubSub::Flushed() { tracking_.Flushed(); }

void PubSub::ResetSession(Session* s) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr) return;
  UnsubscribeAll(s, st);
  tracking_.Disable(s, st);
}

void PubSub::CloseSession(Session* s) { ResetSession(s); }

void PubSub::ForEachSubscription(
    Session* s, const std::function<void(std::string_view name, bool is_pattern)>& fn) {
  const SessionState* st = StateOf(s, false);
  if (st == nullptr) return;
  for (const auto& [name, seq] : st->channels) fn(name, false);
  for (const auto& [name, seq] : st->shard_channels) fn(name, false);
  for (const auto& [name, seq] : st->patterns) fn(name, true);
}

std::string PubSub::SetTracking(Session* s, const engine::TrackingOptions& o) {
  SessionState* st = StateOf(s, true);
  if (!o.on) {
    tracking_.Disable(s, st);
    return "";
  }
  return tracking_.Enable(s, st, o);
}

std::string PubSub::SetCaching(Session* s, std::string_view option) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr || !st->tracking)
    return "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
           "or OPTOUT mode enabled";
  if (engine::EqualsIgnoreCase(option, "yes")) {
    if (!st->optin)
      return "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
  } else if (engine::EqualsIgnoreCase(option, "no")) {
    if (!st->optout)
      return "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
  } else {
    return "ERR syntax error";
  }
  st->caching = true;
  return "";
}

engine::TrackingInfo PubSub::GetTrackingInfo(Session* s) {
  engine::TrackingInfo info;
  const SessionState* st = StateOf(s, false);
  const bool on = st != nullptr && st->tracking;
  info.flags.push_back(on ? "on" : "off");
  if (st != nullptr) {
    if (st->bcast) info.flags.push_back("bcast");
    if (st->optin) {
      info.flags.push_back("optin");
      if (st->caching) info.flags.push_back("caching-yes");
    }
    if (st->optout) {
      info.flags.push_back("optout");
      if (st->caching) info.flags.push_back("caching-no");
    }
    if (st->noloop) info.flags.push_back("noloop");
    if (st->broken_redirect) info.flags.push_back("broken_redirect");
    info.prefixes = st->prefixes;
  }
  info.redirect = on ? static_cast<int64_t>(st->redirect) : -1;
  return info;
}

engine::Messaging::Counts PubSub::GetCounts() {
  Counts c;
  c.channels = hub_.ChannelCount(Space::kChannel);
  c.shard_channels = hub_.ChannelCount(Space::kShard);
  c.patterns = hub_.NumPat();
  c.tracking_keys = tracking_.keys();
  c.tracking_items = tracking_.items();
  c.tracking_prefixes = tracking_.prefixes();
  return c;
}

std::unique_ptr<PubSub> Install(engine::Engine* engine) {
  auto ps = std::make_unique<PubSub>(engine);
  engine->set_messaging(ps.get());
  RegisterPubsubCommands(engine->registry());
  return ps;
}

}  // namespace vessel::pubsub
