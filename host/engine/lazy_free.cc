// Frees large values on a background thread (UNLINK, FLUSHALL ASYNC), off the workers' path.
#include "host/engine/lazy_free.h"

#include "host/engine/memory.h"

namespace vessel::engine {

LazyFree& LazyFree::Instance() {
  static LazyFree* instance = new LazyFree();  // never destroyed: modules outlive main's scope
  return *instance;
}

LazyFree::LazyFree() : thread_([this] { Loop(); }) { thread_.detach(); }
LazyFree::~LazyFree() = default;

void LazyFree::Enqueue(const vsl_type* type, void* value) {
  {
    std::lock_guard l(mu_);
    queue_.emplace_back(type, value);
    ++enqueued_;
  }
  cv_.notify_all();
}

void LazyFree::Drain() {
  std::unique_lock l(mu_);
  cv_.wait(l, [this] { return queue_.empty() && !busy_; });
}

uint64_t LazyFree::pending() const {
  std::lock_guard l(mu_);
  return enqueued_ - freed_;
}

uint64_t LazyFree::freed() const {
  std::lock_guard l(mu_);
  return freed_;
}

void LazyFree::Loop() {
  for (;;) {
    std::pair<const vsl_type*, void*> item;
    {
      std::unique_lock l(mu_);
      cv_.wait(l, [this] { return !queue_.empty() || stop_; });
      if (stop_) return;
      item = queue_.front();
      queue_.pop_front();
      busy_ = true;
    }
    {
      memory::ModuleScope scope(item.first->module->id);
      item.first->desc.free(nullptr, item.second);
    }
    {
      std::lock_guard l(mu_);
      busy_ = false;
      ++freed_;
    }
    cv_.notify_all();
  }
}

}  // namespace vessel::engine
