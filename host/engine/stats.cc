// Command accounting (stats.h).
#include "host/engine/stats.h"

#include <algorithm>
#include <bit>

#include "host/engine/engine.h"

namespace vessel::engine {

// ---- LatencyHistogram ----

int LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < (uint64_t{1} << kSubBits)) return static_cast<int>(ns);  // exponent 0: exact
  const int exponent = 63 - std::countl_zero(ns) - kSubBits + 1;    // >= 1
  if (exponent >= kExponents) return kBuckets - 1;
  const uint64_t sub = (ns >> (exponent - 1)) & ((uint64_t{1} << kSubBits) - 1);
  return (exponent << kSubBits) | static_cast<int>(sub);
}

uint64_t LatencyHistogram::UpperBound(int bucket) {
  const int exponent = bucket >> kSubBits;
  const uint64_t sub = static_cast<uint64_t>(bucket) & ((uint64_t{1} << kSubBits) - 1);
  if (exponent == 0) return sub;
  // Values in this bucket: ((64 + sub) << (exponent - 1)) ... one step below the next.
  return (((uint64_t{1} << kSubBits) + sub + 1) << (exponent - 1)) - 1;
}

void LatencyHistogram::Record(uint64_t ns) {
  CommandCounters::Add(buckets_[BucketOf(ns)], 1);
  CommandCounters::Add(count_, 1);
}

void LatencyHistogram::MergeFrom(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) {
    const uint64_t n = other.buckets_[i].load(std::memory_order_relaxed);
    if (n != 0) CommandCounters::Add(buckets_[i], n);
  }
  CommandCounters::Add(count_, other.count());
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  const uint64_t total = count();
  if (total == 0) return 0;
  const double wanted = std::max(1.0, percentile / 100.0 * static_cast<double>(total));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (static_cast<double>(seen) >= wanted) return std::max<uint64_t>(1, UpperBound(i));
  }
  return UpperBound(kBuckets - 1);
}

std::vector<std::pair<uint64_t, uint64_t>> LatencyHistogram::CumulativePowersOfTwo() const {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t cumulative = 0, bound = 1024;  // Redis starts at 1024 ns
  uint64_t in_bound = 0;
  for (int i = 0; i < kBuckets; ++i) {
    const uint64_t n = buckets_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    const uint64_t upper = UpperBound(i);
    while (upper >= bound) {
      if (in_bound != 0) out.emplace_back(bound, cumulative);
      in_bound = 0;
      bound *= 2;
    }
    cumulative += n;
    in_bound += n;
  }
  if (in_bound != 0) out.emplace_back(bound, cumulative);
  return out;
}

void LatencyHistogram::Reset() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
}

void CommandCounters::Reset() {
  for (auto* c : {&calls, &nsec, &rejected, &failed}) c->store(0, std::memory_order_relaxed);
  if (LatencyHistogram* h = histogram.load(std::memory_order_acquire)) h->Reset();
}

// ---- ErrorCounts ----

void ErrorCounts::Add(std::string_view line) {
  if (!line.empty() && line[0] == '-') line.remove_prefix(1);
  const size_t end = line.find_first_of(" \r\n");
  const std::string_view code = line.substr(0, end);
  std::lock_guard l(mu_);
  auto it = counts_.find(std::string(code));
  if (it != counts_.end()) {
    ++it->second;
  } else if (counts_.size() < 128) {
    counts_.emplace(std::string(code), 1);
  }
}

std::map<std::string, uint64_t> ErrorCounts::Snapshot() const {
  std::lock_guard l(mu_);
  return counts_;
}

void ErrorCounts::Reset() {
  std::lock_guard l(mu_);
  counts_.clear();
}

// ---- SlowLog ----

void SlowLog::Add(const std::string_view* argv, int argc, int64_t duration_us, int64_t now_ms,
                  std::string peer, std::string name, size_t max_len) {
  constexpr int kMaxArgs = 32;
  constexpr size_t kMaxArgLen = 128;
  SlowLogEntry e;
  e.unix_seconds = now_ms / 1000;
  e.duration_us = duration_us;
  e.peer = std::move(peer);
  e.name = std::move(name);
  const int shown = std::min(argc, kMaxArgs);
  for (int i = 0; i < shown; ++i) {
    if (i == kMaxArgs - 1 && argc > kMaxArgs) {
      e.args.push_back("... (" + std::to_string(argc - kMaxArgs + 1) + " more arguments)");
      break;
    }
    std::string_view a = argv[i];
    if (a.size() > kMaxArgLen) {
      e.args.push_back(std::string(a.substr(0, kMaxArgLen)) + "... (" +
                       std::to_string(a.size() - kMaxArgLen) + " more bytes)");
    } else {
      e.args.emplace_back(a);
    }
  }
  std::lock_guard l(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Get(int64_t count) const {
  std::lock_guard l(mu_);
  const size_t n =
      count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  return {entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n)};
}

size_t SlowLog::size() const {
  std::lock_guard l(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard l(mu_);
  entries_.clear();
}

void SlowLog::Trim(size_t max_len) {
  std::lock_guard l(mu_);
  while (entries_.size() > max_len) entries_.pop_back();
}

// ---- LatencyMonitor ----

void LatencyMonitor::Add(std::string_view event, int64_t now_ms, int64_t latency_ms) {
  const int64_t now = now_ms / 1000;
  std::lock_guard l(mu_);
  Event& e = events_[std::string(event)];
  e.max_ms = std::max(e.max_ms, latency_ms);
  if (!e.samples.empty() && e.samples.back().time == now) {
    e.samples.back().latency_ms = std::max(e.samples.back().latency_ms, latency_ms);
    return;
  }
  e.samples.push_back({now, latency_ms});
  if (e.samples.size() > kHistoryLen) e.samples.pop_front();
}

std::map<std::string, LatencyMonitor::Event> LatencyMonitor::Snapshot() const {
  std::lock_guard l(mu_);
  return events_;
}

int LatencyMonitor::Reset(const std::vector<std::string>& events) {
  std::lock_guard l(mu_);
  if (events.empty()) {
    const int n = static_cast<int>(events_.size());
    events_.clear();
    return n;
  }
  int n = 0;
  for (const std::string& e : events) n += static_cast<int>(events_.erase(e));
  return n;
}

}  // namespace vessel::engine

namespace vessel::engine {

// ---- the engine's figures ----

int64_t Engine::PeakMemory(int64_t used) {
  int64_t peak = peak_memory_.load(std::memory_order_relaxed);
  while (used > peak && !peak_memory_.compare_exchange_weak(peak, used)) {
  }
  return std::max(peak, used);
}

void Engine::SampleOps(int64_t now) {
  uint64_t total = 0;
  for (auto& st : stats_) total += st->commands.load(std::memory_order_relaxed);
  std::lock_guard l(ops_mu_);
  if (ops_last_ms_ != 0 && now > ops_last_ms_) {
    ops_samples_[ops_index_] =
        static_cast<int64_t>((total - ops_last_count_) * 1000 / (now - ops_last_ms_));
    ops_index_ = (ops_index_ + 1) % 16;
  }
  ops_last_ms_ = now;
  ops_last_count_ = total;
}

int64_t Engine::InstantaneousOps() {
  std::lock_guard l(ops_mu_);
  int64_t sum = 0;
  for (int64_t s : ops_samples_) sum += s;
  return sum / 16;
}

void Engine::ResetStats() {
  for (auto& st : stats_) {
    for (auto* c :
         {&st->commands, &st->connections, &st->rejected_connections, &st->expired_keys,
          &st->evicted_keys, &st->keyspace_hits, &st->keyspace_misses, &st->net_input_bytes,
          &st->net_output_bytes, &st->error_replies, &st->expired_subkeys})
      c->store(0, std::memory_order_relaxed);
    for (uint32_t i = 0; i < kMaxCommandIds; ++i) st->by_command[i].Reset();
  }
  errors_.Reset();
  peak_memory_.store(0, std::memory_order_relaxed);
}

}  // namespace vessel::engine
