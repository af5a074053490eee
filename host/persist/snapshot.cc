// A point-in-time snapshot written by a background thread (snapshot.h).
#include "host/persist/snapshot.h"

#include <algorithm>
#include <chrono>
#include <shared_mutex>
#include <thread>

#include "host/engine/memory.h"
#include "host/persist/rdb_file.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {

Snapshot::Snapshot(engine::Engine& e, Target target, std::function<void(const Result&)> done)
    : e_(e), target_(std::move(target)), done_(std::move(done)) {}

Snapshot::~Snapshot() {
  Cancel();
  Join();
}

void Snapshot::Begin() {
  opt_ = EncodeOptions::FromEngine(e_);
  start_ms_ = e_.Now();
  counts_.clear();
  keys_total_ = 0;
  libraries_ = FunctionLibrarySources(e_);
  for (int d = 0; d < e_.db_count(); ++d) {
    engine::Database& db = e_.db(d);
    uint64_t keys = 0, expires = 0;
    for (uint32_t i = 0; i < db.shard_count(); ++i) {
      engine::Shard& s = db.shard(i);
      keys += s.table.size();
      expires += s.volatile_keys;
      s.snapshot_pending.store(s.table.size() != 0 ? ~uint64_t{0} : 0, std::memory_order_relaxed);
    }
    counts_.emplace_back(keys, expires);
    keys_total_ += keys;
  }
}

void Snapshot::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Snapshot::Join() {
  if (thread_.joinable()) thread_.join();
}

void Snapshot::Encode(engine::Database& db, uint32_t i, uint64_t chunks, std::string* out) {
  engine::Shard& shard = db.shard(i);
  const uint64_t pending = shard.snapshot_pending.load(std::memory_order_relaxed);
  chunks &= pending;
  if (chunks == 0) return;
  shard.snapshot_pending.store(pending & ~chunks, std::memory_order_relaxed);
  if (cancelled_.load(std::memory_order_relaxed)) return;
  uint64_t keys = 0;
  std::string error;
  SkippedKeys skipped;
  const bool ok = SerializeShard(e_, shard, opt_, start_ms_, out, &keys, &skipped, &error, chunks);
  if (!ok || skipped.keys > 0) {
    std::lock_guard l(mu_);
    if (!ok && error_.empty()) error_ = error;
    skipped_.Merge(skipped);
  }
  keys_done_.fetch_add(keys, std::memory_order_relaxed);
}

void Snapshot::CaptureShard(engine::Database& db, uint32_t i, uint64_t chunks) {
  std::string buf;
  Encode(db, i, chunks, &buf);
  if (buf.empty()) return;
  std::lock_guard l(mu_);
  const size_t now = buffered_.fetch_add(buf.size(), std::memory_order_relaxed) + buf.size();
  peak_buffered_ = std::max(peak_buffered_, now);
  captured_[{db.index(), i}].append(buf);
}

void Snapshot::CaptureAll() {
  for (int d = 0; d < e_.db_count(); ++d) {
    engine::Database& db = e_.db(d);
    for (uint32_t i = 0; i < db.shard_count(); ++i) CaptureShard(db, i, ~uint64_t{0});
  }
}

void Snapshot::KeySaveDelay(uint64_t keys) {
  static const int param = engine::ParamValues::Find("rdb-key-save-delay");
  const int64_t delay = e_.ParamInt(param);
  if (delay == 0 || keys == 0) return;
  int64_t us = delay > 0 ? static_cast<int64_t>(keys) * delay : static_cast<int64_t>(keys) / -delay;
  // In slices, so that a cancelled snapshot (FLUSHALL, SHUTDOWN) ends at once.
  while (us > 0 && !cancelled_.load(std::memory_order_relaxed)) {
    const int64_t slice = std::min<int64_t>(us, 10000);
    std::this_thread::sleep_for(std::chrono::microseconds(slice));
    us -= slice;
  }
}

void Snapshot::Run() {
  Result r;
  r.start_ms = start_ms_;
  RdbFileWriter file;
  bool ok = true;
  if (target_.sink != nullptr) {
    file.OpenSink([this](std::string_view bytes) { return target_.sink(bytes, cancelled_); });
  } else {
    ok = file.Open(target_.dir, target_.name, &r.error);
  }
  if (ok)
    file.Header(target_.aof_base, static_cast<int64_t>(engine::memory::ReadStats().allocated),
                libraries_, target_.aux.get());
  std::string buf;
  for (int d = 0; ok && d < e_.db_count(); ++d) {
    if (counts_[d].first == 0) continue;
    engine::Database& db = e_.db(d);
    file.BeginDb(d, counts_[d].first, counts_[d].second);
    for (uint32_t i = 0; i < db.shard_count(); ++i) {
      const uint64_t keys_before = keys_done_.load(std::memory_order_relaxed);
      if (cancelled_.load(std::memory_order_relaxed)) {
        ok = false;
        break;
      }
      buf.clear();
      {
        // Its own world slot keeps world-lock holders out while it reads the shard.
        engine::WorldLock& world = e_.world();
        world.LockShared(e_.snapshot_slot());
        {
          std::shared_lock lock(db.shard(i).mu);
          Encode(db, i, ~uint64_t{0}, &buf);  // the chunks no writer captured
        }
        world.UnlockShared(e_.snapshot_slot());
      }
      file.Append(buf);
      // The chunks writers captured before (none can be added now: nothing is pending).
      std::string captured;
      {
        std::lock_guard l(mu_);
        auto it = captured_.find({d, i});
        if (it != captured_.end()) {
          captured.swap(it->second);
          captured_.erase(it);
          buffered_.fetch_sub(captured.size(), std::memory_order_relaxed);
        }
      }
      file.Append(captured);
      KeySaveDelay(keys_done_.load(std::memory_order_relaxed) - keys_before);
    }
  }
  {
    std::lock_guard l(mu_);
    if (ok && !error_.empty()) {
      ok = false;
      r.error = error_;
    }
    r.peak_buffered = peak_buffered_;
    captured_.clear();
    buffered_.store(0, std::memory_order_relaxed);
  }
  r.cancelled = cancelled_.load(std::memory_order_relaxed);
  if (ok && !r.cancelled) {
    ok = file.Finish(&r.error);
    if (ok) {
      std::lock_guard l(mu_);
      skipped_.Warn(target_.aof_base ? "AOF rewrite" : "Background saving");
    }
  } else {
    file.Abort();
    if (r.cancelled) r.error = "cancelled";
  }
  r.ok = ok && !r.cancelled;
  r.bytes = file.bytes();
  r.keys = keys_done_.load(std::memory_order_relaxed);
  r.end_ms = e_.Now();
  done_(r);
  finished_.store(true, std::memory_order_release);
}

}  // namespace vessel::persist
