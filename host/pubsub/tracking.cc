// Client-side caching: the tracking table, BCAST prefixes and invalidation messages (see
// tracking.h for the locking rules). Messages and errors are Redis 7.0's (tracking.c,
// networking.c clientCommand).
#include "host/pubsub/tracking.h"

#include <algorithm>

#include "host/engine/context.h"
#include "spdlog/spdlog.h"

namespace vessel::pubsub {

using engine::Cat;
using engine::Engine;
using engine::MessagingInfo;
using engine::Session;

struct alignas(64) Tracking::Shard {
  std::mutex mu;
  engine::StrMap<std::vector<Tracker>> keys;
};

struct alignas(64) Tracking::Pending {
  std::mutex mu;
  std::map<std::string, std::map<std::string, uint64_t>> keys;  // prefix -> key -> last modifier
};

namespace {

// Redis's stringCheckPrefix: one is a prefix of the other.
bool Overlap(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

void AppendBulk(std::string* out, std::string_view s) {
  *out += '$';
  *out += std::to_string(s.size());
  *out += "\r\n";
  out->append(s);
  *out += "\r\n";
}

// The session running a command on this thread (the one that changes keys), or 0.
uint64_t RunningSession() {
  const engine::CommandCtx* ctx = Engine::running_command();
  return ctx != nullptr && ctx->session != nullptr ? ctx->session->id() : 0;
}

void MirrorTracking(Session* s, const SessionState& st) {
  MessagingInfo& info = s->info().messaging;
  uint32_t flags = 0;
  if (st.tracking) flags |= MessagingInfo::kTracking;
  if (st.broken_redirect) flags |= MessagingInfo::kBrokenRedir;
  if (st.bcast) flags |= MessagingInfo::kBcast;
  info.tracking.store(flags, std::memory_order_relaxed);
  info.redirect.store(st.tracking ? static_cast<int64_t>(st.redirect) : -1,
                      std::memory_order_relaxed);
}

}  // namespace

Tracking::Tracking(Engine* engine, Hub* hub)
    : engine_(engine),
      hub_(hub),
      shards_(std::make_unique<Shard[]>(kShards)),
      p_max_keys_(engine::ParamValues::Find("tracking-table-max-keys")) {
  for (int i = 0; i <= engine->worker_count(); ++i) pending_.push_back(std::make_unique<Pending>());
}

Tracking::~Tracking() = default;

Tracking::Shard& Tracking::ShardOf(uint64_t hash) { return shards_[hash >> 56]; }

std::string Tracking::Enable(Session* s, SessionState* st, const engine::TrackingOptions& o) {
  if (!o.bcast && !o.prefixes.empty()) return "ERR PREFIX option requires BCAST mode to be enabled";
  if (st->tracking && st->bcast != o.bcast)
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
           "and then re-enabling it with a different mode.";
  if (o.bcast && (o.optin || o.optout)) return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  if (o.optin && o.optout) return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  if ((o.optin && st->optout) || (o.optout && st->optin))
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
           "then re-enabling it with a different mode.";
  if (o.bcast) {
    for (size_t i = 0; i < o.prefixes.size(); ++i) {
      for (const std::string& existing : st->prefixes) {
        if (Overlap(existing, o.prefixes[i]))
          return Cat("ERR Prefix '", o.prefixes[i], "' overlaps with an existing prefix '",
                     existing, "'. Prefixes for a single client must not overlap.");
      }
      for (size_t j = i + 1; j < o.prefixes.size(); ++j) {
        // Redis also enables tracking after this error when i > 0 (two replies); Vessel stops.
        if (Overlap(o.prefixes[i], o.prefixes[j]))
          return Cat("ERR Prefix '", o.prefixes[i], "' overlaps with another provided prefix '",
                     o.prefixes[j], "'. Prefixes for a single client must not overlap.");
      }
    }
  }
  if (!st->tracking) {
    engine_->messaging()->tracking_clients.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard l(trackers_mu_);
    trackers_[s->id()] = s->worker();
  }
  st->tracking = true;
  st->broken_redirect = st->bcast = st->optin = st->optout = st->noloop = false;
  st->redirect = o.redirect;
  st->redirect_worker = o.redirect_worker;
  if (o.bcast) {
    st->bcast = true;
    std::vector<std::string> add = o.prefixes;
    if (add.empty()) add.emplace_back();
    std::unique_lock l(prefixes_mu_);
    for (const std::string& p : add) {
      if (std::binary_search(st->prefixes.begin(), st->prefixes.end(), p)) continue;
      st->prefixes.insert(std::lower_bound(st->prefixes.begin(), st->prefixes.end(), p), p);
      prefixes_[p].push_back({s->id(), s->worker()});
    }
    prefix_count_.store(static_cast<int64_t>(prefixes_.size()), std::memory_order_relaxed);
  }
  st->optin = o.optin;
  st->optout = o.optout;
  st->noloop = o.noloop;
  MirrorTracking(s, *st);
  return "";
}

void Tracking::Disable(Session* s, SessionState* st) {
  if (st->bcast) {
    std::unique_lock l(prefixes_mu_);
    for (const std::string& p : st->prefixes) {
      auto it = prefixes_.find(p);
      if (it == prefixes_.end()) continue;
      std::erase_if(it->second, [&](const Tracker& t) { return t.id == s->id(); });
      if (it->second.empty()) prefixes_.erase(it);
    }
    prefix_count_.store(static_cast<int64_t>(prefixes_.size()), std::memory_order_relaxed);
    st->prefixes.clear();
  }
  if (st->tracking) {
    // As Redis, the client's entries in the table stay (they are dropped lazily).
    engine_->messaging()->tracking_clients.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard l(trackers_mu_);
    trackers_.erase(s->id());
  }
  st->tracking = st->broken_redirect = st->bcast = st->optin = st->optout = st->caching =
      st->noloop = false;
  MirrorTracking(s, *st);
}

void Tracking::Remember(const engine::CommandCtx* ctx, SessionState* st) {
  if ((st->optin && !st->caching) || (st->optout && st->caching)) return;
  const Tracker me{ctx->session->id(), ctx->session->worker()};
  for (const engine::CommandKey& k : ctx->keys) {
    Shard& sh = ShardOf(k.hash);
    std::lock_guard l(sh.mu);
    auto it = sh.keys.find(k.name);
    if (it == sh.keys.end()) {
      it = sh.keys.emplace(std::string(k.name), std::vector<Tracker>()).first;
      keys_.fetch_add(1, std::memory_order_relaxed);
    }
    auto& v = it->second;
    if (std::none_of(v.begin(), v.end(), [&](const Tracker& t) { return t.id == me.id; })) {
      v.push_back(me);
      items_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void Tracking::KeyModified(std::string_view key, uint64_t hash) {
  const uint64_t modifier = RunningSession();
  if (prefix_count_.load(std::memory_order_relaxed) > 0) {
    const int slot = hub_->CurrentSlot();
    bool any = false;
    {
      std::shared_lock l(prefixes_mu_);
      Pending& p = *pending_[slot];
      std::lock_guard pl(p.mu);
      for (const auto& [prefix, clients] : prefixes_) {
        if (!key.starts_with(prefix)) continue;
        p.keys[prefix][std::string(key)] = modifier;  // the last modifier wins (NOLOOP)
        any = true;
      }
    }
    if (any) hub_->ScheduleFlush(slot);
  }
  std::vector<Tracker> trackers;
  {
    Shard& sh = ShardOf(hash);
    std::lock_guard l(sh.mu);
    auto it = sh.keys.find(key);
    if (it == sh.keys.end()) return;
    trackers.swap(it->second);
    sh.keys.erase(it);
    keys_.fetch_sub(1, std::memory_order_relaxed);
    items_.fetch_sub(static_cast<int64_t>(trackers.size()), std::memory_order_relaxed);
  }
  Invalidate(key, trackers, modifier);
}

void Tracking::Invalidate(std::string_view key, const std::vector<Tracker>& trackers,
                          uint64_t modifier) {
  for (const Tracker& t : trackers) {
    hub_->RouteCustom(t.worker, [this, id = t.id, modifier, key = std::string(key)] {
      DeliverKey(id, modifier, key);
    });
  }
}

void Tracking::Flushed() {
  std::vector<std::pair<uint64_t, int>> all;
  {
    std::lock_guard l(trackers_mu_);
    all.assign(trackers_.begin(), trackers_.end());
  }
  std::sort(all.begin(), all.end());
  for (const auto& [id, worker] : all)
    hub_->RouteCustom(worker, [this, id = id] { DeliverFlush(id); });
  for (int i = 0; i < kShards; ++i) {
    std::lock_guard l(shards_[i].mu);
    shards_[i].keys.clear();
  }
  keys_.store(0, std::memory_order_relaxed);
  items_.store(0, std::memory_order_relaxed);
}

void Tracking::EnforceLimit() {
  const int64_t max = engine_->ParamInt(p_max_keys_);
  if (max <= 0 || keys() <= max) {
    if (max > 0) evict_rounds_.store(0, std::memory_order_relaxed);
    return;
  }
  // As Redis: an effort that grows while the table stays over the limit, a key at a time.
  int effort = 100 * (evict_rounds_.load(std::memory_order_relaxed) + 1);
  while (effort > 0 && keys() > max) {
    Shard& sh = shards_[evict_cursor_.fetch_add(1, std::memory_order_relaxed) % kShards];
    std::string key;
    std::vector<Tracker> trackers;
    {
      std::lock_guard l(sh.mu);
      --effort;
      if (sh.keys.empty()) continue;
      auto it = sh.keys.begin();
      key = it->first;
      trackers.swap(it->second);
      sh.keys.erase(it);
      keys_.fetch_sub(1, std::memory_order_relaxed);
      items_.fetch_sub(static_cast<int64_t>(trackers.size()), std::memory_order_relaxed);
    }
    Invalidate(key, trackers, 0);
  }
  if (keys() > max) {
    evict_rounds_.fetch_add(1, std::memory_order_relaxed);
  } else {
    evict_rounds_.store(0, std::memory_order_relaxed);
  }
}

void Tracking::Broadcast(int slot) {
  std::map<std::string, std::map<std::string, uint64_t>> changed;
  {
    Pending& p = *pending_[slot];
    std::lock_guard l(p.mu);
    changed.swap(p.keys);
  }
  if (changed.empty()) return;
  std::shared_lock l(prefixes_mu_);
  for (auto& [prefix, keys] : changed) {
    auto it = prefixes_.find(prefix);
    if (it == prefixes_.end()) continue;
    auto shared = std::make_shared<const BcastKeys>(keys.begin(), keys.end());
    for (const Tracker& t : it->second)
      hub_->RouteCustom(t.worker, [this, id = t.id, shared] { DeliverBcast(id, shared); });
  }
}

// ---- on the tracking client's worker ----

Session* Tracking::Local(uint64_t id) {
  auto& sessions = engine_->current_worker().sessions;
  auto it = sessions.find(id);
  return it == sessions.end() || it->second->closing() ? nullptr : it->second;
}

void Tracking::DeliverKey(uint64_t id, uint64_t modifier, const std::string& key) {
  Session* s = Local(id);
  SessionState* st = s != nullptr ? StateOf(s, false) : nullptr;
  // A client that left tracking, or switched to BCAST, gets no key-table invalidations.
  if (st == nullptr || !st->tracking || st->bcast) return;
  if (st->noloop && modifier == id) return;
  std::string payload = "*1\r\n";
  AppendBulk(&payload, key);
  Send(s, st, payload, /*hold=*/modifier == id);
}

void Tracking::DeliverBcast(uint64_t id, const std::shared_ptr<const BcastKeys>& keys) {
  Session* s = Local(id);
  SessionState* st = s != nullptr ? StateOf(s, false) : nullptr;
  if (st == nullptr || !st->tracking || !st->bcast) return;
  size_t n = 0;
  std::string body;
  for (const auto& [key, modifier] : *keys) {
    if (st->noloop && modifier == id) continue;  // keys this client changed last
    AppendBulk(&body, key);
    ++n;
  }
  if (n == 0) return;
  Send(s, st, Cat("*", n, "\r\n", body), false);
}

void Tracking::DeliverFlush(uint64_t id) {
  Session* s = Local(id);
  SessionState* st = s != nullptr ? StateOf(s, false) : nullptr;
  if (st == nullptr || !st->tracking) return;
  // The null of the tracking client's protocol (Redis's shared.null[c->resp]), wherever it goes.
  Send(s, st, s->protocol() == 2 ? "$-1\r\n" : "_\r\n", RunningSession() == id);
}

void Tracking::Send(Session* s, SessionState* st, const std::string& payload, bool hold) {
  if (st->redirect == 0) {
    // Without redirection only RESP3 has a way to say it (push); RESP2 gets nothing.
    if (s->protocol() == 3) SendTo(s, payload, false, hold);
    return;
  }
  const uint64_t rid = st->redirect;
  const int rw = st->redirect_worker;
  if (rw == s->worker()) {
    Session* r = Local(rid);
    if (r == nullptr) return BrokenRedirect(s, st);
    return SendTo(r, payload, true, hold && r == s);
  }
  if (rw < 0 || rw >= engine_->worker_count()) return BrokenRedirect(s, st);
  engine_->PostToWorker(rw, [this, rid, sid = s->id(), sw = s->worker(), payload] {
    if (Session* r = Local(rid)) return SendTo(r, payload, true, false);
    // The redirection target is gone: tell the tracking client, on its own worker.
    engine_->PostToWorker(sw, [this, sid] {
      Session* s = Local(sid);
      SessionState* st = s != nullptr ? StateOf(s, false) : nullptr;
      if (st != nullptr && st->tracking) BrokenRedirect(s, st);
    });
  });
}

void Tracking::SendTo(Session* r, const std::string& payload, bool redirected, bool hold) {
  std::string frame;
  if (r->protocol() == 3) {
    frame = ">2\r\n$10\r\ninvalidate\r\n" + payload;
  } else if (redirected && r->info().messaging.in_pubsub()) {
    // RESP2: a message on the __redis__:invalidate channel, to a client in the pub/sub context.
    frame = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n" + payload;
  } else {
    return;
  }
  hub_->Append(r, frame, false, hold);
}

void Tracking::BrokenRedirect(Session* s, SessionState* st) {
  st->broken_redirect = true;
  MirrorTracking(s, *st);
  if (s->protocol() == 3)
    hub_->Append(s, Cat(">2\r\n$21\r\ntracking-redir-broken\r\n:", st->redirect, "\r\n"), false,
                 false);
}

}  // namespace vessel::pubsub
