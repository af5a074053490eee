// The subscription registry and cross-worker delivery (see hub.h for the locking rules).
#include "host/pubsub/hub.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "host/engine/context.h"
#include "host/pubsub/state.h"
#include "spdlog/spdlog.h"

namespace vessel::pubsub {

using engine::Engine;
using engine::Session;

struct alignas(64) Hub::ChannelShard {
  std::shared_mutex mu;
  engine::StrMap<std::vector<Subscriber>> map;
};

struct alignas(64) Hub::Slot {
  std::mutex mu;           // guards out and flush_posted
  std::vector<Batch> out;  // by target worker
  bool flush_posted = false;
  // Mirrors flush_posted for FlushPending's check without the mutex (after every batch of
  // commands of every session: most have nothing to flush).
  std::atomic<bool> pending{false};
  std::mutex patterns_mu;  // guards patterns, this slot's copy of the pattern subscriptions
  engine::StrMap<std::vector<Subscriber>> patterns;
  // Touched only by this slot's worker thread: sessions to wake when its current work is done.
  absl::flat_hash_set<uint64_t> wake;
  bool wake_posted = false;
};

namespace {

void AppendBulkHeader(std::string* out, size_t len) {
  out->push_back('$');
  out->append(std::to_string(len));
  out->append("\r\n");
}

void AppendBulk(std::string* out, std::string_view s) {
  AppendBulkHeader(out, s.size());
  out->append(s);
  out->append("\r\n");
}

// Spreads channel hashes over the shards with bits the shard maps do not use for themselves.
size_t ShardIndex(std::string_view channel, int shards) {
  const uint64_t h = engine::SvHash{}(channel)*0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 58) & static_cast<size_t>(shards - 1);
}

void RemoveSubscriber(std::vector<Subscriber>* subs, uint64_t session) {
  subs->erase(std::remove_if(subs->begin(), subs->end(),
                             [session](const Subscriber& s) { return s.session == session; }),
              subs->end());
}

}  // namespace

std::string MessageFrame(std::string_view kind, std::string_view channel, std::string_view message,
                         size_t* name_off) {
  std::string f;
  f.reserve(40 + kind.size() + channel.size() + message.size());
  f.append("*3\r\n");
  AppendBulk(&f, kind);
  AppendBulkHeader(&f, channel.size());
  *name_off = f.size();
  f.append(channel);
  f.append("\r\n");
  AppendBulk(&f, message);
  return f;
}

std::string PMessageFrame(std::string_view pattern, std::string_view channel,
                          std::string_view message, size_t* name_off) {
  std::string f;
  f.reserve(56 + pattern.size() + channel.size() + message.size());
  f.append("*4\r\n$8\r\npmessage\r\n");
  AppendBulkHeader(&f, pattern.size());
  *name_off = f.size();
  f.append(pattern);
  f.append("\r\n");
  AppendBulk(&f, channel);
  AppendBulk(&f, message);
  return f;
}

// Routes the pushes of one publish: subscribers of this worker get them at once, the others
// through the slot's outbox (flushed once per event-loop turn).
class Router {
 public:
  explicit Router(Hub* hub)
      : hub_(hub), slot_(hub->CurrentSlot()), workers_(hub->engine()->worker_count()) {}
  ~Router() {
    if (queued_) hub_->ScheduleFlush(slot_);
  }

  void Route(PushKind kind, const std::string& frame, size_t name_off, size_t name_len,
             const std::vector<Subscriber>& subs) {
    absl::InlinedVector<int32_t, 8> push_of(static_cast<size_t>(workers_), -1);
    for (const Subscriber& sub : subs) {
      if (sub.worker >= workers_) continue;  // a session without a worker cannot be woken
      if (sub.worker == slot_) {
        auto& sessions = hub_->engine()->worker_state(slot_).sessions;
        auto it = sessions.find(sub.session);
        if (it != sessions.end()) hub_->Append(it->second, frame, true, false);
        continue;
      }
      Batch& b = Outbox(sub.worker);
      int32_t& p = push_of[sub.worker];
      if (p < 0) {
        p = static_cast<int32_t>(b.pushes.size());
        const auto first = static_cast<uint32_t>(b.targets.size());
        const auto off = static_cast<uint32_t>(b.bytes.size());
        b.bytes.append(frame);
        b.pushes.push_back({kind, off, static_cast<uint32_t>(frame.size()),
                            static_cast<uint32_t>(off + name_off), static_cast<uint32_t>(name_len),
                            first, first, 0});
      }
      b.targets.emplace_back(sub.session, sub.seq);
      b.pushes[p].end = static_cast<uint32_t>(b.targets.size());
    }
    // Never held past the registry lock the caller holds (lock order: registry -> outbox).
    if (lock_.owns_lock()) lock_.unlock();
  }

 private:
  Batch& Outbox(int worker) {
    if (!lock_.owns_lock()) lock_ = std::unique_lock(hub_->slots_[slot_]->mu);
    queued_ = true;
    return hub_->slots_[slot_]->out[worker];
  }

  Hub* hub_;
  const int slot_;
  const int workers_;
  std::unique_lock<std::mutex> lock_;
  bool queued_ = false;
};

Hub::Hub(Engine* engine, SubscriptionCheck check) : engine_(engine), check_(check) {
  for (auto& s : shards_) s = std::make_unique<ChannelShard[]>(kShards);
  for (auto& c : channel_count_) c = 0;
  const int n = engine->worker_count() + 1;
  for (int i = 0; i < n; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->out.resize(static_cast<size_t>(engine->worker_count()));
  }
}

Hub::~Hub() = default;

int Hub::CurrentSlot() const {
  return std::min(engine_->current_worker().index, engine_->worker_count());
}

Hub::ChannelShard& Hub::ShardOf(Space space, std::string_view channel) {
  return shards_[static_cast<int>(space)][ShardIndex(channel, kShards)];
}

// ---- registry ----

void Hub::Subscribe(Space space, std::string_view channel, const Subscriber& sub) {
  ChannelShard& sh = ShardOf(space, channel);
  std::unique_lock l(sh.mu);
  auto it = sh.map.find(channel);
  if (it == sh.map.end()) {
    it = sh.map.emplace(std::string(channel), std::vector<Subscriber>()).first;
    channel_count_[static_cast<int>(space)].fetch_add(1, std::memory_order_relaxed);
  }
  it->second.push_back(sub);
}

void Hub::Unsubscribe(Space space, std::string_view channel, uint64_t session) {
  ChannelShard& sh = ShardOf(space, channel);
  std::unique_lock l(sh.mu);
  auto it = sh.map.find(channel);
  if (it == sh.map.end()) return;
  RemoveSubscriber(&it->second, session);
  if (it->second.empty()) {
    sh.map.erase(it);
    channel_count_[static_cast<int>(space)].fetch_sub(1, std::memory_order_relaxed);
  }
}

void Hub::SubscribePattern(std::string_view pattern, const Subscriber& sub) {
  std::lock_guard l(patterns_mu_);
  auto it = patterns_.find(pattern);
  if (it == patterns_.end()) {
    it = patterns_.emplace(std::string(pattern), std::vector<Subscriber>()).first;
    pattern_count_.fetch_add(1, std::memory_order_relaxed);
  }
  it->second.push_back(sub);
  for (auto& slot : slots_) {
    std::lock_guard sl(slot->patterns_mu);
    slot->patterns[pattern].push_back(sub);
  }
}

void Hub::UnsubscribePattern(std::string_view pattern, uint64_t session) {
  std::lock_guard l(patterns_mu_);
  auto it = patterns_.find(pattern);
  if (it == patterns_.end()) return;
  RemoveSubscriber(&it->second, session);
  const bool gone = it->second.empty();
  if (gone) {
    patterns_.erase(it);
    pattern_count_.fetch_sub(1, std::memory_order_relaxed);
  }
  for (auto& slot : slots_) {
    std::lock_guard sl(slot->patterns_mu);
    auto s = slot->patterns.find(pattern);
    if (s == slot->patterns.end()) continue;
    if (gone) {
      slot->patterns.erase(s);
    } else {
      RemoveSubscriber(&s->second, session);
    }
  }
}

int64_t Hub::Publish(Space space, std::string_view channel, std::string_view message) {
  Router router(this);
  int64_t receivers = 0;
  {
    ChannelShard& sh = ShardOf(space, channel);
    std::shared_lock l(sh.mu);
    auto it = sh.map.find(channel);
    if (it != sh.map.end()) {
      size_t name_off;
      const std::string frame = MessageFrame(space == Space::kShard ? "smessage" : "message",
                                             channel, message, &name_off);
      receivers += static_cast<int64_t>(it->second.size());
      router.Route(space == Space::kShard ? PushKind::kSMessage : PushKind::kMessage, frame,
                   name_off, channel.size(), it->second);
    }
  }
  if (space == Space::kChannel && pattern_count_.load(std::memory_order_relaxed) > 0) {
    Slot& slot = *slots_[CurrentSlot()];
    std::lock_guard l(slot.patterns_mu);
    for (const auto& [pattern, subs] : slot.patterns) {
      if (!engine::GlobMatch(pattern, channel)) continue;
      size_t name_off;
      const std::string frame = PMessageFrame(pattern, channel, message, &name_off);
      receivers += static_cast<int64_t>(subs.size());
      router.Route(PushKind::kPMessage, frame, name_off, pattern.size(), subs);
    }
  }
  return receivers;
}

std::vector<std::string> Hub::Channels(Space space, const std::string_view* pattern) {
  std::vector<std::string> out;
  for (int i = 0; i < kShards; ++i) {
    ChannelShard& sh = shards_[static_cast<int>(space)][i];
    std::shared_lock l(sh.mu);
    for (const auto& [name, subs] : sh.map)
      if (pattern == nullptr || engine::GlobMatch(*pattern, name)) out.push_back(name);
  }
  return out;
}

int64_t Hub::NumSub(Space space, std::string_view channel) {
  ChannelShard& sh = ShardOf(space, channel);
  std::shared_lock l(sh.mu);
  auto it = sh.map.find(channel);
  return it == sh.map.end() ? 0 : static_cast<int64_t>(it->second.size());
}

// ---- delivery ----

void Hub::Append(Session* s, std::string_view frame, bool resp3_frame_fixup, bool hold) {
  if (s->closing()) return;
  std::string* out = &s->output();
  const engine::CommandCtx* running = Engine::running_command();
  const bool own = running != nullptr && running->session == s;
  SessionState* st = nullptr;
  if (own) {
    // The session is running a command: a push may precede its reply (as Redis's PUBLISH to
    // itself), but never enter it, nor an EXEC's array.
    st = StateOf(s, true);
    const bool pushed = st->push_ctx == running && st->push_mark == running->out_mark;
    const size_t mark = pushed ? st->push_end : running->out_mark;
    if (hold || running->in_exec || out->size() != mark) {
      out = &st->held;
      if (!st->release_posted && s->worker() < engine_->worker_count()) {
        st->release_posted = true;  // in case the command ends where AfterCommand is not called
        engine_->executor(s->worker()).Post([this, id = s->id(), w = s->worker()] {
          auto& sessions = engine_->worker_state(w).sessions;
          auto it = sessions.find(id);
          if (it != sessions.end()) ReleaseHeld(it->second);
        });
      }
    }
  }
  const size_t at = out->size();
  out->append(frame);
  if (resp3_frame_fixup && s->protocol() == 3) (*out)[at] = '>';
  if (own) {
    if (out == &s->output()) {
      st->push_ctx = running;
      st->push_mark = running->out_mark;
      st->push_end = out->size();
      s->NotePush(at, out->size());
    }
    return;  // the command's own output checks apply when it ends
  }
  const size_t pending = out->size() + (s->io() != nullptr ? s->io()->PendingOutput() : 0);
  if (s->OverOutputLimit(pending)) {
    spdlog::warn(
        "client scheduled to be closed for overcoming of output buffer limits id={} addr={} "
        "pending={}",
        s->id(), s->peer(), pending);
    out->clear();
    s->CloseAfterReply();
    if (s->io() != nullptr) s->io()->Close();
    return;
  }
  WakeLater(s);
}

void Hub::ReleaseHeld(Session* s) {
  SessionState* st = StateOf(s, false);
  if (st == nullptr) return;
  st->release_posted = false;
  st->push_ctx = nullptr;
  if (st->held.empty()) return;
  std::string held;
  held.swap(st->held);
  if (s->closing()) return;
  const size_t at = s->output().size();
  s->output() += held;
  const engine::CommandCtx* running = Engine::running_command();
  if (running == nullptr || running->session != s) {
    WakeLater(s);
  } else {
    s->NotePush(at, s->output().size());
  }
}

void Hub::WakeLater(Session* s) {
  const int w = s->worker();
  if (w >= engine_->worker_count()) return;
  Slot& slot = *slots_[w];
  slot.wake.insert(s->id());
  if (slot.wake_posted) return;
  slot.wake_posted = true;
  engine_->executor(w).Post([this, w] {
    Slot& sl = *slots_[w];
    sl.wake_posted = false;
    absl::flat_hash_set<uint64_t> ids;
    ids.swap(sl.wake);
    auto& sessions = engine_->worker_state(w).sessions;
    for (uint64_t id : ids) {
      auto it = sessions.find(id);
      if (it != sessions.end() && !it->second->closing()) it->second->io()->Wake();
    }
  });
}

void Hub::RouteCustom(int worker, absl::AnyInvocable<void() &&> fn) {
  const int slot = CurrentSlot();
  if (worker == slot) {
    std::move(fn)();
    return;
  }
  if (worker >= engine_->worker_count()) return;
  {
    Slot& s = *slots_[slot];
    std::lock_guard l(s.mu);
    Batch& b = s.out[worker];
    const auto at = static_cast<uint32_t>(b.targets.size());
    b.pushes.push_back(
        {PushKind::kCustom, 0, 0, 0, 0, at, at, static_cast<uint32_t>(b.custom.size())});
    b.custom.push_back(std::move(fn));
  }
  ScheduleFlush(slot);
}

void Hub::ScheduleFlush(int slot) {
  Slot& s = *slots_[slot];
  {
    std::lock_guard l(s.mu);
    if (s.flush_posted) return;
    s.flush_posted = true;
    s.pending.store(true, std::memory_order_relaxed);
  }
  if (slot < engine_->worker_count()) {
    engine_->executor(slot).Post([this, slot] { Flush(slot); });
  } else {
    Flush(slot);  // threads that are not workers have no event loop to come back to
  }
}

void Hub::FlushPending(int slot) {
  if (slot >= engine_->worker_count()) return;
  if (!slots_[slot]->pending.load(std::memory_order_relaxed)) return;
  Flush(slot);  // the posted flush then finds nothing to do
}

void Hub::Flush(int slot) {
  if (before_flush_) before_flush_(slot);
  Slot& s = *slots_[slot];
  std::vector<Batch> out(static_cast<size_t>(engine_->worker_count()));
  {
    std::lock_guard l(s.mu);
    out.swap(s.out);
    s.flush_posted = false;
    s.pending.store(false, std::memory_order_relaxed);
  }
  for (int w = 0; w < static_cast<int>(out.size()); ++w) {
    if (out[w].empty()) continue;
    engine_->PostToWorker(
        w, [this, w, b = std::make_shared<Batch>(std::move(out[w]))] { Deliver(w, *b); });
  }
}

void Hub::Deliver(int worker, Batch& b) {
  auto& sessions = engine_->worker_state(worker).sessions;
  std::vector<uint64_t> touched;
  for (Push& p : b.pushes) {
    if (p.kind == PushKind::kCustom) {
      std::move(b.custom[p.custom])();
      continue;
    }
    const std::string_view frame(b.bytes.data() + p.frame_off, p.frame_len);
    const std::string_view name(b.bytes.data() + p.name_off, p.name_len);
    for (uint32_t i = p.first; i < p.end; ++i) {
      auto it = sessions.find(b.targets[i].first);
      if (it == sessions.end()) continue;
      Session* s = it->second;
      if (s->closing() || !check_(s, p.kind, name, b.targets[i].second)) continue;
      std::string& out = s->output();
      const size_t at = out.size();
      out.append(frame);
      if (s->protocol() == 3) out[at] = '>';
      touched.push_back(s->id());
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (uint64_t id : touched) {
    auto it = sessions.find(id);
    if (it == sessions.end()) continue;
    Session* s = it->second;
    const size_t pending = s->output().size() + s->io()->PendingOutput();
    if (s->OverOutputLimit(pending)) {
      spdlog::warn(
          "client scheduled to be closed for overcoming of output buffer limits id={} addr={} "
          "pending={}",
          s->id(), s->peer(), pending);
      s->output().clear();
      s->CloseAfterReply();
      s->io()->Close();
      continue;
    }
    s->io()->Wake();
  }
}

}  // namespace vessel::pubsub
