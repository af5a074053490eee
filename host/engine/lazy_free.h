// Frees large values on a background thread (UNLINK, FLUSHALL ASYNC), off the workers' path.
#ifndef VESSEL_HOST_ENGINE_LAZY_FREE_H_
#define VESSEL_HOST_ENGINE_LAZY_FREE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "host/engine/registry.h"

namespace vessel::engine {

// One process-wide freeing thread. Values handed over are owned by it: no key refers to them
// any more, so their type's free runs without any shard lock.
class LazyFree {
 public:
  static LazyFree& Instance();
  void Enqueue(const vsl_type* type, void* value);
  // Blocks until everything queued so far has been freed.
  void Drain();
  uint64_t pending() const;
  uint64_t freed() const;

 private:
  LazyFree();
  ~LazyFree();
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<const vsl_type*, void*>> queue_;
  uint64_t freed_ = 0;
  uint64_t enqueued_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_LAZY_FREE_H_
