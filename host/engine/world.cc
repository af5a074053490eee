// The world lock scopes: a worker's shared slot for the duration of its work (WorkerScope) and
// the whole keyspace held exclusively (WorldExclusive), both aware of running scripts.
#include "host/engine/engine.h"

namespace vessel::engine {
thread_local constinit WorkerState* t_current_worker = nullptr;

WorkerScope::WorkerScope(Engine* engine, int worker, Mode mode) : engine_(engine), worker_(worker) {
  WorkerState& w = engine->worker_state(worker);
  if (w.world_depth++ == 0) {
    BusyProbe* probe = engine->busy_probe();
    if (mode == kWait || probe == nullptr) {
      engine->world().LockShared(worker);
    } else {
      std::string busy;
      ScriptHold hold = ScriptHold::kFree;
      if (!engine->world().LockSharedUnless(worker, [&] {
            hold = probe->WorldHold(&busy);
            return hold != ScriptHold::kFree;
          })) {
        w.world_hold = hold;  // runs without the slot: see WorkerState::world_hold
      }
    }
    t_current_worker = &w;
  }
}

WorkerScope::~WorkerScope() {
  WorkerState& w = engine_->worker_state(worker_);
  if (--w.world_depth == 0) {
    if (w.world_hold != ScriptHold::kFree) {
      w.world_hold = ScriptHold::kFree;
    } else {
      engine_->world().UnlockShared(worker_);
    }
    t_current_worker = nullptr;
  }
}

bool WorkerScope::held() const {
  return engine_->worker_state(worker_).world_hold == ScriptHold::kFree;
}

WorldExclusive::WorldExclusive(Engine* engine) : WorldExclusive(engine, NoWait{}) {
  engine->world().LockExclusive();
  // A running snapshot captures what it has not yet: the holder may change any shard.
  if (engine->persist() != nullptr) engine->persist()->BeforeWorldWrite();
}

WorldExclusive::WorldExclusive(Engine* engine, NoWait) : engine_(engine) {
  WorkerState& w = engine->current_worker();
  worker_ = w.index;
  held_own_ = w.world_depth > 0 && w.world_hold == ScriptHold::kFree;
  if (held_own_) engine->world().UnlockShared(worker_);
}

std::unique_ptr<WorldExclusive> WorldExclusive::TryTake(Engine* engine, std::string* busy,
                                                        ScriptHold* hold, bool wait_held,
                                                        bool changes) {
  std::unique_ptr<WorldExclusive> w(new WorldExclusive(engine, NoWait{}));
  BusyProbe* probe = engine->busy_probe();
  *hold = ScriptHold::kFree;
  // A worker running without its slot (a script holds the whole keyspace) cannot take it.
  if (engine->current_worker().world_hold != ScriptHold::kFree) {
    *hold = probe->AnyHold(busy);
    if (*hold == ScriptHold::kFree) *hold = ScriptHold::kHeld;
    w->taken_ = false;
    return nullptr;
  }
  if (probe == nullptr) {
    engine->world().LockExclusive();
  } else if (!engine->world().LockExclusive([&] {
               *hold = probe->AnyHold(busy);
               return *hold == ScriptHold::kBusy || (*hold == ScriptHold::kHeld && !wait_held);
             })) {
    w->taken_ = false;
    return nullptr;  // the destructor retakes the worker's own slot
  }
  *hold = ScriptHold::kFree;
  if (changes && engine->persist() != nullptr) engine->persist()->BeforeWorldWrite();
  return w;
}

WorldExclusive::~WorldExclusive() {
  if (taken_) engine_->world().UnlockExclusive();
  if (held_own_) engine_->world().LockShared(worker_);
}

}  // namespace vessel::engine
