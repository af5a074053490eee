// Command accounting: per-command counters and latency histograms (INFO commandstats and
// latencystats, LATENCY HISTOGRAM), error counts by prefix (INFO errorstats), the slow log
// (SLOWLOG) and the latency monitor (LATENCY LATEST / HISTORY).
//
// Locking: CommandCounters and LatencyHistogram rows belong to one worker, which is their only
// writer (relaxed stores); readers on other threads sum them with relaxed loads, so a reader may
// see a call counted before its time, never a torn value. ErrorCounts, SlowLog and
// LatencyMonitor are shared by every worker and guarded by their own mutex; they are touched
// only on errors, slow commands and latency spikes, never on the fast path of a command.
#ifndef VESSEL_HOST_ENGINE_STATS_H_
#define VESSEL_HOST_ENGINE_STATS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::engine {

// Latencies in nanoseconds in log-linear buckets: 64 linear steps per power of two (under 1.6 %
// error), exact below 64 ns, up to about 18 minutes (larger values land in the last bucket).
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kExponents = 35;
  static constexpr int kBuckets = kExponents << kSubBits;

  void Record(uint64_t ns);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // Adds another worker's counts into this one (a snapshot for reporting).
  void MergeFrom(const LatencyHistogram& other);
  // The smallest bucket upper bound under which `percentile` % of the samples fall, in ns.
  uint64_t ValueAtPercentile(double percentile) const;
  // Non-empty power-of-two buckets as (upper bound in ns, cumulative count), for LATENCY
  // HISTOGRAM.
  std::vector<std::pair<uint64_t, uint64_t>> CumulativePowersOfTwo() const;
  void Reset();

 private:
  static int BucketOf(uint64_t ns);
  static uint64_t UpperBound(int bucket);
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> buckets_[kBuckets] = {};
};

// One command's counters on one worker.
struct CommandCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> nsec{0};                      // time spent, summed in ns (INFO shows usec)
  std::atomic<uint64_t> rejected{0};                  // refused before running (arity, OOM, ...)
  std::atomic<uint64_t> failed{0};                    // ran and replied an error
  std::atomic<LatencyHistogram*> histogram{nullptr};  // allocated on the first call

  ~CommandCounters() { delete histogram.load(); }
  static void Add(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void Reset();
};

// Command ids index these (Registry gives every command and subcommand one).
inline constexpr uint32_t kMaxCommandIds = 4096;

// Error replies by their first word ("ERR", "WRONGTYPE"), as INFO errorstats lists them. Redis
// stops adding new kinds past 128 (a flood of distinct error codes must not grow memory).
class ErrorCounts {
 public:
  void Add(std::string_view reply_line);  // the error reply, with or without the leading '-'
  std::map<std::string, uint64_t> Snapshot() const;
  void Reset();

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> counts_;
};

// SLOWLOG: the most recent commands slower than slowlog-log-slower-than.
struct SlowLogEntry {
  int64_t id;
  int64_t unix_seconds;
  int64_t duration_us;
  std::vector<std::string> args;  // at most 32, each at most 128 bytes, as Redis trims them
  std::string peer, name;
};

class SlowLog {
 public:
  void Add(const std::string_view* argv, int argc, int64_t duration_us, int64_t now_ms,
           std::string peer, std::string name, size_t max_len);
  std::vector<SlowLogEntry> Get(int64_t count) const;  // newest first; count < 0 = all
  size_t size() const;
  void Reset();
  void Trim(size_t max_len);

 private:
  mutable std::mutex mu_;
  std::deque<SlowLogEntry> entries_;  // newest first
  int64_t next_id_ = 0;
};

// The latency monitor: per event ("command", "fast-command"), the last 160 samples of latencies
// at or above latency-monitor-threshold, at most one per second (the highest wins).
class LatencyMonitor {
 public:
  struct Sample {
    int64_t time;  // unix seconds
    int64_t latency_ms;
  };
  struct Event {
    std::deque<Sample> samples;  // oldest first
    int64_t max_ms = 0;
  };
  static constexpr size_t kHistoryLen = 160;

  void Add(std::string_view event, int64_t now_ms, int64_t latency_ms);
  std::map<std::string, Event> Snapshot() const;
  // Resets the given events (all when empty); returns how many existed.
  int Reset(const std::vector<std::string>& events);

 private:
  mutable std::mutex mu_;
  std::map<std::string, Event> events_;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_STATS_H_
