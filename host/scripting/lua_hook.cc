// The count hook of a running script: busy-reply-threshold (the slow-script warning, and serving
// this worker's other clients with BUSY while the script runs), SCRIPT KILL / FUNCTION KILL,
// SHUTDOWN, and the restart of a script that needs the whole keyspace (RunCtx::abort). Also the
// checks long loops in C make between hooks (CheckKilled, KillPending).
#include <chrono>

#include "host/scripting/state.h"
#include "spdlog/spdlog.h"

namespace vessel::scripting {

bool KillPending() {
  const RunCtx* r = t_run;
  return r != nullptr && r->running != nullptr && r->running->kill.load(std::memory_order_relaxed);
}

void CheckKilled(lua_State* L) {
  RunCtx* r = t_run;
  if (r == nullptr || r->running == nullptr || !r->running->kill.load(std::memory_order_relaxed))
    return;
  PushErrorTable(L, kScriptKilled);
  lua_error(L);
}

namespace {
// The count hook's period. Lua counts an instruction once however long it runs, and one that
// builds or compares a long string (.., string.format, table.concat) takes milliseconds where
// most take nanoseconds: at a fixed period of Redis's 100,000 instructions, a loop of those
// leaves SCRIPT KILL, the busy reply and its other clients waiting for minutes. So the period
// starts small, grows tenfold while hooks come less than 1 ms apart and shrinks tenfold when they
// come more than 10 ms apart, between 100 and 10,000 instructions (a hook costs well under 1% of
// 10,000 cheap instructions).
constexpr int kMinHookPeriod = 100;
constexpr int kMaxHookPeriod = 10000;

int64_t MonotonicUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RunHook(lua_State* L, lua_Debug*);

void AdaptPeriod(lua_State* L, RunCtx* r) {
  const int64_t now = MonotonicUs();
  const int64_t gap = now - r->hook_at_us;
  r->hook_at_us = now;
  int period = r->hook_period;
  if (gap < 1000 && period < kMaxHookPeriod) {
    period *= 10;
  } else if (gap > 10000 && period > kMinHookPeriod) {
    period /= 10;
  } else {
    return;
  }
  r->hook_period = period;
  // A coroutine made while a library loaded keeps the load's hook, which calls this one.
  if (lua_gethook(L) == RunHook) lua_sethook(L, RunHook, LUA_MASKCOUNT, period);
}

void RunHook(lua_State* L, lua_Debug*) {
  RunCtx* r = t_run;
  if (r == nullptr || r->running == nullptr) return;
  Running* run = r->running;
  if (r->abort == Abort::kNone && run->kill.load(std::memory_order_relaxed)) {
    r->abort = Abort::kKill;
    SetAbortHook(r->main);
  }
  if (r->abort != Abort::kNone) {
    // Every line raises from now on, so a pcall in the script cannot swallow the stop.
    if (L != r->main) SetAbortHook(L);  // a coroutine has its own hook
    PushErrorTable(L, r->abort == Abort::kKill ? kScriptKilled : "Script needs the whole keyspace");
    lua_error(L);
  }
  AdaptPeriod(L, r);
  if (r->threshold_ms <= 0 || r->engine->Now() - r->start_ms < r->threshold_ms) return;
  if (!run->timedout.load(std::memory_order_relaxed)) {
    run->timedout.store(true, std::memory_order_relaxed);
    spdlog::warn(
        "Slow script detected: still in execution after {} milliseconds. You can try killing "
        "the script using the {} command. Script name is: {}.",
        r->engine->Now() - r->start_ms, r->eval ? "SCRIPT KILL" : "FUNCTION KILL", r->name);
    r->sc->NoteTimedOut();  // what waits for this script is answered BUSY now
  }
  // As Redis's processEventsWhileBlocked: this worker's clients are answered (BUSY), and a
  // SCRIPT KILL sent to this worker is read.
  r->engine->PumpWhileBusy();
  r->hook_at_us = MonotonicUs();  // the period measures the script, not the clients served
}
}  // namespace

void SetAbortHook(lua_State* L) { lua_sethook(L, RunHook, LUA_MASKLINE | LUA_MASKCOUNT, 1); }

void RunHookFromOtherHook(lua_State* L, lua_Debug* ar) { RunHook(L, ar); }

void SetRunHook(lua_State* L, bool on) {
  if (on) {
    if (t_run != nullptr) {
      t_run->hook_period = kMinHookPeriod;
      t_run->hook_at_us = MonotonicUs();
    }
    lua_sethook(L, RunHook, LUA_MASKCOUNT, kMinHookPeriod);
  } else {
    lua_sethook(L, nullptr, 0, 0);
  }
}

}  // namespace vessel::scripting
